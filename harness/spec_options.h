// backend_options of a workload spec, checked when the spec loads: each
// backend's keys and the values they take, so that a typo or a bad value is
// refused before any run starts (and before any seed is used). The backends
// keep their own checks for requests built in code.
#pragma once

#include <string>
#include <vector>

#include "base/text.h"
#include "harness/spec.h"

namespace referee::harness {

// The option keys `backend` takes in backend_options ({} for an unknown backend).
std::vector<std::string> backend_option_keys(const std::string& backend);

// The name in `known` nearest to `name` by edit distance, "" when none is close.
using base::nearest_name;

// Checks s->backend_options against s->backend: an unknown key (with the
// nearest known one), a value of the wrong kind or out of range, options that
// cannot go together. The error names the spec file and line (Spec::path,
// Spec::lines), the option, what is expected and what was found.
bool check_backend_options(const Spec& s, std::string* error);

}  // namespace referee::harness
