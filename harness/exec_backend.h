// The exec backend: each run is a local process in its own process group,
// its stdout and stderr streamed line by line; cancel sends SIGTERM to the
// group, then SIGKILL after a grace period; kill_now sends SIGKILL at once.
#pragma once

#include "harness/backend.h"

namespace referee::harness {

class ExecBackend : public Backend {
 public:
  explicit ExecBackend(std::chrono::milliseconds kill_grace = std::chrono::milliseconds(2000)) : grace_(kill_grace) {}
  const char* name() const override { return "exec"; }
  std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) override;

 private:
  std::chrono::milliseconds grace_;
};

}  // namespace referee::harness
