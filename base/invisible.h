// The characters that reorder or hide text without being seen: bidi
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
// zero-width characters and directional marks (U+200B-U+200F) and the
// byte-order mark (U+FEFF). Text that others wrote shows each as [U+XXXX]
// wherever it is printed: the committee's report (review/report.cc) and the
// terminal (cli/safe_text.cc).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace referee::base {

inline bool is_invisible_control(unsigned cp) {
  return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

// Whether byte `c` can start the UTF-8 encoding of one of them (all are
// three bytes: E2 80 8B..E2 81 A9, EF BB BF).
inline bool may_start_invisible(unsigned char c) { return c == 0xE2 || c == 0xEF; }

// The code point of such a character encoded at s[i..i+3), or 0.
inline unsigned invisible_at(std::string_view s, size_t i) {
  if (i + 2 >= s.size() || !may_start_invisible(static_cast<unsigned char>(s[i]))) return 0;
  unsigned b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]),
           b2 = static_cast<unsigned char>(s[i + 2]);
  if ((b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80) return 0;
  unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
  return is_invisible_control(cp) ? cp : 0;
}

// "[U+202E]".
inline std::string shown_code_point(unsigned cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "[U+%04X]", cp);
  return buf;
}

}  // namespace referee::base
