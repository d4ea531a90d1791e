// Per-file compliance: runs a rule set over one parsed log with the
// consortium's semantics (see docs/known-differences.md for where referee
// deliberately differs).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mllog/reader.h"
#include "rules/ruleset.h"

namespace referee::rules {

// One finding about a file. Expected failures are values, never exceptions.
struct Finding {
  uint32_t line = 0;       // line in the log file (1-based), 0 when not about a line
  std::string rule;        // "closed_gpt3.yaml KEY opt_adam_beta_2 CHECK", "REQ EXACTLY_ONE run_stop", ...
  std::string message;     // one sentence
  std::string expected;    // what the rule wants
  std::string found;       // what the log has
  std::string hint;        // how to fix it, when we can tell
  std::string log_text;    // the offending log line, clipped
  std::string key;         // log key, when the finding is about one
};

struct FileVerdict {
  bool compliant = true;
  std::vector<Finding> errors;
  std::vector<Finding> warnings;
  uint32_t mllog_lines = 0;
};

// Checks `log` against `rules`, starting from rules.entry() (or `entry`).
FileVerdict check_log(const RuleSet& rules, const mllog::ParsedLog& log, const std::string& entry = "");

// The same check on a log that grows: each line is evaluated once, when it
// arrives, and only what the rules need at the end is kept (per rule file its
// `s` and, per KEY record, counts, the first value and the few lines the
// requirements name), so cost per line and memory do not grow with the log.
// verdict() is what check_log would give over the lines fed so far, except
// for END blocks, which run only at the end (final_verdict()). A rule file that reads the whole log (`loglines`),
// END code that enqueues files, or more than 256 enqueued files make
// whole_log() true: the caller must then use check_log over the whole log.
// A source of text sent in pieces, each ending at a line end (the last may
// end at the end of the text): memory holds a piece, not the text.
using TextPieces = std::function<void(const std::function<void(std::string_view piece)>& sink)>;

class LiveLog {
 public:
  explicit LiveLog(const RuleSet& rules);
  ~LiveLog();
  LiveLog(const LiveLog&) = delete;
  LiveLog& operator=(const LiveLog&) = delete;

  // Feeds the MLLOG lines of `chunk`, text that follows what was fed before;
  // its events' file_line and lineno must already count from the start of the
  // log. `prefix` sends the log's text before the chunk, in pieces that end at
  // line ends: a rule file that a line enqueues reads it once, piece by piece.
  void feed(const mllog::ParsedLog& chunk, const TextPieces& prefix);
  FileVerdict verdict();
  // What check_log gives over every line fed, END blocks included (unless
  // whole_log()); no line may be fed after it.
  FileVerdict final_verdict();
  bool whole_log() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A log read in pieces of whole lines (a file read block by block, a run's
// output as it comes): each piece is parsed once, its lines numbered from the
// start of the log, and fed to a LiveLog. Memory: one piece and what the
// rules keep, whatever the length of the log.
class LogStream {
 public:
  explicit LogStream(const RuleSet& rules);
  ~LogStream();
  LogStream(const LogStream&) = delete;
  LogStream& operator=(const LogStream&) = delete;

  // Adds `text`, which follows what was added before and ends at a line end
  // (or at the log's end). `prefix` sends the text before it in pieces (called
  // only when a line enqueues a rule file late). Returns the piece parsed,
  // its lines numbered from the start of the log (valid until the next add).
  const mllog::ParsedLog& add(std::string_view text, const TextPieces& prefix);
  // As LiveLog's: when true, only check_log over the whole text gives the verdict.
  bool whole_log() const { return live_.whole_log(); }
  FileVerdict verdict() { return live_.verdict(); }
  // check_log's verdict over everything added (END blocks run once); nothing
  // may be added after it.
  FileVerdict final_verdict();
  uint64_t mllog_lines() const { return mllog_; }
  uint64_t line_breaks() const { return breaks_; }

 private:
  LiveLog live_;
  mllog::LogReader reader_;
  mllog::ParsedLog chunk_;
  uint64_t breaks_ = 0;  // line breaks before the next piece, as the reader counts them
  uint64_t mllog_ = 0;   // MLLOG lines before it
};

// Line breaks in `text` as the log reader counts them: universal newlines
// ("\r" alone ends a line too) when the text has a carriage return.
uint64_t count_line_breaks(std::string_view text);

}  // namespace referee::rules
