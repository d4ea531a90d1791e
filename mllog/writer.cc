#include "mllog/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <ostream>

#include "base/digest.h"

namespace referee::mllog {

// ------------------------------------------------------------------ values

std::string_view event_type_name(EventType type) {
  switch (type) {
    case EventType::kPointInTime: return kPointInTime;
    case EventType::kIntervalStart: return kIntervalStart;
    case EventType::kIntervalEnd: return kIntervalEnd;
  }
  return kPointInTime;
}

LogValue LogValue::array(std::initializer_list<LogValue> items) {
  return array(std::vector<LogValue>(items));
}

LogValue LogValue::array(std::vector<LogValue> items) {
  LogValue v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

LogValue LogValue::object(std::initializer_list<LogField> fields) {
  LogValue v;
  v.kind_ = Kind::kObject;
  for (const auto& f : fields) v.set(f.key, f.value);
  return v;
}

LogValue LogValue::object(std::vector<LogField> fields) {
  LogValue v;
  v.kind_ = Kind::kObject;
  for (auto& f : fields) v.set(f.key, std::move(f.value));
  return v;
}

LogValue& LogValue::push_back(LogValue v) {
  if (kind_ == Kind::kNull) kind_ = Kind::kArray;
  items_.push_back(std::move(v));
  return *this;
}

LogValue& LogValue::set(std::string_view key, LogValue v) {
  if (kind_ == Kind::kNull) kind_ = Kind::kObject;
  for (auto& f : fields_) {
    if (f.key == key) {
      f.value = std::move(v);
      return *this;
    }
  }
  fields_.emplace_back(key, std::move(v));
  return *this;
}

// ------------------------------------------------------------------ clocks

int64_t SystemClock::now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t FakeClock::now_ms() {
  std::lock_guard<std::mutex> lk(mu_);
  int64_t t = now_;
  now_ += step_;
  return t;
}

void FakeClock::set(int64_t ms) {
  std::lock_guard<std::mutex> lk(mu_);
  now_ = ms;
}

void FakeClock::advance(int64_t ms) {
  std::lock_guard<std::mutex> lk(mu_);
  now_ += ms;
}

// ------------------------------------------------------- Python's json.dumps

void append_py_json_float(std::string* out, double d) {
  if (std::isnan(d)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(d)) {
    out->append(d > 0 ? "Infinity" : "-Infinity");
    return;
  }
  if (d == 0) {
    out->append(std::signbit(d) ? "-0.0" : "0.0");
    return;
  }
  // Shortest round-trip digits (as Python's repr), then Python's layout.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* p = buf;
  const char* end = res.ptr;
  if (*p == '-') {
    out->push_back('-');
    ++p;
  }
  char digits[32];
  size_t nd = 0;
  for (; p < end && *p != 'e'; ++p)
    if (*p != '.') digits[nd++] = *p;
  int exp10 = 0;
  if (p < end) std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), end, exp10);
  while (nd > 1 && digits[nd - 1] == '0') --nd;
  int decpt = exp10 + 1;  // value = 0.DIGITS x 10^decpt
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out->append("0.");
      out->append(static_cast<size_t>(-decpt), '0');
      out->append(digits, nd);
    } else if (static_cast<size_t>(decpt) >= nd) {
      out->append(digits, nd);
      out->append(static_cast<size_t>(decpt) - nd, '0');
      out->append(".0");
    } else {
      out->append(digits, static_cast<size_t>(decpt));
      out->push_back('.');
      out->append(digits + decpt, nd - static_cast<size_t>(decpt));
    }
    return;
  }
  out->push_back(digits[0]);
  if (nd > 1) {
    out->push_back('.');
    out->append(digits + 1, nd - 1);
  }
  out->push_back('e');
  out->push_back(exp10 < 0 ? '-' : '+');
  int e = exp10 < 0 ? -exp10 : exp10;
  if (e < 10) out->push_back('0');
  char ebuf[8];
  auto er = std::to_chars(ebuf, ebuf + sizeof ebuf, e);
  out->append(ebuf, er.ptr);
}

