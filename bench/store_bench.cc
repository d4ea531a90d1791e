// Store benchmarks: importing the reference rounds, and the latency of the
// questions the store answers (compare, speedup, scaling, leaderboard).
//
//   REFEREE_REFERENCE_DATA=../shared build/store_bench
//
// Without the reference data only the example package is used.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "rules/facts.h"
#include "rules/source.h"
#include "submissions/import.h"
#include "submissions/queries.h"
#include "submissions/store.h"

namespace fs = std::filesystem;
using namespace referee;

namespace {

std::string reference_dir() {
  const char* d = std::getenv("REFEREE_REFERENCE_DATA");
  return d && *d ? d : std::string(REFEREE_SOURCE_DIR) + "/../shared";
}

struct Round {
  const char* ruleset;
  const char* dir;
};
const Round kRounds[] = {{"training-3.0.0", "training_results_v3.0"}, {"training-3.1.0", "training_results_v3.1"}};

bool have_data() { return fs::exists(reference_dir() + "/mlperf/training_results_v3.1"); }

// Imports both rounds into `db`; returns false when the data is missing.
bool import_all(const std::string& db, int jobs) {
  std::string error;
  auto store = submissions::Store::open(db, &error);
  if (!store) return false;
  for (const auto& r : kRounds) {
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset(r.ruleset, reference_dir() + "/mlperf/logging/mlperf_logging", &src, &error);
    if (!rs) return false;
    rules::RoundFacts facts;
    if (!rules::facts_for(*rs, &facts, &error)) return false;
    submissions::ImportOptions opt;
    opt.jobs = jobs;
    for (const auto& pkg : submissions::find_packages(reference_dir() + "/mlperf/" + r.dir)) {
      submissions::ImportResult res;
      if (!submissions::import_package(*store, *rs, facts, pkg, opt, &res, &error)) return false;
    }
  }
  return true;
}

std::string fresh_db(const char* name) {
  fs::path p = fs::temp_directory_path() / (std::string("referee-bench-") + name + "-" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
  return p.string();
}

void BM_ImportBothRounds(benchmark::State& state) {
  if (!have_data()) {
    state.SkipWithError("reference data not found (set REFEREE_REFERENCE_DATA)");
    return;
  }
  for (auto _ : state) {
    std::string db = fresh_db("import");
    if (!import_all(db, static_cast<int>(state.range(0)))) {
      state.SkipWithError("import failed");
      return;
    }
  }
}
BENCHMARK(BM_ImportBothRounds)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

submissions::Store& query_store() {
  static std::unique_ptr<submissions::Store> store = [] {
    std::string db = fresh_db("query");
    import_all(db, 2);
    std::string error;
    return submissions::Store::open(db, &error);
  }();
  return *store;
}

// Times one question on the query store; skipped without the reference data.
template <class Question>
void time_question(benchmark::State& state, Question question) {
  if (!have_data()) {
    state.SkipWithError("reference data not found");
    return;
  }
  auto& s = query_store();
  std::string error;
  for (auto _ : state) {
    auto answer = question(s, &error);
    benchmark::DoNotOptimize(answer);
  }
}

void BM_Compare(benchmark::State& state) {
  time_question(state, [](submissions::Store& s, std::string* error) {
    return submissions::find_results(s, {"training-3.1.0", "gpt3", "", false},
                                     {"NVIDIA/eos-dfw_n1344_ngc23.09_nemo", "Azure+NVIDIA/ND_H100_v5_n1344_pytorch"}, error);
  });
}
BENCHMARK(BM_Compare)->Unit(benchmark::kMicrosecond);

void BM_Speedup(benchmark::State& state) {
  time_question(state, [](submissions::Store& s, std::string* error) {
    submissions::SpeedupReport sp;
    submissions::speedups(s, {"training-3.0.0", "training-3.1.0", "gpt3", false, "", false}, &sp, error);
    return sp;
  });
}
BENCHMARK(BM_Speedup)->Unit(benchmark::kMicrosecond);

void BM_Scaling(benchmark::State& state) {
  time_question(state, [](submissions::Store& s, std::string* error) {
    return submissions::scaling(s, {"training-3.1.0", "gpt3", "", false}, "NVIDIA", error);
  });
}
BENCHMARK(BM_Scaling)->Unit(benchmark::kMicrosecond);

void BM_Leaderboard(benchmark::State& state) {
  time_question(state, [](submissions::Store& s, std::string* error) {
    return submissions::leaderboard(s, {"training-3.1.0", "bert", "", false}, error);
  });
}
BENCHMARK(BM_Leaderboard)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
