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

#include "base/subprocess.h"
#include "base/text.h"
#include "harness/backends/backend.h"

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
  // Environment capture on the node: when set, each batch script first runs
  // `<referee_binary> system env --json [--spec <capture_spec>]` on the job's
  // node (through srun, in the container, when the command is launched so),
  // into slurm::node_env_file(). The binary (and the spec) must be reachable
  // at these paths on the nodes (a shared file system); when the capture
  // fails the job still runs, and <that file>.err says why.
  std::string referee_binary;
  std::string capture_spec;
};

class SlurmBackend : public Backend {
 public:
  explicit SlurmBackend(SlurmOptions options = {});
  const char* name() const override { return "slurm"; }
  // kill_now is scancel: Slurm ends the job's processes as far as its
  // process tracking reaches them (docs/slurm.md); referee does not wait.
  std::string kill_now_says() const override { return "sent scancel"; }
  // Each job captures its environment on its node first (SlurmOptions::referee_binary).
  void capture_on_node(const std::string& referee_binary, const std::string& spec) {
    options_.referee_binary = referee_binary;
    options_.capture_spec = spec;
  }
  // Writes the batch script and submits it; null with *error when the work
  // directory cannot be made, an option is wrong, or sbatch is missing or
  // refuses the job (its stderr is in *error). Destroying the handle of a
  // job that is still queued or running cancels the job.
  std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) override;
  // backend_options.runs_per_job (1 when not given).
  int runs_per_launch(const RunRequest& sample) const override;
  // Several runs in one job (slurm::group_script), one after another; each
  // handle follows its run's own output and exit code file, is waiting
  // until the run's turn comes, and cancel() stops that run alone (before
  // its turn, or its job step with scancel JOB.STEP); kill_now() ends the
  // whole job.
  std::vector<std::unique_ptr<RunHandle>> launch_group(const std::vector<RunRequest>& reqs,
                                                       const std::vector<LineSink>& sinks,
                                                       std::string* error) override;
  // sbatch --test-only with the batch script and options a run gets (the
  // partition, nodes, time, account: what Slurm would refuse), and, when the
  // spec asks for a container, that srun has Pyxis's --container-image.
  bool preflight(const RunRequest& sample, std::string* error) override;

 private:
  SlurmOptions options_;
};

// The pieces, exposed for the tests.
namespace slurm {

// The spec options the backend takes (RunRequest.options keys): nodes,
// tasks_per_node, gpus_per_node, partition, account, extra_args, work_dir;
// launcher and srun_args; the Pyxis container options container_image,
// container_mounts, container_workdir, container_name, container_env,
// container_writable, container_remap_root, container_mount_home,
// container_entrypoint; describe and describe_timeout (read by
// harness/backends/slurm_describe.h, not by sbatch); runs_per_job (several
// runs in one job, one after another: group_script).
extern const std::vector<std::string> kOptionKeys;

// How the batch script starts the command: {} when it runs it itself (on the
// job's first node, once), else the srun words before it: "srun
// --kill-on-bad-exit=1", the Pyxis container flags, then srun_args. The
// launcher option decides: "srun", "none", or "auto" (the default): srun when
// the job has more than one node or more than one task per node, or runs in a
// container. nullopt with *error on a malformed option (a container option
// with launcher: none, a yes/no option that is neither, an unclosed quote).
std::optional<std::vector<std::string>> launcher_words(const RunRequest& req, std::string* error);

// The Pyxis flags for the container options (empty when the run has none).
std::vector<std::string> container_flags(const RunRequest& req, std::string* error);

// Where the batch script writes the environment captured on the node:
// <log_path without .log>.node-env.json (harness/environment/node_environment.h reads
// it), or <dir>/env.json for a run without a log path.
std::string node_env_file(const RunRequest& req, const std::string& dir);

// What the batch script needs to capture the environment on the node.
struct NodeCapture {
  std::string referee_binary;  // absolute path, reachable on the node
  std::string spec;            // "" or the spec, for its command, workdir, env
  std::string env_file;        // where the JSON goes (written through a .tmp and a rename)
};

// yes/no spellings a YAML file may carry as text (true/yes/on/1, false/no/off/0, any case); nullopt otherwise.
std::optional<bool> yes_no(const std::string& v);

// base/text.h: 'text' for a POSIX shell; words for people to read.
using base::shell_quote;
using base::shell_words;

// Splits "extra_args" into words the way a shell would (spaces, '...',
// "...", backslash), without running one. nullopt on an unclosed quote.
std::optional<std::vector<std::string>> split_words(const std::string& text);

// Files of one run.
struct JobFiles {
  std::string dir;       // the run's work directory
  std::string script;    // dir/job.sh
  std::string output;    // dir/output.txt: the command's stdout and stderr (and Slurm's notes)
  std::string exit_code; // dir/exit_code: the command's exit status, written when it ends
  // A run of a job of several runs (group_script) only:
  std::string started;   // dir/started: made when the run's turn comes
  std::string cancel;    // dir/cancel: made by referee to stop the run (before its turn, or with its step)
};
JobFiles job_files(const std::string& dir);
// The exit status the batch script wrote to a run's exit code file, or -1
// while there is none (the run goes on, or the job was killed first).
int read_exit_code(const std::string& exit_code_file);

// The batch script: enters the workdir, exports the env, captures the
// environment on the node (when `capture` is given), runs the command (through
// srun when launcher_words() says so), writes its exit status to
// files.exit_code. Every string is quoted. Empty with *error when the request
// cannot be expressed (no command, an environment name that is not a shell
// name, a malformed launcher or container option).
std::string batch_script(const RunRequest& req, const JobFiles& files, std::string* error,
                         const NodeCapture* capture = nullptr);

// Where a run's cache_clear hook runs: {} (in the batch script itself) when
// the command is not launched with srun, else one task on each of the job's
// nodes (srun --ntasks-per-node=1), outside any container.
std::vector<std::string> hook_launcher(const std::vector<std::string>& launcher);

// The batch script of one job that runs `reqs` one after another
// (backend_options.runs_per_job, as NEXP does in NVIDIA's run.sub): enters
// the first request's workdir; starts the container once on each node when
// the runs ask for one (Pyxis imports the image once under its name, every
// run's step reuses it); captures the environment once (into each run's
// node environment file); then for each run, unless its cancel file exists,
// makes its started file, exports its environment, runs its cache_clear
// hook, and runs its command as a job step named after the run (srun
// --job-name=<id>, --time from its timeout), its output into its own file and
// its exit status into its exit code file. `files` are the runs' own.
std::string group_script(const std::vector<RunRequest>& reqs, const std::vector<JobFiles>& files, std::string* error,
                         const NodeCapture* capture = nullptr);

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

// Result of one Slurm command: its exit status (-1 when killed or not
// started), standard output and standard error; `error` says why it could not
// be run.
using CommandResult = base::CommandResult;

// Runs argv (argv[0] found on PATH, then in /usr/bin) without a shell, with
// SLURM_CONF set to slurm_conf when that is not empty, stdin from /dev/null;
// collects stdout and stderr; kills it after `timeout`.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& slurm_conf,
                          std::chrono::milliseconds timeout);

}  // namespace slurm
}  // namespace referee::harness
