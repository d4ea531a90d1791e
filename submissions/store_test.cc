// The store: idempotent imports, crash safety, concurrent writers,
// migrations, and the headline figures of round 3.1 from the reference data.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <fstream>

#include "mllog/json.h"
#include "rules/facts.h"
#include "rules/source.h"
#include "submissions/import.h"
#include "submissions/queries.h"
#include "submissions/store.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::submissions;

namespace {

using testing::TempDir;

long long count(Store& s, const char* table) {
  Stmt st(s.db(), (std::string("SELECT COUNT(*) FROM ") + table).c_str());
  REQUIRE(st.step());
  return st.col_int(0);
}

struct Mini {
  std::unique_ptr<rules::RuleSet> rules;
  rules::RoundFacts facts;
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  Mini() {
    std::string error;
    rules::RuleSource src;
    rules = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rules, error);
    REQUIRE(rules::facts_for(*rules, &facts, &error));
  }
};

// A copy of the example package under another organisation name.
std::string copy_package(const fs::path& dir, const std::string& from, const std::string& org) {
  fs::path to = dir / org;
  fs::copy(from, to, fs::copy_options::recursive);
  return to.string();
}

// Every row of every table, as text, leaving out the columns named in `skip`.
std::string dump(Store& s, const std::vector<std::string>& skip = {}) {
  std::string out;
  Stmt tables(s.db(), "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (tables.step()) {
    std::string t = tables.col_text(0);
    if (std::find(skip.begin(), skip.end(), "table " + t) != skip.end()) continue;  // a table a migration added
    std::vector<std::string> cols;
    std::string pragma = "PRAGMA table_info(";
    pragma.append(t).append(")");
    Stmt info(s.db(), pragma.c_str());
    while (info.step())
      if (std::find(skip.begin(), skip.end(), info.col_text(1)) == skip.end()) cols.push_back(info.col_text(1));
    std::string sql = "SELECT ";
    sql.reserve(256);
    for (size_t i = 0; i < cols.size(); ++i) {
      sql.append(i ? ", quote(" : "quote(");
      sql.append(cols[i]);
      sql.append(")");
    }
    sql.append(" FROM ").append(t).append(" ORDER BY 1, 2");
    Stmt rows(s.db(), sql.c_str());
    out.append("[").append(t).append("]\n");
    while (rows.step()) {
      for (size_t i = 0; i < cols.size(); ++i) {
        if (i) out.append("|");
        out.append(rows.col_text(static_cast<int>(i)));
      }
      out.append("\n");
    }
    REQUIRE_MESSAGE(rows.ok(), rows.error());
  }
  return out;
}

// results.rcp_json by "system/benchmark" ("NULL" where it is NULL).
std::map<std::string, std::string> rcp_jsons(Store& s, const std::string& column = "rcp_json") {
  std::map<std::string, std::string> out;
  const std::string sql = "SELECT y.name || '/' || x.benchmark, x." + column + " FROM results x JOIN systems y ON y.id = x.system_id";
  Stmt q(s.db(), sql.c_str());
  while (q.step()) out[q.col_text(0)] = q.col_null(1) ? "NULL" : q.col_text(1);
  return out;
}

double num(const mllog::Json& j, const char* key) {
  const mllog::Json* v = j.find(key);
  REQUIRE_MESSAGE(v, key);
  REQUIRE_MESSAGE((v->kind == mllog::Json::Kind::Float || v->kind == mllog::Json::Kind::Int), key);
  return v->kind == mllog::Json::Kind::Int ? static_cast<double>(v->i) : v->f;
}

}  // namespace

