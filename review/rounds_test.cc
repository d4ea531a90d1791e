// Rounds under review, through review::Api::handle on a real temporary
// store: the schedule and its validation, state transitions and stale
// versions, the embargo, the required reviews (ranked pairs, an odd one out,
// the 512-accelerator rule), announcements of resubmitted logs and the
// committee's report in its three formats.
#include <doctest/doctest.h>
#include <sodium.h>

#include <atomic>
#include <map>
#include <thread>
#include <set>

#include "mllog/json.h"
#include "review/api.h"
#include "review/events.h"
#include "review/report.h"
#include "review/rounds.h"
#include "submissions/store.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

using namespace referee;
using namespace referee::review;
using submissions::Stmt;
using submissions::Store;
using testing::TempDir;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string hex_hash(const std::string& token) { return review::token_hash(token); }

mllog::Json parse(const std::string& body) {
  mllog::Json j;
  std::string err;
  bool ok = mllog::parse_json_permissive(body, &j, &err);
  std::string why = err + ": " + body;
  REQUIRE_MESSAGE(ok, why);
  return j;
}

// A store with a round of several submitters, users with tokens, and an Api on it.
struct World {
  TempDir t;
  std::string path;
  std::unique_ptr<Store> s;
  std::unique_ptr<Api> api;
  long long round_id = 0;
  std::map<std::string, long long> results;  // ORG/SYSTEM/BENCH -> id

  World() : path((t.path / "r.db").string()) {
    std::string error;
    s = Store::open(path, &error);
    REQUIRE_MESSAGE(s, error);
    exec("INSERT INTO rounds(name, usage, version, ordinal) VALUES ('training-3.1.0', 'training', '3.1.0', 3001000)");
    round_id = sqlite3_last_insert_rowid(s->db());
    api = std::make_unique<Api>(path);
  }
  void exec(const std::string& sql) {
    std::string error;
    REQUIRE_MESSAGE(s->exec(sql.c_str(), &error), error);
  }
  long long org(const std::string& name) {
    Stmt o(s->db(), "INSERT OR IGNORE INTO organisations(name) VALUES (?1)");
    o.bind(1, name);
    REQUIRE(o.run());
    Stmt q(s->db(), "SELECT id FROM organisations WHERE name = ?1");
    q.bind(1, name);
    REQUIRE(q.step());
    return q.col_int(0);
  }
  // `n` results of benchmarks b0..b(n-1) on one system of `accelerators`.
  void submitter(const std::string& name, int n, long long accelerators, double minutes = 10) {
    long long o = org(name);
    Stmt p(s->db(), "INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256, "
                    "referee_version, imported_at) VALUES (?1, ?2, '/x', 'h', 'pass', 'r', 'v', 't')");
    p.bind(1, round_id).bind(2, o);
    REQUIRE(p.run());
    long long pkg = sqlite3_last_insert_rowid(s->db());
    std::string sys = "sys_";
    sys += std::to_string(accelerators);
    Stmt sy(s->db(), "INSERT INTO systems(package_id, name, system_name, submitter, division, availability, number_of_nodes, "
                     "accelerators_per_node, accelerators_count, accelerator_model_name, valid, description_json) "
                     "VALUES (?1, ?2, ?2, ?3, 'closed', 'onprem', 1, ?4, ?4, 'NVIDIA H100-SXM5-80GB', 1, '{}')");
    sy.bind(1, pkg).bind(2, sys).bind(3, name).bind(4, accelerators);
    REQUIRE(sy.run());
    long long sid = sqlite3_last_insert_rowid(s->db());
    for (int i = 0; i < n; ++i) {
      std::string bench = "b";
      bench += std::to_string(i);
      Stmt r(s->db(), "INSERT INTO results(system_id, benchmark, division, verdict, score_minutes, unscaled_minutes) "
                      "VALUES (?1, ?2, 'closed', 'pass', ?3, ?3)");
      r.bind(1, sid).bind(2, bench).bind(3, minutes + i);
      REQUIRE(r.run());
      results[name + "/" + sys + "/" + bench] = sqlite3_last_insert_rowid(s->db());
    }
  }
  // A user with a token; returns the token.
  std::string user(const std::string& name, const std::string& organisation, const std::string& role) {
    Stmt u(s->db(), "INSERT INTO users(name, organisation_id, role, created_at) VALUES (?1, ?2, ?3, 't')");
    u.bind(1, name);
    if (organisation.empty()) u.bind_null(2); else u.bind(2, org(organisation));
    u.bind(3, role);
    REQUIRE(u.run());
    long long uid = sqlite3_last_insert_rowid(s->db());
    std::string token = "tok-" + name;
    Stmt t(s->db(), "INSERT INTO tokens(user_id, hash, prefix, created_at) VALUES (?1, ?2, 'tok', 't')");
    t.bind(1, uid).bind(2, hex_hash(token));
    REQUIRE(t.run());
    return token;
  }
  Response call(const std::string& method, const std::string& path, const std::string& token, const std::string& body = "",
                std::vector<std::pair<std::string, std::string>> query = {}) {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.query = std::move(query);
    if (token.empty()) r.local_admin = true; else r.token = token;
    return api->handle(r);
  }
  long long events(const std::string& action) {
    Stmt q(s->db(), "SELECT COUNT(*) FROM events WHERE action = ?1");
    q.bind(1, action);
    REQUIRE(q.step());
    return q.col_int(0);
  }
};

