#include "mllog/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_cursor.h"

namespace referee::mllog {

// ---------------------------------------------------------------- FileBuffer

FileBuffer::~FileBuffer() { release(); }

FileBuffer::FileBuffer(FileBuffer&& o) noexcept { *this = std::move(o); }

FileBuffer& FileBuffer::operator=(FileBuffer&& o) noexcept {
  if (this == &o) return *this;
  release();
  owned_ = std::move(o.owned_);
  map_ = o.map_;
  size_ = o.size_;
  data_ = map_ ? static_cast<const char*>(map_) : (owned_.empty() ? "" : owned_.data());
  o.map_ = nullptr;
  o.size_ = 0;
  o.data_ = "";
  return *this;
}

void FileBuffer::release() {
  if (map_) munmap(map_, size_);
  map_ = nullptr;
  owned_.clear();
  data_ = "";
  size_ = 0;
}

void FileBuffer::assign(std::string text) {
  release();
  owned_ = std::move(text);
  data_ = owned_.data();
  size_ = owned_.size();
}

bool FileBuffer::open(const std::string& path, std::string* error) {
  release();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = "cannot stat " + path + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *error = path + " is a directory, not a result file";
    ::close(fd);
    return false;
  }
  if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
    *error = path + " is a " + (S_ISBLK(st.st_mode) ? "block device" : "socket") + ", not a result file";
    ::close(fd);
    return false;
  }
  // A character device other than a terminal (/dev/zero, /dev/urandom) may
  // never end: one that is not empty at once (as /dev/null is) is refused.
  bool device = S_ISCHR(st.st_mode) && !::isatty(fd);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
      map_ = m;
      size_ = static_cast<size_t>(st.st_size);
      data_ = static_cast<const char*>(m);
      ::close(fd);
      return true;
    }
  }
  // Pipes, empty files, or mmap refused: read in large blocks.
  std::string text;
  constexpr size_t kBlock = 1 << 20;
  while (true) {
    size_t old = text.size();
    text.resize(old + kBlock);
    ssize_t n = ::read(fd, text.data() + old, kBlock);
    if (n < 0) {
      if (errno == EINTR) {
        text.resize(old);
        continue;
      }
      *error = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    text.resize(old + static_cast<size_t>(n));
    if (n == 0) break;
    if (device) {
      *error = path + " is a character device that does not end, not a result file; "
               "give a log file, or a pipe (referee check /dev/stdin < LOG)";
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  assign(std::move(text));
  return true;
}

// ------------------------------------------------------------------ helpers

bool is_py_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0;
}

bool py_float_from_string(std::string_view s, double* out) {
  while (!s.empty() && is_py_space(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && is_py_space(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return false;
  std::string t;
  t.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      // Python allows one underscore between digits only.
      bool ok = i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!ok) return false;
      continue;
    }
    t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  std::string_view body = t;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (body == "inf" || body == "infinity") {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  // Digits, optional fraction, optional exponent; no hex.
  size_t i = 0;
  size_t digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < body.size() && body[i] == 'e') {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t e = i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i;
    if (i == e) return false;
  }
  if (i != body.size()) return false;
  *out = std::strtod(t.c_str(), nullptr);
  return true;
}

int ParsedLog::find_key(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return static_cast<int>(i);
  return -1;
}

// --------------------------------------------------------------- LogReader

struct LogReader::Impl {
  base::StringMap<uint32_t> key_ids;  // this parse's keys
  uint32_t last_key = UINT32_MAX;
};

LogReader::LogReader() : impl_(std::make_unique<Impl>()) {}
LogReader::~LogReader() = default;

// Interns a key: the same key often repeats line after line, so that is tried first.
uint32_t LogReader::intern(ParsedLog* out, std::string_view key) {
  Impl& im = *impl_;
  if (im.last_key < out->keys.size() && out->keys[im.last_key] == key) return im.last_key;
  auto it = im.key_ids.find(key);
  if (it != im.key_ids.end()) return im.last_key = it->second;
  out->keys.emplace_back(key);
  uint32_t id = static_cast<uint32_t>(out->keys.size() - 1);
  im.key_ids.emplace(std::string(key), id);
  return im.last_key = id;
}

namespace {

// Line breaks in [p, end) as Python's universal newlines count them: "\n",
// "\r\n" and a lone "\r".
uint32_t count_breaks(const char* p, const char* end) {
  if (p >= end) return 0;
  auto n = static_cast<size_t>(std::count(p, end, '\n'));
  for (auto q = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p))); q;
       q = static_cast<const char*>(std::memchr(q + 1, '\r', static_cast<size_t>(end - q - 1))))
    if (q + 1 >= end || q[1] != '\n') ++n;
  return static_cast<uint32_t>(n);
}

