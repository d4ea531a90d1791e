#include "harness/environment/environment.h"

#include <fcntl.h>
#include <gnu/libc-version.h>
#include <poll.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "base/subprocess.h"
#include "base/text.h"
#include "base/utc_time.h"
#include "mllog/json_writer.h"
#include "rules/interp.h"
#include "rules/value.h"

extern char** environ;

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

using base::trim;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t c = line.find(',', start);
    out.push_back(trim(line.substr(start, c == std::string::npos ? std::string::npos : c - start)));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

// First line of what a probe printed, or its error, for a note.
std::string why_failed(const std::string& what, const CommandOutput& r) {
  if (!r.started) return what + ": " + (r.error.empty() ? "could not be started" : r.error);
  if (r.timed_out) return what + ": " + r.error;
  return what + ": exit " + std::to_string(r.exit_code) + (r.error.empty() ? "" : " (" + r.error + ")");
}

// Python, asked without importing any framework (an import of torch takes
// seconds and may touch the GPUs): versions from the installed distributions'
// metadata, torch's CUDA from its version.py.
const char* kPythonProbe = R"PY(
import sys, platform
print("python_version=" + platform.python_version())
print("python_executable=" + str(sys.executable))
try:
    from importlib import metadata as md
except Exception:
    md = None
if md is not None:
    for dist in ("torch", "tensorflow", "tensorflow-cpu", "jax", "jaxlib", "mxnet", "paddlepaddle", "mlperf-logging"):
        try:
            print("package." + dist + "=" + md.version(dist))
        except Exception:
            pass
    try:
        import re
        text = open(str(md.distribution("torch").locate_file("torch/version.py"))).read()
        m = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if m:
            print("torch_cuda=" + m.group(1))
    except Exception:
        pass
)PY";

std::string gb_of_mib(long long mib) {
  return std::to_string(static_cast<long long>(std::llround(static_cast<double>(mib) / 1024.0))) + " GB";
}

}  // namespace

CommandOutput run_command(const std::vector<std::string>& argv, const std::string& workdir,
                          const std::map<std::string, std::string>& env, int timeout_s) {
  base::CommandOptions o;
  o.workdir = workdir;
  o.env = env;
  o.timeout = std::chrono::seconds(timeout_s > 0 ? timeout_s : 3600);
  return base::run_command(argv, o);
}

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo c;
  std::set<std::string> sockets;
  for (const auto& line : split_lines(text)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = trim(line.substr(0, colon)), v = trim(line.substr(colon + 1));
    if (k == "model name" && c.model.empty()) c.model = v;
    else if (k == "physical id") sockets.insert(v);
    else if (k == "processor") ++c.logical;
    else if (k == "cpu cores") c.cores_per_socket = std::atoi(v.c_str());
    else if (k == "cpu MHz" && c.mhz == 0) c.mhz = std::atof(v.c_str());
  }
  c.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  return c;
}

bool parse_gpu_query(const std::string& csv, std::vector<GpuInfo>* out, std::string* error) {
  out->clear();
  auto lines = split_lines(csv);
  size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i == lines.size()) {
    *error = "nvidia-smi listed no GPUs";
    return false;
  }
  // The header names each column: "memory.total [MiB]".
  std::map<std::string, size_t> col;
  auto header = split_csv(lines[i]);
  for (size_t c = 0; c < header.size(); ++c) {
    std::string name = header[c];
    if (auto sp = name.find(" ["); sp != std::string::npos) name = name.substr(0, sp);
    col[name] = c;
  }
  if (!col.count("name")) {
    *error = "nvidia-smi --query-gpu: no \"name\" column in the header: " + lines[i];
    return false;
  }
  for (++i; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    auto cells = split_csv(lines[i]);
    if (cells.size() != header.size()) {
      *error = "nvidia-smi --query-gpu: line " + std::to_string(i + 1) + " has " + std::to_string(cells.size()) +
               " columns, the header " + std::to_string(header.size()) + ": " + lines[i];
      return false;
    }
    auto get = [&](const char* k) -> std::string {
      auto it = col.find(k);
      if (it == col.end()) return "";
      std::string v = cells[it->second];
      return v == "[N/A]" || v == "[Not Supported]" ? "" : v;
    };
    GpuInfo g;
    g.index = get("index");
    g.name = get("name");
    g.uuid = get("uuid");
    g.driver_version = get("driver_version");
    g.pci_bus_id = get("pci.bus_id");
    g.compute_cap = get("compute_cap");
    std::string mem = get("memory.total");  // "143771 MiB" (or "143771" with nounits)
    g.memory_mib = std::atoll(mem.c_str());
    if (mem.find("GiB") != std::string::npos) g.memory_mib *= 1024;
    out->push_back(std::move(g));
  }
  if (out->empty()) {
    *error = "nvidia-smi listed no GPUs";
    return false;
  }
  return true;
}

