#include "submissions/import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "base/digest.h"
#include "base/file.h"
#include "base/utc_time.h"
#include "mllog/json_writer.h"
#include "rules/interp.h"
#include "rules/package.h"
#include "rules/score.h"

namespace fs = std::filesystem;

namespace referee::submissions {

namespace {

std::string slurp(const fs::path& p) {
  std::string text;
  (void)base::read_regular_file(p, &text);  // "" for a file that is not there or not a regular file
  return text;
}

long long ordinal_of(const std::string& version) {
  long long a = 0, b = 0, c = 0;
  std::sscanf(version.c_str(), "%lld.%lld.%lld", &a, &b, &c);
  return a * 1000000 + b * 1000 + c;
}

long long id_for(Store& s, const char* select, const char* insert, const std::vector<std::string>& args,
                 std::string* error) {
  Stmt q(s.db(), select);
  for (size_t i = 0; i < args.size(); ++i) q.bind(static_cast<int>(i + 1), args[i]);
  if (q.step()) return q.col_int(0);
  Stmt ins(s.db(), insert);
  for (size_t i = 0; i < args.size(); ++i) ins.bind(static_cast<int>(i + 1), args[i]);
  if (!ins.run()) {
    *error = ins.error();
    return -1;
  }
  return sqlite3_last_insert_rowid(s.db());
}

std::string findings_json(const std::vector<rules::Finding>& fs) {
  mllog::JsonWriter w(0);
  w.begin_array();
  for (const auto& f : fs) {
    w.begin_object().key("line").value(static_cast<long long>(f.line)).key("rule").value(f.rule).key("message").value(f.message);
    if (!f.expected.empty()) w.key("expected").value(f.expected);
    if (!f.found.empty()) w.key("found").value(f.found);
    w.end_object();
  }
  w.end_array();
  return w.str();
}

// A number, or null where JSON has none (the olympic mean of too few runs is nan).
void number_or_null(mllog::JsonWriter& w, double d) {
  if (std::isfinite(d)) w.value(d);
  else w.null();
}

}  // namespace

std::string failed_checks_json(const rules::BenchmarkDir& d) {
  std::vector<std::string> rules;
  if (!d.pass) {
    for (const auto& f : d.errors)
      if (std::find(rules.begin(), rules.end(), f.rule) == rules.end()) rules.push_back(f.rule);
    // The seed check's reasons are kept apart from d.errors.
    if (d.seeds_checked && !d.seeds_ok && !d.seeds_bypassed && std::find(rules.begin(), rules.end(), "seeds") == rules.end())
      rules.push_back("seeds");
  }
  mllog::JsonWriter w(0);
  w.strings(rules);
  return w.str();
}

std::string rcp_json(const rules::BenchmarkDir& d, const rules::RuleSet& rules, const rules::RoundFacts& facts) {
  if (!d.rcp_checked) return "";
  const auto& c = d.rcp;
  const rules::BenchmarkFacts* bf = facts.find(d.benchmark);
  rules::QualityTarget q = rules::quality_target(rules, d.benchmark);
  mllog::JsonWriter w(0);
  w.begin_object();
  w.key("status").value(c.status).key("message").value(c.message).key("pass").value(c.pass);
  w.key("bypassed").value(c.bypassed).key("evaluated").value(c.evaluated);
  w.key("batch_size");
  if (c.has_batch_size) w.value(c.submission_batch_size); else w.null();
  // The reference record the runs were held against: an exact record, one
  // interpolated between two, or the smallest-batch record.
  w.key("reference_batch_size");
  if (c.evaluated) w.value(c.batch_size); else w.null();
  auto stat = [&](const char* name, double v) {
    w.key(name);
    if (c.evaluated) number_or_null(w, v); else w.null();
  };
  stat("rcp_mean", c.rcp_mean);
  stat("rcp_stdev", c.rcp_stdev);
  stat("max_speedup", c.max_speedup);
  // The least olympic mean the check accepts: RCP mean / max speedup (the
  // check passes when submission_mean >= it). That is the record's bisection
  // minimum, except for llama31_405b from 5.0.0, whose max speedup the
  // consortium redefines so that it is 46080 samples below it.
  stat("min_epochs", c.max_speedup != 0 ? c.rcp_mean / c.max_speedup : std::nan(""));
  stat("reference_min_epochs", c.min_epochs);
  stat("submission_mean", c.submission_mean);
  w.key("too_few_runs").value(c.too_few_runs);
  w.key("norm_factor");
  number_or_null(w, c.norm_factor);
  w.key("run_epochs").begin_array();
  for (double e : c.run_epochs) number_or_null(w, e);
  w.end_array();
  rules::Convergence how = bf ? bf->convergence : rules::Convergence::EpochNum;
  w.key("unit").value(rules::convergence_unit(how, rules.id().version));
  w.key("field").value(rules::convergence_field(how, rules.id().version));
  w.key("quantity").value(rules::convergence_quantity(d.benchmark, how, rules.id().version));
  w.key("metric").value(q.metric);
  w.key("target");
  if (q.has_target) w.value(q.target); else w.null();
  w.key("target_direction");
  if (q.has_target) w.value(q.direction); else w.null();
  w.end_object();
  return w.str();
}

bool is_package(const std::string& dir, std::string* why) {
  std::error_code ec;
  if (fs::is_directory(fs::path(dir) / "systems", ec)) return true;
  for (const auto& sys : fs::directory_iterator(fs::path(dir) / "results", ec)) {
    if (!sys.is_directory(ec)) continue;
    for (const auto& bench : fs::directory_iterator(sys.path(), ec)) {
      if (!bench.is_directory(ec)) continue;
      for (const auto& f : fs::directory_iterator(bench.path(), ec)) {
        const std::string name = f.path().filename().string();
        if (name.rfind("result_", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0) return true;
      }
    }
  }
  *why = "no systems/ folder and no result log (results/SYSTEM/BENCHMARK/result_*.txt)";
  return false;
}

std::vector<std::string> find_packages(const std::string& dir, std::vector<std::string>* skipped) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::is_directory(fs::path(dir) / "results", ec)) {
    out.push_back(dir);
    return out;
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory(ec) || !fs::is_directory(e.path() / "results", ec)) continue;
    std::string why;
    if (is_package(e.path().string(), &why)) out.push_back(e.path().string());
    else if (skipped) skipped->push_back(e.path().string() + ": not a submission package (" + why + ")");
  }
  std::sort(out.begin(), out.end());
  if (skipped) std::sort(skipped->begin(), skipped->end());
  return out;
}

