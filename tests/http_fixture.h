// A real HTTP server for download tests (cpp-httplib on 127.0.0.1, an
// ephemeral port, its own thread), fast libcurl options for talking to it, and
// a fake for the download seam that needs no server at all.
#pragma once

#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rules/fetch.h"
#include "tests/temp_dir.h"

namespace referee::testing {

// Register handlers on `srv` (calling record() in each), then start(); the
// destructor stops the server and joins its thread.
struct Server {
  httplib::Server srv;
  int port = 0;
  std::thread thread;
  std::mutex mu;
  std::vector<std::string> ranges;  // Range header of each recorded request ("" when none)
  std::atomic<int> hits{0};         // requests recorded

  void record(const httplib::Request& req) {
    std::lock_guard<std::mutex> l(mu);
    ranges.push_back(req.get_header_value("Range"));
    ++hits;
  }
  // Serves `data` at `path` (as application/gzip), recording each request.
  void serve(const std::string& path, std::shared_ptr<std::string> data) {
    srv.Get(path, [this, data](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.set_content(*data, "application/gzip");
    });
  }
  // Binds, starts listening and waits until the server runs.
  void start() {
    port = srv.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { srv.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(srv.is_running());
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port) + path; }
  ~Server() {
    srv.stop();
    if (thread.joinable()) thread.join();
  }
};

// CurlFetcher options for tests: short back-off and timeouts, no progress bar.
inline rules::CurlOptions fast_curl_options() {
  rules::CurlOptions o;
  o.backoff_ms = 10;
  o.progress = false;
  o.connect_timeout_s = 5;
  o.low_speed_time_s = 10;
  return o;
}

// A fake for the download seam: writes `bytes` to the destination, or, when
// `status` is set, fails as if the server had answered that HTTP status.
// `urls` records every URL asked for.
struct FakeFetcher : rules::Fetcher {
  std::string bytes;
  long status = 0;
  std::vector<std::string> urls;
  bool fetch(const std::string& url, const std::string& dest, rules::DownloadError* error) override {
    urls.push_back(url);
    if (status) {
      error->http_status = status;
      error->message = "HTTP " + std::to_string(status);
      return false;
    }
    write_file(dest, bytes);
    return true;
  }
};

}  // namespace referee::testing
