// The peer review end to end through the real `referee serve`: the policy
// matrix over HTTP (every route x every role x round state), several CLI
// clients at once, kill -9 during writes, and bad input on the objection
// routes. The store is the review suite's (tests/review_fixture.h).
#include <doctest/doctest.h>
#include <httplib.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "review/events.h"
#include "submissions/store.h"
#include "tests/review_fixture.h"
#include "tests/run_referee.h"
#include "tests/serve_process.h"
#include "tests/temp_dir.h"

namespace referee::testing {
namespace {

using namespace review_fixture;

// The test's own connection to the store the server serves (WAL: the server
// and the test read and write it side by side).
struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_busy_timeout(db, 20000);
  }
  ~Db() { sqlite3_close(db); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  void exec(const std::string& sql) {
    char* e = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &e);
    std::string msg = e ? e : "";
    sqlite3_free(e);
    REQUIRE_MESSAGE(rc == SQLITE_OK, sql << ": " << msg);
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sql << ": " << sqlite3_errmsg(db));
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }
  long long number(const std::string& sql) {
    std::string t = text(sql);
    return t.empty() ? -1 : std::stoll(t);
  }
  long long events() { return number("SELECT COUNT(*) FROM events"); }
};

struct Answer {
  int status = 0;
  std::string body;
};

// The review store behind a real server; requests as any of the fixture's users.
struct Live {
  Review f;
  std::unique_ptr<Serve> server;
  std::unique_ptr<Db> db;
  std::unique_ptr<httplib::Client> client;

  explicit Live(const std::vector<std::string>& extra = {}) {
    f.s.reset();  // the server owns the store from here
    f.api.reset();
    server = std::make_unique<Serve>(f.path, extra, (f.dir.path / "serve.err").string());
    db = std::make_unique<Db>(f.path);
    client = std::make_unique<httplib::Client>("127.0.0.1", server->port);
    client->set_url_encode(false);  // paths go as written (a bad %-escape included)
  }
  std::string url() const { return server->url; }
  std::string token(const std::string& actor) const {
    if (actor.empty()) return "";
    if (actor == "revoked") return f.token.at("gone");
    if (actor == "forged") return "rft_" + std::string(64, 'a');
    if (actor == "empty") return "";
    return f.token.at(actor);
  }
  Answer call(const std::string& actor, const std::string& method, const std::string& path, const std::string& body = "",
              const std::string& raw_token = "", bool use_raw = false, const std::string& if_match = "") {
    httplib::Request req;
    req.method = method;
    req.path = path;
    std::string t = use_raw ? raw_token : token(actor);
    if (!t.empty() || use_raw) req.headers.emplace("Authorization", "Bearer " + t);
    if (!if_match.empty()) req.headers.emplace("If-Match", if_match);
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
      req.body = body;
      req.headers.emplace("Content-Type", "application/json");
    }
    auto r = client->send(req);
    REQUIRE_MESSAGE(r, method << " " << path << ": no answer (" << httplib::to_string(r.error()) << ")");
    return {r->status, r->body};
  }
  void set_state(const std::string& state) {
    db->exec("UPDATE round_reviews SET state = '" + state + "' WHERE round_id = " + std::to_string(f.r31));
  }
  // Google objects to NVIDIA's BERT (the round must be open to it).
  long long file(const std::string& title = "seed not logged", const std::string& as = "goog") {
    Answer a = call(as, "POST", "/api/v1/objections",
                    R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":")" + title +
                        R"(","rule":"training_3.1.0/common: seed"})");
    REQUIRE_MESSAGE(a.status == 201, a.body);
    return parse(a.body).find("objection")->find("id")->i;
  }
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// The actors, in the order of each row's expected statuses.
const std::array<const char*, 9> kActors = {
    "nv",      // a member of the accused organisation (NVIDIA)
    "goog",    // a member of the filing organisation (Google)
    "dell",    // a member of another submitter of the round (Dell)
    "intel",   // a member of an organisation that did not submit to the round
    "chair1",  // a review chair (no organisation)
    "admin1",  // an administrator (no organisation)
    "",        // no token
    "revoked", // a revoked token
    "forged",  // a well-formed token the store does not know
};

struct Row {
  const char* state;  // training-3.1.0's state when the request is made
  const char* method;
  const char* path;   // {id}: a fresh objection by Google against NVIDIA; {victim}, {prefix}: a fresh user, its token's prefix;
  const char* body;   // {pairing}: the pairing in which Google reviews NVIDIA; {n}: a number unique to the request
  std::array<int, 9> expect;  // nv, goog, dell, intel, chair1, admin1, none, revoked, forged
};

// Runs the referee binary from any thread (no doctest macros here): exit code
// and what it printed, stdout and stderr together.
struct Cmd {
  std::string what;       // file | evidence | respond
  std::string objection;  // the objection it acts on ("" for file until it answers)
  std::string args;
  int rc = -2;
  std::string out;
  Cmd(std::string w, std::string o, std::string a) : what(std::move(w)), objection(std::move(o)), args(std::move(a)) {}
};
void run_cmd(Cmd* c) {
  FILE* p = popen((std::string(REFEREE_BINARY) + " " + c->args + " 2>&1").c_str(), "r");
  if (!p) return;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) c->out.append(buf, k);
  int st = pclose(p);
  c->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
// "objection 12 (training-3.1.0, ..." -> "12"
std::string objection_id_in(const std::string& out) {
  size_t at = out.find("objection ");
  if (at == std::string::npos) return "";
  size_t end = out.find(' ', at + 10);
  return out.substr(at + 10, end - at - 10);
}

}  // namespace