namespace {

// Adds each result of package `package_id` to `table` as (id, system name,
// benchmark).
bool note_results(Store& store, const std::string& table, long long package_id, std::string* error) {
  const std::string sql = "INSERT INTO " + table +
                          " SELECT r.id, s.name, r.benchmark FROM results r JOIN systems s "
                          "ON s.id = r.system_id WHERE s.package_id = ?1";
  Stmt st(store.db(), sql.c_str());
  st.bind(1, package_id);
  if (!st.run()) {
    *error = st.error();
    return false;
  }
  return true;
}

// The review's links to the results and runs of package `old`, kept by name
// (system, benchmark, file) in temporary tables, then removed so that the
// package can be deleted.
bool unlink_review(Store& store, long long old, std::string* error) {
  const char* sql = R"sql(
    CREATE TEMP TABLE IF NOT EXISTS relink_results (kind TEXT, key INTEGER, system TEXT, benchmark TEXT, file TEXT);
    CREATE TEMP TABLE IF NOT EXISTS relink_status (system TEXT, benchmark TEXT, status TEXT, factor REAL,
                                                   objection_id INTEGER, decision_id INTEGER, updated_at TEXT);
    DELETE FROM temp.relink_results;
    DELETE FROM temp.relink_status;
    CREATE TEMP TABLE IF NOT EXISTS relink_old (id INTEGER PRIMARY KEY, system TEXT, benchmark TEXT);
    DELETE FROM temp.relink_old;
  )sql";
  if (!store.exec(sql, error)) return false;
  if (!note_results(store, "temp.relink_old", old, error)) return false;
  const char* save = R"sql(
    INSERT INTO temp.relink_results SELECT 'objection', o.objection_id, x.system, x.benchmark, NULL
      FROM objection_results o JOIN temp.relink_old x ON x.id = o.result_id;
    INSERT INTO temp.relink_results SELECT 'announcement', a.id, x.system, x.benchmark, NULL
      FROM announcements a JOIN temp.relink_old x ON x.id = a.result_id;
    INSERT INTO temp.relink_results SELECT 'evidence', e.id, x.system, x.benchmark, r.file
      FROM evidence e JOIN runs r ON r.id = e.run_id JOIN temp.relink_old x ON x.id = r.result_id;
    INSERT INTO temp.relink_status SELECT x.system, x.benchmark, t.status, t.factor, t.objection_id, t.decision_id, t.updated_at
      FROM result_status t JOIN temp.relink_old x ON x.id = t.result_id;
    DELETE FROM objection_results WHERE result_id IN (SELECT id FROM temp.relink_old);
    UPDATE announcements SET result_id = NULL WHERE result_id IN (SELECT id FROM temp.relink_old);
    UPDATE evidence SET run_id = NULL WHERE run_id IN (SELECT r.id FROM runs r JOIN temp.relink_old x ON x.id = r.result_id);
    UPDATE findings SET result_id = NULL WHERE result_id IN (SELECT id FROM temp.relink_old);
    DELETE FROM result_status WHERE result_id IN (SELECT id FROM temp.relink_old);
  )sql";
  return store.exec(save, error);
}

// Links what unlink_review() kept to the results and runs of the package
// that replaced it, matched by system, benchmark and file. A result the new
// package no longer has loses its links (its objections keep their other
// results, their evidence its quoted lines).
bool relink_review(Store& store, long long package_id, std::string* error) {
  Stmt fresh(store.db(),
             "CREATE TEMP TABLE IF NOT EXISTS relink_new (id INTEGER PRIMARY KEY, system TEXT, benchmark TEXT)");
  if (!fresh.run()) {
    *error = fresh.error();
    return false;
  }
  if (!store.exec("DELETE FROM temp.relink_new;", error)) return false;
  if (!note_results(store, "temp.relink_new", package_id, error)) return false;
  // A result an objection names stays in the store: the review's record of it (status, decision, the
  // log's events) would otherwise point at nothing, and adding it back later would rank it as never reviewed.
  {
    Stmt lost(store.db(),
              "SELECT l.system, l.benchmark, l.key FROM temp.relink_results l WHERE l.kind = 'objection' AND NOT EXISTS "
              "(SELECT 1 FROM temp.relink_new n WHERE n.system = l.system AND n.benchmark = l.benchmark) ORDER BY l.key "
              "LIMIT 1");
    if (lost.step()) {
      *error = "the new package has no " + lost.col_text(0) + "/" + lost.col_text(1) + ", which objection " +
               std::to_string(lost.col_int(2)) + " names: a result under review cannot leave the store (nothing was "
               "imported); keep it in the package, or have the review withdraw it (a decision with remedy withdraw)";
      return false;
    }
    if (!lost.ok()) {
      *error = lost.error();
      return false;
    }
  }
  const char* sql = R"sql(
    INSERT OR IGNORE INTO objection_results SELECT l.key, n.id FROM temp.relink_results l
      JOIN temp.relink_new n ON n.system = l.system AND n.benchmark = l.benchmark WHERE l.kind = 'objection';
    UPDATE announcements SET result_id = (SELECT n.id FROM temp.relink_results l JOIN temp.relink_new n
        ON n.system = l.system AND n.benchmark = l.benchmark WHERE l.kind = 'announcement' AND l.key = announcements.id)
      WHERE id IN (SELECT key FROM temp.relink_results WHERE kind = 'announcement');
    UPDATE evidence SET run_id = (SELECT r.id FROM temp.relink_results l JOIN temp.relink_new n
        ON n.system = l.system AND n.benchmark = l.benchmark JOIN runs r ON r.result_id = n.id AND r.file = l.file
        WHERE l.kind = 'evidence' AND l.key = evidence.id)
      WHERE id IN (SELECT key FROM temp.relink_results WHERE kind = 'evidence');
    INSERT INTO result_status SELECT n.id, t.status, t.factor, t.objection_id, t.decision_id, t.updated_at
      FROM temp.relink_status t JOIN temp.relink_new n ON n.system = t.system AND n.benchmark = t.benchmark;
    DELETE FROM temp.relink_results;
    DELETE FROM temp.relink_status;
    DELETE FROM temp.relink_old;
    DELETE FROM temp.relink_new;
  )sql";
  return store.exec(sql, error);
}

// One result of a package as a replacement compares it: its verdict, score,
// failed checks and its runs' files by content.
struct ResultShape {
  std::string verdict, checks;
  bool has_score = false;
  double score = 0;
  std::map<std::string, std::string> files;  // file -> content_sha256
};

