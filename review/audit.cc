#include "review/audit.h"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "mllog/reader.h"
#include "review/api.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/router.h"
#include "review/text_format.h"
#include "review/verify.h"
#include "rules/facts.h"
#include "rules/rcp.h"
#include "rules/scoring.h"
#include "rules/source.h"
#include "submissions/queries.h"

namespace referee::review {

namespace {

using submissions::Stmt;
using submissions::Store;

// ------------------------------------------------------------ what is read

struct Line {
  long long line = 0;  // from 1; 0 = none
  std::string text;
};

// What one run's log says that the audit looks at.
struct LogInfo {
  bool read = false;
  std::string error;
  std::vector<Line> run_starts, run_stops;
  Line platform;
  std::string platform_value;
  // Hyperparameters: key -> (value as compact JSON, the line), first seen.
  std::map<std::string, std::pair<std::string, Line>> hyper;
  // How it converged, as the RCP checker reads it (when the round's rules were found).
  bool has_conv = false;
  rules::RunConvergence conv;
};

// The round's rule set, for the RCP statistics.
struct RoundRules {
  std::unique_ptr<rules::RuleSet> rules;
  rules::RoundFacts facts;
  std::string problem;  // why there are none
};

struct RunRow {
  long long id = 0;
  std::string file;
  bool has_minutes = false;
  double minutes = 0;
  bool counted = false;
  long long resubmission_of = 0;
  std::string messages_json;
  LogInfo log;
};

struct ResultRow {
  long long id = 0, org_id = 0, round_id = 0;
  std::string org, system, benchmark, package_path, round;
  bool resubmission = false;
  long long expected_count = 0;
  bool has_score = false;
  double score = 0;
  long long nodes = 0, per_node = 0, accelerators = 0;  // 0 = not given
  std::string rcp_status, verdict;
  bool rcp_pass = false;
  bool has_norm = false, has_unscaled = false;
  double rcp_norm = 1, unscaled = 0;
  std::vector<RunRow> runs;
  std::string name() const { return org + "/" + system + "/" + benchmark; }
  std::string rel(const std::string& file) const { return submissions::result_dir(round, system, benchmark) + "/" + file; }
};

std::string value_text(const mllog::Json& j) {
  using K = mllog::Json::Kind;
  switch (j.kind) {
    case K::Null: return "null";
    case K::Bool: return j.b ? "true" : "false";
    case K::Int: return std::to_string(j.i);
    case K::Float: return mllog::json_number(j.f);
    case K::String: {
      std::string s;
      mllog::append_json_string(&s, j.s, mllog::JsonText::kUtf8);
      return s;
    }
    case K::Array: {
      std::string s = "[";
      for (size_t i = 0; i < j.items.size(); ++i) {
        if (i) s += ',';
        s += value_text(j.items[i]);
      }
      return s + "]";
    }
    case K::Object: {
      std::string s = "{";
      for (size_t i = 0; i < j.fields.size(); ++i) {
        if (i) s += ",";
        mllog::append_json_string(&s, j.fields[i].first, mllog::JsonText::kUtf8);
        s += ":" + value_text(j.fields[i].second);
      }
      return s + "}";
    }
  }
  return "null";
}

// Whether a logged key is a hyperparameter the submitter chose: the global
// batch size, gradient accumulation and the optimiser's settings (opt_*,
// lars_opt_*, sgd_opt_*, ...).
bool is_hyperparameter(const std::string& key) {
  return key == "global_batch_size" || key == "gradient_accumulation_steps" || key.rfind("opt_", 0) == 0 ||
         key.find("_opt_") != std::string::npos;
}

// The whole line around an event's JSON (which points into the buffer).
std::string line_around(std::string_view all, std::string_view json) {
  size_t at = static_cast<size_t>(json.data() - all.data());
  size_t b = at;
  while (b > 0 && all[b - 1] != '\n' && all[b - 1] != '\r') --b;
  size_t e = at + json.size();
  while (e < all.size() && all[e] != '\n' && all[e] != '\r') ++e;
  std::string text(all.substr(b, e - b));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (text.size() > 600) text = text.substr(0, 600) + "...";
  return text;
}

void read_log(const std::string& path, mllog::LogReader& reader, const RoundRules& rr, const std::string& benchmark,
              LogInfo* out) {
  mllog::FileBuffer buf;
  if (!buf.open(path, &out->error)) return;
  out->read = true;
  mllog::ParsedLog log;
  reader.parse(buf.view(), &log);
  if (rr.rules) {
    const rules::BenchmarkFacts* bf = rr.facts.find(benchmark);
    out->has_conv = true;
    out->conv = rules::read_convergence(log, rr.rules->id().version,
                                        bf ? bf->convergence : rules::Convergence::EpochNum);
  }
  for (const auto& ev : log.events) {
    const std::string& key = log.keys[ev.key_id];
    bool hp = is_hyperparameter(key);
    if (key != "run_start" && key != "run_stop" && key != "submission_platform" && !hp) continue;
    Line l{ev.file_line, line_around(buf.view(), ev.json)};
    if (key == "run_start") out->run_starts.push_back(l);
    else if (key == "run_stop") out->run_stops.push_back(l);
    else {
      mllog::Json j;
      std::string err;
      if (!mllog::parse_json_permissive(ev.json, &j, &err)) continue;
      const mllog::Json* v = j.find("value");
      if (!v) continue;
      if (key == "submission_platform") {
        if (out->platform.line == 0 && v->kind == mllog::Json::Kind::String) {
          out->platform = l;
          out->platform_value = v->s;
        }
      } else if (!out->hyper.count(key)) {
        out->hyper[key] = {value_text(*v), l};
      }
    }
  }
}

bool load_round(Store& s, const std::string& round, const RoundRules& rr, std::vector<ResultRow>* out,
                std::string* error) {
  Stmt q(s.db(),
         "SELECT r.id, o.id, o.name, sy.name, r.benchmark, p.path, r.resubmission, r.expected_count, "
         "r.score_minutes, sy.number_of_nodes, sy.accelerators_per_node, sy.accelerators_count, rd.id, "
         "COALESCE(r.rcp_status, ''), COALESCE(r.rcp_pass, 0), r.verdict, r.rcp_norm_factor, r.unscaled_minutes "
         "FROM results r JOIN systems sy ON sy.id = r.system_id JOIN packages p ON p.id = sy.package_id "
         "JOIN organisations o ON o.id = p.organisation_id JOIN rounds rd ON rd.id = p.round_id "
         "WHERE rd.name = ?1 ORDER BY o.name, sy.name, r.benchmark");
  q.bind(1, round);
  while (q.step()) {
    ResultRow r;
    q.row(r.id, r.org_id, r.org, r.system, r.benchmark, r.package_path, r.resubmission, r.expected_count,
          Stmt::maybe(r.has_score, r.score), r.nodes, r.per_node, r.accelerators, r.round_id, r.rcp_status,
          r.rcp_pass, r.verdict, Stmt::maybe(r.has_norm, r.rcp_norm), Stmt::maybe(r.has_unscaled, r.unscaled));
    r.round = round;
    out->push_back(std::move(r));
  }
  if (!q.ok()) {
    *error = s.describe_error(q.rc(), "reading results");
    return false;
  }
  Stmt runs(s.db(), "SELECT id, file, minutes, counted, resubmission_of, messages_json FROM runs WHERE result_id = ?1 ORDER BY file");
  mllog::LogReader reader;
  for (auto& r : *out) {
    runs.reset();
    runs.bind(1, r.id);
    while (runs.step()) {
      RunRow run;
      runs.row(run.id, run.file, Stmt::maybe(run.has_minutes, run.minutes), run.counted, run.resubmission_of,
               run.messages_json);
      r.runs.push_back(std::move(run));
    }
    if (!runs.ok()) {
      *error = s.describe_error(runs.rc(), "reading runs");
      return false;
    }
    for (auto& run : r.runs) read_log(r.package_path + "/" + r.rel(run.file), reader, rr, r.benchmark, &run.log);
  }
  return true;
}

// ------------------------------------------------------------ the findings

std::string fmt(double v, int digits = 4) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

Evidence quote(const std::string& file, const Line& l) {
  Evidence e;
  e.file = file;
  e.line = l.line;
  e.text = l.text;
  return e;
}

Evidence figure(const std::string& name, double value, const std::string& unit) {
  Evidence e;
  e.figure = name;
  e.value = value;
  e.unit = unit;
  return e;
}

Finding base(const ResultRow& r, const std::string& round, const std::string& kind, const std::string& what) {
  Finding f;
  f.round_id = r.round_id;
  f.organisation_id = r.org_id;
  f.result_id = r.id;
  f.round = round;
  f.organisation = r.org;
  f.result = r.name();
  f.kind = kind;
  f.fingerprint = kind + ":" + round + ":" + r.name() + (what.empty() ? "" : ":" + what);
  return f;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Cherry-picking: runs far faster than their siblings; more runs than required.
// `drop`: the runs the round drops at each end of the olympic window.
void cherry_picking(const ResultRow& r, const std::string& round, int drop, std::vector<Finding>* out) {
  std::vector<double> mins;
  for (const auto& run : r.runs) {
    if (run.has_minutes) mins.push_back(run.minutes);
  }
  if (mins.size() >= 5) {
    double med = median_of(mins);
    std::vector<double> dev;
    for (double m : mins) dev.push_back(std::fabs(m - med));
    // The MAD, floored at kMadFloor of the median: runs that all take nearly
    // the same time would otherwise make a few seconds an "outlier".
    double mad = std::max(median_of(dev), kMadFloor * med);
    if (mad > 0) {
      Finding f = base(r, round, "cherry-picking", "outliers");
      f.rule = "training_rules: Benchmark results (all runs of the set, no selection of runs)";
      std::vector<double> replaced;
      std::string which;
      for (const auto& run : r.runs) {
        if (!run.has_minutes) continue;
        double z = 0.6745 * (med - run.minutes) / mad;
        if (run.minutes < med && z > kOutlierZ) {
          which += (which.empty() ? "" : ", ") + run.file + " (" + minutes_text(run.minutes) + " min, z " + fmt(z, 3) + ")";
          f.evidence.push_back(figure(r.rel(run.file) + " minutes", run.minutes, "min"));
          f.evidence.push_back(figure(r.rel(run.file) + " modified z-score", z, ""));
          if (!run.log.run_stops.empty()) f.evidence.push_back(quote(r.rel(run.file), run.log.run_stops.back()));
          replaced.push_back(med);
        } else {
          replaced.push_back(run.minutes);
        }
      }
      if (!which.empty()) {
        f.evidence.push_back(figure("median of " + std::to_string(mins.size()) + " runs", med, "min"));
        f.evidence.push_back(figure("median absolute deviation (floored at " + fmt(kMadFloor * 100, 3) + "% of the median)", mad, "min"));
        f.summary = "run(s) far faster than their siblings (modified z-score > " + fmt(kOutlierZ, 3) + "): " + which;
        // The olympic mean the score is made of, with and without the outliers.
        double now = rules::olympic_mean(mins, drop), then = rules::olympic_mean(replaced, drop);
        if (r.has_score && std::isfinite(now) && std::isfinite(then) && now > 0) {
          f.has_impact = true;
          f.impact_minutes = r.score * then / now;
        }
        out->push_back(std::move(f));
      }
    }
  }
  if (r.expected_count > 0) {
    auto n = static_cast<long long>(r.runs.size());
    if (n - r.expected_count >= kExtraRunsMin && static_cast<double>(n) >= kExtraRunsRatio * static_cast<double>(r.expected_count)) {
      Finding f = base(r, round, "cherry-picking", "extra-runs");
      f.rule = "training_rules: Benchmark results (required number of runs)";
      f.summary = std::to_string(n) + " runs where " + std::to_string(r.expected_count) +
                  " are required: runs may have been chosen from a larger set";
      f.evidence.push_back(figure("runs submitted", static_cast<double>(n), "runs"));
      f.evidence.push_back(figure("runs required", static_cast<double>(r.expected_count), "runs"));
      out->push_back(std::move(f));
    }
  }
}

// A score of 0 minutes or less: the summarizer multiplies the olympic mean by
// the package's scaling.json factor without asking whether it is above 0, so a
// factor of 0 or below scores a result as faster than anything that trained.
void no_time_to_train(const ResultRow& r, const std::string& round, std::vector<Finding>* out) {
  if (!r.has_score || rules::is_time_to_train(r.score)) return;
  Finding f = base(r, round, "no-time-to-train", "");
  f.rule = "results_summarizer: score = olympic mean of the runs' minutes x scaling_factor; a time to train is above 0";
  f.summary = "score " + fmt(r.score) + " minutes: a scaling factor of 0 or below" +
              (r.has_unscaled ? " (the runs' olympic mean is " + fmt(r.unscaled) + " minutes)" : std::string()) +
              "; as published it ranks before every result that trained";
  f.evidence.push_back(figure("score", r.score, "minutes"));
  if (r.has_unscaled) f.evidence.push_back(figure("olympic mean of the runs", r.unscaled, "minutes"));
  out->push_back(std::move(f));
}

void repeated_run_start(const ResultRow& r, const std::string& round, std::vector<Finding>* out) {
  for (const auto& run : r.runs) {
    if (run.log.run_starts.size() < 2) continue;
    Finding f = base(r, round, "repeated-run-start", run.file);
    f.rule = "training_rules: one run per log (a relaunched run is a new run, not appended)";
    f.summary = r.rel(run.file) + " has " + std::to_string(run.log.run_starts.size()) +
                " run_start lines: relaunched runs appended to one log";
    for (const auto& l : run.log.run_starts) f.evidence.push_back(quote(r.rel(run.file), l));
    for (const auto& l : run.log.run_stops) f.evidence.push_back(quote(r.rel(run.file), l));
    out->push_back(std::move(f));
  }
}

void unannounced(Store& s, const ResultRow& r, const std::string& round, std::vector<Finding>* out) {
  std::vector<const RunRow*> resub;
  for (const auto& run : r.runs)
    if (run.resubmission_of || r.resubmission) resub.push_back(&run);
  if (resub.empty()) return;
  Stmt a(s.db(),
         "SELECT a.created_at, rr.first_meeting FROM announcements a LEFT JOIN round_reviews rr ON rr.round_id = "
         "a.round_id WHERE a.round_id = ?1 AND a.organisation_id = ?2 AND (a.result_id = ?3 OR a.result_id IS NULL) "
         "ORDER BY a.created_at LIMIT 1");
  a.bind(1, r.round_id).bind(2, r.org_id).bind(3, r.id);
  std::string late;
  if (a.step()) {
    std::string at = a.col_text(0), meeting = a.col_text(1);
    if (meeting.empty() || at <= meeting) return;
    late = at;
  }
  Finding f = base(r, round, "unannounced-resubmission", "");
  f.rule = "submission_rules: resubmitted logs of an earlier round are announced before the first review meeting";
  f.summary = std::to_string(resub.size()) + " run(s) are logs of an earlier round, " +
              (late.empty() ? std::string("never announced") : "announced only at " + late + ", after the first review meeting");
  Stmt e(s.db(),
         "SELECT rd.name, o.name || '/' || sy.name || '/' || re.benchmark, ru.file FROM runs ru "
         "JOIN results re ON re.id = ru.result_id JOIN systems sy ON sy.id = re.system_id "
         "JOIN packages p ON p.id = sy.package_id JOIN organisations o ON o.id = p.organisation_id "
         "JOIN rounds rd ON rd.id = p.round_id WHERE ru.id = ?1");
  for (const RunRow* run : resub) {
    Evidence ev;
    ev.file = r.rel(run->file);
    if (!run->log.run_starts.empty()) {
      ev.line = run->log.run_starts.front().line;
      ev.text = run->log.run_starts.front().text;
    }
    f.evidence.push_back(ev);
    if (!run->resubmission_of) continue;
    e.reset();
    e.bind(1, run->resubmission_of);
    if (!e.step()) continue;
    Evidence earlier;
    earlier.file = e.col_text(0) + " " + e.col_text(1) + "/" + e.col_text(2);
    earlier.text = "the same log, submitted in " + e.col_text(0) + " as " + e.col_text(1) + "/" + e.col_text(2);
    f.evidence.push_back(earlier);
  }
  out->push_back(std::move(f));
}

// The line of a system description that holds `key`.
Line system_line(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string text;
  long long n = 0;
  while (std::getline(in, text)) {
    ++n;
    if (text.find("\"" + key + "\"") != std::string::npos) {
      size_t b = text.find_first_not_of(" \t");
      return {n, b == std::string::npos ? text : text.substr(b)};
    }
  }
  return {};
}

// The leading count of submission_platform ("256xNVIDIA DGX H100" -> 256), 0 when none.
long long platform_count(const std::string& v) {
  size_t i = 0;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == 0 || i > 9 || i >= v.size() || v[i] != 'x') return 0;
  return std::stoll(v.substr(0, i));
}

void system_mismatch(const ResultRow& r, const std::string& round, std::vector<Finding>* out) {
  if (r.nodes <= 0) return;
  std::string sys_rel = "systems/" + r.system + ".json";
  for (const auto& run : r.runs) {
    long long n = platform_count(run.log.platform_value);
    if (n == 0 || n == r.nodes) continue;
    Finding f = base(r, round, "system-mismatch", "nodes");
    f.rule = "submission_rules: system description (number_of_nodes) matches the system the runs used";
    f.summary = "the logs run on " + std::to_string(n) + " node(s) (submission_platform) but " + sys_rel +
                " says number_of_nodes " + std::to_string(r.nodes);
    f.evidence.push_back(quote(r.rel(run.file), run.log.platform));
    Line l = system_line(r.package_path + "/" + sys_rel, "number_of_nodes");
    if (l.line) f.evidence.push_back(quote(sys_rel, l));
    out->push_back(std::move(f));
    break;
  }
}

// The RCP check of a result, re-run with the round's tables. False when
// there are no rules, no convergence read or no table.
bool rcp_outcome(const ResultRow& r, const RoundRules& rr, std::map<std::string, std::unique_ptr<rules::RcpTable>>* tables,
                 rules::RcpOutcome* o, std::string* bench_out) {
  if (!rr.rules) return false;
  std::vector<rules::RunConvergence> convs;
  for (const auto& run : r.runs)
    if (run.log.has_conv) convs.push_back(run.log.conv);
  if (convs.empty()) return false;
  std::string bench = convs.front().benchmark.empty() ? r.benchmark : convs.front().benchmark;
  auto it = tables->find(bench);
  if (it == tables->end()) {
    auto t = std::make_unique<rules::RcpTable>();
    std::string err;
    const rules::BenchmarkFacts* bf = rr.facts.find(bench);
    int n_runs = bf ? bf->runs : rules::rcp_submission_runs(bench);
    if (!t->load(rr.rules->rcp_dir() + "/rcps_" + bench + ".json", bench, n_runs, &err, rr.rules->id().version))
      t.reset();
    it = tables->emplace(bench, std::move(t)).first;
  }
  if (!it->second) return false;
  *o = it->second->evaluate(convs, false);
  *bench_out = bench;
  return true;
}

// An RCP check passed by less than `margin`: the olympic mean of the
// convergence epochs within that fraction of the bound (RCP mean / max
// speedup), re-derived with the round's RCP tables.
void rcp_near_fail(const ResultRow& r, const std::string& round, const RoundRules& rr, double margin,
                   std::map<std::string, std::unique_ptr<rules::RcpTable>>* tables, std::vector<Finding>* out) {
  if (!r.rcp_pass || (r.rcp_status != "found" && r.rcp_status != "interpolated" &&
                                   r.rcp_status != "smaller_batch_ok"))
    return;
  rules::RcpOutcome o;
  std::string bench;
  if (!rcp_outcome(r, rr, tables, &o, &bench)) return;
  // A reference without spread (max speedup 1: every reference run converged
  // at the same evaluation) makes its mean the bound, and runs converging at
  // that same evaluation pass with a margin of 0 as a matter of course.
  if (!o.evaluated || !o.pass || o.max_speedup <= 1) return;
  double bound = o.rcp_mean / o.max_speedup;
  double m = o.submission_mean / bound - 1;
  if (!(m >= 0) || m >= margin) return;
  const std::string unit = rules::convergence_quantity(round, bench);
  Finding f = base(r, round, "rcp-near-fail", "");
  f.rule = "rcp_checker: olympic mean of the convergence points (" + unit + ") >= RCP mean / max speedup (" + o.message + ")";
  f.summary = "the RCP check passes by " + fmt(m * 100, 3) + "%: olympic mean " + fmt(o.submission_mean, 6) +
              " " + unit + " against a bound of " + fmt(bound, 6) + " (within " + fmt(margin * 100, 3) + "% of failing)";
  f.evidence.push_back(figure("olympic mean of the runs' convergence", o.submission_mean, unit));
  f.evidence.push_back(figure("bound: RCP mean / max speedup", bound, unit));
  f.evidence.push_back(figure("RCP mean at batch size " + fmt(o.batch_size, 8), o.rcp_mean, unit));
  f.evidence.push_back(figure("max speedup", o.max_speedup, ""));
  f.evidence.push_back(figure("margin", m * 100, "%"));
  for (const auto& run : r.runs)
    if (run.log.has_conv && !run.log.run_stops.empty())
      f.evidence.push_back(quote(r.rel(run.file), run.log.run_stops.back()));
  out->push_back(std::move(f));
}

// The line `n` (from 1) of a file, trimmed; "" when there is none.
std::string file_line(const std::string& path, long long n) {
  std::ifstream in(path);
  std::string text;
  for (long long i = 1; std::getline(in, text); ++i)
    if (i == n) {
      while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
      return text.size() > 600 ? text.substr(0, 600) + "..." : text;
    }
  return "";
}

// A failing check: an RCP check that failed (with the score normalised by
// its factor), and the failing checks the store keeps for the runs of a
// result that fails.
void check_failure(const ResultRow& r, const std::string& round, const RoundRules& rr,
                   std::map<std::string, std::unique_ptr<rules::RcpTable>>* tables, std::vector<Finding>* out) {
  if (!r.rcp_status.empty() && !r.rcp_pass) {
    Finding f = base(r, round, "check-failure", "rcp");
    f.rule = "rcp_checker: RCP test (" + r.rcp_status + ")";
    rules::RcpOutcome o;
    std::string bench;
    if (rcp_outcome(r, rr, tables, &o, &bench) && o.evaluated && o.max_speedup > 0) {
      const std::string unit = rules::convergence_quantity(round, bench);
      f.evidence.push_back(figure("olympic mean of the runs' convergence", o.submission_mean, unit));
      f.evidence.push_back(figure("bound: RCP mean / max speedup", o.rcp_mean / o.max_speedup, unit));
      f.evidence.push_back(figure("RCP mean at batch size " + fmt(o.batch_size, 8), o.rcp_mean, unit));
      f.evidence.push_back(figure("max speedup", o.max_speedup, ""));
      f.summary = o.pass ? "the RCP check failed on import (" + r.rcp_status + ") but passes with the rule set installed now: olympic mean " +
                               fmt(o.submission_mean, 6) + " " + unit + " >= bound " + fmt(o.rcp_mean / o.max_speedup, 6)
                         : "the RCP check fails (" + r.rcp_status + "): olympic mean " + fmt(o.submission_mean, 6) + " " +
                               unit + " < bound " + fmt(o.rcp_mean / o.max_speedup, 6);
    } else {
      f.summary = "the RCP check fails (" + r.rcp_status + ")";
    }
    if (r.has_norm) f.evidence.push_back(figure("RCP normalisation factor (RCP mean / olympic mean)", r.rcp_norm, ""));
    if (r.has_norm && r.has_unscaled && r.rcp_norm > 1) {
      f.has_impact = true;
      f.impact_minutes = r.unscaled * r.rcp_norm;
      f.evidence.push_back(figure("unscaled score", r.unscaled, "min"));
      f.summary += "; normalised, the score is " + minutes_text(f.impact_minutes) + " min";
    }
    out->push_back(std::move(f));
  }
  if (r.verdict != "fail") return;
  Finding f = base(r, round, "check-failure", "runs");
  std::string first;
  for (const auto& run : r.runs) {
    mllog::Json j;
    std::string err;
    if (run.messages_json.empty() || !mllog::parse_json_permissive(run.messages_json, &j, &err)) continue;
    for (const auto& m : j.items) {
      const mllog::Json* line = m.find("line");
      const mllog::Json* rule = m.find("rule");
      const mllog::Json* msg = m.find("message");
      Evidence e;
      e.file = r.rel(run.file);
      e.line = line && line->kind == mllog::Json::Kind::Int ? line->i : 0;
      e.text = e.line ? file_line(r.package_path + "/" + e.file, e.line) : "";
      if (e.text.empty() && msg) e.text = msg->s;
      f.evidence.push_back(e);
      if (first.empty() && msg) {
        first = msg->s;
        if (f.rule.empty() && rule) f.rule = "compliance_checker: " + rule->s;
      }
    }
  }
  if (f.evidence.empty()) return;
  if (f.rule.empty()) f.rule = "compliance_checker";
  f.summary = "the result fails its checks: " + first;
  out->push_back(std::move(f));
}

// The hyperparameter set of a result: those of its first run that logs any.
const RunRow* hyper_run(const ResultRow& r) {
  for (const auto& run : r.runs)
    if (!run.log.hyper.empty()) return &run;
  return nullptr;
}

std::string signature(const RunRow& run) {
  std::string s;
  for (const auto& [k, v] : run.log.hyper) s += k + "=" + v.first + "\n";
  return s;
}

// Whether two organisations are partners: both named in one joint
// submission's folder of the round (Azure+NVIDIA: Azure and NVIDIA), or one is
// a joint submission the other is part of.
bool partners(const std::string& a, const std::string& b, const std::set<std::string>& orgs) {
  auto parts = [](const std::string& n) {
    std::set<std::string> p;
    std::stringstream ss(n);
    std::string x;
    while (std::getline(ss, x, '+')) {
      std::stringstream us(x);
      std::string y;
      while (std::getline(us, y, '_')) p.insert(y);
    }
    return p;
  };
  auto pa = parts(a), pb = parts(b);
  for (const auto& x : pa)
    if (pb.count(x)) return true;
  for (const auto& joint : orgs) {
    auto pj = parts(joint);
    if (pj.size() < 2) continue;
    bool ha = false, hb = false;
    for (const auto& x : pa) ha = ha || pj.count(x);
    for (const auto& x : pb) hb = hb || pj.count(x);
    if (ha && hb) return true;
  }
  return false;
}

void shared_hyperparameters(const std::vector<ResultRow>& all, const ResultRow& r, const std::string& round,
                            std::vector<Finding>* out) {
  const RunRow* mine = hyper_run(r);
  if (!mine) return;
  bool has_opt = false;
  for (const auto& [k, v] : mine->log.hyper) has_opt = has_opt || k != "global_batch_size";
  if (!has_opt || mine->log.hyper.size() < 3) return;
  std::set<std::string> orgs;
  for (const auto& o : all) orgs.insert(o.org);
  std::string sig = signature(*mine);
  std::vector<const ResultRow*> same;
  std::vector<const RunRow*> same_runs;
  for (const auto& other : all) {
    if (other.org_id == r.org_id || other.benchmark != r.benchmark || partners(r.org, other.org, orgs)) continue;
    const RunRow* theirs = hyper_run(other);
    if (!theirs || signature(*theirs) != sig) continue;
    same.push_back(&other);
    same_runs.push_back(theirs);
  }
  if (same.empty()) return;
  Finding f = base(r, round, "shared-hyperparameters", "");
  f.rule = "training_rules: Hyperparameter borrowing (allowed when declared)";
  std::string names;
  for (const auto* o : same) names += (names.empty() ? "" : ", ") + o->name();
  f.summary = "the " + std::to_string(mine->log.hyper.size()) + " logged hyperparameters are identical to those of " +
              names + " (another submitter's; borrowing must be declared)";
  for (const auto& [k, v] : mine->log.hyper) f.evidence.push_back(quote(r.rel(mine->file), v.second));
  for (size_t i = 0; i < same.size(); ++i) {
    // The other result's first hyperparameter line, named with its organisation.
    Evidence e = quote(same_runs[i]->file, same_runs[i]->log.hyper.begin()->second.second);
    e.file = same[i]->org + ":" + same[i]->rel(same_runs[i]->file);
    f.evidence.push_back(e);
  }
  out->push_back(std::move(f));
}

// ------------------------------------------------------------ storing

std::string evidence_json(const std::vector<Evidence>& ev) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_array();
  for (const auto& e : ev) {
    w.begin_object();
    if (!e.figure.empty()) {
      w.key("figure").value(e.figure).key("value").value(e.value).key("unit").value(e.unit);
    } else {
      w.key("file").value(e.file).key("line").value(e.line).key("text").value(e.text);
    }
    w.end_object();
  }
  w.end_array();
  return w.str();
}

std::vector<Evidence> parse_evidence(const std::string& text) {
  std::vector<Evidence> out;
  mllog::Json j;
  std::string err;
  if (!mllog::parse_json_permissive(text, &j, &err)) return out;
  for (const auto& item : j.items) {
    Evidence e;
    if (const auto* v = item.find("file")) e.file = v->s;
    if (const auto* v = item.find("line")) e.line = v->i;
    if (const auto* v = item.find("text")) e.text = v->s;
    if (const auto* v = item.find("figure")) e.figure = v->s;
    if (const auto* v = item.find("value")) e.value = v->kind == mllog::Json::Kind::Int ? static_cast<double>(v->i) : v->f;
    if (const auto* v = item.find("unit")) e.unit = v->s;
    out.push_back(std::move(e));
  }
  return out;
}

// The state of each finding, replayed from the audit.run events.
std::map<long long, std::string> replay_states(Store& s, std::string* error) {
  std::map<long long, std::string> st;
  for (const auto& e : read_events(s, "round/", error)) {
    if (e.action != "audit.run") continue;
    mllog::Json j;
    std::string err;
    if (!mllog::parse_json_permissive(e.payload_json, &j, &err)) continue;
    for (const char* k : {"added", "back", "gone"})
      if (const auto* a = j.find(k))
        for (const auto& id : a->items) st[id.i] = std::string(k) == "gone" ? "gone" : "open";
  }
  return st;
}

std::string ids_json(const std::vector<long long>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

}  // namespace

std::string finding_json(const Finding& f) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  w.key("id").value(f.id).key("round").value(f.round).key("organisation").value(f.organisation);
  w.key("result");
  if (f.result.empty()) w.null();
  else w.value(f.result);
  w.key("about_result").value(f.result_id != 0);
  w.key("kind").value(f.kind).key("rule").value(f.rule).key("summary").value(f.summary);
  w.key("evidence").raw(evidence_json(f.evidence));
  w.key("impact_minutes");
  if (f.has_impact) w.value(f.impact_minutes);
  else w.null();
  w.key("fingerprint").value(f.fingerprint).key("state").value(f.state).key("created_at").value(f.created_at);
  w.end_object();
  return w.str();
}