std::string parse_cuda_version(const std::string& text) {
  auto p = text.find("CUDA Version");
  if (p == std::string::npos) return "";
  p += 12;
  while (p < text.size() && (text[p] == ' ' || text[p] == ':')) ++p;
  size_t e = p;
  while (e < text.size() && (std::isdigit(static_cast<unsigned char>(text[e])) || text[e] == '.')) ++e;
  return text.substr(p, e - p);
}

std::string python_of_command(const std::vector<std::string>& command, const std::string& workdir) {
  auto is_python = [](const std::string& word) {
    std::string base = fs::path(word).filename().string();
    if (base.rfind("python", 0) != 0) return false;
    for (size_t i = 6; i < base.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(base[i])) && base[i] != '.') return false;
    return true;
  };
  for (const auto& arg : command) {
    std::istringstream words(arg);
    for (std::string w; words >> w;) {
      while (!w.empty() && (w.front() == '\'' || w.front() == '"' || w.front() == '(')) w.erase(0, 1);
      while (!w.empty() && (w.back() == '\'' || w.back() == '"' || w.back() == ';' || w.back() == ')')) w.pop_back();
      if (!w.empty() && is_python(w)) return w;
    }
  }
  if (command.empty()) return "";
  // A script (train.py, torchrun) whose #! line names Python.
  fs::path script;
  const std::string& c0 = command[0];
  if (c0.find('/') != std::string::npos) {
    script = fs::path(c0).is_absolute() || workdir.empty() ? fs::path(c0) : fs::path(workdir) / c0;
  } else if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');) {
      fs::path cand = fs::path(d.empty() ? "." : d) / c0;
      if (::access(cand.c_str(), X_OK) == 0) {
        script = cand;
        break;
      }
    }
  }
  if (script.empty()) return "";
  std::ifstream in(script, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first) || first.rfind("#!", 0) != 0) return "";
  std::istringstream words(first.substr(2));
  std::vector<std::string> ws;
  for (std::string w; words >> w;) ws.push_back(w);
  for (size_t i = 0; i < ws.size(); ++i) {
    if (is_python(ws[i])) return ws[i];
  }
  return "";
}

std::map<std::string, std::string> submission_fields(const std::string& log_text) {
  std::map<std::string, std::string> out;
  for (const auto& line : split_lines(log_text)) {
    auto p = line.find(":::MLLOG");
    if (p == std::string::npos || line.find("submission_", p) == std::string::npos) continue;
    bool ok = false;
    std::string err;
    rules::Value v = rules::value_from_json(std::string_view(line).substr(p + 8), &ok, &err);
    if (!ok || v.kind != rules::VKind::Dict) continue;
    const rules::Value* k = v.d().find_str("key");
    const rules::Value* val = v.d().find_str("value");
    if (!k || k->kind != rules::VKind::Str || k->s().rfind("submission_", 0) != 0 || !val) continue;
    out[k->s()] = val->kind == rules::VKind::Str ? val->s() : rules::py_str(*val);
  }
  return out;
}

