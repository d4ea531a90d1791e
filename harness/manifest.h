// The run manifest of a package, and the rule that decides which runs enter it.
//
// <out>/.referee-runs/<benchmark>/manifest.json records every run the harness
// started for that benchmark, in every invocation: its invocation, the result
// file it became (or none, with the reason), seed, backend and backend job id,
// exit code, state, wall time, time to train (from its log, as the
// consortium's result summarizer computes it), verdict, and where its log,
// output and environment (<run>.env.json) are kept. Paths in it are relative
// to the --out directory. It is written through a temporary file and a
// rename, so a reader sees the old manifest or the new one, never half of one.
//
// The package and the manifest agree after every step, and after a crash at
// any point: a result file is written (atomically) only after the manifest
// records it as "entering" the package with the file's name and the digest
// of its bytes; then the manifest says "in the package". A resume
// (reconcile_package) finishes an entry left "entering" (writes its file from
// the kept log, or adopts a file whose digest matches), records a result file
// that no entry claims as found in the package, and takes out of the record
// an entry whose file is gone. See docs/harness.md.
#pragma once

#include <functional>
#include <set>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/backends/backend.h"
#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/ruleset.h"

namespace referee::harness {

inline constexpr const char* kManifestFormat = "referee-run-manifest";
inline constexpr int kManifestVersion = 1;

struct ManifestRun {
  std::string run;            // "minilm-3": the benchmark and the result number it was meant to fill ({run})
  std::string invocation;     // the folder of its invocation under .referee-runs/<benchmark>/
  std::string org, system;    // the package it belongs to: <out>/<org>/results/<system>/<benchmark>/
  int slot = 0;               // {run}
  long long seed = 0;
  bool has_seed = true;       // false for a result file found without a readable seed
  bool has_logged_seed = false;  // the run's log has a seed line
  long long logged_seed = 0;     // its value: the seed the package's seed check sees
  std::string backend;        // builtin | exec | slurm | "" (found in the package)
  std::string job_id;         // slurm job id, exec process id, "" when none
  // The run's REFEREE_RUN_TOKEN (its processes carry it), and the token its
  // Slurm job carries as its comment (the first run's of the job): what finds
  // a run whose job id was never recorded (the harness ended while it started).
  std::string token, job_token;
  // "running" (launched; a manifest that still says so after the harness
  // ended means the harness ended first), "succeeded", "failed",
  // "cancelled", "timed out", "not started", "lost", "found".
  std::string state;
  std::string detail;         // the backend's words ("exit 1", "slurm state NODE_FAIL")
  int exit_code = -1;         // -1: not known
  double wall_seconds = 0;
  bool has_time_to_train = false;
  double time_to_train_ms = 0;  // run_stop - run_start timestamps, as the result summarizer takes them
  std::string run_stop_status;  // metadata.status of the run_stop the time counts to; "" when none
  std::string verdict;        // "compliant", "not compliant", "not checked"
  std::string first_error;    // the first finding when not compliant
  // "in" (in the package), "entering" (recorded, its result file being
  // written), "out" (left out, see reason), "removed" (was in the package,
  // taken out by --replace or by a person).
  std::string package = "out";
  bool converged = false;     // run_stop status success and compliant
  std::string result_file;    // relative to --out; "" when none
  std::string result_sha256;  // of the result file's bytes (= the kept log's)
  std::string reason;         // why it is in the package, or why not
  std::string note;           // what a resume found (a file edited outside referee, ...)
  // relative to --out; "" when none. `output` is, from launch on, where the
  // run's output lands outside referee when the backend has such a place (the
  // Slurm work dir's output.txt), so that a run the harness outlived can be found.
  std::string log, output, environment;
  // The setup it ran with (recorded at launch; "" in records of earlier
  // versions): the spec's command as written (placeholders unexpanded), the
  // rule set, the SHA-256 of the system description written with it; and the
  // global_batch_size its log states. A resume refuses another setup.
  std::string command, ruleset, system_sha256;
  std::string global_batch_size;
};

struct Manifest {
  int version = kManifestVersion;
  std::string benchmark;
  std::string updated;        // UTC, ISO 8601
  std::vector<ManifestRun> runs;
};

// Reads `path`. A missing file gives an empty manifest for `benchmark` with
// *existed false. Returns false with *error when the file is not valid JSON,
// not a run manifest, of a newer or unknown version, for another benchmark,
// or has a field of the wrong type: the message names the file and says what
// to do.
bool load_manifest(const std::string& path, const std::string& benchmark, Manifest* out, bool* existed,
                   std::string* error);
std::string manifest_json(const Manifest& m);
// Writes the manifest through a temporary file in the same folder and a rename.
bool save_manifest(const std::string& path, Manifest& m, std::string* error);

// What the result summarizer and the RCP checker read from a log.
struct LogFacts {
  size_t mllog_lines = 0;
  bool has_run_start = false, has_run_stop = false;
  bool has_times = false;        // both, as the summarizer pairs them
  double time_to_train_ms = 0;   // run_stop - run_start, as the summarizer pairs them
  std::string run_stop_status;   // metadata.status of that run_stop
  bool has_seed = false;
  long long seed = 0;            // the first seed line's value
  // What the log states of its submission and setup (the first line of each
  // key; "" when it has none): a package holds one organisation's results of
  // one benchmark and division, made with the same hyperparameters.
  std::string submission_org, submission_division, submission_benchmark;
  std::string global_batch_size;  // the value as the log wrote it ("2048")
};
LogFacts read_log_facts(std::string_view text);
// The same from the log file at `path`, read in pieces (memory: a line at
// most, not the log). *readable = whether it could be read.
LogFacts read_log_facts_file(const std::string& path, bool* readable);
// Reads the log at `path` line by line: its MLLOG lines counted as the
// reader counts them (*mllog_lines), and those holding any of `needles`
// appended to *kept, each with a "\n". Memory: one line (lines longer than
// base::kMaxLineBytes are cut). False when the file cannot be read.
bool filter_mllog_lines(const std::string& path, const std::vector<std::string_view>& needles, std::string* kept,
                        size_t* mllog_lines);
// The same from a log already parsed (time to train: rules::time_to_train).
LogFacts read_log_facts(const mllog::ParsedLog& log);

// What a run's record says of its log (manifest): time to train, the
// run_stop status, the logged seed, and the first finding ("line 12: RULE:
// message") of a verdict that is not compliant. For a run the harness saw
// end and for one adopted on resume alike.
void record_log_facts(ManifestRun* m, const LogFacts& facts, const rules::FileVerdict* verdict);

// "" when the log logs no seed or the seed the run was given; else what is
// wrong: the consortium's seed check reads the logged seed, not the one given.
std::string seed_mismatch(long long given, const LogFacts& log);

// Which runs enter the package (docs/harness.md, "Which runs enter the package").
struct AdmissionInput {
  bool stopped_by_checker = false;
  std::string stop_reason;
  RunStatus status;
  const rules::FileVerdict* verdict = nullptr;  // the batch verdict over the whole log
  LogFacts log;
  std::string target_metric = "eval_accuracy";  // the key of the quality target (rules::quality_target)
  int allowed_failures = 1;                     // failing files the consortium accepts under olympic scoring
  // The package the run would enter ("" where not known): a log that states
  // another organisation, division or benchmark, or another global batch
  // size than the package's other results, is not one of its results.
  std::string org, division, benchmark;
  std::string package_batch_size;  // global_batch_size of the results the package holds
  std::string package_batch_from;  // which of them: "result_0.txt"
};
struct Admission {
  bool enters = false;
  bool converged = false;
  std::string reason;
};
Admission admit(const AdmissionInput& in);

// The reason of a run that did not converge (rule 4), given how many such
// runs the package holds: within `allowed` it is accepted under olympic
// scoring; beyond, the reason says the limit is exceeded and the package fails.
std::string nonconverged_reason(const std::string& run_stop_status, const std::string& metric, int allowed,
                                int in_package);

// Whether every error of `v` is the quality target not reached (the
// ATLEAST_ONE_CHECK of `metric`), and there is at least one.
bool only_target_not_reached(const rules::FileVerdict& v, const std::string& metric);

// The seed of a new run. Pinned seeds (the spec lists them): the first of
// `pinned` no run in the package has and no other new run took. Otherwise
// seed_base + slot, or, when that seed was used by any run in the manifest
// (kept, left out, removed) or taken, seed_base + slot + k * stride for the
// first k that gives a fresh one. Returns false when pinned seeds run out.
bool choose_seed(const std::vector<long long>& pinned, long long seed_base, int slot, int stride,
                 const std::set<long long>& used_anywhere, const std::set<long long>& in_package,
                 std::set<long long>* taken, long long* seed);

// The result files of a benchmark folder: result_<n>.txt, by n.
std::vector<std::pair<int, std::string>> result_files_in(const std::string& dir);

// What a resume found and did, for the summary.
struct Reconciled {
  std::vector<std::string> messages;  // one line per thing that changed
  std::vector<std::string> removed;   // result files --replace removed
  bool changed = false;
};

// Whether a run the manifest records as "running" is still alive: the
// Slurm job (its job id, through squeue) or the exec process group (its
// process id, which is its group's id: kill(-pgid, 0)). `words` names it
// ("Slurm job 932", "process group 4242"); `how` says what to do while it
// runs, or why it could not be told.
struct Liveness {
  enum Kind { Ended, Alive, Unknown } kind = Ended;
  std::string words, how;
  // How an ended run ended, where the backend still says (Slurm's state:
  // COMPLETED, FAILED, CANCELLED, TIMEOUT, ...); "" when it cannot tell.
  std::string final_state;
  // The run's own exit status where a file beside its output holds it (the
  // Slurm batch script's exit_code: a run of a job of several ended with its
  // own status, whatever the job's state); -1 when not known.
  int exit_code = -1;
};
using LivenessProbe = std::function<Liveness(const ManifestRun&)>;
Liveness probe_run(const ManifestRun& r);

// The runs `m` records as "running" that still go on (or whose backend
// cannot tell), each named with what to do, in one refusal; "" when none.
// Those that have ended go to *ended (when given) with how they ended.
std::string runs_still_going(const Manifest& m, const std::string& manifest_path, const std::string& out_dir,
                             const LivenessProbe& probe, std::map<size_t, Liveness>* ended);

// Brings the manifest and the package folder `results_dir` (of `org` and
// `system`) into agreement, before new runs start; `out_dir` is --out.
// With `replace`, every result file of the folder is removed first and each
// run that was in the package is recorded as removed. A result file no entry
// claims is checked with `rules` and recorded as found; an entry whose file
// is gone is recorded as removed; an entry left "entering" is finished. The
// manifest is saved when anything changed. An entry still "running" is
// looked up with `probe` (probe_run when empty) first: when its run is still
// alive, or cannot be told, nothing is changed and it returns false with
// *error naming the run and saying how to proceed; when it has ended it is
// adopted when its log is complete (run_start and run_stop: from the log the
// workload wrote, else from its output the backend kept) and it ended by
// itself: checked with `rules` and admitted as any run the harness saw end
// (admit), its result file written and its seed kept; otherwise (a log cut
// short, cancelled, timed out, no log or output left) recorded "lost",
// pointing at its log or output where they exist. Returns
// false with *error when a file cannot be read, written or removed.
bool reconcile_package(Manifest* m, const std::string& manifest_path, const std::string& out_dir,
                       const std::string& results_dir, const std::string& org, const std::string& system,
                       const rules::RuleSet& rules, bool replace, Reconciled* rec, std::string* error,
                       const LivenessProbe& probe = {});

// Holds an exclusive lock on `path` (created if needed) while it lives, so
// that two harnesses never write one package at once.
class ManifestLock {
 public:
  ManifestLock() = default;
  ~ManifestLock();
  ManifestLock(const ManifestLock&) = delete;
  ManifestLock& operator=(const ManifestLock&) = delete;
  // Returns false with *error when another process holds it.
  bool acquire(const std::string& path, std::string* error);

 private:
  int fd_ = -1;
};

// A path relative to `out_dir` when it lies under it, else as it is; and back.
std::string relative_to(const std::string& out_dir, const std::string& path);
std::string resolve_in(const std::string& out_dir, const std::string& rel);

}  // namespace referee::harness
