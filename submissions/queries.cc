#include "submissions/queries.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "rules/package.h"
#include "rules/ruleset.h"
#include "rules/scoring.h"
#include "submissions/accelerator.h"
#include "submissions/table.h"

namespace referee::submissions {

namespace {

// The division filter (?3) is applied after reading: a result the review
// moved to the open division counts as open.
const char* kSelect = R"sql(
  SELECT x.id, d.name, o.name, s.submitter, s.name, x.benchmark, x.division, s.availability,
         s.accelerator_model_name, s.accelerators_count, s.number_of_nodes,
         x.score_minutes, x.score_pipeline_minutes, x.verdict, x.rcp_status, x.resubmission,
         x.unscaled_minutes, rs.status, rs.factor, rs.objection_id, rs.decision_id, x.rcp_pass,
         FAILED_CHECKS, ob.rule, x.seeds_ok, x.result_count = x.expected_count, x.published_factor, x.rcp_norm_factor,
         (SELECT rr.state FROM round_reviews rr WHERE rr.round_id = d.id)
  FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
       JOIN organisations o ON p.organisation_id = o.id JOIN rounds d ON p.round_id = d.id
       LEFT JOIN result_status rs ON rs.result_id = x.id LEFT JOIN objections ob ON ob.id = rs.objection_id
  WHERE d.name = ?1 AND x.benchmark = ?2
  ORDER BY o.name, s.name)sql";

// The same for a store from before the review (schema < 5, opened read-only): no status.
const char* kSelectNoReview = R"sql(
  SELECT x.id, d.name, o.name, s.submitter, s.name, x.benchmark, x.division, s.availability,
         s.accelerator_model_name, s.accelerators_count, s.number_of_nodes,
         x.score_minutes, x.score_pipeline_minutes, x.verdict, x.rcp_status, x.resubmission,
         x.unscaled_minutes, NULL, NULL, NULL, NULL, x.rcp_pass,
         NULL, NULL, x.seeds_ok, x.result_count = x.expected_count, x.published_factor, x.rcp_norm_factor, NULL
  FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
       JOIN organisations o ON p.organisation_id = o.id JOIN rounds d ON p.round_id = d.id
  WHERE d.name = ?1 AND x.benchmark = ?2
  ORDER BY o.name, s.name)sql";

bool has_review_tables(Store& s) {
  Stmt st(s.db(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'result_status'");
  return st.step();
}

// The statement for the store's schema: results.failed_checks from schema 8.
std::string select_results(Store& s) {
  if (!has_review_tables(s)) return kSelectNoReview;
  std::string sql = kSelect;
  sql.replace(sql.find("FAILED_CHECKS"), 13, s.opened_version() >= 8 ? "x.failed_checks" : "NULL");
  return sql;
}

using base::iequals;
using base::lower;
using base::upper;

// A factor as the tables show it: "x1.0758".
std::string factor_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "x%.4f", f);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// After a statement's rows were read: false with *error when it stopped on an error.
bool finished(Store& s, const Stmt& st, const char* what, std::string* error) {
  if (st.ok()) return true;
  *error = s.describe_error(st.rc(), what);
  return false;
}

ResultRow read_row(Stmt& st, bool pipeline) {
  ResultRow r;
  st.row(r.result_id, r.round, r.organisation, r.submitter, r.system, r.benchmark, r.division, r.availability,
         r.accelerator, r.accelerators, r.nodes);
  r.availability_raw = r.availability;
  if (std::string c = rules::availability_category(r.availability_raw); !c.empty()) r.availability = c;
  else r.availability_known = false;
  const Accelerator& acc = identify_accelerator(r.accelerator);
  r.accelerator_type = acc.family;
  r.accelerator_model = acc.model();
  int score_col = pipeline ? 12 : 11;
  r.has_score = !st.col_null(score_col);
  r.score = st.col_double(score_col);
  r.pass = st.col_text(13) == "pass";
  r.rcp_status = st.col_text(14);
  r.rcp_pass = !st.col_null(21) && st.col_int(21) != 0;
  r.resubmission = st.col_int(15) != 0;
  r.submitted_division = r.division;
  if (!st.col_null(17)) {
    r.review_status = st.col_text(17);
    r.has_review_factor = !st.col_null(18);
    r.review_factor = st.col_double(18);
    r.objection_id = st.col_null(19) ? 0 : st.col_int(19);
    r.decision_id = st.col_null(20) ? 0 : st.col_int(20);
  }
  if (r.review_status == "moved-to-open") r.division = "open";
  if (r.review_status == "normalised" && r.has_review_factor && !st.col_null(16)) {
    r.has_submitted_score = r.has_score;
    r.submitted_score = r.score;
    r.has_score = true;
    r.score = st.col_double(16) * r.review_factor;
  }
  if (r.has_score && !rules::is_time_to_train(r.score)) {
    r.has_score = false;
    r.no_time_to_train = true;
  }
  if (!st.col_null(22)) {
    mllog::Json checks;
    std::string perr;
    if (mllog::parse_json_permissive(st.col_text(22), &checks, &perr) && checks.kind == mllog::Json::Kind::Array) {
      r.failed_checks_known = true;
      for (const auto& c : checks.items)
        if (c.kind == mllog::Json::Kind::String) r.failed_checks.push_back(c.s);
    }
  }
  if (!r.pass && !r.failed_checks_known) {
    // Imported before schema 8: what the store keeps of the checks.
    r.failed_checks_known = true;
    if (st.col_int(25) == 0) r.failed_checks.push_back("result count");
    if (!st.col_null(24) && st.col_int(24) == 0) r.failed_checks.push_back("seeds");
    if (!r.rcp_status.empty() && !r.rcp_pass) r.failed_checks.push_back("RCP");
    if (r.failed_checks.empty()) r.failed_checks.push_back("result checks");  // a reason the store does not keep
  }
  r.objection_rule = st.col_text(23);
  r.has_published_factor = !st.col_null(26);
  r.published_factor = st.col_double(26);
  r.has_rcp_factor = !st.col_null(27);
  r.rcp_factor = st.col_double(27);
  r.round_published = st.col_null(28) || st.col_text(28) == "published";  // no review record: published as imported
  r.round_reviewed = !st.col_null(28);
  if (!st.col_null(16)) {
    r.has_unscaled = true;
    r.unscaled = st.col_double(16);
  }
  return r;
}

// The statement load_runs reads a result's runs with (prepared once for many results).
const char* runs_sql(Store& s) {
  // Stores before schema 3 have no runs.dropped: derive it as migration 3 does.
  return s.opened_version() >= 3
             ? "SELECT file, minutes, counted, dropped, content_sha256 FROM runs WHERE result_id = ?1 ORDER BY counted DESC, minutes"
             : R"sql(SELECT file, minutes, counted, CASE WHEN counted THEN NULL
                       WHEN compliant = 0 OR minutes IS NULL THEN 'noncompliant'
                       WHEN (SELECT x.score_minutes FROM results x WHERE x.id = runs.result_id) IS NOT NULL
                       THEN 'olympic' ELSE NULL END, content_sha256
                     FROM runs WHERE result_id = ?1 ORDER BY counted DESC, minutes)sql";
}

