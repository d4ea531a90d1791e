// The typed operations of a round's review (review/round_ops.h) and of users
// and tokens (review/identity.h), called directly on a real temporary store
// as the CLI calls them on a local one: the same refusals, codes and
// messages as the routes, and the same answers once encoded.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>
#include <tuple>
#include <vector>

#include "review/identity.h"
#include "review/identity_codec.h"
#include "review/round_codec.h"
#include "review/round_ops.h"
#include "tests/review_fixture.h"
#include "tests/run_referee.h"

using namespace referee;
using namespace referee::review;
using namespace referee::testing::review_fixture;
using referee::testing::run_referee;

namespace {

// The actor a fixture user stands for (as Api::authenticate finds them).
Actor actor(Review& f, const std::string& name) {
  Stmt q(f.s->db(),
         "SELECT u.id, COALESCE(o.name, ''), u.role FROM users u LEFT JOIN organisations o ON o.id = u.organisation_id "
         "WHERE u.name = ?1");
  q.bind(1, name);
  REQUIRE(q.step());
  Actor a;
  a.user_id = q.col_int(0);
  a.user = name;
  a.organisation = q.col_text(1);
  REQUIRE(parse_role(q.col_text(2), &a.role));
  return a;
}

Actor local_admin() {
  Actor a;
  a.user = "local-admin";
  a.role = Role::Admin;
  a.local_admin = true;
  return a;
}

long long events(Review& f, const std::string& action) {
  Stmt q(f.s->db(), "SELECT COUNT(*) FROM events WHERE action = ?1");
  q.bind(1, action);
  REQUIRE(q.step());
  return q.col_int(0);
}

long long record_version(Review& f) {
  Stmt q(f.s->db(), "SELECT version FROM round_reviews WHERE round_id = ?1");
  q.bind(1, f.r31);
  REQUIRE(q.step());
  return q.col_int(0);
}

// `referee serve` on the store at `path`: its pid and URL.
struct Served {
  long pid = 0;
  std::string url;
  Served(const std::string& path, const fs::path& dir) {
    std::string out_file = (dir / "serve.out").string(), err_file = (dir / "serve.err").string(), out;
    REQUIRE(referee::testing::run_shell_capture(std::string(REFEREE_BINARY) + " serve --db '" + path +
                                                    "' --listen 127.0.0.1:0 > '" + out_file + "' 2> '" + err_file +
                                                    "' & echo $!",
                                                &out) == 0);
    pid = std::stol(out);
    for (int i = 0; i < 500 && url.empty(); ++i) {
      std::ifstream in(out_file);
      std::string line;
      if (std::getline(in, line) && line.rfind("listening on http://", 0) == 0) url = line.substr(13);
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(!url.empty(), "the server did not start");
    if (size_t sp = url.find(' '); sp != std::string::npos) url = url.substr(0, sp);
    while (!url.empty() && (url.back() == '\r' || url.back() == '\n')) url.pop_back();
  }
  ~Served() {
    kill(static_cast<pid_t>(pid), SIGTERM);
    for (int i = 0; i < 200 && kill(static_cast<pid_t>(pid), 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
};

// `text` without its lines starting with `prefix` (a token, shown once, differs between two stores).
std::string without_lines(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
    if (line.rfind(prefix, 0) != 0) out += line;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

}  // namespace

TEST_SUITE("rounds") {
  TEST_CASE("typed schedule: out of order is 400 naming both fields, a stale version 409, nothing written") {
    Review f;
    Actor chair = actor(f, "chair1");
    long long v = record_version(f);
    SetSchedule in;
    in.round = "3.1.0";
    in.dates = {{"submission_deadline", "2026-05-09"}, {"objections_due", "2026-05-08"}};
    auto r = set_schedule(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 400);
    CHECK(r.error().code == "schedule-order");
    CHECK(contains(r.error().message, "objections_due (2026-05-08T23:59:59Z) is before submission_deadline"));
    in.dates = {{"publication", "soon"}};
    r = set_schedule(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bad-date");
    CHECK(r.error().message.rfind("publication: 'soon' is not a date", 0) == 0);
    CHECK(events(f, "round.schedule") == 1);  // the fixture's, which made the record
    CHECK(record_version(f) == v);

    in.dates = {{"submission_deadline", "2026-05-01"}, {"objections_due", "2026-05-08T17:00Z"}};
    in.version = {true, v};
    r = set_schedule(*f.s, chair, in);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(r.value().name == "training-3.1.0");
    CHECK(r.value().version == v + 1);
    CHECK(r.value().schedule.objections_due == "2026-05-08T17:00:00Z");
    CHECK(events(f, "round.schedule") == 2);

    in.dates = {{"objections_due", "2026-05-09"}};  // still based on the version read before
    r = set_schedule(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 409);
    CHECK(r.error().code == "stale");
    CHECK(r.error().version == v + 1);
    CHECK(r.error().message == "the review record of training-3.1.0 changed since you read it (version " +
                                   std::to_string(v) + ", now " + std::to_string(v + 1) + ")");
    CHECK(events(f, "round.schedule") == 2);
    CHECK(show_round(*f.s, chair, "3.1.0").value().schedule.objections_due == "2026-05-08T17:00:00Z");
  }

  TEST_CASE("typed state: a member may not change it (403), a bad state 400, a stale version 409, then final") {
    Review f;
    Actor chair = actor(f, "chair1"), member = actor(f, "nv");
    long long v = record_version(f);
    ChangeRoundState in;
    in.round = "3.1.0";
    in.state = "final";
    auto r = change_round_state(*f.s, member, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 403);
    CHECK(r.error().code == "forbidden");
    CHECK(r.error().message == "only a review chair or an administrator changes a round's state");
    in.override_reason = "go on";
    r = change_round_state(*f.s, actor(f, "admin1"), in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 403);  // only a chair overrides
    CHECK(r.error().message == "only a review chair may override open objections");
    in.override_reason.clear();
    in.state = "Closed";
    r = change_round_state(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 400);
    CHECK(r.error().message == "state 'closed' is none of review, final, published");
    in.state = "FINAL";
    in.version = {true, v + 5};
    r = change_round_state(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 409);
    CHECK(r.error().version == v);
    in.version = {true, v};
    r = change_round_state(*f.s, chair, in);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(r.value().state == "final");
    CHECK(r.value().version == v + 1);
    CHECK(events(f, "round.state") == 1);
    in.state = "review";  // back needs a reason
    in.version = {};
    r = change_round_state(*f.s, chair, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "missing-field");
  }

  TEST_CASE("typed reads and writes: an embargoed round answers 404 word for word as a missing one") {
    Review f;
    Actor outsider = actor(f, "intel");  // Intel did not submit to 3.1.0, which is under review
    auto same = [](const Error& hidden, const Error& missing) {
      CHECK(hidden.status == 404);
      CHECK(missing.status == 404);
      std::string h = hidden.message;
      for (size_t at = h.find("3.1.0"); at != std::string::npos; at = h.find("3.1.0", at + 5)) h.replace(at, 5, "9.9.9");
      CHECK(h == missing.message);
      CHECK(hidden.hint == missing.hint);
      CHECK_FALSE(contains(hidden.message, "training-3.1.0"));
    };
    same(show_round(*f.s, outsider, "3.1.0").error(), show_round(*f.s, outsider, "9.9.9").error());
    same(round_pairings(*f.s, outsider, "3.1.0").error(), round_pairings(*f.s, outsider, "9.9.9").error());
    same(round_announcements(*f.s, outsider, "3.1.0").error(), round_announcements(*f.s, outsider, "9.9.9").error());
    same(round_report(*f.s, outsider, "3.1.0", "md").error(), round_report(*f.s, outsider, "9.9.9", "md").error());
    AnnounceResubmission a{"3.1.0", {"NVIDIA/eos/bert"}, "resubmitted", ""};
    AnnounceResubmission b{"9.9.9", {"NVIDIA/eos/bert"}, "resubmitted", ""};
    same(announce_resubmission(*f.s, outsider, a).error(), announce_resubmission(*f.s, outsider, b).error());
    auto listed = visible_rounds(*f.s, outsider);
    REQUIRE(listed.ok());
    for (const auto& r : listed.value()) CHECK(r.name != "training-3.1.0");
    CHECK(visible_rounds(*f.s, actor(f, "nv")).value().size() == 2);

    // A pairing of a hidden round is not known either.
    auto assigned = assign_pairings(*f.s, actor(f, "chair1"), AssignPairings{"3.1.0"});
    REQUIRE_MESSAGE(assigned.ok(), assigned.error().message);
    REQUIRE_FALSE(assigned.value().pairings.empty());
    long long id = assigned.value().pairings[0].id;
    auto p = update_pairing(*f.s, outsider, UpdatePairing{id, "done", {}});
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().status == 404);
    CHECK(p.error().message == "no pairing " + std::to_string(id));
    CHECK(events(f, "pairing.status") == 0);
  }

  TEST_CASE("typed pairings: assigned once, idempotent; the reviewer moves its status forward only") {
    Review f;
    Actor chair = actor(f, "chair1");
    CHECK(assign_pairings(*f.s, actor(f, "nv"), AssignPairings{"3.1.0"}).error().status == 403);
    auto a = assign_pairings(*f.s, chair, AssignPairings{"3.1.0"});
    REQUIRE_MESSAGE(a.ok(), a.error().message);
    CHECK(a.value().round == "training-3.1.0");
    REQUIRE(a.value().ranking.size() == 3);
    CHECK(a.value().ranking[0].organisation == "NVIDIA");  // two results, the most
    CHECK(a.value().kept == 0);
    CHECK(a.value().added.size() == a.value().pairings.size());
    CHECK(assignment_answer(a).status == 201);
    auto again = assign_pairings(*f.s, chair, AssignPairings{"3.1.0"});
    REQUIRE(again.ok());
    CHECK(again.value().added.empty());
    CHECK(again.value().kept == static_cast<long long>(a.value().pairings.size()));
    CHECK(assignment_answer(again).status == 200);
    CHECK(events(f, "pairings.assign") == 1);  // nothing added: no event

    Pairing mine;
    for (const auto& p : a.value().pairings)
      if (p.reviewer == "NVIDIA") mine = p;
    REQUIRE(mine.id > 0);
    CHECK(update_pairing(*f.s, actor(f, "goog"), UpdatePairing{mine.id, "done", {}}).error().status == 403);
    CHECK(update_pairing(*f.s, chair, UpdatePairing{mine.id, "started", {}}).error().message ==
          "status 'started' is none of assigned, in-progress, done");
    auto p = update_pairing(*f.s, actor(f, "nv"), UpdatePairing{mine.id, "Done", {true, mine.version}});
    REQUIRE_MESSAGE(p.ok(), p.error().message);
    CHECK(p.value().status == "done");
    CHECK(p.value().version == mine.version + 1);
    CHECK(p.value().reason == mine.reason);  // the answer shows the pairing as GET does
    CHECK(!mine.reason.empty());
    auto back = update_pairing(*f.s, actor(f, "nv"), UpdatePairing{mine.id, "assigned", {}});
    REQUIRE_FALSE(back.ok());
    CHECK(back.error().status == 422);
    CHECK(back.error().code == "bad-transition");
    CHECK(update_pairing(*f.s, actor(f, "nv"), UpdatePairing{mine.id, "assigned", {true, mine.version}}).error().status ==
          409);
  }

  TEST_CASE("typed announcements: a member's own results only; the answer lists what this request made") {
    Review f;
    AnnounceResubmission in{"3.1.0", {"Google/tpu/bert"}, "resubmitted from 3.0", ""};
    auto r = announce_resubmission(*f.s, actor(f, "nv"), in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 403);
    CHECK(r.error().message == "a member announces only their own organisation's results; Google/tpu/bert is Google's");
    in.results = {};
    CHECK(announce_resubmission(*f.s, actor(f, "nv"), in).error().status == 400);
    in.results = {"NVIDIA/eos/bert"};
    r = announce_resubmission(*f.s, actor(f, "nv"), in);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK_FALSE(r.value().late);
    REQUIRE(r.value().announcements.size() == 1);
    CHECK(r.value().announcements[0].result == "NVIDIA/eos/bert");
    CHECK(r.value().announcements[0].user == "nv");
    CHECK(announced_answer(r).status == 201);
    auto rows = round_announcements(*f.s, actor(f, "goog"), "3.1.0");
    REQUIRE(rows.ok());
    CHECK(rows.value().rows.size() == 1);
    // One result named twice, in another case the second time: one announcement.
    in.results = {"NVIDIA/eos/retinanet", "nvidia/EOS/RetinaNet"};
    r = announce_resubmission(*f.s, actor(f, "nv"), in);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(r.value().announcements.size() == 1);
    CHECK(round_announcements(*f.s, actor(f, "goog"), "3.1.0").value().rows.size() == 2);
  }

  TEST_CASE("routes: an actor whose role may not make the request is refused (403) whatever body they sent") {
    Review f;
    long long before = f.count("events");
    for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"PUT", "/api/v1/rounds/3.1.0/schedule", R"({"deadline": 1})"},
             {"POST", "/api/v1/rounds/3.1.0/state", "not json"},
             {"POST", "/api/v1/rounds/3.1.0/pairings", R"({"x": 1})"},
             {"POST", "/api/v1/users", R"({"name": 5})"},
             {"POST", "/api/v1/users/nv/tokens", R"({"x": 1})"},
             {"POST", "/api/v1/users/nv/revoke", "["},
             {"POST", "/api/v1/tokens/revoke", "{}"}}) {
      const std::string where = path;  // a copy: doctest's CAPTURE takes it in a lambda
      CAPTURE(where);
      Response r = f.call("nv", method, path, body);
      CHECK(r.status == 403);
      CHECK(f.call("admin1", method, path, body).status == 400);  // the same body from one who may: read, and refused
    }
    CHECK(f.count("events") == before);  // nothing written
  }

  TEST_CASE("typed answers are the API's: the same bytes as the route given the request body made from the value") {
    Review f;
    Actor chair = actor(f, "chair1");
    SetSchedule in;
    in.round = "3.1.0";
    in.dates = {{"submission_deadline", "2026-05-01"}, {"first_meeting", "2026-05-20"}};
    Response typed = round_answer(set_schedule(*f.s, chair, in));
    REQUIRE_MESSAGE(typed.status == 200, typed.body);
    in.dates = {{"publication", "2026-06-30"}};
    Response routed = f.call("chair1", "PUT", "/api/v1/rounds/3.1.0/schedule", request_body(in));
    REQUIRE_MESSAGE(routed.status == 200, routed.body);
    CHECK(routed.body == round_answer(show_round(*f.s, chair, "3.1.0")).body);
    CHECK(contains(routed.body, "\"first_meeting\":\"2026-05-20T23:59:59Z\""));
    ChangeRoundState bad{"3.1.0", "final", "", "", {true, 1}};
    Response a = round_answer(change_round_state(*f.s, chair, bad));
    Response b = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", request_body(bad));
    CHECK(a.status == 409);
    CHECK(a.body == b.body);
    CHECK(report_answer(round_report(*f.s, chair, "3.1.0", "json")).body ==
          f.call("chair1", "GET", "/api/v1/rounds/3.1.0/report?format=json", "").body);
    Response md = report_answer(round_report(*f.s, chair, "3.1.0", "md"));
    CHECK(md.content_type == "text/markdown; charset=utf-8");
    CHECK(report_answer(round_report(*f.s, chair, "3.1.0", "pdf")).status == 400);
    CHECK(rounds_answer(visible_rounds(*f.s, chair)).body == f.call("chair1", "GET", "/api/v1/rounds", "").body);
  }
}

TEST_SUITE("review") {
  TEST_CASE("typed users: administrators only; the token once; a duplicate 409; revocation by name and prefix") {
    Review f;
    Actor admin = local_admin();
    AddUser in{"ann", "NVIDIA", "member", false};
    auto r = add_user(*f.s, actor(f, "chair1"), in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().status == 403);
    CHECK(r.error().message == "only an administrator manages users and tokens (you are chair1, chair)");
    CHECK(add_user(*f.s, admin, AddUser{"ann", "NVIDIA", "boss", false}).error().message ==
          "role 'boss' is not member, chair or admin");
    CHECK(add_user(*f.s, admin, AddUser{"ann", "", "member", false}).error().code == "missing-field");
    CHECK(add_user(*f.s, admin, AddUser{"a b", "NVIDIA", "member", false}).error().status == 400);
    CHECK(add_user(*f.s, admin, AddUser{"ann", "Acme", "member", false}).error().code == "unknown-organisation");
    r = add_user(*f.s, admin, in);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(r.value().user.name == "ann");
    CHECK(r.value().user.organisation == "NVIDIA");
    CHECK(r.value().user.role == "member");
    CHECK(r.value().token.rfind("rft_", 0) == 0);
    CHECK(r.value().prefix == r.value().token.substr(0, 12));
    CHECK(added_user_answer(r).status == 201);
    auto twice = add_user(*f.s, admin, in);
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.error().status == 409);
    CHECK(twice.error().code == "exists");
    // The token made works against the API.
    Request me;
    me.method = "GET";
    me.path = "/api/v1/me";
    me.token = r.value().token;
    CHECK(f.api->handle(me).status == 200);

    auto t = issue_token(*f.s, admin, IssueToken{"ann"});
    REQUIRE(t.ok());
    CHECK(t.value().user.name == "ann");
    CHECK(issue_token(*f.s, admin, IssueToken{"nobody"}).error().message == "no user nobody");
    auto one = revoke_token(*f.s, admin, RevokeToken{t.value().prefix});
    REQUIRE_MESSAGE(one.ok(), one.error().message);
    CHECK(one.value().user == "ann");
    CHECK(one.value().revoked == 1);
    CHECK(revoke_token(*f.s, admin, RevokeToken{t.value().prefix}).error().status == 404);
    auto all = revoke_user(*f.s, admin, RevokeUser{"ann"});
    REQUIRE(all.ok());
    CHECK(all.value().revoked == 1);  // the first token; the second was revoked by its prefix
    CHECK(f.api->handle(me).status == 401);
    CHECK(revoked_answer(all).body == R"({"user":"ann","revoked":1})");

    CHECK(list_users(*f.s, actor(f, "nv")).error().status == 403);
    auto users = list_users(*f.s, actor(f, "chair1"));
    REQUIRE(users.ok());
    CHECK(users_answer(users).body == f.call("chair1", "GET", "/api/v1/users", "").body);
    for (const auto& u : users.value())
      if (u.name == "ann") {
        REQUIRE(u.tokens.size() == 2);
        CHECK(u.tokens[0].revoked);
        CHECK(u.tokens[1].revoked);
      }
  }

