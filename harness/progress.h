// Progress of a run, read from its log as it grows: the last evaluation
// beside the benchmark's quality target, how far the run has come in the
// unit the RCP checker counts (epochs or samples, read from the last
// evaluation's metadata) against what the benchmark's reference convergence
// points expect at the run's batch size, and its time to train so far, from
// the log's own timestamps (run_start to the last evaluation, or to run_stop),
// never from wall time.
//
// "About 60% of the way" is the last evaluation's epoch (or sample count)
// over the RCP mean at the run's global_batch_size: the pruned reference at
// that batch size, else one interpolated between its neighbours, exactly as
// the RCP checker picks it. "~20 min left" is the time the run took per epoch
// so far times the epochs still expected. When no reference applies (no RCP
// table, a batch size outside the table, no batch size logged yet) there is
// no fraction and no estimate, and the reason is given instead.
//
// docs/progress.md describes what is shown and the JSON fields.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "rules/facts.h"
#include "rules/rcp.h"
#include "rules/ruleset.h"

namespace referee::harness {

// What a benchmark's runs are measured against.
struct ProgressModel {
  std::string benchmark;
  rules::QualityTarget target;    // metric key and target, when the rule set has one
  std::string field = "epoch_num";  // metadata field of an evaluation that counts progress
  std::string quantity = "epochs";  // what it counts: epochs, samples, tokens, steps
  std::unique_ptr<rules::RcpTable> rcp;  // null when the benchmark has none
  std::string no_rcp;             // why there is none ("" when there is)
};

// The model for `benchmark` of `rules` (its quality target, its convergence
// unit and its RCP table). Never fails: what cannot be had is said in no_rcp.
std::shared_ptr<const ProgressModel> load_progress_model(const rules::RuleSet& rules, const rules::RoundFacts& facts,
                                                         const std::string& benchmark);

// What is known of one run at one moment.
struct Progress {
  bool started = false;          // run_start logged
  bool stopped = false;          // run_stop logged
  bool ended = false;            // the run is over (its process or job ended, or it was stopped or cancelled),
                                 // with or without run_stop: nothing is left to estimate
  std::string stop_status;       // run_stop's metadata.status ("success", "aborted"), when logged
  bool has_batch_size = false;
  double batch_size = 0;         // global_batch_size
  size_t evals = 0;              // evaluations of the target metric so far
  bool has_eval = false;
  double eval = 0;               // the last evaluation's value
  bool has_position = false;
  double position = 0;           // the last evaluation's epochs (samples): metadata.<field>
  bool target_reached = false;   // the last evaluation meets the target
  bool has_time_to_train = false;
  double time_to_train_s = 0;    // run_start to run_stop, else to the last evaluation (log time)
  bool has_expected = false;
  double expected = 0;           // RCP mean at the run's batch size
  std::string expected_basis;    // "RCP at batch size 128", "RCP interpolated between ..."
  std::string no_expected;       // why there is no expectation ("" when there is one)
  bool has_fraction = false;
  double fraction = 0;           // position / expected
  bool has_eta = false;
  double eta_s = 0;              // time to train still expected at the pace so far; none once the run
                                 // has ended, logged run_stop, or reached the target (it stops there)
};

// Follows one run's log, line by line. Cheap for lines that are not MLLOG
// lines or whose key does not matter here.
class ProgressTracker {
 public:
  explicit ProgressTracker(std::shared_ptr<const ProgressModel> model);
  void add_line(std::string_view line);
  // The log started again (a truncated log file): forget everything.
  void reset();
  // The run is over: snapshots say so and give no estimate of time left.
  void end() { ended_ = true; }
  Progress snapshot() const;
  // Counts what a person would call progress: run_start, an evaluation, run_stop.
  uint64_t events() const { return events_; }
  const ProgressModel& model() const { return *model_; }

 private:
  std::shared_ptr<const ProgressModel> model_;
  bool started_ = false, stopped_ = false, ended_ = false;
  std::string stop_status_;
  double start_ms_ = 0, stop_ms_ = 0, eval_ms_ = 0;
  bool has_bs_ = false;
  double bs_ = 0;
  size_t evals_ = 0;
  bool has_eval_ = false, has_position_ = false;
  double eval_ = 0, position_ = 0;
  uint64_t events_ = 0;
};

// One run as the harness reports its progress.
struct RunProgress {
  std::string id;
  std::string state;       // waiting, running, succeeded, failed, cancelled, timed out, stopped
  double wall_s = 0;       // wall time since it was launched (for the display; not time to train)
  size_t lines = 0;        // log lines so far
  Progress progress;
};

// "4:05", "1 h 02 min", "35 s": a duration for a person.
std::string format_duration(double seconds);

// One line for a person: "eval_accuracy 0.9123 at 4 epochs (target >= 0.95);
// 4 of ~6.2 epochs (RCP at batch size 128): about 65% of the way, ~1 min 10 s
// left; time to train 2 min 03 s".
std::string progress_text(const Progress& p, const ProgressModel& model);

// One JSON object (no newline) for a run: docs/progress.md lists the fields.
std::string progress_json(const RunProgress& r, const ProgressModel& model);

// One JSON object for a harness event ("minilm-2: started (seed 7)").
std::string event_json(const std::string& message);

}  // namespace referee::harness