const char* kRound = "/api/v1/rounds/3.1.0";

}  // namespace

TEST_SUITE("rounds") {
  TEST_CASE("dates: ISO-8601 dates and UTC date-times, normalised; anything else refused") {
    std::string out, err;
    CHECK(parse_instant("2026-05-02", &out, &err));
    CHECK(out == "2026-05-02T23:59:59Z");
    CHECK(parse_instant("2026-05-02T17:00", &out, &err));
    CHECK(out == "2026-05-02T17:00:00Z");
    CHECK(parse_instant("2026-05-02T17:00:30.5Z", &out, &err));
    CHECK(out == "2026-05-02T17:00:30Z");
    CHECK(parse_instant("2024-02-29", &out, &err));
    CHECK_FALSE(parse_instant("2026-02-29", &out, &err));
    CHECK_FALSE(parse_instant("2026-13-01", &out, &err));
    CHECK_FALSE(parse_instant("2026-05-02T17:00+02:00", &out, &err));
    CHECK(contains(err, "UTC"));
    CHECK_FALSE(parse_instant("next friday", &out, &err));
    CHECK_FALSE(parse_instant("2026-05-02T25:00", &out, &err));
  }

  TEST_CASE("the MLCommons default schedule from a submission deadline") {
    Schedule s;
    std::string err;
    REQUIRE(default_schedule("2026-05-01", &s, &err));  // a Friday
    CHECK(s.submission_deadline == "2026-05-01T23:59:59Z");
    CHECK(s.objections_due == "2026-05-08T23:59:59Z");  // end of review week 1
    CHECK(s.responses_due == "2026-05-11T23:59:59Z");   // Monday of week 2
    CHECK(s.decisions_due == "2026-05-15T23:59:59Z");
    CHECK(s.scores_final == "2026-05-22T23:59:59Z");
    CHECK(s.publication == "2026-05-29T23:59:59Z");
    CHECK(s.first_meeting.empty());
    CHECK(schedule_in_order(s, &err));
    REQUIRE(default_schedule("2026-05-03T12:00Z", &s, &err));  // a Sunday: week 2 is 05-11 .. 05-17
    CHECK(s.responses_due == "2026-05-11T23:59:59Z");
    REQUIRE(default_schedule("2026-05-04", &s, &err));  // a Monday: week 2 is 05-12 .. 05-18
    CHECK(s.responses_due == "2026-05-18T23:59:59Z");
    CHECK_FALSE(default_schedule("May 1st", &s, &err));
  }

  TEST_CASE("schedule: validated, in order, creates the review record with an event, stale version 409") {
    World w;
    w.submitter("NVIDIA", 3, 8);
    auto r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"objections_due": "2026-05-08", "submission_deadline": "2026-05-09"})");
    CHECK(r.status == 400);
    CHECK(contains(r.body, "objections_due"));
    CHECK(contains(r.body, "before submission_deadline"));
    r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"publication": "soon"})");
    CHECK(r.status == 400);
    CHECK(contains(r.body, "publication"));
    r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"deadline": "2026-05-01"})");
    CHECK(r.status == 400);  // unknown field
    CHECK(w.events("round.schedule") == 0);
    {
      Stmt q(w.s->db(), "SELECT COUNT(*) FROM round_reviews");
      REQUIRE(q.step());
      CHECK(q.col_int(0) == 0);  // nothing written by refused requests
    }
    r = w.call("PUT", std::string(kRound) + "/schedule", "",
               R"({"submission_deadline": "2026-05-01", "objections_due": "2026-05-08T17:00Z", "version": 0})");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    auto j = parse(r.body);
    CHECK(j.find("state")->s == "review");
    CHECK(j.find("version")->i == 1);
    CHECK(j.find("schedule")->find("objections_due")->s == "2026-05-08T17:00:00Z");
    CHECK(w.events("round.schedule") == 1);
    // A second writer that read version 0 is refused; the first one's dates stay.
    r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"objections_due": "2026-05-09", "version": 0})");
    CHECK(r.status == 409);
    CHECK(contains(r.body, "version 1"));
    r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"responses_due": "2026-05-07", "version": 1})");
    CHECK(r.status == 400);  // before objections_due
    r = w.call("PUT", std::string(kRound) + "/schedule", "", R"({"responses_due": "2026-05-11", "version": 1})");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(parse(r.body).find("version")->i == 2);
    CHECK(parse(r.body).find("schedule")->find("objections_due")->s == "2026-05-08T17:00:00Z");
    // Members do not set schedules.
    std::string member = w.user("alice", "NVIDIA", "member");
    CHECK(w.call("PUT", std::string(kRound) + "/schedule", member, R"({"publication": "2026-06-01"})").status == 403);
    CHECK(w.call("PUT", "/api/v1/rounds/9.9.9/schedule", "", R"({"publication": "2026-06-01"})").status == 404);
    std::string err;
    CHECK(verify_events(*w.s, &err).ok);
  }

  TEST_CASE("concurrent schedule writers: each version taken once, the rest 409, nothing lost, the chain verifies") {
    World w;
    w.submitter("NVIDIA", 1, 8);
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", "", R"({"submission_deadline": "2026-05-01"})").status == 200);
    std::atomic<int> ok{0}, stale{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 10; ++i) {
          auto cur = w.call("GET", kRound, "");
          mllog::Json j;
          std::string err;
          if (cur.status != 200 || !mllog::parse_json_permissive(cur.body, &j, &err)) {
            ++other;
            continue;
          }
          long long v = j.find("version")->i;
          std::string day = std::to_string(10 + (t + i) % 18);
          auto r = w.call("PUT", std::string(kRound) + "/schedule", "",
                          "{\"publication\": \"2026-06-" + day + "\", \"version\": " + std::to_string(v) + "}");
          if (r.status == 200) ++ok;
          else if (r.status == 409) ++stale;
          else ++other;
        }
      });
    for (auto& th : threads) th.join();
    CHECK(other == 0);
    CHECK(ok + stale == 80);
    CHECK(ok >= 1);
    auto j = parse(w.call("GET", kRound, "").body);
    CHECK(j.find("version")->i == 1 + ok);  // every accepted write bumped it once: none lost
    CHECK(w.events("round.schedule") == 1 + ok);
    std::string err;
    CHECK(verify_events(*w.s, &err).ok);
  }

  TEST_CASE("state: review -> final -> published, back to review only with a reason, 409 on a stale version") {
    World w;
    w.submitter("NVIDIA", 1, 8);
    std::string chair = w.user("carol", "", "chair"), member = w.user("alice", "NVIDIA", "member");
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final"})").status == 422);  // no review record
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"submission_deadline": "2026-05-01"})").status == 200);
    CHECK(w.call("POST", std::string(kRound) + "/state", member, R"({"state": "final"})").status == 403);
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "published"})").status == 422);
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "closed"})").status == 400);
    auto r = w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final", "version": 1})");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(parse(r.body).find("state")->s == "final");
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "review", "version": 1})").status == 409);
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "review", "version": 2})").status == 400);
    r = w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "review", "version": 2, "reason": "objection 3 reopened"})");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    std::string err;
    auto ev = read_events(*w.s, "round/training-3.1.0", &err);
    REQUIRE(ev.size() == 3);
    CHECK(ev[2].action == "round.state");
    CHECK(contains(ev[2].payload_json, "objection 3 reopened"));
    CHECK(ev[2].actor == "carol");
    REQUIRE(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final"})").status == 200);
    REQUIRE(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "published"})").status == 200);
    CHECK(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final"})").status == 422);
    CHECK(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"publication": "2026-06-01"})").status == 422);
  }

  TEST_CASE("embargo: a round in review is seen by its submitters and the committee only") {
    World w;
    w.submitter("NVIDIA", 1, 8);
    std::string insider = w.user("alice", "NVIDIA", "member"), outsider = w.user("bob", "Google", "member"),
                chair = w.user("carol", "", "chair");
    // No review record: published results, seen by everyone.
    CHECK(w.call("GET", kRound, outsider).status == 200);
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"submission_deadline": "2026-05-01"})").status == 200);
    CHECK_FALSE(w.api->can_see_round({0, "bob", "Google", Role::Member, false}, "training-3.1.0"));
    CHECK(w.api->can_see_round({0, "alice", "NVIDIA", Role::Member, false}, "training-3.1.0"));
    CHECK(w.call("GET", kRound, outsider).status == 404);
    CHECK(w.call("GET", std::string(kRound) + "/pairings", outsider).status == 404);
    CHECK(w.call("GET", std::string(kRound) + "/report", outsider).status == 404);
    CHECK(w.call("GET", std::string(kRound) + "/announcements", outsider).status == 404);
    CHECK(!contains(w.call("GET", "/api/v1/rounds", outsider).body, "training-3.1.0"));
    CHECK(w.call("GET", kRound, insider).status == 200);
    CHECK(w.call("GET", kRound, chair).status == 200);
    CHECK(w.call("GET", kRound, "forged").status == 401);
    REQUIRE(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final"})").status == 200);
    CHECK(w.call("GET", kRound, outsider).status == 404);
    REQUIRE(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "published"})").status == 200);
    CHECK(w.call("GET", kRound, outsider).status == 200);
  }

  TEST_CASE("embargo: every route taking a round answers an outsider as for a round that does not exist") {
    World w;
    w.submitter("NVIDIA", 1, 8);
    std::string outsider = w.user("bob", "Google", "member"), chair = w.user("carol", "", "chair");
    for (const char* state : {"review", "final"}) {
      CAPTURE(state);
      if (std::string(state) == "review")
        REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"submission_deadline": "2026-05-01"})").status == 200);
      else
        REQUIRE(w.call("POST", std::string(kRound) + "/state", chair, R"({"state": "final"})").status == 200);
      struct Ask {
        std::string method, path, body;
        std::vector<std::pair<std::string, std::string>> query;
      };
      auto asks = [](const std::string& round) {
        return std::vector<Ask>{
            {"GET", "/api/v1/rounds/" + round, "", {}},
            {"GET", "/api/v1/rounds/" + round + "/pairings", "", {}},
            {"GET", "/api/v1/rounds/" + round + "/report", "", {}},
            {"GET", "/api/v1/rounds/" + round + "/announcements", "", {}},
            {"POST", "/api/v1/audit", "{\"round\": \"" + round + "\"}", {}},
            {"GET", "/api/v1/findings", "", {{"round", round}}},
            {"GET", "/api/v1/objections", "", {{"round", round}}},
            {"GET", "/api/v1/log", "", {{"round", round}}},
        };
      };
      auto hidden = asks("3.1.0"), absent = asks("9.9.9");
      for (size_t i = 0; i < hidden.size(); ++i) {
        CAPTURE(hidden[i].method + " " + hidden[i].path);
        Response h = w.call(hidden[i].method, hidden[i].path, outsider, hidden[i].body, hidden[i].query);
        Response a = w.call(absent[i].method, absent[i].path, outsider, absent[i].body, absent[i].query);
        CHECK(h.status == 404);
        CHECK(a.status == 404);
        std::string same = h.body;
        for (size_t at = same.find("3.1.0"); at != std::string::npos; at = same.find("3.1.0", at + 5))
          same.replace(at, 5, "9.9.9");
        CHECK(same == a.body);  // word for word, but for the name asked
        CHECK_FALSE(contains(h.body, ".db"));
        CHECK_FALSE(contains(h.body, "training-3.1.0"));
        CHECK_FALSE(contains(a.body, "training-3.1.0"));  // the rounds there are go unnamed
        CHECK_FALSE(contains(h.body, "under review"));
      }
    }
  }

  TEST_CASE("pairing: ranked neighbours, an odd one out in a three-way, the 512 rule; idempotent") {
    World w;
    // Ranked by results: NVIDIA 9, Google 7, Azure+NVIDIA 5, Dell 4, Azure 3 (odd count: five submitters).
    w.submitter("NVIDIA", 9, 3584);
    w.submitter("Google", 7, 512);
    w.submitter("Azure+NVIDIA", 5, 8);
    w.submitter("Dell", 4, 8);
    w.submitter("Azure", 3, 1024);
    std::string chair = w.user("carol", "", "chair"), dell = w.user("dan", "Dell", "member"),
                azure = w.user("amy", "Azure", "member");
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"submission_deadline": "2026-05-01"})").status == 200);
    CHECK(w.call("POST", std::string(kRound) + "/pairings", dell).status == 403);
    auto r = w.call("POST", std::string(kRound) + "/pairings", chair);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = parse(r.body);
    std::vector<std::string> ranking;
    for (const auto& x : j.find("ranking")->items) ranking.push_back(x.find("organisation")->s);
    CHECK(ranking == std::vector<std::string>{"NVIDIA", "Google", "Azure+NVIDIA", "Dell", "Azure"});
    std::set<std::string> pairs;
    for (const auto& p : j.find("pairings")->items)
      pairs.insert(p.find("reviewer")->s + ">" + p.find("reviewed")->s + ":" + p.find("reason")->s);
    std::set<std::string> expected = {
        "NVIDIA>Google:rank",      "Google>NVIDIA:rank",                                    // 1-2
        "Azure+NVIDIA>Dell:rank",  "Dell>Azure+NVIDIA:rank",                               // 3-4 and 5: a three-way,
        "Dell>Azure:rank",         "Azure>Dell:rank",                                      // but Azure and Azure+NVIDIA
                                                                                           // share a partner
        "NVIDIA>Azure:scale-512",  "Azure>NVIDIA:scale-512",  "Google>Azure:scale-512",    // >= 512 accelerators
        "Azure>Google:scale-512"};
    CHECK(pairs == expected);
    CHECK(j.find("added")->items.size() == 10);
    CHECK(j.find("unpaired")->items.empty());
    CHECK(w.events("pairings.assign") == 1);
    // A reviewer moves its pairing on; another organisation cannot.
    long long dell_reviews = 0, version = 0;
    for (const auto& p : j.find("pairings")->items)
      if (p.find("reviewer")->s == "Dell" && p.find("reviewed")->s == "Azure") {
        dell_reviews = p.find("id")->i;
        version = p.find("version")->i;
      }
    std::string path = "/api/v1/pairings/" + std::to_string(dell_reviews);
    CHECK(w.call("PATCH", path, azure, R"({"status": "in-progress"})").status == 403);
    CHECK(w.call("PATCH", path, dell, R"({"status": "started"})").status == 400);
    r = w.call("PATCH", path, dell, R"({"status": "in-progress", "version": )" + std::to_string(version) + "}");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(w.call("PATCH", path, dell, R"({"status": "done", "version": )" + std::to_string(version) + "}").status == 409);
    CHECK(w.call("PATCH", path, dell, R"({"status": "assigned"})").status == 422);  // only a chair moves it back
    CHECK(w.call("PATCH", "/api/v1/pairings/9999", chair, R"({"status": "done"})").status == 404);
    std::string admin = w.user("root", "", "admin");
    CHECK(w.call("PATCH", path, admin, R"({"status": "done"})").status == 403);  // reviews are not an administrator's
    // Re-running adds nothing and keeps the status.
    r = w.call("POST", std::string(kRound) + "/pairings", chair);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    j = parse(r.body);
    CHECK(j.find("added")->items.empty());
    CHECK(j.find("kept")->i == 10);
    for (const auto& p : j.find("pairings")->items)
      if (p.find("id")->i == dell_reviews) CHECK(p.find("status")->s == "in-progress");
    CHECK(w.events("pairings.assign") == 1);
    // A new submitter changes the plan: only the new pairings are added.
    w.submitter("Lenovo", 1, 8);
    r = w.call("POST", std::string(kRound) + "/pairings", chair);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    j = parse(r.body);
    CHECK(j.find("kept")->i == 10);
    std::set<std::string> added, stale;
    for (const auto& p : j.find("added")->items) added.insert(p.find("reviewer")->s + ">" + p.find("reviewed")->s);
    for (const auto& p : j.find("not_required")->items) stale.insert(p.find("reviewer")->s + ">" + p.find("reviewed")->s);
    CHECK(added == std::set<std::string>{"Azure>Lenovo", "Lenovo>Azure"});  // six submitters: 5-6 pair
    // The three-way's rows with Azure are no longer required; they stay, with their status.
    CHECK(stale == std::set<std::string>{"Dell>Azure", "Azure>Dell"});
    CHECK(j.find("pairings")->items.size() == 12);
  }

  TEST_CASE("pairing plan: even count, a single submitter, ties by name") {
    auto plan = plan_pairings({{"B", 2, 8}, {"A", 2, 8}, {"C", 5, 8}, {"D", 1, 8}});
    std::vector<std::string> got;
    for (const auto& p : plan) got.push_back(p.reviewer + ">" + p.reviewed);
    CHECK(got == std::vector<std::string>{"C>A", "A>C", "B>D", "D>B"});
    CHECK(plan_pairings({{"A", 3, 8}}).empty());
  }

  TEST_CASE("pairing plan: a joint submission is not paired with its partner; the next one down moves up") {
    CHECK(same_party("Azure+NVIDIA", "nvidia"));
    CHECK(same_party("Azure+NVIDIA", "NVIDIA+CoreWeave"));
    CHECK_FALSE(same_party("NVIDIA_CoreWeave", "NVIDIA"));  // one folder name, not a joint submission
    CHECK_FALSE(same_party("Google", "NVIDIA"));
    auto plan = plan_pairings({{"NVIDIA", 9, 8}, {"Azure+NVIDIA", 8, 8}, {"Google", 7, 8}, {"Dell", 6, 8}});
    std::vector<std::string> got;
    for (const auto& p : plan) got.push_back(p.reviewer + ">" + p.reviewed);
    CHECK(got == std::vector<std::string>{"NVIDIA>Google", "Google>NVIDIA", "Azure+NVIDIA>Dell", "Dell>Azure+NVIDIA"});
    // Nobody left to swap with: the two are not paired with each other.
    CHECK(plan_pairings({{"NVIDIA", 9, 8}, {"Azure+NVIDIA", 8, 8}}).empty());
    // Nor under the 512 rule.
    plan = plan_pairings({{"NVIDIA", 9, 1024}, {"Google", 8, 8}, {"Azure+NVIDIA", 7, 2048}, {"Dell", 6, 8}});
    for (const auto& p : plan) CHECK_FALSE(same_party(p.reviewer, p.reviewed));
  }

  TEST_CASE("announcements: own organisation only, late after the first meeting unless a chair overrides") {
    World w;
    w.submitter("NVIDIA", 2, 8);
    w.submitter("Google", 1, 8);
    std::string chair = w.user("carol", "", "chair"), nv = w.user("alice", "NVIDIA", "member"),
                g = w.user("bob", "Google", "member");
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair,
                   R"({"submission_deadline": "2026-05-01", "first_meeting": "2099-01-01"})").status == 200);
    long long id0 = w.results["NVIDIA/sys_8/b0"];
    CHECK_FALSE(announced(*w.s, id0));
    auto r = w.call("POST", std::string(kRound) + "/announcements", g, R"({"results": ["NVIDIA/sys_8/b0"], "text": "x"})");
    CHECK(r.status == 403);
    std::string admin = w.user("root", "", "admin");
    auto by_admin = w.call("POST", std::string(kRound) + "/announcements", admin, R"({"results": ["NVIDIA/sys_8/b0"], "text": "x"})");
    CHECK(by_admin.status == 403);
    // Administrators are refused here: the hints do not send anyone to one.
    CHECK(r.body.find("administrator") == std::string::npos);
    CHECK(by_admin.body.find("administrator") == std::string::npos);
    r = w.call("POST", std::string(kRound) + "/announcements", nv, R"({"results": ["NVIDIA/nope/b0"], "text": "x"})");
    CHECK(r.status == 404);
    r = w.call("POST", std::string(kRound) + "/announcements", nv, R"({"results": ["NVIDIA/sys_8/b0"], "text": ""})");
    CHECK(r.status == 400);
    r = w.call("POST", std::string(kRound) + "/announcements", nv,
               R"({"results": ["nvidia/SYS_8/b0"], "text": "3.0 logs of b0, resubmitted"})");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    CHECK(announced(*w.s, id0));
    CHECK_FALSE(announced(*w.s, w.results["NVIDIA/sys_8/b1"]));
    CHECK(w.events("announcement.add") == 1);
    // The first meeting has passed: late.
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"first_meeting": "2026-05-02"})").status == 200);
    r = w.call("POST", std::string(kRound) + "/announcements", nv, R"({"results": ["NVIDIA/sys_8/b1"], "text": "late"})");
    CHECK(r.status == 422);
    CHECK(contains(r.body, "first review meeting"));
    CHECK(w.call("POST", std::string(kRound) + "/announcements", nv,
                 R"({"results": ["NVIDIA/sys_8/b1"], "text": "late", "override": "me"})").status == 403);
    CHECK_FALSE(announced(*w.s, w.results["NVIDIA/sys_8/b1"]));
    r = w.call("POST", std::string(kRound) + "/announcements", chair,
               R"({"results": ["NVIDIA/sys_8/b1"], "text": "late", "override": "told the chair by mail on time"})");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    CHECK(announced(*w.s, w.results["NVIDIA/sys_8/b1"]));
    std::string err;
    auto ev = read_events(*w.s, "round/", &err);
    CHECK(contains(ev.back().payload_json, "told the chair by mail on time"));
    r = w.call("GET", std::string(kRound) + "/announcements", g);
    REQUIRE(r.status == 200);
    CHECK(parse(r.body).find("announcements")->items.size() == 2);
  }

  TEST_CASE("report: schedule, pairings, objections with evidence, responses, votes, decision, overrides, statuses") {
    World w;
    w.submitter("NVIDIA", 1, 256, 0.85454);
    w.submitter("Google", 1, 512);
    std::string chair = w.user("carol", "", "chair"), g = w.user("bob", "Google", "member"),
                nv = w.user("alice", "NVIDIA", "member");
    REQUIRE(w.call("PUT", std::string(kRound) + "/schedule", chair, R"({"submission_deadline": "2026-05-01"})").status == 200);
    REQUIRE(w.call("POST", std::string(kRound) + "/pairings", chair).status == 201);
    long long res = w.results["NVIDIA/sys_256/b0"];
    std::string R = std::to_string(w.round_id), X = std::to_string(res);
    w.exec("INSERT INTO objections (round_id, by_org, against_org, filed_by, title, rule, text, state, impact_minutes, created_at) "
           "VALUES (" + R + ", (SELECT id FROM organisations WHERE name='Google'), (SELECT id FROM organisations WHERE name='NVIDIA'), "
           "(SELECT id FROM users WHERE name='bob'), 'RetinaNet fails its RCP check', 'training_3.1.0/rcp: retinanet', "
           "'The convergence is faster than the reference allows.', 'decided', 0.9193, '2026-05-05T10:00:00Z')");
    w.exec("INSERT INTO objection_results VALUES (1, " + X + ")");
    w.exec("INSERT INTO evidence (objection_id, kind, figure_name, figure_value, figure_unit, user_id, created_at) VALUES "
           "(1, 'figure', 'rcp mean epochs', 0.95, 'of the reference', (SELECT id FROM users WHERE name='bob'), 't')");
    w.exec("INSERT INTO runs (result_id, file, content_sha256, fingerprint, compliant, counted, messages_json) VALUES (" + X +
           ", 'result_0.txt', 'c', 'f', 1, 1, '[]')");
    w.exec("INSERT INTO evidence (objection_id, kind, run_id, first_line, last_line, quoted, user_id, created_at) VALUES "
           "(1, 'lines', (SELECT MAX(id) FROM runs), 10, 11, ':::MLLOG {\"key\": \"run_start\"}' || char(10) || "
           "':::MLLOG {\"key\": \"run_start\"}', (SELECT id FROM users WHERE name='bob'), 't')");
    w.exec("INSERT INTO responses (objection_id, organisation_id, user_id, text, remedy, factor, created_at) VALUES "
           "(1, (SELECT id FROM organisations WHERE name='NVIDIA'), (SELECT id FROM users WHERE name='alice'), "
           "'We ask for normalisation.', 'normalise', 1.07575758, 't')");
    w.exec("INSERT INTO votes VALUES (1, (SELECT id FROM organisations WHERE name='Google'), (SELECT id FROM users WHERE name='bob'), "
           "'uphold', 'normalise', 1.07575758, 't')");
    w.exec("INSERT INTO decisions (objection_id, outcome, remedy, factor, votes_uphold, votes_reject, votes_abstain, majority, "
           "decided_by, text, created_at) VALUES (1, 'upheld', 'normalise', 1.07575758, 1, 0, 0, 'simple', "
           "(SELECT id FROM users WHERE name='carol'), 'normalised as the RCP demands', 't')");
    w.exec("INSERT INTO result_status VALUES (" + X + ", 'normalised', 1.07575758, 1, 1, 't')");
    {
      std::string err;
      Actor c{0, "carol", "", Role::Chair, false};
      REQUIRE(w.s->begin(&err));
      REQUIRE(append_event(*w.s, c, "decision.record", "objection/1", R"({"override": "decided a day late, agreed in the meeting"})", &err));
      REQUIRE(append_event(*w.s, c, "decision.record", "objection/12", R"({"override": "not this one"})", &err));
      REQUIRE(w.s->commit(&err));
    }
    auto r = w.call("GET", std::string(kRound) + "/report", nv, "", {{"format", "json"}});
    REQUIRE_MESSAGE(r.status == 200, r.body);
    auto j = parse(r.body);
    CHECK(j.find("state")->s == "review");
    CHECK(j.find("pairings")->items.size() == 2);
    const auto& o = j.find("objections")->items.at(0);
    CHECK(o.find("by")->s == "Google");
    CHECK(o.find("against")->s == "NVIDIA");
    CHECK(o.find("results")->items.at(0).find("result")->s == "NVIDIA/sys_256/b0");
    CHECK(o.find("decision")->find("remedy")->s == "normalise");
    CHECK(o.find("overrides")->items.size() == 1);
    CHECK(o.find("evidence")->items.at(1).find("quoted")->s == ":::MLLOG {\"key\": \"run_start\"}\n:::MLLOG {\"key\": \"run_start\"}");
    CHECK(o.find("responses")->items.at(0).find("remedy")->s == "normalise");
    CHECK(j.find("result_status")->items.at(0).find("status")->s == "normalised");
    r = w.call("GET", std::string(kRound) + "/report", nv, "", {{"format", "md"}});
    REQUIRE(r.status == 200);
    CHECK(contains(r.content_type, "markdown"));
    CHECK(contains(r.body, "# Review of training-3.1.0"));
    CHECK(contains(r.body, "| objections_due | not set |"));
    CHECK(contains(r.body, "### Objection 1: RetinaNet fails its RCP check"));
    CHECK(contains(r.body, "- Rule: training_3.1.0/rcp: retinanet"));
    CHECK(contains(r.body, "figure: rcp mean epochs = 0.95 of the reference"));
    CHECK_MESSAGE(contains(r.body, "- lines: NVIDIA/sys_256/b0:result_0.txt lines 10-11\n\n  ```\n  :::MLLOG {\"key\": \"run_start\"}\n  :::MLLOG {\"key\": \"run_start\"}\n  ```\n"), r.body);
    CHECK(contains(r.body, "proposes normalise with factor 1.07575758"));
    CHECK(contains(r.body, "- Google: uphold"));
    CHECK(contains(r.body, "upheld, remedy normalise (factor 1.07575758)"));
    CHECK(contains(r.body, "decided a day late, agreed in the meeting"));
    CHECK(!contains(r.body, "not this one"));
    CHECK(contains(r.body, "Score impact: 0.9193 min if the objection holds (+7.58% of 0.8545 min)"));
    CHECK(contains(r.body, "| NVIDIA/sys_256/b0 | normalised | 1.07575758 | 1 | 1 |"));
    r = w.call("GET", std::string(kRound) + "/report", nv, "", {{"format", "github"}});
    REQUIRE(r.status == 200);
    CHECK(contains(r.body, "title: \"[training-3.1.0] RetinaNet fails its RCP check\""));
    CHECK(contains(r.body, "labels: [\"by Google\",\"against NVIDIA\",\"training-3.1.0\"]"));
    CHECK(contains(r.body, "Labels: by Google, against NVIDIA"));
    CHECK(w.call("GET", std::string(kRound) + "/report", nv, "", {{"format", "pdf"}}).status == 400);
  }

  TEST_CASE("the CLI: local store as its administrator, text and JSON from the answer, exit codes 0, 1, 2") {
    World w;
    w.submitter("NVIDIA", 2, 8);
    w.submitter("Google", 1, 8);
    w.s.reset();
    std::string db = " --db '" + w.path + "'", out;
    REQUIRE(testing::run_referee("round schedule 3.1.0 --from-deadline 2026-05-01" + db, &out) == 0);
    CHECK(contains(out, "objections_due       2026-05-08T23:59:59Z"));
    CHECK(contains(out, "responses_due        2026-05-11T23:59:59Z"));
    CHECK(testing::run_referee("round schedule 3.1.0 --publication 2026-04-01" + db, &out) == 2);  // out of order: 400
    CHECK(contains(out, "referee round schedule: publication"));
    CHECK(testing::run_referee("round state 3.1.0 published" + db, &out) == 1);  // review -> published: 422
    CHECK(contains(out, "cannot go to published"));
    CHECK(testing::run_referee("round schedule 3.1.0 --publication 2026-06-30 --version 7" + db, &out) == 1);  // 409
    REQUIRE(testing::run_referee("review assign --round 3.1.0" + db, &out) == 0);
    CHECK(contains(out, "2 pairings added"));
    CHECK(contains(out, "added: NVIDIA reviews Google (rank)"));
    REQUIRE(testing::run_referee("review pairing 1 --status done" + db, &out) == 0);
    REQUIRE(testing::run_referee("review pairings --round 3.1.0 --json" + db, &out) == 0);
    CHECK(contains(out, "\"status\":\"done\""));
    REQUIRE(testing::run_referee("review report --round 3.1.0 --format md" + db, &out) == 0);
    CHECK(contains(out, "| 1 | NVIDIA | Google | rank | done |"));
    CHECK(testing::run_referee("review report --round 9.9" + db, &out) == 2);  // 404: an unknown name
    CHECK(testing::run_referee("review report --round 3.1.0 --token nonsense" + db, &out) == 2);  // 401
  }
}
