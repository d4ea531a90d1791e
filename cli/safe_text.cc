#include "cli/safe_text.h"

#include <set>

#include "base/digest.h"
#include "base/invisible.h"

namespace referee::cli {

namespace {

using base::append_caret;

// `pending_cr` (when not null) lets a CR through when an LF follows it, also
// in the next write: CSV records end with CRLF, which moves no cursor
// anywhere a newline would not. A CR followed by anything else is shown as ^M.
// Characters that reorder or hide text (base/invisible.h) are shown as
// [U+XXXX]; `held` (when not null) keeps the first bytes of one that the
// write cut, for the next write.
// The length of the colour sequence of referee's own reports (cli/output.h: paint) at s[i..n), or 0.
size_t colour_at(const char* s, std::streamsize i, std::streamsize n) {
  static constexpr std::string_view kColours[] = {"\033[0m", "\033[31m", "\033[32m", "\033[33m"};
  const std::string_view rest(s + i, static_cast<size_t>(n - i));
  for (std::string_view c : kColours)
    if (rest.substr(0, c.size()) == c) return c.size();
  return 0;
}

void append_safe(std::string* out, const char* s, std::streamsize n, bool* pending_cr = nullptr, std::string* held = nullptr,
                 bool colours = false) {
  std::string joined;
  if (held && !held->empty()) {
    joined = *held + std::string(s, static_cast<size_t>(n));
    held->clear();
    s = joined.data();
    n = static_cast<std::streamsize>(joined.size());
  }
  const std::string_view text(s, static_cast<size_t>(n));
  for (std::streamsize i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (base::may_start_invisible(c)) {
      const auto len = static_cast<std::streamsize>(base::utf8_length(c));
      if (held && i + len > n) {  // perhaps cut by the write: decided with the next one
        held->assign(s + i, static_cast<size_t>(n - i));
        return;
      }
      size_t got = 0;
      if (unsigned cp = base::invisible_at(text, static_cast<size_t>(i), &got)) {
        if (pending_cr && *pending_cr) {
          *pending_cr = false;
          append_caret(out, '\r');
        }
        *out += base::shown_code_point(cp);
        i += static_cast<std::streamsize>(got) - 1;
        continue;
      }
    }
    if (pending_cr && *pending_cr) {
      *pending_cr = false;
      if (c == '\n') out->push_back('\r');
      else append_caret(out, '\r');
    }
    if (pending_cr && c == '\r') {
      *pending_cr = true;
      continue;
    }
    if (colours && c == 0x1b) {
      if (size_t len = colour_at(s, i, n)) {
        out->append(s + i, len);
        i += static_cast<std::streamsize>(len) - 1;
        continue;
      }
    }
    append_caret(out, c);
  }
}

}  // namespace

class SafeTextFilter::Buf : public std::streambuf {
 public:
  Buf(std::streambuf* dest, bool colours) : dest_(dest), colours_(colours) {}

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    char c = traits_type::to_char_type(ch);
    scratch_.clear();
    append_safe(&scratch_, &c, 1, &pending_cr_, &held_, colours_);
    if (dest_->sputn(scratch_.data(), static_cast<std::streamsize>(scratch_.size())) !=
        static_cast<std::streamsize>(scratch_.size()))
      return traits_type::eof();
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    scratch_.clear();
    append_safe(&scratch_, s, n, &pending_cr_, &held_, colours_);
    if (dest_->sputn(scratch_.data(), static_cast<std::streamsize>(scratch_.size())) !=
        static_cast<std::streamsize>(scratch_.size()))
      return 0;
    return n;
  }
  int sync() override { return dest_->pubsync(); }

 public:
  // A CR left waiting for an LF at the end of the output is shown as ^M.
  void finish() {
    if (!held_.empty()) {  // the output ended inside a possible [U+XXXX]: what was held, as it is
      scratch_.clear();
      append_safe(&scratch_, held_.data(), static_cast<std::streamsize>(held_.size()), &pending_cr_);
      held_.clear();
      dest_->sputn(scratch_.data(), static_cast<std::streamsize>(scratch_.size()));
    }
    if (pending_cr_) {
      pending_cr_ = false;
      dest_->sputn("^M", 2);
    }
    dest_->pubsync();
  }

 private:
  std::streambuf* dest_;
  std::string scratch_;
  std::string held_;
  bool pending_cr_ = false;
  bool colours_ = false;
};

SafeTextFilter::SafeTextFilter(std::ostream& os, bool colours) : os_(os), orig_(os.rdbuf()), buf_(new Buf(orig_, colours)) {
  os_.rdbuf(buf_);
}

SafeTextFilter::~SafeTextFilter() {
  os_.flush();
  buf_->finish();
  os_.rdbuf(orig_);
  delete buf_;
}

bool prints_others_text(const std::string& command, bool* colours) {
  static const std::set<std::string> kCommands = {"user",    "round",   "review",      "resubmission", "audit",
                                                  "objection", "compare", "speedup",   "scaling",      "leaderboard",
                                                  "list",    "check",   "check-package", "score",      "import",
                                                  "system",  "package", "fetch"};
  static const std::set<std::string> kColoured = {"check", "check-package"};
  if (colours) *colours = kColoured.count(command) > 0;
  return kCommands.count(command) > 0;
}

bool machine_readable_output(int argc, const char* const* argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") break;
    if (a == "--json" || a == "--csv" || a == "--csv-detailed" || a == "--format=json") return true;
    if (a == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json") return true;
  }
  return false;
}

std::string non_utf8_argument(int argc, const char* const* argv) {
  static const std::set<std::string> kWriters = {"user", "round", "review", "resubmission", "objection"};
  if (argc < 2 || kWriters.count(argv[1]) == 0) return "";
  for (int i = 2; i < argc; ++i) {
    size_t at = 0;
    if (base::valid_utf8(argv[i], &at)) continue;
    std::string shown;  // bytes from 0x80 as \xNN: the terminal would show them as noise
    for (unsigned char c : std::string(argv[i])) {
      if (c < 0x80) {
        shown += caret_escape(std::string(1, static_cast<char>(c)));
      } else {
        shown += "\\x";
        base::append_hex(&shown, c, true);
      }
    }
    return std::string(argv[1]) + ": argument " + std::to_string(i - 1) + " (" + shown +
           ") is not valid UTF-8 (byte " + std::to_string(at + 1) +
           "); the review keeps its texts in UTF-8: convert it first, e.g. with iconv -f LATIN1 -t UTF-8";
  }
  return "";
}

}  // namespace referee::cli