// The first ":::MLLOG " in [p, end), or nullptr. glibc's memmem sets up a
// shift table on every call, which costs more than the scan of a 200-byte
// line; here sixteen bytes at a time are tested for a colon followed by two
// more, and only those places are compared in full.
const char* find_token(const char* p, const char* end) {
  const size_t n = kToken.size();
  if (end - p < static_cast<std::ptrdiff_t>(n)) return nullptr;
  const char* const last = end - n;  // the last place a token can start
#if defined(__SSE2__)
  const __m128i colon = _mm_set1_epi8(':');
  while (end - p >= 18) {  // the three loads read p[0] to p[17]
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2));
    __m128i hits = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(a, colon), _mm_cmpeq_epi8(b, colon)),
                                 _mm_cmpeq_epi8(c, colon));
    auto mask = static_cast<uint32_t>(_mm_movemask_epi8(hits));
    while (mask) {
      const char* q = p + __builtin_ctz(mask);
      if (q > last) return nullptr;
      if (std::memcmp(q, kToken.data(), n) == 0) return q;
      mask &= mask - 1;
    }
    p += 16;
  }
#endif
  for (; p <= last; ++p)
    if (*p == ':' && std::memcmp(p, kToken.data(), n) == 0) return p;
  return nullptr;
}

// From a token at `hit`, in one pass: the end of its line (the first "\n" or
// "\r" after it, or `end`) and, in *last, the last token that starts on the
// line (the consortium's pattern is greedy: ".*:::MLLOG ").
const char* scan_line(const char* hit, const char* end, const char** last) {
  const size_t n = kToken.size();
  *last = hit;
  const char* p = hit + 1;
  auto token_at = [&](const char* q) {
    return q + n <= end && std::memcmp(q, kToken.data(), n) == 0;
  };
#if defined(__SSE2__)
  const __m128i colon = _mm_set1_epi8(':');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  while (end - p >= 18) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2));
    auto breaks = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(a, lf), _mm_cmpeq_epi8(a, cr))));
    auto colons = static_cast<uint32_t>(_mm_movemask_epi8(_mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(a, colon), _mm_cmpeq_epi8(b, colon)), _mm_cmpeq_epi8(c, colon))));
    if (breaks) colons &= (1u << __builtin_ctz(breaks)) - 1;  // only places before the break
    while (colons) {
      const char* q = p + __builtin_ctz(colons);
      if (token_at(q)) *last = q;
      colons &= colons - 1;
    }
    if (breaks) return p + __builtin_ctz(breaks);
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    if (*p == '\n' || *p == '\r') return p;
    if (*p == ':' && token_at(p)) *last = p;
  }
  return end;
}

std::string clip(std::string_view s) {
  constexpr size_t kMax = 300;
  if (s.size() <= kMax) return std::string(s);
  return std::string(s.substr(0, kMax)) + "...";
}

bool time_from_json(const Json& j, double* out) {
  switch (j.kind) {
    case Json::Kind::Int: *out = static_cast<double>(j.i); return true;
    case Json::Kind::Float: *out = j.f; return true;
    case Json::Kind::Bool: *out = j.b ? 1.0 : 0.0; return true;
    case Json::Kind::String: return py_float_from_string(j.s, out);
    default: return false;
  }
}

}  // namespace

// Whether `s` is the literal `w` (compared with a length known when compiled).
template <size_t N>
static bool is(std::string_view s, const char (&w)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), w, N - 1) == 0;
}

