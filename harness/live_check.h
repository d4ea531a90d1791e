// Live checking: every output line of a run goes through the rules engine as
// it arrives, and a violation that no later line can repair is reported at
// once so the harness can stop the run.
//
// The checker re-runs the full compliance check over the lines so far, at
// most every `min_interval` and only when new MLLOG lines arrived, so its
// verdicts are exactly the batch checker's. A finding is irreparable when it
// is a parse error, a failed CHECK or FIRST_CHECK (later lines never clear
// one), a key required EXACTLY_ONE logged again with another value (a
// second run_start), or a rule file that cannot be found; requirements not
// met yet (a missing run_stop, a target not reached) are not. A second
// run_start stops a run whatever the rules say of it (second_run_start).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/ruleset.h"

namespace referee::harness {

bool is_irreparable(const rules::Finding& f);

// A second run_start in `log` (the run was relaunched inside one log): the
// consortium only warns, and counts time to train from the last one, so the
// harness stops such a run itself, whatever the rules' verdict. The finding
// names both lines.
std::optional<rules::Finding> second_run_start(const mllog::ParsedLog& log);

class LiveChecker {
 public:
  explicit LiveChecker(const rules::RuleSet& rules,
                       std::chrono::milliseconds min_interval = std::chrono::milliseconds(200));

  // Adds one output line (without its newline). Returns the first
  // irreparable finding once it is known (at most once).
  std::optional<rules::Finding> add_line(std::string_view line);
  // Checks now, whatever the interval.
  std::optional<rules::Finding> check_now();
  // The batch verdict over everything added.
  rules::FileVerdict final_verdict();

  const std::string& text() const { return text_; }
  size_t mllog_lines() const { return mllog_lines_; }
  // The last eval_accuracy value seen ("" when none yet), for progress display.
  const std::string& last_eval() const { return last_eval_; }
  size_t checks_run() const { return checks_; }

 private:
  const rules::RuleSet& rules_;
  std::chrono::milliseconds min_interval_;
  std::chrono::steady_clock::time_point last_check_{};
  std::string text_;
  size_t mllog_lines_ = 0;
  size_t checked_lines_ = 0;
  size_t checks_ = 0;
  bool reported_ = false;
  std::string last_eval_;
  mllog::LogReader reader_;
};

}  // namespace referee::harness
