// The exec backend: each run is a local process in its own process group,
// its stdout and stderr streamed line by line; cancel sends SIGTERM to the
// group, then SIGKILL after a grace period; kill_now sends SIGKILL at once.
//
// A run ends when its main process exits, whatever its children do: what is
// still coming through the pipe is read for at most `drain` (a child that
// inherited the pipe may hold it open for ever), then the processes left in
// the run's process group get SIGTERM, and SIGKILL after the grace; the
// run's status says so (RunStatus::leftovers). The run is judged by its exit
// status and its log, not by what it left behind.
#pragma once

#include "harness/backends/backend.h"

namespace referee::harness {

class ExecBackend : public Backend {
 public:
  explicit ExecBackend(std::chrono::milliseconds kill_grace = std::chrono::milliseconds(2000),
                       std::chrono::milliseconds drain = std::chrono::milliseconds(2000))
      : grace_(kill_grace), drain_(drain) {}
  const char* name() const override { return "exec"; }
  std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) override;
  std::string kill_now_says() const override { return "killed"; }
  // The program and an interpreter's script are there (program_problem).
  bool preflight(const RunRequest& sample, std::string* error) override;

 private:
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds drain_;
};

}  // namespace referee::harness
