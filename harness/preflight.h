// Checks made once before any run is started or any seed given out, for
// what would make every run fail the same way: the program and its script
// (exec), what the backend can test without running (Slurm: sbatch
// --test-only, Pyxis for a container), the spec's dry_start, and the output
// folder (writable, with room for the logs). A failure is one message, exit 2,
// nothing written: not one "could not start" per run and an empty package.
#pragma once

#include <string>

#include "harness/backends/backend.h"
#include "harness/spec.h"

namespace referee::harness {

// The program of an exec run: argv[0] found as the process will look for it
// (PATH from the run's environment, else referee's; a path with a '/'
// relative to its workdir) and executable; for an interpreter (python, sh,
// bash, perl, ...) its script, when the first argument names a file. "" when
// all is there, else what is missing.
// The spec's cache_clear hook is checked the same way (its argv in place of
// the command: "the cache_clear hook's program ...").
std::string program_problem(const RunRequest& req);

// The space a package of `runs` more runs needs, as far as can be told: its
// existing results' size (the largest, per run), at least 1 MiB a run, three
// times over (the checker's spool, the kept log, the result file), and 64 MiB.
// `out_dir` need not exist: its nearest existing folder is checked. "" when
// it is writable with that room, else why not.
std::string output_problem(const std::string& out_dir, const std::string& results_dir, int runs);

// Runs spec.dry_start (when the spec has one) with `sample`'s environment and
// workdir, {seed} 0, {run} 0 and {log} a file in a temporary folder, for at
// most `timeout_s`. "" when it exits 0, else what it did and its last line.
std::string dry_start_problem(const Spec& spec, const RunRequest& sample, int timeout_s = 300);

// The backend's own check (Backend::preflight: exec checks the program with
// program_problem), then the output folder and the dry start, in that order; the first problem found, in one message that says nothing was
// run, and how to fix it.
bool preflight(const Spec& spec, Backend& backend, const RunRequest& sample, const std::string& out_dir,
               const std::string& results_dir, int runs, std::string* error);

}  // namespace referee::harness