bool load_runs(Store& s, Stmt& st, ResultRow* r, std::string* error) {
  st.reset();
  st.bind(1, r->result_id);
  while (st.step()) {
    r->run_files.push_back(st.col_text(0));
    r->run_minutes.push_back(st.col_null(1) ? -1 : st.col_double(1));
    r->run_counted.push_back(st.col_int(2) != 0);
    r->run_dropped.push_back(st.col_null(3) ? "" : st.col_text(3));
    r->run_digests.push_back(st.col_text(4));
  }
  std::sort(r->run_digests.begin(), r->run_digests.end());
  return finished(s, st, "reading runs", error);
}

// Results of one round and benchmark whose runs are the same bytes: the first
// by name is the one ranked; the others point at it.
void mark_twins(std::vector<ResultRow>* rows) {
  // Within a division (the review may move one copy to open), the first that can be ranked (scored, not
  // withdrawn) by name stands for the others.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<ResultRow*>> by_logs;
  for (auto& r : *rows)
    if (!r.run_digests.empty()) by_logs[{r.division, r.run_digests}].push_back(&r);
  for (auto& [logs, group] : by_logs) {
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end(), [](const ResultRow* a, const ResultRow* b) {
      bool ra = a->has_score && a->review_status != "withdrawn", rb = b->has_score && b->review_status != "withdrawn";
      if (ra != rb) return ra;
      return std::tie(a->organisation, a->system, a->result_id) < std::tie(b->organisation, b->system, b->result_id);
    });
    ResultRow* first = group.front();
    for (size_t i = 1; i < group.size(); ++i) {
      group[i]->twin_of = first->result_id;
      group[i]->twin_of_name = first->organisation + "/" + first->system;
      first->twins.push_back(group[i]->organisation + "/" + group[i]->system);
    }
  }
}

bool matches_submitter(const ResultRow& r, const std::string& who) {
  return who.empty() || base::same_name(r.submitter, who) || base::same_name(r.organisation, who);
}

std::string size_of(const ResultRow& r) {
  return std::to_string(r.accelerators) + " x " + (r.accelerator_type.empty() ? "?" : r.accelerator_type);
}
std::string name_of(const ResultRow& r) { return r.organisation + "/" + r.system + " (" + r.round + ")"; }

// The runs a score is the olympic mean of, before the window: the compliant
// ones; *noncompliant counts the others (dropped at the slow end first, as
// the score's window takes them).
std::vector<double> scored_runs(const ResultRow& r, int* noncompliant) {
  std::vector<double> out;
  *noncompliant = 0;
  for (size_t i = 0; i < r.run_minutes.size(); ++i) {
    if ((i >= r.run_dropped.size() || r.run_dropped[i] != "noncompliant") && r.run_minutes[i] >= 0)
      out.push_back(r.run_minutes[i]);
    else
      ++*noncompliant;
  }
  return out;
}

// The factor between a score and the olympic mean of its runs (RCP
// normalisation, scaling.json, the committee's factor); 1 when unknown.
double score_factor(const ResultRow& r) { return r.has_unscaled && r.unscaled > 0 ? r.score / r.unscaled : 1.0; }

const char* const kEfficiencyAcrossRounds =
    "across rounds the efficiency counts the later round's software and systems as well as its scale";

// The interval and the efficiency's label of a comparable pair.
// `drop_from`, `drop_to`: each round's olympic drop for the benchmark (read once per report, not per pair).
void qualify(Speedup* p, bool pipeline, int drop_from, int drop_to) {
  if (p->has_efficiency)
    p->efficiency_note = p->efficiency > 1 ? std::string("above 100%: ") + kEfficiencyAcrossRounds + ", not scale alone"
                                           : kEfficiencyAcrossRounds;
  if (!p->comparable || pipeline) return;  // pipeline minutes are not an olympic mean of the runs' times
  int na = 0, nb = 0;
  std::vector<double> a = scored_runs(p->from, &na), b = scored_runs(p->to, &nb);
  rules::RatioInterval iv = rules::bootstrap_ratio(a, drop_from, b, drop_to, 2000, 0x5eed2026ULL, na, nb);
  if (!iv.ok) return;
  double k = score_factor(p->from) / score_factor(p->to);
  p->has_interval = true;
  p->speedup_low = iv.low * k;
  p->speedup_high = iv.high * k;
  p->runs_from = static_cast<int>(a.size());
  p->runs_to = static_cast<int>(b.size());
}

}  // namespace

std::vector<Origin> resubmission_origins(Store& s, long long result_id, std::string* error) {
  Stmt st(s.db(), R"sql(SELECT DISTINCT x.id, d.name, o.name, y.name, d.ordinal FROM runs r JOIN runs r2 ON r.resubmission_of = r2.id
                        JOIN results x ON r2.result_id = x.id JOIN systems y ON x.system_id = y.id
                        JOIN packages p ON y.package_id = p.id JOIN organisations o ON p.organisation_id = o.id
                        JOIN rounds d ON p.round_id = d.id WHERE r.result_id = ?1 ORDER BY d.ordinal, o.name, y.name)sql");
  st.bind(1, result_id);
  std::vector<Origin> out;
  while (st.step()) out.push_back({st.col_int(0), st.col_text(1), st.col_text(2), st.col_text(3)});
  if (!finished(s, st, "reading resubmissions", error)) return {};
  return out;
}

std::string resubmission_origin_names(Store& s, long long result_id) {
  std::string e, out;
  for (const auto& o : resubmission_origins(s, result_id, &e)) out += (out.empty() ? "" : ", ") + o.name();
  return out;
}

std::string result_dir(const std::string& round, const std::string& system, const std::string& benchmark) {
  const bool hpc = round.rfind("hpc-", 0) == 0 || round.rfind("hpc_", 0) == 0;
  return "results/" + system + (hpc ? "/strong/" : "/") + benchmark;
}

std::string normalize_availability(const std::string& raw, bool* known) {
  std::string canonical = rules::canonical_availability(raw);
  if (known) *known = !canonical.empty();
  return canonical.empty() ? raw : canonical;
}

std::string accelerator_type(const std::string& model) { return identify_accelerator(model).family; }

std::vector<std::string> rounds(Store& s) {
  std::vector<std::string> out;
  Stmt st(s.db(), "SELECT name FROM rounds ORDER BY ordinal");
  while (st.step()) out.push_back(st.col_text(0));
  return out;
}

int olympic_drop(Store& s, long long result_id) {
  Stmt q(s.db(),
         "SELECT d.name, r.benchmark FROM results r JOIN systems y ON r.system_id = y.id "
         "JOIN packages p ON y.package_id = p.id JOIN rounds d ON p.round_id = d.id WHERE r.id = ?1");
  q.bind(1, result_id);
  if (!q.step()) return 1;
  return rules::olympic_drop(q.col_text(0), q.col_text(1));
}

