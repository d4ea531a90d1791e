// The MLLOG writer: lines exactly as the consortium's Python logger writes
// them, its threading guarantees, and logs it writes passing the
// consortium's rule files.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mllog/constants.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "mllog/reader.h"
#include "mllog/writer.h"
#include "rules/compliance.h"
#include "rules/source.h"
#include "tests/reference_data.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee::mllog;

namespace {

constexpr int64_t kT0 = 1700000000000;  // a time_ms in November 2023

using referee::testing::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Collects the lines a Logger hands its callback.
struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  LineCallback sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lk(mu);
      lines.emplace_back(line);
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lk(mu);
    return lines.size();
  }
};

// The JSON of one value as the writer puts it in a line.
std::string value_json(const LogValue& v) {
  std::string line = format_event_json(EventType::kPointInTime, 0, "", "k", v, {}, "f", 1);
  const std::string head = R"("value": )";
  const std::string tail = R"(, "metadata": {"file": "f", "lineno": 1}})";
  size_t b = line.find(head);
  REQUIRE(b != std::string::npos);
  REQUIRE(line.size() >= tail.size());
  REQUIRE(line.compare(line.size() - tail.size(), tail.size(), tail) == 0);
  b += head.size();
  return line.substr(b, line.size() - tail.size() - b);
}

}  // namespace

TEST_SUITE("writer") {

TEST_CASE("a line is the Python logger's line, key for key and byte for byte") {
  FakeClock clock(kT0);
  Lines out;
  Logger log({.callback = out.sink(), .mode = WriteMode::kSync, .clock = &clock});
  log.event(kEvalAccuracy, 0.72, {{kEpochNum, 3}}, CallSite("train.cc", 42));
  REQUIRE(out.size() == 1);
  // Python: ':::MLLOG ' + json.dumps(OrderedDict(namespace=..., time_ms=..., event_type=..., key=..., value=..., metadata=...))
  CHECK(out.lines[0] ==
        R"(:::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", )"
        R"("value": 0.72, "metadata": {"file": "train.cc", "lineno": 42, "epoch_num": 3}})");
}

TEST_CASE("interval events and the default value") {
  FakeClock clock(kT0, 5);
  Lines out;
  Logger log({.callback = out.sink(), .mode = WriteMode::kSync, .clock = &clock});
  log.start(kRunStart, nullptr, {}, CallSite("t.cc", 1));
  log.end(kRunStop, {}, {{kStatus, kSuccess}}, CallSite("t.cc", 2));
  log.event(kCacheClear, true, {}, CallSite("t.cc", 3));
  REQUIRE(out.size() == 3);
  CHECK(out.lines[0] == R"(:::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "INTERVAL_START", )"
                        R"("key": "run_start", "value": null, "metadata": {"file": "t.cc", "lineno": 1}})");
  CHECK(out.lines[1] == R"(:::MLLOG {"namespace": "", "time_ms": 1700000000005, "event_type": "INTERVAL_END", )"
                        R"("key": "run_stop", "value": null, "metadata": {"file": "t.cc", "lineno": 2, "status": "success"}})");
  CHECK(out.lines[2] == R"(:::MLLOG {"namespace": "", "time_ms": 1700000000010, "event_type": "POINT_IN_TIME", )"
                        R"("key": "cache_clear", "value": true, "metadata": {"file": "t.cc", "lineno": 3}})");
}

