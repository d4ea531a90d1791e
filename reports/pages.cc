// The page builders shared helpers, and the index, round overview,
// leaderboard, round-over-round and scaling pages.
#include "reports/pages.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

#include "base/text.h"
#include "base/utc_time.h"
#include "reports/charts.h"
#include "rules/facts.h"
#include "rules/scoring.h"
#include "submissions/accelerator.h"
#include "submissions/table.h"

namespace referee::reports {

using submissions::ResultRow;
using submissions::Stmt;

namespace {

using base::lower;

bool has_column(submissions::Store& s, const char* table, const char* column) {
  Stmt st(s.db(), "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  st.bind(1, std::string(table)).bind(2, std::string(column));
  return st.step();
}

}  // namespace

bool Context::shown(const std::string& round) const {
  return std::find(rounds.begin(), rounds.end(), round) != rounds.end();
}

bool make_context(Context* ctx, std::string* error) {
  std::vector<std::string> all = submissions::rounds(ctx->store);
  std::set<std::string> wanted;
  for (const auto& r : ctx->options.rounds) {
    std::string name;
    if (!submissions::resolve_round(ctx->store, r, &name, error)) return false;
    wanted.insert(name);
  }
  for (const auto& r : all)
    if ((wanted.empty() || wanted.count(r)) && (!ctx->visible || ctx->visible(r))) ctx->rounds.push_back(r);
  ctx->has_energy = has_column(ctx->store, "results", "energy_joules");
  ctx->has_rcp_json = has_column(ctx->store, "results", "rcp_json");
  return true;
}

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string fmt_count(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string fmt_hours(double h) { return fmt_fixed(h, 1); }

std::string fmt_change(double fraction) {
  std::string out(fraction >= 0 ? "+" : "");  // built step by step: GCC 12 warns falsely (-Wrestrict) on one expression
  out += fmt_fixed(100 * fraction, 1);
  out += '%';
  return out;
}

std::string fmt_ratio(double v) {
  std::string s = fmt_fixed(v, 2);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string fmt_amount(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v) >= 1000) return fmt_count(std::llround(v));
  std::string s = fmt_fixed(v, 3);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

double difference_percent(const std::vector<double>& a, const std::vector<double>& b, int drop) {
  return 100.0 * (rules::olympic_mean(b, drop) / rules::olympic_mean(a, drop) - 1.0);
}

Interval bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b, int drop, int resamples,
                              uint64_t seed) {
  // b's olympic mean over a's, as a percent change.
  rules::RatioInterval r = rules::bootstrap_ratio(b, drop, a, drop, resamples, seed);
  Interval out;
  if (!r.ok) return out;
  out.ok = true;
  out.low = 100.0 * (r.low - 1.0);
  out.high = 100.0 * (r.high - 1.0);
  return out;
}

double quoted_spread(const std::string& benchmark) {
  static const std::set<std::string> kImaging = {"resnet", "ssd", "retinanet", "maskrcnn", "unet3d"};
  return kImaging.count(lower(benchmark)) ? 2.5 : 5.0;
}

bool results_of(Context& ctx, const std::string& round, const std::string& benchmark, std::vector<ResultRow>* out,
                std::string* error) {
  auto key = std::make_pair(round, benchmark);
  if (auto it = ctx.results_cache.find(key); it != ctx.results_cache.end()) {
    *out = it->second;
    return true;
  }
  std::string e;
  *out = submissions::results_for(ctx.store, {round, benchmark, "", ctx.options.pipeline}, &e);
  if (out->empty() && e.find("damaged") != std::string::npos) {
    *error = e;
    return false;
  }
  ctx.results_cache[key] = *out;
  return true;
}

std::vector<std::string> benchmarks_in(Context& ctx, const std::string& round) {
  if (auto it = ctx.benchmarks_cache.find(round); it != ctx.benchmarks_cache.end()) return it->second;
  std::set<std::string> out;
  Stmt st(ctx.store.db(), R"sql(SELECT DISTINCT d.name, x.benchmark FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id)sql");
  while (st.step())
    if ((round.empty() && ctx.shown(st.col_text(0))) || st.col_text(0) == round) out.insert(st.col_text(1));
  return ctx.benchmarks_cache[round] = std::vector<std::string>(out.begin(), out.end());
}

std::vector<std::string> lineages_in(Context& ctx) {
  std::set<std::string> out;
  for (const auto& r : ctx.rounds)
    for (const auto& b : benchmarks_in(ctx, r)) out.insert(rules::benchmark_lineage(r, b));
  return {out.begin(), out.end()};
}

std::string name_in_round(Context& ctx, const std::string& round, const std::string& lineage) {
  for (const auto& b : benchmarks_in(ctx, round))
    if (rules::benchmark_lineage(round, b) == lineage) return b;
  return "";
}

std::string benchmark_page(const std::string& round, const std::string& benchmark) {
  return "benchmarks/" + safe_name(rules::benchmark_lineage(round, benchmark)) + ".html";
}

std::vector<std::string> submitters_of(Context& ctx, const std::string& benchmark) {
  std::set<std::string> out;
  Stmt st(ctx.store.db(), R"sql(SELECT DISTINCT d.name, s.submitter FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id
                                WHERE x.benchmark = ?1 AND x.score_minutes IS NOT NULL AND s.submitter IS NOT NULL)sql");
  st.bind(1, benchmark);
  while (st.step())
    if (ctx.shown(st.col_text(0)) && !st.col_text(1).empty()) out.insert(st.col_text(1));
  return {out.begin(), out.end()};
}

std::vector<long long> result_ids(Context& ctx) {
  std::vector<long long> out;
  Stmt st(ctx.store.db(), R"sql(SELECT x.id, d.name FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id ORDER BY x.id)sql");
  while (st.step())
    if (ctx.shown(st.col_text(1))) out.push_back(st.col_int(0));
  return out;
}

std::vector<std::pair<long long, long long>> auto_pairs(const std::vector<ResultRow>& rows) {
  std::vector<const ResultRow*> closed;
  for (const auto& r : rows)
    if (r.has_score && r.division == "closed" && r.review_status != "withdrawn" && !r.twin_of) closed.push_back(&r);
  std::stable_sort(closed.begin(), closed.end(), [](const ResultRow* a, const ResultRow* b) { return a->score < b->score; });
  std::vector<std::pair<long long, long long>> out;
  auto add = [&](const ResultRow* a, const ResultRow* b) {
    std::pair<long long, long long> p{a->result_id, b->result_id};
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (closed.size() >= 2) add(closed[0], closed[1]);
  for (size_t i = 0; i < closed.size(); ++i)
    for (size_t j = i + 1; j < closed.size(); ++j)
      if (closed[i]->accelerators == closed[j]->accelerators && closed[i]->accelerator_model == closed[j]->accelerator_model)
        add(closed[i], closed[j]);
  return out;
}

std::string compare_path(const std::string& round, const std::string& benchmark, long long a, long long b) {
  return "compare/" + safe_name(round) + "/" + safe_name(benchmark) + "/" + std::to_string(a) + "--" + std::to_string(b) +
         ".html";
}

Meta page_meta(Context& ctx, const Page& page) {
  Meta m;
  m.referee_version = REFEREE_VERSION;
  m.rulesets = page.rounds;
  m.generated_at = ctx.options.generated_at;
  m.data_files = ctx.options.data_files;
  if (m.generated_at.empty()) m.generated_at = base::utc_now();
  if (!ctx.imported_read) {
    Stmt st(ctx.store.db(), "SELECT d.name, MAX(p.imported_at) FROM packages p JOIN rounds d ON p.round_id = d.id GROUP BY d.name");
    while (st.step()) ctx.imported_at[st.col_text(0)] = st.col_text(1);
    ctx.imported_read = true;
  }
  for (const auto& r : page.rounds)
    if (auto it = ctx.imported_at.find(r); it != ctx.imported_at.end()) m.data_time = std::max(m.data_time, it->second);
  return m;
}

std::string resubmission_origins(Context& ctx, long long result_id) {
  return submissions::resubmission_origin_names(ctx.store, result_id);
}

std::string result_name(const ResultRow& r) {
  return r.organisation + "/" + r.system + (r.resubmission ? " (resubmitted)" : "");
}

const char* const kResubmittedNote =
    "(resubmitted): a resubmission, every run a log of an earlier round's result (named on its page); it is not a new "
    "result of this round: it counts in the round it was first submitted in, and round over round it is that record "
    "carried forward, never a new result or a regression.";

namespace {

Json minutes_or_null(const ResultRow& r) { return r.has_score ? jnum(r.score) : jnull(); }

// Columns shown on demand (Column::optional): the key ones fit a laptop screen.
void optional_columns(Table* t, std::initializer_list<const char*> keys) {
  for (auto& c : t->columns)
    for (const char* k : keys)
      if (c.key == k) c.optional = true;
}

std::string result_path(long long id) { return "results/" + std::to_string(id) + ".html"; }

Json result_link(const Page& p, const ResultRow& r) { return jlink(result_name(r), p.href(result_path(r.result_id))); }

// "A vs B", linked to their head-to-head page; `a` and `b` are results among `rows`.
Json pair_link(const Page& p, const std::vector<ResultRow>& rows, const std::string& round, const std::string& benchmark,
               long long a, long long b) {
  const ResultRow *ra = nullptr, *rb = nullptr;
  for (const auto& r : rows) {
    if (r.result_id == a) ra = &r;
    if (r.result_id == b) rb = &r;
  }
  return jlink(result_name(*ra) + " vs " + result_name(*rb), p.href(compare_path(round, benchmark, a, b)));
}


// Energy to train per result (kWh); only where the store has the column.
std::map<long long, double> energy_kwh(Context& ctx, const std::string& round, const std::string& benchmark) {
  std::map<long long, double> out;
  if (!ctx.has_energy) return out;
  Stmt st(ctx.store.db(), ctx.options.pipeline
                              ? R"sql(SELECT x.id, x.energy_pipeline_joules FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id
                                WHERE d.name = ?1 AND x.benchmark = ?2 AND x.energy_pipeline_joules IS NOT NULL)sql"
                              : R"sql(SELECT x.id, x.energy_joules FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id
                                WHERE d.name = ?1 AND x.benchmark = ?2 AND x.energy_joules IS NOT NULL)sql");
  st.bind(1, round).bind(2, benchmark);
  while (st.step()) out[st.col_int(0)] = st.col_double(1) / 3.6e6;
  return out;
}

Json hours_or_null(const ResultRow& r) {
  double h = 0;
  return submissions::accelerator_hours(r, &h) ? jnum(h) : jnull();
}



// What the benchmark is: "gpt3: GPT-3 175B on C4 (large language model
// pre-training); quality target: eval_accuracy <= 2.69 (log perplexity);
// convergence counted in tokens." The target is the one the RCP check read
// for a result of the round (the rule set's), when the store keeps it.
std::string description_note(Context& ctx, const std::string& round, const std::string& benchmark) {
  const rules::BenchmarkDescription d = rules::benchmark_description(round, benchmark);
  std::string n = benchmark + ": ";
  if (d.known) n += d.model + " on " + d.dataset + " (" + d.task + ")";
  else n += "a benchmark referee has no description of";
  if (ctx.has_rcp_json) {
    Stmt st(ctx.store.db(),
            "SELECT x.rcp_json FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id "
            "JOIN rounds r ON p.round_id = r.id WHERE r.name = ?1 AND x.benchmark = ?2 AND x.rcp_json IS NOT NULL "
            "AND json_extract(x.rcp_json, '$.target') IS NOT NULL LIMIT 1");
    st.bind(1, round);
    st.bind(2, benchmark);
    if (st.step()) {
      Json rcp;
      std::string perr;
      if (mllog::parse_json_permissive(st.col_text(0), &rcp, &perr) && rcp.kind == Json::Kind::Object) {
        const Json* t = rcp.find("target");
        const Json* m = rcp.find("metric");
        const Json* dir = rcp.find("target_direction");
        if (t && (t->kind == Json::Kind::Float || t->kind == Json::Kind::Int)) {
          double v = t->kind == Json::Kind::Float ? t->f : static_cast<double>(t->i);
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.6g", v);
          n += "; quality target: " + (m && m->kind == Json::Kind::String ? m->s : std::string("eval_accuracy")) +
               (dir && dir->kind == Json::Kind::String && dir->s == "min" ? " <= " : " >= ") + buf;
        }
      }
    }
  }
  n += "; convergence counted in " + rules::convergence_quantity(round, benchmark) + ".";
  return n;
}

// Each round's fastest closed results as they stand, per key (`keys` gives a
// result's keys; it may count under several): the fastest new result, or a
// record carried into the round (a resubmission of an earlier round's
// result) where that is faster. The rows point into `board`.
template <class Keys>
std::map<std::string, const ResultRow*> fastest_as_it_stands(const std::vector<ResultRow>& board, Keys keys) {
  std::map<std::string, const ResultRow*> best, best_carried;
  for (const auto& x : board)
    for (const std::string& key : keys(x)) {
      auto& slot = x.resubmission ? best_carried[key] : best[key];
      if (!slot || x.score < slot->score) slot = &x;
    }
  for (const auto& [key, c] : best_carried) {
    auto& slot = best[key];
    if (!slot || c->score < slot->score) slot = c;
  }
  return best;
}

// A round's closed leaderboard of one benchmark; false (with *error) only
// when the store is damaged (an empty board is a round without results).
bool closed_board(Context& ctx, const std::string& round, const std::string& benchmark, std::vector<ResultRow>* out,
                  std::string* error) {
  std::vector<ResultRow> rows;
  if (!results_of(ctx, round, benchmark, &rows, error)) return false;
  std::string e;
  *out = submissions::leaderboard_of(std::move(rows), "closed", &e);
  return true;
}

// The accelerator a trend line follows: "NVIDIA H100", "Intel Gaudi2"; the
// raw name where the table does not know it.
std::string accelerator_family(const ResultRow& r) {
  const auto& a = submissions::identify_accelerator(r.accelerator);
  if (!a.known) return a.family.empty() ? r.accelerator_type : a.family;
  return a.vendor.empty() ? a.family : a.vendor + " " + a.family;
}

std::string accelerator_text(const ResultRow& r) {
  return r.accelerator_model.empty() ? r.accelerator_type : r.accelerator_model;
}

// A point of a "fastest closed result per round" line (charts::rounds_line):
// `result` says what it is ("new result", "carried from training-3.0.0"); a
// resubmission is drawn as a carried record.
Json trend_point(const std::string& round, const std::string& group, const ResultRow& x, const std::string& result) {
  Json v = jobj();
  set(v, "round", jstr(round));
  set(v, "group", jstr(group));
  set(v, "system", jstr(x.organisation + "/" + x.system));
  set(v, "accelerator", jstr(accelerator_text(x)));
  set(v, "accelerators", jint(x.accelerators));
  set(v, "minutes", jnum(x.score));
  set(v, "result", jstr(result));
  set(v, "record", jstr(x.resubmission ? "carried record" : "new result"));
  return v;
}

}  // namespace

// ---- index -----------------------------------------------------------------

// The site's front page, a dashboard: the store's figures, each benchmark's
// latest record against the round before, one chart per benchmark (the
// fastest closed result of each round, one line per accelerator family),
// then the rounds and the scaling pages.
bool index_page(Context& ctx, Built* out, std::string* error) {
  Page p = new_page("index.html", "index", "MLPerf Training results");
  p.rounds = ctx.rounds;
  submissions::Listing listing;
  if (!submissions::list_store(ctx.store, "rounds", "", &listing, error)) return false;
  Table rounds{"rounds", "Rounds", {{"round", "Round", "link"}, {"packages", "Packages", "number", 0},
                                    {"results", "Results", "number", 0}, {"runs", "Runs", "number", 0}}, {}, {}, "", ""};
  long long packages = 0, results = 0, runs = 0;
  for (const auto& row : listing.rows) {
    if (!ctx.shown(row[0])) continue;
    Json o = jobj();
    set(o, "round", jlink(row[0], p.href("rounds/" + safe_name(row[0]) + "/index.html")));
    long long pk = std::atoll(row[1].c_str()), rs = std::atoll(row[2].c_str()), rn = std::atoll(row[3].c_str());
    packages += pk;
    results += rs;
    runs += rn;
    set(o, "packages", jint(pk));
    set(o, "results", jint(rs));
    set(o, "runs", jint(rn));
    rounds.rows.push_back(o);
  }
  // Each benchmark once (a renamed one under its later name, its earlier name
  // said), with its latest record against the round before.
  Table latest{"benchmarks", "Latest record of each benchmark",
               {{"benchmark", "Benchmark", "link"}, {"model", "Model and data", "text"}, {"round", "Round", "text"},
                {"system", "Fastest closed", "link"},
                {"accelerator", "Accelerator", "text"}, {"accelerators", "Accelerators", "number", 0},
                {"minutes", "Minutes", "minutes", 3}, {"carried", "Carried", "text"},
                {"previous_round", "Round before", "text"}, {"previous_minutes", "Minutes before", "minutes", 3},
                {"speedup", "Speedup", "number", 2}, {"rounds", "Rounds", "text"}},
               {}, {}, "", ""};
  // "Carried" stays in sight: a carried record has no speedup, and the row says why.
  optional_columns(&latest, {"model", "previous_round", "previous_minutes", "rounds"});
  std::vector<std::string> chart_ids;
  for (const auto& b : lineages_in(ctx)) {
    std::string in;
    Json values = jarr();
    const ResultRow* last = nullptr;
    const ResultRow* before = nullptr;
    std::string last_round, before_round;
    std::vector<std::vector<ResultRow>> boards;
    boards.reserve(ctx.rounds.size());
    std::string described_round, described_name;  // the latest round that has it, and its name there
    for (const auto& r : ctx.rounds) {
      std::string name = name_in_round(ctx, r, b);
      if (name.empty()) continue;
      described_round = r;
      described_name = name;
      in += (in.empty() ? "" : ", ") + r + (name == b ? "" : " (as " + name + ")");
      boards.emplace_back();
      if (!closed_board(ctx, r, name, &boards.back(), error)) return false;
      const auto& board = boards.back();
      if (board.empty()) continue;
      auto overall = fastest_as_it_stands(board, [](const ResultRow&) { return std::vector<std::string>{"overall"}; });
      before = last;
      before_round = last_round;
      last = overall["overall"];
      last_round = r;
      for (const auto& [family, x] :
           fastest_as_it_stands(board, [](const ResultRow& x) { return std::vector<std::string>{accelerator_family(x)}; })) {
        values.items.push_back(trend_point(r, family, *x, x->resubmission ? "carried record" : "new result"));
      }
    }
    Json o = jobj();
    set(o, "benchmark", jlink(b, p.href("benchmarks/" + safe_name(b) + ".html")));
    // Described where it ran, under that round's name: "ssd" of 1.1 is SSD, not 3.1's RetinaNet.
    const auto d = rules::benchmark_description(described_round, described_name);
    set(o, "model", d.known ? jstr(d.model + ", " + d.dataset) : jnull());
    set(o, "round", last ? jstr(last_round) : jnull());
    set(o, "system", last ? result_link(p, *last) : jnull());
    set(o, "accelerator", last ? jstr(accelerator_text(*last)) : jnull());
    set(o, "accelerators", last ? jint(last->accelerators) : jnull());
    set(o, "minutes", last ? minutes_or_null(*last) : jnull());
    set(o, "carried", jstr(last && last->resubmission ? "carried record" : ""));
    set(o, "previous_round", before ? jstr(before_round) : jnull());
    set(o, "previous_minutes", before ? minutes_or_null(*before) : jnull());
    // A carried record (the latest round's fastest resubmits an earlier result) is no new result: no speedup.
    set(o, "speedup", last && before && last->score > 0 && !last->resubmission ? jnum(before->score / last->score) : jnull());
    set(o, "rounds", jstr(in));
    latest.rows.push_back(o);
    if (!values.items.empty()) {
      std::string id = "trend-" + safe_name(b);
      p.charts.push_back({id, b + ": fastest closed result per round, by accelerator", charts::rounds_line(values, "Accelerator"),
                          values});
      chart_ids.push_back(id);
    }
  }
  Table scaling{"scaling", "Scaling", {{"benchmark", "Benchmark", "text"}, {"submitter", "Submitter", "text"}, {"page", "Page", "link"}},
                {}, {"benchmark", "submitter"}, "", ""};
  std::set<std::string> submitters;
  for (const auto& b : benchmarks_in(ctx, "")) {
    for (const auto& s : submitters_of(ctx, b)) {
      submitters.insert(lower(s));
      Json r = jobj();
      set(r, "benchmark", jstr(b));
      set(r, "submitter", jstr(s));
      set(r, "page", jlink(b + " scaling of " + s, p.href("scaling/" + safe_name(b) + "/" + safe_name(s) + ".html")));
      scaling.rows.push_back(r);
    }
  }
  if (ctx.rounds.empty()) p.notes.push_back("The store holds no round that this report may show.");
  std::string span = ctx.rounds.empty() ? "" : ctx.rounds.size() == 1 ? ctx.rounds.front()
                                                                      : ctx.rounds.front() + " to " + ctx.rounds.back();
  std::vector<Figure> figures = {
      {"Rounds", fmt_count(static_cast<long long>(ctx.rounds.size())), span},
      {"Benchmarks", fmt_count(static_cast<long long>(latest.rows.size())), "a renamed benchmark counted once"},
      {"Submitters", fmt_count(static_cast<long long>(submitters.size())), "with a closed or open result"},
      {"Results", fmt_count(results), fmt_count(packages) + " packages"},
      {"Runs", fmt_count(runs), "each a training to the quality target"}};
  p.tables = {latest, rounds, scaling};
  Section glance{"At a glance",
                 {"Speedup: the round before's fastest closed result against the latest round's, whatever each ran on; "
                  "none where the latest round's fastest is a carried record (a resubmission of an earlier result: "
                  "not a new result, and no regression). Each benchmark's page pairs like with like."},
                 {}, {"benchmarks"}};
  glance.figures = figures;
  p.sections = {glance,
                {"Fastest closed result per round", {"One line per accelerator family; a triangle is a record carried "
                  "into a round (a resubmission), a circle a new result. Click a legend entry to show that line alone."},
                 chart_ids, {}},
                {"Rounds", {"Each round's overview: the fastest results of every benchmark, and links to its leaderboards."}, {}, {"rounds"}},
                {"Scaling", {"Time to train against the number of accelerators, per submitter."}, {}, {"scaling"}}};
  out->page = std::move(p);
  return true;
}


// ---- every result ----------------------------------------------------------

// Every result of every shown round in one table, as MLCommons' results
// pages list them: filters on round, benchmark, division, availability,
// accelerator and submitter, a search, the view kept in the address.
bool all_results_page(Context& ctx, Built* out, std::string* error) {
  Page p = new_page("results.html", "results", "Every result");
  p.rounds = ctx.rounds;
  Table t{"results", "Results",
          {{"round", "Round", "text"}, {"benchmark", "Benchmark", "text"}, {"division", "Division", "text"},
           {"availability", "Availability", "text"}, {"submitter", "Submitter", "text"}, {"system", "System", "link"},
           {"accelerator", "Accelerator", "text"}, {"accelerators", "Accelerators", "number", 0},
           {"minutes", "Minutes", "minutes", 3}, {"verdict", "Checks", "text"}, {"review", "Review", "text"},
           {"name", "Benchmark as named", "text"}},
          {}, {"round", "benchmark", "division", "availability", "accelerator", "submitter"}, "", ""};
  optional_columns(&t, {"review", "name"});
  bool renamed = false;
  for (const auto& round : ctx.rounds)
    for (const auto& b : benchmarks_in(ctx, round)) {
      std::vector<ResultRow> rows;
      if (!results_of(ctx, round, b, &rows, error)) return false;
      const std::string lineage = rules::benchmark_lineage(round, b);
      renamed = renamed || lineage != b;
      for (const auto& r : rows) {
        Json o = jobj();
        set(o, "round", jstr(round));
        set(o, "benchmark", jstr(lineage));
        set(o, "division", jstr(r.division));
        set(o, "availability", jstr(r.availability));
        set(o, "submitter", jstr(r.submitter));
        set(o, "system", result_link(p, r));
        set(o, "accelerator", jstr(accelerator_text(r)));
        set(o, "accelerators", jint(r.accelerators));
        set(o, "minutes", minutes_or_null(r));
        set(o, "verdict", jstr(r.pass ? "pass" : "fail"));
        set(o, "review", jstr(r.review_status.empty() ? "" : submissions::review_status_text(r)));
        set(o, "name", jstr(b));
        t.rows.push_back(o);
      }
    }
  std::vector<std::string> notes = {"Every result of every round shown, closed and open; minutes as published. Choose a "
                                    "round, benchmark, division, availability, accelerator or submitter, or search; the "
                                    "address keeps the choice, so that a view can be shared."};
  if (renamed) notes.push_back("A benchmark renamed between rounds is listed under its latest name (ssd in 2.0-4.1 is "
                               "retinanet, gnn in 4.0-4.1 is rgat); \"Benchmark as named\" gives the round's own name.");
  p.tables = {t};
  p.sections = {{"Results", notes, {}, {"results"}}};
  out->page = std::move(p);
  return true;
}

// ---- round overview ------------------------------------------------------

std::vector<std::pair<long long, long long>> overview_pairs(const std::vector<std::pair<long long, long long>>& all,
                                                            const std::vector<std::pair<long long, long long>>& automatic) {
  std::vector<std::pair<long long, long long>> out;
  size_t shown = 0;
  for (const auto& p : all) {
    bool is_auto = std::find(automatic.begin(), automatic.end(), p) != automatic.end();
    if (is_auto && shown >= kPairsShown) continue;
    shown += is_auto ? 1 : 0;
    out.push_back(p);
  }
  return out;
}

// A round's MLPerf HPC weak-scaling results (the store's weak_results,
// schema 16): empty for a Training round or an older store.
Table weak_scaling_table(Context& ctx, const std::string& round) {
  Table t{"weak", "Weak scaling: models trained at once",
          {{"benchmark", "Benchmark", "text"}, {"system", "System", "text"}, {"submitter", "Submitter", "text"},
           {"division", "Division", "text"}, {"availability", "Availability", "text"},
           {"accelerator", "Accelerator", "text"}, {"accelerators", "Accelerators", "number", 0},
           {"models", "Models", "number", 0}, {"instance_scale", "Accelerators per model", "number", 0},
           {"minutes", "Minutes (all models)", "minutes", 2}, {"verdict", "Checks", "text"}, {"note", "Note", "text"}},
          {}, {"benchmark", "division", "availability"}, "", ""};
  optional_columns(&t, {"accelerator", "note"});
  Stmt has(ctx.store.db(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'weak_results'");
  if (!has.step()) return t;
  Stmt q(ctx.store.db(), R"sql(
    SELECT w.benchmark, o.name || '/' || s.name, s.submitter, w.division, s.availability, s.accelerator_model_name,
           s.accelerators_count, w.number_of_models, w.instance_scale, w.time_to_train_all_minutes, w.verdict, w.note
      FROM weak_results w JOIN systems s ON s.id = w.system_id JOIN packages p ON p.id = s.package_id
      JOIN rounds d ON d.id = p.round_id JOIN organisations o ON o.id = p.organisation_id
     WHERE d.name = ?1
     ORDER BY w.benchmark, w.time_to_train_all_minutes IS NULL, w.time_to_train_all_minutes, o.name, s.name)sql");
  q.bind(1, round);
  while (q.step()) {
    Json o = jobj();
    set(o, "benchmark", jstr(q.col_text(0)));
    set(o, "system", jstr(q.col_text(1)));
    set(o, "submitter", jstr(q.col_text(2)));
    set(o, "division", jstr(q.col_text(3)));
    set(o, "availability", jstr(submissions::normalize_availability(q.col_text(4))));
    set(o, "accelerator", jstr(q.col_text(5)));
    set(o, "accelerators", q.col_null(6) ? jnull() : jint(q.col_int(6)));
    set(o, "models", q.col_null(7) ? jnull() : jint(q.col_int(7)));
    set(o, "instance_scale", q.col_null(8) ? jnull() : jint(q.col_int(8)));
    set(o, "minutes", q.col_null(9) ? jnull() : jnum(q.col_double(9)));
    set(o, "verdict", jstr(q.col_text(10)));
    set(o, "note", jstr(q.col_null(11) ? "" : q.col_text(11)));
    t.rows.push_back(o);
  }
  return t;
}

bool round_page(Context& ctx, const std::string& round, Built* out, std::string* error) {
  if (!ctx.shown(round)) {
    out->missing = true;
    return true;
  }
  Page p = new_page("rounds/" + safe_name(round) + "/index.html", "round", round + ": overview");
  p.rounds = {round};
  p.nav.emplace_back(round, p.href("rounds/" + safe_name(round) + "/index.html"));
  Table t{"overview", "Fastest results per benchmark and availability",
          {{"benchmark", "Benchmark", "text"}, {"leaderboard", "Leaderboard", "link"}, {"availability", "Availability", "text"},
           {"closed", "Fastest closed", "link"}, {"closed_minutes", "Closed minutes", "minutes", 2},
           {"closed_accelerators", "Accelerators", "number", 0}, {"open", "Fastest open", "link"},
           {"open_minutes", "Open minutes", "minutes", 2}, {"submitters", "Submitters", "number", 0},
           {"results", "Results", "number", 0}, {"pass", "Passed checks", "number", 0}, {"fail", "Failed checks", "number", 0}},
          {}, {"benchmark", "availability"}, "", ""};
  optional_columns(&t, {"open", "open_minutes", "submitters"});
  Json bars = jarr();
  Table pairs{"pairs", "Head to head", {{"benchmark", "Benchmark", "text"}, {"pair", "Results", "link"}}, {}, {"benchmark"}, "", ""};
  bool resubmissions = false;
  for (const auto& b : benchmarks_in(ctx, round)) {
    std::vector<ResultRow> rows;
    if (!results_of(ctx, round, b, &rows, error)) return false;
    for (const auto& r : rows) resubmissions = resubmissions || r.resubmission;
    std::map<std::string, std::vector<const ResultRow*>> by_avail;
    for (const auto& r : rows) by_avail[r.availability].push_back(&r);
    const ResultRow* best = nullptr;
    for (const auto& [avail, list] : by_avail) {
      const ResultRow *fc = nullptr, *fo = nullptr;
      std::set<std::string> submitters;
      int pass = 0, fail = 0;
      for (const auto* r : list) {
        submitters.insert(lower(r->submitter));
        (r->pass ? pass : fail)++;
        if (!r->has_score || r->review_status == "withdrawn") continue;
        const ResultRow*& slot = r->division == "closed" ? fc : fo;
        if (!slot || r->score < slot->score) slot = r;
      }
      if (fc && (!best || fc->score < best->score)) best = fc;
      Json o = jobj();
      set(o, "benchmark", jstr(b));
      set(o, "leaderboard", jlink(b + " leaderboard", p.href("rounds/" + safe_name(round) + "/" + safe_name(b) + ".html")));
      set(o, "availability", jstr(avail));
      set(o, "closed", fc ? result_link(p, *fc) : jnull());
      set(o, "closed_minutes", fc ? jnum(fc->score) : jnull());
      set(o, "closed_accelerators", fc ? jint(fc->accelerators) : jnull());
      set(o, "open", fo ? result_link(p, *fo) : jnull());
      set(o, "open_minutes", fo ? jnum(fo->score) : jnull());
      set(o, "submitters", jint(static_cast<long long>(submitters.size())));
      set(o, "results", jint(static_cast<long long>(list.size())));
      set(o, "pass", jint(pass));
      set(o, "fail", jint(fail));
      t.rows.push_back(o);
    }
    if (best) {
      Json v = jobj();
      set(v, "benchmark", jstr(b));
      set(v, "minutes", jnum(best->score));
      set(v, "system", jstr(best->organisation + "/" + best->system));
      set(v, "accelerators", jint(best->accelerators));
      set(v, "availability", jstr(best->availability));
      bars.items.push_back(v);
    }
    // A chosen few per benchmark (the two fastest, then the fastest pairs of
    // equal size and accelerator); the rest on the leaderboard, one click away.
    auto all = site_pairs(ctx, round, b, rows);
    auto shown = overview_pairs(all, auto_pairs(rows));
    for (const auto& [a, c] : shown) {
      Json o = jobj();
      set(o, "benchmark", jstr(b));
      set(o, "pair", pair_link(p, rows, round, b, a, c));
      pairs.rows.push_back(o);
    }
    if (all.size() > shown.size()) {
      Json o = jobj();
      set(o, "benchmark", jstr(b));
      set(o, "pair", jlink(fmt_count(static_cast<long long>(all.size() - shown.size())) + " more on the " + b + " leaderboard",
                          p.href("rounds/" + safe_name(round) + "/" + safe_name(b) + ".html#head-to-head")));
      pairs.rows.push_back(o);
    }
  }
  Chart c{"fastest", "Fastest closed result per benchmark (minutes)",
          charts::bars(bars, "benchmark", "Benchmark", "minutes", "Minutes", "availability",
                       {"benchmark", "system", "accelerators", "minutes", "availability"}),
          bars};
  p.charts = {c};
  p.tables = {t, pairs};
  Table weak = weak_scaling_table(ctx, round);
  std::vector<std::string> overview_notes = {"Per benchmark and availability category; verdicts are the result checks'."};
  if (resubmissions) overview_notes.push_back(kResubmittedNote);
  p.sections = {{"Fastest results", overview_notes, {"fastest"}, {"overview"}},
                {"Head to head", {"Per benchmark: the two fastest closed results, then the fastest pairs of equal size on the same "
                                  "accelerator, at most " + std::to_string(kPairsShown) + ", and those asked for; every pair is on the benchmark's leaderboard."},
                 {}, {"pairs"}}};
  if (!weak.rows.empty()) {
    p.tables.push_back(weak);
    p.sections.push_back({"Weak scaling (MLPerf HPC)",
                          {"Many models of a benchmark trained at once on one system: the models that count (compliant "
                           "runs), the accelerators each used, and the minutes from the first model's start to the last "
                           "one's stop, as the consortium's summarizer reports them. Fewer models than the benchmark "
                           "requires give no figures. Strong-scaling results (one model, time to train) are in the "
                           "tables above."},
                          {},
                          {"weak"}});
  }
  out->page = std::move(p);
  return true;
}

// ---- leaderboard ---------------------------------------------------------

bool leaderboard_page(Context& ctx, const std::string& round, const std::string& benchmark, Built* out, std::string* error) {
  if (!ctx.shown(round)) {
    out->missing = true;
    return true;
  }
  std::vector<ResultRow> rows;
  if (!results_of(ctx, round, benchmark, &rows, error)) return false;
  if (rows.empty()) {
    out->missing = true;
    return true;
  }
  Page p = new_page("rounds/" + safe_name(round) + "/" + safe_name(benchmark) + ".html", "leaderboard",
                    benchmark + " in " + round + ": leaderboard");
  p.rounds = {round};
  p.nav.emplace_back(round, p.href("rounds/" + safe_name(round) + "/index.html"));
  p.nav.emplace_back(rules::benchmark_lineage(round, benchmark) + " round over round", p.href(benchmark_page(round, benchmark)));
  auto energy = energy_kwh(ctx, round, benchmark);
  bool priced = ctx.options.price.per != submissions::Price::Per::None;
  Table t{"leaderboard", "Results ranked by time to train",
          {{"rank", "Rank", "number", 0}, {"system", "System", "link"}, {"submitter", "Submitter", "text"},
           {"division", "Division", "text"}, {"availability", "Availability", "text"}, {"accelerator", "Accelerator", "text"},
           {"accelerators", "Accelerators", "number", 0}, {"nodes", "Nodes", "number", 0}, {"score", "Minutes", "minutes", 3},
           {"accelerator_hours", "Accelerator-hours", "number", 1}},
          {}, {"division", "availability", "submitter", "accelerator"}, "score", "system"};
  // The figures next to the time (on a 1280-pixel screen they were off to the right), then the checks.
  if (!energy.empty()) t.columns.push_back({"energy_kwh", "Energy (kWh)", "number", 1});
  // The cost of one training run at the price asked for ("Cost of a run at 2.5 per accelerator-hour"): asked for, shown.
  if (priced) t.columns.push_back({"cost", "Cost of a run at " + fmt_ratio(ctx.options.price.amount) + " " +
                                               submissions::price_unit(ctx.options.price), "number", 2});
  for (Column c : {Column{"verdict", "Verdict", "text"}, Column{"rcp", "RCP check", "text"}, Column{"review", "Review status", "text"}})
    t.columns.push_back(c);
  // Energy is shown from the start where any result has it (the power view).
  optional_columns(&t, {"availability", "nodes", "accelerator_hours"});
  std::vector<const ResultRow*> order;
  for (const auto& r : rows) order.push_back(&r);
  // A twin (the same logs as another result of the round) is that result: ranked once, as the first of them.
  auto ranked = [](const ResultRow* r) { return r->has_score && r->review_status != "withdrawn" && !r->twin_of; };
  // Ranked within its division (closed, then open; one moved to open by the review ranks there), unranked last.
  std::stable_sort(order.begin(), order.end(), [&](const ResultRow* a, const ResultRow* b) {
    if (ranked(a) != ranked(b)) return ranked(a);
    return ranked(a) && submissions::division_rank_less(*a, *b);
  });
  std::vector<const ResultRow*> ranked_rows;
  for (const auto* r : order)
    if (ranked(r)) ranked_rows.push_back(r);
  std::vector<int> ranks = submissions::division_ranks(ranked_rows);
  Json bars = jarr();
  Json power = jarr();  // results with an energy figure: the power view
  size_t next_rank = 0;
  for (const auto* r : order) {
    Json o = jobj();
    set(o, "rank", ranked(r) ? jint(ranks[next_rank++]) : jnull());
    // The verdict column marks a resubmission: the name stays short.
    set(o, "system", jlink(r->organisation + "/" + r->system, p.href(result_path(r->result_id))));
    set(o, "submitter", jstr(r->submitter));
    set(o, "division", jstr(r->division));
    set(o, "availability", jstr(r->availability));
    set(o, "accelerator", jstr(r->accelerator_type));
    set(o, "accelerators", jint(r->accelerators));
    set(o, "nodes", jint(r->nodes));
    set(o, "score", minutes_or_null(*r));
    set(o, "verdict", jstr(std::string(submissions::checks_word(*r)) + submissions::accepted_label(*r) +
                               (r->resubmission ? " (resubmitted)" : "") +
                               (r->twin_of ? " (twin of " + r->twin_of_name + ", not ranked)" : "")));
    set(o, "rcp", jstr(submissions::rcp_text(*r)));
    set(o, "review", jstr(submissions::review_status_text(*r)));
    set(o, "accelerator_hours", hours_or_null(*r));
    if (!energy.empty()) set(o, "energy_kwh", energy.count(r->result_id) ? jnum(energy[r->result_id]) : jnull());
    double cost = 0;
    if (priced) set(o, "cost", submissions::run_cost(*r, ctx.options.price, &cost) ? jnum(cost) : jnull());
    t.rows.push_back(o);
    if (ranked(r)) {
      Json v = jobj();
      set(v, "system", jstr(r->organisation + "/" + r->system));
      set(v, "minutes", jnum(r->score));
      set(v, "division", jstr(r->division));
      set(v, "accelerators", jint(r->accelerators));
      bars.items.push_back(v);
      if (auto e = energy.find(r->result_id); e != energy.end()) {
        Json w = jobj();
        set(w, "system", jstr(r->organisation + "/" + r->system));
        set(w, "submitter", jstr(r->submitter));
        set(w, "minutes", jnum(r->score));
        set(w, "energy_kwh", jnum(e->second));
        set(w, "accelerators", jint(r->accelerators));
        power.items.push_back(w);
      }
    }
    if (r->review_status == "withdrawn")
      p.notes.push_back(r->organisation + "/" + r->system + " was withdrawn by the review; not ranked.");
    if (!r->twins.empty()) {
      std::string names;
      for (const auto& n : r->twins) names += ", " + n;
      p.notes.push_back(r->organisation + "/" + r->system + names +
                        " are one result: their logs are the same bytes. It is ranked once, as " + r->organisation + "/" +
                        r->system + ", and never compared with itself.");
    }
  }
  Table pairs{"pairs", "Head to head", {{"pair", "Results", "link"}}, {}, {}, "", ""};
  for (const auto& [a, b] : site_pairs(ctx, round, benchmark, rows)) {
    Json o = jobj();
    set(o, "pair", pair_link(p, rows, round, benchmark, a, b));
    pairs.rows.push_back(o);
  }
  p.charts = {{"minutes", "Time to train (minutes)",
               charts::bars(bars, "system", "System", "minutes", "Minutes", "division",
                            {"system", "minutes", "accelerators", "division"}),
               bars}};
  if (!power.items.empty())
    p.charts.push_back({"energy", "Energy to train against time to train", charts::energy(power), power});
  p.tables = {t, pairs};
  std::vector<std::string> notes = {description_note(ctx, round, benchmark), "Accelerator-hours = accelerators x minutes / 60."};
  if (energy.empty()) notes.push_back("No result here has an energy figure (no power results).");
  if (priced) notes.push_back("Cost of one training run at " + fmt_ratio(ctx.options.price.amount) + " " +
                              submissions::price_unit(ctx.options.price) + ".");
  if (ctx.options.pipeline) notes.push_back("Scores are the consortium's pipeline's (--rescale), not the published ones.");
  if (std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.resubmission; })) notes.push_back(kResubmittedNote);
  p.sections = {{"Leaderboard", notes, {"minutes"}, {"leaderboard"}}};
  if (!power.items.empty())
    p.sections.push_back({"Power and energy",
                          {"The results with power measurements: energy to train (kWh, the Energy column of the table) "
                           "against time to train; lower and to the left is better. Click a submitter in the legend to "
                           "show its results alone."},
                          {"energy"}, {}});
  p.sections.push_back({"Head to head", {}, {}, {"pairs"}});
  out->page = std::move(p);
  return true;
}

// ---- round over round ----------------------------------------------------

bool rounds_page(Context& ctx, const std::string& benchmark, Built* out, std::string* error) {
  // `benchmark` is a lineage (rules::benchmark_lineage): a benchmark renamed
  // between rounds is one page, each round read under its own name.
  std::vector<std::string> rounds;  // shown rounds that have the benchmark
  std::map<std::string, std::string> name_of_round;
  std::vector<std::string> rename_notes;
  for (const auto& r : ctx.rounds) {
    std::string name = name_in_round(ctx, r, benchmark);
    if (name.empty()) continue;
    rounds.push_back(r);
    name_of_round[r] = name;
    if (std::string n = rules::benchmark_rename_note(r, name); !n.empty()) rename_notes.push_back(n + ": one benchmark.");
  }
  if (rounds.empty()) {
    out->missing = true;
    return true;
  }
  Page p = new_page("benchmarks/" + safe_name(benchmark) + ".html", "round-over-round", benchmark + ": round over round");
  p.rounds = rounds;
  // The fastest closed result of every round, overall and per submitter.
  Table fastest{"fastest", "Fastest closed result of each round",
                {{"round", "Round", "text"}, {"group", "Submitter", "text"}, {"system", "System", "link"},
                 {"accelerator", "Accelerator", "text"}, {"accelerators", "Accelerators", "number", 0},
                 {"score", "Minutes", "minutes", 3}, {"accelerator_hours", "Accelerator-hours", "number", 1}},
                {}, {"group", "accelerator"}, "score", "system"};
  fastest.columns.insert(fastest.columns.begin() + 6, Column{"carried", "Carried", "text"});
  Json line = jarr();
  // Each round's fastest as it stands: its new results, or a record carried
  // into it (a resubmission of an earlier round's result) when that is
  // faster, marked as carried: the record stood, nothing regressed.
  std::vector<std::string> fastest_notes = {description_note(ctx, rounds.back(), name_of_round[rounds.back()])};
  fastest_notes.insert(fastest_notes.end(), rename_notes.begin(), rename_notes.end());
  fastest_notes.push_back(
      "Closed division. A resubmission (a later round's copy of an earlier round's result) counts in the round it was "
      "first submitted in; where it is still a later round's fastest, that round's row is the record carried forward "
      "(\"Carried\", a triangle on the chart), not a new result and not a regression.");
  std::map<std::string, std::vector<std::pair<std::string, const ResultRow*>>> overall_points;  // for the join note
  std::vector<std::vector<ResultRow>> boards;
  boards.reserve(rounds.size());
  for (const auto& r : rounds) {
    boards.emplace_back();
    if (!closed_board(ctx, r, name_of_round[r], &boards.back(), error)) return false;
    const auto& board = boards.back();
    std::vector<std::string> resubmitted;
    for (const auto& x : board)
      if (x.resubmission) resubmitted.push_back(x.organisation + "/" + x.system + " (" + submissions::minutes_text(x.score) + " min)");
    if (!resubmitted.empty()) {
      std::string names;
      for (const auto& n : resubmitted) names += (names.empty() ? "" : ", ") + n;
      fastest_notes.push_back(r + ": " + std::to_string(resubmitted.size()) +
                              (resubmitted.size() == 1 ? " resubmission" : " resubmissions") +
                              " of an earlier round's results, carried, not new: " + names + ".");
    }
    // "overall", then submitters in lower case
    auto best = fastest_as_it_stands(
        board, [](const ResultRow& x) { return std::vector<std::string>{"overall", lower(x.submitter)}; });
    for (const auto& [key, x] : best) {
      std::string group = key == "overall" ? "overall" : x->submitter;
      std::string carried;
      if (x->resubmission) {
        std::string e2;
        auto origins = submissions::resubmission_origins(ctx.store, x->result_id, &e2);
        carried = "carried from " + (origins.empty() ? std::string("an earlier round") : origins.front().round);
      }
      Json o = jobj();
      set(o, "round", jstr(r));
      set(o, "group", jstr(group));
      set(o, "system", result_link(p, *x));
      set(o, "accelerator", jstr(accelerator_text(*x)));
      set(o, "accelerators", jint(x->accelerators));
      set(o, "score", jnum(x->score));
      set(o, "carried", jstr(carried));
      set(o, "accelerator_hours", hours_or_null(*x));
      fastest.rows.push_back(o);
      line.items.push_back(trend_point(r, group, *x, carried.empty() ? "new result" : carried));
      if (key == "overall") overall_points["overall"].emplace_back(r, x);
    }
  }
  // The overall line joins each round's fastest, whatever it ran on: say where the accelerators differ.
  {
    const auto& pts = overall_points["overall"];
    std::vector<std::string> joins;
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      const auto& a = submissions::identify_accelerator(pts[i].second->accelerator);
      const auto& b = submissions::identify_accelerator(pts[i + 1].second->accelerator);
      if (submissions::same_accelerator(a, b) == submissions::AcceleratorMatch::None)
        joins.push_back(pts[i].first + " (" + pts[i].second->accelerator_type + ") to " + pts[i + 1].first + " (" +
                        pts[i + 1].second->accelerator_type + ")");
    }
    if (!joins.empty()) {
      std::string list;
      for (const auto& j : joins) list += (list.empty() ? "" : ", ") + j;
      fastest_notes.push_back("The overall line joins results on different accelerators: " + list +
                              "; its slope there is not one accelerator's progress.");
    }
  }
  Table pairs{"speedups", "Speedups between rounds",
              {{"from_round", "From", "text"}, {"to_round", "To", "text"}, {"group", "Submitter", "text"},
               {"kind", "Pair", "text"}, {"from_system", "Earlier result", "link"},
               {"from_accelerators", "Accelerators", "number", 0}, {"from_minutes", "Minutes", "minutes", 2},
               {"to_system", "Later result", "link"}, {"to_accelerators", "Accelerators", "number", 0},
               {"to_minutes", "Minutes", "minutes", 2}, {"speedup", "Speedup", "number", 2},
               {"interval", "95% interval", "text"},
               {"accelerator_ratio", "Accelerator ratio", "number", 2}, {"efficiency", "Efficiency", "percent", 1},
               {"from_hours", "Accelerator-hours before", "number", 1}, {"to_hours", "Accelerator-hours after", "number", 1},
               {"hours_change", "Change", "change", 1}, {"note", "Note", "text"}},
              {}, {"group", "kind"}, "", ""};
  // With a price, the cost of one training run on each side, as `referee speedup` gives it.
  bool priced = ctx.options.price.per != submissions::Price::Per::None;
  std::string price_label = submissions::price_unit(ctx.options.price) + " " + fmt_ratio(ctx.options.price.amount);
  if (priced) {
    pairs.columns.insert(pairs.columns.end() - 1, Column{"from_cost", "Cost before " + price_label, "number", 0});
    pairs.columns.insert(pairs.columns.end() - 1, Column{"to_cost", "Cost after " + price_label, "number", 0});
  }
  optional_columns(&pairs, {"from_accelerators", "to_accelerators", "accelerator_ratio", "from_hours",
                            "to_hours", "hours_change", "from_cost", "to_cost", "interval"});
  std::vector<std::pair<std::string, std::string>> spans;
  for (size_t i = 0; i + 1 < rounds.size(); ++i) spans.emplace_back(rounds[i], rounds[i + 1]);
  if (rounds.size() > 2) spans.emplace_back(rounds.front(), rounds.back());
  std::vector<std::string> headline_notes;
  // Why results have no partner ("no pair", results left out): one line
  // each, folded under the speedups, each once.
  std::vector<std::string> left_out;
  auto add_note = [&left_out](const std::string& n) {
    if (std::find(left_out.begin(), left_out.end(), n) == left_out.end()) left_out.push_back(n);
  };
  for (const auto& [from, to] : spans)
    for (bool per_submitter : {false, true}) {
      submissions::SpeedupReport rep;
      submissions::SpeedupQuery q{from, to, benchmark, per_submitter, "", ctx.options.pipeline};
      if (!submissions::speedups(ctx.store, q, &rep, error)) return false;
      for (const auto& s : rep.pairs) {
        Json o = jobj();
        set(o, "from_round", jstr(from));
        set(o, "to_round", jstr(to));
        set(o, "group", jstr(s.submitter));
        set(o, "kind", jstr(s.kind));
        set(o, "from_system", result_link(p, s.from));
        set(o, "from_accelerators", jint(s.from.accelerators));
        set(o, "from_minutes", jnum(s.from.score));
        set(o, "to_system", result_link(p, s.to));
        set(o, "to_accelerators", jint(s.to.accelerators));
        set(o, "to_minutes", jnum(s.to.score));
        set(o, "speedup", s.comparable ? jnum(s.speedup) : jnull());
        set(o, "interval", jstr(s.has_interval ? fmt_fixed(s.speedup_low, 2) + "-" + fmt_fixed(s.speedup_high, 2) : ""));
        set(o, "accelerator_ratio", jnum(s.accelerator_ratio));
        set(o, "efficiency", s.has_efficiency ? jnum(s.efficiency) : jnull());
        double ha = 0, hb = 0;
        bool hh = submissions::accelerator_hours(s.from, &ha) && submissions::accelerator_hours(s.to, &hb);
        set(o, "from_hours", hh ? jnum(ha) : jnull());
        set(o, "to_hours", hh ? jnum(hb) : jnull());
        set(o, "hours_change", hh && ha > 0 ? jnum(hb / ha - 1) : jnull());
        if (priced) {
          double ca = 0, cb = 0;
          set(o, "from_cost", submissions::run_cost(s.from, ctx.options.price, &ca) ? jnum(ca) : jnull());
          set(o, "to_cost", submissions::run_cost(s.to, ctx.options.price, &cb) ? jnum(cb) : jnull());
        }
        set(o, "note", jstr(s.comparable ? (s.has_efficiency && s.efficiency > 1 ? s.efficiency_note : "") : s.reason));
        pairs.rows.push_back(o);
        if (s.kind == "headline" && s.submitter == "overall" && s.comparable) {
          std::string n = benchmark + ", fastest against fastest: " + submissions::minutes_text(s.from.score) + " min on " +
                          fmt_count(s.from.accelerators) + " " + s.from.accelerator_type + " (" + from + ", " +
                          s.from.organisation + "/" + s.from.system + ") to " + submissions::minutes_text(s.to.score) + " min on " +
                          fmt_count(s.to.accelerators) + " (" + to + ", " + s.to.organisation + "/" + s.to.system +
                          "): " + fmt_fixed(s.speedup, 2) + "x faster for " + fmt_ratio(s.accelerator_ratio) +
                          "x the accelerators";
          if (s.has_efficiency) n += ", " + fmt_fixed(100 * s.efficiency, 0) + "% efficiency";
          // Accelerator-hours as the table and `referee speedup` print them: one decimal, the change signed.
          if (hh && ha > 0) n += "; " + fmt_hours(ha) + " vs " + fmt_hours(hb) + " accelerator-hours (" + fmt_change(hb / ha - 1) + ")";
          headline_notes.push_back(n + ".");
        }
      }
      // Overall and per submitter leave out the same results: each note once.
      for (const auto& n : rep.left_out) add_note(from + " to " + to + ": " + n);
      if (per_submitter)
        for (const auto& n : rep.notes) add_note(from + " to " + to + ": " + n);
    }
  // A benchmark without a scored closed result in any round (every result
  // open, withdrawn or unscored) has no line to draw: a note says so.
  bool drawn = !line.items.empty();
  if (drawn) p.charts = {{"trend", "Fastest closed result per round", charts::rounds_line(line), line}};
  p.tables = {fastest, pairs};
  std::vector<std::string> rule_notes = headline_notes;
  rule_notes.push_back(std::string("Pairs: ") + submissions::kHeadlineScaleRule + ".");
  if (priced) rule_notes.push_back("Cost of one training run at " + fmt_ratio(ctx.options.price.amount) + " " +
                                   submissions::price_unit(ctx.options.price) + ".");
  if (!drawn) fastest_notes.push_back("No chart: no round has a scored closed result of this benchmark.");
  p.sections = {{"Fastest per round", fastest_notes, drawn ? std::vector<std::string>{"trend"} : std::vector<std::string>{},
                 {"fastest"}},
                {"Speedups", rule_notes, {}, {"speedups"}}};
  p.sections.back().folded_title = "Results without a partner, and results left out";
  p.sections.back().folded = std::move(left_out);
  out->page = std::move(p);
  return true;
}

// ---- scaling ---------------------------------------------------------------

bool scaling_page(Context& ctx, const std::string& benchmark, const std::string& segment, Built* out, std::string* error) {
  std::string submitter;
  for (const auto& s : submitters_of(ctx, benchmark))
    if (safe_name(s) == segment) submitter = s;
  if (submitter.empty()) {
    out->missing = true;
    return true;
  }
  Page p = new_page("scaling/" + safe_name(benchmark) + "/" + safe_name(submitter) + ".html", "scaling",
                    benchmark + ": scaling of " + submitter);
  std::string last_round;  // the latest shown round with the name says which benchmark it is
  for (const auto& r : ctx.rounds) {
    auto bs = benchmarks_in(ctx, r);
    if (std::find(bs.begin(), bs.end(), benchmark) != bs.end()) last_round = r;
  }
  p.nav.emplace_back(rules::benchmark_lineage(last_round, benchmark) + " round over round",
                     p.href(benchmark_page(last_round, benchmark)));
  Table t{"points", "Results by size",
          {{"round", "Round", "text"}, {"accelerator", "Accelerator", "text"}, {"system", "System", "link"},
           {"accelerators", "Accelerators", "number", 0}, {"score", "Minutes", "minutes", 3},
           {"speedup", "Speedup", "number", 2}, {"size_ratio", "Size ratio", "number", 2},
           {"efficiency", "Efficiency", "percent", 1}},
          {}, {"round", "accelerator"}, "score", "system"};
  Json values = jarr();
  for (const auto& r : ctx.rounds) {
    std::vector<std::string> left;
    std::vector<ResultRow> rows;
    if (!results_of(ctx, r, benchmark, &rows, error)) return false;
    // This submitter's results only: the page is one of those submitters_of lists, by the name as written
    // (the query's --submitter also takes an organisation's name, which here would mix two pages).
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const ResultRow& x) { return x.submitter != submitter; }),
               rows.end());
    auto series = submissions::scaling_series(std::move(rows), "", &left);
    for (const auto& n : left)
      if (std::find(p.notes.begin(), p.notes.end(), n) == p.notes.end()) p.notes.push_back(n);
    left.clear();
    if (series.empty()) continue;
    p.rounds.push_back(r);
    for (const auto& s : series) {
      std::string name = r + " " + submissions::series_label(s);
      const ResultRow& base = s.points.front().result;
      for (const auto& pt : s.points) {
        Json o = jobj();
        set(o, "round", jstr(r));
        set(o, "accelerator", jstr(submissions::series_label(s)));
        set(o, "system", result_link(p, pt.result));
        set(o, "accelerators", jint(pt.result.accelerators));
        set(o, "score", jnum(pt.result.score));
        set(o, "speedup", jnum(pt.speedup));
        set(o, "size_ratio", jnum(pt.size_ratio));
        set(o, "efficiency", pt.has_efficiency ? jnum(pt.efficiency) : jnull());
        t.rows.push_back(o);
        Json v = jobj();
        set(v, "kind", jstr("measured"));
        set(v, "series", jstr(name));
        set(v, "system", jstr(pt.result.organisation + "/" + pt.result.system));
        set(v, "accelerators", jint(pt.result.accelerators));
        set(v, "minutes", jnum(pt.result.score));
        set(v, "efficiency", pt.has_efficiency ? jnum(pt.efficiency) : jnull());
        values.items.push_back(v);
      }
      for (const auto& pt : s.points) {
        Json v = jobj();
        set(v, "kind", jstr("ideal"));
        set(v, "series", jstr(name));
        set(v, "accelerators", jint(pt.result.accelerators));
        set(v, "minutes", jnum(base.score * static_cast<double>(base.accelerators) / static_cast<double>(pt.result.accelerators)));
        values.items.push_back(v);
      }
    }
  }
  if (p.rounds.empty()) {
    // Listed (submitters_of), so the page is there, saying why it draws nothing.
    p.notes.push_back("No result of " + submitter + " is drawn here: each is withdrawn or a copy of another "
                      "(the notes above say which).");
    p.tables = {t};
    p.sections = {{"Scaling", {}, {}, {"points"}}};
    out->page = std::move(p);
    return true;
  }
  p.charts = {{"scaling", "Minutes against accelerators (log-log); dashed: linear scaling", charts::scaling(values), values}};
  p.tables = {t};
  p.sections = {{"Scaling", {"One series per round and accelerator type; speedup and efficiency are relative to the "
                             "series' smallest result (efficiency = speedup / size ratio, given only for a larger result than the smallest)."},
                 {"scaling"}, {"points"}}};
  out->page = std::move(p);
  return true;
}

Page new_page(const std::string& path, const std::string& kind, const std::string& title) {
  Page p;
  p.path = path;
  p.kind = kind;
  p.title = title;
  p.nav.emplace_back("Rounds", p.href("index.html"));
  p.nav.emplace_back("Every result", p.href("results.html"));
  return p;
}

}  // namespace referee::reports
