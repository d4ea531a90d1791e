#include "mllog/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/digest.h"

namespace referee::mllog {

namespace {

bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence of two or more bytes at s[i], or 0
// (no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t avail = s.size() - i;
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (c >= 0xC2 && c <= 0xDF) return avail >= 2 && is_cont(at(1)) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || !is_cont(at(1)) || !is_cont(at(2))) return 0;
    if (c == 0xE0 && at(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && at(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || !is_cont(at(1)) || !is_cont(at(2)) || !is_cont(at(3))) return 0;
    if (c == 0xF0 && at(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && at(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void append_json_string(std::string* out, std::string_view s, JsonText text) {
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          base::append_hex(out, c);
        } else if (c >= 0x80) {
          if (text == JsonText::kUtf8) {
            if (size_t n = utf8_length(s, i)) {  // UTF-8 text: the sequence as it is
              out->append(s.data() + i, n);
              i += n - 1;
              break;
            }
          }
          // Log text is latin-1 (and so is a stray byte in UTF-8 text): write the byte as its
          // code point, so output is valid UTF-8.
          out->push_back(static_cast<char>(0xC0 | (c >> 6)));
          out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string py_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest digits that read back as d, the closest to d among them
  // (what Python's repr chooses too); std::to_chars finds them without
  // printing and reading back at every precision.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  // buf: [-]d[.ddd]e[+-]XX
  std::string t(buf, r.ptr);
  bool neg = t[0] == '-';
  if (neg) t.erase(0, 1);
  size_t e = t.find('e');
  int exp10 = std::atoi(t.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (t[i] != '.') digits += t[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int decpt = exp10 + 1;  // value = 0.DIGITS x 10^decpt
  // Built with append(): g++ 12 warns falsely (-Wrestrict) on chains of operator+.
  std::string out;
  if (neg) out.push_back('-');
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out.append("0.");
      out.append(static_cast<size_t>(-decpt), '0');
      out.append(digits);
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out.append(digits);
      out.append(static_cast<size_t>(decpt) - digits.size(), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, static_cast<size_t>(decpt));
      out.push_back('.');
      out.append(digits, static_cast<size_t>(decpt), std::string::npos);
    }
  } else {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    out.append(ex);
  }
  return out;
}

std::string json_number(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return py_float_repr(d);
}

}  // namespace referee::mllog