TEST_CASE("values as json.dumps writes them") {
  // Expected texts: Python 3.11, json.dumps(v).
  CHECK(value_json(nullptr) == "null");
  CHECK(value_json(LogValue()) == "null");
  CHECK(value_json(static_cast<const char*>(nullptr)) == "null");
  CHECK(value_json(true) == "true");
  CHECK(value_json(false) == "false");
  CHECK(value_json(0) == "0");
  CHECK(value_json(-7) == "-7");
  CHECK(value_json(std::numeric_limits<int64_t>::min()) == "-9223372036854775808");
  CHECK(value_json(std::numeric_limits<uint64_t>::max()) == "18446744073709551615");
  CHECK(value_json(static_cast<unsigned char>(200)) == "200");
  CHECK(value_json(size_t{768}) == "768");
  CHECK(value_json(0.1) == "0.1");
  CHECK(value_json(1e16) == "1e+16");
  CHECK(value_json(1e-5) == "1e-05");
  CHECK(value_json(0.0001) == "0.0001");
  CHECK(value_json(123456789.0) == "123456789.0");
  CHECK(value_json(100.0) == "100.0");
  CHECK(value_json(3680.0) == "3680.0");
  CHECK(value_json(-0.0) == "-0.0");
  CHECK(value_json(1.5e300) == "1.5e+300");
  CHECK(value_json(5e-324) == "5e-324");
  CHECK(value_json(1234567890123456.7) == "1234567890123456.8");
  CHECK(value_json(1.0 / 3) == "0.3333333333333333");
  CHECK(value_json(1e22) == "1e+22");
  CHECK(value_json(12345678901234567890.0) == "1.2345678901234567e+19");
  CHECK(value_json(0.72f) == "0.7200000286102295");  // a float widens to double, as numpy's float32 does
  CHECK(value_json(std::nan("")) == "NaN");
  CHECK(value_json(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(value_json(-std::numeric_limits<double>::infinity()) == "-Infinity");
  CHECK(value_json("bert") == R"("bert")");
  CHECK(value_json(std::string("closed")) == R"("closed")");
  CHECK(value_json(kSuccess) == R"("success")");
  CHECK(value_json(LogValue::array({1, "two", 3.0, LogValue::array({}), LogValue::object({}),
                                    LogValue::object({{"a", LogValue::array({nullptr, true})}})})) ==
        R"([1, "two", 3.0, [], {}, {"a": [null, true]}])");
  CHECK(value_json(LogValue::object({{"throughput", 1234.5}, {"step", 7}})) == R"({"throughput": 1234.5, "step": 7})");
  // A repeated key keeps its first place and takes the last value, as in a Python dict.
  CHECK(value_json(LogValue::object({{"a", 1}, {"b", 2}, {"a", 3}})) == R"({"a": 3, "b": 2})");
  LogValue built;
  built.set("x", 1).set("y", LogValue().push_back(1).push_back("z")).set("x", 2);
  CHECK(value_json(built) == R"({"x": 2, "y": [1, "z"]})");
}

TEST_CASE("only the intended types convert to a value") {
  static_assert(std::is_convertible_v<int, LogValue>);
  static_assert(std::is_convertible_v<double, LogValue>);
  static_assert(std::is_convertible_v<const char*, LogValue>);
  static_assert(std::is_convertible_v<std::string_view, LogValue>);
  static_assert(!std::is_convertible_v<char, LogValue>);    // a char is not a number
  static_assert(!std::is_convertible_v<int*, LogValue>);    // nor a pointer a bool
  static_assert(!std::is_convertible_v<void*, LogValue>);
  CHECK(LogValue(true).kind() == LogValue::Kind::kBool);
  CHECK(LogValue(3u).kind() == LogValue::Kind::kUInt);
  CHECK(LogValue(int16_t{-3}).as_int() == -3);
}

TEST_CASE("strings are escaped as json.dumps does (ensure_ascii)") {
  // Python: json.dumps('q"b\\n\nt\tr\rb\bf\f\x01\x1f\x7f é € 😀 /')
  CHECK(value_json("q\"b\\n\nt\tr\rb\bf\f\x01\x1f\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 /") ==
        R"("q\"b\\n\nt\tr\rb\bf\f\u0001\u001f\u007f \u00e9 \u20ac \ud83d\ude00 /")");
  // A NUL inside the string.
  CHECK(value_json(std::string_view("a\0b", 3)) == R"("a\u0000b")");
  // Bytes that are not UTF-8 are read as latin-1 characters (as the reader reads log bytes).
  CHECK(value_json("\xff") == R"("\u00ff")");
  CHECK(value_json("\xc3") == R"("\u00c3")");             // truncated sequence
  CHECK(value_json("\xc0\xaf") == R"("\u00c0\u00af")");   // overlong
  CHECK(value_json("\xed\xa0\x80") == R"("\u00ed\u00a0\u0080")");  // a UTF-16 surrogate
  CHECK(value_json("\xf4\x90\x80\x80") == R"("\u00f4\u0090\u0080\u0080")");  // above U+10FFFF
  // Keys and metadata are escaped the same way.
  std::string line = format_event_json(EventType::kPointInTime, 1, "ns\"", "k\xc3\xa9", nullptr,
                                       {{"m\n", "v"}}, "dir\\f.cc", 9);
  CHECK(line == R"({"namespace": "ns\"", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "k\u00e9", "value": null, )"
                R"("metadata": {"file": "dir\\f.cc", "lineno": 9, "m\n": "v"}})");
}

TEST_CASE("floats match repr() over many doubles") {
  // json_number (json_writer.h) is the reference implementation of repr():
  // slow and plainly written. The writer's fast one must agree everywhere.
  std::mt19937_64 rng(20240611);
  auto check = [](double d) {
    std::string got;
    append_py_json_float(&got, d);
    REQUIRE_MESSAGE(got == json_number(d), "bits " << std::hex << std::bit_cast<uint64_t>(d));
  };
  for (int i = 0; i < 200000; ++i) {
    double d = std::bit_cast<double>(rng());
    check(d);
  }
  std::uniform_int_distribution<int> digits(1, 17);
  std::uniform_int_distribution<int> exps(-30, 30);
  for (int i = 0; i < 100000; ++i) {
    // Short decimals, as hyperparameters are written.
    double d = static_cast<double>(rng() % 1000000) * std::pow(10.0, exps(rng));
    check(d);
    check(-d);
    check(static_cast<double>(rng() % 100000000000000000ULL) / std::pow(10.0, digits(rng)));
  }
  for (double d : {1e15, 1e16, 9999999999999998.0, 1e-4, 0.00011, 9.999e-5, 1e308, 2.2250738585072014e-308,
                   std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()})
    check(d);
}

TEST_CASE("file and lineno come from the call site, and metadata overrides them as dict.update does") {
  FakeClock clock(kT0);
  Lines out;
  Logger log({.callback = out.sink(), .mode = WriteMode::kSync, .clock = &clock});
  log.event("here"); const unsigned here = __LINE__;  // NOLINT: one line on purpose
  REQUIRE(out.size() == 1);
  std::string expect_site = std::string(R"("metadata": {"file": )") +
                            [] { std::string s; append_py_json_string(&s, __FILE__); return s; }() +
                            R"(, "lineno": )" + std::to_string(here) + "}}";
  CHECK(out.lines[0].find(expect_site) != std::string::npos);
  CHECK(std::string(__FILE__).find("writer_test.cc") != std::string::npos);

  // An explicit call site.
  log.event("k", 1, {}, CallSite("/src/train.cc", 7));
  CHECK(out.lines[1].ends_with(R"("metadata": {"file": "/src/train.cc", "lineno": 7}})"));

  // "file"/"lineno" in the metadata replace the call site's in place; a
  // repeated key takes the last value in the first place.
  log.event("k", 1, {{"epoch_num", 1}, {"lineno", 99}, {"epoch_num", 2}, {"file", "x.py"}}, CallSite("a.cc", 3));
  CHECK(out.lines[2].ends_with(R"("metadata": {"file": "x.py", "lineno": 99, "epoch_num": 2}})"));

  // Metadata built at run time, nested values included.
  std::vector<LogField> md;
  md.emplace_back("step", 12);
  md.emplace_back("shape", LogValue::array({2, 3}));
  log.event("k", nullptr, md, CallSite("a.cc", 4));
  CHECK(out.lines[3].ends_with(R"("metadata": {"file": "a.cc", "lineno": 4, "step": 12, "shape": [2, 3]}})"));

  // More fields than fit the formatter's inline table.
  std::vector<LogField> many;
  std::string want;
  for (int i = 0; i < 40; ++i) {
    // Built with append(): g++ 12 warns falsely (-Wrestrict) on chains of operator+.
    std::string name = "f";
    name.append(std::to_string(i));
    many.emplace_back(name, i);
    want.append(", \"").append(name).append("\": ").append(std::to_string(i));
  }
  many.emplace_back("f3", "again");
  log.event("k", nullptr, many, CallSite("a.cc", 5));
  CHECK(out.lines[4].ends_with(R"("metadata": {"file": "a.cc", "lineno": 5)" +
                                std::string(want).replace(want.find("\"f3\": 3"), 7, "\"f3\": \"again\"") + "}}"));
}

TEST_CASE("root_dir is trimmed from file, as the Python logger's root_dir") {
  Lines out;
  FakeClock clock(kT0);
  Logger log({.callback = out.sink(), .root_dir = "/workspace/bert", .mode = WriteMode::kSync, .clock = &clock});
  log.event("k", 1, {}, CallSite("/workspace/bert/run_pretraining.py", 1));
  log.event("k", 1, {}, CallSite("/workspace/bert2/x.py", 2));  // not under root_dir: kept
  log.event("k", 1, {}, CallSite("/workspace/bert", 3));        // root_dir itself: kept
  REQUIRE(out.size() == 3);
  CHECK(out.lines[0].ends_with(R"({"file": "run_pretraining.py", "lineno": 1}})"));
  CHECK(out.lines[1].ends_with(R"({"file": "/workspace/bert2/x.py", "lineno": 2}})"));
  CHECK(out.lines[2].ends_with(R"({"file": "/workspace/bert", "lineno": 3}})"));
}

TEST_CASE("namespace and time: defaults and per-call overrides") {
  FakeClock clock(kT0);
  Lines out;
  Logger log({.callback = out.sink(), .default_namespace = "GPU0", .mode = WriteMode::kSync, .clock = &clock});
  log.event("k", 1, {}, CallSite("a.cc", 1));
  log.log(EventType::kPointInTime, "k", 2, {}, {.ns = "worker", .time_ms = 5}, CallSite("a.cc", 2));
  log.log(EventType::kIntervalEnd, "k", 3, {}, {.ns = ""}, CallSite("a.cc", 3));
  clock.advance(1000);
  log.event("k", 4, {}, CallSite("a.cc", 4));
  REQUIRE(out.size() == 4);
  CHECK(out.lines[0].starts_with(R"(:::MLLOG {"namespace": "GPU0", "time_ms": 1700000000000, )"));
  CHECK(out.lines[1].starts_with(R"(:::MLLOG {"namespace": "worker", "time_ms": 5, "event_type": "POINT_IN_TIME")"));
  CHECK(out.lines[2].starts_with(R"(:::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "INTERVAL_END")"));
  CHECK(out.lines[3].starts_with(R"(:::MLLOG {"namespace": "GPU0", "time_ms": 1700000001000, )"));

  // The system clock: milliseconds since the epoch, now.
  SystemClock sys;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(std::llabs(sys.now_ms() - now) < 5000);
}

TEST_CASE("file, stream and callback sinks; prefix and clear_line") {
  TempDir dir;
  fs::path file = dir.path / "result_0.txt";
  {
    std::ofstream pre(file);
    pre << "launcher output\n";
  }
  std::ostringstream stream;
  Lines cb;
  FakeClock clock(kT0);
  {
    Logger log({.file = file.string(), .stream = &stream, .callback = cb.sink(), .prefix = "[0] ",
                .clear_line = true, .clock = &clock});
    log.event("a", 1, {}, CallSite("a.cc", 1));
    log.event("b", 2, {}, CallSite("a.cc", 2));
    CHECK(log.error().empty());
  }
  std::string a = R"([0] :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME", "key": "a", )"
                  R"("value": 1, "metadata": {"file": "a.cc", "lineno": 1}})";
  std::string b = R"([0] :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME", "key": "b", )"
                  R"("value": 2, "metadata": {"file": "a.cc", "lineno": 2}})";
  CHECK(slurp(file) == "launcher output\n\n" + a + "\n\n" + b + "\n");  // appended, not truncated
  CHECK(stream.str() == "\n" + a + "\n\n" + b + "\n");
  REQUIRE(cb.size() == 2);  // the callback gets the lines without newlines
  CHECK(cb.lines[0] == a);
  CHECK(cb.lines[1] == b);

  // And the reader reads them back.
  std::string text = slurp(file);
  LogReader reader;
  ParsedLog parsed;
  reader.parse(text, &parsed);
  CHECK(parsed.errors.empty());
  REQUIRE(parsed.events.size() == 2);
  CHECK(parsed.keys[parsed.events[1].key_id] == "b");
  CHECK(parsed.events[1].time_ms == 1700000000000.0);
}

