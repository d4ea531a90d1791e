// Running a short-lived program and collecting what it prints: the probes of
// `referee system env`, Slurm's client commands. No shell is involved: argv
// is passed as it is. (A workload that a run launches and watches is a
// different thing: harness/exec_backend.cc.)
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace referee::base {

// Where the program's standard error goes.
enum class StderrTo {
  Null,     // /dev/null
  Capture,  // collected in CommandResult::err
  Stdout,   // into standard output, interleaved as written (CommandResult::out)
};

// How to run it. Every field has a default.
struct CommandOptions {
  // The folder to run it in; "" is the current one.
  std::string workdir;
  // Variables set (or replaced) in the environment it inherits.
  std::map<std::string, std::string> env;
  // Past this it is killed (SIGKILL) and timed_out is set.
  std::chrono::milliseconds timeout{std::chrono::hours(1)};
  // Where its standard error goes.
  StderrTo stderr_to = StderrTo::Null;
  // It runs in a process group of its own, which is killed whole on timeout
  // and once it has exited (whatever it left behind goes with it). When
  // false it stays in referee's group, so that a Ctrl-C at the terminal
  // reaches it too.
  bool own_process_group = true;
  // Folders where a bare argv[0] that is not on PATH is looked for next (in order).
  std::vector<std::string> fallback_dirs;
  // The most bytes kept of each of standard output and standard error; the rest is read and dropped.
  size_t max_output = size_t{16} << 20;
};

// What running it gave.
struct CommandResult {
  bool started = false;    // false: it could not be started (see spawn_errno, error)
  bool timed_out = false;  // killed after the timeout
  int exit_code = -1;      // its exit status when it exited; else -1
  int signal = 0;          // the signal that ended it, other than the timeout's kill; else 0
  int spawn_errno = 0;     // when not started: why (ENOENT: not found)
  std::string out, err;    // what it wrote to standard output and (StderrTo::Capture) standard error
  // Why it did not start or finish, in words: "no command", "not found on
  // PATH", "not found", "cannot enter <workdir>", "<strerror>", "no answer
  // within N s (stopped)", "killed by <signal>". Empty when it exited.
  std::string error;
};

// Runs argv (argv[0] looked up on PATH unless it holds a '/') with standard
// input from /dev/null and signals unblocked, SIGPIPE, SIGINT and SIGTERM at
// their defaults. Thread-safe (posix_spawn).
CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options = {});

// The running program's own path (/proc/self/exe), "" when unknown.
std::string self_binary();

}  // namespace referee::base