namespace {

void append_u_escape(std::string* out, uint32_t unit) {
  out->append("\\u", 2);
  base::append_hex(out, static_cast<unsigned char>(unit >> 8));
  base::append_hex(out, static_cast<unsigned char>(unit & 0xFF));
}

bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at p (with its code point), or 0.
size_t decode_utf8(const unsigned char* p, const unsigned char* end, uint32_t* cp) {
  unsigned char c = p[0];
  size_t avail = static_cast<size_t>(end - p);
  if (c >= 0xC2 && c <= 0xDF) {
    if (avail < 2 || !is_cont(p[1])) return 0;
    *cp = (uint32_t(c & 0x1F) << 6) | (p[1] & 0x3F);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || !is_cont(p[1]) || !is_cont(p[2])) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && p[1] > 0x9F) return 0;  // surrogate
    *cp = (uint32_t(c & 0x0F) << 12) | (uint32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || !is_cont(p[1]) || !is_cont(p[2]) || !is_cont(p[3])) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && p[1] > 0x8F) return 0;  // above U+10FFFF
    *cp = (uint32_t(c & 0x07) << 18) | (uint32_t(p[1] & 0x3F) << 12) | (uint32_t(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
    return 4;
  }
  return 0;
}

}  // namespace

void append_py_json_string(std::string* out, std::string_view s) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  const auto* run = p;
  while (p < end) {
    unsigned char c = *p;
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      ++p;
      continue;
    }
    out->append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default: append_u_escape(out, c);
      }
      ++p;
    } else {
      uint32_t cp = 0;
      size_t n = decode_utf8(p, end, &cp);
      if (n == 0) {  // not UTF-8: the byte as a latin-1 character
        cp = c;
        n = 1;
      }
      if (cp >= 0x10000) {
        cp -= 0x10000;
        append_u_escape(out, 0xD800 + (cp >> 10));
        append_u_escape(out, 0xDC00 + (cp & 0x3FF));
      } else {
        append_u_escape(out, cp);
      }
      p += n;
    }
    run = p;
  }
  out->append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
  out->push_back('"');
}

// ---------------------------------------------------------- CapturedEvent
//
// The tape: u8 event type, i64 time_ms, u8 has_ns [str ns], str key, str
// file, u32 lineno, value, u32 field count, then (str key, value) per field.
// A str is u32 length + bytes; a value is a tag byte + payload (arrays and
// objects: u32 count + items). Numbers are stored in native byte order; the
// tape never leaves the process.

