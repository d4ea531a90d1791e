// Per-file compliance: runs a rule set over one parsed log with the
// consortium's semantics (see docs/known-differences.md for where referee
// deliberately differs).
#pragma once

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

}  // namespace referee::rules
