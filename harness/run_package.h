// `referee run SPEC`: from a workload spec and the flags over it to a checked
// and scored submission package. In order: the spec (with the flags), the
// rule set and its facts, the environment, on Slurm the system described
// from a compute node (backends/slurm_describe.h), the system description
// (every required field, or nothing runs), the backend, the runs
// (runner.h), then the package through check-package and the scorer. The
// command parses flags, calls run_package and prints what it returns;
// RunHooks say what happens while it goes on.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "harness/backends/slurm_describe.h"
#include "harness/environment/environment.h"
#include "harness/manifest.h"
#include "harness/runner.h"
#include "harness/spec.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"

namespace referee::harness {

struct PackageRequest {
  std::string spec_path;           // the workload spec (YAML)
  std::string backend;             // over the spec's: "" keeps it (--backend)
  int runs = 0;                    // 0: the spec's, else what the rules require (--runs)
  int parallel = 0;                // 0: the spec's, else the default (--parallel)
  std::string system;              // system name; "" keeps the spec's (--system)
  std::string system_description;  // "" keeps the spec's (--system-description)
  std::string out_dir = "referee-out";
  std::string rules_root;          // "" : REFEREE_RULES, the cache, built-in (--rules)
  bool replace = false;            // RunnerOptions::replace (--replace)
  // Set by the first signal (cancel: the describe job, then the runs), the
  // second (end at once), and which signal it was (messages name it).
  const std::atomic<bool>* interrupt = nullptr;
  const std::atomic<bool>* stop_now = nullptr;
  const std::atomic<int>* interrupt_signal = nullptr;
};

struct PackageRun;

struct RunHooks {
  // true: from now on a signal is to cancel (it sets *interrupt), while the
  // describe job waits and while the runs go on; false: it ends the process
  // again, as everything written is whole.
  std::function<void(bool)> interruptible;
  // A warning about the system description, when it is known (they are all
  // in PackageRun::warnings as well).
  std::function<void(const std::string&)> warning;
  // Before the first run starts: spec, rules_source, ruleset_id, described
  // and warnings are set.
  std::function<void(const PackageRun&)> starting;
  // While the runs go on: RunnerOptions::event and RunnerOptions::progress.
  std::function<void(const std::string&)> event;
  std::function<void(const ProgressModel&, const std::vector<RunProgress>&, const std::vector<size_t>& changed)> progress;
};

// An earlier invocation's run that the package holds.
struct KeptRun {
  ManifestRun entry;        // its record in the manifest
  std::string result_file;  // its result file, as a path (entry.result_file is relative to the out dir)
};

struct PackageRun {
  // Why it stopped short: "" when the package was checked. Set with ran when
  // the runs ended but the package could not be checked.
  std::string error;
  // A signal came while the system was described on a compute node: nothing
  // ran; error says so, describe_job how the describe job ended
  // (NodeDescription::ended).
  bool describe_interrupted = false;
  std::string describe_job;

  Spec spec;  // with the flags, finalized
  rules::RuleSource rules_source;
  std::string ruleset_id;       // "training-4.1.0"
  NodeDescription described;    // on Slurm: the compute node's description (else the host's environment)
  std::vector<std::string> warnings;  // about the system description, in the order said

  bool ran = false;             // the runs ran: report holds them
  HarnessReport report;
  std::vector<KeptRun> kept;    // the package's results of earlier invocations (report.kept)
  std::string results_dir;      // <package>/results/<system>/<benchmark>
  std::vector<std::string> on_disk;  // after an interruption: the result files in results_dir, by name

  bool checked = false;         // the package went through check-package: package and scores hold it
  rules::PackageReport package;
  rules::ScoreReport scores;
};

PackageRun run_package(const PackageRequest& request, const RunHooks& hooks);

// What the environment capture needs from a spec: the workload's command (its
// Python), its working directory (its git commit) and environment; the
// defaults for none.
CaptureOptions capture_options(const Spec* spec);

}  // namespace referee::harness
