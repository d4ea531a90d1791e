// The harness: runs a spec's runs on a backend, checks every line as it
// arrives, stops a run that broke a rule no later line can repair (or that
// logged a second run_start), and writes the submission package.
//
// The log of a run is what it prints (stdout and stderr), or, when the spec's
// command names {log}, the file at that path, followed as it grows (that is
// where mllog.config(filename=...) writes; what it prints is then kept apart).
// Logs are kept under <out>/.referee-runs/<benchmark>/<invocation>/; a file
// the workload wrote is never rewritten. Beside each log, <run>.env.json holds
// the environment captured before the runs (RunnerOptions::environment) with
// the submission_* fields of that run's log. A run enters the package only when
// it ended by itself with exit status 0, was not stopped, and the rules find
// its whole log compliant; every other run is left out with the reason.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/environment.h"
#include "harness/spec.h"
#include "rules/compliance.h"
#include "rules/ruleset.h"

namespace referee::harness {

struct RunReport {
  std::string id;
  int index = 0;
  long long seed = 0;
  RunStatus status;
  bool aborted = false;        // stopped by the live checker
  std::string abort_reason;    // the irreparable finding
  rules::FileVerdict verdict;  // the batch verdict over its whole log
  std::string result_file;     // in the package; "" when the run is not in it
  std::string left_out;        // why the run is not in the package ("" when it is)
  std::string kept_log;        // the run's log, kept for every run: the file the workload wrote when
                               // the command names {log}, else what it printed
  std::string output_file;     // when the command names {log}: what it printed (stdout and stderr)
  std::string environment_file;  // <run>.env.json beside the log: the environment, with the log's submission_* fields
  double seconds = 0;
  std::string last_eval;
  size_t lines = 0;
};

struct HarnessReport {
  std::vector<RunReport> runs;
  std::string package_dir;  // <out>/<org>
  std::string system;
  bool interrupted = false;
};

struct RunnerOptions {
  std::string out_dir;                   // the package goes to <out_dir>/<org>/...
  std::string system_json;               // the system description to write (validated before any run)
  const Environment* environment = nullptr;  // captured before the runs: written beside each run's log
  const std::atomic<bool>* interrupt = nullptr;  // set by Ctrl-C: cancel everything, keep what finished
  // Called about every second with one status line per run (for a terminal), and once per event.
  std::function<void(const std::vector<std::string>&)> status;
  std::function<void(const std::string&)> event;
};

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error);

}  // namespace referee::harness