// A message on one line: its lines joined with "; ".
static std::string one_line(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t n = text.find('\n', i);
    std::string line = text.substr(i, n == std::string::npos ? std::string::npos : n - i);
    size_t a = line.find_first_not_of(' ');
    if (a != std::string::npos) out += (out.empty() || out.back() == ':' ? (out.empty() ? "" : " ") : "; ") + line.substr(a);
    if (n == std::string::npos) break;
    i = n + 1;
  }
  return out;
}

// Why the round's rule set was not found: every place looked, and the fix.
static std::string ruleset_not_found(const std::string& round, const std::string& rules_dir) {
  std::string looked;
  for (const auto& place : rules::places_looked(rules_dir)) looked += (looked.empty() ? "" : ", ") + place;
  rules::RulesetId id;
  std::string tree = rules::RulesetId::parse(round, &id) ? " (a tree with compliance_checker/" + id.dir() + "/)" : "";
  return "rule set " + round + " not found. Looked in: " + looked +
         ". Fix: install the consortium's rule sets with referee rules fetch, set REFEREE_RULES=DIR, or pass "
         "--rules DIR" + tree + " to a local referee audit";
}

bool detect_findings(Store& s, const std::string& round, const std::string& organisation, std::vector<Finding>* out,
                     std::string* error, std::vector<std::string>* notes, double rcp_margin, const std::string& rules_dir,
                     std::set<std::string>* unchecked) {
  out->clear();
  RoundRules rr;
  rules::RuleSource src;
  std::string rerr;
  rr.rules = rules::resolve_ruleset(round, rules_dir, &src, &rerr);
  bool not_found = !rr.rules;
  if (rr.rules && !rules::facts_for(*rr.rules, &rr.facts, &rerr)) rr.rules.reset();
  if (!rr.rules) {
    rr.problem = "rcp-near-fail not checked: " + (not_found ? ruleset_not_found(round, rules_dir) : one_line(rerr));
    if (notes) notes->push_back(rr.problem);
    if (unchecked) unchecked->insert("kind:rcp-near-fail");  // its stored findings are not gone: not looked for
  }
  std::map<std::string, std::unique_ptr<rules::RcpTable>> tables;
  std::vector<ResultRow> all;
  if (!load_round(s, round, rr, &all, error)) return false;
  for (const auto& r : all) {
    if (!organisation.empty() && r.org != organisation) continue;
    std::string missing;
    std::error_code ec;
    std::string dir = r.package_path + "/" + submissions::result_dir(round, r.system, r.benchmark);
    if (!std::filesystem::is_directory(dir, ec)) missing = dir;
    else
      for (const auto& run : r.runs)
        if (!run.log.read && !std::filesystem::exists(dir + "/" + run.file, ec))
          missing += (missing.empty() ? "" : ", ") + dir + "/" + run.file;
    if (!missing.empty()) {
      if (notes)
        notes->push_back("logs of " + r.name() + " not found at " + missing +
                         ": findings that need them were not re-checked (stored ones are kept as they were)");
      if (unchecked) unchecked->insert(r.name());
    }
    cherry_picking(r, round, rr.rules ? rules::olympic_drop(rr.facts, r.benchmark) : rules::olympic_drop(round, r.benchmark),
                   out);
    unannounced(s, r, round, out);
    repeated_run_start(r, round, out);
    no_time_to_train(r, round, out);
    system_mismatch(r, round, out);
    rcp_near_fail(r, round, rr, rcp_margin, &tables, out);
    check_failure(r, round, rr, &tables, out);
    shared_hyperparameters(all, r, round, out);
  }
  return true;
}