// The fast path's reading of one payload: true when it is a JSON object
// with a plain string "key", a number "time_ms", "value" and "metadata"
// (the last of repeated names counting), and nothing else is wrong.
bool LogReader::scan_payload(std::string_view json, Event* ev, ParsedLog* out) {
  JsonCursor c(json);
  c.ws();
  if (c.at_end() || json[c.offset()] != '{') return false;
  std::string_view key;
  bool have_key = false, have_time = false, have_value = false, have_meta = false;
  size_t value_at = 0, meta_at = 0;
  double t = 0;
  bool more;
  c.open('}', &more);
  while (more) {
    std::string_view name;
    bool esc = false;
    if (!c.name(&name, &esc) || esc) return false;
    if (is(name, "key")) {
      if (c.next(1) != JsonCursor::Tok::String || !c.string(&key, &esc) || esc) return false;
      have_key = true;
    } else if (is(name, "time_ms")) {
      JsonCursor::Number n;
      if (c.next(1) != JsonCursor::Tok::Number || !c.number(&n)) return false;
      t = n.is_int ? static_cast<double>(n.i) : n.f;
      have_time = true;
    } else {
      size_t at = c.offset();
      if (is(name, "value")) {
        have_value = true;
        value_at = at;
      } else if (is(name, "metadata")) {
        have_meta = true;
        meta_at = at;
      }
      if (!c.skip(1)) return false;
    }
    if (!c.after_item('}', &more)) return false;
  }
  if (!c.finish() || !have_key || !have_time || !have_value || !have_meta) return false;
  ev->time_ms = t;
  ev->key_id = intern(out, key);
  if (value_at <= UINT32_MAX && meta_at <= UINT32_MAX) {
    ev->value_at = static_cast<uint32_t>(value_at);
    ev->meta_at = static_cast<uint32_t>(meta_at);
  }
  return true;
}

// The slow path: Python-compatible parse of a line the fast path left.
bool LogReader::parse_slow(std::string_view json, ParsedLog* out, Event* ev, std::string* error) {
  Json j;
  if (!parse_json_permissive(json, &j, error)) return false;
  if (j.kind != Json::Kind::Object) {
    *error = "the MLLOG payload is not a JSON object";
    return false;
  }
  const Json* key = j.find("key");
  const Json* t = j.find("time_ms");
  if (!key || key->kind != Json::Kind::String) {
    *error = "missing or non-string \"key\"";
    return false;
  }
  if (!t) {
    *error = "missing \"time_ms\"";
    return false;
  }
  if (!time_from_json(*t, &ev->time_ms)) {
    *error = "\"time_ms\" is not a number";
    return false;
  }
  if (!j.find("value")) {
    *error = "missing \"value\"";
    return false;
  }
  if (!j.find("metadata")) {
    *error = "missing \"metadata\"";
    return false;
  }
  ev->key_id = intern(out, key->s);
  return true;
}

void LogReader::parse(std::string_view text, ParsedLog* out) {
  impl_->key_ids.clear();
  impl_->last_key = UINT32_MAX;
  out->keys.clear();
  out->events.clear();
  out->errors.clear();
  out->mllog_lines = 0;
  out->bytes = text.size();
  out->line_breaks = 0;

  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* scan = begin;          // where to look for the next token
  const char* counted = begin;       // line breaks counted up to here
  uint32_t file_line = 1;
  std::string error;

  while (scan < end) {
    const char* hit = find_token(scan, end);
    if (!hit) break;
    // The line that holds the hit.
    const char* line_start = hit;
    while (line_start > counted && line_start[-1] != '\n' && line_start[-1] != '\r') --line_start;
    const char* last = hit;
    const char* line_end = scan_line(hit, end, &last);
    file_line += count_breaks(counted, line_start);
    // [line_start, line_end) holds no break: counting goes on from its end.
    counted = line_end;

    const char* j0 = last + kToken.size();
    const char* j1 = line_end;
    while (j1 > j0 && is_py_space(static_cast<unsigned char>(j1[-1]))) --j1;
    std::string_view json(j0, static_cast<size_t>(j1 - j0));

    Event ev;
    ev.lineno = out->mllog_lines++;
    ev.file_line = file_line;
    ev.json = json;

    // Fast path: one pass over the line for "key" and "time_ms", the other
    // members checked and passed over. Anything else (a name or key with
    // escapes, a time that is not a number, a member missing, bad JSON) is
    // read again by the slow path, which says what is wrong.
    bool ok = scan_payload(json, &ev, out) || parse_slow(json, out, &ev, &error);
    if (ok) {
      out->events.push_back(ev);
    } else {
      out->errors.push_back(ParseError{file_line, ev.lineno, clip(json), error});
    }
    scan = line_end;
  }
  out->line_breaks = (file_line - 1) + count_breaks(counted, end);
}

}  // namespace referee::mllog
