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
// for END blocks, which run only at the end (use check_log on the whole file
// for the final verdict). A rule file that reads the whole log (`loglines`),
// END code that enqueues files, or more than 256 enqueued files make
// whole_log() true: the caller must then use check_log over the whole log.
class LiveLog {
 public:
  explicit LiveLog(const RuleSet& rules);
  ~LiveLog();
  LiveLog(const LiveLog&) = delete;
  LiveLog& operator=(const LiveLog&) = delete;

  // Feeds the MLLOG lines of `chunk`, text that follows what was fed before;
  // its events' file_line and lineno must already count from the start of the
  // log. `prefix` returns the log's text before the chunk: a rule file that a
  // line enqueues reads it once.
  void feed(const mllog::ParsedLog& chunk, const std::function<std::string()>& prefix);
  FileVerdict verdict();
  bool whole_log() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace referee::rules
