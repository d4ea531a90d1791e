// Workload specs (YAML): what to run, how many times, with which seeds, on
// which backend. Values come from defaults, then the spec file, then
// command-line flags; every effective value records where it came from.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace referee::harness {

struct Spec {
  std::string benchmark;                 // required
  std::string ruleset;                   // required: "mini-1.0.0", "training-3.1.0"
  std::string division = "closed";
  int runs = 0;                          // 0: the number the rules require
  std::vector<long long> seeds;          // explicit seeds; else seed_base + run index
  long long seed_base = 0;               // unless has_seed_base: derived from the benchmark name
  bool has_seed_base = false;
  std::vector<std::string> command;      // exec/slurm: argv with {seed} {run} {log} placeholders
  // A quick start of the workload that must succeed before any run is
  // started or any seed given out (argument parsing, imports, data paths):
  // argv with the same placeholders, run here (not on the backend) with
  // {seed} 0 and {run} 0, its environment and workdir those of the runs.
  std::vector<std::string> dry_start;
  // Run before each run's command where the run runs (exec: here; slurm: on
  // each node of the job, outside the container), e.g. dropping the page
  // cache; argv with the same placeholders. When it succeeds the run's log
  // gets the cache_clear event the rules require; when it fails the run does
  // not start (RunRequest::cache_clear).
  std::vector<std::string> cache_clear;
  std::map<std::string, std::string> env;
  std::string workdir;
  int timeout_s = 0;                     // per run; 0 = none
  std::string backend = "builtin";       // builtin | exec | slurm
  std::map<std::string, std::string> backend_options;
  int parallel = 0;                      // runs at once; 0 = number of cores (1 for slurm: the cluster decides)
  int batch_size = 0;                    // builtin workloads: global batch size (0 = the workload's default)
  std::string org = "referee";           // submitter folder of the package
  std::string system;                    // system name (systems/<system>.json); default: <hostname>
  std::string system_description;        // YAML/JSON file with the fields referee cannot detect
  // name -> (value, origin: "default", "spec", "flag", "rules")
  std::map<std::string, std::pair<std::string, std::string>> effective;
  std::string path;                      // the spec file ("" for a spec made in code)
  std::map<std::string, int> lines;      // field (and "backend_options.KEY") -> its line in the file
};

// What a spec may hold; a value out of range is an error, never replaced by a default.
inline constexpr long long kMaxRuns = 1000;          // as --runs
inline constexpr long long kMaxParallel = 4096;      // as --parallel
inline constexpr long long kMaxSeed = 4294967295LL;  // 2^32 - 1: what numpy and most workloads take
inline constexpr long long kMaxTimeout = 31536000;   // a year, in seconds
inline constexpr long long kMaxBatch = 1LL << 30;

// Reads a spec file. Unknown fields, a field given twice, and values out of
// range are errors naming the file, line, field, what is expected and what
// was found (a typo must not be ignored). backend_options are checked against
// the backend (harness/spec_options.h); org must not be empty; workdir and
// system_description must exist.
bool load_spec(const std::string& path, Spec* out, std::string* error);

// Records a value set from a flag.
void set_from_flag(Spec* s, const std::string& name, const std::string& value);

// Fills defaults that need the rules (runs) and derived values (seeds); checks
// the result, backend_options included (a --backend flag may have changed the
// backend). Errors start with the spec's file and line where it has them. `required_runs` comes from the rule set's facts.
// `dev_dir`: where the node's device files are (accelerator_devices), for
// the exec backend's default of runs at once.
bool finalize_spec(Spec* s, int required_runs, std::string* error, const std::string& dev_dir = "/dev");

// {seed}, {run} and {log} replaced in each argument.
std::vector<std::string> expand_command(const std::vector<std::string>& cmd, long long seed, int run, const std::string& log);

}  // namespace referee::harness