bool read_findings(Store& s, const std::string& round, const std::string& organisation, const std::string& kind,
                   long long id, std::vector<Finding>* out, std::string* error) {
  out->clear();
  auto states = replay_states(s, error);
  if (!error->empty()) return false;
  Stmt q(s.db(),
         "SELECT f.id, f.round_id, f.organisation_id, COALESCE(f.result_id, 0), rd.name, o.name, f.kind, f.rule, "
         "f.summary, f.evidence_json, f.impact_minutes, f.fingerprint, f.created_at, "
         "(SELECT o2.name || '/' || sy.name || '/' || re.benchmark FROM results re JOIN systems sy ON sy.id = "
         "re.system_id JOIN packages p ON p.id = sy.package_id JOIN organisations o2 ON o2.id = p.organisation_id "
         "WHERE re.id = f.result_id) "
         "FROM findings f JOIN rounds rd ON rd.id = f.round_id JOIN organisations o ON o.id = f.organisation_id "
         "WHERE (?1 = '' OR rd.name = ?1) AND (?2 = '' OR o.name = ?2 COLLATE NOCASE) AND (?3 = '' OR f.kind = ?3) "
         "AND (?4 = 0 OR f.id = ?4) ORDER BY f.id");
  q.bind(1, round).bind(2, organisation).bind(3, kind).bind(4, id);
  while (q.step()) {
    Finding f;
    std::string evidence;
    q.row(f.id, f.round_id, f.organisation_id, f.result_id, f.round, f.organisation, f.kind, f.rule, f.summary, evidence,
          Stmt::maybe(f.has_impact, f.impact_minutes), f.fingerprint, f.created_at, f.result);
    f.evidence = parse_evidence(evidence);
    if (f.result.empty()) {
      // Its result was replaced by a new import: the fingerprint names it (kind:round:ORG/SYSTEM/BENCH[:what]).
      size_t a = f.kind.size() + 1 + f.round.size() + 1;
      if (f.fingerprint.size() > a) {
        size_t b = f.fingerprint.find(':', a);
        f.result = f.fingerprint.substr(a, b == std::string::npos ? std::string::npos : b - a);
      }
    }
    auto it = states.find(f.id);
    f.state = it == states.end() ? "open" : it->second;
    out->push_back(std::move(f));
  }
  if (!q.ok()) {
    *error = s.describe_error(q.rc(), "reading findings");
    return false;
  }
  return true;
}