bool resolve_round(Store& s, const std::string& text, std::string* round, std::string* error) {
  rules::RulesetId id;
  std::string wanted = text;
  if (rules::RulesetId::parse(text, &id)) wanted = lower(id.id());
  std::vector<std::string> known;
  Stmt st(s.db(), "SELECT name FROM rounds ORDER BY ordinal");
  while (st.step()) {
    known.push_back(st.col_text(0));
    if (iequals(known.back(), wanted)) *round = known.back();
  }
  if (!finished(s, st, "reading rounds", error)) return false;
  for (const auto& k : known)
    if (iequals(k, wanted)) return true;
  const std::string has = (known.empty() ? "nothing yet" : join(known));
  if (text.empty()) {
    *error = "no round given (an empty name); the store (" + s.path() + ") has: " + has;
    return false;
  }
  if (!rules::RulesetId::parse(text, &id)) {
    // Not a round's name at all (e.g. "3.1"): say what one looks like, and which the store has that it may mean.
    std::vector<std::string> near;
    for (const auto& k : known)
      if (lower(k).find("-" + lower(text) + ".") != std::string::npos || lower(k).find(lower(text)) == 0) near.push_back(k);
    *error = "round " + text + " is not in the store (" + s.path() + "); it has: " + has +
             ". A round is named VERSION (3.1.0) or USAGE-VERSION (training-3.1.0)" +
             (near.empty() ? std::string() : "; did you mean " + join(near) + "?");
    return false;
  }
  *error = "round " + text + " is not in the store (" + s.path() + "); it has: " + has +
           ". Import it with: referee import DIR --round " + id.id();
  return false;
}

// `round` "" is the whole store; `round2`, when given, a second round whose names count too.
static std::string rounds_named(const std::string& round, const std::string& round2) {
  return round.empty() ? "the store" : round2.empty() || round2 == round ? round : round + " or " + round2;
}

// The first column of each row `st` selects.
static bool read_names(Store& s, Stmt& st, const char* doing, std::vector<std::string>* names, std::string* error) {
  while (st.step()) names->push_back(st.col_text(0));
  return finished(s, st, doing, error);
}

// The name among `known` that equals `text` but for ASCII case.
static bool find_name(const std::vector<std::string>& known, const std::string& text, std::string* name) {
  for (const auto& k : known)
    if (base::same_name(k, text)) {
      *name = k;
      return true;
    }
  return false;
}

bool resolve_benchmark(Store& s, const std::string& round, const std::string& text, std::string* benchmark,
                       std::string* error, const std::string& round2) {
  // A round named: its packages only (an OR with "any round" would read every result).
  Stmt st(s.db(), round.empty() ? R"sql(SELECT DISTINCT benchmark FROM results ORDER BY benchmark)sql"
                                : R"sql(SELECT DISTINCT x.benchmark FROM rounds d JOIN packages p ON p.round_id = d.id
                                        JOIN systems s ON s.package_id = p.id JOIN results x ON x.system_id = s.id
                                        WHERE d.name IN (?1, ?2) ORDER BY x.benchmark)sql");
  if (!round.empty()) st.bind(1, round).bind(2, round2);
  std::vector<std::string> known;
  if (!read_names(s, st, "reading benchmarks", &known, error)) return false;
  if (find_name(known, text, benchmark)) return true;
  *error = "no benchmark '" + text + "' in " + rounds_named(round, round2) + "; " +
           (known.empty() ? std::string("it has no results") : "the benchmarks are: " + join(known));
  return false;
}

bool resolve_submitter(Store& s, const std::string& round, const std::string& text, std::string* submitter,
                       std::string* error, const std::string& round2,
                       const std::function<bool(const std::string&)>& visible) {
  Stmt st(s.db(), R"sql(SELECT DISTINCT s.submitter, d.name FROM systems s JOIN packages p ON s.package_id = p.id
                          JOIN rounds d ON p.round_id = d.id WHERE ?1 = '' OR d.name = ?1 OR d.name = ?2
                        UNION
                        SELECT DISTINCT o.name, d.name FROM organisations o JOIN packages p ON p.organisation_id = o.id
                          JOIN rounds d ON p.round_id = d.id WHERE ?1 = '' OR d.name = ?1 OR d.name = ?2 ORDER BY 1)sql");
  st.bind(1, round).bind(2, round2);
  std::vector<std::string> known;
  while (st.step()) {
    std::string name = st.col_text(0);
    if (visible && !visible(st.col_text(1))) continue;
    if (known.empty() || known.back() != name) known.push_back(name);
  }
  if (!finished(s, st, "reading submitters", error)) return false;
  if (find_name(known, text, submitter)) return true;
  *error = "no submitter or organisation '" + text + "' in " + rounds_named(round, round2) +
           "; the submitters and organisations are: " + (known.empty() ? std::string("none") : join(known));
  return false;
}

void mark_twins_for_test(std::vector<ResultRow>* rows) { mark_twins(rows); }

std::vector<ResultRow> results_for(Store& s, const Query& q, std::string* error) {
  std::vector<ResultRow> out;
  std::string round, benchmark;
  if (!resolve_round(s, q.round, &round, error)) return out;
  if (!resolve_benchmark(s, round, q.benchmark, &benchmark, error)) return out;
  const std::string sql = select_results(s);
  Stmt st(s.db(), sql.c_str());
  st.bind(1, round).bind(2, benchmark);
  std::string division = lower(q.division);
  while (st.step()) {
    ResultRow r = read_row(st, q.pipeline);
    if (division.empty() || r.division == division) out.push_back(std::move(r));
  }
  if (!finished(s, st, "reading results", error)) return {};
  if (s.opened_version() >= 3) {
    // Every run of the round's benchmark in one statement (from the runs_summary index where the store has it).
    std::map<long long, ResultRow*> by_id;
    for (auto& r : out) by_id[r.result_id] = &r;
    Stmt runs(s.db(), R"sql(SELECT result_id, file, minutes, counted, dropped, content_sha256 FROM runs WHERE result_id IN
                              (SELECT x.id FROM rounds d JOIN packages p ON p.round_id = d.id JOIN systems s ON s.package_id = p.id
                               JOIN results x ON x.system_id = s.id WHERE d.name = ?1 AND x.benchmark = ?2)
                            ORDER BY result_id, counted DESC, minutes)sql");
    runs.bind(1, round).bind(2, benchmark);
    while (runs.step()) {
      auto it = by_id.find(runs.col_int(0));
      if (it == by_id.end()) continue;  // a result of another division
      ResultRow* r = it->second;
      r->run_files.push_back(runs.col_text(1));
      r->run_minutes.push_back(runs.col_null(2) ? -1 : runs.col_double(2));
      r->run_counted.push_back(runs.col_int(3) != 0);
      r->run_dropped.push_back(runs.col_null(4) ? "" : runs.col_text(4));
      r->run_digests.push_back(runs.col_text(5));
    }
    if (!finished(s, runs, "reading runs", error)) return {};
    for (auto& r : out) std::sort(r.run_digests.begin(), r.run_digests.end());
  } else {
    Stmt runs(s.db(), runs_sql(s));
    for (auto& r : out)
      if (!load_runs(s, runs, &r, error)) return {};
  }
  mark_twins(&out);
  if (out.empty()) *error = "no " + lower(q.division) + (q.division.empty() ? "" : "-division ") + benchmark + " results in " + round;
  return out;
}

