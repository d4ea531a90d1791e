// The result page (runs, checks, system, evidence, convergence against the
// RCP) and the head-to-head page (runs side by side, the difference and
// its bootstrap interval, systems side by side).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "base/url.h"
#include "reports/charts.h"
#include "reports/pages.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/scoring.h"
#include "submissions/fetch_round.h"

namespace referee::reports {

using submissions::ResultRow;
using submissions::Stmt;

namespace {

namespace fs = std::filesystem;

// Round and benchmark of a result; false when there is no such result.
bool locate(Context& ctx, long long id, std::string* round, std::string* benchmark) {
  Stmt st(ctx.store.db(), R"sql(SELECT d.name, x.benchmark FROM results x JOIN systems s ON x.system_id = s.id
                                JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id WHERE x.id = ?1)sql");
  st.bind(1, id);
  if (!st.step()) return false;
  *round = st.col_text(0);
  *benchmark = st.col_text(1);
  return true;
}

bool load_result(Context& ctx, long long id, ResultRow* out, bool* missing, std::string* error) {
  std::string round, bench;
  if (!locate(ctx, id, &round, &bench) || !ctx.shown(round)) {
    *missing = true;
    return true;
  }
  std::vector<ResultRow> rows;
  if (!results_of(ctx, round, bench, &rows, error)) return false;
  for (auto& r : rows)
    if (r.result_id == id) {
      *out = std::move(r);
      return true;
    }
  *missing = true;
  return true;
}

std::string description_json(Context& ctx, long long id) {
  Stmt st(ctx.store.db(), "SELECT s.description_json FROM results x JOIN systems s ON x.system_id = s.id WHERE x.id = ?1");
  st.bind(1, id);
  return st.step() ? st.col_text(0) : "{}";
}

std::string json_text(const Json* v) {
  if (!v) return "";
  switch (v->kind) {
    case Json::Kind::String: return v->s;
    case Json::Kind::Int: return std::to_string(v->i);
    case Json::Kind::Float: return fmt_ratio(v->f);
    case Json::Kind::Bool: return v->b ? "true" : "false";
    case Json::Kind::Null: return "";
    case Json::Kind::Array: {
      // A list as text: "CUDA 12.2, NCCL 2.18".
      std::string out;
      for (const auto& x : v->items)
        if (std::string t = json_text(&x); !t.empty()) out += (out.empty() ? "" : ", ") + t;
      return out;
    }
    case Json::Kind::Object: {
      // A software stack given as an object ({"cuda": "12.2", "nccl": "2.18"}): "cuda 12.2, nccl 2.18".
      std::string out;
      for (const auto& [k, x] : v->fields)
        if (std::string t = json_text(&x); !t.empty()) out += (out.empty() ? "" : ", ") + k + " " + t;
      return out;
    }
    default: return dump(*v);
  }
}

// The system description's fields that say what a system is, by what they describe.
const std::vector<std::pair<std::string, std::vector<std::string>>>& system_fields() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kFields = {
      {"Processor", {"host_processor_model_name", "host_processors_per_node", "host_processor_core_count"}},
      {"Memory", {"host_memory_capacity"}},
      {"Accelerator", {"accelerator_model_name", "accelerators_per_node", "accelerator_memory_capacity"}},
      {"Nodes", {"number_of_nodes"}},
      {"Interconnect", {"accelerator_interconnect", "accelerator_interconnect_topology", "host_networking",
                        "host_networking_topology"}},
      {"Software stack", {"framework", "other_software_stack", "operating_system"}},
      {"Availability", {"status"}},
  };
  return kFields;
}

std::string field_text(const Json& desc, const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    std::string t = json_text(desc.find(k));
    if (!t.empty()) out += (out.empty() ? "" : "; ") + t;
  }
  return out;
}


}  // namespace

// ---- result --------------------------------------------------------------