namespace {

enum Tag : uint8_t { kTagNull, kTagFalse, kTagTrue, kTagInt, kTagUInt, kTagDouble, kTagString, kTagArray, kTagObject };

template <typename T>
void put(std::string* t, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  t->append(b, sizeof(T));
}

// A number value: its tag, then the number.
template <typename T>
void put_number(std::string* t, Tag tag, T v) {
  put<uint8_t>(t, tag);
  put<T>(t, v);
}

void put_str(std::string* t, std::string_view s) {
  put<uint32_t>(t, static_cast<uint32_t>(s.size()));
  t->append(s);
}

void put_value(std::string* t, const LogValue& v) {
  switch (v.kind()) {
    case LogValue::Kind::kNull: put<uint8_t>(t, kTagNull); return;
    case LogValue::Kind::kBool: put<uint8_t>(t, v.as_bool() ? kTagTrue : kTagFalse); return;
    case LogValue::Kind::kInt: put_number<int64_t>(t, kTagInt, v.as_int()); return;
    case LogValue::Kind::kUInt: put_number<uint64_t>(t, kTagUInt, v.as_uint()); return;
    case LogValue::Kind::kDouble: put_number<double>(t, kTagDouble, v.as_double()); return;
    case LogValue::Kind::kString:
      put<uint8_t>(t, kTagString);
      put_str(t, v.as_string());
      return;
    case LogValue::Kind::kArray:
      put<uint8_t>(t, kTagArray);
      put<uint32_t>(t, static_cast<uint32_t>(v.items().size()));
      for (const auto& item : v.items()) put_value(t, item);
      return;
    case LogValue::Kind::kObject:
      put<uint8_t>(t, kTagObject);
      put<uint32_t>(t, static_cast<uint32_t>(v.fields().size()));
      for (const auto& f : v.fields()) {
        put_str(t, f.key);
        put_value(t, f.value);
      }
      return;
  }
}

struct Cursor {
  const char* p;

  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string_view str() {
    auto n = get<uint32_t>();
    std::string_view s(p, n);
    p += n;
    return s;
  }
};

void append_int(std::string* out, int64_t v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out->append(b, r.ptr);
}

void append_uint(std::string* out, uint64_t v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out->append(b, r.ptr);
}

void emit_value(std::string* out, Cursor* c) {
  switch (c->get<uint8_t>()) {
    case kTagNull: out->append("null"); return;
    case kTagFalse: out->append("false"); return;
    case kTagTrue: out->append("true"); return;
    case kTagInt: append_int(out, c->get<int64_t>()); return;
    case kTagUInt: append_uint(out, c->get<uint64_t>()); return;
    case kTagDouble: append_py_json_float(out, c->get<double>()); return;
    case kTagString: append_py_json_string(out, c->str()); return;
    case kTagArray: {
      auto n = c->get<uint32_t>();
      out->push_back('[');
      for (uint32_t i = 0; i < n; ++i) {
        if (i) out->append(", ");
        emit_value(out, c);
      }
      out->push_back(']');
      return;
    }
    case kTagObject: {
      auto n = c->get<uint32_t>();
      out->push_back('{');
      for (uint32_t i = 0; i < n; ++i) {
        if (i) out->append(", ");
        append_py_json_string(out, c->str());
        out->append(": ");
        emit_value(out, c);
      }
      out->push_back('}');
      return;
    }
  }
}

void skip_value(Cursor* c) {
  switch (c->get<uint8_t>()) {
    case kTagInt:
    case kTagUInt:
    case kTagDouble: c->p += 8; return;
    case kTagString: c->str(); return;
    case kTagArray: {
      auto n = c->get<uint32_t>();
      for (uint32_t i = 0; i < n; ++i) skip_value(c);
      return;
    }
    case kTagObject: {
      auto n = c->get<uint32_t>();
      for (uint32_t i = 0; i < n; ++i) {
        c->str();
        skip_value(c);
      }
      return;
    }
    default: return;  // null, false, true: the tag alone
  }
}

// One metadata field while formatting: its key and where its value starts in
// the tape (null for the call site's file and lineno).
struct MetaSlot {
  std::string_view key;
  const char* value;
};

constexpr size_t kInlineMetaSlots = 16;

}  // namespace

void CapturedEvent::assign(EventType type, int64_t time_ms, std::optional<std::string_view> ns, std::string_view key,
                           const LogValue& value, Metadata metadata, std::string_view file, uint32_t lineno) {
  tape_.clear();
  put<uint8_t>(&tape_, static_cast<uint8_t>(type));
  put<int64_t>(&tape_, time_ms);
  put<uint8_t>(&tape_, ns ? 1 : 0);
  if (ns) put_str(&tape_, *ns);
  put_str(&tape_, key);
  put_str(&tape_, file);
  put<uint32_t>(&tape_, lineno);
  put_value(&tape_, value);
  auto fields = metadata.fields();
  put<uint32_t>(&tape_, static_cast<uint32_t>(fields.size()));
  for (const auto& f : fields) {
    put_str(&tape_, f.key);
    put_value(&tape_, f.value);
  }
}

