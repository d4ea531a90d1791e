// The environment of a run as captured on the machine it ran on. The slurm
// backend's batch script runs `referee system env --json` on the job's node
// (harness/backends/slurm.h, SlurmOptions::referee_binary) and leaves the JSON
// beside the run's log; the runner then writes that, not the submitting
// host's capture, into <run>.env.json, and `referee run` describes the
// system from a compute node the same way (harness/backends/slurm_describe.h).
#pragma once

#include <string>

#include "harness/environment/environment.h"

namespace referee::harness {

// What Environment::to_json wrote, read back. False with *error when `json`
// is not such an object.
bool environment_from_json(const std::string& json, Environment* out, std::string* error);

// <log_path without .log>.node-env.json: where a backend that captures on the
// node leaves the JSON (and, when the capture failed, <that>.err with why).
std::string node_environment_file(const std::string& log_path);

// The environment of the run whose log is `log_path`: the capture from its
// node when one is there, else `host`. *note says why the node's is not used
// when a capture was tried and failed ("" otherwise).
Environment run_environment(const std::string& log_path, const Environment& host, std::string* note);

}  // namespace referee::harness