// Where a result of a package taken from the consortium's published results
// repository is published: {what, address}. Read from the package's path as
// the store keeps it (no file is looked at): its folder must be a folder of
// the repository's top level, of a clone or archive
// (".../training_results_v3.1[-main]/NVIDIA") or of `referee fetch`'s round
// folder (".../results/training-3.1.0/NVIDIA"); training or hpc only. None for
// a package from anywhere else.
std::vector<std::pair<std::string, std::string>> published_links(const std::string& package_path, const std::string& system,
                                                                 const std::string& benchmark) {
  std::vector<std::pair<std::string, std::string>> out;
  fs::path package = fs::path(package_path).lexically_normal();
  if (!package.has_filename()) package = package.parent_path();  // a trailing '/'
  const std::string org = package.filename().string();
  const std::string parent = package.parent_path().filename().string();
  const std::string grandparent = package.parent_path().parent_path().filename().string();
  static const std::regex repo("^(training|hpc)_results_(v[0-9]+(\\.[0-9]+)+)(-main)?$");
  std::smatch m;
  std::string repo_name;
  if (std::regex_match(parent, m, repo)) {
    repo_name = m[1].str() + "_results_" + m[2].str();
  } else if (grandparent == "results" && (parent.rfind("training-", 0) == 0 || parent.rfind("hpc-", 0) == 0)) {
    const std::string v = submissions::round_short_version(parent);  // "training-3.1.0" -> "v3.1"
    if (!v.empty()) repo_name = parent.substr(0, parent.find('-')) + "_results_" + v;
  }
  if (org.empty() || org == "." || org == ".." || repo_name.empty()) return out;
  const std::string repo_url = "https://github.com/mlcommons/" + repo_name;
  const std::string o = base::percent_encode(org), sys = base::percent_encode(system), b = base::percent_encode(benchmark);
  // An HPC results repository: a stored result is its strong-scaling folder.
  const bool hpc = repo_name.rfind("hpc_", 0) == 0;
  out.emplace_back("Logs", repo_url + "/tree/HEAD/" + o + "/results/" + sys + (hpc ? "/strong/" : "/") + b);
  out.emplace_back("Code", repo_url + "/tree/HEAD/" + o + "/benchmarks/" + b);
  out.emplace_back("System description", repo_url + "/blob/HEAD/" + o + "/systems/" + sys + ".json");
  return out;
}

