// Writing MLLOG lines from C++ training code, exactly as the consortium's
// Python logger writes them (mlcommons/logging, mlperf_logging/mllog):
//
//   :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "POINT_IN_TIME",
//             "key": "eval_accuracy", "value": 0.72, "metadata": {"file": "train.cc", "lineno": 42, "epoch_num": 3}}
//
// (one line in the file). The JSON is what Python's json.dumps writes for the
// logger's ordered dict: keys in that order, separators ", " and ": ",
// ensure_ascii escaping, floats as repr() writes them, NaN and Infinity bare.
//
//   referee::mllog::Logger log({.file = "result_0.txt", .stream = &std::cout});
//   log.event(kEvalAccuracy, 0.72, {{kEpochNum, 3}});
//
// Threading: every Logger method may be called from any number of threads at
// once. In the default asynchronous mode the caller only captures the event
// (key, value, metadata, time, call site) into a bounded queue; one writer
// thread per Logger formats and writes. See docs/mllog-writer.md.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

#include "mllog/constants.h"

namespace referee::mllog {

enum class EventType : uint8_t { kPointInTime, kIntervalStart, kIntervalEnd };

// "POINT_IN_TIME", "INTERVAL_START", "INTERVAL_END".
std::string_view event_type_name(EventType type);

struct LogField;

// A JSON value to log: null, bool, integer, double, string, or a list or
// object of those. Implicit from the scalar types, so that call sites read
// `log.event(kSeed, 42)`; lists and objects come from array() and object().
// Strings are bytes, taken as UTF-8 (see append_py_json_string).
class LogValue {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kUInt, kDouble, kString, kArray, kObject };

  // The constructors that are not templates are defined below LogField:
  // clang compiles them at the end of this class, where LogField is incomplete.
  LogValue();  // null
  LogValue(std::nullptr_t);
  // Exactly bool: a template, so that nothing converts to bool on the way in.
  template <typename T>
    requires std::is_same_v<T, bool>
  LogValue(T b) : kind_(Kind::kBool), b_(b) {}
  // Any integer type but bool and the character types (a char is not a number).
  template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
             !std::is_same_v<T, wchar_t> && !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> &&
             !std::is_same_v<T, char32_t>)
  LogValue(T v) {
    if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::kInt;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::kUInt;
      u_ = static_cast<uint64_t>(v);
    }
  }
  template <typename T>
    requires std::is_floating_point_v<T>
  LogValue(T v) : kind_(Kind::kDouble), d_(static_cast<double>(v)) {}
  LogValue(const char* s);  // nullptr: null
  LogValue(char* s);
  // No other pointer converts (it would silently become a bool).
  template <typename T>
  LogValue(T*) = delete;
  LogValue(std::string_view s);
  LogValue(std::string s);

  // A list: LogValue::array({1, "two", 3.0}).
  static LogValue array(std::initializer_list<LogValue> items);
  static LogValue array(std::vector<LogValue> items);
  // An object: LogValue::object({{"throughput", 1234.5}, {"step", 7}}). Like a
  // Python dict, a repeated key keeps its first position and takes the last value.
  static LogValue object(std::initializer_list<LogField> fields);
  static LogValue object(std::vector<LogField> fields);

  // Appends to a list (a null value becomes an empty list first).
  // REQUIRES: kind() is kNull or kArray.
  LogValue& push_back(LogValue v);
  // Sets a field of an object, replacing an existing one in place (a null
  // value becomes an empty object first). REQUIRES: kind() is kNull or kObject.
  LogValue& set(std::string_view key, LogValue v);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  // REQUIRES: kind() is the accessor's kind (kBool for as_bool(), ...).
  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  uint64_t as_uint() const { return u_; }
  double as_double() const { return d_; }
  const std::string& as_string() const { return s_; }
  const std::vector<LogValue>& items() const { return items_; }
  const std::vector<LogField>& fields() const { return fields_; }

 private:
  Kind kind_ = Kind::kNull;
  union {
    bool b_;
    int64_t i_ = 0;
    uint64_t u_;
    double d_;
  };
  std::string s_;
  std::vector<LogValue> items_;
  std::vector<LogField> fields_;
};

// One key and value of an object or of the metadata. Implicit from a braced
// pair, so that `{{kEpochNum, 3}, {"status", kSuccess}}` is metadata.
struct LogField {
  LogField(std::string_view k, LogValue v) : key(k), value(std::move(v)) {}
  std::string key;
  LogValue value;
};

inline LogValue::LogValue() {}
inline LogValue::LogValue(std::nullptr_t) {}
inline LogValue::LogValue(const char* s) : kind_(s ? Kind::kString : Kind::kNull), s_(s ? s : "") {}
inline LogValue::LogValue(char* s) : LogValue(static_cast<const char*>(s)) {}
inline LogValue::LogValue(std::string_view s) : kind_(Kind::kString), s_(s) {}
inline LogValue::LogValue(std::string s) : kind_(Kind::kString), s_(std::move(s)) {}

