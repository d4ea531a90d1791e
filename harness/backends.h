// The backends referee knows, by name.
#pragma once

#include <memory>
#include <string>

#include "harness/backend.h"

namespace referee::harness {

// "exec" (and, when built with them, "builtin" and "slurm"); null with *error
// naming the known backends otherwise.
std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error);

}  // namespace referee::harness
