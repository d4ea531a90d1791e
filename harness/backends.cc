#include "harness/backends.h"

#include "harness/exec_backend.h"

namespace referee::harness {

std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error) {
  if (name == "exec") return std::make_unique<ExecBackend>();
  *error = "backend '" + name + "' is not available in this build (available: exec)";
  return nullptr;
}

}  // namespace referee::harness