TEST_SUITE("store") {
  TEST_CASE("a store of schema version 2 gets the drop reasons of its runs filled in") {
    TempDir t;
    std::string db = (t.path / "v2.db").string();
    {
      std::string error;
      auto s = Store::open(db, &error);
      REQUIRE(s);
      // Back to version 2 as it shipped: no review tables of schema 5 (the
      // schema-2 ones instead), no runs.dropped column (3), no energy columns (4).
      REQUIRE(s->exec("DROP TABLE weak_runs; DROP TABLE weak_results; ALTER TABLE results DROP COLUMN consortium_stops; DROP TABLE webhook_deliveries; DROP TABLE webhooks; DROP TABLE fix_deliveries; DROP TABLE meetings; DROP TABLE comments; DROP TABLE extensions; DROP TABLE events; DROP TABLE result_status; DROP TABLE decisions; DROP TABLE votes; "
                      "DROP TABLE responses; DROP TABLE evidence; DROP TABLE objection_results; DROP TABLE objections; "
                      "DROP TABLE announcements; DROP TABLE findings; DROP TABLE pairings; DROP TABLE round_reviews; "
                      "DROP TABLE tokens; DROP TABLE users; "
                      "CREATE TABLE reviewers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, organisation_id INTEGER); "
                      "CREATE TABLE reviews (id INTEGER PRIMARY KEY, result_id INTEGER NOT NULL); "
                      "CREATE TABLE objections (id INTEGER PRIMARY KEY, result_id INTEGER NOT NULL, text TEXT); "
                      "CREATE TABLE responses (id INTEGER PRIMARY KEY, objection_id INTEGER NOT NULL); "
                      "CREATE TABLE decisions (id INTEGER PRIMARY KEY, objection_id INTEGER NOT NULL); "
                      "DROP INDEX runs_summary; ALTER TABLE runs DROP COLUMN dropped; ALTER TABLE runs DROP COLUMN energy_joules; "
                      "ALTER TABLE results DROP COLUMN energy_joules; ALTER TABLE results DROP COLUMN energy_pipeline_joules; "
                      "ALTER TABLE results DROP COLUMN energy_note; ALTER TABLE results DROP COLUMN rcp_json; "
                      "ALTER TABLE results DROP COLUMN failed_checks; PRAGMA user_version = 2;",
                      &error));
      REQUIRE(s->exec(R"sql(
        INSERT INTO rounds(name, usage, version, ordinal) VALUES ('training-3.0.0', 'training', '3.0.0', 3000000);
        INSERT INTO organisations(name) VALUES ('O');
        INSERT INTO packages VALUES (1, 1, 1, '/x', 'h', 'pass', 'r', 'v', 't');
        INSERT INTO systems(id, package_id, name, valid, description_json) VALUES (1, 1, 's', 1, '{}');
        INSERT INTO results(id, system_id, benchmark, verdict, score_minutes) VALUES (1, 1, 'bert', 'pass', 1.0);
        INSERT INTO runs(result_id, file, content_sha256, fingerprint, minutes, compliant, counted, messages_json) VALUES
          (1, 'a', 'c', 'f1', 1.0, 1, 1, '[]'), (1, 'b', 'c', 'f2', 0.5, 1, 0, '[]'), (1, 'c', 'c', 'f3', NULL, 0, 0, '[]');
      )sql", &error));
    }
    std::string error;
    auto s = Store::open(db, &error);
    REQUIRE_MESSAGE(s, error);
    CHECK(s->schema_version() == kSchemaVersion);
    Stmt st(s->db(), "SELECT file, dropped FROM runs ORDER BY file");
    std::vector<std::string> got;
    while (st.step()) got.push_back(st.col_text(0) + "=" + (st.col_null(1) ? "null" : st.col_text(1)));
    CHECK(got == std::vector<std::string>{"a=null", "b=olympic", "c=noncompliant"});
  }

  TEST_CASE("a question reads a store of an older schema as it is, without migrating it") {
    TempDir t;
    std::string db = (t.path / "v2.db").string();
    {
      std::string error;
      auto s = Store::open(db, &error);
      REQUIRE(s);
      REQUIRE(s->exec("DROP INDEX runs_summary; ALTER TABLE runs DROP COLUMN dropped; ALTER TABLE runs DROP COLUMN energy_joules; "
                      "ALTER TABLE results DROP COLUMN energy_joules; ALTER TABLE results DROP COLUMN energy_pipeline_joules; "
                      "ALTER TABLE results DROP COLUMN energy_note; ALTER TABLE results DROP COLUMN rcp_json; "
                      "ALTER TABLE results DROP COLUMN failed_checks; PRAGMA user_version = 2;",
                      &error));
      REQUIRE(s->exec(R"sql(
        INSERT INTO rounds(name, usage, version, ordinal) VALUES ('training-3.0.0', 'training', '3.0.0', 3000000);
        INSERT INTO organisations(name) VALUES ('O');
        INSERT INTO packages VALUES (1, 1, 1, '/x', 'h', 'pass', 'r', 'v', 't');
        INSERT INTO systems(id, package_id, name, submitter, division, valid, description_json)
          VALUES (1, 1, 's', 'O', 'closed', 1, '{}');
        INSERT INTO results(id, system_id, benchmark, division, verdict, score_minutes) VALUES (1, 1, 'bert', 'closed', 'pass', 1.0);
        INSERT INTO runs(result_id, file, content_sha256, fingerprint, minutes, compliant, counted, messages_json) VALUES
          (1, 'a', 'c', 'f1', 1.0, 1, 1, '[]'), (1, 'b', 'c', 'f2', 0.5, 1, 0, '[]'), (1, 'c', 'c', 'f3', NULL, 0, 0, '[]');
      )sql", &error));
    }
    auto bytes = testing::read_file(db);
    std::string error;
    {
      auto s = Store::open(db, &error, OpenMode::ReadOnly);
      REQUIRE_MESSAGE(s, error);
      CHECK(s->opened_version() == 2);
      auto rows = results_for(*s, {"3.0.0", "BERT", "", false}, &error);
      REQUIRE_MESSAGE(rows.size() == 1, error);
      CHECK(rows[0].run_files == std::vector<std::string>{"a", "c", "b"});  // counted first, then by time (none first)
      CHECK(rows[0].run_dropped == std::vector<std::string>{"", "noncompliant", "olympic"});
    }
    CHECK(testing::read_file(db) == bytes);  // not migrated, not touched
  }

  TEST_CASE("a new store has the current schema, WAL and foreign keys") {
    TempDir t;
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE_MESSAGE(s, error);
    CHECK(s->schema_version() == kSchemaVersion);
    Stmt wal(s->db(), "PRAGMA journal_mode");
    REQUIRE(wal.step());
    CHECK(wal.col_text(0) == "wal");
    Stmt fk(s->db(), "PRAGMA foreign_keys");
    REQUIRE(fk.step());
    CHECK(fk.col_int(0) == 1);
  }

  TEST_CASE("importing the same package twice changes nothing") {
    Mini m;
    TempDir t;
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error), error);
    CHECK(r.status == "imported");
    CHECK(r.results == 2);
    CHECK(r.runs == 10);
    long long runs = count(*s, "runs"), points = count(*s, "eval_points"), results = count(*s, "results");
    CHECK(points > 0);
    REQUIRE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error));
    CHECK(r.status == "unchanged");
    CHECK(count(*s, "runs") == runs);
    CHECK(count(*s, "eval_points") == points);
    CHECK(count(*s, "results") == results);
    CHECK(count(*s, "packages") == 1);
  }

  TEST_CASE("energy to train is stored for a directory with power results; adding them changes the package") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    auto energy = [&](const char* bench, const char* column) {
      Stmt q(s->db(), (std::string("SELECT ") + column + ", score_minutes FROM results WHERE benchmark = ?1").c_str());
      q.bind(1, std::string(bench));
      REQUIRE(q.step());
      return std::make_pair(q.col_null(0) ? -1.0 : q.col_double(0), q.col_double(1));
    };
    CHECK(energy("minilm", "energy_joules").first == -1.0);  // no power results: NULL
    // A constant 250 W on each of two nodes, read every second over each run:
    // each run's energy is 2 x 250 W x its time to train, so the directory's
    // figure is 500 W x 60 s/min x its score in minutes.
    fs::path bench = fs::path(pkg) / "results/cpu_2x_example/minilm";
    for (int i = 0; i < 5; ++i) {
      std::string name = "result_" + std::to_string(i);
      std::string log = testing::read_file(bench / (name + ".txt"));
      auto time_of = [&](const std::string& key) {
        size_t k = log.find("\"key\": \"" + key + "\"");
        size_t t0 = log.rfind("\"time_ms\": ", k);
        return std::atoll(log.c_str() + t0 + 11);
      };
      long long start = time_of("run_start"), stop = time_of("run_stop");
      for (int node = 0; node < 2; ++node) {
        std::string text = ":::MLLOG {\"time_ms\": " + std::to_string(start) +
                           ", \"key\": \"power_measurement_start\", \"value\": null, \"metadata\": {}}\n";
        for (long long tm = start; tm < stop;) {
          tm = std::min(tm + 1000, stop);
          text += ":::MLLOG {\"time_ms\": " + std::to_string(tm) +
                  ", \"key\": \"power_reading\", \"value\": 250, \"metadata\": {}}\n";
        }
        text += ":::MLLOG {\"time_ms\": " + std::to_string(stop) +
                ", \"key\": \"power_measurement_stop\", \"value\": null, \"metadata\": {}}\n";
        testing::write_file(bench / "power" / name / ("node_" + std::to_string(node) + ".txt"), text);
      }
    }
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error), error);
    CHECK(r.status != "unchanged");
    auto [joules, minutes] = energy("minilm", "energy_joules");
    CHECK(joules == doctest::Approx(500.0 * 60 * minutes).epsilon(1e-12));
    CHECK(energy("minilm", "energy_pipeline_joules").first == doctest::Approx(joules));
    CHECK(energy("miniclf", "energy_joules").first == -1.0);
    Stmt runs(s->db(), "SELECT COUNT(*) FROM runs r JOIN results x ON r.result_id = x.id "
                       "WHERE x.benchmark = 'minilm' AND r.energy_joules > 0");
    REQUIRE(runs.step());
    CHECK(runs.col_int(0) == 5);
  }

  TEST_CASE("a changed package is replaced whole") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    fs::remove(fs::path(pkg) / "results/cpu_2x_example/miniclf/result_4.txt");
    REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    CHECK(r.status == "replaced");
    CHECK(count(*s, "packages") == 1);
    CHECK(count(*s, "runs") == 9);
    Stmt v(s->db(), "SELECT verdict FROM results WHERE benchmark = 'miniclf'");
    REQUIRE(v.step());
    CHECK(v.col_text(0) == "fail");  // 4 of 5 runs
  }

  TEST_CASE("a replaced package keeps the review of its results: objections, status, evidence, announcements") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    REQUIRE_MESSAGE(s->exec(R"sql(
      INSERT INTO organisations(name) VALUES ('Other');
      INSERT INTO users(id, name, organisation_id, role, created_at) VALUES (1, 'u', 2, 'member', 't');
      INSERT INTO objections(id, round_id, by_org, against_org, filed_by, title, rule, text, state, created_at)
        VALUES (7, 1, 2, 1, 1, 'T', 'R', 'X', 'decided', 't');
      INSERT INTO objection_results SELECT 7, id FROM results;
      INSERT INTO result_status SELECT id, 'normalised', 1.5, 7, NULL, 't' FROM results WHERE benchmark = 'minilm';
      INSERT INTO announcements(round_id, organisation_id, result_id, text, user_id, created_at)
        SELECT 1, 1, id, 'resubmitted', 1, 't' FROM results WHERE benchmark = 'miniclf';
      INSERT INTO evidence(objection_id, kind, run_id, first_line, last_line, quoted, user_id, created_at)
        SELECT 7, 'lines', r.id, 1, 2, 'q', 1, 't' FROM runs r JOIN results x ON x.id = r.result_id
        WHERE x.benchmark = 'miniclf' AND r.file = 'result_0.txt';
    )sql", &error), error);
    fs::remove(fs::path(pkg) / "results/cpu_2x_example/miniclf/result_4.txt");
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error), error);
    CHECK(r.status == "replaced");
    // Every link points at the new rows, matched by system, benchmark and file.
    CHECK(count(*s, "objection_results") == 2);
    Stmt links(s->db(), "SELECT COUNT(*) FROM objection_results o JOIN results x ON x.id = o.result_id");
    REQUIRE(links.step());
    CHECK(links.col_int(0) == 2);
    Stmt st(s->db(), "SELECT x.benchmark, t.status, t.factor FROM result_status t JOIN results x ON x.id = t.result_id");
    REQUIRE(st.step());
    CHECK(st.col_text(0) == "minilm");
    CHECK(st.col_text(1) == "normalised");
    CHECK(st.col_double(2) == doctest::Approx(1.5));
    Stmt a(s->db(), "SELECT x.benchmark FROM announcements a JOIN results x ON x.id = a.result_id");
    REQUIRE(a.step());
    CHECK(a.col_text(0) == "miniclf");
    Stmt e(s->db(), "SELECT r.file FROM evidence e JOIN runs r ON r.id = e.run_id JOIN results x ON x.id = r.result_id "
                    "WHERE x.benchmark = 'miniclf'");
    REQUIRE(e.step());
    CHECK(e.col_text(0) == "result_0.txt");
    // A run the new package no longer has loses its evidence link, not the evidence.
    REQUIRE(s->exec("UPDATE evidence SET run_id = (SELECT r.id FROM runs r JOIN results x ON x.id = r.result_id "
                    "WHERE x.benchmark = 'miniclf' AND r.file = 'result_3.txt');", &error));
    fs::remove(fs::path(pkg) / "results/cpu_2x_example/miniclf/result_3.txt");
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error), error);
    CHECK(count(*s, "evidence") == 1);
    Stmt gone(s->db(), "SELECT run_id IS NULL, quoted FROM evidence");
    REQUIRE(gone.step());
    CHECK(gone.col_int(0) == 1);
    CHECK(gone.col_text(1) == "q");
    // A result an objection names cannot leave the store: the import is refused, nothing changes.
    long long packages_before = count(*s, "packages"), results_before = count(*s, "results");
    fs::remove_all(fs::path(pkg) / "results/cpu_2x_example/minilm");
    error.clear();
    CHECK_FALSE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    CHECK(error.find("the new package has no cpu_2x_example/minilm, which objection 7 names") != std::string::npos);
    CHECK(count(*s, "packages") == packages_before);
    CHECK(count(*s, "results") == results_before);
    CHECK(count(*s, "objection_results") == 2);
    CHECK(count(*s, "result_status") == 1);
  }

  TEST_CASE("a round whose scores are final or published is not changed by an import") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string other = copy_package(t.path, m.example, "OtherOrg");
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
    Stmt h0(s->db(), "SELECT content_sha256 FROM packages");
    REQUIRE(h0.step());
    std::string before = h0.col_text(0);
    h0.reset();
    fs::remove(fs::path(pkg) / "results/cpu_2x_example/miniclf/result_4.txt");
    for (const char* state : {"final", "published"}) {
      CAPTURE(state);
      std::string sql =
          std::string("DELETE FROM round_reviews; INSERT INTO round_reviews(round_id, state) VALUES (1, '") + state + "');";
      REQUIRE(s->exec(sql.c_str(), &error));
      error.clear();
      CHECK_FALSE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
      CHECK(error.find("are " + std::string(state)) != std::string::npos);
      if (std::string(state) == "final") CHECK(error.find("round state mini-1.0.0 review --reason") != std::string::npos);
      error.clear();
      CHECK_FALSE(import_package(*s, *m.rules, m.facts, other, {}, &r, &error));  // nor is one added
      CHECK(count(*s, "packages") == 1);
      CHECK(count(*s, "runs") == 10);
      REQUIRE(h0.step());
      CHECK(h0.col_text(0) == before);
      h0.reset();
    }
    // In review a replacement goes through, and the caller is told what changed, inside the transaction.
    REQUIRE(s->exec("UPDATE round_reviews SET state = 'review';", &error));
    std::vector<PackageChange> changes;
    ImportOptions opt;
    opt.record_change = [&](const PackageChange& c, std::string*) {
      changes.push_back(c);
      return true;
    };
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, opt, &r, &error), error);
    CHECK(r.status == "replaced");
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].status == "replaced");
    CHECK(changes[0].organisation == "ExampleOrg");
    CHECK(changes[0].old_sha256 == before);
    CHECK(changes[0].new_sha256 != before);
    REQUIRE(changes[0].results_changed.size() == 1);
    CHECK(changes[0].results_changed[0].find("cpu_2x_example/miniclf: pass") == 0);
    // A hook that fails rolls the import back.
    opt.record_change = [](const PackageChange&, std::string* e) {
      *e = "no log";
      return false;
    };
    error.clear();
    CHECK_FALSE(import_package(*s, *m.rules, m.facts, other, opt, &r, &error));
    CHECK(count(*s, "packages") == 1);
  }

  TEST_CASE("a store of schema 5 whose review tables are missing is damaged") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string error;
    std::string db = (t.path / "a.db").string();
    {
      auto s = Store::open(db, &error);
      REQUIRE(s);
      ImportResult r;
      REQUIRE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error));
      REQUIRE(s->exec("DROP TABLE result_status; DROP TABLE votes;", &error));
    }
    error.clear();
    CHECK_FALSE(Store::open(db, &error));
    CHECK(error.find("damaged: review table(s) votes, result_status missing") != std::string::npos);
  }

  TEST_CASE("a failure in the middle of an import leaves no partial rows") {
    Mini m;
    TempDir t;
    std::string db = (t.path / "a.db").string();
    std::string error;
    {
      auto s = Store::open(db, &error);
      REQUIRE(s);
      ImportOptions opt;
      opt.fail_after_runs_count = 3;
      opt.fail_after_runs = [] {};
      ImportResult r;
      CHECK_FALSE(import_package(*s, *m.rules, m.facts, m.example, opt, &r, &error));
      CHECK(error.find("nothing was written") != std::string::npos);
      CHECK(count(*s, "packages") == 0);
      CHECK(count(*s, "runs") == 0);
    }
    // A process killed in the middle of its transaction: SQLite's journal undoes it.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      std::string e;
      auto s = Store::open(db, &e);
      ImportOptions opt;
      opt.fail_after_runs_count = 4;
      opt.fail_after_runs = [] { _exit(42); };  // no rollback, no close: as a kill -9
      ImportResult r;
      import_package(*s, *m.rules, m.facts, m.example, opt, &r, &e);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 42);
    auto s = Store::open(db, &error);
    REQUIRE_MESSAGE(s, error);
    CHECK(count(*s, "packages") == 0);
    CHECK(count(*s, "systems") == 0);
    CHECK(count(*s, "results") == 0);
    CHECK(count(*s, "runs") == 0);
    CHECK(count(*s, "eval_points") == 0);
    ImportResult r;
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error), error);
    CHECK(count(*s, "runs") == 10);
  }

  TEST_CASE("two processes importing at once both succeed") {
    Mini m;
    TempDir t;
    std::string db = (t.path / "a.db").string();
    std::vector<std::string> pkgs;
    for (int i = 0; i < 4; ++i) pkgs.push_back(copy_package(t.path, m.example, "Org" + std::to_string(i)));
    {
      std::string error;
      REQUIRE(Store::open(db, &error));  // created before the race, as a user's first import would
    }
    std::vector<pid_t> kids;
    for (int k = 0; k < 2; ++k) {
      pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        std::string e;
        auto s = Store::open(db, &e);
        if (!s) _exit(10);
        for (int i = k; i < 4; i += 2) {
          ImportResult r;
          if (!import_package(*s, *m.rules, m.facts, pkgs[static_cast<size_t>(i)], {}, &r, &e)) _exit(11);
        }
        _exit(0);
      }
      kids.push_back(pid);
    }
    for (pid_t p : kids) {
      int status = 0;
      waitpid(p, &status, 0);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    std::string error;
    auto s = Store::open(db, &error);
    REQUIRE(s);
    CHECK(count(*s, "packages") == 4);
    CHECK(count(*s, "organisations") == 4);
    CHECK(count(*s, "runs") == 40);
  }

  TEST_CASE("a database written by schema version 1 is migrated, its data kept") {
    TempDir t;
    std::string db = (t.path / "old.db").string();
    {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
      // Version 1 as it shipped: the tables below and user_version 1.
      const char* v1 = R"sql(
        CREATE TABLE rounds (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, usage TEXT NOT NULL,
                             version TEXT NOT NULL, ordinal INTEGER NOT NULL);
        CREATE TABLE organisations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE packages (id INTEGER PRIMARY KEY, round_id INTEGER NOT NULL REFERENCES rounds(id),
          organisation_id INTEGER NOT NULL REFERENCES organisations(id), path TEXT NOT NULL,
          content_sha256 TEXT NOT NULL, verdict TEXT NOT NULL, ruleset_sha256 TEXT NOT NULL,
          referee_version TEXT NOT NULL, imported_at TEXT NOT NULL, UNIQUE (round_id, organisation_id));
        CREATE TABLE systems (id INTEGER PRIMARY KEY, package_id INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
          name TEXT NOT NULL, system_name TEXT, submitter TEXT, division TEXT, availability TEXT, number_of_nodes INTEGER,
          accelerators_per_node INTEGER, accelerators_count INTEGER, accelerator_model_name TEXT,
          host_processor_model_name TEXT, host_processors_count INTEGER, framework TEXT, valid INTEGER NOT NULL,
          description_json TEXT NOT NULL, UNIQUE (package_id, name));
        CREATE TABLE results (id INTEGER PRIMARY KEY, system_id INTEGER NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
          benchmark TEXT NOT NULL, division TEXT, verdict TEXT NOT NULL, result_count INTEGER, expected_count INTEGER,
          seeds_ok INTEGER, rcp_status TEXT, rcp_pass INTEGER, rcp_norm_factor REAL, score_minutes REAL,
          score_pipeline_minutes REAL, unscaled_minutes REAL, published_factor REAL, pipeline_factor REAL,
          resubmission INTEGER NOT NULL DEFAULT 0, UNIQUE (system_id, benchmark));
        CREATE TABLE runs (id INTEGER PRIMARY KEY, result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
          file TEXT NOT NULL, content_sha256 TEXT NOT NULL, fingerprint TEXT NOT NULL, run_start_ms REAL,
          run_stop_ms REAL, minutes REAL, converged INTEGER, epochs REAL, seed INTEGER, compliant INTEGER NOT NULL,
          counted INTEGER NOT NULL, messages_json TEXT NOT NULL,
          resubmission_of INTEGER REFERENCES runs(id) ON DELETE SET NULL, UNIQUE (result_id, file));
        CREATE INDEX runs_by_fingerprint ON runs(fingerprint);
        CREATE TABLE eval_points (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
          time_ms REAL NOT NULL, epoch REAL, samples REAL, metric REAL, value_json TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
        INSERT INTO rounds(name, usage, version, ordinal) VALUES ('training-3.0.0', 'training', '3.0.0', 3000000);
        INSERT INTO organisations(name) VALUES ('OldOrg');
        PRAGMA user_version = 1;
      )sql";
      char* msg = nullptr;
      REQUIRE_MESSAGE(sqlite3_exec(raw, v1, nullptr, nullptr, &msg) == SQLITE_OK, (msg ? msg : ""));
      sqlite3_close(raw);
    }
    std::string error;
    auto s = Store::open(db, &error);
    REQUIRE_MESSAGE(s, error);
    CHECK(s->schema_version() == kSchemaVersion);
    CHECK(count(*s, "rounds") == 1);
    CHECK(count(*s, "organisations") == 1);
    CHECK(count(*s, "objections") == 0);  // the review tables exist now
    CHECK(count(*s, "decisions") == 0);
  }

  TEST_CASE("schema 5 -> 8 keeps every row, rcp_json and failed_checks NULL; an unchanged re-import fills them and changes "
            "nothing else") {
    Mini m;
    TempDir t;
    std::string db = (t.path / "v5.db").string();
    std::string error;
    std::map<std::string, std::string> fresh, checks;
    {
      auto s = Store::open(db, &error);
      REQUIRE(s);
      ImportResult r;
      REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error), error);
      fresh = rcp_jsons(*s);
      checks = rcp_jsons(*s, "failed_checks");
      // A published round with a review record: migration and backfill leave the review alone.
      REQUIRE(s->exec("INSERT INTO users(name, organisation_id, role, created_at) VALUES ('u', 1, 'member', 't');"
                      "INSERT INTO round_reviews(round_id, state) SELECT id, 'published' FROM rounds;"
                      "ALTER TABLE results DROP COLUMN rcp_json; ALTER TABLE objections DROP COLUMN impact_computed; "
                      "ALTER TABLE objections DROP COLUMN impact_basis; ALTER TABLE evidence DROP COLUMN impact_minutes; "
                      "ALTER TABLE results DROP COLUMN failed_checks; ALTER TABLE objections DROP COLUMN votes_due; ALTER TABLE decisions DROP COLUMN fix_due; DROP TABLE weak_runs; DROP TABLE weak_results; ALTER TABLE results DROP COLUMN consortium_stops; DROP TABLE webhook_deliveries; DROP TABLE webhooks; DROP TABLE fix_deliveries; DROP TABLE meetings; DROP TABLE comments; DROP TABLE extensions; DROP TRIGGER events_append_only_replace; DROP INDEX runs_summary; "
                      "PRAGMA user_version = 5;",
                      &error));
    }
    REQUIRE(fresh.size() == 2);
    for (const auto& row : fresh) CHECK_MESSAGE(row.second != "NULL", row.first);
    for (const auto& row : checks) CHECK_MESSAGE(row.second == "[]", row.first);  // both pass
    std::string before;
    {
      auto s = Store::open(db, &error, OpenMode::ReadOnly);
      REQUIRE_MESSAGE(s, error);
      CHECK(s->opened_version() == 5);
      before = dump(*s, {"table events"});
      // A question reads a schema-5 store as it is.
      auto rows = leaderboard(*s, {"mini-1.0.0", "minilm", "", false}, &error);
      CHECK_MESSAGE(rows.size() == 1, error);
    }
    auto s = Store::open(db, &error);
    REQUIRE_MESSAGE(s, error);
    CHECK(s->schema_version() == kSchemaVersion);
    CHECK(dump(*s, {"rcp_json", "impact_computed", "impact_basis", "impact_minutes", "failed_checks", "table extensions",
                    "table comments", "table meetings", "table fix_deliveries", "fix_due", "table webhooks", "table webhook_deliveries", "table weak_results", "table weak_runs", "consortium_stops", "table events"}) == before);  // every row kept
    {
      // Schema 10: a result's runs read from the runs_summary index alone.
      Stmt plan(s->db(), "EXPLAIN QUERY PLAN SELECT result_id, file, minutes, counted, dropped, content_sha256 FROM runs "
                         "WHERE result_id = 1 ORDER BY counted DESC, minutes");
      std::string steps;
      while (plan.step()) steps += plan.col_text(3) + "\n";
      CHECK_MESSAGE(steps.find("COVERING INDEX runs_summary") != std::string::npos, steps);
    }
    {
      // Taken to schema 9, the store's packages are recorded in the review log (one package.adopt event).
      Stmt ev(s->db(), "SELECT action, subject, payload_json FROM events");
      REQUIRE(ev.step());
      CHECK(ev.col_text(0) == "package.adopt");
      CHECK(ev.col_text(1) == "store");
      CHECK(ev.col_text(2).find("\"from_schema\":5") != std::string::npos);
      CHECK(ev.col_text(2).find("\"organisation\":\"ExampleOrg\"") != std::string::npos);
      CHECK_FALSE(ev.step());
    }
    for (const auto& row : rcp_jsons(*s)) CHECK_MESSAGE(row.second == "NULL", row.first);
    for (const auto& row : rcp_jsons(*s, "failed_checks")) CHECK_MESSAGE(row.second == "NULL", row.first);
    // The same package again: "unchanged", but the rows imported before schema 6 get their rcp_json.
    ImportResult r;
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error), error);
    CHECK(r.status == "unchanged");
    CHECK(r.rcp_filled == 2);
    CHECK(rcp_jsons(*s) == fresh);
    CHECK(rcp_jsons(*s, "failed_checks") == checks);
    CHECK(dump(*s, {"rcp_json", "failed_checks", "table extensions", "table comments", "table meetings", "table fix_deliveries", "fix_due", "table webhooks", "table webhook_deliveries", "table weak_results", "table weak_runs", "consortium_stops", "table events"}) == before);  // nothing else changed
    // And once filled, an unchanged import writes nothing at all.
    std::string all = dump(*s);
    REQUIRE(import_package(*s, *m.rules, m.facts, m.example, {}, &r, &error));
    CHECK(r.status == "unchanged");
    CHECK(r.rcp_filled == 0);
    CHECK(dump(*s) == all);
  }

  TEST_CASE("rcp_json: what the RCP check evaluated, with unit and quality target; NULL where RCPs are not checked") {
    Mini m;
    TempDir t;
    std::string pkg = copy_package(t.path, m.example, "ExampleOrg");
    std::string error;
    auto s = Store::open((t.path / "a.db").string(), &error);
    REQUIRE(s);
    ImportResult r;
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error), error);
    auto got = rcp_jsons(*s);
    mllog::Json lm;
    REQUIRE_MESSAGE(mllog::parse_json_permissive(got.at("cpu_2x_example/minilm"), &lm, &error), error);
    CHECK(lm.find("status")->s == "found");
    CHECK(lm.find("pass")->b);
    CHECK(num(lm, "batch_size") == 64);
    CHECK(num(lm, "reference_batch_size") == 64);
    CHECK(num(lm, "rcp_mean") == doctest::Approx(2.5));
    // The least mean the check accepts is RCP mean / max speedup.
    CHECK(num(lm, "min_epochs") == doctest::Approx(num(lm, "rcp_mean") / num(lm, "max_speedup")).epsilon(1e-15));
    CHECK(num(lm, "min_epochs") == doctest::Approx(num(lm, "reference_min_epochs")).epsilon(1e-12));
    const auto& runs = lm.find("run_epochs")->items;
    REQUIRE(runs.size() == 5);
    double mid = 0;
    for (size_t i = 1; i + 1 < runs.size(); ++i) mid += runs[i].f;
    CHECK(num(lm, "submission_mean") == doctest::Approx(mid / 3));  // olympic mean of the runs
    CHECK(lm.find("unit")->s == "epochs");
    CHECK(lm.find("metric")->s == "eval_accuracy");
    CHECK(num(lm, "target") == doctest::Approx(2.10));  // " 0.0 < v['value'] <= 2.10 ": a loss, lower is better
    CHECK(lm.find("target_direction")->s == "min");
    mllog::Json clf;
    REQUIRE(mllog::parse_json_permissive(got.at("cpu_2x_example/miniclf"), &clf, &error));
    CHECK(clf.find("status")->s == "interpolated");
    CHECK(num(clf, "target") == doctest::Approx(0.90));
    CHECK(clf.find("target_direction")->s == "max");
    // The open division has no RCP check: NULL.
    fs::path sys = fs::path(pkg) / "systems/cpu_2x_example.json";
    std::string text = testing::read_file(sys);
    text.replace(text.find("\"closed\""), 8, "\"open\"");
    testing::write_file(sys, text);
    REQUIRE_MESSAGE(import_package(*s, *m.rules, m.facts, pkg, {}, &r, &error), error);
    CHECK(r.status == "replaced");
    for (const auto& row : rcp_jsons(*s)) CHECK_MESSAGE(row.second == "NULL", row.first);
  }

  TEST_CASE("rows are numbered per round: a package imported again after another round's shows no count of that round") {
    if (!testing::have_reference_data()) return;
    TempDir t;
    std::string error;
    auto s = Store::open((t.path / "ids.db").string(), &error);
    REQUIRE(s);
    auto load = [&](const char* round, std::unique_ptr<rules::RuleSet>* rs, rules::RoundFacts* facts) {
      rules::RuleSource src;
      *rs = rules::resolve_ruleset(round, testing::reference_rules(), &src, &error);
      REQUIRE_MESSAGE(*rs, error);
      REQUIRE(rules::facts_for(**rs, facts, &error));
    };
    std::unique_ptr<rules::RuleSet> r30, r31;
    rules::RoundFacts f30, f31;
    load("training-3.0.0", &r30, &f30);
    load("training-3.1.0", &r31, &f31);
    const fs::path cw = t.path / "NVIDIA_CoreWeave";
    fs::copy(testing::reference_dir() + "/mlperf/training_results_v3.0/NVIDIA_CoreWeave", cw, fs::copy_options::recursive);
    ImportResult r;
    REQUIRE_MESSAGE(import_package(*s, *r30, f30, cw.string(), {}, &r, &error), error);
    auto ids = [&](const char* table) {
      std::vector<long long> out;
      const std::string sql = std::string("SELECT id FROM ") + table + " ORDER BY id";
      Stmt q(s->db(), sql.c_str());
      while (q.step()) out.push_back(q.col_int(0));
      return out;
    };
    const auto results30 = ids("results"), runs30 = ids("runs");
    REQUIRE(!results30.empty());
    CHECK(results30.back() == static_cast<long long>(results30.size()));  // 1, 2, ... in the first round's block
    REQUIRE_MESSAGE(import_package(*s, *r31, f31, testing::reference_dir() + "/mlperf/training_results_v3.1/Azure", {}, &r,
                                   &error), error);
    for (long long id : ids("results"))
      if (id > results30.back()) CHECK(id > kIdsPerRound);  // 3.1's own block
    // The 3.0 package corrected and imported again: its rows take 3.0's numbers, whatever 3.1 holds.
    fs::path first;
    for (const auto& e : fs::recursive_directory_iterator(cw / "results"))
      if (e.path().filename() == "result_0.txt") {
        first = e.path();
        break;
      }
    REQUIRE(!first.empty());
    std::ofstream(first, std::ios::app) << "\n";
    REQUIRE_MESSAGE(import_package(*s, *r30, f30, cw.string(), {}, &r, &error), error);
    CHECK(r.status == "replaced");
    std::vector<long long> again;
    for (long long id : ids("results"))
      if (id < kIdsPerRound) again.push_back(id);
    CHECK(again == results30);
    std::vector<long long> runs_again;
    for (long long id : ids("runs"))
      if (id < kIdsPerRound) runs_again.push_back(id);
    CHECK(runs_again == runs30);
  }

  TEST_CASE("rcp_json of round 3.1 holds the numbers the RCP check gives (check-package, the consortium's)") {
    if (!testing::have_reference_data()) return;
    TempDir t;
    std::string error;
    auto s = Store::open((t.path / "r.db").string(), &error);
    REQUIRE(s);
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("training-3.1.0", testing::reference_rules(), &src, &error);
    REQUIRE_MESSAGE(rs, error);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    ImportOptions opt;
    opt.jobs = 2;
    const std::string root = testing::reference_dir() + "/mlperf/training_results_v3.1/";
    for (const char* org : {"Azure", "Azure+NVIDIA"}) {
      ImportResult r;
      REQUIRE_MESSAGE(import_package(*s, *rs, facts, root + org, opt, &r, &error), error);
    }
    auto stored = rcp_jsons(*s);
    REQUIRE(stored.size() == 4);
    int compared = 0;
    for (const char* org : {"Azure", "Azure+NVIDIA"}) {
      // What referee's package check prints for the same folder.
      std::string out;
      REQUIRE(testing::run_referee("check-package '" + root + org + "' --ruleset training-3.1.0 --rules '" +
                                       testing::reference_rules() + "' --json 2>/dev/null",
                                   &out) == 0);
      mllog::Json check, expected;
      REQUIRE_MESSAGE(mllog::parse_json_permissive(out, &check, &error), error);
      REQUIRE(mllog::parse_json_permissive(
          testing::read_file(testing::reference_dir() + "/mlperf/expected/training_3.1.0/" + org + ".json"), &expected,
          &error));
      for (const auto& benchmark : check.find("benchmarks")->fields) {
        const auto& [name, dir] = benchmark;
        const std::string which = benchmark.first;  // a copy: doctest's CAPTURE takes it in a lambda
        CAPTURE(which);
        const mllog::Json* c = dir.find("rcp");
        REQUIRE(c);
        mllog::Json j;
        REQUIRE_MESSAGE(mllog::parse_json_permissive(stored.at(name), &j, &error), error);
        CHECK(j.find("status")->s == c->find("status")->s);
        CHECK(j.find("pass")->b == c->find("pass")->b);
        CHECK(num(j, "batch_size") == num(*c, "submission_batch_size"));
        CHECK(num(j, "reference_batch_size") == num(*c, "batch_size"));
        for (auto field : {std::pair{"rcp_mean", "rcp_mean"}, std::pair{"rcp_stdev", "rcp_stdev"},
                           std::pair{"max_speedup", "max_speedup"}, std::pair{"reference_min_epochs", "min_epochs"},
                           std::pair{"submission_mean", "submission_mean_epochs"},
                           std::pair{"norm_factor", "norm_factor"}}) {
          const char* const mine = field.first;
          const char* const theirs = field.second;
          CAPTURE(mine);
          CHECK(num(j, mine) == num(*c, theirs));  // the same figures, to the last bit
        }
        const auto& runs = j.find("run_epochs")->items;
        const auto& cruns = c->find("run_epochs")->items;
        REQUIRE(runs.size() == cruns.size());
        for (size_t i = 0; i < runs.size(); ++i) CHECK(runs[i].f == cruns[i].f);
        // The consortium's own figures for the directory.
        const mllog::Json* e = expected.find("check")->find("benchmarks")->find(name)->find("rcp");
        REQUIRE(e);
        CHECK(j.find("status")->s == e->find("status")->s);
        CHECK(num(j, "rcp_mean") == doctest::Approx(num(*e, "rcp_mean")).epsilon(1e-12));
        CHECK(num(j, "max_speedup") == doctest::Approx(num(*e, "max_speedup")).epsilon(1e-12));
        CHECK(num(j, "min_epochs") == doctest::Approx(num(*e, "min_epochs")).epsilon(1e-12));
        CHECK(num(j, "submission_mean") == doctest::Approx(num(*e, "submission_mean_epochs")).epsilon(1e-12));
        CHECK(num(j, "norm_factor") == doctest::Approx(num(*e, "norm_factor")).epsilon(1e-12));
        ++compared;
      }
    }
    CHECK(compared == 4);
    // Units and targets from the rule set: BERT counts samples in epoch_num, GPT-3 tokens.
    mllog::Json bert, gpt3, resnet, maskrcnn;
    REQUIRE(mllog::parse_json_permissive(stored.at("ND_H100_v5_pytorch/bert"), &bert, &error));
    REQUIRE(mllog::parse_json_permissive(stored.at("ND_H100_v5_n1344_pytorch/gpt3"), &gpt3, &error));
    REQUIRE(mllog::parse_json_permissive(stored.at("ND_H100_v5_mxnet/resnet"), &resnet, &error));
    REQUIRE(mllog::parse_json_permissive(stored.at("ND_H100_v5_pytorch/maskrcnn"), &maskrcnn, &error));
    CHECK(bert.find("unit")->s == "epochs");  // read from epoch_num (eval_points.epoch) ...
    CHECK(bert.find("field")->s == "epoch_num");
    CHECK(bert.find("quantity")->s == "samples");  // ... which BERT's logs fill with samples
    CHECK(num(bert, "target") == doctest::Approx(0.720));
    CHECK(bert.find("target_direction")->s == "max");
    CHECK(gpt3.find("unit")->s == "epochs");
    CHECK(gpt3.find("quantity")->s == "tokens");
    CHECK(num(gpt3, "target") == doctest::Approx(2.69));  // log perplexity, lower is better
    CHECK(gpt3.find("target_direction")->s == "min");
    CHECK(resnet.find("unit")->s == "epochs");
    CHECK(resnet.find("quantity")->s == "epochs");
    CHECK(num(resnet, "target") == doctest::Approx(0.759));
    CHECK(maskrcnn.find("target")->kind == mllog::Json::Kind::Null);  // two metrics (bbox, segm): no one number
    // Importing the same folders again changes nothing.
    std::string all = dump(*s);
    for (const char* org : {"Azure", "Azure+NVIDIA"}) {
      ImportResult r;
      REQUIRE(import_package(*s, *rs, facts, root + org, opt, &r, &error));
      CHECK(r.status == "unchanged");
      CHECK(r.rcp_filled == 0);
    }
    CHECK(dump(*s) == all);
  }

  TEST_CASE("the quality target is the first inclusive bound of the rule's check") {
    auto target = [](const std::string& e) {
      double v = 0;
      std::string dir;
      if (!rules::target_from_check(e, &v, &dir)) return std::string("none");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s %g", dir.c_str(), v);
      return std::string(buf);
    };
    CHECK(target("(v['value'] >= 0.720) and v['value'] < 1.0") == "max 0.72");
    CHECK(target("(v['value'] <= 2.69) and v['value'] > 2.6") == "min 2.69");
    CHECK(target("v['value'] <= 0.058 and v['value'] > 0.0") == "min 0.058");
    CHECK(target("v['value'] >= 0.80275 and v['value'] <= 1.0") == "max 0.80275");
    CHECK(target(" 0.90 <= v['value'] <= 1.0 ") == "max 0.9");
    CHECK(target(" 0.0 < v['value'] <= 2.10 ") == "min 2.1");
    CHECK(target(" v['value'] >= 0.908") == "max 0.908");
    CHECK(target(" v['value'] > 0.0 ") == "none");  // a sanity bound only
    CHECK(target("(v['value'] >= 0.712 if s['global_batch_size'] < 8192 else v['value'] >= 0.706) and v['value'] < 1.0") ==
          "none");  // the target depends on the batch size
    CHECK(target("(0.0 <= v['value']['FID'] <= 90.0) and (0.15 <= v['value']['CLIP'] <= 1.0)") == "none");
    CHECK(target("v['value'] >= s['target']") == "none");
  }

  TEST_CASE("a database from a newer referee is refused, not damaged") {
    TempDir t;
    std::string db = (t.path / "new.db").string();
    {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
      sqlite3_exec(raw, "CREATE TABLE x(a); PRAGMA user_version = 99;", nullptr, nullptr, nullptr);
      sqlite3_close(raw);
    }
    std::string error;
    auto s = Store::open(db, &error);
    CHECK_FALSE(s);
    CHECK(error.find("newer than this referee knows") != std::string::npos);
  }

  TEST_CASE("a database whose schema version was set below 0 is refused, read-only or not, and left as it was") {
    TempDir t;
    std::string db = (t.path / "neg.db").string();
    std::string error;
    {
      auto s = Store::open(db, &error);
      REQUIRE_MESSAGE(s, error);
    }
    for (const char* version : {"-1", "-2147483648"}) {
      {
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
        std::string sql = std::string("PRAGMA user_version = ") + version + ";";
        REQUIRE(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(raw);
      }
      for (auto mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        error.clear();
        auto s = Store::open(db, &error, mode);
        CHECK_FALSE(s);
        CHECK_MESSAGE(error.find(std::string("has schema version ") + version + ", which no referee writes") !=
                          std::string::npos,
                      error);
      }
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      CHECK(std::to_string(sqlite3_column_int(st, 0)) == version);
      sqlite3_finalize(st);
      sqlite3_close(raw);
    }
  }

  TEST_CASE("the headline figures of round 3.1 come out of the store") {
    if (!testing::have_reference_data()) return;
    TempDir t;
    std::string error;
    auto s = Store::open((t.path / "r.db").string(), &error);
    REQUIRE(s);
    for (auto [round, dir] : {std::pair{"training-3.0.0", "training_results_v3.0"}, std::pair{"training-3.1.0", "training_results_v3.1"}}) {
      rules::RuleSource src;
      auto rs = rules::resolve_ruleset(round, testing::reference_rules(), &src, &error);
      REQUIRE_MESSAGE(rs, error);
      rules::RoundFacts facts;
      REQUIRE(rules::facts_for(*rs, &facts, &error));
      ImportOptions opt;
      opt.jobs = 2;
      for (const auto& pkg : find_packages(testing::reference_dir() + "/mlperf/" + dir)) {
        ImportResult r;
        REQUIRE_MESSAGE(import_package(*s, *rs, facts, pkg, opt, &r, &error), error);
      }
    }
    // GPT-3 on Eos (10,752 GPUs) against Azure's instance of the same size.
    auto cmp = find_results(*s, {"training-3.1.0", "gpt3", "", false},
                            {"NVIDIA/eos-dfw_n1344_ngc23.09_nemo", "Azure+NVIDIA/ND_H100_v5_n1344_pytorch"}, &error);
    REQUIRE_MESSAGE(cmp.size() == 2, error);
    CHECK(cmp[0].accelerators == 10752);
    CHECK(cmp[1].accelerators == 10752);
    CHECK(cmp[0].score == doctest::Approx(3.9172).epsilon(1e-4));
    CHECK(cmp[1].score == doctest::Approx(4.0085).epsilon(1e-4));
    CHECK((cmp[1].score / cmp[0].score - 1) == doctest::Approx(0.0233).epsilon(0.01));
    // The fastest GPT-3 of 3.0 (NVIDIA+CoreWeave, 3,584 GPUs) to 3.1: the headline, at different scales.
    SpeedupReport rep;
    REQUIRE_MESSAGE(speedups(*s, {"training-3.0.0", "training-3.1.0", "gpt3", false, "", false}, &rep, &error), error);
    REQUIRE(!rep.pairs.empty());
    const Speedup& h = rep.pairs[0];
    CHECK(h.kind == "headline");
    CHECK(h.comparable);
    CHECK(h.from.submitter == "NVIDIA+CoreWeave");
    CHECK(h.from.accelerators == 3584);
    CHECK(h.to.accelerators == 10752);
    CHECK(h.speedup == doctest::Approx(2.79).epsilon(0.005));
    CHECK(h.accelerator_ratio == doctest::Approx(3.0));
    REQUIRE(h.has_efficiency);
    CHECK(h.efficiency == doctest::Approx(0.931).epsilon(0.005));
    // Same-scale pairs: equal accelerator type and count on both sides.
    int same = 0;
    for (const auto& p : rep.pairs)
      if (p.kind == "same-scale") {
        ++same;
        CHECK(p.comparable);
        CHECK(p.from.accelerators == p.to.accelerators);
        CHECK(p.from.accelerator_type == p.to.accelerator_type);
      }
    CHECK(same >= 1);
    s.reset();  // closed: the binary reads it as immutable
    {
      std::string out;
      REQUIRE(testing::run_referee("speedup --benchmark gpt3 --from training-3.0.0 --to training-3.1.0 --overall --db '" +
                                       (t.path / "r.db").string() + "'",
                                   &out) == 0);
      CHECK(out.find("headline    overall    coreweave_hgxh100_n448_ngc23.04_pytorch (3584 x H100)  10.94  "
                     "eos-dfw_n1344_ngc23.09_nemo (10752 x H100)  3.917  2.79x (2.78-2.81)         3.00x       93.1%") !=
            std::string::npos);
      CHECK(out.find("same-scale  overall    dgxh100_n64_nemo (512 x H100)") != std::string::npos);
      CHECK(out.find("scale rule: ") != std::string::npos);
    }
    // The cost of speed: 2.79x faster with 3x the GPUs is +7% GPU-hours (653.5 -> 702.0), and
    // the chain across every round of the store gives the same pair.
    {
      const std::string db = " --db '" + (t.path / "r.db").string() + "'";
      std::string out;
      REQUIRE(testing::run_referee("speedup --all-rounds --benchmark gpt3 --overall" + db, &out) == 0);
      CHECK(out.find("gpt3: fastest closed-division results overall, round over round (training-3.0.0, training-3.1.0)") !=
            std::string::npos);
      CHECK(out.find("training-3.0.0 -> training-3.1.0  headline    overall    coreweave_hgxh100_n448_ngc23.04_pytorch (3584 x H100)  "
                     "10.94  eos-dfw_n1344_ngc23.09_nemo (10752 x H100)  3.917  2.79x (2.78-2.81)         3.00x       93.1%  "
                     "653.5 -> 702.0     +7.4%") != std::string::npos);
      REQUIRE(testing::run_referee("speedup --all-rounds --benchmark gpt3 --overall --json --price-per-node-month 37000" + db, &out) == 0);
      mllog::Json doc;
      std::string perr;
      REQUIRE_MESSAGE(mllog::parse_json_permissive(out, &doc, &perr), perr);
      CHECK(doc.find("schema")->s == "referee.speedup-chain/1");
      CHECK(doc.find("price_unit")->s == "per node-month");
      const auto& steps = doc.find("benchmarks")->items.at(0).find("steps")->items;
      REQUIRE(steps.size() == 1);  // two rounds: one step, no separate first-to-last
      CHECK(steps[0].find("from")->s == "training-3.0.0");
      CHECK(steps[0].find("to")->s == "training-3.1.0");
      const auto& h = steps[0].find("speedups")->items.at(0);
      CHECK(h.find("kind")->s == "headline");
      const auto* from = h.find("from");
      const auto* to = h.find("to");
      CHECK(from->find("score_minutes")->f == doctest::Approx(10.94).epsilon(1e-3));
      CHECK(to->find("score_minutes")->f == doctest::Approx(3.92).epsilon(1e-3));
      CHECK(h.find("speedup")->f == doctest::Approx(2.79).epsilon(0.005));
      CHECK(h.find("scaling_efficiency")->f == doctest::Approx(0.93).epsilon(0.005));
      CHECK(from->find("accelerator_hours")->f == doctest::Approx(653.5).epsilon(1e-3));  // 3,584 x 10.94 min
      CHECK(to->find("accelerator_hours")->f == doctest::Approx(702.0).epsilon(1e-3));    // 10,752 x 3.917 min
      CHECK(h.find("accelerator_hours_change")->f == doctest::Approx(0.074).epsilon(0.01));
      // 448 and 1,344 nodes of eight GPUs at 37000 a node-month (730 hours).
      CHECK(from->find("cost")->f == doctest::Approx(448 * (10.940416666666666 / 60) * 37000 / 730).epsilon(1e-6));
      CHECK(to->find("cost")->f == doctest::Approx(1344 * (3.9171666666666667 / 60) * 37000 / 730).epsilon(1e-6));
      // compare and leaderboard carry the same accelerator-hours.
      REQUIRE(testing::run_referee("compare --round training-3.1.0 --benchmark gpt3 NVIDIA/eos-dfw_n1344_ngc23.09_nemo "
                                   "Azure+NVIDIA/ND_H100_v5_n1344_pytorch --csv" + db, &out) == 0);
      CHECK(out.rfind("benchmark,round,organisation,system,submitter,division,availability,availability_raw,accelerator,accelerator_type,"
                      "accelerators,nodes,score_minutes,accelerator_hours,checks_pass,resubmission,review_status,checks,twin_of,twins,"
                      "relative_to_first,runs_minutes\r\n", 0) == 0);
      CHECK(out.find("gpt3,training-3.1.0,NVIDIA,eos-dfw_n1344_ngc23.09_nemo,NVIDIA,closed,Available cloud,cloud,"
                     "NVIDIA H100-SXM5-80GB,H100,10752,1344,3.9171666666666667,701.9562666666667,true,false,,pass,,,0,3.9171666666666667 ") != std::string::npos);
      REQUIRE(testing::run_referee("leaderboard --round training-3.1.0 --benchmark gpt3 --division closed" + db, &out) == 0);
      CHECK(out.find("3.9172              702.0  pass") != std::string::npos);
    }
    s = Store::open((t.path / "r.db").string(), &error, OpenMode::ReadOnly);
    REQUIRE_MESSAGE(s, error);
    // Eos at five sizes from 512 nodes.
    auto sc = scaling(*s, {"training-3.1.0", "gpt3", "", false}, "NVIDIA", &error);
    REQUIRE(sc.size() == 1);
    CHECK(sc[0].accelerator_type == "H100");
    REQUIRE(sc[0].points.size() >= 5);
    // Stable Diffusion on 1,024 GPUs, the fastest.
    auto sd = leaderboard(*s, {"training-3.1.0", "stable_diffusion", "closed", false}, &error);
    REQUIRE(!sd.empty());
    CHECK(sd[0].accelerators == 1024);
    CHECK(sd[0].score == doctest::Approx(2.4665).epsilon(1e-4));
    // NVIDIA's fastest DLRM-DCNv2, RetinaNet (ssd), 3D U-Net and BERT results of 3.1, as published.
    struct Fastest {
      const char* benchmark;
      long long accelerators;
      double minutes;
    };
    for (const auto& f : {Fastest{"dlrm_dcnv2", 128, 1.0267}, Fastest{"ssd", 2048, 0.9193}, Fastest{"unet3d", 768, 0.7727},
                          Fastest{"bert", 3472, 0.1193}}) {
      auto lb = leaderboard(*s, {"training-3.1.0", f.benchmark, "closed", false}, &error);
      REQUIRE_MESSAGE(!lb.empty(), f.benchmark << ": " << error);
      CHECK_MESSAGE(lb[0].submitter == "NVIDIA", f.benchmark);
      CHECK_MESSAGE(lb[0].accelerators == f.accelerators, f.benchmark);
      CHECK_MESSAGE(lb[0].score == doctest::Approx(f.minutes).epsilon(1e-4), f.benchmark);
    }
    // The RetinaNet result was published with the review committee's factor; the pipeline today leaves it unscaled.
    auto ssd = leaderboard(*s, {"training-3.1.0", "ssd", "closed", true}, &error);
    REQUIRE(!ssd.empty());
    CHECK(ssd[0].score == doctest::Approx(0.8545).epsilon(1e-4));
    // Resubmitted logs are recognised (Azure's 3.1 ResNet and BERT are its 3.0 logs).
    auto resnet = find_results(*s, {"training-3.1.0", "resnet", "", false}, {"Azure/ND_H100_v5_mxnet"}, &error);
    REQUIRE(resnet.size() == 1);
    CHECK(resnet[0].resubmission);
    auto bert = find_results(*s, {"training-3.1.0", "bert", "", false}, {"Azure/ND_H100_v5_pytorch"}, &error);
    REQUIRE(bert.size() == 1);
    CHECK(bert[0].resubmission);
    // Azure's 3.1 ResNet copies its 3.0 ResNet: the 3.0 record carried forward, no new result to pair.
    SpeedupReport rsp;
    REQUIRE(speedups(*s, {"training-3.0.0", "training-3.1.0", "resnet", true, "Azure", false}, &rsp, &error));
    REQUIRE(rsp.pairs.size() == 1);
    CHECK(rsp.pairs[0].kind == "carried");
    CHECK_FALSE(rsp.pairs[0].comparable);
    REQUIRE(!rsp.left_out.empty());
    CHECK(rsp.left_out[0].find("Azure/ND_H100_v5_mxnet (training-3.1.0)") != std::string::npos);
    // NVIDIA's ResNet: 3.0's fastest ran on 768 GPUs, 3.1's fastest new result on 64 (its 3,584-GPU result
    // is the NVIDIA+CoreWeave 3.0 logs again): the headline is not comparable, the same-scale pairs are.
    SpeedupReport nv;
    REQUIRE(speedups(*s, {"training-3.0.0", "training-3.1.0", "resnet", true, "NVIDIA", false}, &nv, &error));
    REQUIRE(nv.pairs.size() >= 2);
    CHECK(nv.pairs[0].kind == "headline");
    CHECK_FALSE(nv.pairs[0].comparable);
    CHECK(nv.pairs[0].reason.find("both smaller (64 vs 768 accelerators) and slower") != std::string::npos);
    for (size_t i = 1; i < nv.pairs.size(); ++i) {
      CHECK(nv.pairs[i].kind == "same-scale");
      CHECK(nv.pairs[i].comparable);
      CHECK(nv.pairs[i].speedup > 0.9);
      CHECK(nv.pairs[i].speedup < 1.2);
    }
    bool coreweave_left_out = false;
    for (const auto& l : nv.left_out)
      coreweave_left_out |= l.find("NVIDIA/coreweave_hgxh100_n448_ngc23.04_mxnet (training-3.1.0)") != std::string::npos;
    CHECK(coreweave_left_out);
  }
}
