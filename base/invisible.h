// The characters that reorder or hide text without being seen, or act as
// controls: bidi embeddings, overrides, isolates and marks (U+061C,
// U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), the zero-width and invisible
// characters (U+00AD, U+115F, U+1160, U+180E, U+200B-U+200D, U+2060-U+2064,
// U+3164, U+FEFF, U+FFA0), the line and paragraph separators (U+2028,
// U+2029), the interlinear annotation marks (U+FFF9-U+FFFB), the tag
// characters (U+E0000-U+E007F) and the C1 controls (U+0080-U+009F, among
// them the 8-bit CSI that terminals obey). Text that others wrote shows each
// as [U+XXXX] wherever it is printed: the committee's report
// (review/report.cc) and the terminal (cli/safe_text.cc).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace referee::base {

inline bool is_invisible_control(unsigned cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x061C || cp == 0x115F || cp == 0x1160 || cp == 0x180E ||
         (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x3164 || cp == 0xFEFF ||
         cp == 0xFFA0 || (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F);
}

// The length of the UTF-8 sequence byte `c` starts (2 to 4), or 0 when it
// starts none that can encode such a character.
inline size_t utf8_length(unsigned char c) {
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 0;
}

// Whether byte `c` can start the UTF-8 encoding of one of them.
inline bool may_start_invisible(unsigned char c) {
  return c == 0xC2 || c == 0xD8 || c == 0xE1 || c == 0xE2 || c == 0xE3 || c == 0xEF || c == 0xF3;
}

// The code point of such a character encoded at s[i..), with *len (when not
// null) its length in bytes; 0 when there is none there.
inline unsigned invisible_at(std::string_view s, size_t i, size_t* len = nullptr) {
  if (i >= s.size() || !may_start_invisible(static_cast<unsigned char>(s[i]))) return 0;
  size_t n = utf8_length(static_cast<unsigned char>(s[i]));
  if (n == 0 || i + n > s.size()) return 0;
  unsigned cp = static_cast<unsigned char>(s[i]) & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (size_t k = 1; k < n; ++k) {
    unsigned b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (!is_invisible_control(cp)) return 0;
  if (len) *len = n;
  return cp;
}

// "[U+202E]".
inline std::string shown_code_point(unsigned cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "[U+%04X]", cp);
  return buf;
}

// Whether `text` shows nothing: empty, or only ASCII white space and the
// characters above (a required reason of " " or U+200B is no reason).
inline bool blank(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      ++i;
      continue;
    }
    size_t n = 0;
    if (invisible_at(text, i, &n)) {
      i += n;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace referee::base
