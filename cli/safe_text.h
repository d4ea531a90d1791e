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

// Installs the filter on `os` for as long as it lives.
class SafeTextFilter {
 public:
  explicit SafeTextFilter(std::ostream& os);
  ~SafeTextFilter();
  SafeTextFilter(const SafeTextFilter&) = delete;
  SafeTextFilter& operator=(const SafeTextFilter&) = delete;

 private:
  class Buf;
  std::ostream& os_;
  std::streambuf* orig_;
  Buf* buf_;
};

// Whether a command's output passes through the filter (the review commands
// and the store's questions).
bool prints_others_text(const std::string& command);

// The review keeps its texts (titles, responses, reasons, names) in UTF-8,
// the same whether a command works on a local store or sends to a server.
// For a command that writes to the review (user, round, review,
// resubmission, objection): "" when every argument is valid UTF-8, else the
// message that names the first one that is not and how to convert it.
std::string non_utf8_argument(int argc, const char* const* argv);

}  // namespace referee::cli