std::vector<ResultRow> find_results(Store& s, const Query& q, const std::vector<std::string>& names, std::string* error) {
  std::vector<ResultRow> all = results_for(s, q, error);
  std::vector<ResultRow> out;
  if (all.empty()) return out;
  error->clear();
  std::vector<std::pair<std::string, long long>> seen;
  for (const auto& n : names) {
    std::vector<const ResultRow*> hits;
    for (const auto& r : all) {
      if (base::same_name(n, r.organisation + "/" + r.system) || base::same_name(n, r.system)) hits.push_back(&r);
    }
    if (hits.size() != 1) {
      std::string known;
      for (const auto& r : all) known += "\n  " + r.organisation + "/" + r.system;
      *error = (hits.empty() ? "no " : "more than one ") + all.front().benchmark + " result in " + all.front().round +
               " matches '" + n + "'; the results are:" + known;
      return {};
    }
    for (const auto& [name, id] : seen)
      if (id == hits[0]->result_id) {
        *error = "'" + n + "' and '" + name + "' name the same result (" + hits[0]->organisation + "/" + hits[0]->system +
                 "); compare different results";
        return {};
      }
    seen.emplace_back(n, hits[0]->result_id);
    out.push_back(*hits[0]);
  }
  return out;
}

std::string rcp_text(const ResultRow& r) {
  if (r.rcp_status.empty()) return "not checked";
  return std::string(r.rcp_pass ? "pass" : "fail") + " (" + r.rcp_status + ")";
}

std::string review_status_text(const ResultRow& r) {
  if (r.review_status.empty()) return "";
  std::string out = r.review_status == "objection-open" ? "objection open"
                    : r.review_status == "moved-to-open" ? "moved to open"
                                                         : r.review_status;
  if (r.review_status == "normalised" && r.has_review_factor) out += " " + factor_text(r.review_factor);
  if (r.decision_id) out += " (decision " + std::to_string(r.decision_id) + ")";
  else if (r.objection_id) out += " (objection " + std::to_string(r.objection_id) + ")";
  return out;
}

std::string review_outcome_text(const ResultRow& r) {
  if (!r.round_reviewed || !r.round_published) return "";
  const std::string by = r.decision_id ? " by decision " + std::to_string(r.decision_id) : "";
  if (r.review_status == "normalised") {
    char f[32];
    std::snprintf(f, sizeof f, "%.4f", r.review_factor);
    return "accepted with factor " + std::string(f) + by;
  }
  if (r.review_status == "moved-to-open") return "moved to the open division" + by;
  if (r.review_status == "withdrawn") return "withdrawn" + by;
  if (r.review_status == "fixed") return "accepted as fixed" + by;
  return "accepted as submitted";
}

namespace {

bool only_rcp_failed(const ResultRow& r) {
  return !r.pass && r.failed_checks_known && r.failed_checks.size() == 1 && r.failed_checks[0] == "RCP";
}

// The package's own scaling.json (as published: the committee's decision of
// its round) normalises at least by the RCP factor.
bool scaled_as_published(const ResultRow& r) {
  return r.round_published && only_rcp_failed(r) && r.has_published_factor && r.has_rcp_factor && r.published_factor > 1 &&
         r.published_factor >= r.rcp_factor * (1 - 1e-9);
}

}  // namespace

long long accepted_by(const ResultRow& r) {
  if (!only_rcp_failed(r) || r.review_status != "normalised" || !r.has_review_factor || r.decision_id == 0) return 0;
  return r.decision_id;
}

bool accepted(const ResultRow& r) { return accepted_by(r) || (r.review_status.empty() && scaled_as_published(r)); }

const char* checks_word(const ResultRow& r) { return r.pass ? "pass" : accepted(r) ? "accepted" : "fail"; }

std::string accepted_label(const ResultRow& r) {
  return accepted_by(r) ? " (decision " + std::to_string(r.decision_id) + ")" : accepted(r) ? " (scaling.json)" : "";
}

std::string checks_cell(const ResultRow& r) {
  std::string out = r.pass ? "pass" : accepted(r) ? "accepted" + accepted_label(r) : "FAIL";
  return out + (r.resubmission ? " (resubmitted)" : "");
}

std::string accepted_text(const ResultRow& r) {
  if (accepted_by(r))
    return "the RCP check failed; the review committee normalised the score " + factor_text(r.review_factor) +
           " (decision " + std::to_string(r.decision_id) + " on objection " + std::to_string(r.objection_id) +
           (r.objection_rule.empty() ? std::string() : ": " + r.objection_rule) + ")";
  if (accepted(r))
    return "the RCP check failed; the package's scaling.json normalises the score " + factor_text(r.published_factor) +
           " (the RCP factor is " + factor_text(r.rcp_factor) + "), as its round's review committee published it";
  return "";
}

namespace {

// The reason a withdrawn result is left out of a ranking.
std::string withdrawn_note(const ResultRow& r) {
  return name_of(r) + " was withdrawn by the review" +
         (r.decision_id ? " (decision " + std::to_string(r.decision_id) + ")" : std::string()) + "; not ranked";
}

// The reason a twin is not ranked.
std::string twin_note(const ResultRow& r) {
  return name_of(r) + " is the same logs, byte for byte, as " + r.twin_of_name +
         ": one result, ranked once as " + r.twin_of_name + " with its twins named";
}

// The reason a result whose score is no time to train is left out of a ranking.
std::string no_time_note(const ResultRow& r) {
  return name_of(r) + " scores " + minutes_text(r.score) +
         " minutes, which is no time to train (a scaling.json factor of zero or less, or a run_stop logged before its run_start); not ranked";
}

}  // namespace

namespace {
int division_order(const std::string& d) { return d == "closed" ? 0 : d == "open" ? 1 : 2; }
}  // namespace

bool division_rank_less(const ResultRow& a, const ResultRow& b) {
  int da = division_order(a.division), db = division_order(b.division);
  if (da != db) return da < db;
  if (da == 2 && a.division != b.division) return a.division < b.division;
  return a.score < b.score;
}

std::vector<int> division_ranks(const std::vector<const ResultRow*>& sorted) {
  std::vector<int> out;
  int rank = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    rank = i > 0 && sorted[i]->division == sorted[i - 1]->division ? rank + 1 : 1;
    out.push_back(rank);
  }
  return out;
}

std::vector<ResultRow> leaderboard(Store& s, const Query& q, std::string* error, std::vector<std::string>* left_out) {
  std::vector<ResultRow> rows = results_for(s, q, error);
  if (rows.empty()) return rows;
  return leaderboard_of(std::move(rows), "", error, left_out);
}

