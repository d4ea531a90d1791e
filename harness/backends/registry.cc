#include "harness/backends/registry.h"

#include "harness/backends/builtin.h"
#include "harness/backends/exec.h"
#include "harness/backends/slurm.h"

namespace referee::harness {

std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error) {
  if (name == "builtin") return std::make_unique<BuiltinBackend>();
  if (name == "exec") return std::make_unique<ExecBackend>();
  if (name == "slurm") return std::make_unique<SlurmBackend>();
  *error = "unknown backend '" + name + "' (builtin, exec or slurm)";
  return nullptr;
}

}  // namespace referee::harness
