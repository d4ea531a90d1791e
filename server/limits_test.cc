// What the server refuses on a request's headers alone (server/limits.h),
// and what it writes to its log about what a caller sent.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "review/api.h"
#include "review/router.h"
#include "server/limits.h"
#include "tests/raw_http.h"
#include "tests/run_referee.h"
#include "tests/serve_process.h"
#include "tests/temp_dir.h"

namespace referee::testing {
namespace {

using Headers = std::multimap<std::string, std::string>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("serve") {
  TEST_CASE("refused on the headers: chunked, compressed, a length over the limit or not a number, too many headers") {
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "10"}}, 1024).status == 0);
    CHECK(server::refuse_before_body(Headers{}, 1024).status == 0);
    CHECK(server::refuse_before_body(Headers{{"Transfer-Encoding", "chunked"}}, 1024).status == 411);
    CHECK(server::refuse_before_body(Headers{{"transfer-encoding", "gzip, chunked"}}, 1024).status == 411);
    CHECK(server::refuse_before_body(Headers{{"Content-Encoding", "gzip"}}, 1024).status == 415);
    CHECK(server::refuse_before_body(Headers{{"Content-Encoding", "identity"}}, 1024).status == 0);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "1025"}}, 1024).status == 413);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "1000000000000"}}, 1024).status == 413);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "99999999999999999999999"}}, 1024).status == 400);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "-1"}}, 1024).status == 400);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "5"}, {"Content-Length", "100"}}, 1024).status == 400);
    CHECK(server::refuse_before_body(Headers{{"Content-Length", "5"}, {"Content-Length", "5"}}, 1024).status == 0);
    Headers many;
    for (int i = 0; i < 101; ++i) many.emplace("X-" + std::to_string(i), "v");
    auto r = server::refuse_before_body(many, 1024);
    CHECK(r.status == 431);
    CHECK(contains(r.message, "101 header lines"));
    CHECK(server::refuse_before_body(Headers{{"X-Big", std::string(40000, 'a')}}, 1024).status == 431);
  }

  TEST_CASE("the real server refuses before reading, answers at once and closes; the log shows what was sent as one line") {
    TempDir dir{"referee-limits-"};
    std::string db = (dir.path / "store.db").string();
    std::string out;
    REQUIRE(run_referee("import " + std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg --round mini-1.0.0 --db " + db,
                        &out) == 0);
    Serve s(db, {}, (dir.path / "serve.err").string());
    bool closed = false;
    // No body follows: the 413 comes from the length alone, and the connection closes.
    std::string huge = exchange(s.port,
                                "POST /api/v1/objections HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\n",
                                3000, &closed);
    CHECK(huge.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(contains(huge, "\"too-large\""));
    CHECK(closed);
    std::string chunked = exchange(s.port,
                                   "POST /api/v1/objections HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   "5\r\nhello\r\n",
                                   3000, &closed);
    CHECK(chunked.rfind("HTTP/1.1 411", 0) == 0);
    CHECK(closed);
    std::string gz = exchange(s.port,
                              "POST /api/v1/objections HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: gzip\r\n"
                              "Content-Length: 4\r\n\r\nabcd",
                              3000, &closed);
    CHECK(gz.rfind("HTTP/1.1 415", 0) == 0);
    std::string two = exchange(s.port,
                               "POST /api/v1/objections HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                               "Content-Length: 100\r\n\r\nhello",
                               3000, &closed);
    CHECK(two.rfind("HTTP/1.1 400", 0) == 0);
    // A path with a newline and an escape: logged in caret notation, on one line.
    std::string forged = exchange(s.port,
                                  "GET /api/v1/x%0a2026-01-01T00:00:00Z%20GET%20/forged%20200%1b[2J HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  "Connection: close\r\n\r\n",
                                  3000, &closed);
    CHECK(forged.rfind("HTTP/1.1 ", 0) == 0);
    // Still serving.
    std::string health = exchange(s.port, "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 3000, &closed);
    CHECK(health.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(s.stop(SIGTERM) == 0);
    std::string log = read_file(s.err_file);
    CHECK(contains(log, "/api/v1/x^J2026-01-01T00:00:00Z GET /forged 200^[[2J"));
    CHECK(!contains(log, "\n2026-01-01T00:00:00Z GET /forged"));
    CHECK(!contains(log, "\x1b"));
  }
}

TEST_SUITE("review") {
  TEST_CASE("a request body: one object of at most 256 fields, each name once") {
    review::Request r;
    mllog::Json body;
    review::Response err;
    std::string wide = "{";
    for (int i = 0; i < 80000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
    wide += "}";
    r.body = wide;
    REQUIRE_FALSE(review::parse_body(r, {"title"}, &body, &err));
    CHECK(err.status == 400);
    CHECK(contains(err.body, "has 80000 fields; at most 256 are taken"));
    r.body = R"({"title":"a","x":{"y":1,"y":2}})";
    REQUIRE_FALSE(review::parse_body(r, {"title", "x"}, &body, &err));
    CHECK(contains(err.body, "field 'y' appears more than once"));
    r.body = R"({"title":"a"})";
    CHECK(review::parse_body(r, {"title"}, &body, &err));
  }
}

}  // namespace referee::testing