std::map<std::string, ResultShape> result_shapes(Store& store, long long package_id) {
  std::map<std::string, ResultShape> out;
  Stmt q(store.db(),
         "SELECT s.name || '/' || x.benchmark, x.verdict, x.score_minutes, COALESCE(x.failed_checks, '[]') "
         "FROM results x JOIN systems s ON x.system_id = s.id WHERE s.package_id = ?1");
  q.bind(1, package_id);
  while (q.step()) {
    ResultShape& r = out[q.col_text(0)];
    r.verdict = q.col_text(1);
    r.has_score = !q.col_null(2);
    r.score = q.col_double(2);
    r.checks = q.col_text(3);
  }
  Stmt f(store.db(),
         "SELECT s.name || '/' || x.benchmark, r.file, r.content_sha256 FROM runs r JOIN results x ON x.id = r.result_id "
         "JOIN systems s ON x.system_id = s.id WHERE s.package_id = ?1");
  f.bind(1, package_id);
  while (f.step()) out[f.col_text(0)].files[f.col_text(1)] = f.col_text(2);
  return out;
}

// "verdict score" of a result, as the review log's results_changed says it.
std::string shape_text(const ResultShape& r) {
  char buf[64];
  if (r.has_score) std::snprintf(buf, sizeof buf, "%.6f", r.score);
  return r.verdict + " " + (r.has_score ? std::string(buf) : "unscored");
}

// What changed from `before` to `after`, result by result (name order); a
// result whose files, verdict, score and checks are the same is left out.
void describe_changes(const std::map<std::string, ResultShape>& before, const std::map<std::string, ResultShape>& after,
                      PackageChange* change) {
  std::set<std::string> names;
  for (const auto& [name, r] : before) names.insert(name);
  for (const auto& [name, r] : after) names.insert(name);
  for (const auto& name : names) {
    auto b = before.find(name), a = after.find(name);
    ResultChange c;
    c.result = name;
    if (b != before.end()) {
      c.verdict_before = b->second.verdict;
      c.has_score_before = b->second.has_score;
      c.score_before = b->second.score;
      c.checks_before = b->second.checks;
      c.runs_before = static_cast<long long>(b->second.files.size());
    }
    if (a != after.end()) {
      c.verdict_after = a->second.verdict;
      c.has_score_after = a->second.has_score;
      c.score_after = a->second.score;
      c.checks_after = a->second.checks;
      c.runs_after = static_cast<long long>(a->second.files.size());
    }
    static const std::map<std::string, std::string> none;
    const auto& fb = b != before.end() ? b->second.files : none;
    const auto& fa = a != after.end() ? a->second.files : none;
    for (const auto& [file, sha] : fb) {
      auto it = fa.find(file);
      if (it == fa.end()) c.files_removed.push_back(file);
      else if (it->second != sha) c.files_changed.push_back(file);
    }
    for (const auto& [file, sha] : fa)
      if (!fb.count(file)) c.files_added.push_back(file);
    if (a == after.end()) {
      c.change = "removed";
      change->results_changed.push_back(name + ": removed");
    } else if (b == before.end()) {
      c.change = "added";
      change->results_changed.push_back(name + ": added");
    } else {
      const std::string was = shape_text(b->second), now = shape_text(a->second);
      if (was != now) change->results_changed.push_back(name + ": " + was + " -> " + now);
      if (was == now && c.checks_before == c.checks_after && c.files_added.empty() && c.files_removed.empty() &&
          c.files_changed.empty())
        continue;
      c.change = "changed";
    }
    change->changes.push_back(std::move(c));
  }
}

}  // namespace

