// `referee serve` end to end: the real binary on 127.0.0.1 (a port it
// picks), a real store with the example package, the CLI as its client.
#include <doctest/doctest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mllog/json.h"
#include "review/api.h"
#include "review/events.h"
#include "reports/assets.h"
#include "reports/site.h"
#include "submissions/store.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/raw_http.h"
#include "tests/serve_process.h"
#include "tests/temp_dir.h"

namespace referee::testing {
namespace {

std::string token_hash(const std::string& token) { return review::token_hash(token); }

void exec_sql(const std::string& db, const std::string& sql) {
  std::string error;
  auto s = submissions::Store::open(db, &error);
  REQUIRE_MESSAGE(s, error);
  REQUIRE_MESSAGE(s->exec(sql.c_str(), &error), error);
}

// A user with a token, inserted as `referee user add` stores them (the
// token's BLAKE2b-256 hash only).
void add_user(const std::string& db, const std::string& name, const std::string& org, const std::string& role,
              const std::string& token) {
  std::string sql;
  if (!org.empty()) sql += "INSERT OR IGNORE INTO organisations(name) VALUES('" + org + "');";
  sql += "INSERT INTO users(name, organisation_id, role, created_at) VALUES('" + name + "', " +
         (org.empty() ? std::string("NULL") : "(SELECT id FROM organisations WHERE name = '" + org + "')") + ", '" + role +
         "', '2026-01-01T00:00:00Z');";
  sql += "INSERT INTO tokens(user_id, hash, prefix, created_at) VALUES((SELECT id FROM users WHERE name = '" + name +
         "'), '" + token_hash(token) + "', '" + token.substr(0, 4) + "', '2026-01-01T00:00:00Z');";
  exec_sql(db, sql);
}

// A store holding the example package (round mini-1.0.0) and three users:
// a member of ExampleOrg, a member of OtherOrg and a chair.
struct Fixture {
  TempDir dir{"referee-serve-"};
  std::string db = (dir.path / "store.db").string();
  Fixture() {
    std::string out;
    int rc = run_referee("import " + std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg --round mini-1.0.0 --db " + db, &out);
    REQUIRE_MESSAGE(rc == 0, out);
    add_user(db, "alice", "ExampleOrg", "member", "tok-alice-0123456789");
    add_user(db, "bob", "OtherOrg", "member", "tok-bob-0123456789");
    add_user(db, "carol", "", "chair", "tok-carol-0123456789");
  }
};

// Runs the referee binary; stdout and stderr apart.
struct Run {
  int rc = 0;
  std::string out, err;
};
Run run(const TempDir& dir, const std::string& args) {
  std::string errf = (dir.path / "cmd.err").string();
  Run r;
  std::string cmd = std::string(REFEREE_BINARY) + " " + args + " 2>" + errf;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_file(errf);
  return r;
}

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A page or data file without the time it was generated (the only part of a
// served page that differs from the static site's file).
std::string without_generated_at(const std::string& body) {
  static const std::regex generated("\"generated_at\" ?: ?\"[^\"]*\"");
  static const std::regex footer("generated [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(\\.[0-9]{3})?Z");
  return std::regex_replace(std::regex_replace(body, generated, "\"generated_at\":\"-\""), footer, "generated -");
}

// Every file of the static report made from `db` for a caller who sees what
// `visible` allows, with its data files (`--data-files`: served pages link them).
std::vector<reports::File> static_site(const std::string& db, const reports::Visible& visible) {
  std::string error;
  auto store = submissions::Store::open(db, &error, submissions::OpenMode::ReadOnly);
  REQUIRE_MESSAGE(store, error);
  reports::Options options;
  options.generated_at = "2026-01-01T00:00:00Z";
  options.data_files = true;
  std::vector<reports::File> files;
  REQUIRE_MESSAGE(reports::build_site(*store, options, visible, &files, &error), error);
  return files;
}

}  // namespace

TEST_SUITE("serve") {
  TEST_CASE("health, the API's description and unknown paths, anonymously") {
    Fixture f;
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto h = c.Get("/api/v1/health");
    REQUIRE(h);
    CHECK(h->status == 200);
    CHECK(contains(h->body, "\"status\":\"ok\""));
    auto y = c.Get("/api/v1/openapi.yaml");
    REQUIRE(y);
    CHECK(y->status == 200);
    CHECK(y->body.rfind("openapi: 3.0", 0) == 0);
    CHECK(contains(y->body, "/api/v1/query/{name}"));
    auto n = c.Get("/elsewhere");
    REQUIRE(n);
    CHECK(n->status == 404);
    CHECK(contains(n->body, "\"code\":\"not-found\""));
    auto m = c.Post("/api/v1/health", "{}", "application/json");
    REQUIRE(m);
    CHECK(m->status == 405);
    // One log line per request, without the token.
    auto q = c.Get("/api/v1/query/list?what=rounds", bearer("tok-alice-0123456789"));
    REQUIRE(q);
    CHECK(q->status == 200);
    CHECK(s.stop(SIGTERM) == 0);
    std::string log = read_file(s.err_file);
    CHECK(contains(log, "GET /api/v1/health 200"));
    CHECK(contains(log, "GET /api/v1/query/list 200"));
    CHECK(contains(log, " alice\n"));
    CHECK_FALSE(contains(log, "tok-alice"));
    CHECK(contains(log, "stopped (SIGTERM)"));
  }

  TEST_CASE("a Host name other than an address, localhost or --allow-host is refused with 421 before any route (DNS rebinding)") {
    Fixture f;
    Serve s(f.db, {"--allow-host", "Review.Example.org"}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    const std::string port = ":" + std::to_string(s.port);
    // A page of another site whose name now points here: the API, the pages and the sign-in all refuse it.
    httplib::Headers evil{{"Host", "evil.example" + port}, {"Origin", "http://evil.example" + port}};
    auto api = c.Get("/api/v1/query/list?what=rounds", evil);
    REQUIRE(api);
    CHECK(api->status == 421);
    CHECK(contains(api->body, "\"code\":\"misdirected\""));
    CHECK(contains(api->body, "--allow-host evil.example"));
    auto page = c.Get("/reports/", evil);
    REQUIRE(page);
    CHECK(page->status == 421);
    CHECK(contains(page->get_header_value("Content-Type"), "text/html"));
    auto login = c.Post("/reports/login", evil, "token=tok-alice-0123456789", "application/x-www-form-urlencoded");
    REQUIRE(login);
    CHECK(login->status == 421);
    CHECK_FALSE(login->has_header("Set-Cookie"));
    auto health = c.Get("/api/v1/health", httplib::Headers{{"Host", "127.0.0.1.nip.io" + port}});
    REQUIRE(health);
    CHECK(health->status == 421);
    auto bad = c.Get("/api/v1/health", httplib::Headers{{"Host", "host:80x"}});
    REQUIRE(bad);
    CHECK(bad->status == 421);
    // Addresses, localhost and the allowed name (any case, a trailing dot) are answered.
    for (const std::string& host : std::vector<std::string>{"127.0.0.1" + port, "localhost" + port, "LOCALHOST", "[::1]" + port, "review.example.org" + port,
                                   "REVIEW.example.ORG." + port}) {
      auto ok = c.Get("/api/v1/health", httplib::Headers{{"Host", host}});
      REQUIRE(ok);
      CHECK_MESSAGE(ok->status == 200, host);
    }
    // Raw requests: Host twice, HTTP/1.1 without Host, an absolute-form target: 400.
    auto raw = [&](const std::string& head) {
      bool closed = false;
      return exchange(s.port, head + "Connection: close\r\n\r\n", 3000, &closed);
    };
    CHECK(raw("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n").rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw("GET /api/v1/health HTTP/1.1\r\n").rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw("GET http://evil.example/api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n").rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw("GET /api/v1/health HTTP/1.0\r\n").rfind("HTTP/1.1 200", 0) == 0);  // HTTP/1.0 may leave Host out
    CHECK(s.stop(SIGTERM) == 0);
    // A value that is no host name is refused at start.
    TempDir dir;
    auto r = run(dir, "serve --db " + f.db + " --listen 127.0.0.1:0 --allow-host 'a b'");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "--allow-host a b: not a host name"));
  }

