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
// the submission_* fields of that run's log.
//
// An existing package is resumed, not rewritten: its result files are kept,
// and only the runs it still lacks (spec.runs minus the results it holds) are
// started, with seeds no earlier run used unless the spec pins them;
// RunnerOptions::replace removes its result files first. Every run is
// recorded in <out>/.referee-runs/<benchmark>/manifest.json (harness/manifest.h).
// Which runs enter the package is harness::admit(): a run that ended by itself
// with a complete log that is compliant, or that did not converge and breaks
// no other rule, whatever its exit status; every other run is left out with
// the reason (docs/harness.md).
//
// Interrupting (docs/progress.md): the first *interrupt cancels every run
// (SIGTERM to exec process groups, scancel on Slurm), launches nothing more,
// waits for the runs to end and collects their output; the runs that had
// finished are in the package. *stop_now (a second interrupt) ends at once:
// every run still going is killed (RunHandle::kill_now), what it logged so far
// is kept (written atomically), and its log is not checked.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/backends/backend.h"
#include "harness/environment/environment.h"
#include "harness/manifest.h"
#include "harness/progress.h"
#include "harness/spec.h"
#include "rules/compliance.h"
#include "rules/ruleset.h"

namespace referee::harness {

struct RunReport {
  std::string id;
  int index = 0;
  long long seed = 0;
  bool has_logged_seed = false;  // its log has a seed line (read when it ended)
  long long logged_seed = 0;
  std::string seed_note;         // "" unless the logged seed is not `seed` (harness::seed_mismatch)
  RunStatus status;
  bool aborted = false;        // stopped by the live checker
  std::string abort_reason;    // the irreparable finding
  bool launched = false;       // the backend started it
  bool log_complete = false;   // its log has run_start and run_stop (read when it ended)
  bool checked = false;        // `verdict` holds the batch verdict (false: never started, or ended at a second interrupt)
  rules::FileVerdict verdict;  // the batch verdict over its whole log
  std::string result_file;     // in the package; "" when the run is not in it
  std::string left_out;        // why the run is not in the package ("" when it is)
  std::string kept_log;        // the run's log, kept for every run that started: the file the workload
                               // wrote when the command names {log}, else what it printed ("" when none exists)
  std::string output_file;     // when the command names {log}: what it printed (stdout and stderr)
  std::string environment_file;  // <run>.env.json beside the log: the environment, with the log's submission_* fields
  Progress progress;           // what its log says of its progress, at its end
  double seconds = 0;
  std::string last_eval;
  size_t lines = 0;
  std::string job_id;           // the backend's id of the run (Slurm job, process id)
  bool converged = false;       // in the package with run_stop status success
  std::string package_reason;   // why it is in the package ("" when it is not: see left_out)
  bool has_time_to_train = false;
  double time_to_train_ms = 0;  // from its log: run_stop - run_start, as the result summarizer takes them
};

struct HarnessReport {
  std::vector<RunReport> runs;
  std::string package_dir;  // <out>/<org>
  std::string system;
  bool interrupted = false;      // by a signal, or by record_error
  std::string record_error;      // "the run record cannot be written (...: No space left on device)": stopped as by an interrupt
  bool stopped_at_once = false;  // a second interrupt ended the runs without waiting
  std::string interrupt_did;     // what the interrupt(s) did to the runs still going, as far as referee knows:
                                 // "the runs still going were cancelled", "no run was still going: none was
                                 // cancelled"; after a second: "... were killed at once", "... were sent scancel at once"
  std::shared_ptr<const ProgressModel> progress_model;
  std::string manifest;               // <out>/.referee-runs/<benchmark>/manifest.json
  std::vector<std::string> kept;      // result files of earlier invocations, kept: "result_0.txt (minilm-0, seed 7)"
  std::vector<std::string> removed;   // result files --replace removed
  std::vector<std::string> resumed;   // what the resume found and set right, one line each
  int required = 0;                   // results the package must hold (spec.runs)
  int rules_required = 0;             // results the rules require of the benchmark (0: not known here)
};

struct RunnerOptions {
  std::string out_dir;                   // the package goes to <out_dir>/<org>/...
  std::string system_json;               // the system description to write (validated before any run)
  const Environment* environment = nullptr;  // captured before the runs: written beside each run's log
  const std::atomic<bool>* interrupt = nullptr;  // set by Ctrl-C (SIGTERM, SIGHUP): cancel everything, keep what finished
  const std::atomic<bool>* stop_now = nullptr;   // set by a second one: kill what still runs and end at once
  const std::atomic<int>* interrupt_signal = nullptr;  // the signal that set *interrupt (messages name it)
  bool replace = false;                  // remove the package's result files first (--replace)
  // Called when a run changes (launched, ended, logs run_start, an evaluation
  // or run_stop), and at least every second while runs go on: every run, and
  // the indices of those that changed since the last call.
  std::function<void(const ProgressModel&, const std::vector<RunProgress>&, const std::vector<size_t>& changed)> progress;
  std::function<void(const std::string&)> event;
};

// "Ctrl-C (SIGINT)", "SIGTERM", "SIGHUP"; "an interrupt" for 0.
std::string interrupt_name(int signal);

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error);

// What the backend gets to start run `index` of the spec, seed `seed`, its
// log at `log_path`: the command with its placeholders expanded, the spec's
// environment, workdir, timeout and backend options.
RunRequest request_for(const Spec& spec, const Backend& backend, const std::string& id, int index, long long seed,
                       const std::string& log_path);

// Before anything runs (a Slurm describe job included): the refusal of a
// resume whose command or rule set is not that of the results the package
// under `out_dir` holds, naming each difference; "" when there is none (or
// with `replace`). run_harness refuses the same, and a changed system
// description, once the description is known.
std::string setup_refusal(const Spec& spec, const Backend& backend, const rules::RuleSet& rules,
                          const std::string& out_dir, bool replace);

}  // namespace referee::harness