bool run_audit(Store& s, const Actor& who, const std::string& round, const std::string& organisation, AuditRun* out,
               std::string* error, double rcp_margin, const std::string& rules_dir) {
  *out = AuditRun{};
  std::vector<Finding> found;
  std::set<std::string> unchecked;
  if (!detect_findings(s, round, organisation, &found, error, &out->notes, rcp_margin, rules_dir, &unchecked))
    return false;
  // A published round is not changed: its findings are computed, not stored. A round without a review
  // record counts as published.
  bool published = false, recorded = false;
  {
    Stmt q(s.db(), "SELECT rr.state FROM round_reviews rr JOIN rounds r ON r.id = rr.round_id WHERE r.name = ?1");
    q.bind(1, round);
    recorded = q.step();
    published = !recorded || q.col_text(0) == "published";
  }
  if (published)
    out->notes.push_back("round " + round + (recorded ? " is published" : " has no review record, so counts as published") +
                         ": findings were computed but not stored, and nothing was added to the review log" +
                         (recorded ? "" : " (a round's review starts when its schedule is set: referee round schedule " + round + " ...)"));
  if (!s.begin(error)) return false;
  auto fail = [&](const std::string& e) {
    s.rollback();
    *error = e;
    return false;
  };
  std::vector<Finding> stored;
  if (!read_findings(s, round, organisation, "", 0, &stored, error)) return fail(*error);
  std::map<std::string, const Finding*> by_fp;
  std::map<long long, std::string> digest_before;  // what each stored finding said before this run
  for (const auto& f : stored) {
    by_fp[f.fingerprint] = &f;
    digest_before[f.id] = finding_row_digest(s, f.id);
  }
  std::string now = now_utc();
  std::vector<long long> added, back, gone;
  std::set<std::string> seen;
  Stmt ins(s.db(),
           "INSERT INTO findings (round_id, organisation_id, result_id, kind, rule, summary, evidence_json, "
           "impact_minutes, fingerprint, created_at, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  Stmt upd(s.db(),
           "UPDATE findings SET result_id = ?2, rule = ?3, summary = ?4, evidence_json = ?5, impact_minutes = ?6 "
           "WHERE id = ?1");
  for (auto& f : found) {
    if (!seen.insert(f.fingerprint).second) continue;  // the same thing found twice
    std::string ev = evidence_json(f.evidence);
    auto it = by_fp.find(f.fingerprint);
    if (it == by_fp.end() && published) {
      f.state = "new";
      added.push_back(0);
    } else if (it == by_fp.end()) {
      Error numbering;
      const long long id = next_id(s, "findings", f.round_id, &numbering);
      if (!id) return fail(numbering.message);
      ins.reset();
      ins.bind(1, f.round_id).bind(2, f.organisation_id).bind(11, id);
      if (f.result_id) ins.bind(3, f.result_id);
      else ins.bind_null(3);
      ins.bind(4, f.kind).bind(5, f.rule).bind(6, f.summary).bind(7, ev);
      if (f.has_impact) ins.bind(8, f.impact_minutes);
      else ins.bind_null(8);
      ins.bind(9, f.fingerprint).bind(10, now);
      if (!ins.run()) return fail(s.describe_error(ins.rc(), "storing a finding"));
      f.id = id;
      f.state = "new";
      f.created_at = now;
      added.push_back(f.id);
    } else {
      f.id = it->second->id;
      f.created_at = it->second->created_at;
      f.state = "open";
      if (it->second->state == "gone") back.push_back(f.id);
      if (published) {
        out->findings.push_back(f);
        continue;
      }
      upd.reset();
      upd.bind(1, f.id);
      if (f.result_id) upd.bind(2, f.result_id);
      else upd.bind_null(2);
      upd.bind(3, f.rule).bind(4, f.summary).bind(5, ev);
      if (f.has_impact) upd.bind(6, f.impact_minutes);
      else upd.bind_null(6);
      if (!upd.run()) return fail(s.describe_error(upd.rc(), "updating a finding"));
    }
    out->findings.push_back(f);
  }
  for (const auto& f : stored) {
    if (seen.count(f.fingerprint)) continue;
    if (unchecked.count(f.result)) continue;  // its logs are missing: not re-checked, not gone
    if (unchecked.count("kind:" + f.kind)) continue;  // a check that did not run finds nothing gone
    Finding g = f;
    if (g.state != "gone") gone.push_back(g.id);
    g.state = "gone";
    out->gone.push_back(std::move(g));
  }
  out->added = static_cast<int>(added.size());
  if (published) {
    s.rollback();
    return true;
  }
  // What each finding added or changed now says, kept in the event for --verify.
  std::map<long long, std::string> digests;
  for (const auto& f : out->findings) {
    if (f.id <= 0) continue;
    std::string d = finding_row_digest(s, f.id);
    auto before = digest_before.find(f.id);
    if (before == digest_before.end() || before->second != d) digests[f.id] = d;
  }
  if (!added.empty() || !back.empty() || !gone.empty() || !digests.empty()) {
    mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
    w.begin_object().key("round").value(round).key("organisation");
    if (organisation.empty()) w.null();
    else w.value(organisation);
    w.key("findings").value(static_cast<long long>(out->findings.size()));
    w.key("added").raw(ids_json(added)).key("back").raw(ids_json(back)).key("gone").raw(ids_json(gone));
    w.key("findings_sha256").begin_object();
    for (const auto& [fid, d] : digests) w.key(std::to_string(fid)).value(d);
    w.end_object();
    w.end_object();
    if (!append_event(s, who, "audit.run", "round/" + round, w.str(), error)) return fail(*error);
  }
  if (!s.commit(error)) return fail(*error);
  return true;
}