void CapturedEvent::format_json(std::string* out, std::string_view default_ns, std::string_view root_dir) const {
  Cursor c{tape_.data()};
  auto type = static_cast<EventType>(c.get<uint8_t>());
  auto time_ms = c.get<int64_t>();
  std::string_view ns = c.get<uint8_t>() ? c.str() : default_ns;
  std::string_view key = c.str();
  std::string_view file = c.str();
  auto lineno = c.get<uint32_t>();
  if (!root_dir.empty() && file.size() > root_dir.size() && file.substr(0, root_dir.size()) == root_dir &&
      file[root_dir.size()] == '/')
    file.remove_prefix(root_dir.size() + 1);

  out->append("{\"namespace\": ");
  append_py_json_string(out, ns);
  out->append(", \"time_ms\": ");
  append_int(out, time_ms);
  out->append(", \"event_type\": \"");
  out->append(event_type_name(type));
  out->append("\", \"key\": ");
  append_py_json_string(out, key);
  out->append(", \"value\": ");
  emit_value(out, &c);
  out->append(", \"metadata\": {");

  // Python: log_metadata = {"file": ..., "lineno": ...}; log_metadata.update(metadata).
  auto n = c.get<uint32_t>();
  MetaSlot inline_slots[kInlineMetaSlots];
  std::vector<MetaSlot> heap_slots;
  MetaSlot* slots = inline_slots;
  if (n + 2 > kInlineMetaSlots) {
    heap_slots.resize(n + 2);
    slots = heap_slots.data();
  }
  size_t count = 0;
  slots[count++] = {"file", nullptr};
  slots[count++] = {"lineno", nullptr};
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view k = c.str();
    const char* v = c.p;
    skip_value(&c);
    size_t j = 0;
    while (j < count && slots[j].key != k) ++j;
    if (j < count) {
      slots[j].value = v;
    } else {
      slots[count++] = {k, v};
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (i) out->append(", ");
    append_py_json_string(out, slots[i].key);
    out->append(": ");
    if (slots[i].value) {
      Cursor vc{slots[i].value};
      emit_value(out, &vc);
    } else if (i == 0) {
      append_py_json_string(out, file);
    } else {
      append_uint(out, lineno);
    }
  }
  out->append("}}");
}

std::string format_event_json(EventType type, int64_t time_ms, std::string_view ns, std::string_view key,
                              const LogValue& value, Metadata metadata, std::string_view file, uint32_t lineno) {
  CapturedEvent ev;
  ev.assign(type, time_ms, ns, key, value, metadata, file, lineno);
  std::string out;
  ev.format_json(&out, ns);
  return out;
}

// ------------------------------------------------------------------ Logger

namespace {

// The calling thread's capture buffer. Swapped into a queue slot, it comes
// back holding that slot's old buffer, so capacity is reused, not freed.
thread_local CapturedEvent t_scratch;

// Writes all of `data`; false (errno set) on failure.
bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Logger::Logger(Options options) : opt_(std::move(options)) {
  clock_ = opt_.clock ? opt_.clock : &system_clock_;
  if (opt_.queue_capacity == 0) opt_.queue_capacity = 1;
  if (!opt_.file.empty()) {
    fd_ = ::open(opt_.file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) error_ = "cannot open " + opt_.file + ": " + std::strerror(errno);
  }
  if (opt_.mode == WriteMode::kAsync) {
    ring_.resize(opt_.queue_capacity);
    batch_.resize(opt_.queue_capacity);
    writer_ = std::thread([this] { writer_loop(); });
  }
}

Logger::~Logger() {
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
    }
    not_empty_.notify_one();
    writer_.join();  // the writer drains the queue before it returns
  }
  if (fd_ >= 0) ::close(fd_);
}

