// The builtin backend: the project's mini reference workloads, run on a
// thread of this process, their MLLOG lines streamed as they are logged.
#pragma once

#include "harness/backends/backend.h"

namespace referee::harness {

class BuiltinBackend : public Backend {
 public:
  const char* name() const override { return "builtin"; }
  // RunRequest.options: "batch_size", "division", "org" (others are errors).
  std::unique_ptr<RunHandle> launch(const RunRequest& req, LineSink sink, std::string* error) override;
};

}  // namespace referee::harness