// The metadata of one event: a view of fields that must stay alive for the
// duration of the call (a braced list at the call site always does).
class Metadata {
 public:
  Metadata() = default;
  Metadata(std::initializer_list<LogField> fields) : fields_(fields.begin(), fields.size()) {}
  Metadata(const std::vector<LogField>& fields) : fields_(fields) {}
  std::span<const LogField> fields() const { return fields_; }

 private:
  std::span<const LogField> fields_;
};

// Where an event was logged: the "file" and "lineno" metadata. A default
// CallSite is the caller's location (std::source_location where the standard
// library has it, the compiler's __builtin_FILE/__builtin_LINE otherwise, as
// clang 14 with libstdc++ 12). `file` must have static storage duration or
// outlive the call.
struct CallSite {
#if defined(__cpp_lib_source_location)
  CallSite(std::source_location where = std::source_location::current())
      : file(where.file_name()), line(where.line()) {}
  CallSite(const char* f, uint32_t l) : file(f), line(l) {}
#else
  CallSite(const char* f = __builtin_FILE(), uint32_t l = __builtin_LINE()) : file(f), line(l) {}
#endif
  const char* file;
  uint32_t line;
};

// Per-call overrides, as the Python logger's keyword arguments.
struct EventOptions {
  std::optional<std::string_view> ns{};  // "namespace"; default: Options::default_namespace
  std::optional<int64_t> time_ms{};      // default: the logger's clock
};

// Milliseconds since the Unix epoch. Implementations must be thread-safe:
// every thread that logs calls now_ms().
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ms() = 0;
};

// The wall clock, truncated to milliseconds: Python's int(time.time() * 1e3).
class SystemClock final : public Clock {
 public:
  int64_t now_ms() override;
};

// A clock for tests: returns start, start + step, start + 2*step, ...
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 0, int64_t step_ms = 0) : now_(start_ms), step_(step_ms) {}
  int64_t now_ms() override;
  void set(int64_t ms);
  void advance(int64_t ms);

 private:
  std::mutex mu_;
  int64_t now_;
  int64_t step_;
};

// Python's repr(float), as json.dumps writes a float: shortest text that
// reads back as the same double ("0.72", "100.0", "1e-05", "1e+16"), and
// NaN, Infinity, -Infinity. Same text as json_number() in json_writer.h, faster.
void append_py_json_float(std::string* out, double d);

// A string as Python's json.dumps writes it (ensure_ascii=True): quotes,
// backslash escapes for \" \\ \b \f \n \r \t, \u00XX for other control
// characters and DEL, \uXXXX (surrogate pairs above U+FFFF) for non-ASCII.
// Bytes are decoded as UTF-8; a byte that does not belong to a valid UTF-8
// sequence is taken as a latin-1 character (as the reader takes log bytes).
void append_py_json_string(std::string* out, std::string_view s);

// One event as the caller's thread captures it: a flat copy of everything
// the line needs, in one buffer that keeps its capacity when reused. The
// Logger's queue holds these; exposed for tools and the benchmarks.
class CapturedEvent {
 public:
  // Copies the event. `ns` null: the formatter's default namespace.
  void assign(EventType type, int64_t time_ms, std::optional<std::string_view> ns, std::string_view key,
              const LogValue& value, Metadata metadata, std::string_view file, uint32_t lineno);

  // Appends the line's JSON object (no ":::MLLOG " token, no newline), as the
  // Python logger writes it: {"namespace", "time_ms", "event_type", "key",
  // "value", "metadata"}, the metadata starting with "file" and "lineno",
  // then the event's fields; a field named like an earlier one replaces its
  // value in place (Python's dict.update). `root_dir` + "/" is trimmed from
  // the start of "file" when it is there (the Python logger's root_dir).
  // REQUIRES: assign() was called.
  void format_json(std::string* out, std::string_view default_ns, std::string_view root_dir = {}) const;

  void swap(CapturedEvent& other) noexcept { tape_.swap(other.tape_); }
  size_t size_bytes() const { return tape_.size(); }

 private:
  std::string tape_;
};

// The JSON object of one line, in one call (captures, then formats).
std::string format_event_json(EventType type, int64_t time_ms, std::string_view ns, std::string_view key,
                              const LogValue& value, Metadata metadata, std::string_view file, uint32_t lineno);

// Called with each line: prefix, ":::MLLOG ", the JSON; no newline.
using LineCallback = std::function<void(std::string_view line)>;

enum class WriteMode {
  kAsync,  // callers enqueue; a writer thread formats and writes
  kSync,   // the calling thread formats and writes before the call returns
};

