// JSON text read the way Python's json.loads reads it (strict=True; NaN,
// Infinity and -Infinity accepted; a repeated name keeps its last value is
// the caller's part), one token at a time. The one place for JSON's grammar:
// the tree of json.h, the interpreter's Values and the MLLOG reader's scan of
// each line all read with it.
//
// Why not a library: MLLOG payloads are short objects (about 200 bytes) of
// which the reader wants two fields and the rule code one or two more. Read
// in one pass with no tree, they cost a fraction of a DOM parse; and Python's
// acceptance (NaN, Infinity, lone surrogates, bytes that are not UTF-8) is
// what the checker must follow, which strict parsers refuse.
//
// Strings come back raw (the bytes between the quotes, escapes checked but
// not decoded); decode_string() decodes them. Bytes are taken as they are
// (latin-1), so no byte of 0x20 or above fails a string.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace referee::mllog {

// The text of a string JsonCursor::string() checked, escapes decoded as
// Python does (a \u escape as UTF-8, a surrogate pair as one code point, a
// lone surrogate as itself); appended to *out.
void decode_json_string(std::string_view raw, std::string* out);

class JsonCursor {
 public:
  // Python's json reads about as deep as its recursion limit (1000) lets it.
  static constexpr int kMaxDepth = 1000;

  enum class Tok { Object, Array, String, Number, True, False, Null, NaN, Infinity, NegInfinity, Bad };

  struct Number {
    bool is_int = false;
    int64_t i = 0;
    double f = 0.0;
  };

  explicit JsonCursor(std::string_view text) : b_(text.data()), p_(text.data()), e_(text.data() + text.size()) {}

  // The first error, "what at column N" (1-based within the text); "" when none.
  const std::string& error() const { return err_; }
  bool at_end() const { return p_ >= e_; }
  size_t offset() const { return static_cast<size_t>(p_ - b_); }

