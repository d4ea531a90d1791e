#include "harness/environment/system_describe.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "harness/spec_options.h"
#include "mllog/json_writer.h"
#include "rules/facts.h"
#include "rules/interp.h"
#include "rules/package.h"
#include "rules/value.h"

namespace referee::harness {

namespace {

void set(SystemDescription* d, const std::string& k, const std::string& v, const char* origin) {
  d->fields[k] = v;
  d->origin[k] = origin;
}

void detect(SystemDescription* d, const Environment& env) {
  // The processors and memory of the machine the environment was captured on
  // (a compute node when the slurm backend captured it there), else this one's.
  CpuInfo cpu;
  cpu.model = env.cpu_model;
  cpu.logical = env.cpu_logical;
  cpu.sockets = env.cpu_sockets;
  cpu.cores_per_socket = env.cpu_cores_per_socket;
  cpu.mhz = env.cpu_mhz;
  if (cpu.logical == 0 && cpu.model.empty()) {
    std::ifstream cpuf("/proc/cpuinfo");
    cpu = parse_cpuinfo(std::string(std::istreambuf_iterator<char>(cpuf), std::istreambuf_iterator<char>()));
  }
  if (!cpu.model.empty()) set(d, "host_processor_model_name", cpu.model, "detected");
  set(d, "host_processors_per_node", std::to_string(cpu.sockets), "detected");
  if (cpu.cores_per_socket) set(d, "host_processor_core_count", std::to_string(cpu.cores_per_socket), "detected");
  if (cpu.logical) set(d, "host_processor_vcpu_count", std::to_string(cpu.logical), "detected");
  if (cpu.mhz > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f MHz", cpu.mhz);
    set(d, "host_processor_frequency", buf, "detected");
  }
  long long kb = env.memory_kb;
  std::string line;
  if (kb <= 0) {
    std::ifstream mem("/proc/meminfo");
    for (; std::getline(mem, line);)
      if (line.rfind("MemTotal:", 0) == 0) kb = std::atoll(line.substr(9).c_str());
  }
  if (kb > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f GB", static_cast<double>(kb) / (1024.0 * 1024.0));
    set(d, "host_memory_capacity", buf, "detected");
  }
  set(d, "number_of_nodes", "1", "default");
  // The captured environment: operating system, framework, software stack,
  // and the NVIDIA GPUs when nvidia-smi listed them.
  set(d, "accelerators_per_node", "0", "detected");
  set(d, "accelerator_model_name", "N/A", "detected");
  set(d, "accelerator_memory_capacity", "N/A", "detected");
  std::vector<std::string> nested;
  for (const auto& [k, v] : env.system_fields(&nested)) set(d, k, v, "environment");
  for (const auto& k : nested) d->nested[k] = true;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  set(d, "system_name", host, "detected");
}

// A YAML (or JSON) node as JSON text; scalars that look like numbers stay numbers.
std::string yaml_to_json(const YAML::Node& n) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);  // YAML text is UTF-8
  std::function<void(const YAML::Node&)> put = [&](const YAML::Node& x) {
    if (x.IsMap()) {
      w.begin_object();
      for (auto it = x.begin(); it != x.end(); ++it) {
        YAML::Node k = it->first, v = it->second;
        w.key(k.Scalar());
        put(v);
      }
      w.end_object();
    } else if (x.IsSequence()) {
      w.begin_array();
      for (size_t i = 0; i < x.size(); ++i) put(x[i]);
      w.end_array();
    } else if (x.IsNull()) {
      w.null();
    } else {
      w.value(x.Scalar());
    }
  };
  put(n);
  return w.str();
}

// Fields only a workload spec has (harness/spec.h).
bool is_spec_field(const std::string& k) {
  static const std::set<std::string> f = {"benchmark", "ruleset", "runs",     "seeds",    "seed_base",
                                          "command",   "backend", "backend_options", "parallel", "batch_size",
                                          "timeout",   "workdir", "system_description"};
  return f.count(k) > 0;
}

}  // namespace

const std::vector<std::string>& known_system_fields() {
  static const std::vector<std::string> f = [] {
    std::vector<std::string> v = rules::required_system_fields();
    v.push_back("private_id");      // the result summarizer's private ids
    v.push_back("scaling_factor");  // read by the result summarizer and package checker
    return v;
  }();
  return f;
}

std::string nearest_system_field(const std::string& name) { return nearest_name(name, known_system_fields()); }

