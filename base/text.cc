#include "base/text.h"

#include <algorithm>
#include <cstdint>

#include "base/invisible.h"

namespace referee::base {

namespace {

bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = lower_char(c);
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower_char(a[i]) != lower_char(b[i])) return false;
  return true;
}

namespace {

// The lower-case letter of code point `cp` (U+0080 to U+07FF) for the
// capitals of Latin-1, Latin Extended-A, Greek and Cyrillic; `cp` otherwise.
unsigned fold_two_byte(unsigned cp) {
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 0x20;
  if ((cp >= 0x100 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177)) return cp % 2 == 0 ? cp + 1 : cp;
  if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return cp % 2 == 1 ? cp + 1 : cp;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 0x20;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  return cp;
}

}  // namespace

std::string fold_case(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0u;
    if (c >= 0xC2 && c <= 0xDF && (next & 0xC0) == 0x80) {
      const unsigned cp = fold_two_byte(((c & 0x1Fu) << 6) | (next & 0x3Fu));
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      ++i;
    } else {
      out.push_back(lower_char(s[i]));
    }
  }
  return out;
}

bool same_name(std::string_view a, std::string_view b) { return iequals(a, b) || fold_case(a) == fold_case(b); }

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

void append_caret(std::string* out, unsigned char c, bool keep_lines) {
  bool control = (c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f;
  if (!control) {
    out->push_back(static_cast<char>(c));
    return;
  }
  out->push_back('^');
  out->push_back(c == 0x7f ? '?' : static_cast<char>(c + '@'));
}

std::string caret_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) append_caret(&out, static_cast<unsigned char>(c));
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& k : known) {
    size_t d = edit_distance(name, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best_d <= std::max<size_t>(2, name.size() / 3) ? best : "";
}

bool valid_utf8(std::string_view text, size_t* bad_at) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else { if (bad_at) *bad_at = i; return false; }
    if (i + len > n) { if (bad_at) *bad_at = i; return false; }
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) { if (bad_at) *bad_at = i; return false; }
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
      if (bad_at) *bad_at = i;
      return false;
    }
    i += len;
  }
  return true;
}

namespace {

int code_point_width(uint32_t cp) {
  struct Range {
    uint32_t lo, hi;
  };
  static constexpr Range kZero[] = {{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
                                    {0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x1AB0, 0x1AFF},
                                    {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x2064},
                                    {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF},
                                    {0xE0100, 0xE01EF}};
  static constexpr Range kWide[] = {{0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
                                    {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x26AA, 0x26AB},
                                    {0x26BD, 0x26BE},   {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},
                                    {0x26F2, 0x26F5},   {0x26FA, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
                                    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x2753, 0x2757},   {0x2795, 0x2797},
                                    {0x27B0, 0x27B0},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B55},   {0x2E80, 0x303E},
                                    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
                                    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
                                    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x18AFF},
                                    {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E},
                                    {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF},
                                    {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x3FFFD}};
  for (const Range& r : kZero)
    if (cp >= r.lo && cp <= r.hi) return 0;
  for (const Range& r : kWide)
    if (cp >= r.lo && cp <= r.hi) return 2;
  return 1;
}

}  // namespace

std::string utf8_text(std::string_view text) {
  size_t bad = 0;
  if (valid_utf8(text, &bad)) return std::string(text);
  std::string out(text.substr(0, bad));
  out.reserve(text.size() + 8);
  size_t i = bad;
  while (i < text.size()) {
    size_t at = 0;
    const std::string_view rest = text.substr(i);
    if (valid_utf8(rest, &at)) {
      out.append(rest);
      break;
    }
    out.append(rest.substr(0, at));  // the valid part before the bad byte
    const unsigned char c = static_cast<unsigned char>(rest[at]);
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    i += at + 1;
  }
  return out;
}

size_t display_width(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t width = 0, i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (!ok) {
      width += 1;  // a byte that is not UTF-8: shown as one replacement character
      i += 1;
      continue;
    }
    width += static_cast<size_t>(code_point_width(cp));
    i += len;
  }
  return width;
}

std::string excerpt(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    size_t len = 0;
    if (unsigned cp = invisible_at(text, i, &len)) {
      out += shown_code_point(cp);
      i += len - 1;
    } else {
      append_caret(&out, static_cast<unsigned char>(text[i]), false);
    }
  }
  return out;
}

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    bool plain = !w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                                   "_./:=@%+-,{}") == std::string::npos;
    if (!out.empty()) out += ' ';
    out += plain ? w : shell_quote(w);
  }
  return out;
}

}  // namespace referee::base