bool result_page(Context& ctx, long long id, Built* out, std::string* error) {
  ResultRow r;
  bool missing = false;
  if (!load_result(ctx, id, &r, &missing, error)) return false;
  if (missing) {
    out->missing = true;
    return true;
  }
  Page p = new_page("results/" + std::to_string(id) + ".html", "result",
                    r.benchmark + " in " + r.round + ": " + r.organisation + "/" + r.system);
  p.rounds = {r.round};
  p.nav.emplace_back(r.round, p.href("rounds/" + safe_name(r.round) + "/index.html"));
  p.nav.emplace_back(r.benchmark + " leaderboard", p.href("rounds/" + safe_name(r.round) + "/" + safe_name(r.benchmark) + ".html"));

  // The result's own figures.
  std::string verdict, rcp_status, rcp_json, package_verdict;
  bool seeds_failed = false;
  Json rcp;
  bool has_pub_factor = false, has_pipe_factor = false, has_unscaled = false;
  double pub_factor = 0, pipe_factor = 0, unscaled = 0;
  long long result_count = 0, expected_count = 0;
  {
    Stmt st(ctx.store.db(), ctx.has_rcp_json
                                ? "SELECT x.verdict, x.result_count, x.expected_count, x.rcp_status, x.published_factor, "
                                  "x.pipeline_factor, x.unscaled_minutes, x.rcp_json, x.seeds_ok, p.verdict FROM results x "
                                  "JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id WHERE x.id = ?1"
                                : "SELECT x.verdict, x.result_count, x.expected_count, x.rcp_status, x.published_factor, "
                                  "x.pipeline_factor, x.unscaled_minutes, NULL, x.seeds_ok, p.verdict FROM results x "
                                  "JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id WHERE x.id = ?1");
    st.bind(1, id);
    if (st.step()) {
      verdict = st.col_text(0);
      result_count = st.col_int(1);
      expected_count = st.col_int(2);
      rcp_status = st.col_text(3);
      has_pub_factor = !st.col_null(4);
      pub_factor = st.col_double(4);
      has_pipe_factor = !st.col_null(5);
      pipe_factor = st.col_double(5);
      has_unscaled = !st.col_null(6);
      unscaled = st.col_double(6);
      if (!st.col_null(7)) rcp_json = st.col_text(7);
      seeds_failed = !st.col_null(8) && st.col_int(8) == 0;
      package_verdict = st.col_text(9);
    }
  }
  if (!rcp_json.empty()) {
    std::string perr;
    if (!mllog::parse_json_permissive(rcp_json, &rcp, &perr) || rcp.kind != Json::Kind::Object) rcp = Json();
  }
  auto rcp_num = [&](const char* k, double* v) {
    const Json* j = rcp.kind == Json::Kind::Object ? rcp.find(k) : nullptr;
    if (!j) return false;
    if (j->kind == Json::Kind::Float) *v = j->f;
    else if (j->kind == Json::Kind::Int) *v = static_cast<double>(j->i);
    else return false;
    return true;
  };

  // What the convergence figures count in this round and benchmark (rules::convergence_quantity): epochs,
  // samples (BERT, the LLMs, flux1), tokens (GPT-3), steps (stable_diffusion in 3.1). The RCP figures
  // stored with the result say it too; the rules decide when they do not.
  std::string quantity = rules::convergence_quantity(r.round, r.benchmark);
  if (const Json* q = rcp.kind == Json::Kind::Object ? rcp.find("quantity") : nullptr;
      q && q->kind == Json::Kind::String && !q->s.empty())
    quantity = q->s;
  std::string quantity_title = quantity;
  if (!quantity_title.empty())
    quantity_title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(quantity_title[0])));

  // Runs.
  Table runs{"runs", "Runs",
             {{"file", "Log", "text"}, {"minutes", "Minutes", "minutes", 3}, {"counted", "Counted", "text"},
              {"dropped", "Why not counted", "text"}, {"converged", "Converged", "text"},
              {"epochs", quantity_title + " to converge", "number", 2},
              {"seed", "Seed", "text"}, {"compliant", "Compliant", "text"}, {"findings", "Findings", "number", 0}},
             {}, {"counted"}, "", ""};
  // A finding that several logs share (the same line, rule, message,
  // expected and found) is one row naming every such log: written once.
  Table findings{"findings", "Checks and findings",
                 {{"file", "Logs", "text"}, {"line", "Line", "number", 0}, {"rule", "Rule", "text"},
                  {"message", "Message", "text"}, {"expected", "Expected", "text"}, {"found", "Found", "text"}},
                 {}, {"rule"}, "", ""};
  std::vector<std::pair<long long, std::string>> run_ids;
  std::map<std::string, size_t> finding_rows;  // what a finding says -> its row
  {
    Stmt st(ctx.store.db(), R"sql(SELECT id, file, minutes, counted, dropped, converged, epochs, seed, compliant, messages_json
                                  FROM runs WHERE result_id = ?1 ORDER BY file)sql");
    st.bind(1, id);
    while (st.step()) {
      run_ids.emplace_back(st.col_int(0), st.col_text(1));
      Json o = jobj();
      set(o, "file", jstr(st.col_text(1)));
      set(o, "minutes", st.col_null(2) ? jnull() : jnum(st.col_double(2)));
      bool counted = st.col_int(3) != 0;
      set(o, "counted", jstr(counted ? "yes" : "no"));
      std::string dropped = st.col_text(4);
      set(o, "dropped", jstr(counted ? "" : dropped == "olympic" ? "olympic: fastest or slowest run"
                                           : dropped == "noncompliant" ? "did not pass the checks or has no time"
                                                                       : dropped));
      set(o, "converged", jstr(st.col_int(5) ? "yes" : "no"));
      set(o, "epochs", st.col_null(6) ? jnull() : jnum(st.col_double(6)));
      set(o, "seed", st.col_null(7) ? jnull() : jstr(std::to_string(st.col_int(7))));
      set(o, "compliant", jstr(st.col_int(8) ? "yes" : "no"));
      Json msgs;
      std::string perr;
      long long n = 0;
      if (mllog::parse_json_permissive(st.col_text(9), &msgs, &perr) && msgs.kind == Json::Kind::Array)
        for (const auto& m : msgs.items) {
          ++n;
          const Json* line = m.find("line");
          Json line_value = line && line->kind == Json::Kind::Int ? jint(line->i) : jnull();
          std::string rule = json_text(m.find("rule")), message = json_text(m.find("message")),
                      expected = json_text(m.find("expected")), found = json_text(m.find("found"));
          std::string key = dump(line_value) + '\x1f' + rule + '\x1f' + message + '\x1f' + expected + '\x1f' + found;
          auto [at, fresh] = finding_rows.emplace(key, findings.rows.size());
          if (!fresh) {
            Json* files = const_cast<Json*>(findings.rows[at->second].find("file"));
            files->s += ", " + st.col_text(1);
            continue;
          }
          Json f = jobj();
          set(f, "file", jstr(st.col_text(1)));
          set(f, "line", line_value);
          set(f, "rule", jstr(rule));
          set(f, "message", jstr(message));
          set(f, "expected", jstr(expected));
          set(f, "found", jstr(found));
          findings.rows.push_back(f);
        }
      set(o, "findings", jint(n));
      runs.rows.push_back(o);
    }
  }

  // Why the result's checks fail, from what the store keeps of them: one
  // row per failed rule, first in the findings.
  std::vector<Json> reasons;
  std::vector<std::string> failed_rules;
  auto reason = [&](const std::string& rule, const std::string& message, const std::string& expected, const std::string& found) {
    Json f = jobj();
    set(f, "file", jstr("(the result)"));
    set(f, "line", jnull());
    set(f, "rule", jstr(rule));
    set(f, "message", jstr(message));
    set(f, "expected", jstr(expected));
    set(f, "found", jstr(found));
    reasons.push_back(f);
    failed_rules.push_back(rule);
  };
  if (result_count != expected_count)
    reason("result count", "the result has " + std::to_string(result_count) + " runs where " + std::to_string(expected_count) +
                               " are expected", std::to_string(expected_count) + " runs", std::to_string(result_count));
  if (seeds_failed)
    reason("seeds", "the seed check failed: a run logs no seed, or two runs log the same one (`referee check-package` "
                    "names the runs)", "a distinct seed in every run", "missing or repeated seeds");
  if (!rcp_status.empty() && !r.rcp_pass) {
    double mean = 0, least = 0, rmean = 0, rsd = 0, batch = 0;
    const std::string& unit = quantity;
    if (rcp_num("submission_mean", &mean) && rcp_num("min_epochs", &least)) {
      std::string ref;
      if (rcp_num("rcp_mean", &rmean) && rcp_num("rcp_stdev", &rsd))
        ref = "; reference " + fmt_amount(rmean) + " ± " + fmt_amount(rsd) + " " + unit +
              (rcp_num("batch_size", &batch) ? " at batch size " + fmt_ratio(batch) : "");
      reason("RCP", "the runs converge in fewer " + unit + " on average than the reference convergence points allow (" +
                        rcp_status + ref + ")",
             "mean of at least " + fmt_amount(least) + " " + unit, "mean " + fmt_amount(mean) + " " + unit);
    } else {
      const Json* m = rcp.kind == Json::Kind::Object ? rcp.find("message") : nullptr;
      reason("RCP", "the RCP check failed" + (m && m->kind == Json::Kind::String ? ": " + m->s : std::string()) + " (" +
                        rcp_status + ")", "pass", "fail");
    }
  }
  // Some non-compliant runs are allowed (olympic scoring drops them): they
  // are the reason only when nothing else is.
  long long noncompliant = 0;
  for (const auto& row : runs.rows)
    if (row.find("compliant")->s == "no") ++noncompliant;
  if (verdict == "fail" && reasons.empty() && noncompliant > 0)
    reason("compliance", std::to_string(noncompliant) + " of " + std::to_string(runs.rows.size()) +
                             " runs do not comply with the rules, more than the benchmark allows (their findings follow)",
           "compliant runs", std::to_string(noncompliant) + " not compliant");
  if (verdict == "fail" && reasons.empty())
    reason("result checks", "the checks of the result's folder failed for a reason the store does not keep; "
                            "`referee check-package` on the package names it", "pass", "fail");
  findings.rows.insert(findings.rows.begin(), reasons.begin(), reasons.end());

  // A resubmission: the results whose logs it repeats.
  std::string origins = resubmission_origins(ctx, id);

  // The system.
  Json desc;
  std::string perr;
  if (!mllog::parse_json_permissive(description_json(ctx, id), &desc, &perr) || desc.kind != Json::Kind::Object) desc = jobj();
  Table system{"system", "System description", {{"field", "Field", "text"}, {"value", "Value", "text"}}, {}, {}, "", ""};
  for (const auto& [k, v] : desc.fields) {
    Json o = jobj();
    set(o, "field", jstr(k));
    set(o, "value", jstr(json_text(&v)));
    system.rows.push_back(o);
  }

  // Evidence behind the score.
  Table evidence{"evidence", "Evidence behind the score", {{"item", "What", "text"}, {"value", "Value", "text"}}, {}, {}, "", ""};
  auto add = [&](const std::string& item, const std::string& value) {
    Json o = jobj();
    set(o, "item", jstr(item));
    set(o, "value", jstr(value));
    evidence.rows.push_back(o);
  };
  add("Score", r.has_score ? fmt_fixed(r.score, 3) + " minutes" : "none (not scored)");
  std::string rule_list;
  for (const auto& x : failed_rules) rule_list += (rule_list.empty() ? "" : ", ") + x;
  add("Result checks", verdict + (rule_list.empty() ? "" : ": " + rule_list + " (see Checks and findings)") +
                           (submissions::accepted(r) ? "; accepted: " + submissions::accepted_text(r) : ""));
  add("Package checks", package_verdict + (package_verdict == "fail" && verdict == "pass"
                                               ? " (the package as a whole: another of its results, or its files, fail)"
                                               : ""));
  if (r.resubmission)
    add("Resubmission", "yes: every run is a log of an earlier round's result" + (origins.empty() ? "" : " (" + origins + ")") +
                            "; not a new result of " + r.round);
  add("Runs", std::to_string(result_count) + " of " + std::to_string(expected_count) + " expected");
  size_t counted = 0;
  std::string counted_files;
  for (size_t i = 0; i < r.run_counted.size(); ++i)
    if (r.run_counted[i]) {
      ++counted;
      counted_files += (counted_files.empty() ? "" : ", ") + r.run_files[i];
    }
  add("Runs counted", std::to_string(counted) + (counted_files.empty() ? "" : ": " + counted_files));
  if (has_unscaled) add("Olympic mean before the factor", fmt_fixed(unscaled, 3) + " minutes");
  if (r.review_status == "normalised" && r.has_review_factor)
    add("Factor", "x" + fmt_fixed(r.review_factor, 4) + " (review: " + submissions::review_status_text(r) + ")");
  else if (ctx.options.pipeline)
    add("Factor", has_pipe_factor ? "x" + fmt_fixed(pipe_factor, 4) + " (pipeline: computed as the consortium's pipeline does)"
                                  : "none (pipeline)");
  else
    add("Factor", has_pub_factor ? "x" + fmt_fixed(pub_factor, 4) + " (published: the package's scaling.json)"
                                 : "none (published: no scaling.json)");
  add("RCP check", submissions::rcp_text(r));
  if (!r.review_status.empty()) add("Review", submissions::review_status_text(r));
  if (std::string outcome = submissions::review_outcome_text(r); !outcome.empty()) add("Review outcome", outcome);
  for (const auto& f : r.run_files) add("File", f);

  // Convergence: every run's metric against epochs (or samples).
  charts::RcpLines lines;
  std::string unit = "epochs", metric = "eval_accuracy", rcp_note;
  bool has_target = false;
  double target = 0;
  if (!ctx.has_rcp_json) {
    rcp_note = "This store keeps no RCP figures per result (it predates them); re-import the packages to draw the RCP.";
  } else if (rcp_json.empty()) {
    rcp_note = "No RCP figures for this result (the RCP check did not run on it, or it was imported before they were kept).";
  } else if (rcp.kind == Json::Kind::Object) {
    auto num = rcp_num;
    if (const Json* u = rcp.find("unit"); u && u->kind == Json::Kind::String && !u->s.empty()) unit = u->s;
    if (const Json* m = rcp.find("metric"); m && m->kind == Json::Kind::String && !m->s.empty()) metric = m->s;
    has_target = num("target", &target);
    lines.has_rcp = num("rcp_mean", &lines.mean) && num("rcp_stdev", &lines.stdev);
    if (!num("min_epochs", &lines.min_accepted)) lines.min_accepted = lines.mean;
    if (!lines.has_rcp) rcp_note = "The RCP check found no reference convergence point for this result's batch size.";
  } else {
    rcp_note = "The RCP figures stored for this result cannot be read.";
  }
  // The points in the unit the RCP check counts; a log that reports only
  // the other column (samples where epochs were expected, or the reverse)
  // is drawn in that one rather than not at all.
  auto read_points = [&](const std::string& u) {
    Json pts = jarr();
    Stmt st(ctx.store.db(), R"sql(SELECT r.file, e.epoch, e.samples, e.metric FROM eval_points e JOIN runs r ON e.run_id = r.id
                                  WHERE r.result_id = ?1 AND e.metric IS NOT NULL ORDER BY r.file, e.seq)sql");
    st.bind(1, id);
    int col = u == "samples" ? 2 : 1;
    while (st.step()) {
      if (st.col_null(col)) continue;
      Json o = jobj();
      set(o, "run", jstr(st.col_text(0)));
      set(o, "x", jnum(st.col_double(col)));
      set(o, "metric", jnum(st.col_double(3)));
      pts.items.push_back(o);
    }
    return pts;
  };
  std::string drawn_unit = unit == "samples" ? "samples" : "epochs";
  Json points = read_points(drawn_unit);
  if (points.items.empty()) {
    std::string other = drawn_unit == "samples" ? "epochs" : "samples";
    Json alt = read_points(other);
    if (!alt.items.empty()) {
      points = std::move(alt);
      drawn_unit = other;
      lines.has_rcp = false;  // the RCP counts another unit: its lines would not be on this axis
      rcp_note = "The RCP counts " + quantity + " but the logs' evaluation points carry only " + other +
                 ": the runs are drawn against " + other + ", without the RCP lines.";
    }
  }
  // The axis names what the numbers count (tokens for GPT-3, samples for BERT), not the column they sit in.
  std::string drawn_quantity = drawn_unit == unit ? quantity : drawn_unit;
  std::string x_title = drawn_quantity;
  if (!x_title.empty()) x_title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(x_title[0])));
  std::vector<std::string> conv_notes;
  if (!rcp_note.empty()) conv_notes.push_back(rcp_note);
  if (lines.has_rcp)
    conv_notes.push_back("Lines: the RCP mean (" + fmt_amount(lines.mean) + " " + quantity + ") and mean ± stdev (grey); "
                         "dashed: the least mean the check accepts (" + fmt_amount(lines.min_accepted) + " " + quantity + ").");
  bool drawn = !points.items.empty();
  if (!drawn) conv_notes.push_back("No chart: the logs of this result have no evaluation points with epochs or samples.");
  if (drawn)
    p.charts = {{"convergence", "Convergence: " + metric + " against " + drawn_quantity,
                 charts::convergence(points, x_title, metric, has_target, target, lines), points}};
  // Where the result is published, for a package taken from the consortium's results repository.
  Table published{"published", "Published", {{"what", "What", "text"}, {"where", "Where", "link"}}, {}, {}, "", ""};
  {
    Stmt st(ctx.store.db(), "SELECT p.path FROM results x JOIN systems s ON x.system_id = s.id "
                            "JOIN packages p ON s.package_id = p.id WHERE x.id = ?1");
    st.bind(1, id);
    // Only for a published round: a round under review is not in the repository yet.
    if (r.round_published && st.step())
      for (const auto& [what, url] : published_links(st.col_text(0), r.system, r.benchmark)) {
        Json o = jobj();
        set(o, "what", jstr(what));
        set(o, "where", jlink(url, url));
        published.rows.push_back(o);
      }
  }
  p.tables = {evidence, runs, findings, system};
  std::vector<std::string> evidence_tables = {"evidence"};
  if (!published.rows.empty()) {
    p.tables.push_back(published);
    evidence_tables.push_back("published");
  }
  std::vector<std::string> check_notes;
  if (findings.rows.empty()) check_notes.push_back("No findings.");
  if (ctx.store.opened_version() >= 16) {
    // Where today's consortium checker stops on this directory (a round before 3.0, say).
    Stmt q(ctx.store.db(), "SELECT consortium_stops FROM results WHERE id = ?1 AND consortium_stops IS NOT NULL");
    q.bind(1, id);
    if (q.step())
      check_notes.push_back("The consortium's current package checker cannot check this result: " + q.col_text(0) +
                            ". The verdict here follows the rules of " + r.round + " as written.");
  }
  p.sections = {{"Evidence", {}, {}, evidence_tables},
                {"Runs", {"Counted runs make the score (olympic mean); the others are listed with the reason."}, {}, {"runs"}},
                {"Checks and findings", check_notes, {}, {"findings"}},
                {"Convergence", conv_notes, drawn ? std::vector<std::string>{"convergence"} : std::vector<std::string>{}, {}},
                {"System", {}, {}, {"system"}}};
  out->page = std::move(p);
  return true;
}

