// `referee system describe`: a system description (systems/<system>.json)
// from what can be detected on this machine (processor model and count, cores,
// memory, operating system, NVIDIA accelerators when nvidia-smi is on PATH,
// the software stack: harness/environment.h) and
// a YAML or JSON file for the rest. Missing required fields are an error
// before any run starts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/environment.h"

namespace referee::harness {

struct SystemDescription {
  std::map<std::string, std::string> fields;          // every field, as text (nested ones as JSON)
  std::map<std::string, bool> nested;                 // fields whose text is a JSON object or list
  std::map<std::string, std::string> origin;          // field -> "detected", "file", "default"
  std::vector<std::string> missing;                   // required fields without a value
  std::string to_json() const;                        // scalars as JSON strings, counts included, as published
};

// What keeps the consortium's tools from reading `system_json` (one line per
// field, with the fix; empty when both can): a field its package checker
// joins as text that is not a string, a count its result summarizer takes
// with int() that is not an integer (number_of_nodes,
// host_processors_per_node, accelerators_per_node), notes it joins that are
// not strings (hw_notes, sw_notes).
std::vector<std::string> consortium_read_problems(const std::string& system_json);

// Detects what it can (processors, memory, and from `env`, captured when
// null: operating system, framework, other_software_stack and the NVIDIA
// accelerators); then `file` (YAML or JSON; "" for none) overrides; `name`
// sets system_name ("" = from the file or the host name).
bool describe_system(const std::string& file, const std::string& name, SystemDescription* out, std::string* error,
                     const Environment* env = nullptr);

}  // namespace referee::harness