std::string package_rows_sha256(Store& store, long long package_id, std::string* error) {
  // Each row as SQLite quotes its values (a number to 17 significant digits), one line each, in a fixed order.
  static const char* const kParts[] = {
      R"sql(SELECT d.name, o.name, p.content_sha256, p.verdict, p.ruleset_sha256, p.path FROM packages p
              JOIN rounds d ON d.id = p.round_id JOIN organisations o ON o.id = p.organisation_id WHERE p.id = ?1)sql",
      R"sql(SELECT s.name, s.system_name, s.submitter, s.division, s.availability, s.number_of_nodes,
                   s.accelerators_per_node, s.accelerators_count, s.accelerator_model_name, s.host_processor_model_name,
                   s.host_processors_count, s.framework, s.valid, s.description_json
              FROM systems s WHERE s.package_id = ?1 ORDER BY s.name)sql",
      R"sql(SELECT s.name, x.benchmark, x.division, x.verdict, x.result_count, x.expected_count, x.seeds_ok, x.rcp_status,
                   x.rcp_pass, printf('%!.17g', x.rcp_norm_factor), printf('%!.17g', x.score_minutes),
                   printf('%!.17g', x.score_pipeline_minutes), printf('%!.17g', x.unscaled_minutes),
                   printf('%!.17g', x.published_factor), printf('%!.17g', x.pipeline_factor),
                   printf('%!.17g', x.energy_joules), printf('%!.17g', x.energy_pipeline_joules), x.energy_note,
                   x.rcp_json, x.failed_checks
              FROM results x JOIN systems s ON s.id = x.system_id WHERE s.package_id = ?1 ORDER BY s.name, x.benchmark)sql",
      R"sql(SELECT s.name, x.benchmark, r.file, r.content_sha256, r.fingerprint, printf('%!.17g', r.run_start_ms),
                   printf('%!.17g', r.run_stop_ms), printf('%!.17g', r.minutes), r.converged, printf('%!.17g', r.epochs),
                   r.seed, r.compliant, r.counted, r.messages_json, r.dropped, printf('%!.17g', r.energy_joules)
              FROM runs r JOIN results x ON x.id = r.result_id JOIN systems s ON s.id = x.system_id
              WHERE s.package_id = ?1 ORDER BY s.name, x.benchmark, r.file)sql",
      R"sql(SELECT s.name, x.benchmark, r.file, e.seq, printf('%!.17g', e.time_ms), printf('%!.17g', e.epoch),
                   printf('%!.17g', e.samples), printf('%!.17g', e.metric), e.value_json
              FROM eval_points e JOIN runs r ON r.id = e.run_id JOIN results x ON x.id = r.result_id
              JOIN systems s ON s.id = x.system_id WHERE s.package_id = ?1 ORDER BY s.name, x.benchmark, r.file, e.seq)sql",
  };
  // The rows of one query, one line each; false with *error when it fails.
  auto rows_text = [&](const char* sql, std::string* out) {
    Stmt q(store.db(), sql);
    q.bind(1, package_id);
    const int n = q.columns();
    while (q.step()) {
      for (int i = 0; i < n; ++i) {
        // Each value with its length, so that no choice of text makes two rows read alike.
        std::string v = q.col_null(i) ? "\x01null" : q.col_text(i);
        *out += std::to_string(v.size()) + ":" + v + ",";
      }
      *out += "\n";
    }
    if (!q.ok()) *error = store.describe_error(q.rc(), "reading a package's rows");
    return q.ok();
  };
  std::string text;
  for (const char* sql : kParts) {
    if (!rows_text(sql, &text)) return "";
    text += "--\n";
  }
  Stmt has_weak(store.db(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'weak_results'");
  if (has_weak.step()) {  // a store read before schema 16 has none
    // MLPerf HPC weak-scaling rows, after the others and only where there are
    // some, so that the digests of packages without them stay what they were.
    std::string weak, stops;
    if (!rows_text(R"sql(SELECT s.name, w.benchmark, w.division, w.verdict, w.result_count, w.expected_count,
                                w.seeds_ok, w.rcp_status, w.rcp_pass, w.number_of_models, w.instance_scale,
                                printf('%!.17g', w.time_to_train_all_minutes), w.note, w.failed_checks
                           FROM weak_results w JOIN systems s ON s.id = w.system_id
                          WHERE s.package_id = ?1 ORDER BY s.name, w.benchmark)sql",
                   &weak))
      return "";
    if (!weak.empty()) text += "weak\n" + weak + "--\n";
    // Their runs (schema 17): only where there are some, for the same reason.
    Stmt has_runs(store.db(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'weak_runs'");
    if (has_runs.step()) {
      std::string runs;
      if (!rows_text(R"sql(SELECT s.name, w.benchmark, r.file, r.content_sha256, printf('%!.17g', r.run_start_ms),
                                  printf('%!.17g', r.run_stop_ms), r.seed, r.compliant, r.counted, r.dropped, r.messages_json
                             FROM weak_runs r JOIN weak_results w ON w.id = r.weak_result_id
                             JOIN systems s ON s.id = w.system_id
                            WHERE s.package_id = ?1 ORDER BY s.name, w.benchmark, r.file)sql",
                     &runs))
        return "";
      if (!runs.empty()) text += "weak runs\n" + runs + "--\n";
    }
    // Where today's consortium checker stops (the same schema): only where it does.
    if (!rows_text(R"sql(SELECT s.name, x.benchmark, x.consortium_stops FROM results x JOIN systems s ON s.id = x.system_id
                          WHERE s.package_id = ?1 AND x.consortium_stops IS NOT NULL ORDER BY s.name, x.benchmark)sql",
                   &stops))
      return "";
    if (!stops.empty()) text += "stops\n" + stops + "--\n";
  }
  return base::sha256_hex(text);
}

// Resubmissions: a run that appeared in an earlier round points at the
// earliest copy, and a result whose every run does is a resubmission. For the
// runs that share a fingerprint with one of `package_id`'s (in any round).
bool link_resubmissions(Store& store, long long package_id, std::string* error) {
  Stmt link(store.db(), R"sql(
    UPDATE runs SET resubmission_of = (
      SELECT r2.id FROM runs r2
        JOIN results x2 ON r2.result_id = x2.id JOIN systems s2 ON x2.system_id = s2.id
        JOIN packages p2 ON s2.package_id = p2.id JOIN rounds d2 ON p2.round_id = d2.id
      WHERE r2.fingerprint = runs.fingerprint
        AND d2.ordinal < (SELECT d.ordinal FROM results x JOIN systems s ON x.system_id = s.id
                          JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id
                          WHERE x.id = runs.result_id)
      ORDER BY d2.ordinal, r2.id LIMIT 1)
    WHERE fingerprint IN (SELECT r.fingerprint FROM runs r JOIN results x ON r.result_id = x.id
                             JOIN systems s ON x.system_id = s.id WHERE s.package_id = ?1))sql");
  link.bind(1, package_id);
  if (!link.run()) {
    *error = link.error();
    return false;
  }
  Stmt mark(store.db(), R"sql(
    UPDATE results SET resubmission = (
      SELECT COUNT(*) > 0 AND SUM(r.resubmission_of IS NULL) = 0 FROM runs r WHERE r.result_id = results.id)
    WHERE id IN (SELECT x.id FROM results x JOIN runs r ON r.result_id = x.id
                 WHERE r.fingerprint IN (SELECT r3.fingerprint FROM runs r3 JOIN results x3 ON r3.result_id = x3.id
                                            JOIN systems s3 ON x3.system_id = s3.id WHERE s3.package_id = ?1)))sql");
  mark.bind(1, package_id);
  if (!mark.run()) {
    *error = mark.error();
    return false;
  }
  return true;
}

