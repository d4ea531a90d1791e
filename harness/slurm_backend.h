// The slurm backend: each run is one batch job (sbatch), its output is
// followed as the job writes it, its state comes from squeue (then scontrol,
// then sacct once the job has left the queue), and cancel() is scancel.
// docs/slurm.md says what it needs from a cluster and which spec options it
// takes; scripts/slurm/start.sh starts a single-node cluster for the tests.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace referee::harness {

struct SlurmOptions {
  // SLURM_CONF for the Slurm commands it runs; "" = inherit the environment's.
  std::string slurm_conf;
  // Where each run's work directory (batch script, output file, exit code
  // file) is made: "" = the directory of the request's log_path, in
  // ".slurm/", or a temporary directory when log_path is empty. On a
  // multi-node cluster it must be on a file system the nodes share with the
  // submitting host.
  std::string work_root;
  // How often the output file is read, and how often squeue is asked.
  std::chrono::milliseconds read_interval{200};
  std::chrono::milliseconds state_interval{1000};
  // Limit on one Slurm command (sbatch, squeue, ...): past it, it is killed.
  std::chrono::seconds command_timeout{60};
};

class SlurmBackend : public Backend {
 public:
  explicit SlurmBackend(SlurmOptions options = {});
  const char* name() const override { return "slurm"; }
  // Writes the batch script and submits it; null with *error when the work
  // directory cannot be made, an option is wrong, or sbatch is missing or
  // refuses the job (its stderr is in *error). Destroying the handle of a
  // job that is still queued or running cancels the job.
  std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) override;

 private:
  SlurmOptions options_;
};

// The pieces, exposed for the tests.
namespace slurm {

// The spec options the backend takes (RunRequest.options keys): nodes,
// tasks_per_node, gpus_per_node, partition, account, extra_args, work_dir.
extern const std::vector<std::string> kOptionKeys;

// 'text' for a POSIX shell: single quotes, each ' as '\''.
std::string shell_quote(const std::string& text);

// Splits "extra_args" into words the way a shell would (spaces, '...',
// "...", backslash), without running one. nullopt on an unclosed quote.
std::optional<std::vector<std::string>> split_words(const std::string& text);

// Files of one run.
struct JobFiles {
  std::string dir;       // the run's work directory
  std::string script;    // dir/job.sh
  std::string output;    // dir/output.txt: the command's stdout and stderr (and Slurm's notes)
  std::string exit_code; // dir/exit_code: the command's exit status, written when it ends
};
JobFiles job_files(const std::string& dir);

// The batch script: enters the workdir, exports the env, runs the command,
// writes its exit status to files.exit_code. Every string is quoted.
// Empty with *error when the request cannot be expressed (no command, an
// environment name that is not a shell name).
std::string batch_script(const RunRequest& req, const JobFiles& files, std::string* error);

// sbatch's arguments (after "sbatch"), the script last. Empty with *error
// on an unknown or malformed option.
std::vector<std::string> sbatch_args(const RunRequest& req, const JobFiles& files, const std::string& workdir,
                                     std::string* error);

// Slurm's --time for a timeout: whole minutes, rounded up (Slurm counts
// minutes); "" for no timeout.
std::string time_limit(std::chrono::seconds timeout);

// "123" or "123;cluster" (sbatch --parsable): the job id, or "".
std::string parse_job_id(const std::string& sbatch_stdout);

// "JobId=5 JobName=x JobState=FAILED ... ExitCode=3:0" (scontrol show job -o)
// to its key=value fields.
std::map<std::string, std::string> parse_scontrol(const std::string& line);

// What a Slurm job state means for a run. `exit_code` is the command's exit
// status when known (-1 when not), `signal` the signal that ended it (0 when
// none), `reason` Slurm's reason. Non-terminal states give Pending or
// Running; CANCELLED gives Cancelled (the handle adds whether referee asked).
RunStatus map_state(const std::string& slurm_state, int exit_code, int signal, const std::string& reason);

bool is_terminal(const std::string& slurm_state);

// Result of one Slurm command.
struct CommandResult {
  bool started = false;  // false: could not be run at all (see error)
  int exit_code = -1;    // its exit status; -1 when killed or not started
  bool timed_out = false;
  std::string out, err;
  std::string error;     // why it could not be run
};

// Runs argv (argv[0] found on PATH, then in /usr/bin) without a shell, with
// SLURM_CONF set to slurm_conf when that is not empty, stdin from /dev/null;
// collects stdout and stderr; kills it after `timeout`.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& slurm_conf,
                          std::chrono::milliseconds timeout);

}  // namespace slurm
}  // namespace referee::harness
