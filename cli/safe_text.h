// Text that others wrote (objection titles and texts, quoted log lines,
// names from packages) must not drive the reader's terminal: the review
// commands and the store's questions print through a filter that shows
// control characters in caret notation (ESC as ^[, BEL as ^G, DEL as ^?),
// the characters that reorder or hide text as [U+XXXX] (base/invisible.h),
// and keeps newlines, tabs, CR LF pairs (CSV's record ends) and everything
// else as it is. The filter works on
// bytes, so it gives the same output for a local store and a server.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

#include "base/text.h"

namespace referee::cli {

// `text` with control characters other than \n and \t in caret notation.
using base::caret_escape;

// Installs the filter on `os` for as long as it lives. `colours`: the colour
// sequences referee's own reports use (ESC [0m, [31m, [32m, [33m: red,
// green, yellow, reset) pass; they colour text, and neither move the cursor
// nor hide anything. Every other control character is shown.
class SafeTextFilter {
 public:
  explicit SafeTextFilter(std::ostream& os, bool colours = false);
  ~SafeTextFilter();
  SafeTextFilter(const SafeTextFilter&) = delete;
  SafeTextFilter& operator=(const SafeTextFilter&) = delete;

 private:
  class Buf;
  std::ostream& os_;
  std::streambuf* orig_;
  Buf* buf_;
};

// Whether a command's output passes through the filter (the review commands,
// the store's questions, and the checks, which print names and log lines from
// packages); *colours: whether the command colours its verdicts.
bool prints_others_text(const std::string& command, bool* colours = nullptr);

// Whether the command line asks for output that programs read (--json,
// --csv, --csv-detailed, --format json): into a file or a pipe it goes byte
// for byte (a CSV equal to the consortium summarizer's, names and all); to a
// terminal it is shown through the filter like everything else.
bool machine_readable_output(int argc, const char* const* argv);

// The review keeps its texts (titles, responses, reasons, names) in UTF-8,
// the same whether a command works on a local store or sends to a server.
// For a command that writes to the review (user, round, review,
// resubmission, objection): "" when every argument is valid UTF-8, else the
// message that names the first one that is not and how to convert it.
std::string non_utf8_argument(int argc, const char* const* argv);

}  // namespace referee::cli
