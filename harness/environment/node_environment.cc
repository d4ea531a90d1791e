#include "harness/environment/node_environment.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace referee::harness {

namespace fs = std::filesystem;

namespace {

std::string text(const YAML::Node& n, const char* key) {
  YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

long long count(const YAML::Node& n, const char* key) {
  try {
    YAML::Node v = n[key];
    return v && v.IsScalar() ? v.as<long long>() : 0;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

double real(const YAML::Node& n, const char* key) {
  try {
    YAML::Node v = n[key];
    return v && v.IsScalar() ? v.as<double>() : 0;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

std::map<std::string, std::string> strings(const YAML::Node& n) {
  std::map<std::string, std::string> out;
  if (n && n.IsMap())
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->second.IsScalar()) out[it->first.Scalar()] = it->second.Scalar();
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

bool environment_from_json(const std::string& json, Environment* out, std::string* error) {
  YAML::Node n;
  try {
    n = YAML::Load(json);
  } catch (const YAML::Exception& e) {
    *error = "not JSON: line " + std::to_string(e.mark.line + 1) + ": " + e.msg;
    return false;
  }
  if (!n.IsMap() || !n["host"] || !n["host"].IsMap()) {
    *error = "not an environment (no \"host\" object): expected the output of referee system env --json";
    return false;
  }
  Environment e;
  e.captured_at = text(n, "captured_at");
  e.hostname = text(n, "hostname");
  YAML::Node h = n["host"];
  e.kernel = text(h, "kernel");
  e.kernel_build = text(h, "kernel_build");
  e.machine = text(h, "machine");
  e.libc = text(h, "libc");
  e.os = text(h, "operating_system");
  e.cpu_model = text(h, "cpu_model");
  e.cpu_logical = static_cast<int>(count(h, "cpu_logical"));
  e.cpu_sockets = static_cast<int>(count(h, "cpu_sockets"));
  e.cpu_cores_per_socket = static_cast<int>(count(h, "cpu_cores_per_socket"));
  e.cpu_mhz = real(h, "cpu_mhz");
  e.memory_kb = count(h, "memory_kb");
  if (YAML::Node p = n["python"]; p && p.IsMap()) {
    e.python = text(p, "interpreter");
    e.python_version = text(p, "version");
    e.python_executable = text(p, "executable");
    e.python_packages = strings(p["packages"]);
    e.torch_cuda = text(p, "torch_cuda");
    e.python_note = text(p, "note");
  }
  if (YAML::Node v = n["nvidia"]; v && v.IsMap()) {
    e.nvidia_smi = text(v, "nvidia_smi") == "true";
    e.driver_version = text(v, "driver_version");
    e.cuda_version = text(v, "cuda_version");
    e.nvidia_note = text(v, "note");
    if (YAML::Node gs = v["gpus"]; gs && gs.IsSequence())
      for (const auto& g : gs) {
        GpuInfo gi;
        gi.index = text(g, "index");
        gi.name = text(g, "name");
        gi.uuid = text(g, "uuid");
        gi.memory_mib = count(g, "memory_mib");
        gi.pci_bus_id = text(g, "pci_bus_id");
        gi.compute_cap = text(g, "compute_cap");
        gi.driver_version = e.driver_version;
        e.gpus.push_back(gi);
      }
  }
  if (YAML::Node c = n["container"]; c && c.IsMap()) {
    e.container = text(c, "runtime");
    e.container_image = text(c, "image");
    e.container_evidence = text(c, "evidence");
    e.ngc_release = text(c, "ngc_release");
  }
  if (YAML::Node g = n["git"]; g && g.IsMap()) {
    e.git_dir = text(g, "directory");
    e.git_commit = text(g, "commit");
    e.git_dirty = text(g, "dirty") == "true";
    e.git_note = text(g, "note");
  }
  e.submission = strings(n["submission"]);
  *out = std::move(e);
  return true;
}

std::string node_environment_file(const std::string& log_path) {
  std::string base = log_path;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".log") == 0) base.resize(base.size() - 4);
  return base + ".node-env.json";
}

Environment run_environment(const std::string& log_path, const Environment& host, std::string* note) {
  note->clear();
  if (log_path.empty()) return host;
  std::string file = node_environment_file(log_path);
  std::error_code ec;
  if (fs::exists(file, ec)) {
    Environment e;
    std::string err;
    if (environment_from_json(read_file(file), &e, &err)) return e;
    *note = "the environment captured on the node (" + file + ") cannot be read: " + err +
            "; the submitting host's is recorded instead";
    return host;
  }
  if (fs::exists(file + ".err", ec)) {
    std::string why = read_file(file + ".err");
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (why.size() > 600) why = "..." + why.substr(why.size() - 600);
    *note = "the environment could not be captured on the run's node (" + file + ".err: " + why +
            "); the submitting host's (" + host.hostname + ") is recorded instead";
  }
  return host;
}

}  // namespace referee::harness
