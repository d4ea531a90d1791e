// The backend seam of the harness: where runs execute. A backend launches a
// run, streams its output lines as they are written, waits for it and
// cancels it. Implementations: builtin (mini workloads in this binary), exec
// (local processes), slurm (sbatch/squeue/sacct/scancel); a fake for tests.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/lines.h"

namespace referee::harness {

// Everything a backend needs to start one run.
struct RunRequest {
  std::string id;                // "minilm-2": unique within a harness invocation
  std::string benchmark;         // "minilm", "bert"
  int run_index = 0;             // 0-based
  long long seed = 0;            // distinct per run, recorded in the log
  std::string log_path;          // where the run's log must end up (result_<n>.txt is written from it)
  std::vector<std::string> command;          // exec/slurm: argv, placeholders {seed} {run} {log} already expanded
  std::map<std::string, std::string> env;    // extra environment
  std::string workdir;                       // "" = current directory
  std::chrono::seconds timeout{0};           // 0 = none
  std::map<std::string, std::string> options;  // backend options from the spec (slurm: partition, nodes, ...)
  // The spec's cache_clear: a command run just before the run's command,
  // where the run runs (on Slurm once on each of the job's nodes, outside any
  // container), placeholders expanded. When it succeeds the run's log gets
  // the `cache_clear` event (true) the rules require; when it fails the run's
  // command is not started and the run fails with exit 125.
  std::vector<std::string> cache_clear;
  // The workload writes its log to log_path itself (its command names
  // {log}): the cache_clear event is appended to that file; else it is
  // printed with the run's output.
  bool log_is_file = false;
};

// Exit status of a run whose cache_clear hook failed (its command never started).
inline constexpr int kCacheClearFailed = 125;

// The POSIX shell lines that run req.cache_clear (after the words of
// `launcher`, e.g. srun's) and then log `cache_clear` as the consortium's
// mllog does, with the time of the moment the hook ended; a failed hook
// prints why and runs `on_failure` (a shell command that must end the run:
// "exit 125"). "" when the request has no hook.
std::string cache_clear_lines(const RunRequest& req, const std::vector<std::string>& launcher,
                              const std::string& on_failure);

enum class RunState { Pending, Running, Succeeded, Failed, Cancelled, TimedOut };

const char* to_string(RunState s);

// "SIGTERM", "SIGKILL", "SIGSEGV", ...; "signal 42" for one without a name.
std::string signal_name(int signal);

struct RunStatus {
  RunStatus() = default;
  RunStatus(RunState s, int code, std::string d) : state(s), exit_code(code), detail(std::move(d)) {}
  RunState state = RunState::Pending;
  int exit_code = -1;            // when the backend knows it
  std::string detail;            // "exit 1", "killed by SIGTERM", "slurm state NODE_FAIL", ...
  // Processes the run left behind when its main process ended (exec: still in
  // its process group after the output was drained), and what became of
  // them; "" when there were none. Also part of `detail`.
  std::string leftovers;
};

// Receives the run's output, line by line, without the trailing newline, in
// order, as it is written (from a backend thread: keep it quick and thread-safe).
// A line longer than base::kMaxLineBytes arrives cut there, ended with a
// note of how many bytes were dropped (OutputLines).
using LineSink = std::function<void(const std::string& run_id, const std::string& line)>;

// What a backend reads of a run's output (a pipe, a file it follows), split
// into lines for its sink with bounded memory: an endless line holds at most
// base::kMaxLineBytes, and each piece is scanned once.
class OutputLines {
 public:
  OutputLines(std::string run_id, LineSink sink) : id_(std::move(run_id)), sink_(std::move(sink)) {}
  void feed(std::string_view bytes);
  // The last line, when the output does not end with a line end.
  void finish();
  // The output starts again (a file truncated, a job requeued).
  void reset() { split_.reset(); }

