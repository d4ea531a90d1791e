// `referee system describe`: a system description (systems/<system>.json)
// from what can be detected on this machine (processor model and count, cores,
// memory, operating system, NVIDIA accelerators when nvidia-smi is on PATH,
// the software stack: harness/environment/environment.h) and
// a YAML or JSON file for the rest. Missing required fields are an error
// before any run starts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/environment/environment.h"

namespace referee::harness {

struct SystemDescription {
  std::map<std::string, std::string> fields;          // every field, as text (nested ones as JSON)
  std::map<std::string, bool> nested;                 // fields whose text is a JSON object or list
  std::map<std::string, std::string> origin;          // field -> "detected", "file", "default"
  std::vector<std::string> missing;                   // required fields without a value
  std::vector<std::string> warnings;                  // fields of the file no tool knows, with the nearest known name
  std::string to_json() const;                        // scalars as JSON strings, counts included, as published
};

// What keeps the consortium's tools from reading `system_json` (one line per
// field, with the fix; empty when both can): a field its package checker
// joins as text that is not a string, a count its result summarizer takes
// with int() that is not an integer (number_of_nodes,
// host_processors_per_node, accelerators_per_node), notes it joins that are
// not strings (hw_notes, sw_notes).
std::vector<std::string> consortium_read_problems(const std::string& system_json);

// The fields a system description may hold: the consortium's required ones
// (rules::required_system_fields) and the optional ones its tools read
// (private_id, scaling_factor).
const std::vector<std::string>& known_system_fields();

// The known field nearest to `name` by edit distance, "" when none is close.
std::string nearest_system_field(const std::string& name);

// Detects what it can (processors, memory, and from `env`, captured when
// null: operating system, framework, other_software_stack and the NVIDIA
// accelerators); then `file` (YAML or JSON; "" for none) overrides; `name`
// sets system_name ("" = from the file or the host name). A field of `file`
// no tool knows is kept and named in out->warnings with the nearest known
// field (a typo such as "coolnig"); a workload spec passed as `file` is an
// error.
bool describe_system(const std::string& file, const std::string& name, SystemDescription* out, std::string* error,
                     const Environment* env = nullptr);

}  // namespace referee::harness
