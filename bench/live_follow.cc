// Following a long run: a synthetic log of a million lines (a real log's
// header, then its evaluation and progress MLLOG lines again and again with
// non-MLLOG chatter between them, then run_stop and what follows it) goes line by line through
// harness::LiveChecker, and the program prints the CPU time per line of each
// stretch and the resident memory at 1k, 10k, 100k and 1M lines.
//
//   build/live_follow [--lines N] [--interval-ms MS] [--full-recheck]
//
// --interval-ms is the checker's interval between checks (200 in the
// harness; 0 checks at every MLLOG line). --full-recheck measures instead
// what the checker did before: the batch checker over all the text so far at
// every check (stop it early with --lines). The header comes from round 3.1's
// GPT-3 log of the reference data (REFEREE_REFERENCE_DATA, else ../shared),
// or from the example package's minilm log.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/live_check.h"
#include "rules/source.h"

namespace fs = std::filesystem;
using namespace referee;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string l; std::getline(in, l);)
    if (l.rfind("VmRSS:", 0) == 0) return std::atol(l.c_str() + 6);
  return -1;
}

// The old way, for comparison: the whole text, the batch checker over all of it.
class FullRecheck {
 public:
  FullRecheck(const rules::RuleSet& rules, std::chrono::milliseconds interval) : rules_(rules), interval_(interval) {}
  bool add_line(const std::string& line) {
    text_ += line;
    text_ += '\n';
    if (line.find(mllog::kToken) == std::string::npos) return false;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < interval_) return false;
    last_ = now;
    mllog::ParsedLog log;
    reader_.parse(text_, &log);
    for (const auto& f : rules::check_log(rules_, log).errors)
      if (harness::is_irreparable(f)) return true;
    return false;
  }

 private:
  const rules::RuleSet& rules_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  std::string text_;
  mllog::LogReader reader_;
};

}  // namespace

int main(int argc, char** argv) {
  size_t total = 1000000;
  long interval_ms = 200;
  bool full = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--lines" && i + 1 < argc) total = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--interval-ms" && i + 1 < argc) interval_ms = std::atol(argv[++i]);
    else if (a == "--full-recheck") full = true;
    else {
      std::fprintf(stderr, "usage: live_follow [--lines N] [--interval-ms MS] [--full-recheck]\n");
      return 2;
    }
  }
  const char* d = std::getenv("REFEREE_REFERENCE_DATA");
  std::string shared = d && *d ? d : std::string(REFEREE_SOURCE_DIR) + "/../shared";
  std::string path = shared + "/mlperf/training_results_v3.1/Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3/result_0.txt";
  std::string ruleset = "training-3.1.0", rules_flag = shared + "/mlperf/logging/mlperf_logging";
  if (!fs::exists(path)) {
    path = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt";
    ruleset = "mini-1.0.0";
    rules_flag = "";
  }
  std::string error;
  rules::RuleSource src;
  auto rs = rules::resolve_ruleset(ruleset, rules_flag, &src, &error);
  if (!rs) {
    std::fprintf(stderr, "live_follow: %s\n", error.c_str());
    return 2;
  }
  // Header: up to and including run_start; body: the MLLOG lines between
  // run_start and run_stop (evaluations, blocks, progress); then run_stop.
  std::vector<std::string> header, body, tail;
  std::string stop;
  {
    std::ifstream in(path);
    bool started = false;
    for (std::string l; std::getline(in, l);) {
      if (l.find(mllog::kToken) == std::string::npos) continue;
      if (!stop.empty()) {
        tail.push_back(l);
        continue;
      }
      if (l.find("\"key\": \"run_stop\"") != std::string::npos) {
        stop = l;
        continue;
      }
      (started ? body : header).push_back(l);
      if (l.find("\"key\": \"run_start\"") != std::string::npos) started = true;
    }
  }
  if (body.empty() || stop.empty()) {
    std::fprintf(stderr, "live_follow: %s has no lines between run_start and run_stop\n", path.c_str());
    return 2;
  }
  std::printf("log: %s (%s), header %zu lines, body of %zu MLLOG lines repeated with 3 chatter lines each\n",
              fs::path(path).filename().string().c_str(), ruleset.c_str(), header.size(), body.size());
  std::printf("checker: %s, interval %ld ms\n", full ? "full re-check (the old way)" : "LiveChecker", interval_ms);
  std::printf("%10s %16s %12s %12s %8s\n", "lines", "CPU us/line", "RSS MiB", "MLLOG lines", "checks");

  harness::LiveChecker live(*rs, std::chrono::milliseconds(interval_ms));
  FullRecheck old(*rs, std::chrono::milliseconds(interval_ms));
  size_t n = 0, mllog = 0, next_mark = 1000, since = 0, b = 0;
  double t0 = cpu_seconds();
  bool stopped = false;
  auto feed = [&](const std::string& l) {
    ++n;
    bool found = full ? old.add_line(l) : live.add_line(l).has_value();
    if (found && !stopped) {
      stopped = true;
      std::printf("  (an irreparable finding at line %zu)\n", n);
    }
    if (n == next_mark || n == total) {
      double t = cpu_seconds();
      std::printf("%10zu %16.3f %12.1f %12zu %8zu\n", n, (t - t0) * 1e6 / static_cast<double>(n - since),
                  static_cast<double>(rss_kib()) / 1024.0, mllog, full ? 0 : live.checks_run());
      std::fflush(stdout);
      since = n;
      t0 = cpu_seconds();
      next_mark *= 10;
    }
  };
  char chatter[160];
  for (const auto& l : header) ++mllog, feed(l);
  while (n + 1 + tail.size() < total) {
    std::snprintf(chatter, sizeof chatter, "[rank 0] step %zu | loss 2.%04zu | lr 1.0e-4 | tokens/s 123456.7 | mem 71.2 GB", n, n % 9973);
    feed(chatter);
    if (n % 4 == 0 && n + 1 + tail.size() < total) ++mllog, feed(body[b++ % body.size()]);
  }
  ++mllog;
  feed(stop);
  for (const auto& l : tail) ++mllog, feed(l);
  if (!full) {
    // Once, at the end: the batch checker over the whole log.
    double t = cpu_seconds();
    auto v = live.final_verdict();
    t = cpu_seconds() - t;
    long peak = 0;
    std::ifstream in("/proc/self/status");
    for (std::string l; std::getline(in, l);)
      if (l.rfind("VmHWM:", 0) == 0) peak = std::atol(l.c_str() + 6);
    std::printf("final verdict (batch, whole log, once): %s (%zu errors)%s, %.2f s CPU; peak RSS %.1f MiB\n",
                v.compliant ? "compliant" : "not compliant", v.errors.size(),
                v.errors.empty() ? "" : (", first: " + v.errors[0].rule + ": " + v.errors[0].message).c_str(), t,
                static_cast<double>(peak) / 1024.0);
  }
  return 0;
}
