// The backends referee knows, by name.
#pragma once

#include <memory>
#include <string>

#include "harness/backends/backend.h"

namespace referee::harness {

// "builtin", "exec" or "slurm"; null with *error
// naming them otherwise.
std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error);

}  // namespace referee::harness
