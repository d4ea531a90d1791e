// The software and hardware a run ran on: kernel, libc, operating system,
// processors, Python and framework versions (when the workload is a Python
// program), NVIDIA driver, CUDA and GPUs (when nvidia-smi is on PATH), the
// container, the workload's git commit, and the submission_* fields of the
// run's log. `referee run` writes it beside each run's log
// (<run>.env.json); `referee system describe` offers its software and
// accelerator fields; `referee system env` prints it.
//
// Capturing never fails: a probe that cannot run (no nvidia-smi, no git, a
// Python that does not start or hangs past its timeout) leaves a note saying
// so, and the rest is still captured.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/subprocess.h"

namespace referee::harness {

// What running one command gave (its standard error is discarded).
using CommandOutput = base::CommandResult;

// The seam through which every probe runs a program: argv (argv[0] looked up
// on PATH), the directory to run it in ("" = the current one), extra
// environment, and a timeout in seconds.
using CommandRunner = std::function<CommandOutput(const std::vector<std::string>& argv, const std::string& workdir,
                                                  const std::map<std::string, std::string>& env, int timeout_s)>;

// Runs the program in its own process group; on timeout the group is killed.
CommandOutput run_command(const std::vector<std::string>& argv, const std::string& workdir,
                          const std::map<std::string, std::string>& env, int timeout_s);

struct CpuInfo {
  std::string model;
  int logical = 0, sockets = 0, cores_per_socket = 0;
  double mhz = 0;
};
// /proc/cpuinfo as text.
CpuInfo parse_cpuinfo(const std::string& text);

struct GpuInfo {
  std::string index, name, uuid, driver_version, pci_bus_id, compute_cap;
  long long memory_mib = 0;  // memory.total
};

struct Environment {
  std::string captured_at;  // UTC, ISO 8601
  std::string hostname;
  // Host.
  std::string kernel;          // uname: release ("6.18.44-fc-v657-gpu")
  std::string kernel_build;    // uname: version ("#1 SMP PREEMPT_DYNAMIC ...")
  std::string machine;         // uname: machine ("x86_64")
  std::string libc;            // "glibc 2.39"
  std::string os;              // /etc/os-release PRETTY_NAME
  std::string cpu_model;       // /proc/cpuinfo
  int cpu_logical = 0, cpu_sockets = 0, cpu_cores_per_socket = 0;
  double cpu_mhz = 0;          // /proc/cpuinfo: the first processor's
  long long memory_kb = 0;     // /proc/meminfo MemTotal
  // Python: probed when the workload's command is a Python program.
  std::string python;              // the interpreter probed ("" = none)
  std::string python_version, python_executable;
  std::map<std::string, std::string> python_packages;  // distribution -> version (torch, tensorflow, jax, ...)
  std::string torch_cuda;          // the CUDA version torch was built with
  std::string python_note;         // why there is no Python information
  // NVIDIA.
  bool nvidia_smi = false;         // nvidia-smi ran and listed GPUs
  std::string driver_version, cuda_version;
  std::vector<GpuInfo> gpus;
  std::string nvidia_note;         // why there is no GPU information
  // Container.
  std::string container;           // "docker", "podman", "apptainer", "enroot", "container" ("" = none found)
  std::string container_image;     // when the runtime says which image
  std::string container_evidence;  // what showed it ("/.dockerenv", "SLURM_CONTAINER_IMAGE", ...)
  std::string ngc_release;         // NVIDIA NGC framework container: "PyTorch NVIDIA Release 24.09"
  // The workload's git commit.
  std::string git_dir;             // where git was asked
  std::string git_commit;
  bool git_dirty = false;          // tracked files differ from the commit
  std::string git_note;            // why there is no commit
  // The log's submission_* fields (submission_benchmark, submission_platform, ...).
  std::map<std::string, std::string> submission;

  std::string to_json(int indent = 2) const;
  std::string to_text() const;

  // What the system description's fields can take from the capture:
  // framework ("PyTorch 2.11.0+cu130", or the NGC release), other_software_stack
  // (a JSON object: cuda_version, cuda_driver_version, python_version,
  // <package>_version, kernel_version, libc_version, container_image, ...),
  // operating_system, and, with GPUs, accelerators_per_node,
  // accelerator_model_name, accelerator_memory_capacity ("140 GB": MiB / 1024,
  // rounded, as published files write 80 GB for an 81559 MiB H100).
  // Values are text; other_software_stack is JSON (listed in *nested).
  std::map<std::string, std::string> system_fields(std::vector<std::string>* nested) const;
};

struct CaptureOptions {
  std::vector<std::string> command;          // the workload's command (spec), to find its Python
  std::string workdir;                       // where it runs ("" = the current directory): git is asked there
  std::map<std::string, std::string> env;    // the workload's extra environment (the Python probe gets it)
  int timeout_s = 15;                        // per probe
  CommandRunner run;                         // default: run_command
  // Seams for tests: the environment variables and files the container checks read.
  std::function<std::optional<std::string>(const std::string&)> getenv;  // default: ::getenv
  std::string root = "/";                    // /.dockerenv, /run/.containerenv, /etc/os-release, /proc/cpuinfo
};

Environment capture_environment(const CaptureOptions& opt);

// The accelerator devices of this node, from their device files under
// `dev_dir` (/dev): NVIDIA GPUs (nvidia0, nvidia1, ...), AMD GPUs under ROCm
// (kfd), Intel Gaudi and other accelerators of the kernel's accel class
// (accel/accel0, ...). Paths as found, sorted; none on a node without any.
std::vector<std::string> accelerator_devices(const std::string& dev_dir = "/dev");

// Parsers (public for tests).
// `nvidia-smi --query-gpu=... --format=csv` output, header included; columns by name, units stripped.
bool parse_gpu_query(const std::string& csv, std::vector<GpuInfo>* out, std::string* error);
// "CUDA Version: 13.0" from nvidia-smi's banner, or "CUDA Version : 13.0" from nvidia-smi -q.
std::string parse_cuda_version(const std::string& nvidia_smi_output);
// The interpreter a command runs ("" = not a Python program): an argument (or
// a word of one, as in sh -c "...") named python, python3, python3.12, or the
// command's script when its #! line names Python.
std::string python_of_command(const std::vector<std::string>& command, const std::string& workdir);
// submission_* keys of a log's :::MLLOG lines, each value as text.
std::map<std::string, std::string> submission_fields(const std::string& log_text);

}  // namespace referee::harness