TEST_SUITE("review_e2e") {
  TEST_CASE("the policy matrix through the real server: every route x every role x round state") {
    const char* file = R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t{n}","rule":"r"})";
    const char* ev = R"({"evidence":[{"check":"seed not logged {n}"}]})";
    const char* respond = R"({"text":"we logged it {n}"})";
    const char* comment = R"({"text":"see run 3 {n}"})";
    const char* vote = R"({"vote":"uphold"})";
    const char* decide = R"({"tie_break":"reject","text":"rejected {n}"})";
    const char* user = R"({"name":"u{n}","organisation":"NVIDIA","role":"member"})";
    const char* announce = R"({"results":["NVIDIA/eos/bert"],"text":"resubmitted {n}"})";
    const char* schedule = R"({"objections_due":"2099-01-0{n1}"})";
    // In a published round nothing changes: 422 for whoever could act before, 403 for whoever never could.
    // 401: no, revoked or forged token. 404 for `intel`: an embargoed round is answered as one that
    // does not exist, on every route (docs/review.md).
    const Row rows[] = {
        // anonymous: health and the API's description, whatever token comes with them
        {"review", "GET", "/api/v1/health", "", {200, 200, 200, 200, 200, 200, 200, 200, 200}},
        {"review", "GET", "/api/v1/openapi.yaml", "", {200, 200, 200, 200, 200, 200, 200, 200, 200}},
        // users and tokens: administrators (chairs may list)
        {"review", "POST", "/api/v1/users", user, {403, 403, 403, 403, 403, 201, 401, 401, 401}},
        {"review", "GET", "/api/v1/users", "", {403, 403, 403, 403, 200, 200, 401, 401, 401}},
        {"review", "POST", "/api/v1/users/{victim}/tokens", "", {403, 403, 403, 403, 403, 201, 401, 401, 401}},
        {"review", "POST", "/api/v1/users/{victim}/revoke", "", {403, 403, 403, 403, 403, 200, 401, 401, 401}},
        {"review", "POST", "/api/v1/tokens/revoke", R"({"prefix":"{prefix}"})", {403, 403, 403, 403, 403, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/me", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        // rounds: an embargoed round is unknown (404) to members of organisations that did not submit
        {"review", "GET", "/api/v1/rounds", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/rounds/3.1.0", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"published", "GET", "/api/v1/rounds/3.1.0", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "PUT", "/api/v1/rounds/3.1.0/schedule", schedule, {403, 403, 403, 403, 200, 200, 401, 401, 401}},
        {"published", "PUT", "/api/v1/rounds/3.1.0/schedule", schedule, {403, 403, 403, 403, 422, 422, 401, 401, 401}},
        {"review", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final"})", {403, 403, 403, 403, 200, 200, 401, 401, 401}},
        {"final", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"published"})", {403, 403, 403, 403, 200, 200, 401, 401, 401}},
        {"published", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"review","reason":"x"})", {403, 403, 403, 403, 422, 422, 401, 401, 401}},
        {"review", "POST", "/api/v1/rounds/3.1.0/pairings", "", {403, 403, 403, 403, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/rounds/3.1.0/pairings", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        // a pairing moves forward by a member of the reviewer organisation (Google) or a chair
        // A pairing of an embargoed round is as one that does not exist for `intel` (404), not a refusal naming its reviewer.
        {"review", "PATCH", "/api/v1/pairings/{pairing}", R"({"status":"in-progress"})", {403, 200, 403, 404, 200, 403, 401, 401, 401}},
        // announcements: a member for its own organisation's results, a chair any
        {"review", "POST", "/api/v1/rounds/3.1.0/announcements", announce, {201, 403, 403, 404, 201, 403, 401, 401, 401}},
        // (announcements check the round's state before the caller's organisation: 422 for every caller)
        {"published", "POST", "/api/v1/rounds/3.1.0/announcements", announce, {422, 422, 422, 422, 422, 422, 401, 401, 401}},
        {"published", "PATCH", "/api/v1/pairings/{pairing}", R"({"status":"in-progress"})", {403, 422, 403, 403, 422, 403, 401, 401, 401}},
        {"final", "PATCH", "/api/v1/pairings/{pairing}", R"({"status":"in-progress"})", {403, 200, 403, 404, 200, 403, 401, 401, 401}},
        {"review", "GET", "/api/v1/rounds/3.1.0/announcements", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/rounds/3.1.0/report?format=json", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"published", "GET", "/api/v1/rounds/3.1.0/report?format=md", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        // audit and findings: whoever can see the round
        {"review", "POST", "/api/v1/audit", R"({"round":"3.1.0"})", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/findings?round=3.1.0", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/findings/999999", "", {404, 404, 404, 404, 404, 404, 401, 401, 401}},
        // filing: a member for its own organisation, never against it; chairs and admins have none
        {"review", "POST", "/api/v1/objections", file, {403, 201, 201, 404, 403, 403, 401, 401, 401}},
        {"final", "POST", "/api/v1/objections", file, {403, 422, 422, 404, 403, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections", file, {403, 422, 422, 422, 403, 403, 401, 401, 401}},
        // reading objections: everyone who may see the round
        {"review", "GET", "/api/v1/objections?round=3.1.0", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/objections/{id}", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"final", "GET", "/api/v1/objections/{id}", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"published", "GET", "/api/v1/objections/{id}", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        // evidence: either party or a chair
        {"review", "POST", "/api/v1/objections/{id}/evidence", ev, {201, 201, 403, 404, 201, 403, 401, 401, 401}},
        {"final", "POST", "/api/v1/objections/{id}/evidence", ev, {422, 422, 403, 404, 422, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/evidence", ev, {422, 422, 403, 403, 422, 403, 401, 401, 401}},
        // responses: the accused organisation only; nobody responds for another organisation
        {"review", "POST", "/api/v1/objections/{id}/responses", respond, {201, 403, 403, 404, 403, 403, 401, 401, 401}},
        {"final", "POST", "/api/v1/objections/{id}/responses", respond, {422, 403, 403, 404, 403, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/responses", respond, {422, 403, 403, 403, 403, 403, 401, 401, 401}},
        // the discussion: either party and the chairs, under no deadline, until published
        {"review", "POST", "/api/v1/objections/{id}/comments", comment, {201, 201, 403, 404, 201, 403, 401, 401, 401}},
        {"final", "POST", "/api/v1/objections/{id}/comments", comment, {201, 201, 403, 404, 201, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/comments", comment, {422, 422, 403, 403, 422, 403, 401, 401, 401}},
        // votes: one per submitting organisation, the parties included
        {"review", "POST", "/api/v1/objections/{id}/votes", vote, {201, 201, 201, 404, 403, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/votes", vote, {422, 422, 422, 403, 403, 403, 401, 401, 401}},
        // decisions: chairs only
        {"review", "POST", "/api/v1/objections/{id}/decision", decide, {403, 403, 403, 404, 201, 403, 401, 401, 401}},
        {"final", "POST", "/api/v1/objections/{id}/decision", decide, {403, 403, 403, 404, 201, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/decision", decide, {403, 403, 403, 403, 422, 403, 401, 401, 401}},
        // withdrawal: the filing organisation
        {"review", "POST", "/api/v1/objections/{id}/withdraw", "", {403, 200, 403, 404, 403, 403, 401, 401, 401}},
        {"published", "POST", "/api/v1/objections/{id}/withdraw", "", {403, 422, 403, 403, 403, 403, 401, 401, 401}},
        // the log: read by anyone with a token (a member: the rounds it may see); edited by nobody
        {"review", "GET", "/api/v1/log", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/log?round=3.1.0", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/log?subject=objection/{id}", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/log/verify", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "PUT", "/api/v1/log", R"({"events":[]})", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        {"review", "PATCH", "/api/v1/log", R"({"events":[]})", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        {"review", "DELETE", "/api/v1/log", "", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        {"review", "POST", "/api/v1/log", R"({"events":[]})", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        {"review", "DELETE", "/api/v1/log/verify", "", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        {"review", "DELETE", "/api/v1/log/1", "", {404, 404, 404, 404, 404, 404, 404, 404, 404}},
        {"review", "PUT", "/api/v1/events/1", R"({"actor":"x"})", {404, 404, 404, 404, 404, 404, 404, 404, 404}},
        {"review", "DELETE", "/api/v1/objections/{id}", "", {405, 405, 405, 405, 405, 405, 405, 405, 405}},
        // the store's questions: a round under review is unknown (404) to a member of another organisation
        {"review", "GET", "/api/v1/query/leaderboard?round=3.1.0&benchmark=bert", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"published", "GET", "/api/v1/query/leaderboard?round=3.1.0&benchmark=bert", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/query/compare?round=3.1.0&benchmark=bert&result=NVIDIA/eos&result=Google/tpu", "", {200, 200, 200, 404, 200, 200, 401, 401, 401}},
        {"review", "GET", "/api/v1/query/list?what=rounds", "", {200, 200, 200, 200, 200, 200, 401, 401, 401}},
    };

    Live live;
    // The pairings exist (so assigning again is idempotent: 200); Google reviews NVIDIA in one of them.
    Answer assigned = live.call("chair1", "POST", "/api/v1/rounds/3.1.0/pairings");
    REQUIRE_MESSAGE(assigned.status == 201, assigned.body);
    std::string pairing = live.db->text(
        "SELECT p.id FROM pairings p JOIN organisations a ON a.id = p.reviewer_org JOIN organisations b ON b.id = "
        "p.reviewed_org WHERE a.name = 'Google' AND b.name = 'NVIDIA'");
    REQUIRE_FALSE(pairing.empty());

    int n = 0, failures = 0, requests = 0;
    for (const auto& row : rows) {
      for (size_t a = 0; a < kActors.size(); ++a) {
        const std::string actor = kActors[a];
        ++n;
        // Each request starts from the same round: state review, no deadlines, the pairing assigned.
        live.set_state("review");
        live.db->exec("UPDATE round_reviews SET objections_due = NULL, version = 1");
        live.db->exec("UPDATE pairings SET status = 'assigned'");
        std::string p = row.path, body = row.body;
        if (contains(p, "{id}") || contains(body, "{id}")) {
          std::string id = std::to_string(live.file("o" + std::to_string(n)));
          p = replace_all(p, "{id}", id);
          if (contains(p, "/decision")) {
            // Ready for a decision: the accused heard and one organisation's vote.
            std::string responses = p.substr(0, p.rfind('/')), votes = responses;
            responses.append("/responses");
            votes.append("/votes");
            REQUIRE(live.call("nv", "POST", responses, R"({"text":"heard"})").status == 201);
            REQUIRE(live.call("dell", "POST", votes, R"({"vote":"reject"})").status == 201);
          }
        }
        if (contains(p, "{victim}") || contains(body, "{prefix}")) {
          std::string victim = "victim" + std::to_string(n);
          Answer made = live.call("admin1", "POST", "/api/v1/users",
                                  R"({"name":")" + victim + R"(","organisation":"Dell","role":"member"})");
          REQUIRE_MESSAGE(made.status == 201, made.body);
          p = replace_all(p, "{victim}", victim);
          body = replace_all(body, "{prefix}", parse(made.body).find("token")->s.substr(0, 12));
        }
        p = replace_all(p, "{pairing}", pairing);
        body = replace_all(body, "{n1}", std::to_string(1 + n % 9));
        body = replace_all(body, "{n}", std::to_string(n));
        live.set_state(row.state);
        long long before = live.db->events();
        Answer r = live.call(actor, row.method, p, body);
        ++requests;
        long long written = live.db->events() - before;
        INFO(std::string(row.state) << " " << std::string(row.method) << " " << p << " " << body << " as '" << actor << "': " << r.status << " "
                       << r.body.substr(0, 300));
        CHECK(r.status == row.expect[a]);
        if (r.status != row.expect[a]) ++failures;
        if (r.status >= 400) {
          // A refusal writes nothing and says why, as JSON.
          CHECK(written == 0);
          CHECK(contains(r.body, "\"error\":{\"status\":" + std::to_string(r.status)));
        }
        if (r.status >= 200 && r.status < 300) {
          // A read writes nothing; an accepted change writes exactly one event (assigning pairings that all
          // exist already changes nothing; an audit writes one only when its findings changed).
          std::string m = row.method;
          if (m == "GET") CHECK(written == 0);
          else if (contains(p, "/pairings") && m == "POST") CHECK(written == 0);
          else if (contains(p, "/audit")) CHECK(written <= 1);
          else CHECK(written == 1);
        }
      }
    }
    CHECK(failures == 0);
    MESSAGE(requests << " requests through the server");
    // What the refusals above guard, asserted on the answers' contents too.
    live.set_state("review");
    Answer intel_rounds = live.call("intel", "GET", "/api/v1/rounds");
    CHECK_FALSE(contains(intel_rounds.body, "3.1.0"));
    Answer intel_log = live.call("intel", "GET", "/api/v1/log");
    CHECK_FALSE(contains(intel_log.body, "objection.file"));
    Answer dell_log = live.call("dell", "GET", "/api/v1/log");
    CHECK(contains(dell_log.body, "objection.file"));
    CHECK_FALSE(contains(dell_log.body, "user.add"));  // events naming no round are not shown to members
    // The chain verifies; the matrix moved the round back from published by editing the table (the review
    // never does), and the cross-check says so.
    Answer verify = live.call("chair1", "GET", "/api/v1/log/verify");
    CHECK(contains(verify.body, "\"first_bad\":null"));
    CHECK_MESSAGE(contains(verify.body, "round_reviews row of training-3.1.0: state is 'review', the review log says 'published'"),
                  verify.body);
    // A round that does not exist is answered without naming the rounds that do (the embargoed one
    // included) or the store's file.
    for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"GET", "/api/v1/rounds/9.9.9", ""},
             {"GET", "/api/v1/rounds/9.9.9/report", ""},
             {"GET", "/api/v1/rounds/9.9.9/pairings", ""},
             {"GET", "/api/v1/rounds/9.9.9/announcements", ""},
             {"GET", "/api/v1/findings?round=9.9.9", ""},
             {"POST", "/api/v1/audit", R"({"round":"9.9.9"})"},
             {"GET", "/api/v1/objections?round=9.9.9", ""},
             {"GET", "/api/v1/log?round=9.9.9", ""},
             {"GET", "/api/v1/query/leaderboard?round=9.9.9&benchmark=bert", ""}}) {
      Answer r = live.call("intel", method, path, body);
      const std::string where = path;  // a copy: doctest's CAPTURE takes it in a lambda
      CAPTURE(where);
      CHECK(r.status == 404);
      CHECK_FALSE(contains(r.body, "training-3.0.0"));  // the store's rounds are not listed
      CHECK_FALSE(contains(r.body, "it has"));
      CHECK_FALSE(contains(r.body, "review.db"));
    }
  }

  TEST_CASE("eight CLI clients at once: nothing lost, versions count the accepted updates, stale versions get 409") {
    Live live;
    for (const auto& [name, org] : std::vector<std::pair<std::string, std::string>>{
             {"goog2", "Google"}, {"dell2", "Dell"}, {"nv3", "NVIDIA"}, {"nv4", "NVIDIA"}}) {
      Answer made = live.call("admin1", "POST", "/api/v1/users",
                              R"({"name":")" + name + R"(","organisation":")" + org + R"(","role":"member"})");
      REQUIRE_MESSAGE(made.status == 201, made.body);
      live.f.token[name] = parse(made.body).find("token")->s;
    }
    const std::string stale = std::to_string(live.file("read by every responder"));  // version 1, answered at once by four
    const std::string shared = std::to_string(live.file("answered by every responder"));
    std::map<std::string, std::string> own;  // responder -> an objection it alone answers
    for (const char* who : {"nv", "nv2", "nv3", "nv4"}) own[who] = std::to_string(live.file(std::string("for ") + who, "dell"));
    long long events_before = live.db->events();
    auto as = [&](const std::string& who) { return " --server " + live.url() + " --token " + live.f.token.at(who); };

    // Four filers file three objections each and add evidence to each twice; four responders race on
    // `stale` with the version they read (1), answer `shared` without one, and answer their own twice.
    std::vector<std::vector<Cmd>> clients(8);
    std::vector<std::thread> threads;
    const std::vector<std::string> filers = {"goog", "goog2", "dell", "dell2"}, responders = {"nv", "nv2", "nv3", "nv4"};
    for (size_t i = 0; i < 8; ++i)
      threads.emplace_back([&, i] {
        auto& mine = clients[i];
        if (i < 4) {
          const std::string& who = filers[i];
          for (int k = 0; k < 3; ++k) {
            std::string title = "c-" + who + "-" + std::to_string(k);
            mine.emplace_back(Cmd{"file", "", "objection file --round 3.1.0 --against NVIDIA --result NVIDIA/eos/bert --title " +
                                            title + " --rule r" + as(who)});
            run_cmd(&mine.back());
            std::string id = objection_id_in(mine.back().out);
            mine.back().objection = id;
            if (mine.back().rc != 0 || id.empty()) continue;
            for (int e = 0; e < 2; ++e) {
              mine.emplace_back(Cmd{"evidence", id, "objection evidence " + id + " --check 'ev-" + title + "-" + std::to_string(e) + "'" + as(who)});
              run_cmd(&mine.back());
            }
          }
        } else {
          const std::string& who = responders[i - 4];
          mine.emplace_back(Cmd{"respond", stale, "objection respond " + stale + " --text 'stale-" + who + "' --version 1" + as(who)});
          run_cmd(&mine.back());
          mine.emplace_back(Cmd{"respond", shared, "objection respond " + shared + " --text 'shared-" + who + "'" + as(who)});
          run_cmd(&mine.back());
          for (int k = 0; k < 2; ++k) {
            mine.emplace_back(Cmd{"respond", own.at(who), "objection respond " + own.at(who) + " --text 'own-" + who + "-" + std::to_string(k) + "'" + as(who)});
            run_cmd(&mine.back());
          }
        }
      });
    for (auto& t : threads) t.join();

    std::map<std::string, int> accepted;  // objection -> accepted updates (evidence, responses)
    int accepted_total = 0, stale_ok = 0, stale_409 = 0;
    for (const auto& client : clients)
      for (const auto& c : client) {
        INFO(c.args << " -> " << c.rc << ": " << c.out);
        if (c.objection == stale && c.what == "respond") {
          if (c.rc == 0) ++stale_ok;
          else {
            CHECK(c.rc == 1);
            CHECK(contains(c.out, "changed since you read it"));
            ++stale_409;
          }
          if (c.rc == 0) { ++accepted[c.objection]; ++accepted_total; }
          continue;
        }
        CHECK(c.rc == 0);  // nothing else may be refused: no lost update, no busy store
        if (c.rc != 0) continue;
        ++accepted_total;
        if (c.what == "file") {
          // The acknowledged filing is in the store, with its event.
          std::string title = live.db->text("SELECT title FROM objections WHERE id = " + c.objection);
          CHECK(contains(c.args, "--title " + title + " --"));
          CHECK(live.db->number("SELECT COUNT(*) FROM events WHERE action = 'objection.file' AND subject = 'objection/" + c.objection + "'") == 1);
          accepted[c.objection] += 0;
        } else {
          ++accepted[c.objection];
        }
      }
    CHECK(stale_ok == 1);
    CHECK(stale_409 == 3);
    // Every filing acknowledged is there under its title; versions went up by exactly the accepted updates.
    for (const auto& who : filers)
      for (int k = 0; k < 3; ++k)
        CHECK(live.db->number("SELECT COUNT(*) FROM objections WHERE title = 'c-" + who + "-" + std::to_string(k) + "'") == 1);
    for (const auto& entry : accepted) {
      const auto& [id, n] = entry;
      const std::string objection = entry.first;  // a copy: doctest's CAPTURE takes it in a lambda
      CAPTURE(objection);
      CHECK(live.db->number("SELECT version FROM objections WHERE id = " + id) == 1 + n);
      long long kept = live.db->number("SELECT (SELECT COUNT(*) FROM evidence WHERE objection_id = " + id +
                                       ") + (SELECT COUNT(*) FROM responses WHERE objection_id = " + id + ")");
      CHECK(kept == n);
      long long logged = live.db->number("SELECT COUNT(*) FROM events WHERE action IN ('evidence.add', 'response.add') AND subject = 'objection/" + id + "'");
      CHECK(logged == n);
    }
    CHECK(accepted[shared] == 4);
    CHECK(accepted[stale] == 1);
    CHECK(live.db->number("SELECT COUNT(*) FROM responses WHERE objection_id = " + stale) == 1);
    CHECK(accepted_total == 12 + 24 + 1 + 4 + 8);
    MESSAGE(accepted_total << " CLI writes accepted, " << stale_409 << " refused as stale");
    CHECK(live.db->events() - events_before == accepted_total);  // one event per acknowledged action, none for a refusal
    std::string out;
    CHECK(run_referee("review log --verify" + as("chair1"), &out) == 0);
    CHECK(run_referee("review log --verify --db " + live.f.path, &out) == 0);
  }

  TEST_CASE("kill -9 during objection and vote writes from several clients, then restart: every acknowledged write is kept") {
    std::unique_ptr<Live> live = std::make_unique<Live>(std::vector<std::string>{"--threads", "4"});
    const std::string x = std::to_string(live->file("under fire"));
    const int port = live->server->port;
    std::map<std::string, std::string> tokens = live->f.token;
    std::mutex mu;
    std::vector<std::pair<int, std::string>> acked;  // (client, unique text)
    std::atomic<int> refused{0};
    std::atomic<bool> go{true};
    std::vector<std::thread> clients;
    for (int i = 0; i < 4; ++i)
      clients.emplace_back([&, i] {
        httplib::Client c("127.0.0.1", port);
        c.set_connection_timeout(2);
        for (int n = 0; go; ++n) {
          std::string tag = std::to_string(i) + "-" + std::to_string(n), path, body, who;
          switch (i) {
            case 0: who = "goog"; path = "/api/v1/objections";
              body = R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"k-)" + tag + R"(","rule":"r"})"; break;
            case 1: who = "dell"; path = "/api/v1/objections/" + x + "/votes";
              body = R"({"vote":"uphold","remedy":"normalise","factor":)" + std::to_string(n + 1) + ".5}"; break;
            case 2: who = "goog"; path = "/api/v1/objections/" + x + "/evidence";
              body = R"({"evidence":[{"check":"k-)" + tag + R"("}]})"; break;
            default: who = "nv"; path = "/api/v1/objections/" + x + "/responses"; body = R"({"text":"k-)" + tag + R"("})";
          }
          if (i == 1) tag = std::to_string(n + 1) + ".5";  // a factor: 1 or more
          auto r = c.Post(path, {{"Authorization", "Bearer " + tokens.at(who)}}, body, "application/json");
          if (r && r->status == 201) {
            std::lock_guard<std::mutex> l(mu);
            acked.emplace_back(i, tag);
          } else if (r) {
            ++refused;  // any other answer while the server runs is a defect
          }
        }
      });
    for (int waited = 0; waited < 3000; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard<std::mutex> l(mu);
      if (acked.size() >= 80) break;
    }
    live->server->stop(SIGKILL);
    go = false;
    for (auto& t : clients) t.join();
    CHECK(refused == 0);
    REQUIRE(acked.size() >= 20);
    MESSAGE(acked.size() << " writes acknowledged before kill -9");
    std::string path = live->f.path;
    live->db.reset();
    // The store opens with every check (quick_check included) and keeps each acknowledged write.
    {
      std::string error;
      auto store = submissions::Store::open(path, &error);
      REQUIRE_MESSAGE(store, error);
      for (const auto& ack : acked) {
        const int client = ack.first;
        const std::string& tag = ack.second;
        static const char* query[] = {
            "SELECT 1 FROM objections WHERE title = 'k-' || ?1",
            "SELECT 1 FROM events WHERE action = 'vote.cast' AND instr(payload_json, '\"factor\":' || ?1) > 0",
            "SELECT 1 FROM evidence WHERE quoted = 'k-' || ?1",
            "SELECT 1 FROM responses WHERE text = 'k-' || ?1",
        };
        submissions::Stmt q(store->db(), query[client]);
        q.bind(1, tag);
        CHECK_MESSAGE(q.step(), "acknowledged write lost: client " << client << " " << tag);
      }
      auto chain = review::verify_events(*store, &error);
      CHECK_MESSAGE(chain.ok, chain.problem << error);
    }
    // Restarted on the same store, the server serves and takes writes; the log verifies through it.
    Serve again(path, {}, (live->f.dir.path / "serve2.err").string());
    httplib::Client c("127.0.0.1", again.port);
    auto more = c.Post("/api/v1/objections/" + x + "/responses", {{"Authorization", "Bearer " + tokens.at("nv")}},
                       R"({"text":"after the restart"})", "application/json");
    REQUIRE(more);
    CHECK(more->status == 201);
    std::string out;
    CHECK(run_referee("review log --verify --server " + again.url + " --token " + tokens.at("chair1"), &out) == 0);
    CHECK(contains(out, "intact"));
  }

  TEST_CASE("bad input on the objection routes: a 4xx with a JSON error, and nothing written") {
    Live live;
    const std::string id = std::to_string(live.file("the target"));
    const std::string obj = "/api/v1/objections", one = obj + "/" + id;
    const std::string good_file = R"("round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert"],"rule":"r")";
    auto nested = [](int depth) { return R"({"text":)" + std::string(depth, '[') + std::string(depth, ']') + "}"; };
    struct Bad {
      const char* what;
      std::string method, path, body, actor;
      int expect;  // 0: any 4xx
    };
    const std::vector<Bad> bad = {
        {"malformed JSON", "POST", obj, "{" + good_file + ",\"title\":", "goog", 400},
        {"not an object", "POST", obj, "[\"title\"]", "goog", 400},
        {"a 2 MiB body", "POST", obj, "{" + good_file + ",\"title\":\"" + std::string(2 << 20, 'x') + "\"}", "goog", 413},
        {"nested 40 deep", "POST", one + "/responses", nested(40), "nv", 400},
        {"nested 300000 deep", "POST", one + "/responses", nested(300000), "nv", 400},
        {"acting for another organisation", "POST", one + "/responses", R"({"text":"x","organisation":"NVIDIA"})", "goog", 400},
        {"voting as another organisation", "POST", one + "/votes", R"({"vote":"reject","organisation":"Google","by":"Google"})", "dell", 400},
        {"a field twice", "POST", one + "/responses", R"({"text":"a","text":"b"})", "nv", 400},
        {"a field twice in evidence", "POST", one + "/evidence", R"({"evidence":[{"check":"a","check":"b"}]})", "goog", 400},
        {"an unknown field", "POST", obj, "{" + good_file + ",\"title\":\"t\",\"colour\":\"red\"}", "goog", 400},
        {"an unknown field in evidence", "POST", one + "/evidence", R"({"evidence":[{"check":"c","colour":"red"}]})", "goog", 400},
        {"invalid UTF-8", "POST", obj, "{" + good_file + ",\"title\":\"bad \xff\xfe bytes\"}", "goog", 400},
        {"overlong UTF-8", "POST", one + "/responses", "{\"text\":\"\xc0\xaf\"}", "nv", 400},
        {"a lone surrogate escape", "POST", one + "/responses", R"({"text":"half \ud800 a pair"})", "nv", 400},
        {"a NUL escape in a title", "POST", obj, "{" + good_file + R"(,"title":"a\u0000b"})", "goog", 400},
        {"a NUL escape in evidence", "POST", one + "/evidence", R"({"evidence":[{"check":"x\u0000y"}]})", "goog", 400},
        {"a lone low surrogate", "POST", obj, "{" + good_file + R"(,"title":"\udc00"})", "goog", 400},
        {"results not an array", "POST", obj, R"({"round":"3.1.0","against":"NVIDIA","results":"NVIDIA/eos/bert","title":"t","rule":"r"})", "goog", 400},
        {"title a number", "POST", obj, "{" + good_file + ",\"title\":5}", "goog", 400},
        {"version a string", "POST", one + "/responses", R"({"text":"x","version":"1"})", "nv", 400},
        {"factor a string", "POST", one + "/responses", R"({"text":"x","remedy":"normalise","factor":"1.07"})", "nv", 400},
        {"factor NaN", "POST", one + "/responses", R"({"text":"x","remedy":"normalise","factor":NaN})", "nv", 400},
        {"factor Infinity", "POST", one + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":Infinity})", "dell", 400},
        {"a negative factor in a response", "POST", one + "/responses", R"({"text":"x","remedy":"normalise","factor":-1.07})", "nv", 0},
        {"a negative factor in a decision", "POST", one + "/decision", R"({"remedy":"normalise","factor":-1,"tie_break":"uphold"})", "chair1", 0},
        {"a zero factor in a vote", "POST", one + "/votes", R"({"vote":"uphold","remedy":"normalise","factor":0})", "dell", 0},
        {"an unknown vote", "POST", one + "/votes", R"({"vote":"maybe"})", "dell", 0},
        {"an unknown remedy", "POST", one + "/responses", R"({"text":"x","remedy":"shrug"})", "nv", 0},
        {"empty evidence", "POST", one + "/evidence", R"({"evidence":[]})", "goog", 0},
        {"SQL in the accused's name", "POST", obj, R"({"round":"3.1.0","against":"NVIDIA' OR '1'='1","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})", "goog", 0},
        {"SQL in a result", "POST", obj, R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/bert' OR 1=1 --"],"title":"t","rule":"r"})", "goog", 0},
        {"SQL in the round", "POST", obj, R"({"round":"3.1.0'; DELETE FROM events; --","against":"NVIDIA","results":["NVIDIA/eos/bert"],"title":"t","rule":"r"})", "goog", 404},
        {"SQL in a user name", "POST", "/api/v1/users", R"({"name":"o'brien; DROP TABLE users;--","organisation":"NVIDIA","role":"member"})", "admin1", 400},
        {"no title", "POST", obj, "{" + good_file + "}", "goog", 400},
        {"an empty title", "POST", obj, "{" + good_file + ",\"title\":\"\"}", "goog", 0},
        {"a forged token", "POST", obj, "{" + good_file + ",\"title\":\"t\"}", "forged", 401},
        {"a revoked token", "POST", one + "/responses", R"({"text":"x"})", "revoked", 401},
        {"no token", "POST", one + "/responses", R"({"text":"x"})", "", 401},
        {"a bad %-escape in the path", "POST", obj + "/%zz/responses", R"({"text":"x"})", "nv", 400},
        {"a cut %-escape in the path", "GET", obj + "/1%4", "", "nv", 400},
        {"an id that is not a number", "POST", obj + "/abc/responses", R"({"text":"x"})", "nv", 0},
        {"an id out of range", "POST", obj + "/99999999999999999999999/responses", R"({"text":"x"})", "nv", 0},
        {"a negative id", "POST", obj + "/-1/votes", R"({"vote":"uphold"})", "dell", 0},
        // one objection, one name: no spaces, signs, leading zeros or bytes after a %00
        {"an id with a NUL", "POST", one + "%00x/responses", R"({"text":"x"})", "nv", 404},
        {"an id after a space", "POST", obj + "/%20" + id + "/responses", R"({"text":"x"})", "nv", 404},
        {"an id with a sign", "POST", obj + "/+" + id + "/responses", R"({"text":"x"})", "nv", 404},
        {"an id with a leading zero", "POST", obj + "/0" + id + "/responses", R"({"text":"x"})", "nv", 404},
        {"a pairing id with a NUL", "PATCH", "/api/v1/pairings/1%00", R"({"status":"done"})", "chair1", 400},
        {"a pairing id with a sign", "PATCH", "/api/v1/pairings/+1", R"({"status":"done"})", "chair1", 400},
    };
    long long objections = live.db->number("SELECT COUNT(*) FROM objections");
    for (const auto& b : bad) {
      long long before = live.db->events();
      Answer r = live.call(b.actor, b.method, b.path, b.body);
      INFO(std::string(b.what) << ": " << r.status << " " << r.body.substr(0, 300));
      if (b.expect) CHECK(r.status == b.expect);
      CHECK(r.status >= 400);
      CHECK(r.status < 500);
      CHECK(contains(r.body, "\"error\":{\"status\":" + std::to_string(r.status)));
      CHECK(live.db->events() == before);
    }
    // Bearer headers that are empty or not bearer at all.
    for (const std::string& raw : {std::string(""), std::string("   "), std::string("rft_") + std::string(64, 'g'),
                                   std::string("Basic dXNlcjpwYXNz")}) {
      long long before = live.db->events();
      Answer r = live.call("", "POST", one + "/responses", R"({"text":"x"})", raw, true);
      CAPTURE(raw);
      CHECK(r.status == 401);
      CHECK(contains(r.body, "\"error\":{\"status\":401"));
      CHECK(live.db->events() == before);
    }
    // If-Match carries a version number and nothing else: a sign, a list, `*`, a weak tag or a number that
    // does not fit is a 400, not a 409 about a version nobody sent.
    for (const std::string& im : {std::string("abc"), std::string("-1"), std::string("+1"), std::string("99999999999999999999999"),
                                  std::string("*"), std::string("1, 2"), std::string("W/\"1\""), std::string("1x")}) {
      CAPTURE(im);
      long long before = live.db->events();
      Answer r = live.call("nv", "POST", one + "/responses", R"({"text":"x"})", "", false, im);
      CHECK(r.status == 400);
      CHECK(contains(r.body, "If-Match"));
      Answer s2 = live.call("chair1", "PUT", "/api/v1/rounds/3.1.0/schedule", R"({"objections_due":"2099-01-01"})", "", false, im);
      CHECK(s2.status == 400);
      CHECK(contains(s2.body, "If-Match"));
      CHECK(live.db->events() == before);
    }
    CHECK(live.call("nv", "POST", one + "/responses", R"({"text":"x"})", "", false, "\"7\"").status == 409);
    CHECK(live.db->number("SELECT COUNT(*) FROM objections") == objections);
    CHECK(live.db->number("SELECT version FROM objections WHERE id = " + id) == 1);
    // SQL metacharacters are text: stored verbatim, nothing else changed.
    std::map<std::string, long long> tables;
    for (const char* t : {"users", "tokens", "organisations", "results", "responses", "evidence", "votes", "decisions"})
      tables[t] = live.db->number(std::string("SELECT COUNT(*) FROM ") + t);
    const std::string title = R"(x'); DROP TABLE objections; -- \" OR 1=1; /* %_ */)";
    const std::string stored = "x'); DROP TABLE objections; -- \" OR 1=1; /* %_ */";
    long long before = live.db->events();
    Answer filed = live.call("goog", "POST", obj, "{" + good_file + ",\"title\":\"" + title + "\",\"text\":\"'; DELETE FROM events; --\"}");
    REQUIRE_MESSAGE(filed.status == 201, filed.body);
    std::string new_id = std::to_string(parse(filed.body).find("objection")->find("id")->i);
    CHECK(live.db->text("SELECT title FROM objections WHERE id = " + new_id) == stored);
    CHECK(live.db->text("SELECT text FROM objections WHERE id = " + new_id) == "'; DELETE FROM events; --");
    CHECK(parse(live.call("goog", "GET", obj + "/" + new_id).body).find("objection")->find("title")->s == stored);
    CHECK(live.db->events() == before + 1);
    CHECK(live.db->number("SELECT COUNT(*) FROM objections") == objections + 1);
    for (const auto& [t, n] : tables) {
      const std::string table = t;  // a copy: doctest's CAPTURE takes it in a lambda
      CAPTURE(table);
      CHECK(live.db->number("SELECT COUNT(*) FROM " + t) == n);
    }
    Answer answered = live.call("nv", "POST", one + "/responses", R"({"text":"Robert'); DROP TABLE responses;--"})");
    CHECK(answered.status == 201);
    CHECK(live.db->text("SELECT text FROM responses WHERE objection_id = " + id) == "Robert'); DROP TABLE responses;--");
    // The server is still up and the chain verifies.
    CHECK(contains(live.call("chair1", "GET", "/api/v1/log/verify").body, "\"ok\":true"));
  }

  TEST_CASE("no answer names a server path: the store's folder, the rule cache and the home folder are [server]") {
    TempDir cache{"referee-cache-"};
    EnvVar c("REFEREE_CACHE", cache.path.string());  // empty: an audit cannot load the consortium's rules
    Live live;
    const std::string store_dir = live.f.dir.path.string(), cache_dir = cache.path.string();
    Answer filed = live.call("goog", "POST", "/api/v1/objections",
                             R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"RCP",)"
                             R"("rule":"training_3.1.0/rcps: retinanet","text":"t"})");
    REQUIRE_MESSAGE(filed.status == 201, filed.body);
    const std::string x = std::to_string(parse(filed.body).find("objection")->find("id")->i);
    // The NVIDIA package lies in the store's folder; its log is quoted by file name.
    Answer ev = live.call("goog", "POST", "/api/v1/objections/" + x + "/evidence",
                          R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_0.txt","lines":"1-2"}]})");
    CHECK_MESSAGE(ev.status == 201, ev.body);
    // A log that is gone: the message names the result and the file, not where it was.
    std::filesystem::remove(live.f.logs / "results/eos/retinanet/result_0.txt");
    Answer gone = live.call("goog", "POST", "/api/v1/objections/" + x + "/evidence",
                            R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":"result_0.txt","lines":"1"}]})");
    CHECK(gone.status >= 400);
    CHECK_FALSE(contains(gone.body, store_dir));
    const std::vector<std::tuple<std::string, std::string, std::string, std::string>> asks = {
        {"goog", "POST", "/api/v1/audit", R"({"round":"3.1.0"})"},
        {"chair1", "POST", "/api/v1/audit", R"({"round":"3.1.0","organisation":"NVIDIA"})"},
        {"goog", "GET", "/api/v1/findings?round=3.1.0", ""},
        {"goog", "GET", "/api/v1/objections/" + x, ""},
        {"chair1", "GET", "/api/v1/log?round=3.1.0", ""},
        {"chair1", "GET", "/api/v1/log/verify", ""},
        {"nv", "GET", "/api/v1/query/results?round=training-3.1.0", ""},
        {"nv", "GET", "/api/v1/query/leaderboard?round=training-3.1.0&benchmark=retinanet", ""},
        {"nv", "GET", "/reports/rounds/training-3.1.0/retinanet.html", ""},
        {"admin1", "GET", "/api/v1/rounds/3.1.0", ""},
    };
    for (const auto& ask : asks) {
      const auto& [who, method, path, body] = ask;
      Answer a = live.call(who, method, path, body);
      const std::string where = method + " " + path + " as " + who + ": " + std::to_string(a.status) + " " + a.body.substr(0, 400);
      CAPTURE(where);
      CHECK_FALSE(contains(a.body, store_dir));
      CHECK_FALSE(contains(a.body, cache_dir));
      CHECK_FALSE(contains(a.body, REFEREE_SOURCE_DIR));
    }
  }
}

}  // namespace referee::testing