// ------------------------------------------------------------ the routes

namespace {

std::string findings_array(const std::vector<Finding>& fs) {
  std::string s = "[";
  for (size_t i = 0; i < fs.size(); ++i) {
    if (i) s += ',';
    s += finding_json(fs[i]);
  }
  return s + "]";
}

// An unknown round. The store's own message lists every round it holds,
// embargoed ones included: only for the local administrator.
Response unknown_round(const Context& c, const std::string& text, const std::string& store_message) {
  if (c.who.local_admin) return error_response(404, "unknown-round", store_message);
  return review::unknown_round(text);
}

Response post_audit(Context& c) {
  mllog::Json body;
  Response err;
  if (!parse_body(c.req, {"round", "organisation"}, &body, &err)) return err;
  std::string round_text, org_text;
  if (!body_string(body, "round", false, &round_text, &err) || !body_string(body, "organisation", false, &org_text, &err))
    return err;
  if (round_text.empty() && org_text.empty())
    return error_response(400, "missing-field", "an audit needs a round or an organisation",
                          "send {\"round\": \"3.1.0\"} or {\"organisation\": \"NVIDIA\"}");
  std::string org, round, e;
  // An organisation known only from rounds hidden from the caller is answered as one not in the store.
  if (!org_text.empty() && !find_visible_organisation(c.store, c.who, org_text, &org))
    return review::error_response(unknown_organisation_error(org_text));
  if (!round_text.empty()) {
    if (!submissions::resolve_round(c.store, round_text, &round, &e)) return unknown_round(c, round_text, e);
    if (!c.api.can_see_round(c.who, round)) return review::unknown_round(round_text);
  } else {
    // The organisation's latest round among those the caller may see.
    Stmt q(c.store.db(),
           "SELECT rd.name FROM packages p JOIN rounds rd ON rd.id = p.round_id JOIN organisations o ON o.id = "
           "p.organisation_id WHERE o.name = ?1 ORDER BY rd.ordinal DESC");
    q.bind(1, org);
    while (round.empty() && q.step())
      if (c.api.can_see_round(c.who, q.col_text(0))) round = q.col_text(0);
    if (round.empty()) return error_response(404, "no-package", org + " has no package in the store");
  }
  AuditRun run;
  if (!run_audit(c.store, c.who, round, org, &run, &e, kRcpNearFail, c.api.rules_dir()))
    return error_response(500, "audit", e);
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("round").value(round).key("organisation");
  if (org.empty()) w.null();
  else w.value(org);
  w.key("added").value(run.added);
  w.key("findings").raw(findings_array(run.findings));
  w.key("gone").raw(findings_array(run.gone));
  w.key("notes").begin_array();
  for (const auto& n : run.notes) w.value(n);
  w.end_array();
  w.end_object();
  return json_response(w.str());
}

Response list_findings(Context& c, long long id) {
  std::string round, org, e;
  std::string rt = c.query("round"), ot = c.query("organisation"), kind = c.query("kind");
  if (!rt.empty() && !submissions::resolve_round(c.store, rt, &round, &e)) return unknown_round(c, rt, e);
  // A round the caller may not see: the same answer as for one the store does not hold.
  if (!round.empty() && !c.api.can_see_round(c.who, round)) return review::unknown_round(rt);
  if (!ot.empty() && !find_visible_organisation(c.store, c.who, ot, &org))
    return review::error_response(unknown_organisation_error(ot));
  std::vector<Finding> fs;
  if (!read_findings(c.store, round, org, kind, id, &fs, &e)) return error_response(500, "store", e);
  std::map<std::string, bool> visible;
  std::vector<Finding> shown;
  for (auto& f : fs) {
    auto it = visible.find(f.round);
    if (it == visible.end()) it = visible.emplace(f.round, c.api.can_see_round(c.who, f.round)).first;
    if (it->second) shown.push_back(std::move(f));
  }
  if (id) {
    // One in a round the actor may not see is answered as one that does not exist.
    if (shown.empty()) return error_response(404, "unknown-finding", "no finding " + std::to_string(id));
    return json_response(finding_json(shown.front()));
  }
  return json_response("{\"findings\":" + findings_array(shown) + "}");
}

}  // namespace

std::vector<Route> audit_routes() {
  return {
      {"POST", "/api/v1/audit", true, post_audit},
      {"GET", "/api/v1/findings", false, [](Context& c) { return list_findings(c, 0); }},
      {"GET", "/api/v1/findings/{id}", false,
       [](Context& c) {
         const std::string& t = c.params[0];
         long long id = 0;
         bool ok = !t.empty() && t.size() < 16 && t.find_first_not_of("0123456789") == std::string::npos;
         if (ok) id = std::stoll(t);
         if (!ok || id <= 0) return error_response(400, "bad-id", "finding ids are positive integers, not '" + t + "'");
         return list_findings(c, id);
       }},
  };
}

}  // namespace referee::review