std::vector<ResultRow> leaderboard_of(std::vector<ResultRow> rows, const std::string& division, std::string* error,
                                      std::vector<std::string>* left_out) {
  if (!division.empty())
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const ResultRow& r) { return r.division != lower(division); }),
               rows.end());
  std::vector<ResultRow> out;
  for (auto& r : rows) {
    if (r.review_status == "withdrawn") {
      if (left_out) left_out->push_back(withdrawn_note(r));
      continue;
    }
    if (r.twin_of) {
      if (left_out && r.has_score) left_out->push_back(twin_note(r));
      continue;
    }
    if (r.no_time_to_train) {
      if (left_out) left_out->push_back(no_time_note(r));
      continue;
    }
    if (r.has_score) out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), division_rank_less);
  if (out.empty() && !rows.empty()) *error = "no scored " + rows.front().benchmark + " results in " + rows.front().round;
  return out;
}

std::string series_label(const ScalingSeries& s) {
  return s.division == "closed" || s.division.empty() ? s.accelerator_type : s.accelerator_type + " (" + s.division + ")";
}

std::vector<ScalingSeries> scaling_series(std::vector<ResultRow> rows, const std::string& who,
                                          std::vector<std::string>* left_out) {
  std::vector<ScalingSeries> out;
  std::map<std::string, ScalingSeries> by_type;
  for (auto& r : rows) {
    if (r.no_time_to_train && matches_submitter(r, who) && left_out) left_out->push_back(no_time_note(r));
    if (!r.has_score || !matches_submitter(r, who)) continue;
    if (r.review_status == "withdrawn") {
      if (left_out) left_out->push_back(withdrawn_note(r));
      continue;
    }
    if (r.twin_of) {
      if (left_out) left_out->push_back(twin_note(r));
      continue;
    }
    // A baseline is of the same division: a result moved to open never sets a closed series' baseline.
    // One series per accelerator model: an H100 PCIe never scales an H100 SXM.
    auto& series = by_type[std::to_string(r.division == "closed" ? 0 : 1) + r.division + "\x1f" + r.accelerator_model];
    series.division = r.division;
    series.accelerator_type = r.accelerator_type;
    series.accelerator_model = r.accelerator_model;
    ScalingPoint p;
    p.result = std::move(r);
    series.points.push_back(std::move(p));
  }
  for (auto& [type, series] : by_type) {
    std::stable_sort(series.points.begin(), series.points.end(), [](const ScalingPoint& a, const ScalingPoint& b) {
      return a.result.accelerators < b.result.accelerators;
    });
    const ResultRow& base = series.points.front().result;
    for (auto& p : series.points) {
      p.speedup = base.score / p.result.score;
      p.size_ratio = static_cast<double>(p.result.accelerators) / static_cast<double>(base.accelerators);
      p.has_efficiency = p.result.accelerators > base.accelerators;
      p.efficiency = p.has_efficiency ? p.speedup / p.size_ratio : 0;
    }
    out.push_back(std::move(series));
  }
  // Two models of one family (H100 PCIe and H100 SXM): each series named by its model.
  for (auto& a : out)
    for (const auto& b : out)
      if (&a != &b && a.division == b.division && a.accelerator_type == b.accelerator_type &&
          a.accelerator_model != b.accelerator_model)
        a.accelerator_type = a.accelerator_model;
  return out;
}

std::vector<ScalingSeries> scaling(Store& s, const Query& q, const std::string& submitter, std::string* error,
                                   std::vector<std::string>* left_out) {
  std::vector<ScalingSeries> out;
  std::string round, who;
  if (!resolve_round(s, q.round, &round, error)) return out;
  if (!resolve_submitter(s, round, submitter, &who, error)) return out;
  auto rows = results_for(s, q, error);
  if (!error->empty() && rows.empty()) return out;
  error->clear();
  std::string bench = rows.empty() ? q.benchmark : rows.front().benchmark;
  out = scaling_series(std::move(rows), who, left_out);
  if (out.empty()) *error = "no scored " + bench + " results of " + who + " in " + round;
  return out;
}

const char* const kHeadlineScaleRule =
    "headline: each round's fastest result, whatever its size, like accelerators only (the same model, or the same family where one side names no form factor); "
    "efficiency = speedup / accelerator ratio (assumes linear scaling), given only when the later result uses more "
    "accelerators (at equal counts, same-scale rows included, the speedup says it all); a later result both smaller and "
    "slower is not comparable";

namespace {

// Each round's benchmarks with their lineage (rules::benchmark_lineage): a
// benchmark renamed between rounds is one benchmark under two names.
struct NamedBenchmark {
  std::string round, name, lineage;
};
bool named_benchmarks(Store& s, std::vector<NamedBenchmark>* out, std::string* error) {
  Stmt st(s.db(), R"sql(SELECT DISTINCT d.name, x.benchmark, d.ordinal FROM results x JOIN systems y ON x.system_id = y.id
                        JOIN packages p ON y.package_id = p.id JOIN rounds d ON p.round_id = d.id
                        ORDER BY d.ordinal, x.benchmark)sql");
  while (st.step()) out->push_back({st.col_text(0), st.col_text(1), rules::benchmark_lineage(st.col_text(0), st.col_text(1))});
  return finished(s, st, "reading benchmarks", error);
}

// The lineage `text` names (a name or a lineage, any case) among `rounds`
// ("" = all), and each round's name for it.
bool resolve_lineage(const std::vector<NamedBenchmark>& all, const std::vector<std::string>& rounds, const std::string& text,
                     std::string* lineage) {
  for (const auto& b : all) {
    if (!rounds.empty() && std::find(rounds.begin(), rounds.end(), b.round) == rounds.end()) continue;
    if (iequals(text, b.name) || iequals(text, b.lineage)) {
      *lineage = b.lineage;
      return true;
    }
  }
  return false;
}
std::string name_in(const std::vector<NamedBenchmark>& all, const std::string& round, const std::string& lineage) {
  for (const auto& b : all)
    if (b.round == round && b.lineage == lineage) return b.name;
  return "";
}

}  // namespace