void Logger::log(EventType type, std::string_view key, const LogValue& value, Metadata metadata,
                 const EventOptions& options, CallSite where) {
  int64_t time_ms = options.time_ms ? *options.time_ms : clock_->now_ms();
  CapturedEvent& ev = t_scratch;
  ev.assign(type, time_ms, options.ns, key, value, metadata, where.file ? where.file : "", where.line);

  if (opt_.mode == WriteMode::kSync) {
    std::lock_guard<std::mutex> lk(mu_);
    ++events_;
    write_batch({&ev, 1});
    ++written_;
    merge_batch_errors_locked();
    return;
  }

  bool wake_writer;
  {
    std::unique_lock<std::mutex> lk(mu_);
    if (tail_ - head_ >= ring_.size()) {
      ++waits_;
      ++full_waiters_;
      not_full_.wait(lk, [this] { return tail_ - head_ < ring_.size(); });
      --full_waiters_;
    }
    ring_[tail_ % ring_.size()].swap(ev);
    ++tail_;
    ++events_;
    wake_writer = writer_sleeping_;
  }
  if (wake_writer) not_empty_.notify_one();
}

void Logger::writer_loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    while (head_ == tail_ && !stopping_) {
      writer_sleeping_ = true;
      not_empty_.wait(lk);
      writer_sleeping_ = false;
    }
    if (head_ == tail_) return;  // stopping, and everything is written
    size_t n = static_cast<size_t>(tail_ - head_);
    for (size_t i = 0; i < n; ++i) batch_[i].swap(ring_[(head_ + i) % ring_.size()]);
    head_ += n;
    bool wake_callers = full_waiters_ > 0;
    lk.unlock();
    if (wake_callers) not_full_.notify_all();
    write_batch({batch_.data(), n});
    lk.lock();
    written_ += n;
    merge_batch_errors_locked();
    if (flush_waiters_ > 0) written_cv_.notify_all();
  }
}

void Logger::write_batch(std::span<const CapturedEvent> events) {
  // Everything is formatted before any sink runs: in sync mode `events` is
  // the thread's capture buffer, which a callback that logs elsewhere reuses.
  text_.clear();
  line_spans_.clear();
  for (const auto& ev : events) {
    if (opt_.clear_line) text_.push_back('\n');
    size_t begin = text_.size();
    text_.append(opt_.prefix);
    text_.append(":::MLLOG ");
    ev.format_json(&text_, opt_.default_namespace, opt_.root_dir);
    if (opt_.callback) line_spans_.emplace_back(begin, text_.size());
    text_.push_back('\n');
  }
  if (fd_ >= 0 && !write_all(fd_, text_)) note_batch_error("cannot write " + opt_.file + ": " + std::strerror(errno));
  if (opt_.stream) {
    opt_.stream->write(text_.data(), static_cast<std::streamsize>(text_.size()));
    opt_.stream->flush();
    if (!*opt_.stream) note_batch_error("cannot write to the stream");
  }
  if (opt_.callback) {
    std::string_view all(text_);
    for (const auto& [b, e] : line_spans_) {
      try {
        opt_.callback(all.substr(b, e - b));
      } catch (const std::exception& ex) {
        note_batch_error(std::string("the line callback threw: ") + ex.what());
      } catch (...) {
        note_batch_error("the line callback threw");
      }
    }
  }
}

void Logger::note_batch_error(std::string message) {
  if (batch_errors_++ == 0) batch_error_text_ = std::move(message);
}

void Logger::merge_batch_errors_locked() {
  if (batch_errors_ == 0) return;
  write_errors_ += batch_errors_;
  if (error_.empty()) error_ = std::move(batch_error_text_);
  batch_errors_ = 0;
  batch_error_text_.clear();
}

void Logger::flush() {
  std::unique_lock<std::mutex> lk(mu_);
  uint64_t target = tail_;
  if (opt_.mode == WriteMode::kSync || written_ >= target) return;
  ++flush_waiters_;
  written_cv_.wait(lk, [&] { return written_ >= target; });
  --flush_waiters_;
}

std::string Logger::error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

Logger::Stats Logger::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return {events_, written_, waits_, write_errors_};
}

}  // namespace referee::mllog