// Everything a Logger is told at construction. Every field has a default;
// with none set, a Logger writes nowhere (lines still reach no sink).
struct Options {
  // File the lines are appended to (created with mode 0644 if missing).
  // Empty: no file.
  std::string file{};
  // Stream the lines are written to, flushed after each batch (e.g.
  // &std::cout). Not owned; must outlive the Logger. Null: none.
  std::ostream* stream = nullptr;
  // Called with each line, in order, from the writer thread (async) or from
  // the logging thread while the Logger's lock is held (sync). It must not
  // call back into the Logger. Empty: none.
  LineCallback callback{};
  // The "namespace" of events that do not name one (Python: "").
  std::string default_namespace{};
  // Text written before ":::MLLOG " on every line (e.g. "[0] "). Default none.
  std::string prefix{};
  // Directory trimmed, with its "/", from the start of "file" metadata.
  std::string root_dir{};
  // Python's clear_line: an empty line before each line in the file and the
  // stream (the callback never sees it).
  bool clear_line = false;
  WriteMode mode = WriteMode::kAsync;
  // Async: events held before callers wait for the writer (backpressure;
  // nothing is ever dropped). At least 1.
  size_t queue_capacity = 4096;
  // Source of "time_ms". Null: the system clock. Not owned; must outlive the
  // Logger.
  Clock* clock = nullptr;
};

// Writes MLLOG events to the sinks of its Options. Thread-safe.
class Logger {
 public:
  // Opens the file (if any) and, in async mode, starts the writer thread.
  // Never throws for I/O: a file that cannot be opened is reported by
  // error(), and the other sinks still work.
  explicit Logger(Options options);
  // Writes everything enqueued (as flush()), stops the writer thread, closes
  // the file. REQUIRES: no other thread is logging through this Logger.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // A POINT_IN_TIME event: log.event(kEvalAccuracy, 0.72, {{kEpochNum, 3}}).
  void event(std::string_view key, const LogValue& value = {}, Metadata metadata = {}, CallSite where = {}) {
    log(EventType::kPointInTime, key, value, metadata, {}, where);
  }
  // An INTERVAL_START event: log.start(kEpochStart, nullptr, {{kEpochNum, 1}}).
  void start(std::string_view key, const LogValue& value = {}, Metadata metadata = {}, CallSite where = {}) {
    log(EventType::kIntervalStart, key, value, metadata, {}, where);
  }
  // An INTERVAL_END event: log.end(kRunStop, nullptr, {{kStatus, kSuccess}}).
  void end(std::string_view key, const LogValue& value = {}, Metadata metadata = {}, CallSite where = {}) {
    log(EventType::kIntervalEnd, key, value, metadata, {}, where);
  }
  // Any event, with the Python logger's per-call overrides. "file" and
  // "lineno" in `metadata` override the call site's, as in Python.
  void log(EventType type, std::string_view key, const LogValue& value, Metadata metadata,
           const EventOptions& options, CallSite where = {});

  // Returns once every event enqueued before the call (by any thread) has
  // been written to every sink: handed to the kernel (file), written and
  // flushed (stream), passed to the callback. Not an fsync.
  void flush();

  // The first I/O error (opening or writing the file, a failed stream, a
  // callback that threw), or "" when there was none.
  std::string error() const;

  struct Stats {
    uint64_t events = 0;          // events accepted
    uint64_t written = 0;         // events written to the sinks
    uint64_t waits = 0;           // times a caller waited for room in the queue
    uint64_t write_errors = 0;    // failed writes (file or stream) and callback exceptions
  };
  Stats stats() const;

 private:
  void writer_loop();
  // Formats `events` into text_ and hands the lines to the sinks; failures go
  // to batch_errors_. REQUIRES: the caller is the only writer (the writer
  // thread, or a caller holding mu_ in sync mode).
  void write_batch(std::span<const CapturedEvent> events);
  void note_batch_error(std::string message);
  // Moves batch_errors_ into the shared counters. REQUIRES: mu_ held.
  void merge_batch_errors_locked();

  Options opt_;
  SystemClock system_clock_;
  Clock* clock_;
  int fd_ = -1;

  mutable std::mutex mu_;
  std::condition_variable not_empty_;  // writer waits for events
  std::condition_variable not_full_;   // callers wait for room
  std::condition_variable written_cv_; // flush() waits for the writer
  std::vector<CapturedEvent> ring_;    // async queue, queue_capacity slots
  uint64_t head_ = 0;                  // next slot the writer takes
  uint64_t tail_ = 0;                  // next slot a caller fills
  uint64_t written_ = 0;               // events written (async: a prefix of the queue)
  bool writer_sleeping_ = false;
  bool stopping_ = false;
  int full_waiters_ = 0;
  int flush_waiters_ = 0;
  uint64_t events_ = 0;
  uint64_t waits_ = 0;
  uint64_t write_errors_ = 0;
  std::string error_;

  // Writer-side scratch (writer thread, or mu_ held in sync mode).
  std::vector<CapturedEvent> batch_;
  std::string text_;                      // lines, as written to the file and stream
  std::vector<std::pair<size_t, size_t>> line_spans_;  // [begin, end) of each line in text_, for the callback
  uint64_t batch_errors_ = 0;
  std::string batch_error_text_;  // the first of them

  std::thread writer_;
};

}  // namespace referee::mllog
