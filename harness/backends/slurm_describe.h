// Describing the system a spec runs on when it runs on Slurm: from a compute
// node of the kind the runs get, not from the submitting host, and with the
// allocation the spec asks for (nodes, GPUs per node). docs/slurm.md
// ("The system description") says what it needs from a cluster.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "harness/environment/environment.h"
#include "harness/backends/slurm.h"
#include "harness/spec.h"
#include "harness/environment/system_describe.h"

namespace referee::harness {

struct NodeDescription {
  bool from_node = false;  // env was captured on a compute node
  Environment env;         // the node's capture, else the host's
  std::string node;        // the node's host name, when from_node
  std::string warning;     // why the host's is used ("" when from_node or when the spec asks for the host)
  std::string work_dir;    // the describe job's files
  bool interrupted = false;  // *interrupt was set: nothing is to run; env is the host's
  // With interrupted: how the job ended, asked after the cancel: "cancelled",
  // or, when it had ended on its own just before (nothing to cancel), its
  // state and detail ("succeeded: exit 0").
  std::string ended;
};

// The describe job: one batch job with the spec's backend options (partition,
// account, nodes, GPUs, container...) whose batch script captures the
// environment with `<referee_binary> system env --json --spec <spec_path>` on
// its node, as each run's does (SlurmOptions::referee_binary), and runs
// `true`. It is given backend_options.describe_timeout seconds (default 300)
// from submission to its end, queue time included; past that it is cancelled.
// When it cannot be submitted, does not finish in time, or the capture fails
// on the node (the binary is not there, or cannot run), *out holds `host`
// and a warning that says why. backend_options.describe: host skips the job.
// False with *error only for a malformed describe or describe_timeout option.
// Its files go to a new directory in `work_root`. When `interrupt` is set
// while it waits (Ctrl-C), the job is cancelled and out->interrupted set;
// out->ended says whether the cancel stopped it or it had already ended.
bool describe_from_node(const Spec& spec, const std::string& spec_path, const std::string& referee_binary,
                        const std::string& work_root, SlurmOptions options, const Environment& host,
                        NodeDescription* out, std::string* error, const std::atomic<bool>* interrupt = nullptr);

// Whether the runs capture their environment on their nodes (false with
// backend_options.describe: host).
bool captures_on_node(const Spec& spec);

// number_of_nodes from the spec's nodes, accelerators_per_node from its
// gpus_per_node (the count of "type:count"), where the description file did
// not give them; for the slurm backend only. Returns warnings: a nodes range
// (the count is not known before the job runs), a file's value that differs
// from what the spec asks for, GPUs whose model nothing names.
std::vector<std::string> apply_allocation(const Spec& spec, SystemDescription* sys);

}  // namespace referee::harness