std::string check_resubmission_links(Store& store, std::string* error, long long package_id) {
  // What link_resubmissions makes of the whole store, against what it holds; and each round's order.
  Stmt q(store.db(), R"sql(
    SELECT r.id, COALESCE(r.resubmission_of, 0), COALESCE((SELECT r2.id FROM runs r2
        JOIN results x2 ON r2.result_id = x2.id JOIN systems s2 ON x2.system_id = s2.id
        JOIN packages p2 ON s2.package_id = p2.id JOIN rounds d2 ON p2.round_id = d2.id
      WHERE r2.fingerprint = r.fingerprint AND d2.ordinal < d.ordinal ORDER BY d2.ordinal, r2.id LIMIT 1), 0), r.file,
      o.name || '/' || s.name || '/' || x.benchmark || ' (' || d.name || ')'
    FROM runs r JOIN results x ON r.result_id = x.id JOIN systems s ON x.system_id = s.id
      JOIN packages p ON s.package_id = p.id JOIN rounds d ON p.round_id = d.id
      JOIN organisations o ON o.id = p.organisation_id
    WHERE ?1 = 0 OR r.fingerprint IN (SELECT r3.fingerprint FROM runs r3 JOIN results x3 ON r3.result_id = x3.id
                                        JOIN systems s3 ON x3.system_id = s3.id WHERE s3.package_id = ?1)
    ORDER BY r.id)sql");
  q.bind(1, package_id);
  while (q.step())
    if (q.col_int(1) != q.col_int(2))
      return "runs: " + q.col_text(4) + " " + q.col_text(3) + " is linked as a copy of run " + std::to_string(q.col_int(1)) +
             ", its logs make it a copy of run " + std::to_string(q.col_int(2)) + " (0: none; edited in the store since)";
  if (!q.ok()) {
    *error = q.error();
    return *error;
  }
  Stmt x(store.db(), R"sql(
    SELECT x.id, x.resubmission, (SELECT COUNT(*) > 0 AND SUM(r.resubmission_of IS NULL) = 0 FROM runs r WHERE r.result_id = x.id),
      o.name || '/' || s.name || '/' || x.benchmark || ' (' || d.name || ')'
    FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
      JOIN rounds d ON p.round_id = d.id JOIN organisations o ON o.id = p.organisation_id
    WHERE ?1 = 0 OR x.id IN (SELECT r.result_id FROM runs r WHERE r.fingerprint IN (SELECT r3.fingerprint FROM runs r3
                               JOIN results x3 ON r3.result_id = x3.id JOIN systems s3 ON x3.system_id = s3.id
                               WHERE s3.package_id = ?1))
    ORDER BY x.id)sql");
  x.bind(1, package_id);
  while (x.step())
    if ((x.col_int(1) != 0) != (x.col_int(2) != 0))
      return "results: " + x.col_text(3) + (x.col_int(1) ? " is marked a resubmission, its runs are not all copies"
                                                          : " is not marked a resubmission, though every run is a copy") +
             " (edited in the store since)";
  if (!x.ok()) {
    *error = x.error();
    return *error;
  }
  if (package_id) return "";
  Stmt d(store.db(), "SELECT name, usage, version, ordinal FROM rounds ORDER BY id");
  while (d.step())
    if (d.col_int(3) != ordinal_of(d.col_text(2)) || d.col_text(0) != d.col_text(1) + "-" + d.col_text(2))
      return "rounds: " + d.col_text(0) + " has usage " + d.col_text(1) + ", version " + d.col_text(2) + " and order " +
             std::to_string(d.col_int(3)) + ", which do not agree (edited in the store since: the order decides which "
             "round is earlier)";
  if (!d.ok()) {
    *error = d.error();
    return *error;
  }
  return "";
}