  [[gnu::always_inline]] void ws() {
    while (p_ < e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // What the next value is, from its first bytes (white space skipped
  // before). Literals are consumed; Bad has set the error. `depth` is the
  // nesting of the value about to be read.
  [[gnu::always_inline]] Tok next(int depth) {
    if (depth > kMaxDepth) return bad("nesting too deep");
    if (p_ >= e_) return bad("unexpected end of text");
    char c = *p_;
    switch (c) {
      case '{': return Tok::Object;
      case '[': return Tok::Array;
      case '"': return Tok::String;
      case 'n': if (lit("null")) return Tok::Null; break;
      case 't': if (lit("true")) return Tok::True; break;
      case 'f': if (lit("false")) return Tok::False; break;
      case 'N': if (lit("NaN")) return Tok::NaN; break;
      case 'I': if (lit("Infinity")) return Tok::Infinity; break;
      case '-': if (p_ + 1 < e_ && p_[1] == 'I' && lit("-Infinity")) return Tok::NegInfinity; return Tok::Number;
      default: if (c >= '0' && c <= '9') return Tok::Number; break;
    }
    return bad_char(c);
  }

  // At '"': the raw bytes up to the closing quote; *escaped when a
  // backslash is among them (decode_string() then gives the text).
  [[gnu::always_inline]] bool string(std::string_view* raw, bool* escaped) {
    const char* s = ++p_;
    const char* q = next_special(s, e_);
    if (q < e_ && *q == '"') {  // no escape: the usual case
      *raw = std::string_view(s, static_cast<size_t>(q - s));
      *escaped = false;
      p_ = q + 1;
      return true;
    }
    p_ = q;
    return string_rest(s, raw, escaped);
  }

  // At '-' or a digit: JSON's number grammar; an integer that fits 64 bits
  // is an int, any other a double (Python keeps big integers exact; referee
  // takes the nearest double).
  bool number(Number* n) {
    const char* s = p_;
    NumberScan x;
    if (!scan_number(&x)) return false;
    if (!x.is_float) {
      if (x.int_digits <= 18) {  // the value gathered while scanning cannot have overflowed
        n->is_int = true;
        n->i = *s == '-' ? -static_cast<int64_t>(x.value) : static_cast<int64_t>(x.value);
        return true;
      }
      if (int64_t v; std::from_chars(s, p_, v).ec == std::errc()) {
        n->is_int = true;
        n->i = v;
        return true;
      }
    }
    n->is_int = false;
    // Correctly rounded, as Python's float() is; out of range (1e400,
    // 1e-400) gives what strtod gives: infinity, zero or a subnormal.
    if (std::from_chars(s, p_, n->f).ec != std::errc()) n->f = strtod_copy(s, p_);
    return true;
  }

  // After '{' or '[': consumes it and the white space after; false in *more
  // when the container closes at once.
  [[gnu::always_inline]] void open(char close, bool* more) {
    ++p_;
    ws();
    if (p_ < e_ && *p_ == close) {
      ++p_;
      *more = false;
    } else {
      *more = true;
    }
  }

  // After an item (white space before is skipped): ',' (more follow) or the
  // closing bracket; anything else is an error.
  [[gnu::always_inline]] bool after_item(char close, bool* more) {
    ws();
    if (p_ >= e_) return fail(close == '}' ? "unterminated object" : "unterminated array");
    if (*p_ == ',') {
      ++p_;
      ws();
      *more = true;
      return true;
    }
    if (*p_ == close) {
      ++p_;
      *more = false;
      return true;
    }
    return fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
  }

  // A member's name and the ':' after it; the cursor then stands on its value.
  [[gnu::always_inline]] bool name(std::string_view* raw, bool* escaped) {
    if (p_ >= e_ || *p_ != '"') return fail("expected a property name in double quotes");
    if (!string(raw, escaped)) return false;
    ws();
    if (p_ >= e_ || *p_ != ':') return fail("expected ':'");
    ++p_;
    ws();
    return true;
  }

  // A member's name, decoded (into *scratch when it has escapes), and the
  // ':' after it.
  bool member(std::string_view* out, std::string* scratch) {
    bool esc = false;
    if (!name(out, &esc)) return false;
    if (esc) {
      scratch->clear();
      decode_json_string(*out, scratch);
      *out = *scratch;
    }
    return true;
  }

  // Reads past one value, checking it; `depth` as for next().
  bool skip(int depth) {
    switch (next(depth)) {
      case Tok::Bad: return false;
      case Tok::String: {
        std::string_view raw;
        bool esc = false;
        return string(&raw, &esc);
      }
      case Tok::Number: {
        NumberScan x;  // only the grammar matters here
        return scan_number(&x);
      }
      case Tok::Object: {
        bool more;
        open('}', &more);
        while (more) {
          std::string_view raw;
          bool esc = false;
          if (!name(&raw, &esc) || !skip(depth + 1) || !after_item('}', &more)) return false;
        }
        return true;
      }
      case Tok::Array: {
        bool more;
        open(']', &more);
        while (more) {
          if (!skip(depth + 1) || !after_item(']', &more)) return false;
        }
        return true;
      }
      default: return true;  // a literal, consumed
    }
  }

  // The whole text is one value with white space around it: what is left
  // after the value (white space skipped) is an error.
  bool finish() {
    ws();
    if (p_ != e_) return fail("extra data after the JSON value");
    return true;
  }

  // Sets the error (the first one stays); false. Kept out of the paths that read.
  // The place is a column of a one-line text (a log line's JSON), a line and column of a file's.
  [[gnu::cold]] [[gnu::noinline]] bool fail(std::string_view what) {
    if (!err_.empty()) return false;
    size_t line = 1;
    const char* line_start = b_;
    for (const char* q = b_; q < p_ && q < e_; ++q)
      if (*q == '\n') ++line, line_start = q + 1;
    const size_t column = static_cast<size_t>(p_ - line_start) + 1;
    err_ = std::string(what) + (line > 1 ? " at line " + std::to_string(line) + ", column " : std::string(" at column ")) +
           std::to_string(column);
    return false;
  }

 private:
  // What scan_number() saw: the integer part's digits and, while at most 18,
  // their value.
  struct NumberScan {
    bool is_float = false;
    uint64_t value = 0;
    std::ptrdiff_t int_digits = 0;
  };
  // At '-' or a digit: past JSON's number grammar, in one pass.
  bool scan_number(NumberScan* x) {
    if (*p_ == '-') ++p_;
    if (p_ >= e_) return fail("bad number");
    const char* d0 = p_;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      uint64_t v = 0;  // wraps past 19 digits; number() then does not use it
      while (p_ < e_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + static_cast<uint64_t>(*p_++ - '0');
      x->value = v;
    } else {
      return fail("bad number");
    }
    x->int_digits = p_ - d0;
    if (p_ < e_ && *p_ == '.') {
      const char* d = ++p_;
      while (p_ < e_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == d) return fail("bad number");
      x->is_float = true;
    }
    if (p_ < e_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < e_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* d = p_;
      while (p_ < e_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == d) return fail("bad number");
      x->is_float = true;
    }
    return true;
  }

  [[gnu::cold]] [[gnu::noinline]] Tok bad(std::string_view what) {
    fail(what);
    return Tok::Bad;
  }
  [[gnu::cold]] [[gnu::noinline]] Tok bad_char(char c) {
    return bad(std::string("unexpected character '") + c + "'");
  }
  bool lit(std::string_view w) {
    if (static_cast<size_t>(e_ - p_) >= w.size() && std::memcmp(p_, w.data(), w.size()) == 0) {
      p_ += w.size();
      return true;
    }
    return false;
  }
  bool hex4(uint32_t* cp) {
    if (e_ - p_ < 4) return fail("bad \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = *p_++;
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
      else return fail("bad \\u escape");
    }
    *cp = v;
    return true;
  }
  // The rest of a string from the first byte string() stopped at: escapes
  // checked, the end found.
  bool string_rest(const char* s, std::string_view* raw, bool* escaped) {
    while (true) {
      if (p_ >= e_) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *raw = std::string_view(s, static_cast<size_t>(p_ - s));
        *escaped = true;
        ++p_;
        return true;
      }
      if (c < 0x20) return fail("invalid control character in string");
      // A backslash.
      ++p_;
      if (p_ >= e_) return fail("unterminated string");
      char x = *p_++;
      switch (x) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          break;
        }
        default: return fail("invalid escape");
      }
      p_ = next_special(p_, e_);
    }
  }

  // The first byte at or after p that ends or escapes a string or is a
  // control byte (below 0x20; bytes of 0x80 and above are plain), or e.
  __attribute__((always_inline)) static const char* next_special(const char* p, const char* e) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x1F);
    while (e - p >= 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(x, low), low));
      if (int m = _mm_movemask_epi8(hit)) return p + __builtin_ctz(static_cast<unsigned>(m));
      p += 16;
    }
#endif
    while (p < e && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
    return p;
  }
  static double strtod_copy(const char* s, const char* e);

  const char* b_;
  const char* p_;
  const char* e_;
  std::string err_;
};

}  // namespace referee::mllog