 private:
  void send(std::string_view line, size_t cut);
  std::string id_;
  LineSink sink_;
  base::LineSplitter split_;
};

// A process of this machine as /proc/<pid>/stat tells it.
struct ProcessInfo {
  int pid = 0;
  std::string name;  // comm
  long pgrp = 0;     // its process group
};
// The processes of this machine that still run (zombies and dead ones left
// out: an orphan that ended may wait for a reaper that never comes).
std::vector<ProcessInfo> running_processes();

// The environment variable every process of a run carries (the harness sets
// it in RunRequest::env): its value names the run and this invocation, so a
// process that left the run's process group (setsid, a double fork) or that
// Slurm's process tracking lost is still found on this machine. A process
// started with an emptied environment (env -i) is not.
inline constexpr const char* kRunTokenVar = "REFEREE_RUN_TOKEN";
std::string make_run_token(const std::string& run_id);
// The token a request carries in its environment ("" when none).
std::string run_token_of(const RunRequest& req);

// The processes of this machine whose environment holds kRunTokenVar=`token`,
// but for those of process group `skip_group` (0: none) and referee itself,
// ended: SIGTERM, then SIGKILL to any still there after `grace` (at once when
// `at_once`). What was found and done, in words, "" when nothing was found:
// "2 processes that left its process group still ran (pid 41 sleep, pid 42
// python3): ended with SIGTERM".
// The processes of this machine (referee itself left out) whose environment
// holds kRunTokenVar=`token`; none for an empty token.
std::vector<ProcessInfo> processes_with_token(const std::string& token);

std::string end_processes_with_token(const std::string& token, int skip_group, std::chrono::milliseconds grace,
                                     bool at_once, const std::string& what);

class RunHandle {
 public:
  virtual ~RunHandle() = default;
  virtual const std::string& id() const = 0;
  // The backend's own name for the run, recorded in the run manifest: the
  // Slurm job id, the process id; "" when there is none.
  virtual std::string job_id() const { return ""; }
  // Where the run's output lands outside referee, recorded in the manifest
  // from launch on (the Slurm work dir's output.txt); "" when only referee
  // receives it.
  virtual std::string output_path() const { return ""; }
  // Non-blocking.
  virtual RunStatus poll() = 0;
  // Blocks until the run ends (or `limit` passes: returns the current status).
  virtual RunStatus wait(std::chrono::milliseconds limit) = 0;
  // Asks the run to stop (SIGTERM to the process group, scancel, ...);
  // idempotent; wait() then reports Cancelled. A run that has already ended
  // (its main process exited, its job wrote its exit code or reached a final
  // state) is not cancelled: wait() reports how it ended.
  virtual void cancel(const std::string& reason) = 0;
  // Ends the run at once, without the grace a cancel() gives (SIGKILL to
  // the process group); the harness calls it when a second interrupt comes.
  // Backends whose cancel() already ends the run at once (scancel) keep this
  // default.
  virtual void kill_now(const std::string& reason) { cancel(reason); }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Starts the run; every output line goes to `sink`. Returns null with
  // *error when the run cannot be started at all.
  virtual std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) = 0;
  // How many runs one launch_group() may start together (Slurm:
  // backend_options.runs_per_job, runs in sequence in one job); 1 where
  // each run is a launch of its own.
  virtual int runs_per_launch(const RunRequest& sample) const {
    (void)sample;
    return 1;
  }
  // Starts reqs (at most runs_per_launch()) as one unit; one handle per
  // request, in order, each run still followed, ended and stopped on its own,
  // sinks[i] receiving the output of reqs[i]. Empty with *error when none
  // could be started. The default launches a single request.
  virtual std::vector<std::unique_ptr<RunHandle>> launch_group(const std::vector<RunRequest>& reqs,
                                                               const std::vector<LineSink>& sinks, std::string* error);
  // What RunHandle::kill_now does to a run, as far as referee knows once it
  // returns, to follow "the run was": "killed", "sent scancel".
  virtual std::string kill_now_says() const { return "asked to end"; }
  // What the backend can check before any run with the request a run would
  // get (harness/preflight.h): true when it sees nothing wrong, else false
  // with *error saying what would make every run fail.
  virtual bool preflight(const RunRequest& sample, std::string* error) {
    (void)sample;
    (void)error;
    return true;
  }
};

}  // namespace referee::harness
