// Small text helpers used across referee: ASCII case folding, trimming,
// caret notation for control characters, and the edit distance behind every
// "did you mean" suggestion. All of them work on bytes: UTF-8 passes through
// unchanged, and no locale is consulted.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace referee::base {

// `s` with A-Z turned into a-z; every other byte as it is.
std::string lower(std::string_view s);
// `s` with a-z turned into A-Z; every other byte as it is.
std::string upper(std::string_view s);
// Whether `a` and `b` are equal ignoring ASCII case.
bool iequals(std::string_view a, std::string_view b);
// `s` with its capitals as lower-case letters: A-Z, and the capitals of
// Latin-1, Latin Extended-A, Greek and Cyrillic in UTF-8 ("MÜLLER" gives
// "müller", "ŁÓDŹ" gives "łódź"); every other byte as it is.
std::string fold_case(std::string_view s);
// Whether names people type (a submitter, a system) are the same, case
// ignored as fold_case ignores it.
bool same_name(std::string_view a, std::string_view b);

// `s` without leading and trailing ASCII white space (space, \t, \n, \v, \f, \r).
std::string trim(std::string_view s);

// The pieces of `s` between the bytes `sep`, empty pieces included: "a,,b"
// gives {"a", "", "b"}, "" gives {""}.
std::vector<std::string> split(std::string_view s, char sep);

// Appends the byte `c` to *out, a control character (below 0x20 other than
// \n and \t, and DEL) in caret notation: ESC as "^[", BEL as "^G", CR as
// "^M", DEL as "^?". `keep_lines` false: \n and \t too ("^J", "^I").
void append_caret(std::string* out, unsigned char c, bool keep_lines = true);
// `text` with its control characters other than \n and \t in caret
// notation (see append_caret): text that others wrote, made safe to print.
std::string caret_escape(std::string_view text);
// `text` as one line: every control character, \n and \t included, in
// caret notation, and the characters that reorder or hide text as [U+XXXX]
// (base/invisible.h). For log lines that quote what a caller sent, and names
// in reports and table cells.
std::string one_line(std::string_view text);

// `text` as a message quotes what a caller sent: at most `max` bytes (cut
// at a UTF-8 character's start), then "... (N bytes)" when it was longer.
std::string excerpt(std::string_view text, size_t max = 80);

// The Levenshtein distance between `a` and `b` (insertions, deletions and
// substitutions of bytes each count 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The entry of `known` nearest to `name` by edit distance (the first of
// equals), when it is close enough to be a typo: at most
// max(2, name.size() / 3) edits away. "" when none is.
std::string nearest_name(std::string_view name, const std::vector<std::string>& known);

// Whether `text` is valid UTF-8 (no overlongs, no surrogates); *bad_at is
// the offset of the first bad byte.
bool valid_utf8(std::string_view text, size_t* bad_at = nullptr);

// `text` as UTF-8: valid sequences as they are, any other byte as its latin-1
// character (0xE9 becomes U+00E9, "é"), as the JSON writers read such text.
std::string utf8_text(std::string_view text);

// Columns `text` takes on a terminal: a UTF-8 character one, an East Asian
// wide one (CJK, Hangul, full-width forms, most emoji) two, a combining mark
// or zero-width character none; a byte that is not UTF-8 one.
size_t display_width(std::string_view text);

// 'text' for a POSIX shell: single quotes, each ' as '\''.
std::string shell_quote(std::string_view text);
// `words` as a shell command line for people to read: each quoted with
// shell_quote only when it holds a character the shell treats specially.
std::string shell_words(const std::vector<std::string>& words);

// A hash map keyed by std::string that finds a std::string_view without
// building a string for it (heterogeneous lookup).
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringViewHash, std::equal_to<>>;

}  // namespace referee::base