bool speedups(Store& s, const SpeedupQuery& q, SpeedupReport* out, std::string* error) {
  *out = SpeedupReport{};
  std::string from, to, bench, who;
  if (!resolve_round(s, q.from_round, &from, error) || !resolve_round(s, q.to_round, &to, error)) return false;
  {
    Stmt st(s.db(), "SELECT (SELECT ordinal FROM rounds WHERE name = ?1), (SELECT ordinal FROM rounds WHERE name = ?2)");
    st.bind(1, from).bind(2, to);
    if (!st.step()) return finished(s, st, "reading rounds", error);
    if (st.col_int(0) >= st.col_int(1)) {
      *error = "--from " + from + " is not earlier than --to " + to + "; a speedup goes from an earlier round to a later one";
      return false;
    }
  }
  // Names from the two rounds only: the store may hold rounds the caller may not see.
  // A benchmark renamed between them (ssd -> retinanet) is one benchmark.
  std::vector<NamedBenchmark> named;
  if (!named_benchmarks(s, &named, error)) return false;
  std::string lineage;
  if (!resolve_lineage(named, {from, to}, q.benchmark, &lineage)) {
    if (!resolve_benchmark(s, from, q.benchmark, &bench, error, to)) return false;
    lineage = bench;
  }
  std::string bench_from = name_in(named, from, lineage), bench_to = name_in(named, to, lineage);
  bench = lineage;
  if (!q.submitter.empty() && !resolve_submitter(s, from, q.submitter, &who, error, to)) return false;
  out->from_round = from;
  out->to_round = to;
  out->benchmark = bench;
  // The rename said once: for the earlier round, and for the later one only when it uses another name.
  if (std::string n = rules::benchmark_rename_note(from, bench_from); !n.empty()) out->notes.push_back(n + ": one benchmark");
  if (bench_to != bench_from)
    if (std::string n = rules::benchmark_rename_note(to, bench_to); !n.empty()) out->notes.push_back(n + ": one benchmark");
  std::vector<ResultRow> a, b;
  if (!bench_from.empty()) {
    a = results_for(s, {from, bench_from, "closed", q.pipeline}, error);
    if (a.empty() && error->find("damaged") != std::string::npos) return false;
  }
  if (!bench_to.empty()) {
    b = results_for(s, {to, bench_to, "closed", q.pipeline}, error);
    if (b.empty() && error->find("damaged") != std::string::npos) return false;
  }
  error->clear();

  // Resubmissions: a result that copies an earlier one is carried, not new.
  std::set<long long> excluded, carried, withdrawn;
  for (const auto* side : {&a, &b})
    for (const auto& r : *side) {
      if (!r.resubmission || !r.has_score || !matches_submitter(r, who)) continue;
      carried.insert(r.result_id);
      std::vector<Origin> origins = resubmission_origins(s, r.result_id, error);
      if (origins.empty() && !error->empty()) return false;
      std::string copies;
      for (const auto& o : origins) copies += (copies.empty() ? "" : ", ") + o.name();
      out->left_out.push_back(name_of(r) + " is a resubmission" + (copies.empty() ? "" : " of " + copies) +
                              ": it counts in the round it was first submitted in, not as a new result of " + r.round);
    }
  // A twin is its first's result: named, never paired.
  for (const auto* side : {&a, &b})
    for (const auto& r : *side)
      if (r.twin_of && r.has_score && matches_submitter(r, who)) out->left_out.push_back(twin_note(r));

  // Withdrawn results are never ranked, on either side.
  for (const auto* side : {&a, &b})
    for (const auto& r : *side)
      if (r.review_status == "withdrawn" && r.has_score && matches_submitter(r, who) && excluded.insert(r.result_id).second) {
        withdrawn.insert(r.result_id);
        out->left_out.push_back(withdrawn_note(r));
      }

  // Groups are keyed by the submitter's name in lower case (a submitter that
  // changed the case of its name between rounds is one submitter), shown as
  // the later round spells it.
  // What was left out of each group, counted by why, so that a group
  // without a pair says why rather than that there was nothing.
  struct LeftOut {
    int withdrawn = 0;
    bool any() const { return withdrawn > 0; }
    std::string text() const { return std::to_string(withdrawn) + " withdrawn"; }
  };
  using Group = std::map<std::string, std::vector<const ResultRow*>>;
  std::map<std::string, std::string> shown;
  // New results by group, and the records carried into the round by group.
  auto group = [&](const std::vector<ResultRow>& rows, std::map<std::string, LeftOut>* dropped, Group* carried_in) {
    Group g;
    for (const auto& r : rows) {
      if (!r.has_score || !matches_submitter(r, who) || r.twin_of) continue;  // a twin is its first's result
      std::string key = q.per_submitter ? base::fold_case(r.submitter) : std::string("overall");
      if (!shown.count(key) || !excluded.count(r.result_id)) shown[key] = q.per_submitter ? r.submitter : key;
      if (excluded.count(r.result_id)) {
        ++(*dropped)[key].withdrawn;
        continue;
      }
      if (carried.count(r.result_id)) {
        (*carried_in)[key].push_back(&r);
        continue;
      }
      g[key].push_back(&r);
    }
    return g;
  };
  std::map<std::string, LeftOut> da, db;
  Group ca, cb;
  Group ga = group(a, &da, &ca), gb = group(b, &db, &cb);
  auto fastest = [](const std::vector<const ResultRow*>& v) {
    return *std::min_element(v.begin(), v.end(), [](const ResultRow* x, const ResultRow* y) { return x->score < y->score; });
  };
  std::set<std::string> keys;
  for (const auto& [k, v] : ga) keys.insert(k);
  for (const auto& [k, v] : gb) keys.insert(k);
  for (const auto& [k, v] : ca) keys.insert(k);
  for (const auto& [k, v] : cb) keys.insert(k);
  for (const auto& [k, v] : da) keys.insert(k);
  for (const auto& [k, v] : db) keys.insert(k);
  if (keys.empty())
    out->notes.push_back((who.empty() ? std::string(q.per_submitter ? "every submitter" : "overall") : who) +
                         ": no scored closed-division " + bench + " result in " + from + " or in " + to + "; no pair");
  auto carried_text = [&](const ResultRow& r) {
    std::string origins = resubmission_origin_names(s, r.result_id);
    return name_of(r) + ", " + minutes_text(r.score) + " min on " + size_of(r) + ", is a resubmission" +
           (origins.empty() ? std::string() : " of " + origins);
  };
  for (const auto& key : keys) {
    auto ia = ga.find(key), ib = gb.find(key);
    auto ica = ca.find(key), icb = cb.find(key);
    // The earlier round's standing record: its fastest new result, or a record carried into it when faster.
    const ResultRow* fa = ia != ga.end() ? fastest(ia->second) : nullptr;
    if (ica != ca.end()) {
      const ResultRow* c = fastest(ica->second);
      if (!fa || c->score < fa->score) fa = c;
    }
    const ResultRow* fb = ib != gb.end() ? fastest(ib->second) : nullptr;
    const ResultRow* fbc = icb != cb.end() ? fastest(icb->second) : nullptr;
    if (!fa || (!fb && !fbc)) {
      // Say of each side without a result whether it had none or all were left out.
      std::vector<std::string> why;
      for (int side = 0; side < 2; ++side) {
        bool missing = side == 0 ? !fa : !fb && !fbc;
        if (!missing) continue;
        const std::string& round = side == 0 ? from : to;
        auto& dropped = side == 0 ? da : db;
        auto d = dropped.find(key);
        if (d != dropped.end() && d->second.any())
          why.push_back("every scored closed-division " + bench + " result in " + round + " is left out (" + d->second.text() +
                        "; see \"left out\")");
        else
          why.push_back("no scored closed-division " + bench + " result in " + round);
      }
      out->notes.push_back(shown[key] + ": " + join(why, "; ") + "; no pair");
      continue;
    }
    if (carried.count(fa->result_id))
      out->notes.push_back(shown[key] + ": " + from + "'s fastest is a record carried into it (" + carried_text(*fa) +
                           "); the headline starts from it");
    Speedup h;
    h.submitter = shown[key];
    h.from = *fa;
    // The record was carried forward: no new result of the later round beats it, and it is still the record
    // (no slower than the earlier round's); a later round slower than that is compared on its new results.
    if (fbc && (!fb || (fbc->score < fb->score && fbc->score <= fa->score))) {
      h.kind = "carried";
      h.to = *fbc;
      h.comparable = false;
      h.accelerator_ratio = static_cast<double>(fbc->accelerators) / static_cast<double>(fa->accelerators);
      h.accelerators = accelerator_match_text(identify_accelerator(fa->accelerator), identify_accelerator(fbc->accelerator));
      h.reason = to + "'s fastest " + bench + " result is carried from an earlier round (" + carried_text(*fbc) + ")" +
                 (fbc->score <= fa->score ? ": the record stands, not a regression; " : "; ") +
                 (fb ? "the fastest new result of " + to + ": " + name_of(*fb) + ", " + minutes_text(fb->score) + " min on " +
                           size_of(*fb)
                     : to + " has no new result");
      out->pairs.push_back(std::move(h));
    } else {
    h.kind = "headline";
    h.to = *fb;
    h.accelerator_ratio = static_cast<double>(fb->accelerators) / static_cast<double>(fa->accelerators);
    const Accelerator &acc_a = identify_accelerator(fa->accelerator), &acc_b = identify_accelerator(fb->accelerator);
    h.accelerators = accelerator_match_text(acc_a, acc_b);
    if (same_accelerator(acc_a, acc_b) == AcceleratorMatch::None) {
      h.comparable = false;
      h.reason = "accelerators differ: " + h.accelerators + " (" + size_of(*fa) + " vs " + size_of(*fb) + ")";
    } else if (fb->accelerators < fa->accelerators && fb->score > fa->score) {
      h.comparable = false;
      h.reason = "the later round's fastest result is both smaller (" + std::to_string(fb->accelerators) + " vs " +
                 std::to_string(fa->accelerators) + " accelerators) and slower; fastest against fastest says nothing here, "
                 "see the same-scale rows";
    } else {
      h.speedup = fa->score / fb->score;
      if (fb->accelerators > fa->accelerators) {
        h.has_efficiency = true;
        h.efficiency = h.speedup / h.accelerator_ratio;
      }
    }
    out->pairs.push_back(std::move(h));
    }
    if (ia == ga.end() || ib == gb.end()) {
      out->notes.push_back(shown[key] + ": no same-scale pair (" + (ia == ga.end() ? from : to) +
                           " has no new result, only records carried into it)");
      continue;
    }
    // Same scale: the fastest new result of each round at each accelerator model and count both rounds have.
    std::map<std::pair<std::string, long long>, const ResultRow*> sa, sb;
    for (const auto* r : ia->second) {
      auto& slot = sa[{r->accelerator_model, r->accelerators}];
      if (!slot || r->score < slot->score) slot = r;
    }
    for (const auto* r : ib->second) {
      auto& slot = sb[{r->accelerator_model, r->accelerators}];
      if (!slot || r->score < slot->score) slot = r;
    }
    int same = 0;
    for (const auto& [size, ra] : sa) {
      auto it = sb.find(size);
      if (it == sb.end()) continue;
      Speedup p;
      p.submitter = shown[key];
      p.kind = "same-scale";
      p.from = *ra;
      p.to = *it->second;
      p.accelerator_ratio = 1;
      p.accelerators = accelerator_match_text(identify_accelerator(ra->accelerator), identify_accelerator(it->second->accelerator));
      p.speedup = ra->score / it->second->score;
      out->pairs.push_back(std::move(p));
      ++same;
    }
    if (same == 0) {
      std::string sizes_a, sizes_b;
      for (const auto& [size, r] : sa) sizes_a += (sizes_a.empty() ? "" : ", ") + size_of(*r);
      for (const auto& [size, r] : sb) sizes_b += (sizes_b.empty() ? "" : ", ") + size_of(*r);
      out->notes.push_back(shown[key] + ": no same-scale pair (" + from + ": " + sizes_a + "; " + to + ": " + sizes_b + ")");
    }
  }
  const int drop_from = rules::olympic_drop(from, bench_from.empty() ? bench : bench_from),
            drop_to = rules::olympic_drop(to, bench_to.empty() ? bench : bench_to);
  for (auto& p : out->pairs) qualify(&p, q.pipeline, drop_from, drop_to);
  return true;
}