bool import_package(Store& store, const rules::RuleSet& rules, const rules::RoundFacts& facts,
                    const std::string& org_dir, const ImportOptions& opt, ImportResult* out, std::string* error) {
  *out = ImportResult{};
  // A folder with results/ that holds no package (a report written there) is no organisation that passed.
  if (std::string why; !is_package(org_dir, &why)) {
    *error = org_dir + " is not a submission package: " + why + "; nothing was imported from it";
    return false;
  }
  rules::PackageOptions popt;
  popt.jobs = opt.jobs;
  popt.details = true;
  rules::PackageReport report;
  if (!rules::check_package(rules, facts, org_dir, popt, &report, error)) return false;
  out->organisation = report.package;
  out->verdict = report.pass ? "pass" : "fail";
  auto published = rules::score_package(report, facts, rules::ScaleMode::Published);
  auto pipeline = rules::score_package(report, facts, rules::ScaleMode::Pipeline);

  // Content hash over everything imported, so that re-importing the same bytes changes nothing.
  std::string manifest;
  std::map<std::string, std::string> system_json;
  for (const auto& s : report.systems) {
    const fs::path sp = fs::path(org_dir) / "systems" / s.name;
    fs::path real;
    // A description that leads outside the package is not read (the check refused it).
    std::string text = base::resolves_within(sp, org_dir, &real) ? slurp(sp) : std::string();
    system_json[s.name] = text;
    manifest += "systems/" + s.name + " " + base::sha256_hex(text) + "\n";
  }
  // A system's package_checker_params (its bypasses) decide verdicts too.
  std::set<std::string> system_params;
  for (const auto& d : report.benchmarks)
    if (system_params.insert(d.system).second) {
      fs::path p = fs::path(org_dir) / "results" / d.system / "package_checker_params";
      std::error_code ec;
      if (fs::exists(p, ec)) manifest += d.system + "/package_checker_params " + base::sha256_hex(slurp(p)) + "\n";
    }
  for (const auto& d : report.benchmarks) {
    for (const auto& f : d.files) manifest += d.key() + "/" + f.name + " " + f.sha256 + "\n";
    for (const char* extra : {"scaling.json", "package_checker_params"}) {
      fs::path p = fs::path(d.path) / extra;
      std::error_code ec;
      if (fs::exists(p, ec)) manifest += d.key() + "/" + extra + " " + base::sha256_hex(slurp(p)) + "\n";
    }
    // Power logs decide the energy figures.
    std::vector<std::string> power;
    std::error_code ec;
    fs::path pdir = fs::path(d.path) / "power";
    if (fs::is_directory(pdir, ec))
      for (auto it = fs::recursive_directory_iterator(pdir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec)) power.push_back(fs::relative(it->path(), d.path, ec).generic_string());
    std::sort(power.begin(), power.end());
    for (const auto& rel : power)
      manifest += d.key() + "/" + rel + " " + base::sha256_hex(slurp(fs::path(d.path) / rel)) + "\n";
  }
  std::string content_hash = base::sha256_hex(manifest);

  if (!store.begin(error)) return false;
  auto fail = [&](const std::string& msg) {
    store.rollback();
    *error = "import of " + org_dir + " failed, nothing was written: " + msg;
    return false;
  };
  const auto& id = rules.id();
  long long round_id = -1;
  {
    Stmt q(store.db(), "SELECT id FROM rounds WHERE name = ?1");
    q.bind(1, id.id());
    if (q.step()) {
      round_id = q.col_int(0);
    } else {
      Stmt ins(store.db(), "INSERT INTO rounds(name, usage, version, ordinal) VALUES (?1, ?2, ?3, ?4)");
      ins.bind(1, id.id()).bind(2, id.usage).bind(3, id.version).bind(4, ordinal_of(id.version));
      if (!ins.run()) return fail(ins.error());
      round_id = sqlite3_last_insert_rowid(store.db());
    }
  }
  // An organisation is one name whatever its case: a folder `azure` beside `Azure` in the store would make a
  // second submitter of the same organisation (its package not replaced, its review not followed).
  {
    Stmt q(store.db(), "SELECT name FROM organisations WHERE name = ?1 COLLATE NOCASE AND name <> ?1 LIMIT 1");
    q.bind(1, report.package);
    if (q.step())
      return fail("the folder " + report.package + " names an organisation the store holds as " + q.col_text(0) +
                  ": rename the folder " + q.col_text(0));
  }
  long long org_id = id_for(store, "SELECT id FROM organisations WHERE name = ?1",
                            "INSERT INTO organisations(name) VALUES (?1)", {report.package}, error);
  if (org_id < 0) return fail(*error);
  // The review state of the round: a final or published round is not changed.
  std::string review_state;
  {
    Stmt q(store.db(), "SELECT state FROM round_reviews WHERE round_id = ?1");
    q.bind(1, round_id);
    if (q.step()) review_state = q.col_text(0);
    else if (!q.ok()) return fail(q.error());
  }
  PackageChange change;
  change.round = id.id();
  change.organisation = report.package;
  change.new_sha256 = content_hash;
  std::map<std::string, ResultShape> results_before;
  bool repairing = false;  // the same files, rows edited in the store since: written again
  {
    Stmt q(store.db(), "SELECT id, content_sha256, ruleset_sha256 FROM packages WHERE round_id = ?1 AND organisation_id = ?2");
    q.bind(1, round_id).bind(2, org_id);
    if (q.step()) {
      if (q.col_text(1) == content_hash && q.col_text(2) == rules.sha256()) {
        // The same bytes under the same rules: nothing changes, except that
        // results imported before schema 6 get what the RCP check evaluated
        // (the same check of the same files), so the pages can draw it, and
        // those imported before schema 8 the checks that failed them.
        Stmt fill(store.db(),
                  "UPDATE results SET rcp_json = COALESCE(rcp_json, ?1), failed_checks = COALESCE(failed_checks, ?5) "
                  "WHERE (rcp_json IS NULL AND ?1 IS NOT NULL OR failed_checks IS NULL) AND benchmark = ?2 AND "
                  "system_id = (SELECT id FROM systems WHERE package_id = ?3 AND name = ?4)");
        long long pkg = q.col_int(0);
        for (const auto& d : report.benchmarks) {
          if (d.skipped || d.scaling == "weak") continue;
          std::string rj = rcp_json(d, rules, facts);
          fill.reset();
          if (rj.empty()) fill.bind_null(1); else fill.bind(1, rj);
          fill.bind(2, d.benchmark).bind(3, pkg).bind(4, d.system).bind(5, failed_checks_json(d));
          if (!fill.run()) return fail(fill.error());
          out->rcp_filled += sqlite3_changes(store.db());
        }
        bool edited = false;
        if (opt.recorded_rows) {
          const std::string recorded = opt.recorded_rows(id.id(), report.package);
          if (!recorded.empty()) {
            std::string have = package_rows_sha256(store, pkg, error);
            if (have.empty()) return fail(*error);
            edited = have != recorded;
          }
        }
        // The resubmission links of its runs, as its logs make them (a later round's import sets them too).
        std::string lerr;
        const bool relink = !check_resubmission_links(store, &lerr, pkg).empty();
        if (!lerr.empty()) return fail(lerr);
        if (!edited && relink) {
          if (!link_resubmissions(store, pkg, error)) return fail(*error);
          out->links_restored = true;
        }
        if (!edited) {
          if (out->rcp_filled == 0 && !relink) {
            store.rollback();
          } else if (!store.commit(error)) {
            return fail(*error);
          }
          out->status = "unchanged";
          return true;
        }
        out->rcp_filled = 0;
        repairing = true;
      }
      long long old = q.col_int(0);
      change.old_sha256 = q.col_text(1);
      results_before = result_shapes(store, old);
      // The review outlives a replaced package (a corrected package is how a
      // result gets fixed): what points at its results and runs is unlinked
      // here and linked again by name after the new rows are written. Audit
      // findings are linked again by their fingerprint when the audit runs.
      if (!unlink_review(store, old, error)) return fail(*error);
      Stmt del(store.db(), "DELETE FROM packages WHERE id = ?1");
      del.bind(1, old);
      if (!del.run()) return fail(del.error());
      out->status = repairing ? "repaired" : "replaced";
    } else {
      out->status = "imported";
    }
  }
  // Rows edited in the store are written again from the same files, except where the review's record of
  // the round is final: there a rewrite would renumber what its decisions and findings name.
  if ((review_state == "final" || review_state == "published") && repairing) {
    store.rollback();
    out->status.clear();
    *error = "the rows of " + report.package + " in " + id.id() + " were edited in the store after they were imported "
             "(they no longer match the digest the review log keeps), and the round's scores are " + review_state +
             ": referee does not rewrite them; restore the store from a copy (referee review log --verify names what "
             "differs)";
    return false;
  }
  if ((review_state == "final" || review_state == "published") && !repairing) {
    std::string what = out->status == "replaced" ? "replace the package of " + report.package + " in it"
                                                 : "add a package of " + report.package + " to it";
    std::string how = review_state == "final"
                          ? "the review committee can move the round back to review first (referee round state " +
                                id.id() + " review --reason \"...\"), then import the corrected package"
                          : "a published round is not changed; a corrected result goes into a later round";
    store.rollback();
    out->status.clear();
    *error = "import of " + org_dir + " refused, nothing was written: the scores of round " + id.id() + " are " +
             review_state + ", so referee does not " + what + "; " + how;
    return false;
  }
  change.status = out->status;
  // The rows are numbered in the round's own block (kIdsPerRound): a result's
  // number says nothing of the rounds imported before it.
  long long package_id = 0, next_system = 0, next_result = 0, next_run = 0;
  {
    std::string nerr;
    if (!(package_id = next_round_id(store, "packages", round_id, &nerr)) ||
        !(next_system = next_round_id(store, "systems", round_id, &nerr)) ||
        !(next_result = next_round_id(store, "results", round_id, &nerr)) ||
        !(next_run = next_round_id(store, "runs", round_id, &nerr)))
      return fail(nerr);
    const long long end = last_round_id(round_id);  // ids stay inside the round's block
    if (next_system + static_cast<long long>(published.rows.size()) > end + 1 ||
        next_result + static_cast<long long>(report.benchmarks.size()) > end + 1)
      return fail("round " + id.id() + " has no numbers left for another package in this store");
    Stmt ins(store.db(),
             "INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256, "
             "referee_version, imported_at, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    ins.bind(1, round_id).bind(2, org_id).bind(3, fs::absolute(org_dir).string()).bind(4, content_hash)
        .bind(5, out->verdict).bind(6, rules.sha256()).bind(7, std::string(REFEREE_VERSION)).bind(8, base::utc_now())
        .bind(9, package_id);
    if (!ins.run()) return fail(ins.error());
  }

  Stmt ins_system(store.db(),
                  "INSERT INTO systems(package_id, name, system_name, submitter, division, availability, number_of_nodes, "
                  "accelerators_per_node, accelerators_count, accelerator_model_name, host_processor_model_name, "
                  "host_processors_count, framework, valid, description_json, id) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  Stmt ins_result(store.db(),
                  "INSERT INTO results(system_id, benchmark, division, verdict, result_count, expected_count, seeds_ok, "
                  "rcp_status, rcp_pass, rcp_norm_factor, score_minutes, score_pipeline_minutes, unscaled_minutes, "
                  "published_factor, pipeline_factor, energy_joules, energy_pipeline_joules, energy_note, rcp_json, "
                  "failed_checks, id, consortium_stops) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)");
  Stmt ins_run(store.db(),
               "INSERT INTO runs(result_id, file, content_sha256, run_start_ms, run_stop_ms, minutes, converged, epochs, "
               "seed, compliant, counted, messages_json, fingerprint, dropped, energy_joules, id) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  Stmt ins_eval(store.db(),
                "INSERT INTO eval_points(run_id, seq, time_ms, epoch, samples, metric, value_json) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  long long runs_written = 0;
  std::map<std::string, long long> system_ids;
  for (const auto& row : published.rows) {
    std::string file = row.system_file + ".json";
    bool valid = true;
    for (const auto& s : report.systems)
      if (s.name == file) valid = s.valid;
    bool okv = false;
    std::string err;
    rules::Value desc = rules::value_from_json(system_json.count(file) ? system_json[file] : "{}", &okv, &err);
    long long per_node = row.accelerators_count;
    long long nodes = 0;
    if (okv && desc.kind == rules::VKind::Dict) {
      if (auto* n = desc.d().find_str("number_of_nodes")) nodes = std::atoll(rules::py_str(*n).c_str());
      if (auto* a = desc.d().find_str("accelerators_per_node")) per_node = std::atoll(rules::py_str(*a).c_str());
    }
    ins_system.reset();
    ins_system.bind(1, package_id).bind(2, row.system_file).bind(3, row.system).bind(4, row.submitter)
        .bind(5, row.division).bind(6, row.availability).bind(7, nodes).bind(8, per_node)
        .bind(9, row.accelerators_count).bind(10, row.accelerator_model_name).bind(11, row.host_processor_model_name)
        .bind(12, row.host_processors_count).bind(13, row.framework).bind(14, valid)
        .bind(15, system_json.count(file) ? system_json[file] : std::string("{}")).bind(16, next_system);
    if (!ins_system.run()) return fail(ins_system.error());
    system_ids[row.system_file] = next_system++;
  }
  Stmt ins_weak(store.db(),
                "INSERT INTO weak_results(system_id, benchmark, division, verdict, result_count, expected_count, "
                "seeds_ok, rcp_status, rcp_pass, number_of_models, instance_scale, time_to_train_all_minutes, note, "
                "failed_checks) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  Stmt ins_weak_run(store.db(),
                    "INSERT INTO weak_runs(weak_result_id, file, content_sha256, run_start_ms, run_stop_ms, seed, compliant, "
                    "counted, dropped, messages_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  // Where the consortium's package checker stops: on the whole package (a
  // system description it cannot read, a stray scaling folder), which leaves
  // none of its results checked, else on the directory or its power folder.
  auto checker_stops_of = [&report](const rules::BenchmarkDir& d) -> const std::string& {
    if (!report.consortium_stops.empty()) return report.consortium_stops;
    if (!d.consortium_stops.empty()) return d.consortium_stops;
    return d.power.consortium_stops;
  };
  for (const auto& d : report.benchmarks) {
    if (d.skipped) continue;
    auto sys = system_ids.find(d.system);
    if (sys == system_ids.end()) continue;  // no system description: nothing to attach it to
    const rules::BenchmarkScore* pub = nullptr;
    const rules::BenchmarkScore* pipe = nullptr;
    for (const auto& row : published.rows)
      for (const auto& s : row.scores)
        if (s.system == d.system && s.benchmark == d.benchmark && s.scaling == d.scaling) pub = &s;
    for (const auto& row : pipeline.rows)
      for (const auto& s : row.scores)
        if (s.system == d.system && s.benchmark == d.benchmark && s.scaling == d.scaling) pipe = &s;
    if (d.scaling == "weak") {
      // MLPerf HPC weak scaling: one row of the summarizer's weak table.
      ins_weak.reset();
      ins_weak.bind(1, sys->second).bind(2, d.benchmark).bind(3, d.division).bind(4, std::string(d.pass ? "pass" : "fail"))
          .bind(5, d.result_count).bind(6, d.expected_count);
      if (d.seeds_checked) ins_weak.bind(7, d.seeds_ok); else ins_weak.bind_null(7);
      if (d.rcp_checked) ins_weak.bind(8, d.rcp.status).bind(9, d.rcp.pass); else ins_weak.bind_null(8).bind_null(9);
      if (pub && pub->has_score) {
        ins_weak.bind(10, static_cast<long long>(pub->number_of_models)).bind(12, pub->time_to_train_all_minutes);
        if (pub->has_instance_scale) ins_weak.bind(11, pub->instance_scale); else ins_weak.bind_null(11);
      } else {
        ins_weak.bind_null(10).bind_null(11).bind_null(12);
      }
      std::string note = pub ? pub->note : "";
      if (pub && !pub->consortium_stops.empty())
        note += std::string(note.empty() ? "" : "; ") + "the consortium's summarizer stops here: " + pub->consortium_stops;
      const std::string& checker_stops = checker_stops_of(d);
      if (!checker_stops.empty())
        note += std::string(note.empty() ? "" : "; ") + "the consortium's package checker stops here: " + checker_stops;
      if (note.empty()) ins_weak.bind_null(13); else ins_weak.bind(13, note);
      ins_weak.bind(14, failed_checks_json(d));
      if (!ins_weak.run()) return fail(ins_weak.error());
      ++out->weak_results;
      const long long weak_id = sqlite3_last_insert_rowid(store.db());
      for (const auto& f : d.files) {
        const rules::RunScore* scored = nullptr;
        if (pub)
          for (const auto& r : pub->runs)
            if (r.file == f.name) scored = &r;
        ins_weak_run.reset();
        ins_weak_run.bind(1, weak_id).bind(2, f.name).bind(3, f.sha256);
        if (f.has_times) ins_weak_run.bind(4, f.run_start_ms).bind(5, f.run_stop_ms); else ins_weak_run.bind_null(4).bind_null(5);
        if (!f.seeds.empty()) ins_weak_run.bind(6, static_cast<long long>(f.seeds[0].seed)); else ins_weak_run.bind_null(6);
        ins_weak_run.bind(7, f.verdict.compliant).bind(8, scored && scored->counted);
        if (scored && !scored->dropped.empty()) ins_weak_run.bind(9, scored->dropped); else ins_weak_run.bind_null(9);
        ins_weak_run.bind(10, findings_json(f.verdict.errors));
        if (!ins_weak_run.run()) return fail(ins_weak_run.error());
        ++out->weak_runs;
      }
      continue;
    }
    ins_result.reset();
    ins_result.bind(1, sys->second).bind(2, d.benchmark).bind(3, d.division).bind(4, std::string(d.pass ? "pass" : "fail"))
        .bind(5, d.result_count).bind(6, d.expected_count);
    if (d.seeds_checked) ins_result.bind(7, d.seeds_ok); else ins_result.bind_null(7);
    if (d.rcp_checked) ins_result.bind(8, d.rcp.status).bind(9, d.rcp.pass).bind(10, d.rcp.norm_factor);
    else ins_result.bind_null(8).bind_null(9).bind_null(10);
    if (pub && pub->has_score) ins_result.bind(11, pub->score).bind(13, pub->unscaled); else ins_result.bind_null(11).bind_null(13);
    if (pipe && pipe->has_score) ins_result.bind(12, pipe->score); else ins_result.bind_null(12);
    if (pub) ins_result.bind(14, pub->has_published_factor ? pub->published_factor : 1.0).bind(15, pub->pipeline_factor);
    else ins_result.bind_null(14).bind_null(15);
    if (pub && pub->has_energy) ins_result.bind(16, pub->energy_j); else ins_result.bind_null(16);
    if (pipe && pipe->has_energy) ins_result.bind(17, pipe->energy_j); else ins_result.bind_null(17);
    if (pub && pub->has_power && !pub->has_energy) ins_result.bind(18, pub->energy_note); else ins_result.bind_null(18);
    if (std::string rj = rcp_json(d, rules, facts); !rj.empty()) ins_result.bind(19, rj); else ins_result.bind_null(19);
    ins_result.bind(20, failed_checks_json(d)).bind(21, next_result);
    const std::string& checker_stops = checker_stops_of(d);
    if (checker_stops.empty()) ins_result.bind_null(22); else ins_result.bind(22, checker_stops);
    if (!ins_result.run()) return fail(ins_result.error());
    long long result_id = next_result++;
    ++out->results;
    for (const auto& f : d.files) {
      bool counted = false;
      std::string drop_kind;
      const rules::RunScore* scored = nullptr;
      if (pub)
        for (const auto& r : pub->runs)
          if (r.file == f.name) {
            counted = r.counted;
            drop_kind = r.drop_kind;
            scored = &r;
          }
      ins_run.reset();
      ins_run.bind(1, result_id).bind(2, f.name).bind(3, f.sha256);
      if (f.has_times)
        ins_run.bind(4, f.run_start_ms).bind(5, f.run_stop_ms).bind(6, (f.run_stop_ms - f.run_start_ms) / 60 / 1000);
      else
        ins_run.bind_null(4).bind_null(5).bind_null(6);
      ins_run.bind(7, f.convergence.converged);
      if (f.convergence.converged) ins_run.bind(8, f.convergence.epochs); else ins_run.bind_null(8);
      if (!f.seeds.empty()) ins_run.bind(9, static_cast<long long>(f.seeds[0].seed)); else ins_run.bind_null(9);
      ins_run.bind(10, f.verdict.compliant).bind(11, counted).bind(12, findings_json(f.verdict.errors)).bind(13, f.fingerprint);
      if (drop_kind.empty()) ins_run.bind_null(14); else ins_run.bind(14, drop_kind);
      if (scored && scored->has_energy) ins_run.bind(15, scored->energy_j); else ins_run.bind_null(15);
      if (next_run > last_round_id(round_id)) return fail("round " + id.id() + " has no numbers left for its runs");
      ins_run.bind(16, next_run);
      if (!ins_run.run()) return fail(ins_run.error());
      long long run_id = next_run++;
      ++out->runs;
      long long seq = 0;
      for (const auto& p : f.evals) {
        ins_eval.reset();
        ins_eval.bind(1, run_id).bind(2, seq++).bind(3, p.time_ms);
        if (p.has_epoch) ins_eval.bind(4, p.epoch); else ins_eval.bind_null(4);
        if (p.has_samples) ins_eval.bind(5, p.samples); else ins_eval.bind_null(5);
        if (p.has_metric) ins_eval.bind(6, p.metric); else ins_eval.bind_null(6);
        ins_eval.bind(7, p.value_json);
        if (!ins_eval.run()) return fail(ins_eval.error());
      }
      ++runs_written;
      if (opt.fail_after_runs && runs_written == opt.fail_after_runs_count) {
        opt.fail_after_runs();  // tests: simulate a crash in the middle
        return fail("interrupted");
      }
    }
  }
  if ((out->status == "replaced" || out->status == "repaired") && !relink_review(store, package_id, error)) return fail(*error);
  if (!link_resubmissions(store, package_id, error)) return fail(*error);
  {
    Stmt count(store.db(), R"sql(SELECT COUNT(*) FROM runs r JOIN results x ON r.result_id = x.id
                                  JOIN systems s ON x.system_id = s.id
                                  WHERE s.package_id = ?1 AND r.resubmission_of IS NOT NULL)sql");
    count.bind(1, package_id);
    if (count.step()) out->resubmitted_runs = static_cast<int>(count.col_int(0));
  }
  // Recorded: every package added or replaced, with the digest of the rows it left, so that
  // `review log --verify` finds a score, verdict or run edited in the store afterwards.
  if (opt.record_change) {
    describe_changes(results_before, result_shapes(store, package_id), &change);
    change.rows_sha256 = package_rows_sha256(store, package_id, error);
    if (change.rows_sha256.empty()) return fail(*error);
    if (!opt.record_change(change, error)) return fail(*error);
  }
  if (!store.commit(error)) return fail(*error);
  return true;
}

}  // namespace referee::submissions
