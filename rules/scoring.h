// The two formulas a training score is made of, once for every caller
// (rules::score_package, the review's score impact and audit, the reports'
// head-to-head page, the harness): a run's time to train as the consortium's
// result summarizer pairs run_start and run_stop, and the olympic mean of a
// result's times with as many runs dropped at each end as the round's facts
// say (one; four for unet3d).
#pragma once

#include <cmath>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mllog/reader.h"
#include "rules/facts.h"

namespace referee::rules {

// Whether a score in minutes is a time to train: finite and above 0. A
// scaling.json factor of 0 or below, or a run_stop logged before its
// run_start, gives one that is not (the summarizer applies it all the same);
// rankings leave such a result out and the audit names it.
inline bool is_time_to_train(double minutes) { return minutes > 0 && minutes < HUGE_VAL; }

// ------------------------------------------------------------ olympic mean

// Runs dropped at each end of a benchmark's olympic window, from the round's
// facts (BenchmarkFacts::olympic_drop); 1 for a benchmark the facts do not
// list.
int olympic_drop(const RoundFacts& facts, const std::string& benchmark);

// The same for a round named by its rule set id ("training-3.1.0"), for
// callers that know only the name (the store's rounds): the facts of
// rules::facts_for(id, builtin_sets_dir()), i.e. the project's own sets'
// facts files, else referee's table of training rounds; 1 for a round or
// benchmark none of them knows.
int olympic_drop(const std::string& ruleset, const std::string& benchmark);

// The window of the olympic mean over `n` timed runs sorted by time:
// indices [lo, hi). `drop` runs are dropped at each end, except that
// `already_dropped` runs (non-compliant runs, taken out before the window)
// count as dropped at the slow end, as the summarizer's
// _compute_olympic_average does: lo = drop, hi = n - (drop - already_dropped).
// empty() when no run is left in it.
struct OlympicWindow {
  long lo = 0, hi = 0;
  bool empty() const { return hi <= lo; }
  long size() const { return empty() ? 0 : hi - lo; }
};
OlympicWindow olympic_window(size_t n, int drop, int already_dropped = 0);

// The olympic mean of `times` (any unit): the times sorted, the window above,
// the mean of the rest, summed left to right and divided by their count (the
// summarizer's sum(...) * 1.0 / len(...); agrees with it to the last bit).
//
// Too few runs: NaN when the window is empty (n <= 2 x drop with no run
// already dropped; the summarizer returns None and the result has no score),
// and NaN when already_dropped > drop (more non-compliant runs than olympic
// scoring accepts). Never a plain mean of fewer runs.
//
// NaN times are not taken out: the times are sorted with std::sort and `<`,
// as score_package always sorted them, so a NaN (which compares false with
// everything) stays between neighbours it is not ordered with, and the mean
// is NaN whenever one lies inside the window.
double olympic_mean(std::vector<double> times, int drop, int already_dropped = 0);

// A percentile bootstrap interval (95%) for the ratio
// olympic_mean(a, drop_a) / olympic_mean(b, drop_b): each side's times
// resampled with replacement `resamples` times, in turn, from a fixed seed
// (splitmix64: the same times give the same interval on every platform), each
// resample's olympic mean with its side's drop. It says how much the ratio of
// two results could move with other runs of the same systems: with three runs
// a side, a lot. Not ok when a side has too few times for an olympic mean.
struct RatioInterval {
  bool ok = false;
  double low = 0, high = 0;
};
// `already_a`, `already_b`: runs each side's score dropped before the window
// (non-compliant ones), counted at the slow end as olympic_mean counts them.
RatioInterval bootstrap_ratio(const std::vector<double>& a, int drop_a, const std::vector<double>& b, int drop_b,
                              int resamples = 10000, uint64_t seed = 0x5eed2026ULL, int already_a = 0, int already_b = 0);

// ------------------------------------------------------------ time to train

// A run's time to train as the result summarizer takes it: the timestamps of
// run_start and run_stop seen until both keys have appeared (a relaunched run
// logs several run_start lines: the last one before the first run_stop
// counts). The consortium accepts such a log with a warning; the first
// run_start is kept here to say so.
struct TimeToTrain {
  bool has_times = false;             // a run_start and a run_stop were paired
  double run_start_ms = 0, run_stop_ms = 0;
  bool has_run_start = false, has_run_stop = false;  // anywhere in the log
  int run_starts = 0;                 // run_start lines in the log
  uint32_t run_start_line = 0;        // file line of the run_start the time counts from
  uint32_t first_run_start_line = 0;  // and of the first one
  double first_run_start_ms = 0;
  // Index into ParsedLog::events of the run_stop taken (the last one seen
  // until both keys had appeared); -1 when the log has none.
  long run_stop_event = -1;

  double ms() const { return run_stop_ms - run_start_ms; }
  double minutes() const { return ms() / 60 / 1000; }  // as the summarizer: / 60 / 1000
};
TimeToTrain time_to_train(const mllog::ParsedLog& log);

// ------------------------------------------------------------ HPC weak scaling

// The size of one model's instance in an MLPerf HPC weak-scaling run, as the
// result summarizer's _query_instance_scale reads it: the values of the
// number_of_nodes and accelerators_per_node lines seen until both keys have
// appeared, int(nodes) * max(int(accelerators), 1).
struct InstanceScale {
  bool ok = false;
  long long scale = 0;
  // Why there is none. A missing key or a string int() refuses is a
  // ValueError the summarizer catches (the run still counts as a model);
  // `stops` is set where it raises something it does not catch (a value that
  // is null, a list or an object: TypeError), and the summarizer stops.
  std::string error;
  bool stops = false;
};
InstanceScale instance_scale(const mllog::ParsedLog& log);

}  // namespace referee::rules