bool speedup_chains(Store& s, const SpeedupQuery& q, const std::function<bool(const std::string&)>& visible,
                    std::vector<SpeedupChain>* out, std::string* error) {
  out->clear();
  std::vector<std::string> benchmarks;
  std::vector<NamedBenchmark> named;
  if (!named_benchmarks(s, &named, error)) return false;
  if (!q.benchmark.empty()) {
    std::string bench;
    if (!resolve_lineage(named, {}, q.benchmark, &bench) && !resolve_benchmark(s, "", q.benchmark, &bench, error)) {
      // The valid names would include those of rounds the caller may not
      // see: an unknown name is answered as one that is only there.
      if (visible && error->rfind("no benchmark", 0) == 0) *error = "no benchmark '" + q.benchmark + "' in the rounds of the store";
      return false;
    }
    benchmarks.push_back(bench);
  } else {
    // One chain per lineage: a renamed benchmark is not split in two.
    std::set<std::string> lineages;
    for (const auto& b : named) lineages.insert(b.lineage);
    benchmarks.assign(lineages.begin(), lineages.end());
  }
  if (!q.submitter.empty()) {
    std::string who;
    if (!resolve_submitter(s, "", q.submitter, &who, error, "", visible)) {
      if (visible && error->rfind("no submitter", 0) == 0) *error = "no submitter or organisation '" + q.submitter + "' in the rounds of the store";
      return false;
    }
  }
  for (const auto& bench : benchmarks) {
    SpeedupChain c;
    c.benchmark = bench;
    for (const auto& b : named)  // in round order
      if (b.lineage == bench && (!visible || visible(b.round)) &&
          std::find(c.rounds.begin(), c.rounds.end(), b.round) == c.rounds.end())
        c.rounds.push_back(b.round);
    // A benchmark of rounds the caller may not see is not there at all.
    if (c.rounds.empty()) {
      if (!q.benchmark.empty()) {
        *error = "no benchmark '" + q.benchmark + "' in the rounds of the store";
        return false;
      }
      continue;
    }
    // A benchmark renamed between rounds is named as each round named it.
    std::string named_as;
    for (const auto& r : c.rounds)
      if (std::string n = name_in(named, r, bench); n != bench) named_as += (named_as.empty() ? "" : ", ") + n + " in " + r;
    std::string title = bench + (named_as.empty() ? "" : " (" + named_as + ")");
    if (c.rounds.size() < 2) c.notes.push_back(title + ": only in " + c.rounds.front() + "; no round to compare with");
    std::vector<std::pair<std::string, std::pair<std::string, std::string>>> pairs;
    for (size_t i = 0; i + 1 < c.rounds.size(); ++i) pairs.push_back({"consecutive", {c.rounds[i], c.rounds[i + 1]}});
    if (c.rounds.size() > 2) pairs.push_back({"first-to-last", {c.rounds.front(), c.rounds.back()}});
    for (const auto& [kind, fromto] : pairs) {
      SpeedupQuery sq = q;
      sq.from_round = fromto.first;
      sq.to_round = fromto.second;
      sq.benchmark = bench;
      ChainStep step;
      step.kind = kind;
      if (!speedups(s, sq, &step.report, error)) return false;
      c.steps.push_back(std::move(step));
    }
    out->push_back(std::move(c));
  }
  return true;
}

