// Cost of writing MLLOG events with mllog::Logger, per event. For scale: the
// consortium's Python logger costs about 100 us per event (file and stdout
// handlers, caller lookup; ../shared/README.md).
//
//   BM_AsyncEvent   async mode, file sink /dev/null: what the caller's thread
//                   pays, steady state (when the writer thread cannot keep up,
//                   the bounded queue makes callers wait, and that is counted)
//   BM_AsyncBurst   async mode: bursts of 1024 events into a queue with room
//                   for them, flushed outside the timing: the capture alone
//   BM_SyncEvent    sync mode, file sink /dev/null: capture, format and
//                   write(2) on the caller's thread
//   BM_Capture      CapturedEvent::assign alone (what the caller does in async mode)
//   BM_Format       CapturedEvent::format_json alone (what the writer does)
//
// The argument picks the event: 0 eval_accuracy (a double, one metadata
// field), 1 block_start (null, two metadata fields), 2 tracked_stats (an
// object value), 3 submission_platform (a string).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "mllog/constants.h"
#include "mllog/writer.h"

namespace {

using namespace referee::mllog;

void log_one(Logger& log, int kind, int64_t i) {
  switch (kind) {
    case 0: log.event(kEvalAccuracy, 0.7205, {{kEpochNum, i}}); break;
    case 1: log.start(kBlockStart, nullptr, {{kFirstEpochNum, i}, {kEpochCount, 1}}); break;
    case 2:
      log.event("tracked_stats", LogValue::object({{"throughput", 31000.5 + static_cast<double>(i % 7)}}),
                {{"step", i}});
      break;
    default: log.event(kSubmissionPlatform, "8xNVIDIA DGX H100 (referee bench)"); break;
  }
}

void capture_one(CapturedEvent* ev, int kind, int64_t i) {
  static const LogValue kStats = LogValue::object({{"throughput", 31000.5}});
  switch (kind) {
    case 0: ev->assign(EventType::kPointInTime, i, std::nullopt, kEvalAccuracy, 0.7205, {{kEpochNum, i}}, __FILE__, __LINE__); break;
    case 1:
      ev->assign(EventType::kIntervalStart, i, std::nullopt, kBlockStart, nullptr, {{kFirstEpochNum, i}, {kEpochCount, 1}},
                 __FILE__, __LINE__);
      break;
    case 2: ev->assign(EventType::kPointInTime, i, std::nullopt, "tracked_stats", kStats, {{"step", i}}, __FILE__, __LINE__); break;
    default:
      ev->assign(EventType::kPointInTime, i, std::nullopt, kSubmissionPlatform, "8xNVIDIA DGX H100 (referee bench)", {},
                 __FILE__, __LINE__);
      break;
  }
}

void set_labels(benchmark::State& state) {
  static const char* const kNames[] = {"eval_accuracy", "block_start", "tracked_stats", "submission_platform"};
  state.SetLabel(kNames[state.range(0) & 3]);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_AsyncEvent(benchmark::State& state) {
  static std::unique_ptr<Logger> log;
  if (state.thread_index() == 0) log = std::make_unique<Logger>(Options{.file = "/dev/null", .queue_capacity = 4096});
  int kind = static_cast<int>(state.range(0));
  int64_t i = 0;
  for (auto _ : state) log_one(*log, kind, i++);
  // The timed loop starts and ends with a barrier across the benchmark's
  // threads, so thread 0 made the Logger before anyone logs; it is replaced
  // (flushed and destroyed) at the start of the next run.
  if (state.thread_index() == 0) state.counters["waits"] = static_cast<double>(log->stats().waits);
  set_labels(state);
}
BENCHMARK(BM_AsyncEvent)->Arg(0)->Arg(1)->Arg(2)->Arg(3);
BENCHMARK(BM_AsyncEvent)->Arg(0)->Threads(2)->UseRealTime();

void BM_AsyncBurst(benchmark::State& state) {
  constexpr int kBurst = 1024;
  Logger log(Options{.file = "/dev/null", .queue_capacity = 2 * kBurst});
  int kind = static_cast<int>(state.range(0));
  int64_t i = 0;
  for (auto _ : state) {
    for (int k = 0; k < kBurst; ++k) log_one(log, kind, i++);
    state.PauseTiming();
    log.flush();
    state.ResumeTiming();
  }
  set_labels(state);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kBurst);
  state.counters["waits"] = static_cast<double>(log.stats().waits);
}
BENCHMARK(BM_AsyncBurst)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

void BM_SyncEvent(benchmark::State& state) {
  Logger log(Options{.file = "/dev/null", .mode = WriteMode::kSync});
  int kind = static_cast<int>(state.range(0));
  int64_t i = 0;
  for (auto _ : state) log_one(log, kind, i++);
  set_labels(state);
}
BENCHMARK(BM_SyncEvent)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

void BM_Capture(benchmark::State& state) {
  CapturedEvent ev;
  int kind = static_cast<int>(state.range(0));
  int64_t i = 0;
  for (auto _ : state) {
    capture_one(&ev, kind, i++);
    benchmark::DoNotOptimize(ev);
  }
  set_labels(state);
}
BENCHMARK(BM_Capture)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

void BM_Format(benchmark::State& state) {
  CapturedEvent ev;
  capture_one(&ev, static_cast<int>(state.range(0)), 1700000000000);
  std::string out;
  for (auto _ : state) {
    out.clear();
    ev.format_json(&out, "");
    benchmark::DoNotOptimize(out.data());
  }
  set_labels(state);
  state.counters["line_bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_Format)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

}  // namespace

BENCHMARK_MAIN();