Environment capture_environment(const CaptureOptions& opt) {
  Environment e;
  CommandRunner run = opt.run ? opt.run : CommandRunner(run_command);
  auto getenv = opt.getenv ? opt.getenv : [](const std::string& k) -> std::optional<std::string> {
    const char* v = std::getenv(k.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  fs::path root(opt.root.empty() ? "/" : opt.root);
  {
    e.captured_at = base::utc_now();
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    e.hostname = host;
  }
  // Host.
  struct utsname u {};
  if (uname(&u) == 0) {
    e.kernel = u.release;
    e.kernel_build = u.version;
    e.machine = u.machine;
  }
  e.libc = std::string("glibc ") + gnu_get_libc_version();
  for (const auto& line : split_lines(read_text(root / "etc/os-release"))) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
    e.os = v;
  }
  CpuInfo cpu = parse_cpuinfo(read_text(root / "proc/cpuinfo"));
  e.cpu_model = cpu.model;
  e.cpu_logical = cpu.logical;
  e.cpu_sockets = cpu.sockets;
  e.cpu_cores_per_socket = cpu.cores_per_socket;
  e.cpu_mhz = cpu.mhz;
  for (const auto& line : split_lines(read_text(root / "proc/meminfo")))
    if (line.rfind("MemTotal:", 0) == 0) e.memory_kb = std::atoll(line.substr(9).c_str());

  // NVIDIA: the GPUs, the driver, and the CUDA version the driver supports.
  CommandOutput q = run({"nvidia-smi", "--query-gpu=index,name,uuid,driver_version,memory.total,pci.bus_id,compute_cap",
                         "--format=csv"},
                        "", {}, opt.timeout_s);
  if (!q.started) {
    e.nvidia_note = "nvidia-smi: " + (q.error.empty() ? std::string("not found on PATH") : q.error) + ": no NVIDIA GPU information";
  } else if (q.timed_out || q.exit_code != 0) {
    e.nvidia_note = why_failed("nvidia-smi --query-gpu", q);
  } else if (std::string err; !parse_gpu_query(q.out, &e.gpus, &err)) {
    e.nvidia_note = err;
  } else {
    e.nvidia_smi = true;
    e.driver_version = e.gpus.front().driver_version;
    CommandOutput banner = run({"nvidia-smi"}, "", {}, opt.timeout_s);
    if (banner.started && !banner.timed_out) e.cuda_version = parse_cuda_version(banner.out);
    if (e.cuda_version.empty()) {
      CommandOutput full = run({"nvidia-smi", "-q"}, "", {}, opt.timeout_s);
      if (full.started && !full.timed_out) e.cuda_version = parse_cuda_version(full.out);
    }
    if (e.cuda_version.empty()) e.nvidia_note = "nvidia-smi did not say which CUDA version the driver supports";
  }

  // Container.
  auto env_of = [&](const char* k) { return getenv(k).value_or(""); };
  for (const char* k : {"SLURM_CONTAINER_IMAGE", "PYXIS_CONTAINER_IMAGE", "ENROOT_CONTAINER_IMAGE"}) {
    if (std::string v = env_of(k); !v.empty()) {
      e.container = std::string(k).rfind("SLURM", 0) == 0 || std::string(k).rfind("PYXIS", 0) == 0 ? "enroot (pyxis)" : "enroot";
      e.container_image = v;
      e.container_evidence = k;
      break;
    }
  }
  if (e.container.empty()) {
    for (const char* k : {"APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"}) {
      if (std::string v = env_of(k); !v.empty()) {
        e.container = "apptainer";
        e.container_image = v;
        e.container_evidence = k;
        break;
      }
    }
  }
  if (e.container.empty() && fs::exists(root / "run/.containerenv")) {
    e.container = "podman";
    e.container_evidence = "/run/.containerenv";
    for (const auto& line : split_lines(read_text(root / "run/.containerenv")))
      if (line.rfind("image=", 0) == 0) {
        std::string v = line.substr(6);
        if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        e.container_image = v;
      }
  }
  if (e.container.empty() && fs::exists(root / ".dockerenv")) {
    e.container = "docker";
    e.container_evidence = "/.dockerenv";
  }
  if (e.container.empty()) {
    if (std::string v = env_of("ENROOT_ROOTFS"); !v.empty()) {
      e.container = "enroot";
      e.container_evidence = "ENROOT_ROOTFS";
    } else if (std::string c = env_of("container"); !c.empty()) {
      e.container = c;
      e.container_evidence = "container=" + c;
    }
  }
  // NVIDIA's NGC framework containers name their release.
  for (auto [var, name] : {std::pair{"NVIDIA_PYTORCH_VERSION", "PyTorch"}, {"NVIDIA_TENSORFLOW_VERSION", "TensorFlow"},
                           {"NVIDIA_MXNET_VERSION", "MXNet"}, {"JAX_VERSION_NGC", "JAX"}})
    if (std::string v = env_of(var); !v.empty() && e.ngc_release.empty())
      e.ngc_release = std::string(name) + " NVIDIA Release " + v;
  if (e.container_image.empty() && !e.container.empty() && e.container_evidence == "/.dockerenv")
    if (std::string v = env_of("CONTAINER_IMAGE"); !v.empty()) e.container_image = v;

  // Python, when the workload is a Python program.
  e.python = python_of_command(opt.command, opt.workdir);
  if (e.python.empty()) {
    e.python_note = opt.command.empty() ? "no workload command: Python not probed"
                                        : "the workload's command is not a Python program: Python not probed";
  } else {
    CommandOutput p = run({e.python, "-c", kPythonProbe}, opt.workdir, opt.env, opt.timeout_s);
    if (!p.started || p.timed_out || p.exit_code != 0) {
      e.python_note = why_failed(e.python, p);
    } else {
      for (const auto& line : split_lines(p.out)) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string k = line.substr(0, eq), v = line.substr(eq + 1);
        if (k == "python_version") e.python_version = v;
        else if (k == "python_executable") e.python_executable = v;
        else if (k == "torch_cuda") e.torch_cuda = v;
        else if (k.rfind("package.", 0) == 0) e.python_packages[k.substr(8)] = v;
      }
      if (e.python_version.empty()) e.python_note = e.python + " printed no version";
    }
  }

  // The workload's git commit.
  std::error_code ec;
  e.git_dir = opt.workdir.empty() ? fs::current_path(ec).string() : opt.workdir;
  CommandOutput g = run({"git", "-C", e.git_dir, "rev-parse", "HEAD"}, "", {}, opt.timeout_s);
  if (!g.started) {
    e.git_note = "git: " + (g.error.empty() ? std::string("not found on PATH") : g.error);
  } else if (g.timed_out || g.exit_code != 0) {
    e.git_note = g.timed_out ? why_failed("git rev-parse HEAD", g) : e.git_dir + " is not in a git work tree (or has no commit)";
  } else {
    e.git_commit = trim(g.out);
    CommandOutput s = run({"git", "-C", e.git_dir, "status", "--porcelain", "--untracked-files=no"}, "", {}, opt.timeout_s);
    if (s.started && !s.timed_out && s.exit_code == 0) e.git_dirty = !trim(s.out).empty();
    else e.git_note = why_failed("git status", s);
  }
  return e;
}