// ---- head to head ----------------------------------------------------------

bool compare_page(Context& ctx, const std::string& round, const std::string& benchmark, long long a_id, long long b_id,
                  Built* out, std::string* error, const std::string& served_as) {
  if (!ctx.shown(round) || a_id == b_id) {
    out->missing = true;
    return true;
  }
  std::vector<ResultRow> rows;
  if (!results_of(ctx, round, benchmark, &rows, error)) return false;
  const ResultRow *a = nullptr, *b = nullptr;
  for (const auto& r : rows) {
    if (r.result_id == a_id) a = &r;
    if (r.result_id == b_id) b = &r;
  }
  if (!a || !b) {
    out->missing = true;
    return true;
  }
  std::string an = a->organisation + "/" + a->system, bn = b->organisation + "/" + b->system;
  Page p = new_page(served_as.empty() ? compare_path(round, benchmark, a_id, b_id) : served_as, "head-to-head",
                    benchmark + " in " + round + ": " + an + " vs " + bn);
  if (!served_as.empty()) p.data_of = compare_path(round, benchmark, a_id, b_id);
  p.rounds = {round};
  p.nav.emplace_back(round, p.href("rounds/" + safe_name(round) + "/index.html"));
  p.nav.emplace_back(benchmark + " leaderboard", p.href("rounds/" + safe_name(round) + "/" + safe_name(benchmark) + ".html"));

  Json values = jarr();
  std::vector<double> ma, mb;
  const int drop = rules::olympic_drop(round, benchmark);  // as the score drops them
  for (const auto* r : {a, b}) {
    std::string name = r->organisation + "/" + r->system;
    for (size_t i = 0; i < r->run_minutes.size(); ++i) {
      if (r->run_minutes[i] < 0) continue;
      Json v = jobj();
      set(v, "kind", jstr("run"));
      set(v, "system", jstr(name));
      set(v, "file", jstr(r->run_files[i]));
      set(v, "minutes", jnum(r->run_minutes[i]));
      set(v, "status", jstr(r->run_counted[i] ? "counted" : r->run_dropped[i].empty() ? "not counted" : r->run_dropped[i]));
      values.items.push_back(v);
      if (r->run_dropped[i] != "noncompliant") (r == a ? ma : mb).push_back(r->run_minutes[i]);
    }
    if (r->has_score) {
      Json v = jobj();
      set(v, "kind", jstr("score"));
      set(v, "system", jstr(name));
      set(v, "minutes", jnum(r->score));
      set(v, "status", jstr("score (olympic mean)"));
      values.items.push_back(v);
    }
  }
  Table t{"sides", "The two results",
          {{"system", "System", "link"}, {"submitter", "Submitter", "text"}, {"division", "Division", "text"},
           {"accelerator", "Accelerator", "text"}, {"accelerators", "Accelerators", "number", 0},
           {"score", "Score (minutes)", "minutes", 3}, {"runs_mean", "Olympic mean of the runs", "minutes", 3},
           {"runs", "Runs", "number", 0}, {"accelerator_hours", "Accelerator-hours", "number", 1},
           {"review", "Review status", "text"}},
          {}, {}, "score", "system"};
  // With a price, the cost of one training run, as the leaderboard and `referee speedup` give it.
  bool priced = ctx.options.price.per != submissions::Price::Per::None;
  if (priced)
    t.columns.push_back({"cost", "Cost of a run at " + fmt_ratio(ctx.options.price.amount) + " " + submissions::price_unit(ctx.options.price),
                         "number", 2});
  for (const auto* r : {a, b}) {
    const auto& m = r == a ? ma : mb;
    Json o = jobj();
    set(o, "system", jlink(result_name(*r), p.href("results/" + std::to_string(r->result_id) + ".html")));
    set(o, "submitter", jstr(r->submitter));
    set(o, "division", jstr(r->division));
    set(o, "accelerator", jstr(r->accelerator_type));
    set(o, "accelerators", jint(r->accelerators));
    set(o, "score", r->has_score ? jnum(r->score) : jnull());
    double om = rules::olympic_mean(m, drop);
    set(o, "runs_mean", std::isnan(om) ? jnull() : jnum(om));
    set(o, "runs", jint(static_cast<long long>(m.size())));
    double h = 0;
    set(o, "accelerator_hours", submissions::accelerator_hours(*r, &h) ? jnum(h) : jnull());
    set(o, "review", jstr(submissions::review_status_text(*r)));
    if (priced) set(o, "cost", submissions::run_cost(*r, ctx.options.price, &h) ? jnum(h) : jnull());
    t.rows.push_back(o);
  }
  std::vector<std::string> diff_notes;
  double spread = quoted_spread(benchmark);
  if (a->has_score && b->has_score) {
    double d = 100.0 * (b->score / a->score - 1.0);
    diff_notes.push_back(bn + " takes " + fmt_fixed(std::fabs(d), 1) + "% " + (d >= 0 ? "longer" : "less time") + " than " + an +
                         " (" + fmt_fixed(b->score, 3) + " vs " + fmt_fixed(a->score, 3) + " minutes).");
  }
  Interval iv = bootstrap_difference(ma, mb, drop);
  if (iv.ok) {
    double d = difference_percent(ma, mb, drop);
    diff_notes.push_back("Over the runs: olympic means differ by " + fmt_fixed(d, 1) + "%; 95% bootstrap interval [" +
                         fmt_fixed(iv.low, 1) + "%, " + fmt_fixed(iv.high, 1) + "%] (10,000 resamples of each side's runs, fixed seed).");
    std::string spread_text = "the ±" + fmt_ratio(spread) + "% run-to-run spread MLCommons quotes for " +
                              (spread < 5 ? std::string("imaging benchmarks") : std::string("this benchmark"));
    if (iv.low <= 0 && iv.high >= 0)
      diff_notes.push_back("The interval includes 0: these runs show no difference between the two.");
    else if (std::fabs(d) <= spread)
      diff_notes.push_back("The interval excludes 0, but the difference is within " + spread_text +
                           ": not more than runs of one system may differ.");
    else
      diff_notes.push_back("The difference is beyond " + spread_text + ".");
  } else if (ma.empty() || mb.empty()) {
    diff_notes.push_back("A side has no runs with a time: no interval.");
  } else {
    diff_notes.push_back("A side has too few runs with a time for an olympic mean (it leaves out " + std::to_string(drop) +
                         " at each end): no interval.");
  }
  // A resubmission repeats an earlier round's result: say so, and when both
  // sides are, that this comparison is that round's again.
  int resubmitted = 0;
  for (const auto* r : {a, b})
    if (r->resubmission) {
      ++resubmitted;
      std::string origins = resubmission_origins(ctx, r->result_id);
      diff_notes.push_back(r->organisation + "/" + r->system + " is a resubmission: its runs are the logs of " +
                           (origins.empty() ? std::string("an earlier round's result") : origins) + "; not a new result of " +
                           round + ".");
    }
  if (resubmitted == 2)
    diff_notes.push_back("Both results are resubmissions: this comparison repeats one of an earlier round, with the same runs.");
  if (priced)
    diff_notes.push_back("Cost of one training run at " + fmt_ratio(ctx.options.price.amount) + " " +
                         submissions::price_unit(ctx.options.price) + ".");
  if (a->accelerator_model != b->accelerator_model || a->accelerators != b->accelerators)
    diff_notes.push_back("The systems differ in size or accelerator (" + fmt_count(a->accelerators) + " x " + a->accelerator_model +
                         " vs " + fmt_count(b->accelerators) + " x " + b->accelerator_model + ").");

  // Systems side by side.
  Table sys{"systems", "Systems side by side", {{"field", "", "text"}, {"a", an, "text"}, {"b", bn, "text"}}, {}, {}, "", ""};
  Json da, db;
  std::string perr;
  if (!mllog::parse_json_permissive(description_json(ctx, a_id), &da, &perr) || da.kind != Json::Kind::Object) da = jobj();
  if (!mllog::parse_json_permissive(description_json(ctx, b_id), &db, &perr) || db.kind != Json::Kind::Object) db = jobj();
  for (const auto& [label, keys] : system_fields()) {
    Json o = jobj();
    set(o, "field", jstr(label));
    // Availability as MLCommons' category ("cloud" and "Available in cloud" are one), the text when it names none.
    bool avail = label == "Availability";
    auto category = [](const std::string& t) {
      std::string c = rules::availability_category(t);
      return c.empty() ? t : c;
    };
    set(o, "a", jstr(avail ? category(field_text(da, keys)) : field_text(da, keys)));
    set(o, "b", jstr(avail ? category(field_text(db, keys)) : field_text(db, keys)));
    sys.rows.push_back(o);
  }
  p.charts = {{"runs", "Every run (dots) and each score (tick)", charts::runs(values), values}};
  p.tables = {t, sys};
  p.sections = {{"Runs", diff_notes, {"runs"}, {"sides"}}, {"Systems", {}, {}, {"systems"}}};
  out->page = std::move(p);
  return true;
}

}  // namespace referee::reports
