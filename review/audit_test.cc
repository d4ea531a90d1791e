// `referee audit`: each kind of finding planted in a copy of the example
// package, found with its evidence (file, line, text) and kept under the same
// id when the audit runs again; a finding that went away is reported as gone
// and stays in the store. The routes' authorisation, and a run on the
// published rounds of the reference data.
#include <doctest/doctest.h>
#include <sodium.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "mllog/json.h"
#include "review/api.h"
#include "review/audit.h"
#include "review/events.h"
#include "review/verify.h"
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
using namespace referee::review;
using submissions::Stmt;
using submissions::Store;

namespace {

using testing::TempDir;

struct Fixture {
  TempDir t;
  std::unique_ptr<rules::RuleSet> rules;
  rules::RoundFacts facts;
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  std::string db;
  std::unique_ptr<Store> store;
  Fixture() {
    std::string error;
    rules::RuleSource src;
    rules = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rules, error);
    REQUIRE(rules::facts_for(*rules, &facts, &error));
    db = (t.path / "audit.db").string();
    store = Store::open(db, &error);
    REQUIRE_MESSAGE(store, error);
  }
  // A copy of the example package named `org`.
  fs::path copy(const std::string& org) {
    fs::path to = t.path / "pkgs" / org;
    fs::create_directories(to.parent_path());
    fs::copy(example, to, fs::copy_options::recursive);
    return to;
  }
  void import(const fs::path& pkg) {
    std::string error;
    submissions::ImportResult r;
    submissions::ImportOptions opt;  // recorded as `referee import` records it
    Store& st = *store;
    opt.record_change = [&st](const submissions::PackageChange& c, std::string* e) { return record_package_change(st, c, e); };
    REQUIRE_MESSAGE(submissions::import_package(*store, *rules, facts, pkg.string(), opt, &r, &error), error);
  }
  std::string round() {
    Stmt q(store->db(), "SELECT name FROM rounds");
    REQUIRE(q.step());
    return q.col_text(0);
  }
  // The round under review (a round without a review record counts as published: its audit stores
  // nothing), its record made as the review makes it.
  void under_review() {
    Stmt q(store->db(), "SELECT 1 FROM round_reviews");
    if (q.step()) return;
    Api api(db);
    Request r;
    r.method = "PUT";
    r.path = "/api/v1/rounds/" + round() + "/schedule";
    r.body = "{}";
    r.local_admin = true;
    Response rec = api.handle(r);
    REQUIRE_MESSAGE(rec.status == 200, rec.body);
  }
  AuditRun audit(const std::string& org = "", double rcp_margin = kRcpNearFail) {
    under_review();
    Actor admin;
    admin.user = "local-admin";
    admin.role = Role::Admin;
    admin.local_admin = true;
    AuditRun run;
    std::string error;
    REQUIRE_MESSAGE(run_audit(*store, admin, round(), org, &run, &error, rcp_margin), error);
    return run;
  }
};

fs::path minilm(const fs::path& pkg, int i) {
  return pkg / "results/cpu_2x_example/minilm" / ("result_" + std::to_string(i) + ".txt");
}

// Replaces the first `from` in a file by `to`.
void edit(const fs::path& p, const std::string& from, const std::string& to) {
  std::string text = testing::read_file(p);
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from << " not in " << p);
  text.replace(at, from.size(), to);
  testing::write_file(p, text);
}

// The line number (from 1) and text of every line of `p` containing `what`.
std::vector<std::pair<long long, std::string>> lines_with(const fs::path& p, const std::string& what) {
  std::ifstream in(p);
  std::string line;
  std::vector<std::pair<long long, std::string>> out;
  long long n = 0;
  while (std::getline(in, line))
    if (++n, line.find(what) != std::string::npos) out.push_back({n, line});
  return out;
}

std::vector<const Finding*> of_kind(const std::vector<Finding>& fs, const std::string& kind) {
  std::vector<const Finding*> out;
  for (const auto& f : fs)
    if (f.kind == kind) out.push_back(&f);
  return out;
}

long long events(Store& s, const char* action) {
  Stmt q(s.db(), "SELECT COUNT(*) FROM events WHERE action = ?1");
  q.bind(1, std::string(action));
  REQUIRE(q.step());
  return q.col_int(0);
}

}  // namespace