  TEST_CASE("questions need a known token: none, forged and revoked ones get 401") {
    Fixture f;
    exec_sql(f.db, "UPDATE tokens SET revoked_at = '2026-01-02T00:00:00Z' WHERE prefix = 'tok-' AND user_id = "
                   "(SELECT id FROM users WHERE name = 'carol')");
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    for (const auto& token : {std::string(), std::string("tok-alice-forged"), std::string("tok-carol-0123456789")}) {
      CAPTURE(token);
      auto r = token.empty() ? c.Get("/api/v1/query/list?what=rounds") : c.Get("/api/v1/query/list?what=rounds", bearer(token));
      REQUIRE(r);
      CHECK(r->status == 401);
      CHECK(contains(r->body, "\"status\":401"));
    }
    auto ok = c.Get("/api/v1/query/list?what=rounds", bearer("tok-alice-0123456789"));
    REQUIRE(ok);
    CHECK(ok->status == 200);
    CHECK(contains(ok->body, "mini-1.0.0"));
    // The CLI: no token, exit 2 with the server's message.
    auto cli = run(f.dir, "list rounds --server " + s.url);
    CHECK(cli.rc == 2);
    CHECK(contains(cli.err, "referee list: this request needs a token"));
  }

  TEST_CASE("every question through the server prints what it prints on the store") {
    Fixture f;
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    const std::vector<std::string> questions = {
        "list rounds",
        "list systems",
        "list benchmarks --json",
        "list submitters --round mini_1.0.0",
        "leaderboard --round mini-1.0.0 --benchmark minilm",
        "leaderboard --round mini_1.0.0 --benchmark MINICLF --division closed --json",
        "leaderboard --round mini-1.0.0 --benchmark minilm --rescale",
        "compare --round mini-1.0.0 --benchmark minilm ExampleOrg/cpu_2x_example cpu_2x_example",
        "scaling --round mini-1.0.0 --benchmark minilm --submitter ExampleOrg",
        "scaling --round mini-1.0.0 --benchmark minilm --submitter ExampleOrg --json",
        "speedup --from mini-1.0.0 --to mini-1.0.0 --benchmark minilm",
        "leaderboard --round mini-1.0.0 --benchmark nosuchbench",
        "leaderboard --round mini-1.0.0 --benchmark b\xc3\xa9nch\\\"\\\\",  // UTF-8, a quote, a backslash
        // CSV, accelerator-hours and cost, the chain across rounds
        "list rounds --csv",
        "list systems --round mini-1.0.0 --csv",
        "leaderboard --round mini-1.0.0 --benchmark minilm --csv",
        "leaderboard --round mini-1.0.0 --benchmark minilm --price-per-node-month 37000",
        "leaderboard --round mini-1.0.0 --benchmark minilm --price-per-accelerator-hour 2.5 --json",
        "compare --round mini-1.0.0 --benchmark minilm ExampleOrg/cpu_2x_example cpu_2x_example --csv",
        "scaling --round mini-1.0.0 --benchmark minilm --submitter ExampleOrg --csv",
        "speedup --from mini-1.0.0 --to mini-1.0.0 --benchmark minilm --csv",
        "speedup --all-rounds",
        "speedup --all-rounds --benchmark minilm --csv --price-per-accelerator-hour 3",
        "speedup --all-rounds --json --overall",
        "leaderboard --round mini-1.0.0 --benchmark minilm --price-per-node-month 0",
        "leaderboard --round mini-1.0.0 --benchmark minilm --csv --json",
    };
    for (const auto& q : questions) {
      CAPTURE(q);
      auto local = run(f.dir, q + " --db " + f.db);
      auto remote = run(f.dir, q + " --server " + s.url + " --token tok-bob-0123456789");
      CHECK(remote.rc == local.rc);
      CHECK(remote.out == local.out);
      CHECK(remote.err == local.err);  // failures too: the same message, from the same code
    }
    // The environment names the server and the token too.
    EnvVar server("REFEREE_SERVER", s.url), token("REFEREE_TOKEN", "tok-bob-0123456789");
    auto local = run(f.dir, "leaderboard --round mini-1.0.0 --benchmark minilm --db " + f.db);
    auto remote = run(f.dir, "leaderboard --round mini-1.0.0 --benchmark minilm");
    CHECK(remote.rc == 0);
    CHECK(remote.out == local.out);
    // Bad parameters are a 400 naming them.
    httplib::Client c("127.0.0.1", s.port);
    auto bad = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm&colour=red", bearer("tok-bob-0123456789"));
    REQUIRE(bad);
    CHECK(bad->status == 400);
    CHECK(contains(bad->body, "unknown parameter 'colour'"));
    auto missing = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0", bearer("tok-bob-0123456789"));
    REQUIRE(missing);
    CHECK(missing->status == 400);
    CHECK(contains(missing->body, "benchmark"));
    auto unknown = c.Get("/api/v1/query/ranking", bearer("tok-bob-0123456789"));
    REQUIRE(unknown);
    CHECK(unknown->status == 404);
    // format=csv: text/csv, the bytes the command prints; other formats are refused.
    auto csv = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm&format=csv&price-per-node-month=37000",
                     bearer("tok-bob-0123456789"));
    REQUIRE(csv);
    CHECK(csv->status == 200);
    CHECK(csv->get_header_value("Content-Type") == "text/csv; charset=utf-8");
    auto local_csv = run(f.dir, "leaderboard --round mini-1.0.0 --benchmark minilm --csv --price-per-node-month 37000 --db " + f.db);
    CHECK(csv->body == local_csv.out);
    CHECK(contains(csv->body, ",cost,"));
    CHECK(contains(csv->body, "\r\n"));
    auto no_pair = c.Get("/api/v1/query/speedup?benchmark=minilm", bearer("tok-bob-0123456789"));
    REQUIRE(no_pair);
    CHECK(no_pair->status == 400);
    CHECK(contains(no_pair->body, "or ask for --all-rounds"));
    auto xml = c.Get("/api/v1/query/list?what=rounds&format=xml", bearer("tok-bob-0123456789"));
    REQUIRE(xml);
    CHECK(xml->status == 400);
    CHECK(contains(xml->body, "choose text, json or csv"));
    auto price = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm&price-per-node-month=-3",
                       bearer("tok-bob-0123456789"));
    REQUIRE(price);
    CHECK(price->status == 400);
    CHECK(contains(price->body, "is not a number greater than 0"));
  }

  TEST_CASE("review commands go through the server (call_api over HTTP) and print what they print locally") {
    Fixture f;
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    auto set = run(f.dir, "round schedule mini-1.0.0 --objections-due 2030-01-10 --server " + s.url + " --token tok-carol-0123456789");
    CHECK_MESSAGE(set.rc == 0, set.err);
    auto remote = run(f.dir, "round show mini-1.0.0 --server " + s.url + " --token tok-carol-0123456789");
    auto local = run(f.dir, "round show mini-1.0.0 --db " + f.db + " --token tok-carol-0123456789");
    CHECK(remote.rc == 0);
    CHECK(remote.out == local.out);
    CHECK(contains(remote.out, "2030-01-10"));
    // Refused by policy through the server as locally: a member may not set a schedule (exit 1).
    auto member = run(f.dir, "round schedule mini-1.0.0 --objections-due 2030-01-11 --server " + s.url + " --token tok-bob-0123456789");
    auto member_local = run(f.dir, "round schedule mini-1.0.0 --objections-due 2030-01-11 --db " + f.db + " --token tok-bob-0123456789");
    CHECK(member.rc == member_local.rc);
    CHECK(member.rc == 1);
    CHECK(member.err == member_local.err);
    // With $REFEREE_SERVER set, an explicit --db is the local store: a write goes there, not to the server.
    {
      std::string copy = (f.dir.path / "copy.db").string();
      std::filesystem::copy_file(f.db, copy);
      EnvVar server("REFEREE_SERVER", s.url), token("REFEREE_TOKEN", "tok-carol-0123456789");
      auto moved = run(f.dir, "round schedule mini-1.0.0 --objections-due 2030-02-20 --db " + copy);
      CHECK_MESSAGE(moved.rc == 0, moved.err);
      CHECK(contains(run(f.dir, "round show mini-1.0.0 --db " + copy).out, "2030-02-20"));
      CHECK_FALSE(contains(run(f.dir, "round show mini-1.0.0").out, "2030-02-20"));  // the server's store kept its date
    }
    CHECK(s.stop(SIGTERM) == 0);
    CHECK(contains(read_file(s.err_file), "PUT /api/v1/rounds/mini-1.0.0/schedule 200"));
  }

