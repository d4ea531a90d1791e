// Live checking: every output line of a run goes through the rules engine as
// it arrives, and a violation that no later line can repair is reported at
// once so the harness can stop the run.
//
// Lines are parsed once, in chunks (at most 64 KiB, and whatever arrived
// before a check), and go once through rules::LiveLog, which keeps only what
// the rules need at the end; a check (at most every `min_interval`, and only
// when new MLLOG lines arrived) asks it for the batch checker's findings over
// the lines so far, so cost per line and memory stay flat however long the
// run. The text itself goes to an unnamed temporary file, not to memory.
// When the rule set reads the whole log (LiveLog::whole_log), a check runs the
// batch checker over everything instead, but only when the MLLOG lines have
// doubled since the last such check: O(n log n) in all, O(log n) per line.
// A finding is irreparable when it is a parse error, a failed CHECK or
// FIRST_CHECK (later lines never clear one), a key required EXACTLY_ONE logged
// again with another value (a second run_start), or a rule file that cannot be
// found; requirements not met yet (a missing run_stop, a target not reached)
// are not; nor is, with a rule set that reads the whole log, a finding about
// a key no log line has (a line the rule code made from other lines, which
// later lines change). A second run_start stops a run whatever the rules say of it
// (second_run_start). final_verdict ends the streaming check (END blocks run
// once): memory stays flat from the first line to the verdict; only a rule
// set that reads the whole log has the batch checker run over it all.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
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
  ~LiveChecker();
  LiveChecker(const LiveChecker&) = delete;
  LiveChecker& operator=(const LiveChecker&) = delete;

  // Adds one output line (without its newline). Returns the first
  // irreparable finding once it is known (at most once).
  std::optional<rules::Finding> add_line(std::string_view line);
  // Checks now, whatever the interval.
  std::optional<rules::Finding> check_now();
  // What the batch checker finds over the lines added so far, END blocks
  // aside (they run at the end); the batch checker itself for rule sets that
  // read the whole log.
  rules::FileVerdict verdict_so_far();
  // The batch verdict over everything added: from the rules' state the lines
  // left (END blocks run once), without reading the text again, unless the
  // rule set reads the whole log. No line may be added after it.
  rules::FileVerdict final_verdict();
  // Writes everything added to `path` (atomically, in pieces: the text is
  // never whole in memory). False with *error when it cannot.
  bool save_text(const std::string& path, std::string* error);

  // Everything added, one line per add_line, each ending in a newline (read
  // back from the temporary file: as long as the log).
  std::string text();
  size_t mllog_lines() const { return mllog_lines_; }
  // The last eval_accuracy value seen ("" when none yet), for progress display.
  const std::string& last_eval() const { return last_eval_; }
  size_t checks_run() const { return checks_; }
  // Checks that ran the batch checker over the whole log (whole-log rule sets only).
  size_t full_checks_run() const { return full_checks_; }
  // Whether the rule set reads the whole log (checked in full, when the log doubled).
  bool whole_log() const { return stream_->whole_log(); }
  // Bytes held in memory for lines not yet parsed (at most about 64 KiB).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  void flush();
  std::string spooled();
  // The spooled text, in pieces that end at line ends (rules::TextPieces).
  void spooled_pieces(const std::function<void(std::string_view)>& sink);
  std::string spooled_file();
  std::string spool_path() const;
  std::optional<rules::Finding> first_irreparable(const rules::FileVerdict& v);

  const rules::RuleSet& rules_;
  std::chrono::milliseconds min_interval_;
  std::chrono::steady_clock::time_point last_check_{};
  std::unique_ptr<rules::LogStream> stream_;  // parses each chunk once and feeds the rules
  std::FILE* spool_ = nullptr;   // the text so far, but for pending_
  bool spool_failed_ = false;   // then the text is kept in memory_
  std::string memory_;
  std::string pending_;          // lines not parsed yet
  bool has_run_start_ = false;
  uint32_t run_start_line_ = 0;
  std::optional<rules::Finding> second_;
  size_t next_full_ = 0;         // whole-log rule sets: MLLOG lines at the next full check
  size_t full_checks_ = 0;
  size_t mllog_lines_ = 0;
  size_t checked_lines_ = 0;
  size_t checks_ = 0;
  bool reported_ = false;
  bool finished_ = false;        // final_verdict() ran the END blocks: nothing more is fed to the rules
  std::optional<rules::FileVerdict> final_;
  std::string last_eval_;
  mllog::LogReader reader_;
};

}  // namespace referee::harness