TEST_SUITE("audit") {
  TEST_CASE("on a published round the audit computes findings but stores nothing and logs nothing") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 1);
    std::string original = testing::read_file(log);
    auto starts = lines_with(log, "\"run_start\"");
    REQUIRE(starts.size() == 1);
    testing::write_file(log, original + original.substr(original.find(starts[0].second)));
    fx.import(pkg);
    std::string error;
    REQUIRE(fx.store->exec("INSERT INTO round_reviews(round_id, state) VALUES (1, 'published');", &error));
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "repeated-run-start");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->state == "new");
    Stmt n(fx.store->db(), "SELECT COUNT(*) FROM findings");
    REQUIRE(n.step());
    CHECK(n.col_int(0) == 0);
    CHECK(events(*fx.store, "audit.run") == 0);
    bool said = false;
    for (const auto& note : run.notes) said = said || note.find("is published: findings were computed but not stored") != std::string::npos;
    CHECK(said);
  }

  TEST_CASE("a scaling factor of 0 or below: a result scored faster than anything that trained is a finding") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fx.import(pkg);
    REQUIRE(of_kind(fx.audit().findings, "no-time-to-train").empty());
    testing::write_file(pkg / "results/cpu_2x_example/minilm/scaling.json", "{\"scaling_factor\": -1}");
    fx.import(pkg);
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "no-time-to-train");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->result == "ExampleOrg/cpu_2x_example/minilm");
    CHECK(found[0]->summary.find("a scaling factor of 0 or below") != std::string::npos);
    REQUIRE(!found[0]->evidence.empty());
    CHECK(found[0]->evidence[0].value < 0);
    // Nor does it lead the leaderboard: it is left out, with the reason.
    std::string error;
    std::vector<std::string> left_out;
    auto rows = submissions::leaderboard(*fx.store, {fx.round(), "minilm", "", false}, &error, &left_out);
    for (const auto& r : rows) CHECK(r.score > 0);
    bool said = false;
    for (const auto& l : left_out) said = said || (l.find("ExampleOrg/cpu_2x_example") != std::string::npos &&
                                                   l.find("no time to train") != std::string::npos);
    CHECK_MESSAGE(said, left_out.size());
    // The command says it too, also when nothing is left to rank.
    const std::string round = fx.round();
    fx.store.reset();
    std::string out;
    testing::run_referee("leaderboard --round " + round + " --benchmark minilm --db " + fx.db, &out);
    CHECK_MESSAGE(out.find("which is no time to train") != std::string::npos, out);
  }

  TEST_CASE("a package whose logs are gone from disk: the audit says so and marks nothing gone") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 1);
    std::string original = testing::read_file(log);
    auto starts = lines_with(log, "\"run_start\"");
    REQUIRE(starts.size() == 1);
    testing::write_file(log, original + original.substr(original.find(starts[0].second)));
    fx.import(pkg);
    AuditRun first = fx.audit();
    REQUIRE(of_kind(first.findings, "repeated-run-start").size() == 1);
    fs::rename(pkg, fx.t.path / "moved");
    AuditRun later = fx.audit();
    CHECK(later.gone.empty());
    CHECK(events(*fx.store, "audit.run") == 1);
    bool said = false;
    for (const auto& note : later.notes)
      said = said || (note.find("logs of ExampleOrg/cpu_2x_example/minilm not found at " + pkg.string()) == 0 &&
                      note.find("not re-checked") != std::string::npos);
    CHECK(said);
    std::vector<Finding> stored;
    std::string error;
    REQUIRE(read_findings(*fx.store, "", "", "repeated-run-start", 0, &stored, &error));
    REQUIRE(stored.size() == 1);
    CHECK(stored[0].state == "open");
  }

  TEST_CASE("a package replaced in a round under review is recorded in the review log") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fx.import(pkg);
    std::string error;
    REQUIRE(fx.store->exec("INSERT INTO round_reviews(round_id, state) VALUES (1, 'review');", &error));
    Stmt h(fx.store->db(), "SELECT content_sha256 FROM packages");
    REQUIRE(h.step());
    std::string before = h.col_text(0);
    fs::remove(minilm(pkg, 4));
    submissions::ImportOptions opt;
    Store& st = *fx.store;
    opt.record_change = [&st](const submissions::PackageChange& c, std::string* e) {
      return record_package_change(st, c, e);
    };
    submissions::ImportResult r;
    REQUIRE_MESSAGE(submissions::import_package(*fx.store, *fx.rules, fx.facts, pkg.string(), opt, &r, &error), error);
    CHECK(r.status == "replaced");
    auto log = read_events(*fx.store, "round/", &error);
    REQUIRE(log.size() == 2);  // the first import, then the replacement
    CHECK(log[0].action == "package.import");
    CHECK(log[1].action == "package.replace");
    CHECK(log[1].actor == "local-admin");
    CHECK(log[1].payload_json.find(before) != std::string::npos);
    CHECK(log[1].payload_json.find("cpu_2x_example/minilm") != std::string::npos);
    CHECK(verify_events(*fx.store, &error).ok);
  }

  TEST_CASE("a package imported or replaced in a round with no review record is recorded too, with its rows' digest") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    submissions::ImportOptions opt;
    Store& st = *fx.store;
    opt.record_change = [&st](const submissions::PackageChange& c, std::string* e) {
      return record_package_change(st, c, e);
    };
    std::string error;
    submissions::ImportResult first;
    REQUIRE_MESSAGE(submissions::import_package(*fx.store, *fx.rules, fx.facts, pkg.string(), opt, &first, &error), error);
    CHECK(first.status == "imported");
    auto imported = read_events(*fx.store, "round/", &error);
    REQUIRE(imported.size() == 1);
    CHECK(imported[0].action == "package.import");
    CHECK(imported[0].payload_json.find("\"rows_sha256\":\"") != std::string::npos);
    fs::remove(minilm(pkg, 4));
    submissions::ImportResult again;
    REQUIRE_MESSAGE(submissions::import_package(*fx.store, *fx.rules, fx.facts, pkg.string(), opt, &again, &error), error);
    CHECK(again.status == "replaced");
    auto log = read_events(*fx.store, "round/", &error);
    REQUIRE(log.size() == 2);
    CHECK(log[1].action == "package.replace");
    CHECK(log[1].payload_json.find("cpu_2x_example/minilm") != std::string::npos);
    CHECK(verify_events(*fx.store, &error).ok);
  }

  TEST_CASE("the example package as it is has nothing to find") {
    Fixture fx;
    fx.import(fx.copy("ExampleOrg"));
    AuditRun run = fx.audit();
    CHECK(run.findings.empty());
    CHECK(run.gone.empty());
    CHECK(events(*fx.store, "audit.run") == 0);  // nothing added: no event
  }

  TEST_CASE("a repeated run_start is found with both lines quoted; its id stays on a re-run; fixed, it is gone") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 1);
    auto starts = lines_with(log, "\"run_start\"");
    REQUIRE(starts.size() == 1);
    std::string original = testing::read_file(log);
    // A relaunch appended to the same log: the run's lines again, later.
    std::string relaunch = original.substr(original.find(starts[0].second));
    testing::write_file(log, original + relaunch);
    fx.import(pkg);

    AuditRun first = fx.audit();
    auto found = of_kind(first.findings, "repeated-run-start");
    REQUIRE(found.size() == 1);
    const Finding& f = *found[0];
    CHECK(f.result == "ExampleOrg/cpu_2x_example/minilm");
    CHECK(f.state == "new");
    CHECK(f.result_id != 0);
    auto now = lines_with(log, "\"run_start\"");
    REQUIRE(now.size() == 2);
    REQUIRE(f.evidence.size() >= 2);
    for (size_t i = 0; i < 2; ++i) {
      CHECK(f.evidence[i].file == "results/cpu_2x_example/minilm/result_1.txt");
      CHECK(f.evidence[i].line == now[i].first);
      CHECK(f.evidence[i].text == now[i].second);
    }
    CHECK(events(*fx.store, "audit.run") == 1);

    AuditRun again = fx.audit();
    auto same = of_kind(again.findings, "repeated-run-start");
    REQUIRE(same.size() == 1);
    CHECK(same[0]->id == f.id);
    CHECK(same[0]->state == "open");
    CHECK(again.added == 0);
    CHECK(events(*fx.store, "audit.run") == 1);  // nothing changed: no event

    // The log fixed and imported again: the finding is gone, not deleted.
    testing::write_file(log, original);
    fx.import(pkg);
    AuditRun fixed = fx.audit();
    CHECK(of_kind(fixed.findings, "repeated-run-start").empty());
    REQUIRE(fixed.gone.size() == 1);
    CHECK(fixed.gone[0].id == f.id);
    CHECK(fixed.gone[0].state == "gone");
    CHECK(events(*fx.store, "audit.run") == 2);
    std::vector<Finding> stored;
    std::string error;
    REQUIRE(read_findings(*fx.store, "", "", "", f.id, &stored, &error));
    REQUIRE(stored.size() == 1);
    CHECK(stored[0].state == "gone");
    CHECK(stored[0].result == "ExampleOrg/cpu_2x_example/minilm");  // its result was replaced: named still
    // And gone again is not news.
    fx.audit();
    CHECK(events(*fx.store, "audit.run") == 2);

    // Broken again: the same finding comes back, linked to the new result.
    testing::write_file(log, original + relaunch);
    fx.import(pkg);
    AuditRun back = fx.audit();
    auto again2 = of_kind(back.findings, "repeated-run-start");
    REQUIRE(again2.size() == 1);
    CHECK(again2[0]->id == f.id);
    CHECK(again2[0]->state == "open");
    Stmt q(fx.store->db(), "SELECT r.id FROM results r WHERE r.benchmark = 'minilm'");
    REQUIRE(q.step());
    CHECK(again2[0]->result_id == q.col_int(0));
    CHECK(events(*fx.store, "audit.run") == 3);

    // The findings as the audit.run events recorded them: --verify names one edited, added or deleted.
    std::string verr;
    CHECK_MESSAGE(verify_tables(*fx.store, &verr).ok, verr);
    auto tampered = [&](const std::string& sql, const std::string& expect) {
      CAPTURE(sql);
      REQUIRE(fx.store->exec("SAVEPOINT t", &verr));
      REQUIRE(fx.store->exec(sql.c_str(), &verr));
      TableCheck c = verify_tables(*fx.store, &verr);
      CHECK_FALSE(c.ok);
      CHECK_MESSAGE(c.problem.find(expect) != std::string::npos, c.problem);
      REQUIRE(fx.store->exec("ROLLBACK TO t; RELEASE t", &verr));
    };
    tampered("UPDATE findings SET summary = 'nothing to see' WHERE id = " + std::to_string(f.id),
             "findings row " + std::to_string(f.id) + ": what it says is not what event");
    tampered("UPDATE findings SET impact_minutes = 99 WHERE id = " + std::to_string(f.id), "(its SHA-256 differs)");
    tampered("INSERT INTO findings (round_id, organisation_id, kind, rule, summary, evidence_json, fingerprint, created_at) "
             "SELECT round_id, organisation_id, 'cherry-picking', 'r', 'forged', '[]', 'forged', 't' FROM findings "
             "WHERE id = " + std::to_string(f.id),
             "has no audit.run event");
    CHECK(verify_tables(*fx.store, &verr).ok);
  }

  TEST_CASE("a run far faster than its siblings is cherry-picking, with the figures and the score if it holds") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 2);
    // result_2 ran 33 s like its siblings; make it stop 10 s after it started.
    edit(log, "\"time_ms\": 1736935376137, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\"",
         "\"time_ms\": 1736935353085, \"event_type\": \"INTERVAL_END\", \"key\": \"run_stop\"");
    fx.import(pkg);
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "cherry-picking");
    REQUIRE(found.size() == 1);
    const Finding& f = *found[0];
    CHECK(f.result == "ExampleOrg/cpu_2x_example/minilm");
    CHECK(f.summary.find("result_2.txt") != std::string::npos);
    bool minutes = false, stop_line = false;
    auto stops = lines_with(log, "\"run_stop\"");
    for (const auto& e : f.evidence) {
      if (e.figure == "results/cpu_2x_example/minilm/result_2.txt minutes") {
        minutes = true;
        CHECK(e.value == doctest::Approx(10.0 / 60).epsilon(0.01));
        CHECK(e.unit == "min");
      }
      if (e.file == "results/cpu_2x_example/minilm/result_2.txt" && e.line == stops.at(0).first) stop_line = true;
    }
    CHECK(minutes);
    CHECK(stop_line);
    // With the outlier at the median the score is slower than the published one.
    Stmt q(fx.store->db(), "SELECT score_minutes FROM results WHERE id = ?1");
    q.bind(1, f.result_id);
    REQUIRE(q.step());
    REQUIRE(f.has_impact);
    CHECK(f.impact_minutes > q.col_double(0));
  }

  TEST_CASE("runs within a few percent of each other are not cherry-picking (the MAD floor)") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    // 1.5 s faster of 33 s: 4.5%, under the 5.2% the floor allows.
    edit(minilm(pkg, 2), "\"time_ms\": 1736935376137, \"event_type\": \"INTERVAL_END\"",
         "\"time_ms\": 1736935374637, \"event_type\": \"INTERVAL_END\"");
    fx.import(pkg);
    CHECK(of_kind(fx.audit().findings, "cherry-picking").empty());
  }

  TEST_CASE("many more runs than required is cherry-picking") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path dir = pkg / "results/cpu_2x_example/minilm";
    for (int i = 5; i < 10; ++i) {
      // Each extra run its own seed, so the package stays plausible.
      std::string text = testing::read_file(dir / ("result_" + std::to_string(i - 5) + ".txt"));
      testing::write_file(dir / ("result_" + std::to_string(i) + ".txt"), text + "\n");
    }
    fx.import(pkg);
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "cherry-picking");
    bool extra = false;
    for (const auto* f : found)
      if (f->fingerprint.find(":extra-runs") != std::string::npos) {
        extra = true;
        CHECK(f->summary.rfind("10 runs where 5 are required", 0) == 0);
      }
    CHECK(extra);
  }

  TEST_CASE("a resubmission without an announcement is found; announced before the first meeting it is not") {
    Fixture fx;
    fx.import(fx.copy("ExampleOrg"));
    REQUIRE(fx.store->exec("UPDATE results SET resubmission = 1 WHERE benchmark = 'miniclf'", nullptr));
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "unannounced-resubmission");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->result == "ExampleOrg/cpu_2x_example/miniclf");
    CHECK(found[0]->summary == "5 run(s) are logs of an earlier round, never announced");
    REQUIRE(found[0]->evidence.size() == 5);
    auto starts = lines_with(fx.t.path / "pkgs/ExampleOrg/results/cpu_2x_example/miniclf/result_0.txt", "\"run_start\"");
    CHECK(found[0]->evidence[0].line == starts.at(0).first);

    // Announced late (after the first meeting): still a finding, saying so.
    REQUIRE(fx.store->exec(
        "INSERT INTO users (name, role, created_at, organisation_id) SELECT 'ann', 'member', '2026-01-01', id "
        "FROM organisations; UPDATE round_reviews SET first_meeting = '2026-02-01T00:00:00.000Z'; "
        "INSERT INTO announcements (round_id, organisation_id, result_id, text, "
        "user_id, created_at) SELECT p.round_id, p.organisation_id, NULL, 'resubmitted', 1, '2026-03-01T00:00:00.000Z' "
        "FROM packages p",
        nullptr));
    AuditRun late_run = fx.audit();
    auto late = of_kind(late_run.findings, "unannounced-resubmission");
    REQUIRE(late.size() == 1);
    CHECK(late[0]->id == found[0]->id);
    CHECK(late[0]->summary.find("after the first review meeting") != std::string::npos);

    REQUIRE(fx.store->exec("UPDATE round_reviews SET first_meeting = '2026-04-01T00:00:00.000Z'", nullptr));
    AuditRun ok = fx.audit();
    CHECK(of_kind(ok.findings, "unannounced-resubmission").empty());
    REQUIRE(ok.gone.size() == 1);
    CHECK(ok.gone[0].id == found[0]->id);
  }

  TEST_CASE("a node count in the logs that disagrees with the system description") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path sys = pkg / "systems/cpu_2x_example.json";
    edit(minilm(pkg, 3), "\"value\": \"cpu_2x_example\"", "\"value\": \"4xcpu_2x_example\"");
    fx.import(pkg);
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "system-mismatch");
    REQUIRE(found.size() == 1);
    const Finding* nodes = found[0];
    CHECK(nodes->result == "ExampleOrg/cpu_2x_example/minilm");
    CHECK(nodes->summary.find("4 node(s)") != std::string::npos);
    REQUIRE(nodes->evidence.size() == 2);
    auto platform = lines_with(minilm(pkg, 3), "submission_platform");
    CHECK(nodes->evidence[0].file == "results/cpu_2x_example/minilm/result_3.txt");
    CHECK(nodes->evidence[0].line == platform.at(0).first);
    CHECK(nodes->evidence[0].text == platform.at(0).second);
    CHECK(nodes->evidence[1].file == "systems/cpu_2x_example.json");
    CHECK(nodes->evidence[1].line == lines_with(sys, "\"number_of_nodes\"").at(0).first);
    CHECK(nodes->evidence[1].text == "\"number_of_nodes\": \"1\",");
    // A platform that says 1 node agrees.
    edit(minilm(pkg, 3), "\"value\": \"4xcpu_2x_example\"", "\"value\": \"1xcpu_2x_example\"");
    fx.import(pkg);
    AuditRun fixed = fx.audit();
    CHECK(of_kind(fixed.findings, "system-mismatch").empty());
    CHECK(fixed.gone.size() == 1);
  }

  TEST_CASE("an RCP pass within the margin is a near fail, with the olympic mean and the bound") {
    Fixture fx;
    fx.import(fx.copy("ExampleOrg"));
    // The example passes its RCPs comfortably: nothing at 1%.
    AuditRun plain = fx.audit();
    CHECK(of_kind(plain.findings, "rcp-near-fail").empty());
    CHECK(plain.notes.empty());
    // With a margin wider than its lead, minilm is reported.
    AuditRun wide = fx.audit("", 1e6);
    auto found = of_kind(wide.findings, "rcp-near-fail");
    REQUIRE(!found.empty());
    const Finding* f = nullptr;
    for (const auto* x : found)
      if (x->result == "ExampleOrg/cpu_2x_example/minilm") f = x;
    REQUIRE(f);
    double mean = 0, bound = 0, margin = -1;
    for (const auto& e : f->evidence) {
      if (e.figure == "olympic mean of the runs' convergence") mean = e.value;
      if (e.figure == "bound: RCP mean / max speedup") bound = e.value;
      if (e.figure == "margin") margin = e.value;
    }
    // The olympic mean of the epochs the store recorded for the runs (drop the fastest and the slowest).
    std::vector<double> epochs;
    Stmt q(fx.store->db(), "SELECT epochs FROM runs WHERE result_id = ?1 ORDER BY epochs");
    q.bind(1, f->result_id);
    while (q.step()) epochs.push_back(q.col_double(0));
    REQUIRE(epochs.size() == 5);
    CHECK(mean == doctest::Approx((epochs[1] + epochs[2] + epochs[3]) / 3));
    REQUIRE(bound > 0);
    CHECK(mean >= bound);
    CHECK(margin == doctest::Approx((mean / bound - 1) * 100));
    CHECK(f->evidence.size() == 5 + 5);  // the figures and each run's run_stop line
  }

  TEST_CASE("without the round's rule set the RCP margin is not checked, and the answer says so") {
    Fixture fx;
    fx.import(fx.copy("ExampleOrg"));
    testing::TempDir empty;
    testing::EnvVar sets("REFEREE_SETS", empty.path.string());
    testing::EnvVar rules("REFEREE_RULES", empty.path.string());
    testing::EnvVar cache("REFEREE_CACHE", empty.path.string());
    AuditRun run = fx.audit("", 1e6);
    CHECK(of_kind(run.findings, "rcp-near-fail").empty());
    REQUIRE(run.notes.size() == 1);
    CHECK(run.notes[0].rfind("rcp-near-fail not checked: rule set mini-1.0.0 not found", 0) == 0);
    // It names every place it looked, and the fix.
    // In the order they are searched: REFEREE_RULES, the cache, the built-in sets.
    CHECK_MESSAGE(run.notes[0].find("Looked in: REFEREE_RULES=" + empty.path.string() + ", the cache (" +
                                    empty.path.string() + "/rules: no rule sets installed), built-in rule sets (" +
                                    empty.path.string() + ")") != std::string::npos,
                  run.notes[0]);
    CHECK(run.notes[0].find("Fix: install the consortium's rule sets with referee rules fetch") != std::string::npos);
  }

  TEST_CASE("a near fail found with the rule set stays as it was when an audit runs without it (not gone)") {
    Fixture fx;
    fx.import(fx.copy("ExampleOrg"));
    AuditRun with = fx.audit("", 1e6);
    REQUIRE(!of_kind(with.findings, "rcp-near-fail").empty());
    testing::TempDir empty;
    testing::EnvVar sets("REFEREE_SETS", empty.path.string());
    testing::EnvVar rules("REFEREE_RULES", empty.path.string());
    testing::EnvVar cache("REFEREE_CACHE", empty.path.string());
    AuditRun without = fx.audit("", 1e6);
    CHECK(without.gone.empty());
    std::vector<Finding> stored;
    std::string error;
    REQUIRE(read_findings(*fx.store, "mini-1.0.0", "", "rcp-near-fail", 0, &stored, &error));
    REQUIRE(!stored.empty());
    for (const auto& f : stored) CHECK(f.state == "open");
  }

  TEST_CASE("referee audit --rules DIR: the only place looked; without rule sets the note says where it looked") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fx.store.reset();
    std::string out;
    REQUIRE(testing::run_referee("import " + pkg.string() + " --round mini-1.0.0 --db " + fx.db + " 2>&1", &out) == 0);
    testing::TempDir empty;
    const std::string none = "env -u REFEREE_RULES REFEREE_SETS=" + empty.path.string() + " REFEREE_CACHE=" +
                             empty.path.string() + " " + REFEREE_BINARY + " audit mini-1.0.0 --db " + fx.db;
    CHECK(testing::run_shell_capture(none, &out) == 0);
    CHECK_MESSAGE(out.find("rcp-near-fail not checked: rule set mini-1.0.0 not found. Looked in: REFEREE_RULES (not set), the cache (" +
                           empty.path.string() + "/rules: no rule sets installed), built-in rule sets (" +
                           empty.path.string() + "). Fix: install the consortium's rule sets "
                           "with referee rules fetch, set REFEREE_RULES=DIR, or pass --rules DIR (a tree with "
                           "compliance_checker/mini_1.0.0/) to a local referee audit") != std::string::npos,
                  out);
    CHECK(out.find("Looked in: (") == std::string::npos);
    // --rules naming the sets: checked, no note.
    const std::string sets = std::string(REFEREE_SOURCE_DIR) + "/rules/sets";
    CHECK(testing::run_shell_capture(none + " --rules " + sets, &out) == 0);
    CHECK_MESSAGE(out.find("rcp-near-fail not checked") == std::string::npos, out);
    // A mistyped rule set is named with the one it is close to.
    CHECK(testing::run_referee("check-package " + pkg.string() + " --ruleset mnii-1.0.0 --rules " + sets, &out) == 2);
    CHECK_MESSAGE(out.find("rule set mnii-1.0.0 not found; did you mean mini-1.0.0? Looked in:") != std::string::npos, out);
    // --rules naming a folder without them: the only place looked.
    CHECK(testing::run_referee("audit mini-1.0.0 --rules " + empty.path.string() + " --db " + fx.db, &out) == 0);
    CHECK_MESSAGE(out.find("not found. Looked in: --rules " + empty.path.string() + ". Fix:") != std::string::npos, out);
    // A server finds rule sets where it runs: --rules with --server is refused, exit 2.
    CHECK(testing::run_referee("audit mini-1.0.0 --rules " + sets + " --server http://127.0.0.1:9", &out) == 2);
    CHECK(out.find("--rules is for an audit of a local store") != std::string::npos);
  }

  TEST_CASE("failing checks: runs that make a result fail, quoted; a failed RCP check with the normalised score") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    // One bad run is dropped by olympic scoring; two make the result fail.
    for (int i : {0, 3})
      edit(minilm(pkg, i), "\"key\": \"opt_name\", \"value\": \"adam\"", "\"key\": \"opt_name\", \"value\": \"sgdx\"");
    fx.import(pkg);
    AuditRun run = fx.audit();
    auto found = of_kind(run.findings, "check-failure");
    REQUIRE(found.size() == 1);
    const Finding& f = *found[0];
    CHECK(f.fingerprint.find(":runs") != std::string::npos);
    CHECK(f.rule == "compliance_checker: closed_minilm.yaml KEY opt_name CHECK");
    CHECK(f.summary == "the result fails its checks: CHECK for 'opt_name' failed");
    REQUIRE(f.evidence.size() == 2);
    auto line0 = lines_with(minilm(pkg, 0), "\"opt_name\"");
    CHECK(f.evidence[0].file == "results/cpu_2x_example/minilm/result_0.txt");
    CHECK(f.evidence[0].line == line0.at(0).first);
    CHECK(f.evidence[0].text == line0.at(0).second);
    CHECK(f.evidence[1].file == "results/cpu_2x_example/minilm/result_3.txt");

    // A failed RCP check (as the store records it): the score normalised by its factor.
    REQUIRE(fx.store->exec("UPDATE results SET rcp_pass = 0, rcp_norm_factor = 1.2 WHERE benchmark = 'miniclf'", nullptr));
    AuditRun rcp = fx.audit();
    const Finding* r = nullptr;
    for (const auto* x : of_kind(rcp.findings, "check-failure"))
      if (x->fingerprint.find(":rcp") != std::string::npos) r = x;
    REQUIRE(r);
    CHECK(r->result == "ExampleOrg/cpu_2x_example/miniclf");
    Stmt q(fx.store->db(), "SELECT unscaled_minutes FROM results WHERE benchmark = 'miniclf'");
    REQUIRE(q.step());
    REQUIRE(r->has_impact);
    CHECK(r->impact_minutes == doctest::Approx(q.col_double(0) * 1.2));
    // Re-derived, the example's runs pass: the finding says the two disagree.
    CHECK(r->summary.find("passes with the rule set installed now") != std::string::npos);
  }

  TEST_CASE("hyperparameters identical to another submitter's; joint-submission partners excluded") {
    Fixture fx;
    fx.import(fx.copy("Acme"));
    fx.import(fx.copy("Bolt"));
    AuditRun run = fx.audit("Acme");
    auto found = of_kind(run.findings, "shared-hyperparameters");
    REQUIRE(found.size() == 2);  // minilm and miniclf
    for (const auto* f : found) {
      CHECK(f->organisation == "Acme");
      CHECK(f->summary.find("Bolt/cpu_2x_example/") != std::string::npos);
      CHECK(f->evidence.back().file.rfind("Bolt:results/cpu_2x_example/", 0) == 0);
    }
    // Only Acme was audited.
    for (const auto& f : run.findings) CHECK(f.organisation == "Acme");

    // A joint submission Acme+Bolt makes them partners: nothing to declare.
    fx.import(fx.copy("Acme+Bolt"));
    AuditRun joint = fx.audit("Acme");
    CHECK(of_kind(joint.findings, "shared-hyperparameters").empty());
    CHECK(joint.gone.size() == 2);
  }

  TEST_CASE("the routes: audit and findings through the API, the embargo, bad input") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 1);
    std::string original = testing::read_file(log);
    testing::write_file(log, original + original);
    fx.import(pkg);
    fx.import(fx.copy("Other"));
    fx.under_review();
    fx.store.reset();

    Api api(fx.db);
    auto call = [&](const std::string& method, const std::string& path, const std::string& body,
                    const std::string& token = "") {
      Request r;
      r.method = method;
      r.path = path;
      r.body = body;
      r.token = token;
      r.local_admin = token.empty();
      return api.handle(r);
    };
    Response a = call("POST", "/api/v1/audit", "{\"organisation\": \"exampleorg\"}");
    REQUIRE_MESSAGE(a.status == 200, a.body);
    mllog::Json j;
    std::string err;
    REQUIRE(mllog::parse_json_permissive(a.body, &j, &err));
    CHECK(j.find("organisation")->s == "ExampleOrg");
    long long id = 0;
    for (const auto& f : j.find("findings")->items)
      if (f.find("kind")->s == "repeated-run-start") id = f.find("id")->i;
    REQUIRE(id > 0);

    Response one = call("GET", "/api/v1/findings/" + std::to_string(id), "");
    REQUIRE(one.status == 200);
    CHECK(one.body.find("\"kind\":\"repeated-run-start\"") != std::string::npos);
    CHECK(call("GET", "/api/v1/findings/999", "").status == 404);
    CHECK(call("GET", "/api/v1/findings/x1", "").status == 400);
    {
      Request r;
      r.method = "GET";
      r.path = "/api/v1/findings";
      r.query = {{"kind", "repeated-run-start"}, {"organisation", "EXAMPLEORG"}};
      r.local_admin = true;
      Response l = api.handle(r);
      CHECK(l.status == 200);
      CHECK(l.body.find("\"id\":" + std::to_string(id) + ",") != std::string::npos);
      r.query = {{"kind", "system-mismatch"}};
      CHECK(api.handle(r).body == "{\"findings\":[]}");
    }
    CHECK(call("POST", "/api/v1/audit", "{\"round\": \"9.9.9\"}").status == 404);
    CHECK(call("POST", "/api/v1/audit", "{\"organisation\": \"Nobody\"}").status == 404);
    CHECK(call("POST", "/api/v1/audit", "{}").status == 400);
    CHECK(call("POST", "/api/v1/audit", "{\"round\": 3}").status == 400);
    CHECK(call("POST", "/api/v1/audit", "{\"scope\": \"all\"}").status == 400);

    // A member of an organisation that did not submit to a round under review
    // cannot audit it or read its findings; a member of one that did can.
    std::string error;
    auto s = Store::open(fx.db, &error);
    REQUIRE(s);
    REQUIRE(s->exec(
        "INSERT INTO organisations (name) VALUES ('Outsider');"
        "INSERT OR IGNORE INTO round_reviews (round_id, state) SELECT id, 'review' FROM rounds;"
        "INSERT INTO users (name, organisation_id, role, created_at) SELECT 'out', id, 'member', 'x' FROM organisations "
        "WHERE name = 'Outsider';"
        "INSERT INTO users (name, organisation_id, role, created_at) SELECT 'in', id, 'member', 'x' FROM organisations "
        "WHERE name = 'Other';",
        &error));
    // Tokens: the store keeps the hash (BLAKE2b-256, hex) of each.
    auto add_token = [&](const std::string& user, const std::string& token) {
      std::string hex = review::token_hash(token);
      Stmt q(s->db(), "INSERT INTO tokens (user_id, hash, prefix, created_at) SELECT id, ?2, 'x', 'x' FROM users WHERE name = ?1");
      q.bind(1, user).bind(2, hex);
      REQUIRE(q.run());
    };
    add_token("out", "out-token");
    add_token("in", "in-token");
    s.reset();
    // An organisation whose packages are all in a hidden round reads as one the store does not hold, word for
    // word (but the name asked), for the audit and the findings alike.
    auto same_as_missing = [&](const std::string& method, const std::string& path, const std::string& body,
                               const std::vector<std::pair<std::string, std::string>>& query) {
      auto ask = [&](const std::string& org) {
        std::string b = body;
        if (!b.empty()) b.replace(b.find("ORG"), 3, org);
        auto q = query;
        for (auto& kv : q)
          if (kv.second == "ORG") kv.second = org;
        Request r;
        r.method = method;
        r.path = path;
        r.body = b;
        r.query = q;
        r.token = "out-token";
        return api.handle(r);
      };
      Response h = ask("ExampleOrg"), m = ask("NoSuchOrg");
      CHECK(h.status == 404);
      CHECK(m.status == 404);
      std::string said = h.body;
      said.replace(said.find("ExampleOrg"), 10, "NoSuchOrg");
      CHECK(said == m.body);
      CHECK(h.body.find("mini-1.0.0") == std::string::npos);
    };
    same_as_missing("POST", "/api/v1/audit", "{\"organisation\": \"ORG\"}", {});
    same_as_missing("GET", "/api/v1/findings", "", {{"organisation", "ORG"}});
    // A finding in a round the member may not see: as one that does not exist.
    Response finding = call("GET", "/api/v1/findings/" + std::to_string(id), "", "out-token");
    CHECK(finding.status == 404);
    std::string absent = call("GET", "/api/v1/findings/99999", "", "out-token").body;
    absent.replace(absent.find("99999"), 5, std::to_string(id));
    CHECK(finding.body == absent);
    Response hidden = call("GET", "/api/v1/findings", "", "out-token");
    CHECK(hidden.status == 200);
    CHECK(hidden.body == "{\"findings\":[]}");
    CHECK(call("POST", "/api/v1/audit", "{\"organisation\": \"ExampleOrg\"}", "in-token").status == 200);
    CHECK(call("GET", "/api/v1/findings/" + std::to_string(id), "", "in-token").status == 200);
    CHECK(call("POST", "/api/v1/audit", "{}", "forged").status == 401);
  }

  TEST_CASE("referee audit on the command line: text, --json, re-run, exit codes") {
    Fixture fx;
    fs::path pkg = fx.copy("ExampleOrg");
    fs::path log = minilm(pkg, 1);
    std::string original = testing::read_file(log);
    testing::write_file(log, original + original);  // also fails its checks: a check-failure too
    fx.store.reset();
    std::string out;
    REQUIRE(testing::run_referee("import " + pkg.string() + " --round mini-1.0.0 --db " + fx.db + " 2>&1", &out) == 0);
    // A round without a review record counts as published: computed, not stored, and the answer says how to start one.
    CHECK(testing::run_referee("audit mini-1.0.0 --db " + fx.db + " 2>&1", &out) == 0);
    CHECK(out.find("2 finding(s), 2 new, 0 gone") != std::string::npos);
    CHECK(out.find("has no review record, so counts as published: findings were computed but not stored") != std::string::npos);
    CHECK(out.find("referee round schedule mini-1.0.0") != std::string::npos);
    REQUIRE(testing::run_referee("round schedule mini-1.0.0 --objections-due 2099-01-01 --db " + fx.db + " 2>&1", &out) == 0);
    int rc = testing::run_referee("audit mini-1.0.0 --db " + fx.db + " 2>&1", &out);
    CHECK(rc == 0);
    CHECK(out.find("audit of every organisation in mini-1.0.0: 2 finding(s), 2 new, 0 gone") != std::string::npos);
    CHECK(out.find("#1  new  repeated-run-start  ExampleOrg/cpu_2x_example/minilm") != std::string::npos);
    auto starts = lines_with(log, "\"run_start\"");
    REQUIRE(starts.size() == 2);
    CHECK(out.find("    results/cpu_2x_example/minilm/result_1.txt:" + std::to_string(starts[1].first) + ": " +
                   starts[1].second) != std::string::npos);
    CHECK(out.find("referee objection file --from-finding ID") != std::string::npos);
    // Again, by organisation (any case): the same id, now open.
    rc = testing::run_referee("audit exampleorg --db " + fx.db + " 2>&1", &out);
    CHECK(rc == 0);
    CHECK(out.find("audit of ExampleOrg in mini-1.0.0: 2 finding(s), 0 new, 0 gone") != std::string::npos);
    CHECK(out.find("#1  open  repeated-run-start") != std::string::npos);
    rc = testing::run_referee("audit ExampleOrg --round mini-1.0.0 --json --db " + fx.db + " 2>/dev/null", &out);
    CHECK(rc == 0);
    mllog::Json j;
    std::string err;
    REQUIRE_MESSAGE(mllog::parse_json_permissive(out, &j, &err), err);
    CHECK(j.find("findings")->items.at(0).find("id")->i == 1);
    // Refused: an unknown round or organisation is 404, exit 2 (a name it was given is unknown); a round with
    // --round is bad usage, exit 2.
    CHECK(testing::run_referee("audit 9.9.9 --db " + fx.db + " 2>&1", &out) == 2);
    CHECK(out.find("referee audit: ") == 0);
    CHECK(testing::run_referee("audit Nobody --db " + fx.db + " 2>&1", &out) == 2);
    CHECK(testing::run_referee("audit mini-1.0.0 --round mini-1.0.0 --db " + fx.db + " 2>&1", &out) == 2);
  }

  TEST_CASE("the published rounds 3.0 and 3.1: a handful of findings, each with evidence") {
    if (!testing::have_reference_data()) return;
    testing::TempDir t;
    std::string db = (t.path / "real.db").string();
    std::string rules = testing::reference_rules();
    for (const char* r : {"3.0", "3.1"}) {
      std::string out;
      int rc = testing::run_referee("import " + testing::reference_dir() + "/mlperf/training_results_v" + r +
                                        " --round training-" + r + ".0 --rules " + rules + " --db " + db + " -j1",
                                    &out);
      REQUIRE_MESSAGE(rc == 0, out);
    }
    std::string error;
    auto s = Store::open(db, &error);
    REQUIRE(s);
    Actor admin;
    admin.user = "local-admin";
    admin.role = Role::Admin;
    testing::EnvVar env("REFEREE_RULES", rules);
    {
      // 3.1 under review (its findings stored); 3.0 has no review record.
      Api api(db);
      Request r;
      r.method = "PUT";
      r.path = "/api/v1/rounds/training-3.1.0/schedule";
      r.body = "{}";
      r.local_admin = true;
      Response rec = api.handle(r);
      REQUIRE_MESSAGE(rec.status == 200, rec.body);
    }
    AuditRun r30, r31;
    REQUIRE_MESSAGE(run_audit(*s, admin, "training-3.0.0", "", &r30, &error), error);
    REQUIRE_MESSAGE(run_audit(*s, admin, "training-3.1.0", "", &r31, &error), error);
    MESSAGE("3.0: " << r30.findings.size() << " findings; 3.1: " << r31.findings.size());
    CHECK(r30.findings.size() < 30);
    CHECK(r31.findings.size() < 30);
    for (const auto* run : {&r30, &r31})
      for (const auto& f : run->findings) CHECK_MESSAGE(!f.evidence.empty(), f.fingerprint);
    // 3.1 resubmitted 3.0 logs, announced nowhere: found.
    CHECK(of_kind(r31.findings, "unannounced-resubmission").size() >= 10);
    // Azure's 3.0 runs use NVIDIA's hyperparameters; in 3.1 they are partners (Azure+NVIDIA).
    CHECK(!of_kind(r30.findings, "shared-hyperparameters").empty());
    CHECK(of_kind(r31.findings, "shared-hyperparameters").empty());
    // NVIDIA's 3.1 U-Net3D passes its RCP by 0.79%.
    auto near = of_kind(r31.findings, "rcp-near-fail");
    REQUIRE(near.size() == 1);
    CHECK(near[0]->result == "NVIDIA/eos_ngc23.04_mxnet/unet3d");
    // Both rounds have no review record: counted as published, nothing stored.
    REQUIRE(r30.notes.size() == 1);
    CHECK(r30.notes[0].find("has no review record, so counts as published") != std::string::npos);
    // NVIDIA's 3.1 RetinaNet fails its RCP check: normalised it scores 0.9193 min.
    bool retinanet = false;
    for (const auto* f : of_kind(r31.findings, "check-failure"))
      if (f->result == "NVIDIA/eos_n256_ngc23.09_pytorch/ssd" && f->fingerprint.find(":rcp") != std::string::npos) {
        retinanet = true;
        REQUIRE(f->has_impact);
        CHECK(f->impact_minutes == doctest::Approx(0.9193).epsilon(0.0005));
      }
    CHECK(retinanet);
    // Ids stay on a re-run.
    AuditRun again;
    REQUIRE(run_audit(*s, admin, "training-3.1.0", "", &again, &error));
    REQUIRE(again.findings.size() == r31.findings.size());
    for (size_t i = 0; i < again.findings.size(); ++i) CHECK(again.findings[i].id == r31.findings[i].id);
    CHECK(again.added == 0);
  }
}