  TEST_CASE("UTF-8 text through the server: a title typed on the CLI comes back as typed, in JSON and in errors") {
    Fixture f;
    // OtherOrg submitted to the round too, so bob may see it under review and object.
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds WHERE name = 'mini-1.0.0';"
                   "INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256, "
                   "referee_version, imported_at) SELECT r.id, o.id, '/nowhere', 'h', 'pass', 'r', 'v', 't' "
                   "FROM rounds r, organisations o WHERE r.name = 'mini-1.0.0' AND o.name = 'OtherOrg'");
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    const std::string title = "\xc3\x9c" "berpr\xc3\xbc" "fung \xc3\xa9";  // Überprüfung é
    const std::string text = "\xce\xbc \xe2\x80\x94 \xe2\x9c\x93";         // μ — ✓
    const std::string bob = " --token tok-bob-0123456789";
    auto filed = run(f.dir, "objection file --round mini-1.0.0 --against ExampleOrg --result ExampleOrg/cpu_2x_example/minilm "
                            "--title '" + title + "' --text '" + text + "' --rule r --json --server " + s.url + bob);
    REQUIRE_MESSAGE(filed.rc == 0, filed.err);
    CHECK(contains(filed.out, "\"title\":\"" + title + "\""));
    mllog::Json j;
    std::string error;
    REQUIRE_MESSAGE(mllog::parse_json_permissive(filed.out, &j, &error), error);
    CHECK(j.find("objection")->find("title")->s == title);
    CHECK(j.find("objection")->find("text")->s == text);
    std::string id = std::to_string(j.find("objection")->find("id")->i);
    // The server's bytes, and the same answer as on the store.
    httplib::Client c("127.0.0.1", s.port);
    auto got = c.Get("/api/v1/objections/" + id, bearer("tok-bob-0123456789"));
    REQUIRE(got);
    CHECK(got->status == 200);
    CHECK(contains(got->body, "\"title\":\"" + title + "\""));
    auto remote = run(f.dir, "objection show " + id + " --json --server " + s.url + bob);
    auto local = run(f.dir, "objection show " + id + " --json --db " + f.db + bob);
    CHECK(remote.rc == 0);
    CHECK(remote.out == local.out);
    auto shown = run(f.dir, "objection show " + id + " --server " + s.url + bob);
    CHECK(contains(shown.out, title));
    CHECK(contains(shown.out, text));
    // An error message that quotes what was typed.
    const std::string org = "Gr\xc3\xb6\xc3\x9f" "e AG";  // Größe AG
    auto refused = run(f.dir, "objection file --round mini-1.0.0 --against '" + org + "' --result ExampleOrg/cpu_2x_example/minilm "
                              "--title t --rule r --server " + s.url + bob);
    CHECK(refused.rc == 2);  // an unknown name: 404, exit 2
    CHECK(contains(refused.err, "organisation " + org + " did not submit to mini-1.0.0"));
    auto raw = c.Post("/api/v1/objections", bearer("tok-bob-0123456789"),
                      R"({"round":"mini-1.0.0","against":")" + org + R"(","results":["x/y/z"],"title":"t","rule":"r"})",
                      "application/json");
    REQUIRE(raw);
    CHECK(raw->status == 404);
    CHECK(contains(raw->body, "organisation " + org + " did not submit"));
    CHECK(s.stop(SIGTERM) == 0);
  }

  TEST_CASE("a round under embargo is unknown to a member of another organisation") {
    Fixture f;
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds WHERE name = 'mini-1.0.0'");
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto ask = [&](const std::string& round, const std::string& token) {
      auto r = c.Get("/api/v1/query/leaderboard?round=" + round + "&benchmark=minilm", bearer(token));
      REQUIRE(r);
      return *r;
    };
    // Each 404 is sent no sooner than 4 ms after its request: a hidden round's extra lookup does not show in the time.
    auto t0 = std::chrono::steady_clock::now();
    auto hidden = ask("mini-1.0.0", "tok-bob-0123456789");
    auto t1 = std::chrono::steady_clock::now();
    auto absent = ask("mini-9.9.9", "tok-bob-0123456789");
    auto t2 = std::chrono::steady_clock::now();
    CHECK(t1 - t0 >= std::chrono::milliseconds(4));
    CHECK(t2 - t1 >= std::chrono::milliseconds(4));
    // The log's answers as well (a hidden objection's events: an empty list, read and left out first).
    auto t3 = std::chrono::steady_clock::now();
    auto log = c.Get("/api/v1/log?subject=objection/1", bearer("tok-bob-0123456789"));
    REQUIRE(log);
    CHECK(log->status == 200);
    CHECK(std::chrono::steady_clock::now() - t3 >= std::chrono::milliseconds(4));
    CHECK(hidden.status == 404);
    CHECK(absent.status == 404);
    std::string hidden_body = hidden.body;
    hidden_body.replace(hidden_body.find("mini-1.0.0"), 10, "mini-9.9.9");
    CHECK(hidden_body == absent.body);  // the same answer as for a round that does not exist
    CHECK(ask("mini-1.0.0", "tok-alice-0123456789").status == 200);  // a submitter of the round
    CHECK(ask("mini-1.0.0", "tok-carol-0123456789").status == 200);  // a chair
    // Lists leave the round out, totals across rounds too (as if the store did not hold it).
    auto rounds = run(f.dir, "list rounds --server " + s.url + " --token tok-bob-0123456789");
    CHECK(rounds.rc == 0);
    CHECK_FALSE(contains(rounds.out, "mini-1.0.0"));
    auto systems = run(f.dir, "list systems --json --server " + s.url + " --token tok-bob-0123456789");
    CHECK(systems.rc == 0);
    CHECK_FALSE(contains(systems.out, "cpu_2x_example"));
    auto seen = run(f.dir, "list systems --server " + s.url + " --token tok-alice-0123456789");
    CHECK(contains(seen.out, "cpu_2x_example"));
    for (const std::string what : {"benchmarks", "submitters"}) {
      auto totals = c.Get("/api/v1/query/list?what=" + what + "&format=json", bearer("tok-bob-0123456789"));
      REQUIRE(totals);
      CHECK(totals->status == 200);
      CHECK(totals->body == "{\n \"schema\": \"referee.list/1\",\n \"what\": \"" + what + "\",\n \"" + what + "\": []\n}\n");
      auto own = c.Get("/api/v1/query/list?what=" + what + "&format=json", bearer("tok-alice-0123456789"));
      REQUIRE(own);
      CHECK(own->status == 200);
      CHECK(contains(own->body, "mini-1.0.0"));
    }
    auto speed = c.Get("/api/v1/query/speedup?from=mini-1.0.0&to=mini-1.0.0&benchmark=minilm", bearer("tok-bob-0123456789"));
    REQUIRE(speed);
    CHECK(speed->status == 404);
    // The chain across rounds leaves out the rounds the caller may not see.
    auto chain = c.Get("/api/v1/query/speedup?all-rounds=true&format=json", bearer("tok-bob-0123456789"));
    REQUIRE(chain);
    CHECK(chain->status == 404);  // nothing to compare
    CHECK_FALSE(contains(chain->body, "mini-1.0.0"));
    CHECK_FALSE(contains(chain->body, "minilm"));
    auto named = c.Get("/api/v1/query/speedup?all-rounds=true&benchmark=minilm", bearer("tok-bob-0123456789"));
    REQUIRE(named);
    CHECK(named->status == 404);
    CHECK_FALSE(contains(named->body, "mini-1.0.0"));
    auto typo = c.Get("/api/v1/query/speedup?all-rounds=true&benchmark=minilx", bearer("tok-bob-0123456789"));
    REQUIRE(typo);
    CHECK(typo->status == 404);
    std::string named_body = named->body;
    named_body.replace(named_body.find("minilm"), 6, "minilx");
    CHECK(typo->body == named_body);  // no list of names that would show the hidden round's
    CHECK_FALSE(contains(typo->body, "miniclf"));
    auto seen_chain = c.Get("/api/v1/query/speedup?all-rounds=true", bearer("tok-alice-0123456789"));
    REQUIRE(seen_chain);
    CHECK(contains(seen_chain->body, "minilm: only in mini-1.0.0"));
  }

  TEST_CASE("report assets go out compressed at build time (brotli, else gzip), each form with its own tag; pages' tags follow the store") {
    Fixture f;
    Serve s(f.db, {"--public"}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    c.set_decompress(false);  // the bytes as sent
    const reports::Asset* vega = nullptr;
    for (const auto& a : reports::assets())
      if (a.path == "assets/vega.min.js") vega = &a;
    REQUIRE(vega != nullptr);
    REQUIRE_FALSE(vega->brotli.empty());
    REQUIRE_FALSE(vega->gzip.empty());
    CHECK(vega->brotli.size() < vega->gzip.size());
    CHECK(vega->gzip.size() < vega->bytes.size() / 2);
    struct Case {
      const char* accept;
      const char* coding;  // "" = as it is
    };
    std::set<std::string> tags;
    for (const Case& k : {Case{"br, gzip", "br"}, Case{"gzip, deflate, br", "br"}, Case{"gzip", "gzip"},
                          Case{"br;q=0, gzip", "gzip"}, Case{"br; q=0.000, gzip;q=0.5", "gzip"}, Case{"identity", ""},
                          Case{"gzip;q=0", ""}, Case{"deflate", ""}, Case{"*", "br"}, Case{"br;q=0.5, gzip;q=1", "gzip"},
                          Case{"br;q=0;foo=1, gzip", "gzip"}, Case{"br;q=-1, gzip", "gzip"}, Case{"br;q=abc", ""},
                          Case{"br;q=", ""}, Case{"*;q=0.1, br;q=0", "gzip"}}) {
      const std::string accept = k.accept;
      CAPTURE(accept);
      httplib::Headers h{{"Accept-Encoding", accept}};
      auto r = c.Get("/reports/assets/vega.min.js", h);
      REQUIRE(r);
      CHECK(r->status == 200);
      CHECK(r->get_header_value("Content-Encoding") == k.coding);
      CHECK(r->get_header_value("Vary").find("Accept-Encoding") != std::string::npos);
      const std::string_view want = std::string(k.coding) == "br" ? vega->brotli : std::string(k.coding) == "gzip" ? vega->gzip : vega->bytes;
      CHECK(r->body.size() == want.size());
      CHECK(r->body == want);  // the build's bytes, not compressed again
      const std::string tag = r->get_header_value("ETag");
      tags.insert(tag);
      auto again = c.Get("/reports/assets/vega.min.js", [&] {
        httplib::Headers h2 = h;
        h2.emplace("If-None-Match", tag);
        return h2;
      }());
      REQUIRE(again);
      CHECK(again->status == 304);
      CHECK(again->body.empty());
    }
    CHECK(tags.size() == 3);  // one tag per form: as it is, gzip, brotli
    // Accept-Encoding sent twice is one list: brotli refused in the first, gzip taken in the second.
    {
      std::string raw = "GET /reports/assets/vega.min.js HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: br;q=0\r\n"
                        "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n";
      bool closed = false;
      const std::string answer = referee::testing::exchange(s.port, raw, 5000, &closed);
      CHECK(contains(answer, "Content-Encoding: gzip\r\n"));
    }
    // The build's forms decode to the asset itself.
    {
      httplib::Client dc("127.0.0.1", s.port);  // decompresses
      for (const char* coding : {"br", "gzip"}) {
        auto r = dc.Get("/reports/assets/vega.min.js", httplib::Headers{{"Accept-Encoding", coding}});
        REQUIRE(r);
        CHECK(r->body == vega->bytes);
      }
    }
    // A Range header is not answered with a slice (a cache could keep it as the whole immutable asset).
    auto ranged = c.Get("/reports/assets/vega.min.js?v=" + reports::asset_version("assets/vega.min.js"),
                        httplib::Headers{{"Range", "bytes=0-20"}, {"Accept-Encoding", "identity"}});
    REQUIRE(ranged);
    CHECK(ranged->status == 200);
    CHECK_FALSE(ranged->has_header("Content-Range"));
    CHECK(ranged->body.size() == vega->bytes.size());
    // Pages: compressed by the transport in the coding the weights choose, saying that they vary by it.
    for (const Case& k : {Case{"gzip", "gzip"}, Case{"gzip;q=0", ""}, Case{"br;q=0, gzip;q=0.5", "gzip"}, Case{"identity", ""}}) {
      const std::string accept = k.accept;
      CAPTURE(accept);
      auto r = c.Get("/reports/index.html", httplib::Headers{{"Accept-Encoding", accept}});
      REQUIRE(r);
      CHECK(r->get_header_value("Content-Encoding") == k.coding);
      CHECK(r->get_header_value("Vary").find("Accept-Encoding") != std::string::npos);
      const std::string etag = r->get_header_value("ETag");
      CHECK(etag.rfind("W/\"", 0) == 0);
      CHECK((etag.find("-gzip") != std::string::npos) == (std::string(k.coding) == "gzip"));
    }
    // A page's tag is of what it shows: the same on two requests a second apart, another once the store changed.
    auto first = c.Get("/reports/index.html");
    REQUIRE(first);
    const std::string tag = first->get_header_value("ETag");
    REQUIRE(tag.rfind("W/\"", 0) == 0);
    // If-None-Match is a list, compared weakly; "*" matches any.
    for (const std::string& header : {tag, "\"0123\", " + tag, tag.substr(2), std::string("*")}) {
      CAPTURE(header);
      auto r = c.Get("/reports/index.html", httplib::Headers{{"If-None-Match", header}});
      REQUIRE(r);
      CHECK(r->status == 304);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    auto second = c.Get("/reports/index.html", httplib::Headers{{"If-None-Match", tag}});
    REQUIRE(second);
    CHECK(second->status == 304);
    {
      std::string e;
      auto store = submissions::Store::open(f.db, &e);
      REQUIRE_MESSAGE(store, e);
      REQUIRE_MESSAGE(store->exec("UPDATE results SET score_minutes = score_minutes * 2", &e), e);
    }
    auto third = c.Get("/reports/index.html", httplib::Headers{{"If-None-Match", tag}});
    REQUIRE(third);
    CHECK(third->status == 200);
    CHECK(third->get_header_value("ETag") != tag);
  }

  TEST_CASE("report pages of a published round: the static site's files, anonymously with --public") {
    Fixture f;
    auto files = static_site(f.db, nullptr);
    Serve s(f.db, {"--public"}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    for (const char* home : {"/reports", "/reports/"}) {
      auto r = c.Get(home);
      REQUIRE(r);
      CHECK(r->status == 302);
      CHECK(r->get_header_value("Location") == "/reports/index.html");
    }
    int pages = 0, csv = 0, json = 0;
    for (const auto& file : files) {
      CAPTURE(file.path);
      auto r = c.Get("/reports/" + file.path);
      REQUIRE(r);
      CHECK(r->status == 200);
      CHECK(r->get_header_value("Content-Type").rfind(file.content_type.substr(0, file.content_type.find(';')), 0) == 0);
      CHECK(r->get_header_value("Cache-Control") != "no-store");
      CHECK(without_generated_at(r->body) == without_generated_at(file.body));  // byte for byte, but the time
      pages += file.path.size() > 5 && file.path.substr(file.path.size() - 5) == ".html";
      if (file.path.rfind("data/", 0) == 0 && file.path.size() > 4 && file.path.substr(file.path.size() - 4) == ".csv") {
        ++csv;
        CHECK(r->get_header_value("Content-Type").rfind("text/csv", 0) == 0);
      }
      json += file.path.rfind("data/", 0) == 0 && file.path.substr(file.path.size() - 5) == ".json";
      // An asset carries a tag; asked again with it, the answer is a 304 without the bytes.
      if (file.path.rfind("assets/", 0) == 0) {
        const std::string tag = r->get_header_value("ETag");
        CHECK(tag.size() == 34);
        auto again = c.Get("/reports/" + file.path, httplib::Headers{{"If-None-Match", tag}});
        REQUIRE(again);
        CHECK(again->status == 304);
        CHECK(again->body.empty());
        auto other = c.Get("/reports/" + file.path, httplib::Headers{{"If-None-Match", "\"0123\""}});
        REQUIRE(other);
        CHECK(other->status == 200);
        CHECK(other->body == r->body);
      } else {
        // A page or data file of a published round carries a tag of what it shows (not of the time it
        // was made): asked again with it, a 304 without the bytes.
        const std::string tag = r->get_header_value("ETag");
        CHECK(tag.rfind("W/\"", 0) == 0);  // weak: the bytes differ by the time they were made
        auto again = c.Get("/reports/" + file.path, httplib::Headers{{"If-None-Match", tag}});
        REQUIRE(again);
        CHECK(again->status == 304);
        CHECK(again->body.empty());
      }
    }
    CHECK(pages >= 4);
    CHECK(csv >= 1);
    CHECK(json >= 1);
    auto lb = c.Get("/reports/rounds/mini-1.0.0/minilm.html");
    REQUIRE(lb);
    CHECK(lb->status == 200);
    CHECK(lb->get_header_value("Content-Type") == "text/html; charset=utf-8");
    CHECK(contains(lb->body, "id=\"referee-page\""));
    // Paths outside the site are no page: 404, as for a page that does not exist.
    auto absent = c.Get("/reports/rounds/mini-1.0.0/nosuchbench.html");
    REQUIRE(absent);
    CHECK(absent->status == 404);
    for (const char* path : {"/reports/rounds/../index.html", "/reports/../api/v1/health", "/reports/%2e%2e/api/v1/health",
                             "/reports/rounds/mini-1.0.0/..%2F..%2Findex.html", "/reports/assets/..", "/reports//index.html"}) {
      CAPTURE(path);
      auto r = c.Get(path);
      REQUIRE(r);
      CHECK(r->status == 404);
      CHECK(r->get_header_value("Content-Type") == "text/html; charset=utf-8");
    }
    // Only GET and HEAD (and POST to the sign-in); any other method is a 405 page, as every error under /reports.
    auto is_405_page = [](const httplib::Result& r, const char* allow) {
      REQUIRE(r);
      CHECK(r->status == 405);
      CHECK(r->get_header_value("Allow") == allow);
      CHECK(r->get_header_value("Content-Type") == "text/html; charset=utf-8");
      CHECK(contains(r->body, "<!doctype html>"));
      CHECK_FALSE(contains(r->body, "\"error\""));
    };
    is_405_page(c.Post("/reports/index.html", "x", "text/plain"), "GET, HEAD");
    is_405_page(c.Put("/reports/index.html", "x", "text/plain"), "GET, HEAD");
    is_405_page(c.Patch("/reports/index.html", "x", "text/plain"), "GET, HEAD");
    is_405_page(c.Delete("/reports/index.html"), "GET, HEAD");
    is_405_page(c.Options("/reports/index.html"), "GET, HEAD");
    is_405_page(c.Put("/reports/login", "x", "text/plain"), "GET, HEAD, POST");
    {
      auto head = c.Head("/reports/index.html");
      REQUIRE(head);
      CHECK(head->status == 200);
      auto login = c.Head("/reports/login");
      REQUIRE(login);
      CHECK(login->status == 200);
    }
    // A POST without a body (no Content-Length), which the server refuses before routing: a 405 page too.
    {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(s.port));
      REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      std::string req = "POST /reports/index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
      REQUIRE(::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));
      std::string answer;
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(n));
      close(fd);
      CHECK(answer.rfind("HTTP/1.1 405", 0) == 0);
      CHECK(contains(answer, "Allow: GET, HEAD"));
      CHECK(contains(answer, "text/html"));
    }
    // A head-to-head by query naming a result its round lacks says which.
    {
      auto r = c.Get("/reports/compare.html?round=mini-1.0.0&benchmark=minilm&result=987654&result=987653");
      REQUIRE(r);
      CHECK(r->status == 404);
      CHECK(contains(r->body, "result 987654 is not a minilm result of mini-1.0.0"));
    }
    CHECK(s.stop(SIGTERM) == 0);
    CHECK(contains(read_file(s.err_file), "GET /reports/rounds/mini-1.0.0/minilm.html 200"));
  }

  TEST_CASE("report pages of a round under embargo: 404 to others as an absent round, 200 to its submitter by token or cookie") {
    Fixture f;
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds WHERE name = 'mini-1.0.0'");
    auto files = static_site(f.db, nullptr);
    const reports::File* page = nullptr;
    for (const auto& file : files)
      if (file.path == "rounds/mini-1.0.0/minilm.html") page = &file;
    REQUIRE(page);
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto get = [&](const std::string& path, const httplib::Headers& h) {
      auto r = c.Get(path, h);
      REQUIRE(r);
      return *r;
    };
    // Another organisation's member: the round does not exist for them.
    auto hidden = get("/reports/rounds/mini-1.0.0/minilm.html", bearer("tok-bob-0123456789"));
    auto absent = get("/reports/rounds/mini-9.9.9/minilm.html", bearer("tok-bob-0123456789"));
    CHECK(hidden.status == 404);
    CHECK(absent.status == 404);
    std::string hidden_body = hidden.body;
    hidden_body.replace(hidden_body.find("mini-1.0.0"), 10, "mini-9.9.9");
    CHECK(hidden_body == absent.body);
    CHECK(get("/reports/rounds/mini-1.0.0/index.html", bearer("tok-bob-0123456789")).status == 404);
    // A head-to-head by query in the hidden round names nothing of it.
    auto cmp = get("/reports/compare.html?round=mini-1.0.0&benchmark=minilm&result=987654&result=987653",
                   bearer("tok-bob-0123456789"));
    CHECK(cmp.status == 404);
    CHECK_FALSE(contains(cmp.body, "987654"));
    CHECK_FALSE(contains(cmp.body, "minilm"));
    auto index = get("/reports/index.html", bearer("tok-bob-0123456789"));
    CHECK(index.status == 200);
    CHECK_FALSE(contains(index.body, "mini-1.0.0"));
    // Its submitter, by token: the static site's page, never cached.
    auto seen = get("/reports/rounds/mini-1.0.0/minilm.html", bearer("tok-alice-0123456789"));
    CHECK(seen.status == 200);
    CHECK(seen.get_header_value("Cache-Control") == "no-store");
    CHECK(without_generated_at(seen.body) == without_generated_at(page->body));
    CHECK(contains(seen.body, "Under review, not for publication:</strong> mini-1.0.0 (state review)"));
    CHECK(get("/reports/index.html", bearer("tok-alice-0123456789")).get_header_value("Cache-Control") == "no-store");
    CHECK(get("/reports/rounds/mini-1.0.0/minilm.html", bearer("tok-carol-0123456789")).status == 200);  // a chair
    // No token, or a bad one: 401 with the sign-in form.
    for (const auto& h : {httplib::Headers{}, bearer("tok-alice-forged"), httplib::Headers{{"Cookie", "referee_token=forged"}}}) {
      auto r = get("/reports/rounds/mini-1.0.0/minilm.html", h);
      CHECK(r.status == 401);
      CHECK(contains(r.body, "action=\"/reports/login\""));
      CHECK(r.get_header_value("Content-Type") == "text/html; charset=utf-8");
    }
    // The sign-in page's style sheet is served to anyone (it holds no data); every other asset and page is not.
    auto css = get("/reports/assets/referee.css", {});
    CHECK(css.status == 200);
    CHECK(css.get_header_value("Content-Type").rfind("text/css", 0) == 0);
    CHECK(get("/reports/assets/referee.js", {}).status == 401);
    // Asked for by its version (as every page names it), an asset is kept for good; without one it is revalidated.
    CHECK(css.get_header_value("Cache-Control") == "no-cache");
    auto versioned = get("/reports/assets/referee.css?v=" + reports::asset_version("assets/referee.css"), {});
    CHECK(versioned.status == 200);
    CHECK(versioned.get_header_value("Cache-Control") == "public, max-age=31536000, immutable");
    CHECK(get("/reports/assets/referee.css?v=0000000000000000", {}).get_header_value("Cache-Control") == "no-cache");
    CHECK(contains(get("/reports/login", {}).body, "/reports/assets/referee.css?v=" + reports::asset_version("assets/referee.css")));
    // The sign-in: a form, then a cookie for /reports only.
    auto form = get("/reports/login", {});
    CHECK(form.status == 200);
    CHECK(contains(form.body, "name=\"token\""));
    auto bad = c.Post("/reports/login", "token=tok-alice-forged", "application/x-www-form-urlencoded");
    REQUIRE(bad);
    CHECK(bad->status == 401);
    CHECK(bad->get_header_value("Set-Cookie").empty());
    auto login = c.Post("/reports/login", "token=tok-alice-0123456789", "application/x-www-form-urlencoded");
    REQUIRE(login);
    CHECK(login->status == 303);
    CHECK(login->get_header_value("Location") == "/reports/index.html");
    // The cookie holds a random session id, never the token.
    std::string set = login->get_header_value("Set-Cookie");
    CHECK_FALSE(contains(set, "tok-alice"));
    CHECK(set.rfind("referee_session=", 0) == 0);
    CHECK(set.substr(set.find(';')) == "; HttpOnly; SameSite=Strict; Path=/reports; Max-Age=43200");
    std::string cookie = set.substr(0, set.find(';'));
    CHECK(cookie.size() == std::string("referee_session=").size() + 64);
    auto by_cookie = get("/reports/rounds/mini-1.0.0/minilm.html", {{"Cookie", "theme=dark; " + cookie}});
    CHECK(by_cookie.status == 200);
    CHECK(without_generated_at(by_cookie.body) == without_generated_at(page->body));
    // The token itself as a cookie is nothing (the cookie of earlier versions held it).
    CHECK(get("/reports/rounds/mini-1.0.0/minilm.html", {{"Cookie", "referee_token=tok-alice-0123456789"}}).status == 401);
    CHECK(get("/reports/rounds/mini-1.0.0/minilm.html", {{"Cookie", "referee_session=tok-alice-0123456789"}}).status == 401);
    // The cookie counts for the pages only, never for the API.
    auto api = get("/api/v1/query/list?what=rounds", {{"Cookie", cookie}});
    CHECK(api.status == 401);
    // Every answer: no framing, no sniffing, no referrer, only the site's own scripts.
    for (const auto* r : {&by_cookie, &api}) {
      CHECK(r->get_header_value("X-Frame-Options") == "DENY");
      CHECK(r->get_header_value("X-Content-Type-Options") == "nosniff");
      CHECK(r->get_header_value("Referrer-Policy") == "no-referrer");
      CHECK(contains(r->get_header_value("Content-Security-Policy"), "script-src 'self'"));
      CHECK(contains(r->get_header_value("Content-Security-Policy"), "frame-ancestors 'none'"));
    }
    // A sign-in or sign-out posted from another site is refused (login CSRF: the attacker's token in the
    // member's browser; or signing a member out), with no cookie set.
    for (const auto& h : {httplib::Headers{{"Origin", "https://evil.example"}}, httplib::Headers{{"Sec-Fetch-Site", "cross-site"}}}) {
      auto csrf = c.Post("/reports/login", h, "token=tok-alice-0123456789", "application/x-www-form-urlencoded");
      REQUIRE(csrf);
      CHECK(csrf->status == 403);
      CHECK(csrf->get_header_value("Set-Cookie").empty());
      auto out = c.Post("/reports/logout", httplib::Headers{{"Cookie", cookie}, *h.begin()}, "", "application/x-www-form-urlencoded");
      REQUIRE(out);
      CHECK(out->status == 403);
    }
    CHECK(get("/reports/rounds/mini-1.0.0/minilm.html", {{"Cookie", cookie}}).status == 200);  // still signed in
    // From this site (its own Origin): signed in.
    auto same = c.Post("/reports/login", httplib::Headers{{"Origin", "http://127.0.0.1:" + std::to_string(s.port)}},
                       "token=tok-alice-0123456789", "application/x-www-form-urlencoded");
    REQUIRE(same);
    CHECK(same->status == 303);
    // Sign out: the session ends at once, the cookie is cleared.
    auto out = c.Post("/reports/logout", httplib::Headers{{"Cookie", cookie}}, "", "application/x-www-form-urlencoded");
    REQUIRE(out);
    CHECK(out->status == 303);
    CHECK(out->get_header_value("Location") == "/reports/login");
    CHECK(contains(out->get_header_value("Set-Cookie"), "referee_session=; HttpOnly; SameSite=Strict; Path=/reports; Max-Age=0"));
    CHECK(get("/reports/rounds/mini-1.0.0/minilm.html", {{"Cookie", cookie}}).status == 401);
    CHECK(contains(get("/reports/logout", {}).body, "action=\"/reports/logout\""));
    CHECK(s.stop(SIGTERM) == 0);
    std::string log = read_file(s.err_file);
    CHECK_FALSE(contains(log, "tok-alice"));
    // --public without a token: published rounds only.
    Serve p(f.db, {"--public"}, (f.dir.path / "serve2.err").string());
    httplib::Client pc("127.0.0.1", p.port);
    auto anon = pc.Get("/reports/rounds/mini-1.0.0/minilm.html");
    REQUIRE(anon);
    CHECK(anon->status == 404);
    auto anon_index = pc.Get("/reports/index.html");
    REQUIRE(anon_index);
    CHECK(anon_index->status == 200);
    CHECK_FALSE(contains(anon_index->body, "mini-1.0.0"));
  }

  TEST_CASE("--read-only serves the questions from a store it does not write") {
    Fixture f;
    auto before = read_file(f.db);
    Serve s(f.db, {"--read-only"}, (f.dir.path / "serve.err").string());
    auto local = run(f.dir, "leaderboard --round mini-1.0.0 --benchmark minilm --db " + f.db);
    auto remote = run(f.dir, "leaderboard --round mini-1.0.0 --benchmark minilm --server " + s.url + " --token tok-alice-0123456789");
    CHECK(remote.rc == 0);
    CHECK(remote.out == local.out);
    httplib::Client c("127.0.0.1", s.port);
    auto h = c.Get("/api/v1/health");
    REQUIRE(h);
    CHECK(contains(h->body, "\"read_only\":true"));
    auto w = c.Post("/api/v1/rounds/mini-1.0.0/announcements", bearer("tok-alice-0123456789"),
                    "{\"results\":[\"ExampleOrg/cpu_2x_example/minilm\"],\"text\":\"x\"}", "application/json");
    REQUIRE(w);
    CHECK(w->status == 503);
    CHECK(w->get_header_value("Retry-After") == "1");
    CHECK(contains(w->body, "\"code\":\"read-only\""));
    CHECK(s.stop(SIGINT) == 0);
    CHECK(read_file(f.db) == before);
  }

  TEST_CASE("--public answers published rounds without a token, and nothing else") {
    Fixture f;
    Serve s(f.db, {"--public"}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto open = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm");
    REQUIRE(open);
    CHECK(open->status == 200);
    CHECK(s.stop(SIGTERM) == 0);
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds");
    Serve s2(f.db, {"--public"}, (f.dir.path / "serve.err").string());
    httplib::Client c2("127.0.0.1", s2.port);
    auto closed = c2.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm");
    REQUIRE(closed);
    CHECK(closed->status == 404);
  }

  TEST_CASE("limits: a body over --max-body is a 413 with a JSON error; an over-long URI a 414") {
    Fixture f;
    Serve s(f.db, {"--max-body", "4096"}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto big = c.Post("/api/v1/objections", std::string(5000, 'x'), "application/json");
    REQUIRE(big);
    CHECK(big->status == 413);
    CHECK(contains(big->body, "\"code\":\"too-large\""));
    auto fits = c.Post("/api/v1/objections", std::string(100, 'x'), "application/json");
    REQUIRE(fits);
    CHECK(fits->status != 413);
    auto longuri = c.Get("/api/v1/query/list?what=" + std::string(20000, 'a'));
    REQUIRE(longuri);
    CHECK(longuri->status == 414);
    CHECK(contains(longuri->body, "\"status\":414"));
  }

  TEST_CASE("bad bodies (malformed JSON, invalid UTF-8, unknown fields, SQL) are a 4xx and write nothing") {
    Fixture f;
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds");
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    httplib::Client c("127.0.0.1", s.port);
    auto count = [&] {
      std::string error;
      auto st = submissions::Store::open(f.db, &error, submissions::OpenMode::ReadOnly);
      REQUIRE_MESSAGE(st, error);
      submissions::Stmt q(st->db(), "SELECT (SELECT COUNT(*) FROM announcements) + (SELECT COUNT(*) FROM events)");
      REQUIRE(q.step());
      return q.col_int(0);
    };
    const std::string path = "/api/v1/rounds/mini-1.0.0/announcements";
    const std::string result = "\"results\":[\"ExampleOrg/cpu_2x_example/minilm\"]";
    const std::vector<std::string> bodies = {
        "{" + result + ", ",                                         // cut short
        "[1, 2]",                                                    // not an object
        "{" + result + ",\"text\":\"bad \xff\xfe bytes\"}",          // invalid UTF-8
        "{" + result + ",\"text\":\"x\",\"colour\":\"red\"}",          // unknown field
        "{\"results\":[\"ExampleOrg/x'); DROP TABLE announcements; --/minilm\"],\"text\":\"x\"}",  // SQL in a name
    };
    long long before = count();
    for (const auto& b : bodies) {
      CAPTURE(b);
      auto r = c.Post(path, bearer("tok-alice-0123456789"), b, "application/json");
      REQUIRE(r);
      CHECK(r->status >= 400);
      CHECK(r->status < 500);
      CHECK(contains(r->body, "\"error\""));
    }
    CHECK(count() == before);
    // A long unknown field name is quoted in part, not echoed whole.
    auto big = c.Post(path, bearer("tok-alice-0123456789"), "{" + result + ",\"" + std::string(500000, 'k') + "\":1}",
                      "application/json");
    REQUIRE(big);
    CHECK(big->status == 400);
    CHECK(big->body.size() < 1000);
    CHECK(contains(big->body, "(500000 bytes)"));
    // The same route takes a good body (so the refusals above were the bodies').
    auto good = c.Post(path, bearer("tok-alice-0123456789"), "{" + result + ",\"text\":\"ok\"}", "application/json");
    REQUIRE(good);
    CHECK(good->status == 201);
    CHECK(count() > before);
  }

  TEST_CASE("writers on per-thread connections, as the server opens them, all commit: none fails busy") {
    Fixture f;
    std::atomic<int> failed{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 8; ++t)
      writers.emplace_back([&, t] {
        std::string error;
        auto s = submissions::Store::open(f.db, &error, submissions::OpenMode::ReadWrite, false);
        if (!s) {
          ++failed;
          return;
        }
        for (int i = 0; i < 50; ++i) {
          std::string name = "org-";
          name += std::to_string(t);
          name += '-';
          name += std::to_string(i);
          if (!s->begin(&error)) {
            ++failed;
            continue;
          }
          submissions::Stmt q(s->db(), "INSERT INTO organisations(name) VALUES(?1)");
          q.bind(1, name);
          if (!q.run() || !s->commit(&error)) {
            s->rollback();
            ++failed;
          }
        }
      });
    for (auto& w : writers) w.join();
    CHECK(failed == 0);
    std::string error;
    auto s = submissions::Store::open(f.db, &error);
    REQUIRE_MESSAGE(s, error);
    submissions::Stmt q(s->db(), "SELECT COUNT(*) FROM organisations WHERE name LIKE 'org-%'");
    REQUIRE(q.step());
    CHECK(q.col_int(0) == 400);
  }

  TEST_CASE("the client's transport errors are clear") {
    TempDir dir;
    // A port nobody listens on: bind one, close it.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    int port = ntohs(a.sin_port);
    close(fd);
    auto r = run(dir, "list rounds --server http://127.0.0.1:" + std::to_string(port) + " --token x");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "no referee server at http://127.0.0.1:" + std::to_string(port) + " (is referee serve running?)"));
    auto scheme = run(dir, "list rounds --server ftp://127.0.0.1:1 --token x");
    CHECK(scheme.rc == 2);
    CHECK(contains(scheme.err, "neither http:// nor https://"));
  }

  TEST_CASE("a server that is not a referee server is refused, exit 2, whatever it answers") {
    TempDir dir;
    httplib::Server other;
    other.Get("/api/v1/objections", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body>Directory listing</body></html>", "text/html");
    });
    other.Get("/api/v1/rounds", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content("<html><body>Not Found</body></html>", "text/html");
    });
    other.Get("/api/v1/log", [](const httplib::Request&, httplib::Response& res) { res.status = 404; });
    other.Get("/api/v1/users", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content("{\"detail\": \"boom\"}", "application/json");  // JSON, not a referee error
    });
    int port = other.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    std::thread t([&] { other.listen_after_bind(); });
    std::string url = "http://127.0.0.1:" + std::to_string(port);
    struct Case {
      std::string command;
      int status;
      std::string type;
    };
    for (const auto& k : std::vector<Case>{{"objection list", 200, "text/html"},
                                           {"round list", 404, "text/html"},
                                           {"review log", 404, "no content type"},
                                           {"user list", 500, "application/json"}}) {
      CAPTURE(k.command);
      auto r = run(dir, k.command + " --server " + url + " --token x");
      CHECK(r.rc == 2);
      CHECK_FALSE(contains(r.out, "<html>"));
      CHECK(contains(r.err, url + " does not look like a referee server (it answered HTTP " + std::to_string(k.status) +
                                " with " + k.type + ")"));
    }
    other.stop();
    t.join();
  }

  TEST_CASE("--server with the API's prefix or a trailing slash names the same server") {
    Fixture f;
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    auto plain = run(f.dir, "objection list --server " + s.url + " --token tok-alice-0123456789");
    REQUIRE(plain.rc == 0);
    for (const std::string& suffix : std::vector<std::string>{"/", "/api/v1", "/api/v1/", "//api/v1//"}) {
      CAPTURE(suffix);
      auto r = run(f.dir, "objection list --server " + s.url + suffix + " --token tok-alice-0123456789");
      CHECK(r.rc == 0);
      CHECK(r.out == plain.out);
      CHECK_FALSE(contains(r.err, "no route"));
    }
  }

  TEST_CASE("TLS: a self-signed certificate, trusted with --cacert") {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      MESSAGE("SKIPPED: no openssl command (Debian: openssl)");
      return;
    }
    Fixture f;
    std::string cert = (f.dir.path / "cert.pem").string(), key = (f.dir.path / "key.pem").string();
    std::string out;
    int rc = run_shell_capture("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                               "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert, &out);
    REQUIRE_MESSAGE(rc == 0, out);
    Serve s(f.db, {"--tls-cert", cert, "--tls-key", key}, (f.dir.path / "serve.err").string(), "https");
    auto local = run(f.dir, "list rounds --db " + f.db);
    auto remote = run(f.dir, "list rounds --server " + s.url + " --token tok-alice-0123456789 --cacert " + cert);
    CHECK(remote.rc == 0);
    CHECK(remote.out == local.out);
    {
      EnvVar ca("REFEREE_CACERT", cert);
      auto env = run(f.dir, "list rounds --server " + s.url + " --token tok-alice-0123456789");
      CHECK(env.rc == 0);
      CHECK(env.out == local.out);
    }
    auto untrusted = run(f.dir, "list rounds --server " + s.url + " --token tok-alice-0123456789");
    CHECK(untrusted.rc == 2);
    CHECK(contains(untrusted.err, "TLS with " + s.url + " failed"));
    CHECK(contains(untrusted.err, "--cacert"));
    // TLS 1.2 and up with forward-secret AEAD suites only: RSA key exchange and CBC are refused.
    std::string hello = "openssl s_client -connect 127.0.0.1:" + std::to_string(s.port) + " -CAfile " + cert + " ";
    CHECK(run_shell_capture(hello + "-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 </dev/null", &out) == 0);
    CHECK(run_shell_capture(hello + "-tls1_2 -cipher AES256-SHA </dev/null", &out) != 0);
    CHECK(run_shell_capture(hello + "-tls1_2 -cipher ECDHE-RSA-AES128-SHA </dev/null", &out) != 0);
    CHECK(run_shell_capture(hello + "-tls1_1 -cipher DEFAULT:@SECLEVEL=0 </dev/null", &out) != 0);
    CHECK(run_shell_capture(hello + "-tls1_3 </dev/null", &out) == 0);
    // Plain HTTP to the TLS port is refused, not served.
    httplib::Client plain("127.0.0.1", s.port);
    auto p = plain.Get("/api/v1/health");
    CHECK((!p || p->status != 200));
    // A key that does not match is refused at start, exit 2.
    std::string key2 = (f.dir.path / "key2.pem").string(), cert2 = (f.dir.path / "cert2.pem").string();
    REQUIRE(run_shell_capture("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=x -keyout " + key2 + " -out " +
                                  cert2, &out) == 0);
    auto bad = run(f.dir, "serve --db " + f.db + " --listen 127.0.0.1:0 --tls-cert " + cert + " --tls-key " + key2);
    CHECK(bad.rc == 2);
    CHECK(contains(bad.err, "cannot use the TLS certificate"));
  }

  TEST_CASE("plain HTTP only on the loopback: another address needs TLS or --insecure-http, which warns; the client warns too") {
    Fixture f;
    auto refused = run(f.dir, "serve --db " + f.db + " --listen 0.0.0.0:0");
    CHECK(refused.rc == 2);
    CHECK(contains(refused.err, "--listen 0.0.0.0:0 is not a loopback address and no --tls-cert is given"));
    CHECK(contains(refused.err, "--insecure-http"));
    CHECK(refused.out.empty());
    auto ipv6 = run(f.dir, "serve --db " + f.db + " --listen [::]:0");
    CHECK(ipv6.rc == 2);
    // With --insecure-http it serves, and says what that means.
    std::string out_file = (f.dir.path / "insecure.out").string(), err_file = (f.dir.path / "insecure.err").string();
    REQUIRE(std::system((std::string(REFEREE_BINARY) + " serve --db " + f.db + " --listen 0.0.0.0:0 --insecure-http >" +
                         out_file + " 2>" + err_file + " & pid=$!; sleep 2; kill $pid; wait $pid")
                            .c_str()) == 0);
    CHECK(contains(read_file(out_file), "listening on http://0.0.0.0:"));
    CHECK(contains(read_file(err_file), "WARNING: plain HTTP on 0.0.0.0:0 (--insecure-http)"));
    // The client: a token over plain HTTP to another machine is warned about before it is sent.
    auto far = run(f.dir, "objection list --round mini-1.0.0 --server http://0.0.0.0:1 --token tok-alice-0123456789");
    CHECK(far.rc == 2);
    CHECK(contains(far.err, "WARNING: sending the token over plain HTTP to 0.0.0.0, which is not this machine"));
    Serve s(f.db, {}, (f.dir.path / "serve.err").string());
    auto near = run(f.dir, "objection list --round mini-1.0.0 --server " + s.url + " --token tok-alice-0123456789");
    CHECK(near.rc == 0);
    CHECK_FALSE(contains(near.err, "WARNING"));
  }

  TEST_CASE("serve refuses a damaged store, a missing one (read-only or not) and a bad --listen, exit 2") {
    TempDir dir;
    std::string junk = (dir.path / "junk.db").string();
    write_file(junk, std::string(8192, 'j'));
    auto r = run(dir, "serve --db " + junk + " --listen 127.0.0.1:0");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "not a referee store"));
    auto missing = run(dir, "serve --read-only --db " + (dir.path / "none.db").string() + " --listen 127.0.0.1:0");
    CHECK(missing.rc == 2);
    CHECK(contains(missing.err, "no store at"));
    // Without --read-only too: refused, and nothing is created (not even its folder).
    std::string none = (dir.path / "sub" / "none.db").string();
    auto missing_rw = run(dir, "serve --db " + none + " --listen 127.0.0.1:0");
    CHECK(missing_rw.rc == 2);
    CHECK(contains(missing_rw.err, "no store at " + none));
    CHECK(contains(missing_rw.err, "referee import DIR --round R --db " + none));
    CHECK(!std::filesystem::exists(dir.path / "sub"));
    // An empty file is not a store: refused and left empty, not made into one.
    std::string empty = (dir.path / "empty.db").string();
    write_file(empty, "");
    auto e = run(dir, "serve --db " + empty + " --listen 127.0.0.1:0");
    CHECK(e.rc == 2);
    CHECK(contains(e.err, "is empty: not a referee store"));
    CHECK(std::filesystem::file_size(empty) == 0);
    auto listen = run(dir, "serve --db " + junk + " --listen nowhere");
    CHECK(listen.rc == 2);
    CHECK(contains(listen.err, "is not HOST:PORT"));
  }

  TEST_CASE("a port in use, also by another referee serve, is refused with exit 2; the first keeps serving") {
    Fixture f;
    Serve first(f.db, {}, (f.dir.path / "serve.err").string());
    std::string listen = "127.0.0.1:" + std::to_string(first.port);
    // Bounded: a second server that binds would serve until killed.
    std::string out;
    int st = run_shell_capture("timeout 20 " + std::string(REFEREE_BINARY) + " serve --db " + f.db + " --listen " + listen,
                               &out);
    CHECK(st == 2);
    CHECK(!contains(out, "listening"));
    CHECK(contains(out, "address " + listen + " is already in use"));
    httplib::Client c("127.0.0.1", first.port);
    auto h = c.Get("/api/v1/health");
    REQUIRE(h);
    CHECK(h->status == 200);
    CHECK(first.stop(SIGTERM) == 0);
  }

  TEST_CASE("SIGTERM while clients ask: every answer is whole, the server exits 0") {
    Fixture f;
    Serve s(f.db, {"--threads", "4"}, (f.dir.path / "serve.err").string());
    std::atomic<bool> go{true};
    std::atomic<int> ok{0}, broken{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 4; ++i)
      clients.emplace_back([&] {
        httplib::Client c("127.0.0.1", s.port);
        c.set_connection_timeout(2);
        while (go) {
          auto r = c.Get("/api/v1/query/leaderboard?round=mini-1.0.0&benchmark=minilm", bearer("tok-alice-0123456789"));
          if (!r) continue;  // refused after the stop: fine
          if (r->status == 200 && contains(r->body, "cpu_2x_example")) ++ok;
          else ++broken;
        }
      });
    while (ok < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(s.stop(SIGTERM) == 0);
    go = false;
    for (auto& t : clients) t.join();
    CHECK(broken == 0);
    CHECK(ok >= 20);
  }

  TEST_CASE("kill -9 while clients write, then restart: the store opens clean and keeps every acknowledged write") {
    Fixture f;
    exec_sql(f.db, "INSERT INTO round_reviews(round_id, state) SELECT id, 'review' FROM rounds");
    Serve s(f.db, {"--threads", "4"}, (f.dir.path / "serve.err").string());
    std::atomic<bool> go{true};
    std::mutex mu;
    std::vector<std::string> acknowledged;
    std::atomic<int> refused{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 4; ++i)
      clients.emplace_back([&, i] {
        httplib::Client c("127.0.0.1", s.port);
        c.set_connection_timeout(2);
        for (int n = 0; go; ++n) {
          std::string text = "w";
          text += std::to_string(i);
          text += '-';
          text += std::to_string(n);
          auto r = c.Post("/api/v1/rounds/mini-1.0.0/announcements", bearer("tok-alice-0123456789"),
                          "{\"results\":[\"ExampleOrg/cpu_2x_example/minilm\"],\"text\":\"" + text + "\"}",
                          "application/json");
          if (r && r->status == 201) {
            std::lock_guard<std::mutex> l(mu);
            acknowledged.push_back(text);
          } else if (r) {
            ++refused;  // an answer other than 201 while the server runs is a defect
          }
        }
      });
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard<std::mutex> l(mu);
      if (acknowledged.size() >= 50) break;
    }
    s.stop(SIGKILL);
    go = false;
    for (auto& t : clients) t.join();
    CHECK(refused == 0);
    // The store opens with every check (quick_check included), keeps each
    // acknowledged write, and its event chain verifies.
    std::string error;
    auto store = submissions::Store::open(f.db, &error);
    REQUIRE_MESSAGE(store, error);
    for (const auto& text : acknowledged) {
      submissions::Stmt q(store->db(), "SELECT 1 FROM announcements WHERE text = ?1");
      q.bind(1, text);
      CHECK_MESSAGE(q.step(), "acknowledged write lost: announcement " << text);
    }
    auto chain = review::verify_events(*store, &error);
    CHECK_MESSAGE(chain.ok, chain.problem << error);
    CHECK(chain.events >= static_cast<long long>(acknowledged.size()));
    store.reset();
    Serve again(f.db, {}, (f.dir.path / "serve2.err").string());
    httplib::Client c("127.0.0.1", again.port);
    auto h = c.Get("/api/v1/health");
    REQUIRE(h);
    CHECK(h->status == 200);
  }

  TEST_CASE("demo --review tells NVIDIA's 3.1 RetinaNet review through a real server") {
    if (!have_reference_data()) return;
    TempDir t;
    std::string out;
    int rc = run_referee("demo --review --out '" + t.path.string() + "' --reference '" + reference_dir() + "'", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("-> http://127.0.0.1:") != std::string::npos);  // the review ran through a server
    // Before: the unscaled score and the failing check; the audit finds it.
    // (score, then accelerator-hours: 2048 x 0.8545 min / 60 = 29.2)
    CHECK(std::regex_search(out, std::regex(R"(0\.8545 +29\.2  FAIL)")));
    CHECK(out.find("check-failure  NVIDIA/eos_n256_ngc23.09_pytorch/ssd") != std::string::npos);
    CHECK(out.find("only a review chair records a decision") != std::string::npos);
    CHECK(out.find("decision 1: upheld, remedy normalise factor 1.07575758 (votes 3 uphold") != std::string::npos);
    CHECK(out.find("NVIDIA: uphold (normalise factor 1.07575758)") != std::string::npos);  // each vote's factor
    // After: the normalised score with its decision, the failed RCP check accepted by it, the chain intact.
    CHECK(std::regex_search(
        out, std::regex(R"(0\.9193 \(normalised\) +31\.4  accepted \(decision 1\)  normalised x1\.0758 \(decision 1\))")));
    CHECK(out.find("chain intact") != std::string::npos);
  }

  TEST_CASE("demo --review without the published results says where it looked and how to point it there") {
    TempDir t;
    std::string out;
    int rc = run_referee("demo --review --out '" + t.path.string() + "' --reference '" + t.path.string() + "/none'", &out);
    CHECK(rc == 2);
    CHECK(out.find("the published round-3.1 results are not in") != std::string::npos);
    CHECK(out.find("--reference DIR or set REFEREE_REFERENCE_DATA") != std::string::npos);
  }
}

}  // namespace referee::testing