TEST_CASE("many threads: whole lines, none lost, each thread's in order") {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 4000;
  TempDir dir;
  fs::path file = dir.path / "log.txt";
  std::atomic<uint64_t> callback_lines{0};
  Logger::Stats stats;
  for (WriteMode mode : {WriteMode::kAsync, WriteMode::kSync}) {
    fs::remove(file);
    callback_lines = 0;
    {
      // A small queue, so that callers also meet backpressure.
      Logger log({.file = file.string(),
                  .callback = [&](std::string_view) { callback_lines.fetch_add(1, std::memory_order_relaxed); },
                  .mode = mode,
                  .queue_capacity = 16});
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&log, t] {
          std::string long_text(200 + t * 50, static_cast<char>('a' + t));
          for (int i = 0; i < kPerThread; ++i) {
            if (i % 3 == 0)
              log.event(kEvalAccuracy, 0.5 + i * 1e-6, {{"thread", t}, {"i", i}});
            else if (i % 3 == 1)
              log.start(kBlockStart, long_text, {{"thread", t}, {"i", i}});
            else
              log.event("tracked_stats", LogValue::object({{"throughput", i * 1.5}, {"text", "\"q\"\n"}}),
                        {{"thread", t}, {"i", i}});
          }
        });
      }
      for (auto& th : threads) th.join();
      log.flush();
      stats = log.stats();
      CHECK(log.error().empty());
    }
    INFO("mode " << (mode == WriteMode::kAsync ? "async" : "sync"));
    CHECK(stats.events == uint64_t{kThreads} * kPerThread);
    CHECK(stats.written == uint64_t{kThreads} * kPerThread);
    CHECK(callback_lines.load() == uint64_t{kThreads} * kPerThread);

    std::string text = slurp(file);
    LogReader reader;
    ParsedLog log;
    reader.parse(text, &log);
    CHECK(log.errors.empty());
    REQUIRE(log.events.size() == size_t{kThreads} * kPerThread);
    CHECK(log.mllog_lines == log.events.size());
    // Every line of the file is one whole MLLOG line.
    size_t lines = 0;
    for (size_t p = 0; p < text.size();) {
      size_t nl = text.find('\n', p);
      REQUIRE(nl != std::string::npos);
      REQUIRE(text.compare(p, kToken.size(), kToken) == 0);
      REQUIRE(text[nl - 1] == '}');
      ++lines;
      p = nl + 1;
    }
    CHECK(lines == log.events.size());
    std::vector<int> next(kThreads, 0);
    bool in_order = true;
    for (const auto& ev : log.events) {
      Json j;
      std::string err;
      REQUIRE_MESSAGE(parse_json_permissive(ev.json, &j, &err), err);
      const Json* md = j.find("metadata");
      REQUIRE(md);
      int t = static_cast<int>(md->find("thread")->i);
      int i = static_cast<int>(md->find("i")->i);
      REQUIRE((t >= 0 && t < kThreads));
      if (i != next[t]) in_order = false;
      next[t] = i + 1;
    }
    CHECK(in_order);
    for (int t = 0; t < kThreads; ++t) CHECK(next[t] == kPerThread);
  }
}

