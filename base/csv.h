// Reading comma-separated values as RFC 4180 writes them (and spreadsheets
// export them): fields separated by commas, records by CRLF or LF; a field
// in double quotes may hold commas, line ends and "" for a quote. A UTF-8
// byte order mark at the start is skipped. Written here rather than taken
// from a library: the format is twenty lines of rules, and what callers need
// beyond a parser is the line each record starts on, for their messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace referee::base {

struct CsvRecord {
  size_t line = 0;                  // 1-based line of the file where the record starts
  std::vector<std::string> fields;
};

// Parses `text` into records (an empty line is no record). False with
// *error ("line N: a quoted field is not closed", "line N: text after a
// closing quote") on malformed input.
bool parse_csv(std::string_view text, std::vector<CsvRecord>* out, std::string* error);

}  // namespace referee::base