std::map<std::string, std::string> Environment::system_fields(std::vector<std::string>* nested) const {
  std::map<std::string, std::string> f;
  static const std::vector<std::pair<const char*, const char*>> frameworks = {
      {"torch", "PyTorch"}, {"tensorflow", "TensorFlow"}, {"tensorflow-cpu", "TensorFlow"},
      {"jax", "JAX"},       {"mxnet", "MXNet"},           {"paddlepaddle", "PaddlePaddle"}};
  if (!ngc_release.empty()) {
    f["framework"] = ngc_release;
  } else {
    for (const auto& [dist, name] : frameworks)
      if (auto it = python_packages.find(dist); it != python_packages.end()) {
        f["framework"] = std::string(name) + " " + it->second;
        break;
      }
  }
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  if (!cuda_version.empty()) w.key("cuda_version").value(cuda_version);
  if (!driver_version.empty()) w.key("cuda_driver_version").value(driver_version);
  if (!torch_cuda.empty()) w.key("torch_cuda_version").value(torch_cuda);
  if (!python_version.empty()) w.key("python_version").value(python_version);
  for (const auto& [dist, v] : python_packages) {
    std::string k = dist;
    for (auto& ch : k)
      if (ch == '-') ch = '_';
    w.key(k + "_version").value(v);
  }
  if (!kernel.empty()) w.key("kernel_version").value(kernel);
  if (!libc.empty()) w.key("libc_version").value(libc);
  if (!container.empty())
    w.key("container").value(container_image.empty() ? container + " (image not named by the runtime)"
                                                      : container + ": " + container_image);
  w.end_object();
  f["other_software_stack"] = w.str();
  if (nested) nested->push_back("other_software_stack");
  if (!os.empty()) f["operating_system"] = os;
  if (!gpus.empty()) {
    f["accelerators_per_node"] = std::to_string(gpus.size());
    std::set<std::string> names;
    for (const auto& g : gpus) names.insert(g.name);
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : " + ") + n;
    f["accelerator_model_name"] = all;
    if (gpus.front().memory_mib > 0) f["accelerator_memory_capacity"] = gb_of_mib(gpus.front().memory_mib);
  }
  return f;
}

