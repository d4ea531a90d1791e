#include "harness/backends/slurm_describe.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "harness/environment/node_environment.h"

namespace referee::harness {

namespace fs = std::filesystem;

namespace {

std::string option(const Spec& spec, const char* key, const std::string& fallback = "") {
  auto it = spec.backend_options.find(key);
  return it == spec.backend_options.end() ? fallback : it->second;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

bool captures_on_node(const Spec& spec) { return spec.backend == "slurm" && option(spec, "describe", "node") != "host"; }

bool describe_from_node(const Spec& spec, const std::string& spec_path, const std::string& referee_binary,
                        const std::string& work_root, SlurmOptions options, const Environment& host,
                        NodeDescription* out, std::string* error, const std::atomic<bool>* interrupt) {
  *out = NodeDescription{};
  out->env = host;
  std::string mode = option(spec, "describe", "node");
  if (mode != "node" && mode != "host") {
    *error = "backend_options.describe is node or host, not '" + mode + "'";
    return false;
  }
  std::string limit_text = option(spec, "describe_timeout", "300");
  if (!all_digits(limit_text) || limit_text.size() > 7 || std::atol(limit_text.c_str()) == 0) {
    *error = "backend_options.describe_timeout is a number of seconds above 0, not '" + limit_text + "'";
    return false;
  }
  if (mode == "host") return true;
  auto limit = std::chrono::seconds(std::atol(limit_text.c_str()));
  std::string advice =
      "; the system is described from the submitting host " + host.hostname +
      " instead. The nodes must reach the referee binary at " + referee_binary +
      " and the spec at the same paths (a shared file system; with a container, mounted into it: "
      "container_mounts), or set backend_options.describe: host";
  if (referee_binary.empty()) {
    out->warning = "cannot tell where the referee binary is (/proc/self/exe)" + advice;
    return true;
  }
  std::error_code ec;
  fs::create_directories(work_root, ec);
  std::string tmpl = (fs::absolute(work_root, ec) / "describe.XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    out->warning = "cannot create a directory in " + work_root + " for the describe job" + advice;
    return true;
  }
  out->work_dir = buf.data();
  options.referee_binary = referee_binary;
  options.capture_spec = spec_path.empty() ? "" : fs::absolute(spec_path, ec).string();
  RunRequest req;
  req.id = spec.benchmark + "-describe";
  req.benchmark = spec.benchmark;
  req.command = {"true"};
  req.env = spec.env;
  req.workdir = spec.workdir;
  req.options = spec.backend_options;
  req.log_path = out->work_dir + "/describe.log";
  SlurmBackend backend(options);
  std::string err;
  auto handle = backend.launch(req, nullptr, &err);
  if (!handle) {
    out->warning = "the describe job could not be submitted: " + err + advice;
    return true;
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  RunStatus st;
  do {
    st = handle->wait(std::chrono::milliseconds(200));
    if (interrupt && interrupt->load() && (st.state == RunState::Pending || st.state == RunState::Running)) {
      handle->cancel("interrupted");
      // The job may have ended just before the cancel: then it was not
      // cancelled, and the words must say so.
      RunStatus after = handle->wait(std::chrono::seconds(30));
      out->interrupted = true;
      out->ended = after.state == RunState::Cancelled ? std::string("cancelled")
                                                      : std::string(to_string(after.state)) +
                                                            (after.detail.empty() ? "" : ": " + after.detail);
      return true;
    }
  } while ((st.state == RunState::Pending || st.state == RunState::Running) &&
           std::chrono::steady_clock::now() < deadline);
  if (st.state == RunState::Pending || st.state == RunState::Running) {
    std::string was = st.detail;
    handle->cancel("the describe job did not end within " + limit_text + " s");
    handle->wait(std::chrono::seconds(30));
    out->warning = "the describe job did not end within " + limit_text + " s of its submission (" + was +
                   "; raise backend_options.describe_timeout for a busy partition)" + advice;
    return true;
  }
  std::string file = node_environment_file(req.log_path);
  Environment node;
  if (!fs::exists(file, ec)) {
    // The capture's own words when it ran and failed; else how the job ended.
    std::ifstream in(file + ".err");
    std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    for (size_t nl; (nl = why.find('\n')) != std::string::npos;) why.replace(nl, 1, "; ");
    if (why.size() > 600) why = "..." + why.substr(why.size() - 600);
    out->warning = "the describe job (" + std::string(to_string(st.state)) + (st.detail.empty() ? "" : ": " + st.detail) +
                   ") did not capture the environment on its node" + (why.empty() ? "" : ": " + why) +
                   " (its files: " + out->work_dir + ")" + advice;
    return true;
  }
  std::ifstream in(file);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!environment_from_json(json, &node, &err)) {
    out->warning = "the environment the describe job captured (" + file + ") cannot be read: " + err + advice;
    return true;
  }
  out->from_node = true;
  out->env = node;
  out->node = node.hostname;
  return true;
}

std::vector<std::string> apply_allocation(const Spec& spec, SystemDescription* sys) {
  std::vector<std::string> warnings;
  if (spec.backend != "slurm") return warnings;
  auto from_spec = [&](const char* field, const std::string& value, const std::string& option_name) {
    auto it = sys->fields.find(field);
    if (it != sys->fields.end() && sys->origin[field] == "file") {
      if (it->second != value)
        warnings.push_back(std::string("the system description file says ") + field + " " + it->second +
                           " but the spec's backend_options." + option_name + " asks for " + value +
                           ": the file's value is kept");
      return;
    }
    sys->fields[field] = value;
    sys->origin[field] = "spec";
  };
  std::string nodes = option(spec, "nodes");
  if (all_digits(nodes)) {
    from_spec("number_of_nodes", std::to_string(std::atol(nodes.c_str())), "nodes");
  } else if (!nodes.empty() && sys->origin["number_of_nodes"] != "file") {
    warnings.push_back("backend_options.nodes is " + nodes +
                       ", not a count: number_of_nodes cannot be known before the jobs run; put it in the "
                       "system description file");
  }
  std::string gpus = option(spec, "gpus_per_node");
  std::string count = gpus.substr(gpus.rfind(':') == std::string::npos ? 0 : gpus.rfind(':') + 1);
  if (all_digits(count)) {
    from_spec("accelerators_per_node", std::to_string(std::atol(count.c_str())), "gpus_per_node");
    auto model = sys->fields.find("accelerator_model_name");
    if (sys->fields["accelerators_per_node"] != "0" && (model == sys->fields.end() || model->second == "N/A"))
      warnings.push_back("backend_options.gpus_per_node asks for " + gpus +
                         " GPUs per node but nothing names their model (no nvidia-smi where the system was "
                         "described): set accelerator_model_name and accelerator_memory_capacity in the system "
                         "description file");
  } else if (!gpus.empty()) {
    warnings.push_back("backend_options.gpus_per_node is " + gpus +
                       ", not a count or type:count: accelerators_per_node is not taken from it");
  }
  return warnings;
}

}  // namespace referee::harness
