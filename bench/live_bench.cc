// The live checker's throughput: lines of a real result log fed one by one
// through harness::LiveChecker (checking at most every 200 ms, as the
// harness does), in lines per second. bench/live_follow follows a
// million-line log.
//
//   REFEREE_REFERENCE_DATA=../shared build/live_bench
//
// Without the reference data a log of the example package is used.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/live_check.h"
#include "rules/source.h"

namespace fs = std::filesystem;
using namespace referee;

namespace {

struct Input {
  std::string ruleset, rules_flag, path;
};

Input pick() {
  const char* d = std::getenv("REFEREE_REFERENCE_DATA");
  std::string shared = d && *d ? d : std::string(REFEREE_SOURCE_DIR) + "/../shared";
  std::string gpt3 = shared + "/mlperf/training_results_v3.1/Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3/result_0.txt";
  if (fs::exists(gpt3)) return {"training-3.1.0", shared + "/mlperf/logging/mlperf_logging", gpt3};
  return {"mini-1.0.0", "",
          std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt"};
}

void BM_LiveChecker(benchmark::State& state) {
  Input in = pick();
  std::string error;
  rules::RuleSource src;
  auto rs = rules::resolve_ruleset(in.ruleset, in.rules_flag, &src, &error);
  if (!rs) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::vector<std::string> lines;
  std::ifstream f(in.path);
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  size_t total = 0;
  for (auto _ : state) {
    harness::LiveChecker live(*rs, std::chrono::milliseconds(state.range(0)));
    for (const auto& l : lines) benchmark::DoNotOptimize(live.add_line(l));
    benchmark::DoNotOptimize(live.check_now());
    total += lines.size();
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  state.SetLabel(fs::path(in.path).filename().string() + " of " + in.ruleset + ", " + std::to_string(lines.size()) + " lines");
}
BENCHMARK(BM_LiveChecker)->Arg(200)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
