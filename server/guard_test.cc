// The connection guard of the real server (server/guard.h): slow and
// flooding clients are cut off, one address cannot take every worker, and
// /health still answers meanwhile.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/raw_http.h"
#include "tests/run_referee.h"
#include "tests/serve_process.h"
#include "tests/temp_dir.h"

namespace referee::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string health_from(const char* from, int port) {
  int fd = connect_from(from, port);
  send_all(fd, "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  bool closed = false;
  std::string r = receive(fd, 3000, &closed);
  close(fd);
  return r;
}

long rss_kb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Store {
  TempDir dir{"referee-guard-"};
  std::string db = (dir.path / "store.db").string();
  Store() {
    std::string out;
    REQUIRE(run_referee("import " + std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg --round mini-1.0.0 --db " + db,
                        &out) == 0);
  }
};

}  // namespace

TEST_SUITE("serve") {
  TEST_CASE("slow clients: a trickled head ends with 408 at --head-timeout, a trickled body is cut, a header flood ends with 431") {
    Store st;
    Serve s(st.db, {"--head-timeout", "2"}, (st.dir.path / "serve.err").string());

    // One header line every 300 ms would go on for a minute.
    int fd = connect_from("127.0.0.1", s.port);
    REQUIRE(send_all(fd, "GET /api/v1/health HTTP/1.1\r\n"));
    auto t0 = Clock::now();
    bool closed = false;
    std::string got;
    for (int i = 0; i < 200 && !closed; ++i) {
      send_all(fd, "X-Slow: " + std::to_string(i) + "\r\n");
      got += receive(fd, 300, &closed);
    }
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    close(fd);
    CHECK(closed);
    CHECK(got.rfind("HTTP/1.1 408", 0) == 0);
    CHECK(contains(got, "\"request-timeout\""));
    CHECK(took < 10);  // not the minute the trickle would take

    // A body of 100 bytes, one byte every 300 ms.
    fd = connect_from("127.0.0.1", s.port);
    REQUIRE(send_all(fd, "POST /api/v1/objections HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"));
    t0 = Clock::now();
    closed = false;
    for (int i = 0; i < 99 && !closed; ++i) {
      send_all(fd, " ");
      got = receive(fd, 300, &closed);
    }
    took = std::chrono::duration<double>(Clock::now() - t0).count();
    close(fd);
    CHECK(closed);
    CHECK(took < 10);

    // Header lines as fast as the socket takes them: 30 MB of them.
    long before = rss_kb(s.pid);
    fd = connect_from("127.0.0.1", s.port);
    std::string lines;
    for (int i = 0; i < 4096; ++i) lines += "X-Flood: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    send_all(fd, "GET /api/v1/health HTTP/1.1\r\n");
    int sent = 0;
    while (sent < 128 && send_all(fd, lines)) ++sent;  // stops when the server closes
    got = receive(fd, 3000, &closed);
    close(fd);
    CHECK(sent < 128);  // the server stopped taking them
    long after = rss_kb(s.pid);
    CHECK(after - before < 32 * 1024);

    CHECK(health_from("127.0.0.1", s.port).rfind("HTTP/1.1 200", 0) == 0);
    CHECK(s.stop(SIGTERM) == 0);
    std::string log = read_file(s.err_file);
    CHECK(contains(log, " 408 0.0ms - closed the connection from 127.0.0.1 port "));
    CHECK(contains(log, "headers not complete 2 s after their first byte"));
    CHECK(contains(log, "request body not complete in time"));
    CHECK(contains(log, " 431 0.0ms - closed the connection from 127.0.0.1 port "));
    CHECK(contains(log, "request head over 65536 bytes"));
  }

  TEST_CASE("connections per address: one over --max-connections-per-address is answered 503; /health from elsewhere answers") {
    Store st;
    Serve s(st.db, {"--threads", "4", "--max-connections-per-address", "2", "--head-timeout", "20"},
            (st.dir.path / "serve.err").string());
    // Two connections that start a request and stall hold two workers.
    int a = connect_from("127.0.0.1", s.port);
    int b = connect_from("127.0.0.1", s.port);
    REQUIRE(send_all(a, "GET /api/v1/health HTTP/1.1\r\n"));
    REQUIRE(send_all(b, "GET /api/v1/health HTTP/1.1\r\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));

    int c = connect_from("127.0.0.1", s.port);
    bool closed = false;
    std::string got = receive(c, 3000, &closed);
    close(c);
    CHECK(got.rfind("HTTP/1.1 503", 0) == 0);
    CHECK(contains(got, "Retry-After: 1"));
    CHECK(contains(got, "\"too-many-connections\""));
    CHECK(contains(got, "address 127.0.0.1 has 2 connections open"));
    CHECK(closed);

    // Another address is served at once.
    auto t0 = Clock::now();
    CHECK(health_from("127.0.0.2", s.port).rfind("HTTP/1.1 200", 0) == 0);
    CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 2);

    // Once one of the two ends, the address may connect again.
    close(a);
    std::string again;
    for (int i = 0; i < 40 && again.rfind("HTTP/1.1 200", 0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      again = health_from("127.0.0.1", s.port);
    }
    CHECK(again.rfind("HTTP/1.1 200", 0) == 0);
    close(b);
    CHECK(s.stop(SIGTERM) == 0);
    std::string log = read_file(s.err_file);
    CHECK(contains(log, " 503 0.0ms - closed the connection from 127.0.0.1 port "));
  }

  TEST_CASE("keep-alive callers cannot hold every worker: while all may be taken, a connection is closed after its answer") {
    Store st;
    Serve s(st.db, {"--threads", "2"}, (st.dir.path / "serve.err").string());
    // Two addresses, each keeping a connection alive with a request every second (under the 5 s idle close).
    const char* request = "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    int a = connect_from("127.0.0.2", s.port);
    int b = connect_from("127.0.0.3", s.port);
    bool closed_a = false, closed_b = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both accepted
    REQUIRE(send_all(a, request));
    REQUIRE(send_all(b, request));
    std::string first_a = receive(a, 3000, &closed_a), first_b = receive(b, 3000, &closed_b);
    // Both answered; with two workers and two connections every worker may be taken: each is closed.
    CHECK(first_a.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(contains(first_a, "Connection: close"));
    CHECK(closed_a);
    CHECK(closed_b);
    close(a);
    close(b);
    // A third caller is answered at once.
    auto t0 = Clock::now();
    CHECK(health_from("127.0.0.4", s.port).rfind("HTTP/1.1 200", 0) == 0);
    CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 2);
    // One connection alone keeps alive: a worker is free for others. The
    // workers that served the callers above may take a moment to be free
    // again (a sanitizer build under load): until they are, a connection is
    // still closed after its answer, so ask again a little later.
    int c = -1;
    bool closed_c = false;
    for (int attempt = 0; attempt < 25 && c < 0; ++attempt) {
      c = connect_from("127.0.0.5", s.port);
      REQUIRE(send_all(c, request));
      std::string r = receive_response(c, 3000, &closed_c);
      REQUIRE(r.rfind("HTTP/1.1 200", 0) == 0);
      if (contains(r, "Connection: close")) {
        close(c);
        c = -1;
        closed_c = false;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    REQUIRE_MESSAGE(c >= 0, "a lone connection was still closed after its answer 5 s after the others ended");
    for (int i = 0; i < 3; ++i) {
      REQUIRE(send_all(c, request));
      std::string r = receive_response(c, 3000, &closed_c);
      CHECK(r.rfind("HTTP/1.1 200", 0) == 0);
      CHECK_FALSE(contains(r, "Connection: close"));
    }
    CHECK_FALSE(closed_c);
    close(c);
    CHECK(s.stop(SIGTERM) == 0);
  }
}

}  // namespace referee::testing