bool describe_system(const std::string& file, const std::string& name, SystemDescription* out, std::string* error,
                     const Environment* env) {
  *out = SystemDescription{};
  if (env) {
    detect(out, *env);
  } else {
    CaptureOptions opt;
    detect(out, capture_environment(opt));
  }
  if (!file.empty()) {
    YAML::Node n;
    try {
      n = YAML::LoadFile(file);  // JSON is YAML too
    } catch (const YAML::Exception& e) {
      *error = file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
      return false;
    }
    if (!n.IsMap()) {
      *error = file + ": a system description is a mapping of field: value";
      return false;
    }
    std::vector<std::string> spec_fields;
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first;
      if (k.IsScalar() && is_spec_field(k.Scalar())) spec_fields.push_back(k.Scalar() + ":");
    }
    if (!spec_fields.empty()) {
      std::string list;
      for (const auto& f : spec_fields) list += (list.empty() ? "" : ", ") + f;
      *error = file + " is a workload spec (it has " + list + "), not a system description\nfix: pass the spec with "
               "--spec SPEC (its system_description is used), or the system description file itself";
      return false;
    }
    // Checked as a workload spec is: a field given twice (yaml-cpp would keep
    // the last) and a count that is not a whole number are errors, in `run`
    // and in `system describe` alike.
    std::map<std::string, int> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first, v = it->second;
      if (!k.IsScalar()) continue;
      int line = k.Mark().line + 1;
      auto [at, fresh] = seen.emplace(k.Scalar(), line);
      if (!fresh) {
        *error = file + ":" + std::to_string(line) + ": field '" + k.Scalar() + "' given twice (first on line " +
                 std::to_string(at->second) + "): expected each field once";
        return false;
      }
      for (const auto& [field, least] : {std::pair<const char*, long>{"number_of_nodes", 1},
                                         {"host_processors_per_node", 1}, {"accelerators_per_node", 0}}) {
        if (k.Scalar() != field) continue;
        std::string t = v.IsScalar() ? v.Scalar() : "";
        bool whole = !t.empty() && t.size() < 10 &&
                     std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
        if (!whole || std::stol(t) < least) {
          *error = file + ":" + std::to_string(line) + ": '" + field + "': expected a whole number from " +
                   std::to_string(least) + ", found " + (v.IsScalar() ? "'" + t + "'" : std::string("no single value")) +
                   " (the consortium's result summarizer reads it as a count)";
          return false;
        }
      }
    }
    const auto& known = known_system_fields();
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first;
      if (!k.IsScalar() || std::find(known.begin(), known.end(), k.Scalar()) != known.end()) continue;
      std::string near = nearest_system_field(k.Scalar());
      out->warnings.push_back(file + ":" + std::to_string(k.Mark().line + 1) + ": unknown field '" + k.Scalar() + "'" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                              ": no system description field has this name; it is written as it is and the "
                              "consortium's tools ignore it");
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first, v = it->second;
      if (v.IsMap() || v.IsSequence()) {
        set(out, k.Scalar(), yaml_to_json(v), "file");
        out->nested[k.Scalar()] = true;
        continue;
      }
      set(out, k.Scalar(), v.IsNull() ? "" : v.Scalar(), "file");
      out->nested.erase(k.Scalar());
    }
  }
  if (!name.empty()) set(out, "system_name", name, "flag");
  for (const auto& f : rules::required_system_fields())
    if (!out->fields.count(f)) out->missing.push_back(f);
  return true;
}

std::vector<std::string> consortium_read_problems(const std::string& system_json) {
  std::vector<std::string> out;
  bool ok = false;
  std::string err;
  rules::Value v = rules::value_from_json(system_json, &ok, &err);
  if (!ok || v.kind != rules::VKind::Dict) {
    out.push_back("not a JSON object" + (err.empty() ? "" : ": " + err));
    return out;
  }
  for (const auto& f : rules::system_field_type_errors(v))
    out.push_back(f.key + ": " + f.message + "; found " + f.found + "; fix: " + f.hint);
  // Python's int(): an integer, or a string of digits (spaces around allowed).
  auto is_int_text = [](const std::string& s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    if (b == std::string::npos) return false;
    if (s[b] == '+' || s[b] == '-') ++b;
    if (b > e) return false;
    for (size_t i = b; i <= e; ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
  };
  for (const char* field : {"number_of_nodes", "host_processors_per_node", "accelerators_per_node"}) {
    const rules::Value* x = v.d().find_str(field);
    if (!x || (x->kind == rules::VKind::Str && is_int_text(x->s())) || x->kind == rules::VKind::Int) continue;
    out.push_back(std::string(field) + ": the consortium's result summarizer reads it with int(), and " +
                  (x->kind == rules::VKind::Str ? "\"" + x->s() + "\"" : rules::py_str(*x)) +
                  " is not an integer; fix: a count of whole units, e.g. \"1\" (\"0\" for no accelerators)");
  }
  for (const char* field : {"hw_notes", "sw_notes"}) {
    const rules::Value* x = v.d().find_str(field);
    if (!x || x->kind == rules::VKind::Str || x->kind == rules::VKind::None) continue;
    out.push_back(std::string(field) +
                  ": the consortium's result summarizer joins the notes as text and stops on anything else; fix: "
                  "one string (\"\" when there is nothing to say)");
  }
  return out;
}

std::string SystemDescription::to_json() const {
  mllog::JsonWriter w(4, mllog::JsonText::kUtf8);  // the fields are UTF-8 text
  w.begin_object();
  for (const auto& [k, v] : fields) {
    w.key(k);
    if (nested.count(k)) {
      w.raw(v);
      continue;
    }
    // Every published description writes its scalar fields, counts included,
    // as strings; the consortium's package checker stops on a number in
    // accelerators_per_node or host_processor_core_count (it joins them as text).
    w.value(v);
  }
  w.end_object();
  return w.str() + "\n";
}

}  // namespace referee::harness