TEST_CASE("a full queue makes callers wait; nothing is dropped") {
  std::atomic<bool> gate{false};
  std::atomic<int> seen{0};
  Logger log({.callback =
                  [&](std::string_view) {
                    while (!gate.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    seen.fetch_add(1);
                  },
              .queue_capacity = 2});
  std::thread producer([&] {
    for (int i = 0; i < 6; ++i) log.event("k", i);
  });
  // The writer holds one batch in the callback, the queue holds two more:
  // the producer must come to wait for room.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (log.stats().waits == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Logger::Stats s = log.stats();
  CHECK(s.waits >= 1);
  CHECK(s.events < 6);
  CHECK(seen.load() == 0);
  gate = true;
  producer.join();
  log.flush();
  CHECK(seen.load() == 6);
  CHECK(log.stats().written == 6);
}

TEST_CASE("flush() waits for the writer; the destructor flushes") {
  TempDir dir;
  fs::path file = dir.path / "log.txt";
  std::atomic<int> seen{0};
  {
    Logger log({.file = file.string(), .callback = [&](std::string_view) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
                  seen.fetch_add(1);
                }});
    for (int i = 0; i < 20; ++i) log.event("k", i);
    log.flush();
    CHECK(seen.load() == 20);
    CHECK(log.stats().written == 20);
    std::string text = slurp(file);
    CHECK(std::count(text.begin(), text.end(), '\n') == 20);
    log.flush();  // nothing pending: returns at once
    for (int i = 0; i < 30; ++i) log.event("k", i);
  }  // destructor
  CHECK(seen.load() == 50);
  std::string text = slurp(file);
  CHECK(std::count(text.begin(), text.end(), '\n') == 50);

  // Sync mode: the line is out before the call returns.
  Lines out;
  Logger sync({.callback = out.sink(), .mode = WriteMode::kSync});
  for (int i = 0; i < 5; ++i) {
    sync.event("k", i);
    CHECK(out.size() == static_cast<size_t>(i + 1));
  }
}

