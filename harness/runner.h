// The harness: runs a spec's runs on a backend, checks every line as it
// arrives, stops a run that broke a rule no later line can repair, and writes
// the submission package of the runs that finished.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "harness/backend.h"
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
  std::string kept_log;        // where the log of a run left out of the package was kept
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
  const std::atomic<bool>* interrupt = nullptr;  // set by Ctrl-C: cancel everything, keep what finished
  // Called about every second with one status line per run (for a terminal), and once per event.
  std::function<void(const std::vector<std::string>&)> status;
  std::function<void(const std::string&)> event;
};

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error);

}  // namespace referee::harness