std::string Environment::to_json(int indent) const {
  mllog::JsonWriter w(indent, mllog::JsonText::kUtf8);
  w.begin_object();
  w.key("captured_at").value(captured_at);
  w.key("hostname").value(hostname);
  w.key("host").begin_object();
  w.key("kernel").value(kernel).key("kernel_build").value(kernel_build).key("machine").value(machine);
  w.key("libc").value(libc).key("operating_system").value(os);
  w.key("cpu_model").value(cpu_model).key("cpu_logical").value(cpu_logical).key("cpu_sockets").value(cpu_sockets);
  w.key("cpu_cores_per_socket").value(cpu_cores_per_socket).key("cpu_mhz").value(cpu_mhz);
  w.key("memory_kb").value(memory_kb);
  w.end_object();
  w.key("python").begin_object();
  w.key("interpreter").value(python);
  if (!python_version.empty()) w.key("version").value(python_version).key("executable").value(python_executable);
  w.key("packages").begin_object();
  for (const auto& [k, v] : python_packages) w.key(k).value(v);
  w.end_object();
  if (!torch_cuda.empty()) w.key("torch_cuda").value(torch_cuda);
  if (!python_note.empty()) w.key("note").value(python_note);
  w.end_object();
  w.key("nvidia").begin_object();
  w.key("nvidia_smi").value(nvidia_smi);
  w.key("driver_version").value(driver_version).key("cuda_version").value(cuda_version);
  w.key("gpu_count").value(static_cast<long long>(gpus.size()));
  w.key("gpus").begin_array();
  for (const auto& g : gpus) {
    w.begin_object();
    w.key("index").value(g.index).key("name").value(g.name).key("uuid").value(g.uuid);
    w.key("memory_mib").value(g.memory_mib).key("pci_bus_id").value(g.pci_bus_id).key("compute_cap").value(g.compute_cap);
    w.end_object();
  }
  w.end_array();
  if (!nvidia_note.empty()) w.key("note").value(nvidia_note);
  w.end_object();
  w.key("container").begin_object();
  w.key("runtime").value(container).key("image").value(container_image).key("evidence").value(container_evidence);
  if (!ngc_release.empty()) w.key("ngc_release").value(ngc_release);
  w.end_object();
  w.key("git").begin_object();
  w.key("directory").value(git_dir);
  if (!git_commit.empty()) w.key("commit").value(git_commit).key("dirty").value(git_dirty);
  if (!git_note.empty()) w.key("note").value(git_note);
  w.end_object();
  w.key("submission").begin_object();
  for (const auto& [k, v] : submission) w.key(k).value(v);
  w.end_object();
  w.end_object();
  return w.str() + "\n";
}

std::string Environment::to_text() const {
  std::ostringstream o;
  auto or_none = [](const std::string& s, const std::string& none) { return s.empty() ? none : s; };
  o << "captured         " << captured_at << " on " << hostname << "\n";
  o << "kernel           " << kernel << " (" << machine << ")\n";
  o << "libc             " << libc << "\n";
  o << "operating system " << or_none(os, "unknown") << "\n";
  o << "processors       " << cpu_sockets << " x " << or_none(cpu_model, "unknown") << ", " << cpu_logical << " logical\n";
  if (nvidia_smi) {
    o << "NVIDIA driver    " << driver_version << ", CUDA " << or_none(cuda_version, "unknown") << "\n";
    for (const auto& g : gpus)
      o << "GPU " << g.index << "            " << g.name << ", " << g.memory_mib << " MiB, compute " << g.compute_cap << ", "
        << g.pci_bus_id << "\n";
  }
  if (!nvidia_note.empty()) o << "NVIDIA           " << nvidia_note << "\n";
  if (!python_version.empty()) {
    o << "Python           " << python_version << " (" << python_executable << ")\n";
    for (const auto& [k, v] : python_packages) o << "  " << k << " " << v << "\n";
    if (!torch_cuda.empty()) o << "  torch built with CUDA " << torch_cuda << "\n";
  }
  if (!python_note.empty()) o << "Python           " << python_note << "\n";
  o << "container        "
    << (container.empty() ? std::string("none found")
                          : container + (container_image.empty() ? "" : ": " + container_image) + " (" + container_evidence + ")")
    << "\n";
  if (!ngc_release.empty()) o << "                 " << ngc_release << "\n";
  if (!git_commit.empty())
    o << "git              " << git_commit << (git_dirty ? " (with uncommitted changes)" : "") << " in " << git_dir << "\n";
  if (!git_note.empty()) o << "git              " << git_note << "\n";
  for (const auto& [k, v] : submission) o << k << " = " << v << "\n";
  return o.str();
}

std::vector<std::string> accelerator_devices(const std::string& dev_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  auto numbered = [](const std::string& name, const std::string& prefix) {
    return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
           name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  };
  for (fs::directory_iterator it(dev_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (numbered(name, "nvidia") || name == "kfd") out.push_back(it->path().string());
  }
  ec.clear();
  for (fs::directory_iterator it(fs::path(dev_dir) / "accel", ec), end; !ec && it != end; it.increment(ec))
    if (numbered(it->path().filename().string(), "accel")) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace referee::harness
