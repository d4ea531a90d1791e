// Throughput of the MLLOG reader, in bytes per second.
//
//   BM_ReaderParse    LogReader::parse over a synthetic log built in memory
//                     (plain lines, "[1,0]<stdout>:" prefixes, non-MLLOG noise)
//   BM_ScanFloor      only finding the ":::MLLOG " lines (memmem), no parsing:
//                     the floor any reader pays
//   BM_ReaderFiles    LogReader::parse over every result_*.txt under the
//                     directory named by REFEREE_BENCH_DATA (registered only
//                     when the variable is set), files already in memory
//   BM_ReaderFilesOpen  the same, each file opened and mapped every time
//   BM_ReaderFilesRead  the same, each file read with pread into one buffer
//                     kept from file to file, as check-package reads: the
//                     read+parse floor a check of a round stands on
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/memory.h"
#include "mllog/reader.h"

namespace {

using referee::mllog::FileBuffer;
using referee::mllog::LogReader;
using referee::mllog::ParsedLog;

// About `bytes` of log text that looks like a training run's output.
std::string synthetic_log(size_t bytes) {
  std::mt19937 rng(42);
  std::string out;
  out.reserve(bytes + 512);
  long long t = 1700000000000LL;
  int step = 0;
  const char* prefixes[] = {"", "", "", "[1,0]<stdout>:", "0: "};
  const char* noise[] = {
      "Epoch 1: 100%|##########| 1000/1000 [00:42<00:00, 23.5it/s, loss=2.31]",
      "INFO:root:loaded checkpoint from /data/ckpt/model.pt",
      "[1,0]<stderr>:WARNING: some library emitted a warning",
      ""};
  char line[512];
  while (out.size() < bytes) {
    unsigned r = rng() % 100;
    const char* prefix = prefixes[rng() % 5];
    t += rng() % 50;
    if (r < 70) {
      std::snprintf(line, sizeof line,
                    "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                    "\"key\": \"tracked_stats\", \"value\": {\"throughput\": %.1f}, \"metadata\": "
                    "{\"file\": \"train.py\", \"lineno\": 123, \"step\": %d}}\n",
                    prefix, t, 1000.0 + (rng() % 10000) / 10.0, step++);
    } else if (r < 80) {
      std::snprintf(line, sizeof line,
                    "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"POINT_IN_TIME\", "
                    "\"key\": \"eval_accuracy\", \"value\": 0.%06u, \"metadata\": "
                    "{\"file\": \"train.py\", \"lineno\": 456, \"epoch_num\": %d}}\n",
                    prefix, t, static_cast<unsigned>(rng() % 1000000), step / 100);
    } else if (r < 85) {
      std::snprintf(line, sizeof line,
                    "%s:::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"INTERVAL_START\", "
                    "\"key\": \"block_start\", \"value\": null, \"metadata\": "
                    "{\"file\": \"train.py\", \"lineno\": 200, \"first_epoch_num\": %d, \"epoch_count\": 1}}\n",
                    prefix, t, step / 100);
    } else {
      std::snprintf(line, sizeof line, "%s\n", noise[rng() % 4]);
    }
    out += line;
  }
  return out;
}

const std::string& log_text() {
  static const std::string text = synthetic_log(4 << 20);
  return text;
}

void BM_ReaderParse(benchmark::State& state) {
  const std::string& text = log_text();
  LogReader reader;
  ParsedLog log;
  for (auto _ : state) {
    reader.parse(text, &log);
    benchmark::DoNotOptimize(log.events.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.counters["mllog_lines"] = log.mllog_lines;
  state.counters["lines/s"] = benchmark::Counter(static_cast<double>(log.mllog_lines) * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReaderParse)->Unit(benchmark::kMillisecond);

size_t scan_lines(std::string_view text) {
  constexpr std::string_view tok = referee::mllog::kToken;
  size_t n = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* hit = memmem(p, static_cast<size_t>(end - p), tok.data(), tok.size());
    if (!hit) break;
    ++n;
    const void* nl = std::memchr(hit, '\n', static_cast<size_t>(end - static_cast<const char*>(hit)));
    p = nl ? static_cast<const char*>(nl) + 1 : end;
  }
  return n;
}

void BM_ScanFloor(benchmark::State& state) {
  const std::string& text = log_text();
  size_t n = 0;
  for (auto _ : state) {
    n = scan_lines(text);
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.counters["mllog_lines"] = static_cast<double>(n);
}
BENCHMARK(BM_ScanFloor)->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------ real files

std::vector<std::string> result_files(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& p = it->path();
    std::string name = p.filename().string();
    if (it->is_regular_file(ec) && name.rfind("result_", 0) == 0 && p.extension() == ".txt")
      out.push_back(p.string());
  }
  return out;
}

void BM_ReaderFiles(benchmark::State& state, const std::vector<std::string>& paths) {
  std::vector<FileBuffer> buffers(paths.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string err;
    if (!buffers[i].open(paths[i], &err)) {
      state.SkipWithError(err.c_str());
      return;
    }
    bytes += static_cast<int64_t>(buffers[i].view().size());
  }
  LogReader reader;
  ParsedLog log;
  uint64_t lines = 0;
  for (auto _ : state) {
    lines = 0;
    for (const auto& b : buffers) {
      reader.parse(b.view(), &log);
      lines += log.mllog_lines;
    }
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
  state.counters["files"] = static_cast<double>(paths.size());
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["mllog_lines"] = static_cast<double>(lines);
}

void BM_ReaderFilesOpen(benchmark::State& state, const std::vector<std::string>& paths) {
  LogReader reader;
  ParsedLog log;
  int64_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const auto& path : paths) {
      FileBuffer b;
      std::string err;
      if (!b.open(path, &err)) {
        state.SkipWithError(err.c_str());
        return;
      }
      reader.parse(b.view(), &log);
      bytes += static_cast<int64_t>(b.view().size());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

void BM_ReaderFilesRead(benchmark::State& state, const std::vector<std::string>& paths) {
  LogReader reader;
  ParsedLog log;
  size_t cap = 0;
  for (const auto& path : paths) cap = std::max(cap, static_cast<size_t>(std::filesystem::file_size(path)));
  cap = std::max<size_t>(cap, 1);
  char* buf = static_cast<char*>(referee::base::map_buffer(cap));
  if (!buf) {
    state.SkipWithError("out of memory");
    return;
  }
  int64_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const auto& path : paths) {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        state.SkipWithError(("cannot open " + path).c_str());
        referee::base::free_buffer(buf, cap);
        return;
      }
      size_t have = 0;
      while (have < cap) {
        ssize_t n = ::pread(fd, buf + have, cap - have, static_cast<off_t>(have));
        if (n <= 0) break;
        have += static_cast<size_t>(n);
      }
      ::close(fd);
      reader.parse(std::string_view(buf, have), &log);
      bytes += static_cast<int64_t>(have);
    }
  }
  referee::base::free_buffer(buf, cap);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static std::vector<std::string> paths;
  if (const char* dir = std::getenv("REFEREE_BENCH_DATA"); dir && *dir) {
    paths = result_files(dir);
    if (paths.empty()) {
      std::fprintf(stderr, "REFEREE_BENCH_DATA=%s: no result_*.txt files found\n", dir);
    } else {
      benchmark::RegisterBenchmark("BM_ReaderFiles", [](benchmark::State& s) { BM_ReaderFiles(s, paths); })
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark("BM_ReaderFilesOpen", [](benchmark::State& s) { BM_ReaderFilesOpen(s, paths); })
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark("BM_ReaderFilesRead", [](benchmark::State& s) { BM_ReaderFilesRead(s, paths); })
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