  TEST_CASE("CLI: round, review, resubmission and user commands print the same on a local store and through a server") {
    // Two stores made alike: one used by the CLI locally, the other behind referee serve.
    Review local, remote;
    local.s.reset();
    local.api.reset();
    remote.s.reset();
    remote.api.reset();
    Served server(remote.path, remote.dir.path);
    struct Step {
      const char* who;
      std::string args;
      int rc;  // 0 done; 1 refused (403, 409, 422); 2 not done (400, 404)
    };
    const Step steps[] = {
        {"chair1", "round schedule 3.1.0 --from-deadline 2026-05-01", 0},
        {"chair1", "round schedule 3.1.0 --publication 2026-04-01", 2},
        {"chair1", "round state 3.1.0 final --version 99", 1},
        {"nv", "round state 3.1.0 final", 1},
        {"intel", "round show 3.1.0", 2},
        {"intel", "review pairings --round 3.1.0", 2},
        {"chair1", "review assign --round 3.1.0", 0},
        {"chair1", "review assign --round 3.1.0 --json", 0},
        {"nv", "review pairings --round 3.1.0 --json", 0},
        {"nv", "review pairing 1 --status in-progress", 0},
        {"goog", "review pairing 1 --status done", 1},
        {"nv", "review pairing 999 --status done", 2},
        {"nv", "resubmission announce --round 3.1.0 NVIDIA/eos/bert --text resubmitted", 0},
        {"goog", "resubmission announce --round 3.1.0 NVIDIA/eos/bert --text theirs", 1},
        {"chair1", "round state 3.1.0 final --json", 0},
        {"chair1", "round state 3.1.0 review", 2},
        {"dell", "round list --json", 0},
        {"dell", "round show 3.1.0", 0},
        {"chair1", "review report --round 9.9.9", 2},
        {"admin1", "user add zed --org Dell --role member", 0},
        {"admin1", "user add zed --org Dell --role member", 1},
        {"admin1", "user add yan --org Acme --role member", 2},
        {"admin1", "user add xi --role king", 2},
        {"nv", "user list", 1},
        {"admin1", "user token zed", 0},
        {"admin1", "user token nobody", 2},
        {"admin1", "user revoke zed", 0},
        {"chair1", "user revoke zed", 1},
    };
    for (const auto& step : steps) {
      const auto& [who, args, rc] = step;
      const std::string as = who, command = args;  // copies: doctest's CAPTURE takes them in a lambda
      CAPTURE(as);
      CAPTURE(command);
      std::string here, there;
      int here_rc = run_referee(args + " --token " + local.token.at(who) + " --db '" + local.path + "'", &here);
      int there_rc = run_referee(args + " --token " + remote.token.at(who) + " --server " + server.url, &there);
      CHECK(here_rc == rc);
      CHECK(there_rc == rc);
      CHECK(without_lines(without_lines(here, "token: "), "new token for ") ==
            without_lines(without_lines(there, "token: "), "new token for "));
    }
    // The report as text, each store's own, comes out of both.
    std::string here, there;
    CHECK(run_referee("review report --round 3.1.0 --token " + local.token.at("chair1") + " --db '" + local.path + "'",
                      &here) == 0);
    CHECK(run_referee("review report --round 3.1.0 --token " + remote.token.at("chair1") + " --server " + server.url,
                      &there) == 0);
    CHECK(contains(here, "training-3.1.0"));
    CHECK(contains(there, "training-3.1.0"));
  }
}