TEST_CASE("I/O failures are reported, and the other sinks still get every line") {
  Lines out;
  {
    Logger log({.file = "/nonexistent-referee-dir/sub/result_0.txt", .callback = out.sink()});
    CHECK(log.error().find("cannot open /nonexistent-referee-dir/sub/result_0.txt") == 0);
    log.event("k", 1);
    log.flush();
    CHECK(out.size() == 1);
  }
  int calls = 0;
  Logger log({.callback =
                  [&](std::string_view) {
                    if (++calls == 1) throw std::runtime_error("sink down");
                  },
              .mode = WriteMode::kSync});
  log.event("k", 1);
  log.event("k", 2);
  CHECK(calls == 2);
  CHECK(log.error() == "the line callback threw: sink down");
  CHECK(log.stats().write_errors == 1);
}

}  // TEST_SUITE("writer")

// ------------------------------------------------ the acceptance test

namespace {

// The hyperparameters a closed-division run logs, in order.
struct Run {
  std::string_view benchmark;
  std::vector<LogField> hparams;
  std::vector<double> accuracies;  // one evaluation per block; the last reaches the target
  int64_t samples_per_block;
  int64_t eval_samples;
};

Run bert_run() {
  // Values as in Azure's BERT result of round 3.1 (ND_H100_v5_pytorch).
  return {kBert,
          {{kGlobalBatchSize, 768},
           {kGradientAccumulationSteps, 1},
           {kOptLrTrainingSteps, 3680.0},
           {kNumWarmupSteps, 0},
           {kOptBaseLr, 0.00096},
           {kOptLambEpsilon, 1e-06},
           {kOptLambBeta1, 0.60466},
           {kOptLambBeta2, 0.85437},
           {kOptLambWeightDecay, 0.1},
           {kOptLrWarmupSteps, 0},
           {kOptLambLrDecayPolyPower, 1.0},
           {kStartWarmupStep, 0}},
          {0.378, 0.652, 0.7013, 0.7206},
          768 * 460,
          10000};
}

Run resnet_run() {
  // Values as in Azure's ResNet result of round 3.1 (ND_H100_v5_mxnet).
  return {kResnet,
          {{kGlobalBatchSize, 3200},
           {kGradientAccumulationSteps, 1},
           {kOptName, kLars},
           {kLarsEpsilon, 0.0},
           {kLarsOptWeightDecay, 5e-05},
           {kLarsOptMomentum, 0.9},
           {kLarsOptBaseLearningRate, 11.0},
           {kLarsOptLearningRateWarmupEpochs, 2},
           {kLarsOptLrDecaySteps, 37},
           {kLarsOptEndLr, 0.0001},
           {kLarsOptLrDecayPolyPower, 2}},
          {0.324, 0.611, 0.7402, 0.7597},
          1281167,
          50000};
}

// Writes a whole run the way a training program would: logger calls only.
void log_run(Logger& log, const Run& run) {
  log.event(kCacheClear, true);
  log.start(kInitStart);
  log.event(kSubmissionBenchmark, run.benchmark);
  log.event(kSubmissionOrg, "referee");
  log.event(kSubmissionDivision, kClosed);
  log.event(kSubmissionStatus, kOnprem);
  log.event(kSubmissionPlatform, "1xreferee-test-node");
  log.event(kSeed, 10242);
  for (const auto& h : run.hparams) log.event(h.key, h.value);
  log.end(kInitStop);
  log.start(kRunStart);
  int64_t samples = 0;
  int epoch = 0;
  for (size_t b = 0; b < run.accuracies.size(); ++b) {
    log.start(kBlockStart, nullptr, {{kFirstEpochNum, epoch + 1}, {kEpochCount, 1}});
    log.start(kEpochStart, nullptr, {{kEpochNum, epoch + 1}});
    for (int step = 0; step < 3; ++step)
      log.event("tracked_stats", LogValue::object({{"throughput", 31000.5 + step}}), {{"step", epoch * 3 + step}});
    samples += run.samples_per_block;
    ++epoch;
    log.end(kEpochStop, nullptr, {{kEpochNum, epoch}});
    log.start(kEvalStart, nullptr, {{kEpochNum, epoch}});
    log.end(kEvalStop, nullptr, {{kEpochNum, epoch}});
    log.event(kEvalAccuracy, run.accuracies[b], {{kEpochNum, epoch}, {kSamplesCount, samples}});
    log.end(kBlockStop, nullptr, {{kFirstEpochNum, epoch}});
  }
  log.event(kTrainSamples, samples);
  log.event(kEvalSamples, run.eval_samples);
  log.end(kRunStop, nullptr, {{kStatus, kSuccess}});
}

// The run written through a Logger (async, file sink), read back and checked.
referee::rules::FileVerdict write_and_check(const Run& run, const referee::rules::RuleSet& rules, std::string* text) {
  TempDir dir;
  fs::path file = dir.path / "result_0.txt";
  FakeClock clock(kT0, 1500);  // 1.5 s between events: init takes well under the 30 minutes allowed
  {
    Logger log({.file = file.string(), .clock = &clock});
    log_run(log, run);
    REQUIRE(log.error().empty());
  }
  *text = slurp(file);
  LogReader reader;
  ParsedLog parsed;
  reader.parse(*text, &parsed);
  REQUIRE(parsed.errors.empty());
  return referee::rules::check_log(rules, parsed);
}

std::string describe(const referee::rules::FileVerdict& v) {
  std::string s;
  for (const auto& f : v.errors) s += "\n  error " + f.rule + ": " + f.message;
  for (const auto& f : v.warnings) s += "\n  warning " + f.rule + ": " + f.message;
  return s;
}

bool names_key(const referee::rules::FileVerdict& v, std::string_view key) {
  for (const auto& f : v.errors)
    if (f.key == key || f.rule.find(key) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_SUITE("writer") {

TEST_CASE("a log written with the writer passes the consortium's rules (training 3.1.0), and a wrong value fails") {
  if (!referee::testing::have_reference_data()) return;
  referee::rules::RuleSource source;
  std::string error;
  auto rules = referee::rules::resolve_ruleset("training-3.1.0", referee::testing::reference_rules(), &source, &error);
  REQUIRE_MESSAGE(rules, error);

  struct Case {
    Run run;
    std::string_view key;  // the hyperparameter the variant breaks
    LogValue bad;          // a value the benchmark's rules reject
  };
  const Case cases[] = {
      {bert_run(), kGradientAccumulationSteps, 0},       // closed_common.yaml: v['value'] > 0
      {resnet_run(), kLarsOptLrDecayPolyPower, 1},       // closed_resnet_lars.yaml: v['value'] == 2
      {resnet_run(), kLarsOptEndLr, 0.001},              // closed_resnet_lars.yaml: v['value'] == 0.0001
  };
  for (const auto& c : cases) {
    INFO("benchmark " << c.run.benchmark << ", variant " << c.key);
    std::string text;
    auto verdict = write_and_check(c.run, *rules, &text);
    CHECK_MESSAGE(verdict.compliant, describe(verdict));
    CHECK_MESSAGE(verdict.errors.empty(), describe(verdict));
    CHECK(verdict.mllog_lines > 40);
    CHECK(text.find(R"("key": "submission_benchmark", "value": ")" + std::string(c.run.benchmark) + "\"") !=
          std::string::npos);

    Run bad = c.run;
    bool replaced = false;
    for (auto& h : bad.hparams) {
      if (h.key == c.key) {
        h.value = c.bad;
        replaced = true;
      }
    }
    REQUIRE(replaced);
    auto bad_verdict = write_and_check(bad, *rules, &text);
    CHECK_FALSE(bad_verdict.compliant);
    CHECK_MESSAGE(bad_verdict.errors.size() == 1, describe(bad_verdict));  // that key's CHECK, nothing else
    CHECK_MESSAGE(names_key(bad_verdict, c.key), describe(bad_verdict));
  }
}

}  // TEST_SUITE("writer")