bool list_store(Store& s, const std::string& what, const std::string& round_text, Listing* out, std::string* error,
                const std::vector<std::string>* only) {
  *out = Listing{};
  std::string round;
  if (!round_text.empty() && !resolve_round(s, round_text, &round, error)) return false;
  const char* sql = nullptr;
  if (what == "rounds") {
    out->columns = {"round", "packages", "results", "runs"};
    sql = R"sql(SELECT d.name, (SELECT COUNT(*) FROM packages p WHERE p.round_id = d.id),
                  (SELECT COUNT(*) FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
                     WHERE p.round_id = d.id) + WEAK_IN_ROUND,
                  (SELECT COUNT(*) FROM runs r JOIN results x ON r.result_id = x.id JOIN systems s ON x.system_id = s.id
                     JOIN packages p ON s.package_id = p.id WHERE p.round_id = d.id) + WEAK_RUNS_IN_ROUND
                FROM rounds d WHERE (?1 = '' OR d.name = ?1) AND (?2 IS NULL OR d.name IN (SELECT value FROM json_each(?2)))
                ORDER BY d.ordinal)sql";
  } else if (what == "benchmarks") {
    out->columns = {"benchmark", "rounds", "results", "scored"};
    // MLPerf HPC weak-scaling results (schema 16 on) count as results of their benchmark; scored: with a time.
    sql = R"sql(SELECT x.benchmark, group_concat(DISTINCT d.name), COUNT(*), COUNT(x.score_minutes)
                FROM (SELECT benchmark, system_id, score_minutes FROM results WEAK_AS_RESULTS) x
                  JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
                  JOIN rounds d ON p.round_id = d.id
                WHERE (?1 = '' OR d.name = ?1) AND (?2 IS NULL OR d.name IN (SELECT value FROM json_each(?2)))
                GROUP BY x.benchmark ORDER BY x.benchmark)sql";
  } else if (what == "systems") {
    out->columns = {"round", "organisation", "system", "submitter", "division", "availability", "accelerators",
                    "accelerator", "accelerator_type", "results"};
    sql = R"sql(SELECT d.name, o.name, s.name, s.submitter, s.division, s.availability, s.accelerators_count,
                       s.accelerator_model_name, '', (SELECT COUNT(*) FROM results x WHERE x.system_id = s.id) + WEAK_OF_SYSTEM
                FROM systems s JOIN packages p ON s.package_id = p.id JOIN organisations o ON p.organisation_id = o.id
                  JOIN rounds d ON p.round_id = d.id
                WHERE (?1 = '' OR d.name = ?1) AND (?2 IS NULL OR d.name IN (SELECT value FROM json_each(?2)))
                ORDER BY d.ordinal, o.name, s.name)sql";
  } else if (what == "submitters") {
    out->columns = {"submitter", "organisations", "rounds", "systems"};
    sql = R"sql(SELECT s.submitter, group_concat(DISTINCT o.name), group_concat(DISTINCT d.name), COUNT(*)
                FROM systems s JOIN packages p ON s.package_id = p.id JOIN organisations o ON p.organisation_id = o.id
                  JOIN rounds d ON p.round_id = d.id
                WHERE (?1 = '' OR d.name = ?1) AND (?2 IS NULL OR d.name IN (SELECT value FROM json_each(?2)))
                GROUP BY s.submitter ORDER BY s.submitter)sql";
  } else {
    *error = "cannot list '" + what + "'; choose one of: rounds, benchmarks, systems, submitters";
    return false;
  }
  // MLPerf HPC weak-scaling results (schema 16 on) are results of their round and system too.
  std::string text = sql;
  const bool weak = s.opened_version() >= 16;
  auto put = [&text](const std::string& mark, const char* with) {
    if (size_t at = text.find(mark); at != std::string::npos) text.replace(at, mark.size(), with);
  };
  put("WEAK_IN_ROUND", weak ? "(SELECT COUNT(*) FROM weak_results w JOIN systems s ON w.system_id = s.id "
                              "JOIN packages p ON s.package_id = p.id WHERE p.round_id = d.id)"
                            : "0");
  put("WEAK_OF_SYSTEM", weak ? "(SELECT COUNT(*) FROM weak_results w WHERE w.system_id = s.id)" : "0");
  put("WEAK_AS_RESULTS",
      weak ? "UNION ALL SELECT benchmark, system_id, time_to_train_all_minutes FROM weak_results" : "");
  put("WEAK_RUNS_IN_ROUND", s.opened_version() >= 17
                                ? "(SELECT COUNT(*) FROM weak_runs r JOIN weak_results w ON w.id = r.weak_result_id "
                                  "JOIN systems s ON w.system_id = s.id JOIN packages p ON s.package_id = p.id "
                                  "WHERE p.round_id = d.id)"
                                : "0");
  Stmt st(s.db(), text.c_str());
  st.bind(1, round);
  if (only) {
    mllog::JsonWriter names(0, mllog::JsonText::kUtf8);
    names.begin_array();
    for (const auto& r : *only) names.value(r);
    names.end_array();
    st.bind(2, names.str());
  }
  int n = static_cast<int>(out->columns.size());
  while (st.step()) {
    std::vector<std::string> row;
    for (int i = 0; i < n; ++i) row.push_back(st.col_text(i));
    out->rows.push_back(std::move(row));
  }
  if (!finished(s, st, ("listing " + what).c_str(), error)) return false;
  if (what == "systems")
    for (auto& row : out->rows) {
      if (std::string c = rules::availability_category(row[5]); !c.empty()) row[5] = c;  // MLCommons' category
      row[8] = accelerator_type(row[7]);
    }
  // group_concat's order is unspecified: sort each list.
  for (auto& row : out->rows)
    for (auto& cell : row)
      if (cell.find(',') != std::string::npos && what != "systems") {
        std::vector<std::string> parts = base::split(cell, ',');
        std::sort(parts.begin(), parts.end());
        cell = join(parts, ", ");
      }
  return true;
}

}  // namespace referee::submissions
