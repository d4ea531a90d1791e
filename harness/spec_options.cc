#include "harness/spec_options.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "harness/backends/slurm.h"

namespace referee::harness {

namespace {

const std::vector<std::string> kBuiltinKeys = {"max_epochs", "batch_size"};
const std::vector<std::string> kExecKeys = {"kill_grace"};

bool all_digits(const std::string& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A whole number in [lo, hi] written as digits only.
bool whole_in(const std::string& v, long long lo, long long hi) {
  if (!all_digits(v) || v.size() > 12) return false;
  long long n = std::stoll(v);
  return n >= lo && n <= hi;
}

bool control_chars(const std::string& v) {
  return std::any_of(v.begin(), v.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string list(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// What `key` of `backend` takes; "" when `value` is one of them.
std::string value_problem(const std::string& backend, const std::string& key, const std::string& value) {
  if (control_chars(value)) return "text without control characters";
  if (backend == "builtin") {
    if (key == "max_epochs" && !whole_in(value, 1, 1000000)) return "a whole number of epochs from 1 to 1000000";
    if (key == "batch_size" && !whole_in(value, 1, kMaxBatch))
      return "a global batch size from 1 to " + std::to_string(kMaxBatch);
    return "";
  }
  if (backend == "exec") {
    // As the exec backend reads it: seconds, more than 0 and at most 3600.
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end == value.c_str() || *end != '\0' || !(v > 0 && v <= 3600))
      return "seconds between SIGTERM and SIGKILL, more than 0 and at most 3600";
    return "";
  }
  // slurm
  if (key == "nodes") {
    size_t dash = value.find('-');
    if (dash == std::string::npos ? whole_in(value, 1, 1000000)
                                  : whole_in(value.substr(0, dash), 1, 1000000) &&
                                        whole_in(value.substr(dash + 1), 1, 1000000) &&
                                        std::stoll(value.substr(0, dash)) <= std::stoll(value.substr(dash + 1)))
      return "";
    return "a number of nodes from 1, or a range MIN-MAX (2-4)";
  }
  if (key == "tasks_per_node" && !whole_in(value, 1, 1000000)) return "a number of tasks per node from 1";
  if (key == "runs_per_job" && !whole_in(value, 1, kMaxRuns)) return "a number of runs from 1 to " + std::to_string(kMaxRuns);
  if (key == "gpus_per_node") {
    std::string count = value.substr(value.rfind(':') == std::string::npos ? 0 : value.rfind(':') + 1);
    if (!whole_in(count, 0, 1000000) || count.size() == value.size() - 1) return "a number of GPUs per node, or TYPE:NUMBER (a100:8)";
    return "";
  }
  if (key == "launcher" && value != "auto" && value != "srun" && value != "none") return "auto, srun or none";
  if (key == "describe" && value != "node" && value != "host") return "node or host";
  if (key == "describe_timeout" && !whole_in(value, 1, 9999999)) return "a number of seconds above 0";
  if ((key == "container_writable" || key == "container_remap_root" || key == "container_mount_home" ||
       key == "container_entrypoint") &&
      !slurm::yes_no(value))
    return "yes or no (true/false)";
  if ((key == "extra_args" || key == "srun_args") && !slurm::split_words(value))
    return "words as a shell splits them (no unclosed quote, no trailing backslash)";
  if (key != "extra_args" && key != "srun_args" && key != "work_dir" && value.empty()) return "a value (it is empty)";
  return "";
}

}  // namespace

std::vector<std::string> backend_option_keys(const std::string& backend) {
  if (backend == "builtin") return kBuiltinKeys;
  if (backend == "exec") return kExecKeys;
  if (backend == "slurm") return slurm::kOptionKeys;
  return {};
}

bool check_backend_options(const Spec& s, std::string* error) {
  const auto keys = backend_option_keys(s.backend);
  if (keys.empty()) return true;  // an unknown backend is refused by finalize_spec
  auto where = [&](const std::string& key) {
    std::string at;
    if (s.path.empty()) return at;
    at = s.path;
    auto it = s.lines.find("backend_options." + key);
    if (it == s.lines.end()) it = s.lines.find("backend_options");
    if (it != s.lines.end()) at.append(":").append(std::to_string(it->second));
    at.append(": ");
    return at;
  };
  for (const auto& [key, value] : s.backend_options) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string near = nearest_name(key, keys);
      std::string hint;
      if (s.backend == "builtin" && (key == "division" || key == "org"))
        hint = "; " + key + " is a field of the spec itself (" + key + ": ...), not a backend option";
      else if (!near.empty())
        hint = "; did you mean '" + near + "'?";
      for (const char* other : {"builtin", "exec", "slurm"}) {
        auto ok = backend_option_keys(other);
        if (other != s.backend && hint.empty() && std::find(ok.begin(), ok.end(), key) != ok.end())
          hint = std::string("; it is an option of the ") + other + " backend, and this spec runs on " + s.backend;
      }
      *error = where(key) + "backend_options: unknown option '" + key + "' for the " + s.backend +
               " backend: expected one of " + list(keys) + hint;
      return false;
    }
    std::string expected = value_problem(s.backend, key, value);
    if (!expected.empty()) {
      *error = where(key) + "backend_options." + key + ": expected " + expected + ", found '" + value + "'";
      return false;
    }
  }
  if (s.backend == "slurm") {
    const auto& o = s.backend_options;
    bool container = false;
    for (const auto& [k, v] : o) container = container || k.rfind("container_", 0) == 0;
    if (container && !o.count("container_image") && !o.count("container_name")) {
      std::string first;
      for (const auto& [k, v] : o)
        if (k.rfind("container_", 0) == 0) { first = k; break; }
      *error = where(first) + "backend_options." + first +
               ": container options need container_image (or container_name, a container this job made before)";
      return false;
    }
    auto l = o.find("launcher");
    auto per_job = o.find("runs_per_job");
    if (l != o.end() && l->second == "none" && per_job != o.end() && per_job->second != "1") {
      *error = where("launcher") + "backend_options.launcher: none runs the command without srun, and runs_per_job: " +
               per_job->second + " runs each run as a job step of its own (srun), so that it can be stopped alone; "
               "expected launcher: srun or auto";
      return false;
    }
    if (l != o.end() && l->second == "none" && (container || o.count("srun_args"))) {
      *error = where("launcher") + "backend_options.launcher: none runs the command without srun, so " +
               (container ? "the container options (Pyxis adds them to srun)" : "srun_args") +
               " cannot apply; expected launcher: srun or auto";
      return false;
    }
  }
  return true;
}

}  // namespace referee::harness
