// The review's core: users and tokens, objections and what is done to them,
// the policy (role x organisation x round state), deadlines, decisions and
// the audit trail, through review::Api::handle on real temporary stores and
// through the referee binary.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <csignal>
#include <chrono>
#include <cmath>

#include "base/utc_time.h"
#include "mllog/json.h"
#include "review/api.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/verify.h"
#include "submissions/store.h"
#include "tests/run_referee.h"
#include "tests/review_fixture.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

using referee::testing::run_referee;

namespace {
using namespace referee::testing::review_fixture;
}  // namespace

TEST_SUITE("review") {
  TEST_CASE("policy matrix: every route x role x round state, as the policy says") {
    struct Row {
      const char* state;  // round training-3.1.0's state when the request is made
      const char* route;
      const char* method;
      const char* path;   // {id}: objection 1, filed by Google against NVIDIA
      const char* body;
      const char* actor;  // nv = member of the accused org; goog = member of the filing org; dell = member of
                          // another submitter; intel = member of an org that did not submit; chair1, admin1;
                          // "" = no token; revoked; forged
      int expect;
    };
    const char* file_body = R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})";
    const char* file_own = R"({"round":"3.1.0","against":"Google","results":["Google/tpu/bert"],"title":"t","rule":"r"})";
    const char* ev = R"({"evidence":[{"check":"seed not logged"}]})";
    const char* ext = R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2099-01-01","reason":"r"})";
    const char* ev_override = R"({"evidence":[{"check":"seed not logged"}],"override":"asked by the committee"})";
    const char* file_body_override =
        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r","override":"late"})";
    const Row rows[] = {
        // users and tokens: administrators only (chairs may list)
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "nv", 403},
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "chair1", 403},
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "admin1", 201},
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "", 401},
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "revoked", 401},
        {"review", "add user", "POST", "/api/v1/users", R"({"name":"x","organisation":"NVIDIA","role":"member"})", "forged", 401},
        {"review", "list users", "GET", "/api/v1/users", "", "nv", 403},
        {"review", "list users", "GET", "/api/v1/users", "", "chair1", 200},
        {"review", "list users", "GET", "/api/v1/users", "", "admin1", 200},
        {"review", "list users", "GET", "/api/v1/users", "", "", 401},
        {"review", "new token", "POST", "/api/v1/users/nv2/tokens", "", "nv", 403},
        {"review", "new token", "POST", "/api/v1/users/nv2/tokens", "", "chair1", 403},
        {"review", "new token", "POST", "/api/v1/users/nv2/tokens", "", "admin1", 201},
        {"review", "revoke user", "POST", "/api/v1/users/nv2/revoke", "", "nv", 403},
        {"review", "revoke user", "POST", "/api/v1/users/nv2/revoke", "", "admin1", 200},
        {"review", "revoke prefix", "POST", "/api/v1/tokens/revoke", R"({"prefix":"rft_00000000"})", "nv", 403},
        {"review", "revoke prefix", "POST", "/api/v1/tokens/revoke", R"({"prefix":"rft_00000000"})", "admin1", 404},
        {"review", "me", "GET", "/api/v1/me", "", "nv", 200},
        {"review", "me", "GET", "/api/v1/me", "", "", 401},
        {"review", "me", "GET", "/api/v1/me", "", "revoked", 401},
        // filing: a member for their own organisation, never against it; the embargo hides the round
        {"review", "file", "POST", "/api/v1/objections", file_body, "goog", 201},
        {"review", "file", "POST", "/api/v1/objections", file_own, "goog", 403},
        {"review", "file", "POST", "/api/v1/objections", file_body, "nv", 403},
        {"review", "file", "POST", "/api/v1/objections", file_body, "intel", 404},
        {"review", "file", "POST", "/api/v1/objections", file_body, "chair1", 403},
        {"review", "file", "POST", "/api/v1/objections", file_body, "admin1", 403},
        {"review", "file", "POST", "/api/v1/objections", file_body, "", 401},
        {"review", "file", "POST", "/api/v1/objections", file_body, "revoked", 401},
        {"final", "file", "POST", "/api/v1/objections", file_body, "goog", 422},
        // a chair files for their own organisation, the objecting party: no override of its own deadline
        {"final", "file", "POST", "/api/v1/objections", file_body_override, "chairdell", 403},
        {"final", "file", "POST", "/api/v1/objections", file_body_override, "goog", 403},
        {"final", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "goog", 422},
        {"final", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev_override, "chair1", 201},
        {"final", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "dell", 422},
        {"final", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold","override":"late ballot"})", "chairdell", 201},
        {"final", "file", "POST", "/api/v1/objections", file_body, "intel", 404},
        {"published", "file", "POST", "/api/v1/objections", file_body, "goog", 422},
        // reading
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "nv", 200},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "goog", 200},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "dell", 200},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "intel", 404},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "chair1", 200},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "admin1", 200},
        {"review", "show", "GET", "/api/v1/objections/{id}", "", "", 401},
        {"final", "show", "GET", "/api/v1/objections/{id}", "", "intel", 404},
        {"published", "show", "GET", "/api/v1/objections/{id}", "", "intel", 200},
        {"review", "list", "GET", "/api/v1/objections?round=3.1.0", "", "intel", 404},
        {"review", "list", "GET", "/api/v1/objections?round=3.1.0", "", "dell", 200},
        {"review", "list", "GET", "/api/v1/objections", "", "", 401},
        // evidence: either party or a chair
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "goog", 201},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "nv", 201},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "dell", 403},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "intel", 404},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "chair1", 201},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "admin1", 403},
        {"review", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "", 401},
        {"published", "evidence", "POST", "/api/v1/objections/{id}/evidence", ev, "goog", 422},
        // responses: the accused organisation only
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "nv", 201},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "nv2", 201},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "goog", 403},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "dell", 403},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "intel", 404},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "chair1", 403},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "admin1", 403},
        {"review", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "revoked", 401},
        {"final", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "nv", 422},
        {"published", "respond", "POST", "/api/v1/objections/{id}/responses", R"({"text":"ok"})", "nv", 422},
        // votes: one per submitting organisation
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "dell", 201},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "nv", 201},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "goog", 201},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "chairdell", 201},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "intel", 404},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "chair1", 403},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "admin1", 403},
        {"review", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "", 401},
        {"published", "vote", "POST", "/api/v1/objections/{id}/votes", R"({"vote":"uphold"})", "dell", 422},
        // decisions: chairs only
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "chair1", 201},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "chairdell", 201},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "admin1", 403},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "nv", 403},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "goog", 403},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "intel", 404},
        {"review", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "", 401},
        {"final", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "chair1", 201},
        {"published", "decide", "POST", "/api/v1/objections/{id}/decision", R"({"tie_break":"reject"})", "chair1", 422},
        // withdrawal: the filing organisation
        {"review", "withdraw", "POST", "/api/v1/objections/{id}/withdraw", "", "goog", 200},
        {"review", "withdraw", "POST", "/api/v1/objections/{id}/withdraw", "", "nv", 403},
        {"review", "withdraw", "POST", "/api/v1/objections/{id}/withdraw", "", "chair1", 403},
        {"review", "withdraw", "POST", "/api/v1/objections/{id}/withdraw", "", "intel", 404},
        {"published", "withdraw", "POST", "/api/v1/objections/{id}/withdraw", "", "goog", 422},
        // extensions: a review chair of neither party
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "chair1", 201},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "chairdell", 201},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "admin1", 403},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "nv", 403},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "dell", 403},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "intel", 404},
        {"review", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "", 401},
        {"final", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "chair1", 422},
        {"published", "extend", "POST", "/api/v1/objections/{id}/extensions", ext, "chair1", 422},
        // the log: anyone with a token (a member sees only visible rounds' events)
        {"review", "log", "GET", "/api/v1/log", "", "nv", 200},
        {"review", "log", "GET", "/api/v1/log", "", "intel", 200},
        {"review", "log", "GET", "/api/v1/log?round=3.1.0", "", "intel", 404},
        {"review", "log", "GET", "/api/v1/log", "", "", 401},
        {"review", "verify", "GET", "/api/v1/log/verify", "", "nv", 200},
        {"review", "verify", "GET", "/api/v1/log/verify", "", "", 401},
        // no route may edit or delete the log
        {"review", "edit log", "DELETE", "/api/v1/log", "", "admin1", 405},
    };
    int failures = 0;
    for (const auto& row : rows) {
      Review f;
      long long id = f.file_rcp();
      if (std::string(row.route) == "decide") {
        // A case ready for a decision: the accused responded and one organisation voted.
        std::string o = "/api/v1/objections/" + std::to_string(id);
        REQUIRE(f.call("nv", "POST", o + "/responses", R"({"text":"we disagree"})").status == 201);
        REQUIRE(f.call("dell", "POST", o + "/votes", R"({"vote":"reject"})").status == 201);
      }
      if (std::string(row.route) == "extend") f.set_deadline("responses_due", "2020-01-01");  // a deadline to extend
      f.set_state(row.state);
      std::string p = row.path;
      if (size_t at = p.find("{id}"); at != std::string::npos) p.replace(at, 4, std::to_string(id));
      long long events_before = f.count("events");
      Response r = f.call(row.actor, row.method, p, row.body);
      INFO(row.state << " " << row.route << " " << row.method << " " << p << " as '" << row.actor << "': " << r.body);
      CHECK(r.status == row.expect);
      if (r.status != row.expect) ++failures;
      // A refused request writes nothing; an accepted write appends exactly one event.
      long long written = f.count("events") - events_before;
      if (r.status >= 400) CHECK(written == 0);
      else if (std::string(row.method) == "POST") CHECK(written == 1);
      if (r.status >= 400) CHECK(contains(r.body, "\"error\":{\"status\":" + std::to_string(r.status)));
    }
    CHECK(failures == 0);
  }

  TEST_CASE("the embargo: a list and the log leave out rounds the member may not see") {
    Review f;
    f.file_rcp();
    Response list = f.call("intel", "GET", "/api/v1/objections", "");
    REQUIRE(list.status == 200);
    CHECK(parse(list.body).find("objections")->items.empty());
    Response mine = f.call("dell", "GET", "/api/v1/objections", "");
    CHECK(parse(mine.body).find("objections")->items.size() == 1);
    Response log = f.call("intel", "GET", "/api/v1/log", "");
    CHECK_FALSE(contains(log.body, "objection.file"));
    CHECK(contains(f.call("dell", "GET", "/api/v1/log", "").body, "objection.file"));
    CHECK(contains(f.call("chair1", "GET", "/api/v1/log", "").body, "user.add"));
    CHECK_FALSE(contains(f.call("dell", "GET", "/api/v1/log", "").body, "user.add"));
  }

  TEST_CASE("users: the token is returned once, stored as its hash, and revocation ends it") {
    Review f;
    Response add = f.call("admin1", "POST", "/api/v1/users", R"({"name":"ann","organisation":"nvidia","role":"member"})");
    REQUIRE(add.status == 201);
    std::string token = parse(add.body).find("token")->s;
    CHECK(token.size() == 68);
    CHECK(token.rfind("rft_", 0) == 0);
    CHECK(parse(add.body).find("user")->find("organisation")->s == "NVIDIA");  // the store's spelling
    // Only the hash and the prefix are kept.
    Stmt q(f.s->db(), "SELECT hash, prefix FROM tokens t JOIN users u ON u.id = t.user_id WHERE u.name = 'ann'");
    REQUIRE(q.step());
    CHECK(q.col_text(0).size() == 64);
    CHECK(q.col_text(0) != token);
    CHECK(q.col_text(1) == token.substr(0, 12));
    CHECK_FALSE(contains(f.call("admin1", "GET", "/api/v1/users", "").body, token));
    Request me;
    me.method = "GET";
    me.path = "/api/v1/me";
    me.token = token;
    CHECK(f.api->handle(me).status == 200);
    CHECK(contains(f.api->handle(me).body, "\"organisation\":\"NVIDIA\""));
    // Unknown organisations need --create-org; members need one.
    CHECK(f.call("admin1", "POST", "/api/v1/users", R"({"name":"b","organisation":"Nope","role":"member"})").status == 404);
    CHECK(f.call("admin1", "POST", "/api/v1/users", R"({"name":"b","role":"member"})").status == 400);
    CHECK(f.call("admin1", "POST", "/api/v1/users",
                 R"({"name":"b","organisation":"Nope","role":"member","create_organisation":true})").status == 201);
    CHECK(f.call("admin1", "POST", "/api/v1/users", R"({"name":"ann","organisation":"NVIDIA","role":"member"})").status == 409);
    CHECK(f.call("admin1", "POST", "/api/v1/users/ann/revoke", "").status == 200);
    CHECK(f.api->handle(me).status == 401);
    // A new token works again; revoking by prefix ends just that one.
    Response again = f.call("admin1", "POST", "/api/v1/users/ann/tokens", "");
    REQUIRE(again.status == 201);
    me.token = parse(again.body).find("token")->s;
    CHECK(f.api->handle(me).status == 200);
    CHECK(f.call("admin1", "POST", "/api/v1/tokens/revoke", "{\"prefix\":\"" + me.token.substr(0, 12) + "\"}").status == 200);
    CHECK(f.api->handle(me).status == 401);
  }

  TEST_CASE("a response with a stale version is refused with 409 and writes nothing") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    CHECK(parse(f.call("nv", "GET", path, "").body).find("objection")->find("version")->i == 1);
    // Google adds evidence: version 2.
    REQUIRE(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"x"}]})").status == 201);
    long long responses = f.count("responses"), events = f.count("events");
    Response stale = f.call("nv", "POST", path + "/responses", R"({"text":"we disagree","version":1})");
    CHECK(stale.status == 409);
    CHECK(contains(stale.body, "now 2"));
    CHECK(f.count("responses") == responses);
    CHECK(f.count("events") == events);
    Response fresh = f.call("nv", "POST", path + "/responses", R"({"text":"we disagree","version":2})");
    CHECK(fresh.status == 201);
    CHECK(parse(fresh.body).find("objection")->find("state")->s == "responded");
    CHECK(parse(fresh.body).find("objection")->find("version")->i == 3);
    // If-Match works the same.
    Request r;
    r.method = "POST";
    r.path = path + "/responses";
    r.body = R"({"text":"again"})";
    r.token = f.token.at("nv");
    r.if_match = "2";
    CHECK(f.api->handle(r).status == 409);
    // An If-Match header sent empty is not a version (400), nor is a version below 1 in the body.
    r.if_match = "";
    r.if_match_given = true;
    Response empty = f.api->handle(r);
    CHECK(empty.status == 400);
    CHECK(contains(empty.body, "is not a version number"));
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x","version":-1})").status == 400);
  }

  TEST_CASE("inputs an attacker tried: a reserved user name, evidence without bound, unknown organisations, a bad head") {
    Review f;
    Response reserved = f.local("POST", "/api/v1/users", R"({"name":"local-admin","role":"chair"})");
    CHECK(reserved.status == 400);
    CHECK(contains(reserved.body, "reserved"));
    CHECK(f.local("POST", "/api/v1/users", R"({"name":"Local-Admin","role":"chair"})").status == 400);
    Response unknown_org = f.local("POST", "/api/v1/users", R"({"name":"ann","role":"member","organisation":"Acme"})");
    CHECK(unknown_org.status == 404);
    long long id = f.file_rcp();
    const std::string path = "/api/v1/objections/" + std::to_string(id);
    const std::string big(10001, 'x');
    CHECK(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":")" + big + R"("}]})").status == 400);
    CHECK(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"c","note":")" + big + R"("}]})").status == 400);
    CHECK(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":")" + big.substr(1) + R"("}]})").status == 201);
    Response two = f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"finding":1,"check":"x"}]})");
    CHECK(two.status == 400);
    CHECK(contains(two.body, "not several"));
    // Listing by an organisation the caller may not know is 404, as for one that does not exist.
    CHECK(f.call("goog", "GET", "/api/v1/objections?by=Nobody", "").status == 404);
    CHECK(f.call("goog", "GET", "/api/v1/objections?against=Intel", "").status == 200);  // Intel's 3.0 is published
    CHECK(f.call("intel", "GET", "/api/v1/objections?by=Google", "").body ==
          f.call("intel", "GET", "/api/v1/objections?by=Nobody", "").body.replace(
              f.call("intel", "GET", "/api/v1/objections?by=Nobody", "").body.find("Nobody"), 6, "Google"));
    // A head that is not one is bad input (400), not a log that does not verify.
    for (const char* head : {"xyz", "1234", "12:ZZZZZZZZ", ":abcdef12", "abcdef1", "abcdef12", "12:abcdef1234abcde"}) {
      Response v = f.call("chair1", "GET", std::string("/api/v1/log/verify?head=") + head, "");
      CHECK_MESSAGE(v.status == 400, head);
    }
    CHECK(f.call("chair1", "GET", "/api/v1/log/verify?head=abcdef1234abcdef", "").status == 200);
  }

  TEST_CASE("late actions are refused naming the deadline; a chair's override is recorded") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    f.set_deadline("objections_due", "2020-01-01T00:00:00Z");
    f.set_deadline("responses_due", "2020-01-02");
    f.set_deadline("decisions_due", "2099-01-01");
    Response late = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})");
    CHECK(late.status == 422);
    CHECK(contains(late.body, "objections_due"));
    CHECK(contains(late.body, "2020-01-01T00:00:00Z"));
    Response resp = f.call("nv", "POST", path + "/responses", R"({"text":"late"})");
    CHECK(resp.status == 422);
    CHECK(contains(resp.body, "responses_due"));
    // Only a chair overrides.
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"late","override":"please"})").status == 403);
    // The chair of Dell files for Dell, the objecting party: no override of its own side's deadline.
    Response own = f.call("chairdell", "POST", "/api/v1/objections",
                          R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r",)"
                          R"("override":"announced at the first meeting"})");
    CHECK(own.status == 403);
    CHECK(contains(own.body, "(Dell) is a party to this objection"));
    // A chair of neither party adds evidence after its own deadline with a reason: accepted, and the event says so.
    f.set_deadline("decisions_due", "2020-01-03T00:00:00Z");
    Response over = f.call("chair1", "POST", path + "/evidence",
                           R"({"evidence":[{"check":"seed not logged"}],"override":"announced at the first meeting"})");
    CHECK(over.status == 201);
    f.set_deadline("decisions_due", "2099-01-01");
    std::string error;
    auto events = referee::review::read_events(*f.s, "objection/", &error);
    REQUIRE(!events.empty());
    // The override as the committee's report reads it: the reason as a string.
    CHECK(contains(events.back().payload_json, "\"override\":\"announced at the first meeting\""));
    CHECK(contains(events.back().payload_json, "decisions_due (2020-01-03T00:00:00Z)"));
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    // After scores_final nothing but overrides.
    f.set_deadline("scores_final", "2020-02-01");
    Response vote = f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})");
    CHECK(vote.status == 422);
    CHECK(contains(vote.body, "scores_final"));
    Response decide = f.call("chair1", "POST", path + "/decision", R"({"tie_break":"reject","override":"ruling"})");
    CHECK(decide.status == 201);
  }

  TEST_CASE("extensions: a neutral chair gives one organisation more time on one objection, recorded, shown, verified") {
    Review f;
    f.add_user("chairnv", "NVIDIA", "chair");
    long long id = f.file_rcp();  // Google against NVIDIA
    Response second = f.call("goog", "POST", "/api/v1/objections",
                             R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})");
    REQUIRE(second.status == 201);
    long long other = parse(second.body).find("objection")->find("id")->i;
    const std::string path = "/api/v1/objections/" + std::to_string(id);
    const std::string other_path = "/api/v1/objections/" + std::to_string(other);
    f.set_deadline("objections_due", "2020-01-01");
    f.set_deadline("responses_due", "2020-01-02");
    f.set_deadline("decisions_due", "2099-01-01");
    f.set_deadline("scores_final", "2099-02-01");
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"late"})").status == 422);
    const std::string grant = R"({"organisation":"nvidia","deadline":"responses_due","until":"2099-01-01",)"
                              R"("reason":"NVIDIA's reviewer was ill; agreed at the meeting of 2026-05-04"})";
    // Nobody grants their own side more time; members and administrators grant none.
    Response own = f.call("chairnv", "POST", path + "/extensions", grant);
    CHECK(own.status == 403);
    CHECK(contains(own.body, "a chair of NVIDIA does not extend a deadline in a case NVIDIA is party to"));
    CHECK(f.call("nv", "POST", path + "/extensions", grant).status == 403);
    CHECK(f.call("goog", "POST", path + "/extensions", grant).status == 403);
    CHECK(f.call("admin1", "POST", path + "/extensions", grant).status == 403);
    // What an extension must be.
    auto refused = [&](const std::string& body, int status, const std::string& said) {
      Response r = f.call("chair1", "POST", path + "/extensions", body);
      CHECK_MESSAGE(r.status == status, body << " -> " << r.body);
      CHECK_MESSAGE(contains(r.body, said), r.body);
    };
    refused(R"({"organisation":"NVIDIA","deadline":"scores_final","until":"2099-01-01","reason":"r"})", 400,
            "not objections_due, responses_due or decisions_due");
    refused(R"({"organisation":"NVIDIA","deadline":"responses_due","until":"soon","reason":"r"})", 400, "until");
    refused(R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2099-01-01"})", 400, "reason");
    refused(R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2019-12-31","reason":"r"})", 422,
            "is not after the round's responses_due");
    refused(R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2099-03-01","reason":"r"})", 422,
            "after the round's scores_final");
    refused(R"({"organisation":"Intel","deadline":"decisions_due","until":"2099-01-01","reason":"r"})", 422,
            "has no package in round training-3.1.0");
    refused(R"({"organisation":"Nobody","deadline":"responses_due","until":"2099-01-01","reason":"r"})", 404,
            "no organisation 'Nobody'");
    // Each deadline is one party's: the accused responds, the objecting organisation adds its evidence.
    refused(R"({"organisation":"Dell","deadline":"responses_due","until":"2099-01-01","reason":"r"})", 422,
            "responses_due is the accused organisation's deadline");
    refused(R"({"organisation":"NVIDIA","deadline":"objections_due","until":"2099-01-01","reason":"r"})", 422,
            "objections_due is the objecting organisation's deadline");
    refused(R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2099-01-01","reason":" \u200b "})", 400,
            "reason");
    CHECK(contains(f.call("nv", "POST", path + "/extensions", grant).body, "only a review chair grants an extension"));
    // Nor does NVIDIA's chair move the round's schedule while NVIDIA's case is open.
    Response moved = f.call("chairnv", "PUT", "/api/v1/rounds/3.1.0/schedule", R"({"responses_due":"2099-01-01"})");
    CHECK(moved.status == 403);
    CHECK(contains(moved.body, "does not move its schedule"));
    CHECK(f.count("extensions") == 0);
    // A neutral chair grants it: shown on the objection, an event in the log.
    Response ok = f.call("chair1", "POST", path + "/extensions", grant);
    REQUIRE_MESSAGE(ok.status == 201, ok.body);
    Json granted = parse(ok.body);
    const Json* xs = granted.find("objection")->find("extensions");
    REQUIRE(xs->items.size() == 1);
    CHECK(xs->items[0].find("organisation")->s == "NVIDIA");
    CHECK(xs->items[0].find("deadline")->s == "responses_due");
    CHECK(xs->items[0].find("until")->s == "2099-01-01T23:59:59Z");
    CHECK(xs->items[0].find("granted_by")->s == "chair1");
    CHECK(contains(xs->items[0].find("reason")->s, "reviewer was ill"));
    std::string error;
    auto events = referee::review::read_events(*f.s, "objection/", &error);
    REQUIRE(!events.empty());
    CHECK(events.back().action == "objection.extend");
    CHECK(contains(events.back().payload_json, "\"round_deadline\":\"2020-01-02T23:59:59Z\""));
    // NVIDIA may respond on this objection, not on the other; Google's deadline is its own.
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"in time, as extended"})").status == 201);
    Response elsewhere = f.call("nv", "POST", other_path + "/responses", R"({"text":"late"})");
    CHECK(elsewhere.status == 422);
    CHECK(contains(elsewhere.body, "responses_due"));
    CHECK(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"late"}]})").status == 422);
    // The accused is heard first: a decision waits for the extended deadline too.
    REQUIRE(f.call("chair1", "POST", other_path + "/extensions", grant).status == 201);
    REQUIRE(f.call("dell", "POST", other_path + "/votes", R"({"vote":"uphold"})").status == 201);
    Response early = f.call("chair1", "POST", other_path + "/decision", R"({"remedy":"none"})");
    CHECK(early.status == 422);
    CHECK(contains(early.body, "2099-01-01T23:59:59Z"));
    // A later grant replaces the earlier one (both events kept).
    REQUIRE(f.call("chairdell", "POST", other_path + "/extensions",
                   R"({"organisation":"NVIDIA","deadline":"responses_due","until":"2098-01-01","reason":"shorter"})")
                .status == 201);
    CHECK(f.count("extensions") == 2);
    // A member's minutes carry no event numbers (they count every round's events); a chair's do.
    Response member_md = f.call("goog", "GET", "/api/v1/rounds/3.1.0/report?format=md", "");
    REQUIRE(member_md.status == 200);
    CHECK(contains(member_md.body, "granted by chair1 at "));
    CHECK_FALSE(contains(member_md.body, "(event "));
    CHECK(contains(member_md.body, "(replaced by a later grant)"));
    Response chair_md = f.call("chair1", "GET", "/api/v1/rounds/3.1.0/report?format=md", "");
    CHECK(contains(chair_md.body, "(event "));
    Json member_json = parse(f.call("goog", "GET", "/api/v1/rounds/3.1.0/report?format=json", "").body);
    bool seen_extension = false;
    for (const auto& o : member_json.find("objections")->items)
      for (const auto& x : o.find("extensions")->items) {
        seen_extension = true;
        CHECK(x.find("event")->kind == Json::Kind::Null);
      }
    CHECK(seen_extension);
    // The CLI shows it; --verify checks the rows against the events.
    f.s.reset();
    f.api.reset();
    std::string out;
    REQUIRE(run_referee("objection show " + std::to_string(other) + " --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "extension: NVIDIA responses_due until 2098-01-01T23:59:59Z (granted by chairdell: shorter)"));
    // The minutes list every grant, the replaced one too.
    REQUIRE(run_referee("review report --round 3.1.0 --format md --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "Extensions:\n- NVIDIA: responses_due until 2099-01-01T23:59:59Z (the round's: 2020-01-02T23:59:59Z), "
                        "granted by chair1 at "));
    CHECK(contains(out, "- NVIDIA: responses_due until 2098-01-01T23:59:59Z (the round's: 2020-01-02T23:59:59Z), granted by "
                        "chairdell at "));
    REQUIRE(run_referee("review log --verify --db '" + f.path + "'", &out) == 0);
    auto tampered = [&](const std::string& sql, const std::string& expect) {
      CAPTURE(sql);
      std::string o;
      CHECK(run_referee("review log --verify --db '" + f.edited_copy(sql) + "'", &o) == 1);
      CHECK_MESSAGE(contains(o, expect), o);
    };
    tampered("UPDATE extensions SET until = '2099-12-31T23:59:59Z' WHERE until LIKE '2098%'", "until 2099-12-31T23:59:59Z");
    tampered("UPDATE extensions SET reason = 'x'", "the reason is not the one");
    tampered("DELETE FROM extensions WHERE until LIKE '2098%'", "is missing");
    tampered("INSERT INTO extensions (objection_id, organisation_id, deadline, until, reason, created_at) SELECT " +
                 std::to_string(id) + ", id, 'objections_due', '2099-01-01T23:59:59Z', 'r', 't' FROM organisations "
                 "WHERE name = 'Google'",
             "has no objection.extend event");
  }

  TEST_CASE("a vote deadline per objection: set by a neutral chair, shown on the ballot, met by votes, verified") {
    Review f;
    f.add_user("chairnv", "NVIDIA", "chair");
    long long id = f.file_rcp();  // Google against NVIDIA
    const std::string path = "/api/v1/objections/" + std::to_string(id);
    f.set_deadline("decisions_due", "2099-01-01");
    f.set_deadline("scores_final", "2099-02-01");
    // The round's decisions_due until one is set here.
    Response before = f.call("dell", "GET", path, "");
    CHECK(contains(before.body, R"("votes_due":"2099-01-01T23:59:59Z","votes_due_set_here":false)"));
    const std::string set = R"({"until":"2098-06-01T12:00Z","reason":"voted at the meeting of 2098-05-30"})";
    // Only a chair of neither party; what it must be.
    CHECK(contains(f.call("chairnv", "POST", path + "/vote-deadline", set).body, "does not set the vote deadline of a case NVIDIA is party to"));
    CHECK(f.call("dell", "POST", path + "/vote-deadline", set).status == 403);
    CHECK(f.call("chair1", "POST", path + "/vote-deadline", R"({"until":"2098-06-01"})").status == 400);
    CHECK(f.call("chair1", "POST", path + "/vote-deadline", R"({"until":"later","reason":"r"})").status == 400);
    CHECK(contains(f.call("chair1", "POST", path + "/vote-deadline", R"({"until":"2020-01-01","reason":"r"})").body, "has passed"));
    CHECK(contains(f.call("chair1", "POST", path + "/vote-deadline", R"({"until":"2099-03-01","reason":"r"})").body,
                   "after the round's scores_final"));
    Response ok = f.call("chair1", "POST", path + "/vote-deadline", set);
    REQUIRE_MESSAGE(ok.status == 200, ok.body);
    CHECK(contains(ok.body, R"("votes_due":"2098-06-01T12:00:00Z","votes_due_set_here":true)"));
    CHECK(contains(ok.body, R"("votes_due":"2098-06-01T12:00:00Z")"));  // among the deadlines too
    CHECK(f.call("dell", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    // Once it has passed (as time goes by: here the store says so), votes are refused, naming it; the
    // round's decisions_due, still ahead, does not help; a neutral chair's override does.
    f.exec("UPDATE objections SET votes_due = '2020-06-01T12:00:00Z' WHERE id = " + std::to_string(id));
    Response late = f.call("goog", "POST", path + "/votes", R"({"vote":"uphold"})");
    CHECK(late.status == 422);
    CHECK(contains(late.body, "the vote deadline of this objection (2020-06-01T12:00:00Z) has passed"));
    // An organisation's extension of decisions_due gives it more time still.
    REQUIRE(f.call("chair1", "POST", path + "/extensions",
                   R"({"organisation":"Google","deadline":"decisions_due","until":"2099-01-02","reason":"travel"})").status == 201);
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    CHECK(f.call("nv", "POST", path + "/votes", R"({"vote":"reject"})").status == 422);
    // The log verifies the row against the event that set it: the edit above is found; the CLI shows the deadline.
    f.s.reset();
    f.api.reset();
    std::string out;
    CHECK(run_referee("review log --verify --db '" + f.path + "'", &out) == 1);
    CHECK_MESSAGE(contains(out, "votes_due '2020-06-01T12:00:00Z', the review log says '2098-06-01T12:00:00Z'"), out);
    REQUIRE(run_referee("objection show " + std::to_string(id) + " --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "votes due: 2020-06-01T12:00:00Z (set on this objection)"));
  }

  TEST_CASE("an objection whose comments or evidence cannot be read is an error, never shown without them") {
    Review f;
    long long id = f.file_rcp();
    f.s.reset();
    f.api.reset();
    for (const char* sql : {"DROP TABLE comments", "ALTER TABLE evidence RENAME COLUMN quoted TO q2"}) {
      CAPTURE(sql);
      std::string out;
      CHECK(run_referee("objection show " + std::to_string(id) + " --db '" + f.edited_copy(sql) + "'", &out) == 2);
      CHECK_MESSAGE(contains(out, "no such"), out);
    }
  }

  TEST_CASE("meetings: a chair records one, its minutes come from the store and the log, verify holds them to it") {
    Review f;
    long long id = f.file_rcp();  // Google against NVIDIA
    const std::string base = "/api/v1/rounds/3.1.0/meetings";
    const std::string today = referee::base::utc_now(referee::base::UtcFormat::Date);
    const std::string body = R"({"held_at":")" + today + R"(","attendees":["google","NVIDIA","Dell"],"objections":[)" +
                             std::to_string(id) + R"(],"notes":"NVIDIA asked for a week.\nAgreed."})";
    // Chairs (and the local administrator) record meetings; members and administrators do not.
    CHECK(f.call("goog", "POST", base, body).status == 403);
    CHECK(f.call("admin1", "POST", base, body).status == 403);
    auto refused = [&](const std::string& b, int status, const std::string& said) {
      Response r = f.call("chair1", "POST", base, b);
      CHECK_MESSAGE(r.status == status, b << " -> " << r.body);
      CHECK_MESSAGE(contains(r.body, said), r.body);
    };
    refused(R"({"held_at":"2099-01-01","attendees":["Google"]})", 422, "is in the future");
    refused(R"({"held_at":"soon","attendees":["Google"]})", 400, "held_at");
    refused(R"({"held_at":"2026-01-01","attendees":[]})", 400, "no organisation attended");
    refused(R"({"held_at":"2026-01-01","attendees":["Intel"]})", 422, "did not submit to training-3.1.0");
    refused(R"({"held_at":"2026-01-01","attendees":["Google"],"objections":[999]})", 404, "objection 999 is not one of");
    refused(R"({"held_at":"2026-01-01","attendees":["Google"],"objections":["x"]})", 400, "objections");
    Response ok = f.call("chair1", "POST", base, body);
    REQUIRE_MESSAGE(ok.status == 201, ok.body);
    CHECK(contains(ok.body, R"("attendees":["Google","NVIDIA","Dell"])"));  // as the store spells them
    CHECK(contains(f.call("dell", "GET", base, "").body, R"("meetings":[{"id":1,)"));
    // The minutes: attendance, the objection as it stands, the log since the start, the notes; a chair reads the chain's head.
    Response md = f.call("chair1", "GET", base + "/1/minutes", "");
    REQUIRE(md.status == 200);
    CHECK(contains(md.body, "# Minutes of meeting 1 of training-3.1.0"));
    CHECK(contains(md.body, "Attending: Google, NVIDIA, Dell."));
    CHECK(contains(md.body, "### Objection " + std::to_string(id) + ": "));
    CHECK(contains(md.body, "objection.file objection/" + std::to_string(id) + " by goog (Google) [event "));
    CHECK(contains(md.body, "> NVIDIA asked for a week.\n> Agreed.\n"));
    CHECK(contains(md.body, "The review log's head at the meeting: "));
    // A member reads no event numbers and no head: they count the events of rounds hidden from them.
    Response member = f.call("dell", "GET", base + "/1/minutes?format=json", "");
    REQUIRE(member.status == 200);
    CHECK(contains(member.body, "\"schema\": \"referee.minutes/1\""));
    CHECK_FALSE(contains(member.body, "\"seq\""));
    CHECK(contains(member.body, "\"chain_head\": null"));
    CHECK(f.call("dell", "GET", base + "/9/minutes", "").status == 404);
    CHECK(f.call("intel", "GET", base + "/1/minutes", "").status == 404);  // the embargo: the round is hidden from Intel
    // verify holds the row to its event.
    f.s.reset();
    f.api.reset();
    std::string out;
    REQUIRE(run_referee("review log --verify --db '" + f.path + "'", &out) == 0);
    auto tampered = [&](const std::string& sql, const std::string& expect) {
      CAPTURE(sql);
      std::string o;
      CHECK(run_referee("review log --verify --db '" + f.edited_copy(sql) + "'", &o) == 1);
      CHECK_MESSAGE(contains(o, expect), o);
    };
    tampered("UPDATE meetings SET attendees_json = '[\"Google\"]'", "the attendees are not those event");
    tampered("UPDATE meetings SET notes = 'nothing was agreed'", "the notes are not those");
    tampered("DELETE FROM meetings", "meetings: row 1 recorded by event");
    REQUIRE(run_referee("review minutes --round 3.1.0 --meeting 1 --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "Attending: Google, NVIDIA, Dell."));
  }

  TEST_CASE("majority rules: simple, two thirds to exclude or move, the chair's tie-break") {
    using referee::review::decide_outcome;
    struct Case {
      int up, rej;
      const char* remedy;
      const char* tie;
      bool ok;
      const char* outcome;
      const char* majority;
    } cases[] = {
        {2, 1, "none", "", true, "upheld", "simple"},
        {1, 2, "none", "", true, "rejected", "simple"},
        {3, 2, "fix", "", true, "upheld", "simple"},
        {1, 1, "none", "", false, "", ""},
        {1, 1, "none", "uphold", true, "upheld", "chair-tie-break"},
        {1, 1, "fix", "reject", true, "rejected", "chair-tie-break"},
        {0, 0, "none", "reject", true, "rejected", "chair-tie-break"},
        {2, 1, "withdraw", "", true, "upheld", "two-thirds"},
        {3, 2, "withdraw", "", false, "", ""},
        {3, 2, "open", "", false, "", ""},
        {4, 2, "open", "", true, "upheld", "two-thirds"},
        {1, 1, "withdraw", "uphold", false, "", ""},
        {1, 3, "withdraw", "", true, "rejected", "simple"},
    };
    for (const auto& c : cases) {
      auto o = decide_outcome(c.up, c.rej, c.remedy, c.tie);
      INFO(c.up << "-" << c.rej << " " << c.remedy << " tie " << c.tie << ": " << o.error);
      CHECK(o.ok == c.ok);
      if (c.ok) {
        CHECK(o.outcome == c.outcome);
        CHECK(o.majority == c.majority);
      }
    }
    // Through the API: 2 of 3 organisations uphold, withdraw needs two thirds and gets it.
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"withdraw"})").status == 201);
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    REQUIRE(f.call("nv", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    // A later vote replaces the organisation's earlier one (nv2 is NVIDIA too).
    REQUIRE(f.call("nv2", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    CHECK(f.count("votes") == 3);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "objection-open");
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"we disagree"})").status == 201);
    Response tie = f.call("chair1", "POST", path + "/decision", R"({"remedy":"withdraw"})");
    CHECK(tie.status == 201);
    Json tie_body = parse(tie.body);  // d points into it
    auto d = tie_body.find("objection")->find("decision");
    CHECK(d->find("outcome")->s == "upheld");
    CHECK(d->find("majority")->s == "two-thirds");
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "withdrawn");
    // Decided: no second decision; a vote is still taken, for an amendment (the decision stays as it is).
    CHECK(f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "withdrawn");
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"remedy":"none"})").status == 422);
  }

  TEST_CASE("the decision follows the vote: all votes fix is not a withdraw, all 1.01 is not 3.5") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"we disagree"})").status == 201);
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", path + "/votes", R"({"vote":"uphold","remedy":"fix"})").status == 201);
    long long events = f.count("events");
    Response other = f.call("chair1", "POST", path + "/decision", R"({"remedy":"withdraw"})");
    CHECK(other.status == 422);
    CHECK(contains(other.body, "\"code\":\"not-carried\""));
    CHECK(contains(other.body, "the votes do not carry remedy withdraw: 0 of the 3 votes cast support it"));
    CHECK(contains(other.body, "the votes carry fix"));
    CHECK(f.count("decisions") == 0);
    CHECK(f.count("events") == events);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "objection-open");
    // The votes change (each organisation's new vote replaces its old one): now withdraw is carried.
    for (const char* org : {"goog", "dell"})
      REQUIRE(f.call(org, "POST", path + "/votes", R"({"vote":"uphold","remedy":"withdraw"})").status == 201);
    Response carried = f.call("chair1", "POST", path + "/decision", R"({"remedy":"withdraw"})");
    CHECK(carried.status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "withdrawn");

    Review g;
    long long id2 = g.file_rcp();
    std::string p2 = "/api/v1/objections/" + std::to_string(id2);
    REQUIRE(g.call("nv", "POST", p2 + "/responses", R"({"text":"x"})").status == 201);
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(g.call(org, "POST", p2 + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.01})").status == 201);
    Response steep = g.call("chair1", "POST", p2 + "/decision", R"({"remedy":"normalise","factor":3.5})");
    CHECK(steep.status == 422);
    CHECK(contains(steep.body, "the votes do not carry remedy normalise x3.5"));
    // A factor alone asks for a normalisation by it, and is held to the votes as well.
    Response alone = g.call("chair1", "POST", p2 + "/decision", R"({"factor":3.5})");
    CHECK(alone.status == 422);
    CHECK(contains(alone.body, "the votes do not carry remedy normalise x3.5"));
    Response voted = g.call("chair1", "POST", p2 + "/decision", "{}");
    REQUIRE(voted.status == 201);
    Json vb = parse(voted.body);
    auto d = vb.find("objection")->find("decision");
    CHECK(d->find("remedy")->s == "normalise");
    CHECK(d->find("factor")->f == doctest::Approx(1.01));
    // Amending with a factor alone: the normalisation's factor (the votes still decide whether it is carried).
    Response amended = g.call("chair1", "POST", p2 + "/decision", R"({"amend":true,"reason":"typo","factor":1.01})");
    CHECK_MESSAGE(amended.status == 201, amended.body);
  }

  TEST_CASE("a decision: not by a chair of a party, only after the accused is heard, only on votes") {
    Review f;
    f.add_user("nvchair", "NVIDIA", "chair");
    f.add_user("googchair", "Google", "chair");
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    long long events = f.count("events");
    // A chair of the accused or of the objecting organisation: 403, whatever the votes.
    Response own = f.call("nvchair", "POST", path + "/decision", R"({"tie_break":"reject"})");
    CHECK(own.status == 403);
    CHECK(contains(own.body, "a chair of NVIDIA cannot decide a case NVIDIA is party to; another chair must"));
    CHECK(f.call("googchair", "POST", path + "/decision", R"({"tie_break":"uphold","override":"x"})").status == 403);
    // No response and responses_due not passed: 422 naming the deadline.
    f.set_deadline("responses_due", "2099-01-01");
    Response early = f.call("chair1", "POST", path + "/decision", R"({"tie_break":"reject"})");
    CHECK(early.status == 422);
    CHECK(contains(early.body, "responses_due (2099-01-01T23:59:59Z) has not passed"));
    CHECK(contains(early.body, "--override REASON"));
    // Heard (deadline passed) but no vote, or only abstentions: 422, even with a tie-break.
    f.set_deadline("responses_due", "2020-01-01");
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"abstain"})").status == 201);
    events = f.count("events");
    Response novote = f.call("chair1", "POST", path + "/decision", R"({"tie_break":"reject"})");
    CHECK(novote.status == 422);
    CHECK(contains(novote.body, "no uphold or reject vote"));
    CHECK(f.count("events") == events);
    CHECK(f.count("decisions") == 0);
    // One vote, deadline passed: decided. A chair of Dell (not a party) may.
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    Response ok = f.call("chairdell", "POST", path + "/decision", "{}");
    CHECK(ok.status == 201);
    // Before the deadline without a response, a chair's override is recorded in the event.
    Review g;
    long long id2 = g.file_rcp();
    std::string p2 = "/api/v1/objections/" + std::to_string(id2);
    g.set_deadline("responses_due", "2099-01-01");
    REQUIRE(g.call("dell", "POST", p2 + "/votes", R"({"vote":"reject"})").status == 201);
    Response over = g.call("chair1", "POST", p2 + "/decision", R"({"override":"the accused declined to respond"})");
    CHECK(over.status == 201);
    std::string error;
    auto ev = referee::review::read_events(*g.s, "objection/", &error);
    REQUIRE(!ev.empty());
    CHECK(contains(ev.back().payload_json, "decided before NVIDIA's response"));
  }

  TEST_CASE("numbers: a factor is finite, above 0, at most 100 and at least 1; reject and abstain carry no remedy") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x","remedy":"normalise","factor":1e300})").status == 400);
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x","remedy":"normalise","factor":-2})").status == 400);
    Response faster = f.call("nv", "POST", path + "/responses", R"({"text":"x","remedy":"normalise","factor":0.99})");
    CHECK(faster.status == 422);
    CHECK(contains(faster.body, "a factor below 1 would make the result faster; normalisation only penalises"));
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":101})").status == 400);
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":0.5})").status == 422);
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"reject","remedy":"withdraw"})").status == 400);
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"abstain","remedy":"normalise","factor":2})").status == 400);
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise","factor":0.9})").status == 422);
    CHECK(f.count("votes") == 0);
    CHECK(f.count("responses") == 0);
    CHECK(f.call("nv", "GET", "/api/v1/objections/99999999999999999999", "").status == 400);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":100})").status == 201);
    // The CLI checks --factor itself: a flag error (exit 2), not a request.
    std::string db = "--db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    std::string out;
    for (const char* bad : {"nan", "inf", "1e400", "0", "abc"}) {
      INFO(bad);
      CHECK(run_referee("objection vote " + std::to_string(id) + " --vote uphold --remedy normalise --factor " + bad +
                            " --token " + f.token.at("dell") + " " + db, &out) == 2);
      CHECK(contains(out, "factor '" + std::string(bad) + "' is not a finite number above 0 and at most 100"));
      CHECK_FALSE(contains(out, "not JSON"));
    }
  }

  TEST_CASE("final and published: refused with objections open, unless a chair overrides; final takes no new actions") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"we disagree"})").status == 201);
    long long events = f.count("events");
    Response open = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final"})");
    CHECK(open.status == 422);
    CHECK(contains(open.body, "#" + std::to_string(id) + " (responded)"));
    CHECK(contains(open.body, "--override REASON"));
    CHECK(f.call("admin1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final"})").status == 422);
    CHECK(f.call("admin1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"x"})").status == 403);
    CHECK(f.count("events") == events);
    // A chair's override moves it, and the event names the open objections.
    Response over = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"deadline"})");
    REQUIRE_MESSAGE(over.status == 200, over.body);
    std::string error;
    auto ev = referee::review::read_events(*f.s, "round/", &error);
    REQUIRE(!ev.empty());
    CHECK(contains(ev.back().payload_json, "\"override\":\"deadline\""));
    // In final: no filing, evidence, response or vote.
    CHECK(f.call("goog", "POST", "/api/v1/objections",
                 R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})").status == 422);
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"more"})").status == 422);
    CHECK(f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})").status == 422);
    Response evid = f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"x"}]})");
    CHECK(evid.status == 422);
    CHECK(contains(evid.body, "is final"));
    // Published still refused while it is open; decided, it goes.
    CHECK(f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"published"})").status == 422);
    REQUIRE(f.call("chairdell", "POST", path + "/votes", R"({"vote":"reject","override":"ballot"})").status == 201);
    REQUIRE(f.call("chair1", "POST", path + "/decision", "{}").status == 201);
    CHECK(f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"published"})").status == 200);
  }

  TEST_CASE("unknown names: 404 and exit 2 from the CLI; an unknown result lists the valid ones; names match in any case") {
    Review f;
    Response bad = f.call("goog", "POST", "/api/v1/objections",
                          R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/ssd"],"title":"t","rule":"r"})");
    CHECK(bad.status == 404);
    CHECK(contains(bad.body, "NVIDIA/eos/bert, NVIDIA/eos/retinanet"));
    Response any_case = f.call("goog", "POST", "/api/v1/objections",
                               R"({"round":"3.1.0","against":"nvidia","results":["nvidia/EOS/BERT"],"title":"t","rule":"r"})");
    CHECK(any_case.status == 201);
    CHECK(contains(any_case.body, "\"results\":[\"NVIDIA/eos/bert\"]"));
    std::string db = "--db '" + f.path + "'", goog = " --token " + f.token.at("goog") + " ";
    f.s.reset();
    f.api.reset();
    std::string out;
    const std::string file = "objection file --title t --rule r" + goog + db;
    CHECK(run_referee(file + " --round 3.1.0 --against NVIDIA --result NVIDIA/eos/ssd", &out) == 2);
    CHECK(contains(out, "NVIDIA/eos/bert"));
    CHECK(run_referee(file + " --round 9.9.9 --against NVIDIA --result NVIDIA/eos/bert", &out) == 2);
    CHECK(run_referee(file + " --round 3.1.0 --against Nobody --result Nobody/x/bert", &out) == 2);
    CHECK(run_referee(file + " --round 3.1.0 --against NVIDIA --result NVIDIA/eos/bert --drop-run result_99.txt", &out) == 2);
    CHECK(run_referee(file + " --round 3.1.0 --against NVIDIA --result NVIDIA/eos/retinanet --lines NVIDIA/eos/retinanet:result_9.txt:1", &out) == 2);
  }

  TEST_CASE("decide without a remedy takes the one most uphold votes proposed; a chair amends a decision, keeping history") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"normalise it","remedy":"normalise","factor":1.0758})").status == 201);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.0758})").status == 201);
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"uphold","remedy":"fix"})").status == 201);
    // One each: a tie between remedies is the chair's to name.
    Response tie = f.call("chair1", "POST", path + "/decision", "{}");
    CHECK(tie.status == 422);
    CHECK(contains(tie.body, "--remedy"));
    REQUIRE(f.call("nv", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.0758})").status == 201);
    Response d = f.call("chair1", "POST", path + "/decision", "{}");
    REQUIRE_MESSAGE(d.status == 201, d.body);
    Json dj = parse(d.body);
    const Json* dec = dj.find("objection")->find("decision");
    CHECK(dec->find("remedy")->s == "normalise");
    CHECK(dec->find("factor")->f == doctest::Approx(1.0758));
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.0758");
    // Amend: a reason is required; a member may not; the old decision stays visible as superseded.
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"amend":true,"remedy":"fix"})").status == 400);
    CHECK(f.call("nv", "POST", path + "/decision", R"({"amend":true,"remedy":"fix","reason":"x"})").status == 403);
    // Amending to a remedy the votes do not carry is refused; once they do, it is recorded.
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"amend":true,"remedy":"fix","reason":"NVIDIA reran it"})").status == 422);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"fix"})").status == 201);
    Response a = f.call("chair1", "POST", path + "/decision", R"({"amend":true,"remedy":"fix","reason":"NVIDIA reran it"})");
    REQUIRE_MESSAGE(a.status == 201, a.body);
    Json shown = parse(a.body);
    CHECK(shown.find("objection")->find("decision")->find("remedy")->s == "fix");
    const Json* sup = shown.find("objection")->find("superseded");
    REQUIRE(sup->items.size() == 1);
    CHECK(sup->items[0].find("decision")->find("remedy")->s == "normalise");
    CHECK(sup->items[0].find("reason")->s == "NVIDIA reran it");
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "fixed");
    CHECK(f.count("decisions") == 1);
    std::string error;
    auto ev = referee::review::read_events(*f.s, "objection/", &error);
    REQUIRE(!ev.empty());
    CHECK(ev.back().action == "decision.amend");
    CHECK(contains(ev.back().payload_json, "\"before\":{\"outcome\":\"upheld\",\"remedy\":\"normalise\""));
    // Amended to no remedy (the committee votes uphold without one): the result's status goes.
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("chair1", "POST", path + "/decision", R"({"amend":true,"remedy":"none","reason":"x"})").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "");
    // Through the CLI: show prints the superseded decisions.
    std::string db = "--db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    std::string out;
    CHECK(run_referee("objection show " + std::to_string(id) + " " + db, &out) == 0);
    CHECK(contains(out, "superseded decisions:"));
    CHECK(contains(out, "upheld, remedy normalise factor 1.0758"));
    CHECK(contains(out, ": NVIDIA reran it"));
  }

  TEST_CASE("dropped runs are kept with the objection; too few remaining runs are not scorable") {
    Review f;
    const std::string file = R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r",)";
    Response two = f.call("goog", "POST", "/api/v1/objections",
                          file + R"("drop_runs":["result_0.txt","result_1.txt","result_2.txt"]})");
    REQUIRE_MESSAGE(two.status == 201, two.body);
    Json j = parse(two.body);
    CHECK(j.find("objection")->find("impact")->find("minutes")->kind == Json::Kind::Null);
    CHECK(contains(j.find("impact_basis")->s, "not scorable: 2 converged runs would remain where NVIDIA/eos/bert needs 3"));
    CHECK(contains(two.body, "runs that would not count if the objection holds: result_0.txt result_1.txt result_2.txt"));
    std::string error;
    auto ev = referee::review::read_events(*f.s, "objection/", &error);
    REQUIRE(!ev.empty());
    CHECK(contains(ev.back().payload_json, "\"drop_runs\":[\"result_0.txt\",\"result_1.txt\",\"result_2.txt\"]"));
    // The benchmark's required count: 5 runs required, one dropped.
    f.exec("UPDATE results SET expected_count = 5 WHERE id = " + std::to_string(f.results.at("NVIDIA/eos/bert")));
    Response one = f.call("goog", "POST", "/api/v1/objections", file + R"("drop_runs":["result_0.txt"]})");
    REQUIRE(one.status == 201);
    CHECK(parse(one.body).find("objection")->find("impact")->find("minutes")->kind == Json::Kind::Null);
    CHECK(contains(one.body, "needs 5"));
  }

  TEST_CASE("a withdrawal says who, when and why, in show and the report; evidence names its result; overrides their deadline") {
    Review f;
    long long id = f.file_rcp(R"(,"evidence":[{"result":"nvidia/EOS/retinanet","file":"result_0.txt","lines":"1-2"}])");
    std::string path = "/api/v1/objections/" + std::to_string(id);
    // Lines from a result the objection is not about: 422.
    Response other = f.call("goog", "POST", path + "/evidence",
                            R"({"evidence":[{"result":"NVIDIA/eos/bert","file":"result_0.txt","lines":"1"}]})");
    CHECK(other.status == 422);
    CHECK(contains(other.body, "not one of the objection's results (NVIDIA/eos/retinanet)"));
    f.set_deadline("decisions_due", "2020-01-01");
    REQUIRE(f.call("chair1", "POST", path + "/evidence", R"({"evidence":[{"check":"x"}],"override":"asked for it"})").status == 201);
    Response w = f.call("goog", "POST", path + "/withdraw", R"({"text":"Google withdraws: a misreading"})");
    REQUIRE_MESSAGE(w.status == 200, w.body);
    Json wj = parse(w.body);
    const Json* wd = wj.find("objection")->find("withdrawal");
    REQUIRE_MESSAGE(wd->kind == Json::Kind::Object, w.body);
    REQUIRE_MESSAGE(wd->find("by"), w.body);
    CHECK(wd->find("by")->s == "goog");
    CHECK(wd->find("text")->s == "Google withdraws: a misreading");
    CHECK(!wd->find("at")->s.empty());
    Response md = f.call("chair1", "GET", "/api/v1/rounds/3.1.0/report?format=md", "");
    REQUIRE(md.status == 200);
    CHECK(contains(md.body, "Decision: none: withdrawn by goog at "));
    CHECK(contains(md.body, ": Google withdraws: a misreading"));
    CHECK_FALSE(contains(md.body, "not decided yet"));
    CHECK(contains(md.body, "lines: NVIDIA/eos/retinanet:result_0.txt lines 1-2"));
    CHECK(contains(md.body, "(evidence.add) by chair1"));
    CHECK(contains(md.body, ", overriding decisions_due (2020-01-01T23:59:59Z): asked for it"));
    std::string db = "--db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    std::string out;
    CHECK(run_referee("objection show " + std::to_string(id) + " " + db, &out) == 0);
    CHECK(contains(out, "withdrawn by goog at "));
    CHECK(contains(out, "Google withdraws: a misreading"));
  }

  TEST_CASE("hints name the CLI flag as well as the API field, and the runs a result has") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    Response stale = f.call("nv", "POST", path + "/responses", R"({"text":"x","version":7})");
    CHECK(stale.status == 409);
    CHECK(contains(stale.body, "retry with --version 1 (API: `version`)"));
    f.set_deadline("responses_due", "2020-01-01");
    Response late = f.call("nv", "POST", path + "/responses", R"({"text":"x"})");
    CHECK(late.status == 422);
    // The accused's own chair cannot override it: the hint names what a chair of neither party can do.
    CHECK(contains(late.body, "a chair of neither party may move the round's deadline (referee round schedule training-3.1.0 "
                              "--responses-due DATE) or, on a filed objection, give an organisation more time (referee objection extend)"));
    f.set_deadline("decisions_due", "2020-01-01");
    Response late_vote = f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})");
    CHECK(late_vote.status == 422);
    CHECK(contains(late_vote.body, "send an override reason (--override REASON, API field `override`)"));
    f.set_deadline("decisions_due", "2099-01-01");
    Response missing = f.call("goog", "POST", "/api/v1/objections", R"({"round":"3.1.0","against":"NVIDIA","title":"t","rule":"r"})");
    CHECK(missing.status == 400);
    CHECK(contains(missing.body, "--result ORG/SYSTEM/BENCHMARK (API field `results`)"));
    Response run = f.call("goog", "POST", path + "/evidence",
                          R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_9.txt","lines":"1"}]})");
    CHECK(run.status == 404);
    CHECK(contains(run.body, "its runs: result_0.txt, result_1.txt, result_2.txt, result_3.txt, result_4.txt"));
    CHECK_FALSE(contains(run.body, "referee list"));
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("nv", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    Response tie = f.call("chair1", "POST", path + "/decision", "{}");
    CHECK(tie.status == 422);
    CHECK(contains(tie.body, "--tie-break uphold|reject (API field `tie_break`)"));
  }

  TEST_CASE("an RCP objection on a score the package's scaling.json already normalises: 0%, and the basis says why") {
    Review f;
    f.exec("UPDATE results SET score_minutes = unscaled_minutes * rcp_norm_factor WHERE benchmark = 'retinanet'");
    long long id = f.file_rcp();
    Json shown = parse(f.call("nv", "GET", "/api/v1/objections/" + std::to_string(id), "").body);
    const Json* impact = shown.find("objection")->find("impact");
    REQUIRE(impact->find("change_percent")->kind != Json::Kind::Null);
    const Json* pct = impact->find("change_percent");
    const double v = pct->kind == Json::Kind::Int ? static_cast<double>(pct->i) : pct->f;
    CHECK(v == 0);
    CHECK_FALSE(std::signbit(v));  // never -0
    CHECK(contains(impact->find("basis")->s, "which the score already is (the package's scaling.json applies that factor; unscaled 0.8545 min)"));
  }

  TEST_CASE("a tie without the chair's tie-break is no decision; rejection clears the open status") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("nv", "POST", path + "/votes", R"({"vote":"reject"})").status == 201);
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"abstain"})").status == 201);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"we disagree"})").status == 201);
    Response none = f.call("chair1", "POST", path + "/decision", "{}");
    CHECK(none.status == 422);
    CHECK(contains(none.body, "tie_break"));
    Response d = f.call("chair1", "POST", path + "/decision", R"({"tie_break":"reject"})");
    CHECK(d.status == 201);
    CHECK(parse(d.body).find("objection")->find("decision")->find("outcome")->s == "rejected");
    CHECK(parse(d.body).find("objection")->find("decision")->find("votes")->find("abstain")->i == 1);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "");
  }

  TEST_CASE("normalise: the decision sets the result's status with the factor; impact from the RCP factor") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    Json shown = parse(f.call("nv", "GET", path, "").body);
    const Json* impact = shown.find("objection")->find("impact");
    REQUIRE(impact->find("minutes")->kind == Json::Kind::Float);
    CHECK(impact->find("minutes")->f == doctest::Approx(0.9193).epsilon(1e-4));
    CHECK(impact->find("change_percent")->f == doctest::Approx(7.576).epsilon(1e-3));
    CHECK(impact->find("under_waiver_threshold")->b == false);
    // More than 2%: no waiver.
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"waive":true})").status == 422);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"normalise it","remedy":"normalise","factor":1.0758})").status == 201);
    REQUIRE(f.call("goog", "POST", path + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.07575758})").status == 201);
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise"})").status == 400);
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise","factor":0})").status == 400);
    Response d = f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise","factor":1.07575758})");
    REQUIRE(d.status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.07575758");
  }

  TEST_CASE("impact: dropped runs re-average, a figure gives it, else unknown; waiver under 2%") {
    Review f;
    // NVIDIA bert runs 4.9 5.0 5.0 5.1 5.2 (score 5.0): without result_0 the olympic mean of 5.0 5.0 5.1 5.2 is 5.05.
    Response drop = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"cherry-picked",)"
                           R"("rule":"training_policies 5.1","drop_runs":["result_0.txt"]})");
    REQUIRE(drop.status == 201);
    Json j = parse(drop.body);
    CHECK(j.find("objection")->find("impact")->find("minutes")->f == doctest::Approx(5.05));
    CHECK(j.find("objection")->find("impact")->find("under_waiver_threshold")->b == true);
    long long id = j.find("objection")->find("id")->i;
    CHECK(f.call("goog", "POST", "/api/v1/objections",
                 R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"x","rule":"r","drop_runs":["nope.txt"]})")
              .status == 404);
    Response unknown = f.call("goog", "POST", "/api/v1/objections",
                              R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"x","rule":"r"})");
    REQUIRE(unknown.status == 201);
    CHECK(parse(unknown.body).find("objection")->find("impact")->find("minutes")->kind == Json::Kind::Null);
    CHECK(contains(unknown.body, "\"impact_basis\":\"unknown"));
    long long unknown_id = parse(unknown.body).find("objection")->find("id")->i;
    REQUIRE(f.call("nv", "POST", "/api/v1/objections/" + std::to_string(unknown_id) + "/responses", R"({"text":"no"})").status == 201);
    CHECK(f.call("chair1", "POST", "/api/v1/objections/" + std::to_string(unknown_id) + "/decision", R"({"waive":true})").status == 422);
    // Evidence that gives the impact sets it: 5.05 of 5.0 is 1%, now waivable.
    Response more = f.call("goog", "POST", "/api/v1/objections/" + std::to_string(unknown_id) + "/evidence",
                           R"({"evidence":[{"figure":"epochs","value":2,"impact_minutes":5.05}]})");
    REQUIRE(more.status == 201);
    CHECK(parse(more.body).find("objection")->find("impact")->find("minutes")->f == doctest::Approx(5.05));
    CHECK(parse(more.body).find("objection")->find("impact")->find("under_waiver_threshold")->b == true);
    Response fig = f.call("goog", "POST", "/api/v1/objections",
                          R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"x","rule":"r",)"
                          R"("evidence":[{"figure":"eval samples","value":10.5,"unit":"k","impact_minutes":5.3}]})");
    REQUIRE(fig.status == 201);
    CHECK(parse(fig.body).find("objection")->find("impact")->find("minutes")->f == doctest::Approx(5.3));
    // 1% impact: the chair waives it (NVIDIA was heard; a waiver needs no votes).
    REQUIRE(f.call("nv", "POST", "/api/v1/objections/" + std::to_string(id) + "/responses", R"({"text":"minor"})").status == 201);
    Response w = f.call("chair1", "POST", "/api/v1/objections/" + std::to_string(id) + "/decision", R"({"waive":true})");
    CHECK(w.status == 201);
    CHECK(parse(w.body).find("objection")->find("decision")->find("outcome")->s == "waived");
    // Another objection is still open on the result: its status stays open, pointing at it.
    CHECK(f.status_of("NVIDIA/eos/bert") == "objection-open");
  }

  TEST_CASE("impact: referee computes it; a party's figure is shown as theirs and never lowers it") {
    Review f;
    // The RCP objection: referee computes 0.85454 x 1.07575758 = 0.9193 min, +7.58%.
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"tiny"})").status == 201);
    // The accused adds a figure that would make it a 0.6% matter.
    Response low = f.call("nv", "POST", path + "/evidence", R"({"evidence":[{"figure":"our estimate","value":1,"impact_minutes":0.86}]})");
    REQUIRE_MESSAGE(low.status == 201, low.body);
    Json j = parse(f.call("dell", "GET", path, "").body);
    const Json* im = j.find("objection")->find("impact");
    CHECK(im->find("minutes")->f == doctest::Approx(0.9193).epsilon(1e-4));
    CHECK(im->find("computed_minutes")->f == doctest::Approx(0.9193).epsilon(1e-4));
    CHECK(im->find("under_waiver_threshold")->b == false);
    CHECK(contains(im->find("basis")->s, "computed by referee: the unscaled score times the RCP normalisation factor"));
    REQUIRE(im->find("figures")->items.size() == 1);
    CHECK(im->find("figures")->items[0].find("organisation")->s == "NVIDIA");
    CHECK(im->find("figures")->items[0].find("accused")->b == true);
    CHECK(im->find("figures")->items[0].find("minutes")->f == doctest::Approx(0.86));
    // So no waiver.
    Response waive = f.call("chair1", "POST", path + "/decision", R"({"waive":true})");
    CHECK(waive.status == 422);
    CHECK(contains(waive.body, "only problems under 2% may be waived"));
    // A figure further from the score than referee's is weighed: it raises the impact, named as whose it is.
    REQUIRE(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"figure":"worse","value":1,"impact_minutes":1.2}]})").status == 201);
    Json k = parse(f.call("dell", "GET", path, "").body);
    CHECK(k.find("objection")->find("impact")->find("minutes")->f == doctest::Approx(1.2));
    CHECK(contains(k.find("objection")->find("impact")->find("basis")->s, "the figure given by Google, further from the score"));
    // With no figure of referee's, the accused's own figure alone gives no impact (and so no waiver); the objector's does.
    Response none = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"x","rule":"r"})");
    REQUIRE(none.status == 201);
    std::string p2 = "/api/v1/objections/" + std::to_string(parse(none.body).find("objection")->find("id")->i);
    REQUIRE(f.call("nv", "POST", p2 + "/evidence", R"({"evidence":[{"figure":"ours","value":1,"impact_minutes":5.01}]})").status == 201);
    Json n = parse(f.call("dell", "GET", p2, "").body);
    CHECK(n.find("objection")->find("impact")->find("minutes")->kind == Json::Kind::Null);
    CHECK(n.find("objection")->find("impact")->find("figures")->items.size() == 1);
    REQUIRE(f.call("nv", "POST", p2 + "/responses", R"({"text":"no"})").status == 201);
    CHECK(f.call("chair1", "POST", p2 + "/decision", R"({"waive":true})").status == 422);
    // The text output shows both.
    f.s.reset();
    f.api.reset();
    std::string out;
    CHECK(run_referee("objection show " + std::to_string(id) + " --db '" + f.path + "'", &out) == 0);
    INFO(out);
    CHECK(contains(out, "impact figure given by NVIDIA (the accused): 0.8600 min (+0.639%)"));
    CHECK(contains(out, "impact figure given by Google: 1.2000 min (+40.426%)"));
  }

  TEST_CASE("impact: a finding cited must be about the objection's results; the accused's finding never lowers it") {
    Review f;
    // Three findings of referee audit (as an audit stores them): two on NVIDIA's bert (5.0 min), one on Google's.
    auto finding = [&](const std::string& result, const std::string& org, double impact, const std::string& fp) {
      f.exec("INSERT INTO findings (round_id, organisation_id, result_id, kind, rule, summary, evidence_json, "
             "impact_minutes, fingerprint, created_at) VALUES (" + std::to_string(f.r31) +
             ", (SELECT id FROM organisations WHERE name = '" + org + "'), " + std::to_string(f.results.at(result)) +
             ", 'cherry-picking', 'r', 's', '[]', " + std::to_string(impact) + ", '" + fp + "', 'x')");
      return f.last();
    };
    long long big = finding("NVIDIA/eos/bert", "NVIDIA", 5.2, "a"), small = finding("NVIDIA/eos/bert", "NVIDIA", 5.01, "b"),
              other = finding("Google/tpu/bert", "Google", 9.0, "c");
    Response filed = f.call("goog", "POST", "/api/v1/objections",
                            R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r",)"
                            R"("evidence":[{"finding":)" + std::to_string(big) + "}]}");
    REQUIRE_MESSAGE(filed.status == 201, filed.body);
    std::string path = "/api/v1/objections/" + std::to_string(parse(filed.body).find("objection")->find("id")->i);
    CHECK(parse(filed.body).find("objection")->find("impact")->find("minutes")->f == doctest::Approx(5.2));
    // The accused cites the smaller finding on the same result: the impact stays 5.2 (+4%), no waiver.
    REQUIRE(f.call("nv", "POST", path + "/evidence", R"({"evidence":[{"finding":)" + std::to_string(small) + "}]}").status == 201);
    Json j = parse(f.call("dell", "GET", path, "").body);
    CHECK(j.find("objection")->find("impact")->find("minutes")->f == doctest::Approx(5.2));
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"x"})").status == 201);
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"waive":true})").status == 422);
    // A finding about another organisation's result is no evidence here.
    Response unrelated = f.call("nv", "POST", path + "/evidence", R"({"evidence":[{"finding":)" + std::to_string(other) + "}]}");
    CHECK(unrelated.status == 422);
    CHECK(contains(unrelated.body, "is about Google/tpu/bert, not about this objection's results"));
    // With no figure of referee's, the accused's own finding gives none either.
    Response unknown = f.call("goog", "POST", "/api/v1/objections",
                              R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"u","rule":"r"})");
    REQUIRE(unknown.status == 201);
    std::string p2 = "/api/v1/objections/" + std::to_string(parse(unknown.body).find("objection")->find("id")->i);
    REQUIRE(f.call("nv", "POST", p2 + "/evidence", R"({"evidence":[{"finding":)" + std::to_string(small) + "}]}").status == 201);
    CHECK(parse(f.call("dell", "GET", p2, "").body).find("objection")->find("impact")->find("minutes")->kind == Json::Kind::Null);
  }

  TEST_CASE("evidence: log lines of a stored run quoted with numbers, a missing log is 422, findings quoted") {
    Review f;
    long long id = f.file_rcp(R"(,"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_0.txt","lines":"2-3"}])");
    Json j = parse(f.call("dell", "GET", "/api/v1/objections/" + std::to_string(id), "").body);
    const Json& e = j.find("objection")->find("evidence")->items.at(0);
    CHECK(e.find("kind")->s == "lines");
    CHECK(e.find("quoted")->s ==
          "2: :::MLLOG {\"key\": \"eval_accuracy\", \"value\": 0.33}\n3: :::MLLOG {\"key\": \"run_stop\", \"metadata\": "
          "{\"status\": \"success\"}}\n");
    long long before = f.count("evidence");
    Response missing = f.call("goog", "POST", "/api/v1/objections/" + std::to_string(id) + "/evidence",
                              R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_1.txt","lines":"1"}]})");
    CHECK(missing.status == 422);
    CHECK(contains(missing.body, "result_1.txt"));
    CHECK(f.call("goog", "POST", "/api/v1/objections/" + std::to_string(id) + "/evidence",
                 R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_0.txt","lines":"3-9"}]})").status == 422);
    CHECK(f.count("evidence") == before);
    // A finding of referee audit: filing from it fills the objection.
    f.exec("INSERT INTO findings (round_id, organisation_id, result_id, kind, rule, summary, evidence_json, "
           "impact_minutes, fingerprint, created_at) VALUES (" + std::to_string(f.r31) +
           ", (SELECT id FROM organisations WHERE name = 'NVIDIA'), " + std::to_string(f.results.at("NVIDIA/eos/bert")) +
           ", 'repeated-run-start', 'training_policies: one run per log', 'run_start twice in result_2.txt', "
           "'[{\"file\":\"result_2.txt\",\"line\":7,\"text\":\":::MLLOG run_start\"},{\"figure\":\"run_starts\",\"value\":2}]', "
           "5.2, 'fp1', 't')");
    long long finding = f.last();
    Response ff = f.call("goog", "POST", "/api/v1/objections", "{\"finding\":" + std::to_string(finding) + "}");
    REQUIRE_MESSAGE(ff.status == 201, ff.body);
    Json o = parse(ff.body);
    const Json* obj = o.find("objection");
    CHECK(obj->find("against")->s == "NVIDIA");
    CHECK(obj->find("results")->items.at(0).s == "NVIDIA/eos/bert");
    CHECK(obj->find("title")->s == "run_start twice in result_2.txt");
    CHECK(obj->find("rule")->s == "training_policies: one run per log");
    CHECK(obj->find("impact")->find("minutes")->f == doctest::Approx(5.2));
    CHECK(obj->find("evidence")->items.at(0).find("quoted")->s == "result_2.txt:7: :::MLLOG run_start\nrun_starts = 2\n");
  }

  TEST_CASE("UTF-8 text comes back as it was sent: titles, texts, organisation names, error messages, the report") {
    Review f;
    const std::string title = "\xc3\x9c" "berpr\xc3\xbc" "fung \xc3\xa9";  // Überprüfung é
    const std::string text = "\xce\xbc = 0,85 \xe2\x80\x94 \xe2\x9c\x93 \xf0\x9d\x9b\xbc";  // μ = 0,85 — ✓ 𝛼
    Response r = f.call("goog", "POST", "/api/v1/objections",
                        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":")" + title +
                            R"(","rule":"r","text":")" + text + "\"}");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    CHECK(contains(r.body, "\"title\":\"" + title + "\""));  // the bytes as sent, not read as latin-1
    const Json filed = parse(r.body);
    const Json* o = filed.find("objection");
    CHECK(o->find("title")->s == title);
    CHECK(o->find("text")->s == text);
    std::string id = std::to_string(o->find("id")->i);
    // Escaped in the request (\u00dc...), the same characters come back.
    Response esc = f.call("dell", "POST", "/api/v1/objections",
                          R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"\u00dcberpr\u00fcfung \u00e9","rule":"r"})");
    REQUIRE_MESSAGE(esc.status == 201, esc.body);
    CHECK(parse(esc.body).find("objection")->find("title")->s == title);
    Response got = f.call("nv", "GET", "/api/v1/objections/" + id, "");
    REQUIRE(got.status == 200);
    CHECK(parse(got.body).find("objection")->find("title")->s == title);
    CHECK(parse(got.body).find("objection")->find("text")->s == text);
    Response list = f.call("nv", "GET", "/api/v1/objections?round=3.1.0", "");
    CHECK(contains(list.body, title));
    Response report = f.call("chair1", "GET", "/api/v1/rounds/3.1.0/report?format=json", "");
    REQUIRE_MESSAGE(report.status == 200, report.body);
    CHECK(contains(report.body, title));
    CHECK(contains(report.body, text));
    // An error message quoting what was sent.
    const std::string org = "Gr\xc3\xb6\xc3\x9f" "e AG";  // Größe AG
    Response bad = f.call("goog", "POST", "/api/v1/objections",
                          R"({"round":"3.1.0","against":")" + org + R"(","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})");
    CHECK(bad.status == 404);  // an unknown name
    CHECK(parse(bad.body).find("error")->find("message")->s == "organisation " + org + " did not submit to training-3.1.0");
    Response name = f.local("POST", "/api/v1/users", R"({"name":"j\u00fcrgen","role":"admin"})");
    CHECK(name.status == 400);
    CHECK(contains(parse(name.body).find("error")->find("message")->s, "user name 'j\xc3\xbcrgen' is not"));
    // An organisation name, on the user that belongs to it.
    Response user = f.local("POST", "/api/v1/users",
                            R"({"name":"juergen","role":"member","organisation":")" + org + R"(","create_organisation":true})");
    REQUIRE_MESSAGE(user.status == 201, user.body);
    CHECK(parse(user.body).find("user")->find("organisation")->s == org);
    Response users = f.local("GET", "/api/v1/users", "");
    CHECK(contains(users.body, "\"organisation\":\"" + org + "\""));
    // A byte that is not UTF-8 (stored before the API checked) is its latin-1 character: the output stays UTF-8.
    f.exec("UPDATE objections SET title = CAST(X'41E942' AS TEXT) WHERE id = " + id);
    Response latin = f.call("nv", "GET", "/api/v1/objections/" + id, "");
    CHECK(parse(latin.body).find("objection")->find("title")->s == "A\xc3\xa9" "B");
  }

  TEST_CASE("withdrawal clears the open status; a withdrawn objection takes no more changes") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "objection-open");
    REQUIRE(f.call("goog", "POST", path + "/withdraw", R"({"text":"resolved"})").status == 200);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "");
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x"})").status == 422);
  }

  TEST_CASE("bad bodies are 400 and write nothing; SQL metacharacters are stored verbatim") {
    Review f;
    long long objections = f.count("objections"), events = f.count("events");
    const std::string bad[] = {
        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r","colour":"red"})",
        std::string("{\"round\":\"3.1.0\",\"against\":\"NVIDIA\",\"results\":[\"NVIDIA/eos/bert\"],\"title\":\"t\xff\",\"rule\":\"r\"}"),
        R"({"round":"3.1.0","against":"NVIDIA","results":"NVIDIA/eos/bert","title":"t","rule":"r"})",
        R"({"round":3,"against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})",
        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t"})",
        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r","evidence":[{"check":"x","colour":1}]})",
        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r","evidence":{"check":"x"}})",
        R"({"round":"3.1.0","against":"NVIDIA","results":["bert"],"title":"t","rule":"r"})",
        R"(["not an object"])",
        R"({"round":"3.1.0",)",
        R"({"title":"\ud800"})",
    };
    for (const auto& body : bad) {
      Response r = f.call("goog", "POST", "/api/v1/objections", body);
      INFO(body << " -> " << r.body);
      CHECK(r.status == 400);
    }
    CHECK(f.call("goog", "POST", "/api/v1/objections/1/votes", R"({"vote":"uphold"})").status == 404);
    CHECK(f.call("admin1", "POST", "/api/v1/users", R"({"name":"a b","role":"admin"})").status == 400);
    CHECK(f.call("admin1", "POST", "/api/v1/users", R"({"name":"ab","role":"king"})").status == 400);
    CHECK(f.count("objections") == objections);
    CHECK(f.count("events") == events);
    std::string evil = "x'); DROP TABLE objections; --";
    Response ok = f.call("goog", "POST", "/api/v1/objections",
                         R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"x'); DROP TABLE objections; --","rule":"\"; DELETE FROM events;"})");
    REQUIRE(ok.status == 201);
    CHECK(parse(ok.body).find("objection")->find("title")->s == evil);
    CHECK(parse(ok.body).find("objection")->find("rule")->s == "\"; DELETE FROM events;");
    CHECK(f.count("objections") == objections + 1);
    long long id = parse(ok.body).find("objection")->find("id")->i;
    std::string path = "/api/v1/objections/" + std::to_string(id);
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x","version":"1"})").status == 400);
    CHECK(f.call("nv", "POST", path + "/responses", R"({"text":"x","remedy":"normalise"})").status == 400);
    CHECK(f.call("goog", "POST", path + "/votes", R"({"vote":"yes"})").status == 400);
    CHECK(f.call("chair1", "POST", path + "/decision", R"({"waive":"yes"})").status == 400);
    CHECK(f.count("responses") == 0);
    CHECK(f.count("votes") == 0);
  }

  TEST_CASE("the log's verification as a member: the events of their rounds only; another round's activity moves nothing") {
    Review f;
    // Intel submitted to 3.0 only: 3.1, under review, is hidden from it.
    Json before = parse(f.call("intel", "GET", "/api/v1/log/verify", "").body);
    CHECK(before.find("ok")->b == true);
    Json chair_before = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    long long id = f.file_rcp();
    REQUIRE(f.call("goog", "POST", "/api/v1/objections/" + std::to_string(id) + "/evidence",
                   R"({"evidence":[{"check":"rcp"}]})").status == 201);
    Json after = parse(f.call("intel", "GET", "/api/v1/log/verify", "").body);
    CHECK(after.find("events")->i == before.find("events")->i);
    CHECK(after.find("head_seq")->kind == before.find("head_seq")->kind);
    if (before.find("head_seq")->kind != Json::Kind::Null) {
      CHECK(after.find("head_seq")->i == before.find("head_seq")->i);
      CHECK(after.find("head_hash")->s == before.find("head_hash")->s);
    }
    Json chair = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    CHECK(chair.find("events")->i == chair_before.find("events")->i + 2);
    CHECK(chair.find("events")->i == f.count("events"));
    // Google, in 3.1, sees its objection's events among its count and as its head.
    Json goog = parse(f.call("goog", "GET", "/api/v1/log/verify", "").body);
    // A member's head is the member's hash of the event (member_hash), never the chain's own.
    CHECK(goog.find("head_hash")->s == referee::review::member_hash(chair.find("head_hash")->s));
    CHECK(goog.find("head_hash")->s != chair.find("head_hash")->s);
    CHECK(goog.find("head_seq")->kind == Json::Kind::Null);  // the global count is not a member's to know
    CHECK(goog.find("events")->i < chair.find("events")->i);  // not the users' events
    // A head of a hidden round's event, a wrong hash and one that does not exist read alike to Intel.
    const std::string hidden = std::to_string(chair.find("head_seq")->i) + ":" + chair.find("head_hash")->s;
    const std::string missing = "99999:" + chair.find("head_hash")->s;
    Json a = parse(f.call("intel", "GET", "/api/v1/log/verify?head=" + hidden, "").body);
    Json b = parse(f.call("intel", "GET", "/api/v1/log/verify?head=" + missing, "").body);
    CHECK(a.find("ok")->b == false);
    std::string said = b.find("problem")->s;
    said.replace(said.find(missing), missing.size(), hidden);
    CHECK(a.find("problem")->s == said);
    // Google's own head (its member's hash) verifies; the chain's hash is no head of a member's.
    Json own = parse(f.call("goog", "GET", "/api/v1/log/verify?head=" + goog.find("head_hash")->s, "").body);
    CHECK(own.find("ok")->b == true);
    CHECK(parse(f.call("goog", "GET", "/api/v1/log/verify?head=" + hidden, "").body).find("ok")->b == false);
    // The events a member reads carry member's hashes too: none is a chain hash, so none is another's prev_hash.
    Json listed = parse(f.call("goog", "GET", "/api/v1/log", "").body);
    REQUIRE(!listed.find("events")->items.empty());
    for (const auto& e : listed.find("events")->items) CHECK(e.find("hash")->s != chair.find("head_hash")->s);
    CHECK(listed.find("events")->items.back().find("hash")->s == goog.find("head_hash")->s);
  }

  TEST_CASE("numbers a member sees count their rounds only: activity in a round hidden from them moves none") {
    Review f;
    // 3.0 under review as well, Dell beside Intel there; Google did not submit to it: it is hidden from Google.
    long long d30 = f.package(f.r30, "Dell", "/nowhere/Dell30");
    f.result(d30, "xe", "bert", 7.0, 7.0, 0, 1, {7, 7, 7});
    REQUIRE(f.local("PUT", "/api/v1/rounds/3.0.0/schedule", "{}").status == 200);
    REQUIRE(f.call("goog", "GET", "/api/v1/rounds/3.0.0", "").status == 404);
    auto file = [&](const std::string& who, const std::string& body) {
      Response r = f.call(who, "POST", "/api/v1/objections", body);
      REQUIRE_MESSAGE(r.status == 201, r.body);
      return parse(r.body).find("objection")->find("id")->i;
    };
    long long first = f.file_rcp();  // Google against NVIDIA, 3.1
    // Intel and Dell in 3.0: an objection, a response, votes, a decision, findings.
    long long hidden = file("intel", R"({"round":"3.0.0","against":"Dell","results":["Dell/xe/bert"],"title":"t","rule":"r"})");
    const std::string hp = "/api/v1/objections/" + std::to_string(hidden);
    REQUIRE(f.call("dell", "POST", hp + "/responses", R"({"text":"no"})").status == 201);
    REQUIRE(f.call("intel", "POST", hp + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("chair1", "POST", hp + "/decision", R"({"remedy":"none"})").status == 201);
    // Google's next numbers follow its round's own: one more than the last it saw.
    long long second = file("goog", R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})");
    CHECK(second == first + 1);
    CHECK(hidden > referee::review::kIdsPerRound);  // 3.0's own numbers
    const std::string p1 = "/api/v1/objections/" + std::to_string(first);
    const std::string p2 = "/api/v1/objections/" + std::to_string(second);
    Response r1 = f.call("nv", "POST", p1 + "/responses", R"({"text":"a"})");
    Response r2 = f.call("nv", "POST", p2 + "/responses", R"({"text":"b"})");
    REQUIRE(r1.status == 201);
    REQUIRE(r2.status == 201);
    Json j1 = parse(r1.body), j2 = parse(r2.body);
    long long resp1 = j1.find("objection")->find("responses")->items.back().find("id")->i;
    long long resp2 = j2.find("objection")->find("responses")->items.back().find("id")->i;
    CHECK(resp2 == resp1 + 1);
    CHECK(resp1 < referee::review::kIdsPerRound);
    // Evidence and decisions likewise.
    REQUIRE(f.call("dell", "POST", p1 + "/votes", R"({"vote":"reject"})").status == 201);
    Response d1 = f.call("chair1", "POST", p1 + "/decision", R"({"remedy":"none"})");
    REQUIRE_MESSAGE(d1.status == 201, d1.body);
    Json dj = parse(d1.body);
    CHECK(dj.find("objection")->find("decision")->find("id")->i == 1);  // the first decision of 3.1
    // Google's log: the events of 3.1, without sequence numbers (they count 3.0's events too).
    Json log = parse(f.call("goog", "GET", "/api/v1/log", "").body);
    REQUIRE(!log.find("events")->items.empty());
    for (const auto& e : log.find("events")->items) {
      CHECK(e.find("seq")->kind == Json::Kind::Null);
      CHECK_FALSE(contains(e.find("payload") ? e.find("subject")->s : "", std::to_string(hidden)));
    }
    Json chair = parse(f.call("chair1", "GET", "/api/v1/log", "").body);
    CHECK(chair.find("events")->items.back().find("seq")->kind == Json::Kind::Int);
    // A member's head is a hash: a sequence number before it is ignored, so none can be probed.
    Json v = parse(f.call("goog", "GET", "/api/v1/log/verify", "").body);
    CHECK(v.find("head_seq")->kind == Json::Kind::Null);
    const std::string h = v.find("head_hash")->s;
    CHECK(parse(f.call("goog", "GET", "/api/v1/log/verify?head=" + h.substr(0, 16), "").body).find("ok")->b);
    CHECK(parse(f.call("goog", "GET", "/api/v1/log/verify?head=1:" + h, "").body).find("ok")->b);
    CHECK(f.call("goog", "GET", "/api/v1/log/verify?head=" + h.substr(0, 6), "").status == 400);  // too short to be one
    Json other = parse(f.call("goog", "GET", "/api/v1/log/verify?head=" + std::string(16, 'a'), "").body);
    REQUIRE(other.find("ok"));
    CHECK_FALSE(other.find("ok")->b);
  }

  TEST_CASE("a question on a local store with a token is that user's answer: a hidden round reads as missing") {
    Review f;
    f.s.reset();
    f.api.reset();
    std::string hidden, missing, seen, owner;
    const std::string db = " --db '" + f.path + "'";
    // Intel submitted to 3.0 only; 3.1 is under review.
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert --token " + f.token.at("intel") + db, &hidden) == 2);
    CHECK(run_referee("leaderboard --round 2.9.0 --benchmark bert --token " + f.token.at("intel") + db, &missing) == 2);
    CHECK(contains(hidden, "unknown round 3.1.0"));
    std::string said = missing;
    said.replace(said.find("2.9.0"), 5, "3.1.0");
    CHECK(hidden == said);  // word for word as a round the store does not hold
    // Totals across rounds count the rounds the caller sees.
    CHECK(run_referee("list benchmarks --token " + f.token.at("intel") + db, &hidden) == 0);
    CHECK(contains(hidden, "3.0.0"));
    CHECK_FALSE(contains(hidden, "3.1.0"));
    CHECK(run_referee("list benchmarks" + db, &owner) == 0);
    CHECK(contains(owner, "3.1.0"));
    // Its own round, and 3.1 for a submitter of it or without a token (the store's owner).
    CHECK(run_referee("leaderboard --round 3.0.0 --benchmark bert --token " + f.token.at("intel") + db, &seen) == 0);
    CHECK(contains(seen, "gaudi"));
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert --token " + f.token.at("goog") + db, &seen) == 0);
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert" + db, &owner) == 0);
    CHECK(seen == owner);
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert --token rft_nope" + db, &seen) == 2);
    CHECK(contains(seen, "token"));
  }

  TEST_CASE("the log: the chain verifies after a sequence of actions and tampering is found at its event") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"rcp"}]})").status == 201);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"normalise","remedy":"normalise","factor":1.0758})").status == 201);
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise","factor":1.0758})").status == 201);
    Json v = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    CHECK(v.find("ok")->b == true);
    CHECK(v.find("events")->i == f.count("events"));
    Json log = parse(f.call("chair1", "GET", "/api/v1/log?subject=objection/" + std::to_string(id), "").body);
    std::vector<std::string> actions;
    for (const auto& e : log.find("events")->items) actions.push_back(e.find("action")->s);
    CHECK(actions == std::vector<std::string>{"objection.file", "evidence.add", "response.add", "vote.cast", "decision.record"});
    // The store refuses to change or delete an event.
    std::string error;
    CHECK_FALSE(f.s->exec("UPDATE events SET payload_json = '{}' WHERE seq = 3", &error));
    CHECK(contains(error, "append-only"));
    CHECK_FALSE(f.s->exec("DELETE FROM events WHERE seq = 3", &error));
    CHECK(contains(error, "append-only"));
    // A copy edited around the trigger: verify names event 12.
    f.s.reset();
    f.api.reset();
    std::string copy = (f.dir.path / "copy.db").string();
    fs::copy_file(f.path, copy);
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(copy.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "DROP TRIGGER events_append_only_update; UPDATE events SET payload_json = "
                              "replace(payload_json, 'uphold', 'reject') WHERE action = 'vote.cast'",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, "SELECT seq FROM events WHERE action = 'vote.cast'", -1, &st, nullptr);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    long long tampered = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    auto s = Store::open(copy, &error);
    REQUIRE(s);
    auto check = referee::review::verify_events(*s, &error);
    CHECK_FALSE(check.ok);
    CHECK(check.first_bad == tampered);
    s.reset();
    std::string out;
    CHECK(run_referee("review log --verify --db '" + copy + "'", &out) == 1);
    CHECK(contains(out, "broken at event " + std::to_string(tampered)));
    CHECK(run_referee("review log --verify --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "chain intact"));
  }

  TEST_CASE("verify finds tampering outside the chain: tables edited, the tail deleted, tables dropped") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("nv", "POST", path + "/responses", R"({"text":"normalise","remedy":"normalise","factor":1.0758})").status == 201);
    REQUIRE(f.call("dell", "POST", path + "/votes", R"({"vote":"uphold"})").status == 201);
    REQUIRE(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"RCP: mean 7.1 epochs < 7.6"}]})").status == 201);
    REQUIRE(f.call("chair1", "POST", path + "/decision", R"({"remedy":"normalise","factor":1.0758,"text":"normalised"})").status == 201);
    // The discussion goes on after the decision.
    REQUIRE(f.call("nv", "POST", path + "/comments", R"({"text":"we accept the factor"})").status == 201);
    // The required reviews (one moved on by its reviewer) and an announced resubmission.
    Response assigned = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/pairings", "");
    REQUIRE_MESSAGE(assigned.status / 100 == 2, assigned.body);
    long long pairing = 0;
    std::string reviewer;
    {
      Json pj = parse(f.call("chair1", "GET", "/api/v1/rounds/3.1.0/pairings", "").body);
      REQUIRE(!pj.find("pairings")->items.empty());
      pairing = pj.find("pairings")->items[0].find("id")->i;
      reviewer = pj.find("pairings")->items[0].find("reviewer")->s;
    }
    REQUIRE(f.call("chair1", "PATCH", "/api/v1/pairings/" + std::to_string(pairing), R"({"status":"in-progress"})").status == 200);
    Response ann = f.call("nv", "POST", "/api/v1/rounds/3.1.0/announcements",
                          R"({"results":["NVIDIA/eos/bert"],"text":"the 3.0 logs again"})");
    REQUIRE_MESSAGE(ann.status / 100 == 2, ann.body);
    f.s.reset();
    f.api.reset();
    std::string out;
    REQUIRE(run_referee("review log --verify --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, "tables agree with it"));
    // The head it prints is what a member records elsewhere.
    size_t at = out.find("head ");
    REQUIRE(at != std::string::npos);
    std::string head = out.substr(at + 5, out.find(' ', at + 5) - at - 5);
    CHECK(run_referee("review log --verify --head " + head + " --db '" + f.path + "'", &out) == 0);
    auto tampered = [&](const std::string& sql, const std::string& args, const std::string& expect, int rc) {
      CAPTURE(sql);
      std::string o;
      CHECK(run_referee("review log --verify " + args + " --db '" + f.edited_copy(sql) + "'", &o) == rc);
      CHECK_MESSAGE(contains(o, expect), o);
    };
    tampered("UPDATE decisions SET remedy = 'withdraw'; UPDATE result_status SET status = 'withdrawn'", "",
             "decisions row 1 (objection " + std::to_string(id) + "): remedy is 'withdraw'", 1);
    tampered("UPDATE result_status SET status = 'withdrawn'", "", "status is 'withdrawn', the review log makes it 'normalised' (decision 1 of objection", 1);
    // Rows that should be there, rows that should not, a status moved to another organisation's result.
    tampered("DELETE FROM result_status", "", "(NVIDIA/eos/retinanet) has no row; the review log makes it 'normalised'", 1);
    const std::string bert = "(SELECT x.id FROM results x WHERE x.benchmark = 'bert' LIMIT 1)";
    tampered("INSERT INTO result_status (result_id, status, updated_at) VALUES (" + bert + ", 'withdrawn', 'x')", "",
             "status 'withdrawn', but no decision or open objection in the review log gives it one", 1);
    tampered("UPDATE result_status SET result_id = " + bert, "", "but no decision or open objection in the review log", 1);
    tampered("DELETE FROM objection_results", "", "objection_results of objection " + std::to_string(id) + ": 0 result(s) linked", 1);
    tampered("INSERT INTO objection_results (objection_id, result_id) VALUES (" + std::to_string(id) + ", " + bert + ")", "",
             "2 result(s) linked, event", 1);
    tampered("UPDATE result_status SET factor = 0.5", "", "factor is 0.5", 1);
    tampered("UPDATE votes SET vote = 'reject'", "", "votes row of ", 1);
    tampered("UPDATE objections SET state = 'open'", "", "state is 'open', the review log says 'decided'", 1);
    tampered("DELETE FROM decisions", "", "decisions: row 1 recorded by event", 1);
    // The tail deleted: the chain still links; the recorded head does not.
    tampered("DROP TRIGGER events_append_only_delete; DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)",
             "--head " + head, "has no announcement.add event", 1);
    // A head the log no longer reaches (its tail deleted with the rows it made): the anchor says so.
    std::string later = std::to_string(std::stoll(head.substr(0, head.find(':'))) + 1) + head.substr(head.find(':'));
    CHECK(run_referee("review log --verify --head " + later + " --db '" + f.path + "'", &out) == 1);
    CHECK(contains(out, "is not in the review log any more"));
    // Every table and column that changes what anyone sees or may do, edited outside the review, is named.
    // An amendment appended with a valid hash (the chain has no key), as a member or without what it replaced:
    // referee writes neither.
    auto appended = [&](const referee::review::Actor& who, const std::string& payload, const std::string& expect,
                        const std::string& sql = "SELECT 1") {
      std::string copy = f.edited_copy("SELECT 1");
      std::string err;
      auto store = referee::submissions::Store::open(copy, &err);
      REQUIRE_MESSAGE(store, err);
      REQUIRE(store->begin(&err));
      REQUIRE_MESSAGE(referee::review::append_event(*store, who, "decision.amend", "objection/" + std::to_string(id), payload, &err), err);
      REQUIRE(store->commit(&err));
      REQUIRE_MESSAGE(store->exec(sql.c_str(), &err), err);  // the tables made to agree with the appended event
      store.reset();
      std::string o;
      CHECK(run_referee("review log --verify --head " + head + " --db '" + copy + "'", &o) == 1);
      CHECK_MESSAGE(contains(o, expect), o);
    };
    referee::review::Actor member;
    member.user = "nv";
    member.organisation = "NVIDIA";
    referee::review::Actor chair;
    chair.user = "chair1";
    chair.role = referee::review::Role::Chair;
    appended(chair, R"({"decision":1,"outcome":"upheld","remedy":"normalise","factor":2.0})",
             "(decision.amend of objection " + std::to_string(id) + ") has no \"before\"");
    appended(member, R"({"decision":1,"outcome":"upheld","remedy":"normalise","factor":1.0758,"before":{},"reason":"x"})",
             "records a decision by nv, a member", "UPDATE decisions SET decided_by = (SELECT id FROM users WHERE name = 'nv'), created_at = (SELECT at FROM events "
             "WHERE seq = (SELECT MAX(seq) FROM events)); UPDATE objections SET version = version + 1");
    tampered("UPDATE decisions SET votes_uphold = 7", "", "7 uphold vote(s), event", 1);
    tampered("UPDATE decisions SET text = 'forged minutes'", "", "its text is not the one event", 1);
    tampered("UPDATE round_reviews SET state = 'published'", "", "round_reviews row of training-3.1.0: state is 'published', the review log says 'review'", 1);
    tampered("UPDATE round_reviews SET responses_due = '2099-01-01T00:00:00Z'", "", "responses_due is 2099-01-01T00:00:00Z, the review log says not set", 1);
    tampered("UPDATE objections SET against_org = (SELECT id FROM organisations WHERE name = 'Dell')", "", "against 'Dell', event", 1);
    tampered("UPDATE objections SET by_org = (SELECT id FROM organisations WHERE name = 'Dell')", "", "by 'Dell', event", 1);
    tampered("UPDATE objections SET title = 'nothing to see'", "", "the title is not the one event", 1);
    tampered("UPDATE objections SET rule = 'none'", "", "the rule is not the one event", 1);
    tampered("UPDATE objections SET text = 'edited'", "", "the text is not the one event", 1);
    tampered("UPDATE evidence SET quoted = 'edited'", "", "evidence of objection " + std::to_string(id) + ": 1 row(s), the review log recorded 1; 1 of them not as recorded", 1);
    tampered("DELETE FROM evidence", "", "evidence of objection " + std::to_string(id) + ": 0 row(s), the review log recorded 1", 1);
    tampered("UPDATE responses SET text = 'we agree'", "", "the text is not the one event", 1);
    tampered("UPDATE comments SET text = 'we reject the factor'", "", "comments row 1 (objection " + std::to_string(id) +
             "): the text is not the one event", 1);
    tampered("UPDATE comments SET organisation_id = (SELECT id FROM organisations WHERE name = 'Google')", "",
             "comments row 1 (objection " + std::to_string(id) + "): by Google, event", 1);
    tampered("DELETE FROM comments", "", "comments: row 1 added by event", 1);
    tampered("INSERT INTO comments (id, objection_id, text, created_at) VALUES (999, " + std::to_string(id) +
                 ", 'forged', 'x')", "", "comments row 999 (objection " + std::to_string(id) + ") has no comment.add event", 1);
    tampered("UPDATE users SET role = 'chair' WHERE name = 'goog'", "", "users row goog: role 'chair', event", 1);
    tampered("UPDATE users SET organisation_id = (SELECT id FROM organisations WHERE name = 'NVIDIA') WHERE name = 'goog'", "",
             "users row goog: organisation 'NVIDIA', event", 1);
    tampered("INSERT INTO users (name, role, created_at) VALUES ('mallory', 'admin', 'x')", "", "users row mallory has no user.add event", 1);
    tampered("UPDATE tokens SET revoked_at = NULL WHERE user_id = (SELECT id FROM users WHERE name = 'gone')", "",
             "live, but the review log revoked it", 1);
    tampered("UPDATE tokens SET hash = 'ab' WHERE user_id = (SELECT id FROM users WHERE name = 'goog')", "",
             "its hash is not the one event", 1);
    tampered("INSERT INTO tokens (user_id, hash, prefix, created_at) SELECT id, 'cd', 'rft_mallory', 'x' FROM users WHERE name = 'admin1'", "",
             "tokens row rft_mallory (user admin1) has no token.create or user.add event", 1);
    tampered("UPDATE decisions SET majority = 'two-thirds'", "", "majority 'two-thirds', event", 1);
    tampered("UPDATE decisions SET decided_by = (SELECT id FROM users WHERE name = 'nv')", "", "decided by nv, event", 1);
    tampered("UPDATE objections SET round_id = (SELECT id FROM rounds WHERE name = 'training-3.0.0')", "", "round training-3.0.0, event", 1);
    tampered("UPDATE objections SET filed_by = (SELECT id FROM users WHERE name = 'dell')", "", "filed by dell, event", 1);
    tampered("UPDATE objections SET impact_minutes = 0.86", "", "impact_minutes 0.86, the review log says", 1);
    tampered("UPDATE objections SET impact_computed = 0.86", "", "impact_computed 0.86, the review log says", 1);
    tampered("UPDATE evidence SET user_id = (SELECT id FROM users WHERE name = 'nv')", "", "not as recorded", 1);
    tampered("UPDATE responses SET remedy = 'none', factor = NULL", "", "remedy none none, event", 1);
    tampered("UPDATE responses SET organisation_id = (SELECT id FROM organisations WHERE name = 'Dell')", "", "by Dell, event", 1);
    tampered("DELETE FROM responses", "", "added by event", 1);
    tampered("DELETE FROM round_reviews", "", "the review record of training-3.1.0 (event", 1);
    tampered("UPDATE users SET disabled_at = 'x' WHERE name = 'nv'", "", "users row nv: disabled", 1);
    tampered("DELETE FROM tokens WHERE user_id = (SELECT id FROM users WHERE name = 'nv')", "", "tokens: rft_", 1);
    tampered("DROP TRIGGER events_append_only_update", "", "the triggers that keep the review log append-only", 1);
    tampered("DROP TRIGGER events_append_only_delete; CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events "
             "WHEN 0 BEGIN SELECT RAISE(ABORT, 'the review log is append-only: an event cannot be deleted'); END",
             "", "trigger events_append_only_delete is not the one the schema makes", 1);
    tampered("CREATE TRIGGER quiet AFTER INSERT ON events BEGIN SELECT 1; END", "", "trigger quiet on the review log", 1);
    tampered("DROP TRIGGER events_append_only_replace", "", "events_append_only_replace) are missing", 1);
    // A package added in the store, not imported: it would make Intel a submitter of 3.1 (and let it see the round).
    tampered("INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256, referee_version, "
             "imported_at) SELECT r.id, o.id, '/x', 'x', 'pass', 'x', 'v', 't' FROM rounds r, organisations o "
             "WHERE r.name = 'training-3.1.0' AND o.name = 'Intel'", "",
             "package Intel (training-3.1.0) has no package.import event in the review log: it was added in the store, not imported", 1);
    // What the packages decide between rounds: resubmission links and marks, and the rounds' order.
    tampered("UPDATE runs SET resubmission_of = (SELECT MIN(id) FROM runs) WHERE id = (SELECT MAX(id) FROM runs)", "",
             "is linked as a copy of run", 1);
    tampered("UPDATE results SET resubmission = 1", "", "is marked a resubmission, its runs are not all copies", 1);
    tampered("UPDATE rounds SET ordinal = 1 WHERE name = 'training-3.1.0'", "",
             "rounds: training-3.1.0 has usage training, version 3.1.0 and order 1, which do not agree", 1);
    {
      // An insert over an event the log holds (INSERT OR REPLACE) is refused by the store itself.
      std::string copy = f.edited_copy("SELECT 1");
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(copy.c_str(), &raw) == SQLITE_OK);
      char* msg = nullptr;
      CHECK(sqlite3_exec(raw, "INSERT OR REPLACE INTO events SELECT * FROM events WHERE seq = 1", nullptr, nullptr, &msg) != SQLITE_OK);
      CHECK(contains(msg ? msg : "", "an event cannot be replaced"));
      sqlite3_free(msg);
      sqlite3_close(raw);
    }
    // Who cast a vote; the required reviews; announcements.
    tampered("UPDATE responses SET user_id = (SELECT id FROM users WHERE name = 'nv2')", "", ": written by nv2", 1);
    tampered("UPDATE votes SET user_id = (SELECT id FROM users WHERE name = 'chairdell')", "",
             "votes row of Dell on objection " + std::to_string(id) + ": cast by chairdell", 1);
    tampered("UPDATE pairings SET status = 'done' WHERE id = " + std::to_string(pairing), "",
             "pairings row " + std::to_string(pairing) + " (" + reviewer + " reviews", 1);
    tampered("DELETE FROM pairings WHERE id = " + std::to_string(pairing), "", "is missing", 1);
    tampered("INSERT INTO pairings (round_id, reviewer_org, reviewed_org, reason) SELECT round_id, reviewer_org, "
             "reviewer_org, 'rank' FROM pairings WHERE id = " + std::to_string(pairing),
             "", "has no pairings.assign event", 1);
    tampered("UPDATE announcements SET text = 'nothing to see'", "", "the text is not the one", 1);
    tampered("UPDATE announcements SET created_at = '2020-01-01T00:00:00.000Z'", "", "announced at 2020-01-01", 1);
    tampered("UPDATE announcements SET result_id = (SELECT x.id FROM results x WHERE x.benchmark = 'retinanet')", "",
             "about NVIDIA/eos/retinanet", 1);
    tampered("DELETE FROM announcements", "", "made by event", 1);
    // Each row's time is that of the event that wrote it: a filing backdated to before a deadline, a
    // decision dated later, a token revoked "earlier"; versions count the changes the log made.
    const std::string early = "'2020-01-01T00:00:00.000Z'", late = "'2099-01-01T00:00:00.000Z'";
    tampered("UPDATE objections SET created_at = " + early, "", "created_at 2020-01-01T00:00:00.000Z, before event", 1);
    tampered("UPDATE decisions SET created_at = " + late, "", "decisions row 1 (objection " + std::to_string(id) +
             "): created_at 2099-01-01T00:00:00.000Z, after event", 1);
    tampered("UPDATE responses SET created_at = " + early, "", ": created_at 2020-01-01T00:00:00.000Z, before event", 1);
    tampered("UPDATE votes SET created_at = " + late, "", "votes row of Dell on objection " + std::to_string(id) + ": created_at 2099", 1);
    tampered("UPDATE evidence SET created_at = " + early, "", "evidence row ", 1);
    tampered("UPDATE users SET created_at = " + early + " WHERE name = 'goog'", "", "users row goog: created_at 2020", 1);
    tampered("UPDATE tokens SET created_at = " + late + " WHERE user_id = (SELECT id FROM users WHERE name = 'goog')", "",
             "(user goog): created_at 2099", 1);
    tampered("UPDATE tokens SET revoked_at = " + late + " WHERE user_id = (SELECT id FROM users WHERE name = 'gone')", "",
             "(user gone): revoked_at 2099", 1);
    tampered("UPDATE objections SET version = version + 5", "", "version 10, but the review log has 5 event(s) about it", 1);
    tampered("UPDATE round_reviews SET version = 4", "", "round_reviews row of training-3.1.0: version 4, but the review log has 1", 1);
    tampered("UPDATE pairings SET version = 3 WHERE id = " + std::to_string(pairing), "",
             "version 3, but the review log changed it 1 time(s) since it was assigned (version 2)", 1);
    tampered("UPDATE objections SET impact_basis = 'the committee agreed'", "", "impact_basis 'the committee agreed', the review log says", 1);
    // Tables dropped: the store is damaged (exit 2), not a store without decisions.
    tampered("DROP TABLE result_status", "", "review table(s) result_status missing", 2);
    tampered("DROP TABLE votes", "", "review table(s) votes missing", 2);
  }

  TEST_CASE("verify finds a package's scores, verdicts or runs edited in the store; import writes the same files over them again") {
    referee::testing::TempDir t;
    const std::string db = (t.path / "store.db").string(), pkg = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
    std::string out;
    REQUIRE(run_referee("import '" + pkg + "' --round mini-1.0.0 --db '" + db + "'", &out) == 0);
    REQUIRE(run_referee("review log --verify --db '" + db + "'", &out) == 0);
    auto edit = [&](const std::string& sql) {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
      CHECK(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
    };
    for (const std::string sql : {"UPDATE results SET score_minutes = score_minutes / 2",
                                  "UPDATE results SET verdict = 'fail', failed_checks = '[\"seeds\"]'",
                                  "UPDATE runs SET minutes = 0.1 WHERE id = (SELECT MIN(id) FROM runs)",
                                  "UPDATE systems SET accelerators_count = 1",
                                  "DELETE FROM eval_points WHERE seq = 0"}) {
      CAPTURE(sql);
      edit(sql);
      CHECK(run_referee("review log --verify --db '" + db + "'", &out) == 1);
      CHECK(contains(out, "package ExampleOrg (mini-1.0.0): its systems, results, scores or runs are not what event"));
      // The same files again: written over the edited rows, and the log verifies.
      CHECK(run_referee("import '" + pkg + "' --round mini-1.0.0 --db '" + db + "'", &out) == 0);
      CHECK(contains(out, "repaired ExampleOrg (mini-1.0.0): the same files, but its rows in the store had been edited"));
      CHECK(run_referee("review log --verify --db '" + db + "'", &out) == 0);
      CHECK(run_referee("import '" + pkg + "' --round mini-1.0.0 --db '" + db + "'", &out) == 0);
      CHECK(contains(out, "unchanged ExampleOrg"));
    }
    // A resubmission link edited: named, and made again from the logs by the same import.
    edit("UPDATE runs SET resubmission_of = (SELECT MIN(id) FROM runs) WHERE id = (SELECT MAX(id) FROM runs)");
    CHECK(run_referee("review log --verify --db '" + db + "'", &out) == 1);
    CHECK(contains(out, "is linked as a copy of run"));
    CHECK(run_referee("import '" + pkg + "' --round mini-1.0.0 --db '" + db + "'", &out) == 0);
    CHECK(contains(out, "its resubmission links, edited in the store, made again from its logs"));
    CHECK(run_referee("review log --verify --db '" + db + "'", &out) == 0);
    // In a round whose scores are final, an edit is named but not rewritten (that would renumber what the review names).
    REQUIRE(run_referee("round schedule mini-1.0.0 --objections-due 2099-01-01 --db '" + db + "'", &out) == 0);
    REQUIRE_MESSAGE(run_referee("round state mini-1.0.0 final --reason 'scores agreed' --db '" + db + "'", &out) == 0, out);
    edit("UPDATE results SET score_minutes = score_minutes / 2");
    CHECK(run_referee("import '" + pkg + "' --round mini-1.0.0 --db '" + db + "'", &out) == 2);
    CHECK(contains(out, "were edited in the store after they were imported"));
    CHECK(contains(out, "scores are final: referee does not rewrite them; restore the store from a copy"));
    // A package the log imported, deleted from the store.
    edit("DELETE FROM packages");
    CHECK(run_referee("review log --verify --db '" + db + "'", &out) == 1);
    CHECK(contains(out, "packages: ExampleOrg (mini-1.0.0), imported by event"));
  }

  TEST_CASE("statuses stack: the newest decision wins; amending an older one never undoes a newer one; verify agrees") {
    Review f;
    long long a = f.file_rcp();
    std::string pa = "/api/v1/objections/" + std::to_string(a);
    REQUIRE(f.call("nv", "POST", pa + "/responses", R"({"text":"x"})").status == 201);
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", pa + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.1})").status == 201);
    REQUIRE(f.call("chair1", "POST", pa + "/decision", "{}").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.1");
    // A second objection on the same result, decided later: withdraw.
    Response b = f.call("dell", "POST", "/api/v1/objections",
                        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"b","rule":"r"})");
    REQUIRE(b.status == 201);
    std::string pb = "/api/v1/objections/" + std::to_string(parse(b.body).find("objection")->find("id")->i);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.1");  // a decided status stays while B is open
    REQUIRE(f.call("nv", "POST", pb + "/responses", R"({"text":"x"})").status == 201);
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", pb + "/votes", R"({"vote":"uphold","remedy":"withdraw"})").status == 201);
    REQUIRE(f.call("chair1", "POST", pb + "/decision", "{}").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "withdrawn");
    // Amending A (older) to another factor: the newer withdraw stays.
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", pa + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":1.2})").status == 201);
    REQUIRE(f.call("chair1", "POST", pa + "/decision", R"({"amend":true,"reason":"the factor was wrong"})").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "withdrawn");
    // Amending B to a rejection: A's normalisation is what is left.
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", pb + "/votes", R"({"vote":"reject"})").status == 201);
    REQUIRE(f.call("chair1", "POST", pb + "/decision", R"({"amend":true,"reason":"B was wrong"})").status == 201);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.2");
    Json v = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    const std::string problem = v.find("problem") ? v.find("problem")->s : std::string();
    CHECK_MESSAGE(v.find("ok")->b == true, problem);
    // A third objection, withdrawn: nothing changes.
    Response c = f.call("goog", "POST", "/api/v1/objections",
                        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"c","rule":"r"})");
    REQUIRE(c.status == 201);
    std::string pc = "/api/v1/objections/" + std::to_string(parse(c.body).find("objection")->find("id")->i);
    REQUIRE(f.call("goog", "POST", pc + "/withdraw", "{}").status == 200);
    CHECK(f.status_of("NVIDIA/eos/retinanet") == "normalised:1.2");
    v = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    CHECK(v.find("ok")->b == true);
  }

  TEST_CASE("a result moved to the open division ranks with open results only: leaderboard text, CSV, JSON") {
    Review f;
    // bert: NVIDIA 5.0, Google 6.0, Dell 7.0 (all closed). NVIDIA's is moved to open.
    Response b = f.call("goog", "POST", "/api/v1/objections",
                        R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"b","rule":"r"})");
    REQUIRE(b.status == 201);
    std::string pb = "/api/v1/objections/" + std::to_string(parse(b.body).find("objection")->find("id")->i);
    REQUIRE(f.call("nv", "POST", pb + "/responses", R"({"text":"x"})").status == 201);
    for (const char* org : {"goog", "dell", "nv"})
      REQUIRE(f.call(org, "POST", pb + "/votes", R"({"vote":"uphold","remedy":"open"})").status == 201);
    REQUIRE(f.call("chair1", "POST", pb + "/decision", "{}").status == 201);
    CHECK(f.status_of("NVIDIA/eos/bert") == "moved-to-open");
    f.s.reset();
    f.api.reset();
    const std::string db = " --db '" + f.path + "'";
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --csv" + db, &out) == 0);
    // Closed first (Google 1, Dell 2), then open (NVIDIA 1): never NVIDIA first over the closed results.
    std::vector<std::string> lines;
    for (size_t at = 0; at < out.size();) {
      size_t nl = out.find('\n', at);
      lines.push_back(out.substr(at, nl - at));
      at = nl == std::string::npos ? out.size() : nl + 1;
    }
    REQUIRE(lines.size() >= 4);
    CHECK(lines[1].rfind("bert,1,", 0) == 0);
    CHECK(contains(lines[1], "Google"));
    CHECK(lines[2].rfind("bert,2,", 0) == 0);
    CHECK(contains(lines[2], "Dell"));
    CHECK(lines[3].rfind("bert,1,", 0) == 0);
    CHECK(contains(lines[3], "NVIDIA"));
    CHECK(contains(lines[3], "open"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json" + db, &out) == 0);
    Json j = parse(out);
    std::vector<long long> ranks;
    for (const auto& r : j.find("ranks")->items) ranks.push_back(r.i);
    CHECK(ranks == std::vector<long long>{1, 2, 1});
    // With --division closed, NVIDIA's is not there at all.
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --division closed --csv" + db, &out) == 0);
    CHECK_FALSE(contains(out, "NVIDIA"));
  }

  TEST_CASE("concurrent writers on one objection: none is lost, none is refused, the chain verifies") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    const char* users[] = {"goog", "nv", "nv2", "chair1", "goog", "nv"};
    std::vector<std::thread> threads;
    std::vector<int> bad(6, 0);
    std::mutex mu;
    std::vector<std::string> failures;
    for (int t = 0; t < 6; ++t)
      threads.emplace_back([&, t]() {
        // Each thread is its own client with its own Api on the store (as separate processes would be).
        Api api(f.path);
        auto call = [&](const std::string& user, const std::string& body, const std::string& to) {
          Request r;
          r.method = "POST";
          r.path = path + to;
          r.body = body;
          r.token = f.token.at(user);
          return api.handle(r);
        };
        for (int k = 0; k < 10; ++k) {
          Response r = call(users[t], "{\"evidence\":[{\"check\":\"thread " + std::to_string(t) + " item " + std::to_string(k) + "\"}]}", "/evidence");
          if (r.status != 201) {
            ++bad[t];
            std::lock_guard<std::mutex> lock(mu);
            failures.push_back(r.body);
          }
        }
        Response v = call(t % 3 == 0 ? "goog" : t % 3 == 1 ? "nv" : "dell", R"({"vote":"uphold"})", "/votes");
        if (v.status != 201) ++bad[t];
      });
    for (auto& th : threads) th.join();
    for (const auto& b : failures) INFO(b);
    CHECK(failures.empty());
    for (const auto& b : failures) MESSAGE(b);
    for (int t = 0; t < 6; ++t) CHECK(bad[t] == 0);
    CHECK(f.count("evidence") == 60);
    CHECK(f.count("votes") == 3);
    Json shown = parse(f.call("chair1", "GET", path, "").body);
    CHECK(shown.find("objection")->find("version")->i == 1 + 60 + 6);
    Json v = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    CHECK(v.find("ok")->b == true);
  }

  TEST_CASE("concurrent writers through one Api (a server's threads): none is lost, none is refused") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    const char* users[] = {"goog", "nv", "nv2", "chair1", "goog", "nv"};
    std::vector<std::thread> threads;
    std::vector<int> bad(6, 0);
    std::mutex mu;
    std::vector<std::string> failures;
    for (int t = 0; t < 6; ++t)
      threads.emplace_back([&, t]() {
        Api& api = *f.api;
        auto call = [&](const std::string& user, const std::string& body, const std::string& to) {
          Request r;
          r.method = "POST";
          r.path = path + to;
          r.body = body;
          r.token = f.token.at(user);
          return api.handle(r);
        };
        for (int k = 0; k < 10; ++k) {
          Response r = call(users[t], "{\"evidence\":[{\"check\":\"thread " + std::to_string(t) + " item " + std::to_string(k) + "\"}]}", "/evidence");
          if (r.status != 201) {
            ++bad[t];
            std::lock_guard<std::mutex> lock(mu);
            failures.push_back(r.body);
          }
        }
        Response v = call(t % 3 == 0 ? "goog" : t % 3 == 1 ? "nv" : "dell", R"({"vote":"uphold"})", "/votes");
        if (v.status != 201) ++bad[t];
      });
    for (auto& th : threads) th.join();
    for (const auto& b : failures) INFO(b);
    CHECK(failures.empty());
    for (const auto& b : failures) MESSAGE(b);
    for (int t = 0; t < 6; ++t) CHECK(bad[t] == 0);
    CHECK(f.count("evidence") == 60);
    CHECK(f.count("votes") == 3);
    Json shown = parse(f.call("chair1", "GET", path, "").body);
    CHECK(shown.find("objection")->find("version")->i == 1 + 60 + 6);
    Json v = parse(f.call("chair1", "GET", "/api/v1/log/verify", "").body);
    CHECK(v.find("ok")->b == true);
  }

  TEST_CASE("CLI through referee serve: the same output as on the local store, the same refusals") {
    Review f;
    long long id = f.file_rcp();
    REQUIRE(f.call("nv", "POST", "/api/v1/objections/" + std::to_string(id) + "/responses", R"({"text":"normalise"})").status == 201);
    f.s.reset();
    f.api.reset();
    std::string port_file = (f.dir.path / "serve.out").string(), err_file = (f.dir.path / "serve.err").string();
    std::string out;
    REQUIRE(referee::testing::run_shell_capture(std::string(REFEREE_BINARY) + " serve --db '" + f.path +
                                                    "' --listen 127.0.0.1:0 > '" + port_file + "' 2> '" + err_file +
                                                    "' & echo $!",
                                                &out) == 0);
    long pid = std::stol(out);
    std::string url;
    for (int i = 0; i < 500 && url.empty(); ++i) {
      std::ifstream in(port_file);
      std::string line;
      if (std::getline(in, line) && line.rfind("listening on http://", 0) == 0) url = line.substr(13);
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(!url.empty(), "the server did not start");
    while (!url.empty() && (url.back() == ' ' || url.back() == '\r')) url.pop_back();
    if (size_t sp = url.find(' '); sp != std::string::npos) url = url.substr(0, sp);
    std::string local_out, remote_out;
    std::string nv = " --token " + f.token.at("nv");
    int local_rc = run_referee("objection show " + std::to_string(id) + nv + " --db '" + f.path + "'", &local_out);
    int remote_rc = run_referee("objection show " + std::to_string(id) + nv + " --server " + url, &remote_out);
    CHECK(local_rc == 0);
    CHECK(remote_rc == 0);
    CHECK(local_out == remote_out);
    CHECK(contains(remote_out, "NVIDIA (nv): normalise"));
    // A stale vote (the version read is 1) is refused alike on the local store and through the server.
    std::string dell = " --token " + f.token.at("dell");
    std::string stale_local, stale_remote;
    CHECK(run_referee("objection vote " + std::to_string(id) + " --vote uphold --version 1" + dell + " --db '" + f.path + "'",
                      &stale_local) == 1);
    CHECK(run_referee("objection vote " + std::to_string(id) + " --vote uphold --version 1" + dell + " --server " + url,
                      &stale_remote) == 1);
    CHECK(stale_local == stale_remote);
    CHECK_MESSAGE(contains(stale_local, "changed since you read it (version 1, now "), stale_local);
    // Filing and refusals over HTTP.
    CHECK(run_referee("objection file --round 3.1.0 --against NVIDIA --result NVIDIA/eos/bert --title t --rule r --token " +
                          f.token.at("dell") + " --server " + url, &out) == 0);
    CHECK(contains(out, "by Dell (dell) against NVIDIA"));
    CHECK(run_referee("objection decide " + std::to_string(id) + " --tie-break reject" + nv + " --server " + url, &out) == 1);
    CHECK(contains(out, "only a review chair"));
    CHECK(run_referee("objection show " + std::to_string(id) + " --token " + f.token.at("intel") + " --server " + url, &out) == 2);
    CHECK(run_referee("objection show " + std::to_string(id) + " --token " + f.token.at("gone") + " --server " + url, &out) == 2);
    CHECK(run_referee("review log --verify --token " + f.token.at("chair1") + " --server " + url, &out) == 0);
    kill(static_cast<pid_t>(pid), SIGTERM);
    for (int i = 0; i < 200 && kill(static_cast<pid_t>(pid), 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  TEST_CASE("CLI text rounds: minutes to 4 decimals, factors as given up to 8 decimals, figures to 6 digits; JSON keeps all") {
    Review f;
    std::string db = " --db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    std::string out;
    const std::string goog = " --token " + f.token.at("goog");
    REQUIRE(run_referee("objection file --round 3.1.0 --against NVIDIA --result NVIDIA/eos/retinanet --title 'RCP fails' "
                        "--rule 'rcps: retinanet' --figure 'mean epochs=7.333333333333333:epochs' "
                        "--figure 'slowest run=0.9512345678:min'" + goog + db, &out) == 0);
    CHECK_MESSAGE(contains(out, "score impact: 0.8545 min -> 0.9193 min (+7.576%, not under the 2% waiver threshold)"), out);
    CHECK(contains(out, "mean epochs = 7.33333 epochs"));
    CHECK(contains(out, "slowest run = 0.9512 min"));
    CHECK_FALSE(contains(out, "7.333333333"));
    CHECK_FALSE(contains(out, "0.91928"));
    REQUIRE(run_referee("objection respond 1 --text 'normalise it' --remedy normalise --factor 1.0757575757575757 --token " +
                            f.token.at("nv") + db, &out) == 0);
    CHECK_MESSAGE(contains(out, "proposes normalise factor 1.07575758:"), out);
    REQUIRE(run_referee("objection respond 1 --text 'or this' --remedy normalise --factor 1.0758 --token " + f.token.at("nv") + db,
                        &out) == 0);
    CHECK_MESSAGE(contains(out, "proposes normalise factor 1.0758:"), out);
    // JSON keeps every digit.
    REQUIRE(run_referee("objection show 1 --json" + goog + db, &out) == 0);
    Json j = parse(out);
    const Json* o = j.find("objection");
    CHECK(o->find("impact")->find("minutes")->f == 0.85454 * 1.07575758);
    CHECK(o->find("evidence")->items.at(0).find("value")->f == 7.333333333333333);
    CHECK(o->find("responses")->items.at(0).find("factor")->f == 1.0757575757575757);
    // The committee's report (Markdown): the factor as given.
    REQUIRE(run_referee("objection vote 1 --vote uphold --token " + f.token.at("dell") + db, &out) == 0);
    REQUIRE(run_referee("objection decide 1 --remedy normalise --factor 1.0757575757575757 --token " + f.token.at("chair1") + db,
                        &out) == 0);
    CHECK_MESSAGE(contains(out, "remedy normalise factor 1.07575758"), out);
    REQUIRE(run_referee("review report --round 3.1.0 --format md --token " + f.token.at("chair1") + db, &out) == 0);
    CHECK_MESSAGE(contains(out, "(factor 1.07575758)"), out);
    CHECK(contains(out, "mean epochs = 7.33333 epochs"));
    CHECK_FALSE(contains(out, "1.0757575757"));
  }

  TEST_CASE("CLI on a local store that does not exist: exit 2 naming the path and how to make one; nothing created") {
    TempDir dir{"referee-nostore-"};
    const fs::path home = dir.path / "home";
    fs::create_directories(home);
    const std::string env = "env -u XDG_DATA_HOME -u REFEREE_DB -u REFEREE_SERVER -u REFEREE_TOKEN HOME='" + home.string() + "' ";
    std::string out;
    // The default store ($HOME/.local/share/referee/referee.db) on a machine that has none.
    CHECK(referee::testing::run_shell_capture(env + REFEREE_BINARY + " objection list", &out) == 2);
    const std::string default_db = (home / ".local/share/referee/referee.db").string();
    CHECK_MESSAGE(contains(out, "no store at " + default_db), out);
    CHECK(contains(out, "referee import DIR --round R --db " + default_db));
    CHECK_FALSE(fs::exists(home / ".local"));
    // $REFEREE_DB and --db naming a file that is not there, in a folder that is.
    const std::string named = (dir.path / "named.db").string();
    CHECK(referee::testing::run_shell_capture(env + "REFEREE_DB='" + named + "' " + REFEREE_BINARY + " user list", &out) == 2);
    CHECK_MESSAGE(contains(out, "no store at " + named), out);
    CHECK(referee::testing::run_shell_capture(env + REFEREE_BINARY + " round show 3.1.0 --db '" + named + "'", &out) == 2);
    CHECK(contains(out, "referee import DIR --round R --db " + named));
    CHECK(referee::testing::run_shell_capture(env + REFEREE_BINARY + " objection file --round 3.1.0 --against NVIDIA "
                                              "--result NVIDIA/eos/bert --title t --rule r --json --db '" + named + "'",
                                              &out) == 2);
    CHECK(referee::testing::run_shell_capture(env + REFEREE_BINARY + " audit training-3.1.0 --db '" + named + "'", &out) == 2);
    CHECK(contains(out, "no store at " + named));
    CHECK_FALSE(fs::exists(named));
    CHECK(fs::is_empty(home));
  }

  TEST_CASE("CLI: user import adds a CSV of users, each token to a file of its own (0600); a bad file adds nothing") {
    Review f;
    std::string db = "--db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    TempDir t;
    auto put = [&](const std::string& name, const std::string& text) {
      std::ofstream(t.path / name, std::ios::binary) << text;
      return (t.path / name).string();
    };
    std::string out;
    // Every problem of a bad file, with its line; nothing added, no token folder filled.
    std::string bad = put("bad.csv", "Name,Role,Organisation,Email\r\nok1,member,Google,ok1@g.com\r\nbad name,member,Google,\r\n"
                                     "zed,owner,Google,\r\nyan,member,,\r\nok1,chair,,\r\nxi,chair,,not-an-address\r\n");
    CHECK(run_referee("user import '" + bad + "' --tokens '" + (t.path / "tok0").string() + "' " + db, &out) == 2);
    CHECK_MESSAGE(contains(out, "bad.csv:3: user name 'bad name' is not 1 to 64"), out);
    CHECK(contains(out, "bad.csv:4: role 'owner' is not member, chair or admin"));
    CHECK(contains(out, "bad.csv:5: a member belongs to an organisation"));
    CHECK(contains(out, "bad.csv:6: user ok1 is named twice in the file"));
    CHECK(contains(out, "bad.csv:7: email 'not-an-address' is not an address"));
    CHECK(contains(out, "nothing was added"));
    CHECK(run_referee("user list " + db, &out) == 0);
    CHECK_FALSE(contains(out, "ok1"));
    CHECK(run_referee("user import '" + put("nohead.csv", "name,organisation\nx,Google\n") + "' --tokens '" +
                          (t.path / "tok0").string() + "' " + db,
                      &out) == 2);
    CHECK(contains(out, "nohead.csv:1: the header has no 'role' column"));
    // A good file: every user added, each token in its own file that only its owner reads, and it works.
    std::string good = put("users.csv", "name,organisation,role,email\nann,Google,member,ann@google.com\n"
                                        "\"ben\",\"Dell\",chair,\nnora,NewLab,member,\n");
    fs::path tok = t.path / "tokens";
    CHECK(run_referee("user import '" + good + "' --tokens '" + tok.string() + "' --create-org " + db, &out) == 0);
    CHECK_MESSAGE(contains(out, "added ann (member of Google): token in " + (tok / "ann.token").string() + ", to send to ann@google.com"), out);
    CHECK(contains(out, "3 user(s) added"));
    CHECK_FALSE(contains(out, "rft_"));  // tokens go to the files only
    for (const char* who : {"ann", "ben", "nora"}) {
      CAPTURE(who);
      fs::path file = tok / (std::string(who) + ".token");
      REQUIRE(fs::exists(file));
      CHECK((fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
    }
    CHECK((fs::status(tok).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
    std::string ann;
    std::getline(std::ifstream(tok / "ann.token"), ann);
    CHECK(ann.rfind("rft_", 0) == 0);
    CHECK(run_referee("objection list --round 3.1.0 --token " + ann + " " + db, &out) == 0);
    // A folder others may enter is never used (nor made private behind their backs).
    fs::create_directories(t.path / "shared");
    fs::permissions(t.path / "shared", fs::perms::all);
    CHECK(run_referee("user import '" + good + "' --tokens '" + (t.path / "shared").string() + "' --create-org " + db, &out) == 2);
    CHECK(contains(out, "may be entered by others"));
    CHECK(fs::status(t.path / "shared").permissions() == fs::perms::all);
    fs::create_directory_symlink(tok, t.path / "link");
    CHECK(run_referee("user import '" + good + "' --tokens '" + (t.path / "link").string() + "' " + db, &out) == 2);
    CHECK(contains(out, "is a symbolic link"));
    // Again: the users exist (refused, nothing added), a token file is never overwritten; --skip-existing goes on.
    CHECK(run_referee("user import '" + good + "' --tokens '" + (t.path / "again").string() + "' " + db, &out) == 2);
    CHECK(contains(out, "users.csv:2: user ann already exists"));
    CHECK(run_referee("user import '" + good + "' --tokens '" + tok.string() + "' " + db, &out) == 2);
    CHECK(contains(out, "a token file is never overwritten"));
    std::string more = put("more.csv", "name,organisation,role\nann,Google,member\nolga,Google,member\n");
    CHECK(run_referee("user import '" + more + "' --tokens '" + (t.path / "more").string() + "' --skip-existing " + db, &out) == 0);
    CHECK(contains(out, "skipped ann: already a user"));
    CHECK(contains(out, "added olga"));
    // A member may not add users: refused by policy before anything is added.
    CHECK(run_referee("user import '" + put("m.csv", "name,organisation,role\npia,Google,member\n") + "' --tokens '" +
                          (t.path / "m").string() + "' --token " + ann + " " + db,
                      &out) == 1);
    CHECK(run_referee("user list " + db, &out) == 0);
    CHECK_FALSE(contains(out, "pia"));
  }

  TEST_CASE("CLI: user add prints the token once; objection file, respond, vote, decide on a local store") {
    Review f;
    std::string db = "--db '" + f.path + "'";
    f.s.reset();
    f.api.reset();
    std::string out;
    REQUIRE(run_referee("user add carol --org Google --role member " + db, &out) == 0);
    size_t at = out.find("rft_");
    REQUIRE(at != std::string::npos);
    std::string carol = out.substr(at, 68);
    CHECK(out.find("rft_", at + 1) == std::string::npos);
    CHECK(contains(out, "shown only this once"));
    CHECK(run_referee("user list " + db, &out) == 0);
    CHECK(contains(out, "carol"));
    CHECK_FALSE(contains(out, carol));
    CHECK(run_referee("user add dave --org Nowhere --role member " + db, &out) == 2);  // an unknown name: 2
    CHECK(contains(out, "--create-org"));
    CHECK(run_referee("objection evidence 1 --note only " + db, &out) == 2);  // a note alone is no evidence
    CHECK(contains(out, "no evidence given: name it with --lines, --figure, --check or --evidence-finding"));
    CHECK(run_referee("user add eve --role king " + db, &out) == 2);
    // A member may not add users: refused by policy, exit 1.
    CHECK(run_referee("user add frank --org Google --role member --token " + carol + " " + db, &out) == 1);
    CHECK(run_referee("objection file --round 3.1.0 --against NVIDIA --result NVIDIA/eos/retinanet --title 'RCP fails' "
                      "--rule 'rcps: retinanet' --lines NVIDIA/eos/retinanet:result_0.txt:2 --token " + carol + " " + db,
                      &out) == 0);
    CHECK(contains(out, "objection 1 (training-3.1.0, open, version 1): RCP fails"));
    CHECK(contains(out, "score impact: 0.8545 min -> 0.9193 min (+7.576%, not under the 2% waiver threshold)"));
    CHECK(contains(out, "not under the 2% waiver threshold"));
    CHECK(contains(out, "2: :::MLLOG {\"key\": \"eval_accuracy\""));
    std::string nv = f.token.at("nv"), dell = f.token.at("dell"), chair = f.token.at("chair1");
    CHECK(run_referee("objection respond 1 --text 'normalise it' --remedy normalise --factor 1.0758 --version 5 --token " + nv + " " + db, &out) == 1);
    CHECK(contains(out, "objection 1 is at version 1: version 5 was never one of it"));
    // A version or id that is not a plain count is a flag error, never "no check" or a clamped number.
    for (const char* v : {"0", "-1", "99999999999999999999", "1e3"}) {
      CAPTURE(v);
      CHECK(run_referee("objection respond 1 --text x --version " + std::string(v) + " --token " + nv + " " + db, &out) == 2);
      CHECK(run_referee("objection show " + std::string(v) + " " + db, &out) == 2);
    }
    CHECK(contains(out, "is not a number of at most 18 digits"));
    CHECK(run_referee("objection respond 1 --text 'normalise it' --remedy normalise --factor 1.0758 --version 1 --token " + nv + " " + db, &out) == 0);
    CHECK(contains(out, "NVIDIA (nv) proposes normalise factor 1.0758"));
    CHECK(run_referee("objection vote 1 --vote uphold --token " + dell + " " + db, &out) == 0);
    CHECK(run_referee("objection decide 1 --remedy normalise --factor 1.0758 --token " + dell + " " + db, &out) == 1);
    CHECK(run_referee("objection decide 1 --remedy normalise --factor 1.0758 --token " + chair + " " + db, &out) == 0);
    CHECK(contains(out, "decision 1: upheld, remedy normalise factor 1.0758"));
    CHECK(run_referee("objection show 1 --json " + db, &out) == 0);
    CHECK(contains(out, "\"state\":\"decided\""));
    CHECK(run_referee("objection list --round 3.1.0 " + db, &out) == 0);
    CHECK(contains(out, "#1  training-3.1.0  Google -> NVIDIA  decided"));
    CHECK(run_referee("review log --round 3.1.0 " + db, &out) == 0);
    CHECK(contains(out, "decision.record  objection/1"));
    CHECK(run_referee("objection show 99 " + db, &out) == 2);  // an unknown name: 404, exit 2
    CHECK(contains(out, "referee objection show: no objection 99"));
  }
}
