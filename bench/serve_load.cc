// A bounded load generator for `referee serve` on this machine: N client
// threads (keep-alive connections) send M reads, then M' writes, and it
// prints requests per second and p50/p99 latencies of each. It talks only to
// the loopback (127.0.0.1, ::1, localhost) and stops at --max-seconds.
//
//   serve_load --url http://127.0.0.1:8080 --token T [--threads 8]
//              [--reads 4000] [--read-path PATH?QUERY]
//              [--writes 600] [--write-path /api/v1/users] [--write-body JSON with {n}]
//              [--max-seconds 60]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "base/url.h"
#include <vector>

namespace {

struct Options {
  std::string url, token;
  int threads = 8;
  long reads = 4000, writes = 600;
  std::string read_path = "/api/v1/health";
  std::string write_path = "/api/v1/users";
  std::string write_body = R"({"name":"load-{n}","organisation":"LoadOrg","role":"member"})";
  double max_seconds = 60;
};

struct Tally {
  std::mutex mu;
  std::vector<double> ms;  // latencies of the successful requests
  std::atomic<long> errors{0};
  std::atomic<long> first_status{0};
  std::string first_error;
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Runs `count` requests over `threads` connections; false when the deadline cut it short.
void run_phase(const char* label, const Options& o, const std::string& host, int port, bool tls, long count, bool write) {
  if (count <= 0) return;
  Tally t;
  std::atomic<long> next{0};
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.max_seconds);
  std::vector<std::thread> workers;
  for (int w = 0; w < o.threads; ++w)
    workers.emplace_back([&, w] {
      (void)w;
      std::unique_ptr<httplib::ClientImpl> c;
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
      if (tls) {
        auto s = std::make_unique<httplib::SSLClient>(host, port);
        s->enable_server_certificate_verification(false);  // loopback only
        c = std::move(s);
      }
#endif
      if (!c) c = std::make_unique<httplib::ClientImpl>(host, port);
      c->set_keep_alive(true);
      c->set_tcp_nodelay(true);  // else a POST (headers, then body) waits 40 ms for a delayed ACK
      c->set_read_timeout(10, 0);
      httplib::Headers h;
      if (!o.token.empty()) h.emplace("Authorization", "Bearer " + o.token);
      std::vector<double> mine;
      for (long n = next++; n < count; n = next++) {
        if (std::chrono::steady_clock::now() > deadline) break;
        auto t0 = std::chrono::steady_clock::now();
        httplib::Result r = write ? c->Post(o.write_path.c_str(), h, replace_all(o.write_body, "{n}", std::to_string(n)),
                                            "application/json")
                                  : c->Get(o.read_path.c_str(), h);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r && r->status >= 200 && r->status < 300) {
          mine.push_back(ms);
        } else {
          ++t.errors;
          std::lock_guard<std::mutex> l(t.mu);
          if (t.first_error.empty())
            t.first_error = r ? "HTTP " + std::to_string(r->status) + " " + r->body.substr(0, 200)
                              : "transport: " + httplib::to_string(r.error());
        }
      }
      std::lock_guard<std::mutex> l(t.mu);
      t.ms.insert(t.ms.end(), mine.begin(), mine.end());
    });
  for (auto& th : workers) th.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long done = static_cast<long>(t.ms.size());
  std::printf("%-6s %6ld ok %5ld failed %8.1f s %9.0f req/s  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms%s\n", label, done,
              t.errors.load(), secs, done / secs, percentile(t.ms, 0.5), percentile(t.ms, 0.99),
              t.ms.empty() ? 0.0 : *std::max_element(t.ms.begin(), t.ms.end()),
              done + t.errors < count ? "  (cut short by --max-seconds)" : "");
  if (!t.first_error.empty()) std::printf("       first failure: %s\n", t.first_error.c_str());
}

int usage(const char* why) {
  std::fprintf(stderr,
               "serve_load: %s\nusage: serve_load --url http://127.0.0.1:PORT [--token T] [--threads N] [--reads N] "
               "[--read-path P] [--writes N] [--write-path P] [--write-body JSON] [--max-seconds S]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const char* t = std::getenv("REFEREE_TOKEN")) o.token = t;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
    std::string v = argv[++i];
    if (a == "--url") o.url = v;
    else if (a == "--token") o.token = v;
    else if (a == "--threads") o.threads = std::atoi(v.c_str());
    else if (a == "--reads") o.reads = std::atol(v.c_str());
    else if (a == "--writes") o.writes = std::atol(v.c_str());
    else if (a == "--read-path") o.read_path = v;
    else if (a == "--write-path") o.write_path = v;
    else if (a == "--write-body") o.write_body = v;
    else if (a == "--max-seconds") o.max_seconds = std::atof(v.c_str());
    else return usage(("unknown option " + a).c_str());
  }
  if (o.threads < 1 || o.threads > 256) return usage("--threads is 1 to 256");
  if (o.reads < 0 || o.reads > 1000000 || o.writes < 0 || o.writes > 1000000) return usage("--reads and --writes are 0 to 1000000");
  if (!(o.max_seconds > 0 && o.max_seconds <= 600)) return usage("--max-seconds is more than 0 and at most 600");
  bool tls = o.url.rfind("https://", 0) == 0;
  if (!tls && o.url.rfind("http://", 0) != 0) return usage("--url is http://HOST:PORT or https://HOST:PORT");
  std::string rest = o.url.substr(tls ? 8 : 7);
  rest = rest.substr(0, rest.find('/'));
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) return usage("--url needs a port");
  std::string host = rest.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int port = std::atoi(rest.substr(colon + 1).c_str());
  if (!referee::base::is_loopback_host(host)) return usage("only a server on this machine (127.0.0.1, ::1, localhost) is loaded");
  if (port <= 0 || port > 65535) return usage("bad port");
  std::printf("serve_load: %s, %d threads, %ld reads of %s, %ld writes to %s\n", o.url.c_str(), o.threads, o.reads,
              o.read_path.c_str(), o.writes, o.write_path.c_str());
  run_phase("reads", o, host, port, tls, o.reads, false);
  run_phase("writes", o, host, port, tls, o.writes, true);
  return 0;
}
