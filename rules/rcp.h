// Reference convergence points: the consortium's RCP checker, reproduced.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mllog/reader.h"
#include "rules/facts.h"
#include "rules/value.h"

namespace referee::rules {

struct RcpRecord {
  std::string name;
  std::string benchmark;
  double bs = 0;
  std::vector<double> points;  // sorted
  double mean = 0, stdev = 0, max_speedup = 0, min_epochs = 0;
  // min_epochs and max_speedup are computed when a record is used
  // (RcpTable::complete): their bisection over Student's t is most of the
  // cost of loading a table, and a check uses one record or two of it.
  double n_ref = 0;    // the reference runs the minimum acceptable mean is for
  bool stats = false;  // min_epochs and max_speedup computed
};

// What one result file says about convergence (the RCP checker's reading).
struct RunConvergence {
  bool converged = false;   // a run_stop with status "success"
  double epochs = 1e9;      // convergence point (1e9 when not converged)
  bool has_bs = false;
  Value bs;                 // value of the last line whose JSON mentions global_batch_size
  std::string benchmark;    // submission_benchmark
  std::string error;        // the consortium's checker would stop with an exception here
};

RunConvergence read_convergence(const mllog::ParsedLog& log, const std::string& ruleset_version,
                                Convergence how);

// The same reading, line by line: add() the JSON and key of each MLLOG line
// in order (a log read in pieces: the reader's events, whose JSON is a valid
// object with a value and metadata), then result(). Keeps only the reading's
// state (for stable diffusion, its evaluation steps).
class ConvergenceReader {
 public:
  ConvergenceReader(std::string ruleset_version, Convergence how);
  void add(std::string_view json, std::string_view key);
  RunConvergence result() const;

 private:
  std::string ruleset_version_;
  Convergence how_;
  RunConvergence out_;
  bool have_conv_ = false;
  double conv_ = 0;
  std::map<double, std::pair<Value, Value>> sd_;  // step -> (FID, CLIP)
  std::vector<double> sd_order_;                  // steps in first-seen order
  std::string benchmark_;
  bool have_benchmark_ = false;
};

struct RcpOutcome {
  bool evaluated = false;       // reference statistics available
  bool pass = false;
  bool bypassed = false;
  std::string status;           // found, interpolated, smaller_batch_ok, missing, no_rcps, no_batch_size, not_converged
  std::string message;          // the consortium's wording ("RCP found", "RCP Interpolation", ...)
  std::string explanation;      // referee's sentence about why
  double batch_size = 0;            // BS of the reference record evaluated (the submission's until one is)
  double submission_batch_size = 0; // global_batch_size the runs log
  bool has_batch_size = false;
  double norm_factor = 1.0;
  double rcp_mean = 0, rcp_stdev = 0, max_speedup = 0, min_epochs = 0, submission_mean = 0;
  std::vector<double> run_epochs;  // sorted
  bool too_few_runs = false;       // no olympic mean: at most 2 x the dropped runs (the mean is nan)
};

class RcpTable {
 public:
  // Loads rcps_<benchmark>.json. n_runs: the benchmark's required submission runs.
  // ruleset_version ("5.0.0"): rules that changed between rounds depend on it
  // (llama31_405b's max speedup from 5.0.0 on).
  bool load(const std::string& path, const std::string& benchmark, int n_runs, std::string* error,
            const std::string& ruleset_version = "");
  // Max speedup the evaluation uses for `rec`: the record's, except for
  // llama31_405b from ruleset 5.0.0 on, where the consortium's checker replaces
  // it with RCP mean / (min acceptable mean - 46080).
  double eval_max_speedup(const RcpRecord& rec) const;
  const std::vector<RcpRecord>& records() const { return completed(all_); }
  const std::vector<RcpRecord>& pruned() const { return completed(pruned_); }
  // `rec` with min_epochs and max_speedup computed.
  RcpRecord complete(const RcpRecord& rec) const;

  // The reference a run at batch size `bs` is held to, found as evaluate()
  // finds it: the pruned record at that BS ("found"), else one interpolated
  // between the nearest pruned records below and above ("interpolated").
  // False when none applies (*status "missing": BS above every record, or
  // below every record, where the checker only accepts slower convergence;
  // "no_rcps": an empty table), with a sentence in *why.
  bool reference_at(double bs, RcpRecord* out, std::string* status, std::string* why) const;

  // The consortium's check_directory for the runs of one benchmark directory.
  RcpOutcome evaluate(const std::vector<RunConvergence>& runs, bool bypass) const;

 private:
  RcpRecord interpolate(double bs, const RcpRecord& lo, const RcpRecord& hi) const;
  double min_acceptable_mean(double mean, double stdev, double n_ref) const;
  void prune();
  const std::vector<RcpRecord>& completed(std::vector<RcpRecord>& records) const;

  std::string benchmark_;
  std::string version_;
  int n_runs_ = 0;
  int drop_ = 1;
  // Mutable: records() and pruned() complete their records on first use.
  mutable std::vector<RcpRecord> all_;     // sorted by BS (stable)
  mutable std::vector<RcpRecord> pruned_;
};

// numpy's float64 sum (pairwise), mean and population standard deviation.
double np_sum(const double* a, size_t n);
double np_mean(const std::vector<double>& v);
double np_std(const std::vector<double>& v);
// One-sided p-value of the consortium's t-test (scipy ttest_ind_from_stats, equal variances).
double one_sided_p(double m1, double s1, double n1, double m2, double s2, double n2);
// The consortium's is_version_at_least("5.1.0", "5.0.0"): dotted integers
// compared as tuples, the shorter padded with zeros. False when either is not
// such a version.
bool version_at_least(const std::string& version, const std::string& min_version);
// Python's round(x, n) for a float.
double py_round_to(double x, int n);

}  // namespace referee::rules
