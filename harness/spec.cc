#include "harness/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>

#include "base/text.h"
#include "harness/environment/environment.h"
#include "harness/spec_options.h"

namespace referee::harness {

namespace {

void note(Spec* s, const std::string& k, const std::string& v, const char* origin) { s->effective[k] = {v, origin}; }

// Scalars read as text and converted here: yaml-cpp's as<T>() trips g++ 12's
// -Wdangling-pointer at -O3.
std::string text(const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) throw YAML::Exception(n.Mark(), "'" + field + "' must be a single value");
  return n.Scalar();
}
long long integer(const YAML::Node& n, const std::string& field) {
  std::string t = text(n, field);
  try {
    size_t used = 0;
    long long v = std::stoll(t, &used);
    if (used == t.size()) return v;
  } catch (...) {
  }
  throw YAML::Exception(n.Mark(), "'" + field + "' must be an integer, not '" + t + "'");
}
// An integer in [lo, hi]; out of range is an error naming the field, what is
// expected and what was found (a value silently replaced by a default hides a typo).
long long bounded(const YAML::Node& n, const std::string& field, long long lo, long long hi, const std::string& meaning = "") {
  long long v = integer(n, field);
  if (v < lo || v > hi)
    throw YAML::Exception(n.Mark(), "'" + field + "': expected an integer from " + std::to_string(lo) + " to " +
                                        std::to_string(hi) + (meaning.empty() ? "" : " (" + meaning + ")") +
                                        ", found " + n.Scalar());
  return v;
}
// A mapping's keys, each once: yaml-cpp keeps the last of two equal keys, so a
// duplicate would silently override the first.
void no_duplicate_keys(const YAML::Node& map, const std::string& where) {
  std::map<std::string, int> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    YAML::Node key = it->first;
    if (!key.IsScalar()) continue;
    auto [at, fresh] = seen.emplace(key.Scalar(), key.Mark().line + 1);
    if (!fresh)
      throw YAML::Exception(key.Mark(), (where.empty() ? "field '" : "'" + where + "': key '") + key.Scalar() +
                                            "' given twice (first on line " + std::to_string(at->second) +
                                            "): expected each " + (where.empty() ? "field" : "key") + " once");
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : " ") + x;
  return out;
}

// What the effective-values list prints for a field that is not one scalar.
std::string shown(const Spec* s, const std::string& k, const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  if (k == "command") return join(s->command);
  if (k == "dry_start") return join(s->dry_start);
  if (k == "cache_clear") return join(s->cache_clear);
  std::string out;
  if (k == "seeds")
    for (long long x : s->seeds) out += (out.empty() ? "" : ", ") + std::to_string(x);
  else
    for (const auto& [a, b] : k == "env" ? s->env : s->backend_options) out += (out.empty() ? "" : ", ") + a + "=" + b;
  return "[" + out + "]";
}

}  // namespace

bool load_spec(const std::string& path, Spec* out, std::string* error) {
  YAML::Node n;
  try {
    n = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
    return false;
  }
  if (!n.IsMap()) {
    *error = path + ": a spec is a YAML mapping (benchmark:, ruleset:, ...)";
    return false;
  }
  static const std::set<std::string> known = {"benchmark", "ruleset", "division", "runs", "seeds", "seed_base",
                                              "command", "dry_start", "cache_clear", "env", "workdir", "timeout", "backend", "backend_options",
                                              "parallel", "batch_size", "org", "system", "system_description"};
  try {
    out->path = path;
    no_duplicate_keys(n, "");
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node name = it->first;
      std::string k = text(name, "field name");
      if (!known.count(k)) {
        std::string list;
        for (const auto& x : known) list += (list.empty() ? "" : ", ") + x;
        std::string near = base::nearest_name(k, std::vector<std::string>(known.begin(), known.end()));
        std::string e = path;
        e.append(":").append(std::to_string(it->first.Mark().line + 1)).append(": unknown field '").append(k).append("'");
        if (!near.empty()) e.append(" (did you mean '").append(near).append("'?)");
        e.append(" (fields: ").append(list).append(")");
        *error = e;
        return false;
      }
      YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
      out->lines[k] = name.Mark().line + 1;
      if (k == "benchmark") out->benchmark = text(v, k);
      else if (k == "ruleset") out->ruleset = text(v, k);
      else if (k == "division") out->division = text(v, k);
      else if (k == "runs") out->runs = static_cast<int>(bounded(v, k, 1, kMaxRuns));
      else if (k == "seeds") {
        if (!v.IsSequence() || v.size() == 0)
          throw YAML::Exception(v.Mark(), "'seeds': expected a list of seeds ([11, 12, 13]), found " +
                                              (v.IsScalar() ? "'" + v.Scalar() + "'" : std::string("no list")));
        out->seeds.clear();
        for (size_t i = 0; i < v.size(); ++i) out->seeds.push_back(bounded(v[i], k, 0, kMaxSeed));
      }
      else if (k == "seed_base") {
        out->seed_base = bounded(v, k, 0, kMaxSeed);
        out->has_seed_base = true;
      }
      else if (k == "command") {
        out->command.clear();
        if (v.IsSequence())
          for (size_t i = 0; i < v.size(); ++i) out->command.push_back(text(v[i], k));
        else
          out->command = {"/bin/sh", "-c", text(v, k)};
      } else if (k == "dry_start" || k == "cache_clear") {
        std::vector<std::string>& argv = k == "dry_start" ? out->dry_start : out->cache_clear;
        argv.clear();
        if ((v.IsSequence() && v.size() == 0) || (v.IsScalar() && v.Scalar().empty()))
          throw YAML::Exception(v.Mark(), "'" + k + "': expected a command (a list of words, or one shell line), found an empty one");
        if (v.IsSequence())
          for (size_t i = 0; i < v.size(); ++i) argv.push_back(text(v[i], k));
        else
          argv = {"/bin/sh", "-c", text(v, k)};
      } else if (k == "env") {
        if (!v.IsMap()) throw YAML::Exception(v.Mark(), "'env': expected a mapping ({NAME: value})");
        no_duplicate_keys(v, k);
        for (auto e = v.begin(); e != v.end(); ++e) {
          YAML::Node key = e->first, val = e->second;
          out->env[text(key, k)] = text(val, k);
        }
      }
      else if (k == "workdir") out->workdir = text(v, k);  // checked by finalize_spec, once the backend is known
      else if (k == "timeout") out->timeout_s = static_cast<int>(bounded(v, k, 1, kMaxTimeout, "seconds per run; leave it out for none"));
      else if (k == "backend") out->backend = text(v, k);
      else if (k == "backend_options") {
        if (!v.IsMap()) throw YAML::Exception(v.Mark(), "'backend_options': expected a mapping ({partition: debug})");
        no_duplicate_keys(v, k);
        for (auto e = v.begin(); e != v.end(); ++e) {
          YAML::Node key = e->first, val = e->second;
          out->backend_options[text(key, k)] = text(val, k);
          out->lines["backend_options." + key.Scalar()] = key.Mark().line + 1;
        }
      }
      else if (k == "parallel") out->parallel = static_cast<int>(bounded(v, k, 1, kMaxParallel, "runs at once"));
      else if (k == "batch_size") out->batch_size = static_cast<int>(bounded(v, k, 1, kMaxBatch, "global batch size"));
      else if (k == "org") {
        out->org = text(v, k);
        if (out->org.empty() || out->org.find('/') != std::string::npos || out->org == "." || out->org == "..")
          throw YAML::Exception(v.Mark(), "'org': expected the submitter's name (the package's folder), found '" + out->org + "'");
      }
      else if (k == "system") out->system = text(v, k);
      else if (k == "system_description") out->system_description = text(v, k);
      note(out, k, shown(out, k, v), "spec");
    }
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
    return false;
  }
  // A file the spec names is found beside the spec, wherever referee runs from.
  if (!out->system_description.empty() && std::filesystem::path(out->system_description).is_relative())
    out->system_description =
        (std::filesystem::absolute(path).parent_path() / out->system_description).lexically_normal().string();
  if (!out->system_description.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(out->system_description, ec)) {
      *error = path + ":" + std::to_string(out->lines["system_description"]) +
               ": 'system_description': expected a file with the system fields, found '" + out->system_description +
               "' (" + (std::filesystem::exists(out->system_description, ec) ? "not a file" : "no such file") + ")";
      return false;
    }
  }
  return check_backend_options(*out, error);
}

void set_from_flag(Spec* s, const std::string& name, const std::string& value) {
  if (name == "backend") s->backend = value;
  else if (name == "runs") s->runs = std::stoi(value);
  else if (name == "parallel") s->parallel = std::stoi(value);
  else if (name == "org") s->org = value;
  else if (name == "system") s->system = value;
  else if (name == "ruleset") s->ruleset = value;
  note(s, name, value, "flag");
}

// "FILE:LINE: " for a field of the spec, "FILE: " when the file does not give it, "" for a spec made in code.
static std::string at(const Spec* s, const std::string& field) {
  std::string out;
  if (s->path.empty()) return out;
  out = s->path;
  if (auto it = s->lines.find(field); it != s->lines.end()) out.append(":").append(std::to_string(it->second));
  out.append(": ");
  return out;
}

bool finalize_spec(Spec* s, int required_runs, std::string* error, const std::string& dev_dir) {
  if (s->benchmark.empty()) {
    *error = at(s, "benchmark") + "the spec names no benchmark (benchmark: minilm)";
    return false;
  }
  // A local run's workdir must exist here; a Slurm job's may exist only on the compute nodes.
  if (!s->workdir.empty() && s->backend != "slurm") {
    std::error_code ec;
    if (!std::filesystem::is_directory(s->workdir, ec)) {
      *error = at(s, "workdir") + "'workdir': expected a directory that exists, found '" + s->workdir + "' (" +
               (std::filesystem::exists(s->workdir, ec) ? "not a directory" : "no such directory") + ")";
      return false;
    }
  }
  if (s->ruleset.empty()) {
    *error = at(s, "ruleset") + "the spec names no rule set (ruleset: mini-1.0.0)";
    return false;
  }
  if (s->division != "closed" && s->division != "open") {
    *error = at(s, "division") + "'division': expected closed or open, found '" + s->division + "'";
    return false;
  }
  if (s->backend != "builtin" && s->backend != "exec" && s->backend != "slurm") {
    std::string near = nearest_name(s->backend, {"builtin", "exec", "slurm"});
    bool flag = s->effective.count("backend") && s->effective["backend"].second == "flag";
    *error = (flag ? std::string("--backend") : at(s, "backend") + "'backend'") +
             ": expected builtin, exec or slurm, found '" + s->backend + "'" +
             (near.empty() ? "" : " (did you mean '" + near + "'?)");
    return false;
  }
  if (!check_backend_options(*s, error)) return false;
  if (s->backend != "builtin" && s->command.empty()) {
    *error = at(s, "backend") + "the " + s->backend + " backend needs a command (command: [\"./train.sh\", \"--seed\", \"{seed}\"])";
    return false;
  }
  // A placeholder misspelt ({sed}) would reach every run as it is: said before any run.
  if (!s->cache_clear.empty() && s->backend == "builtin") {
    *error = at(s, "cache_clear") + "'cache_clear': the builtin workloads log cache_clear themselves and clear no "
             "cache; the hook runs before the command of an exec or slurm run";
    return false;
  }
  for (const auto* cmd : {&s->command, &s->dry_start, &s->cache_clear})
    for (const auto& arg : *cmd)
      for (size_t open = arg.find('{'); open != std::string::npos; open = arg.find('{', open + 1)) {
        size_t close = arg.find('}', open);
        if (close == std::string::npos) break;
        std::string name = arg.substr(open + 1, close - open - 1);
        if (name.empty() || name == "seed" || name == "run" || name == "log" ||
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
          continue;
        std::string near = base::nearest_name(name, {"seed", "run", "log"});
        if (near.empty()) continue;  // shell or awk braces ({print}), not a placeholder
        const char* field = cmd == &s->command ? "command" : cmd == &s->dry_start ? "dry_start" : "cache_clear";
        *error = at(s, field) + "'" + field + "': unknown placeholder {" + name + "} in '" + arg + "' (did you mean {" +
                 near + "}?); the placeholders are {seed}, {run} and {log}";
        return false;
      }
  if (s->parallel <= 0 && s->backend == "slurm") {
    // The cluster decides where jobs go; a submitter asks for more at once.
    s->parallel = 1;
    note(s, "parallel", "1", "default");
  } else if (s->parallel <= 0 && s->backend == "exec") {
    // Runs at once on one node share its accelerators: one at a time where it has any.
    auto devices = accelerator_devices(dev_dir);
    if (!devices.empty()) {
      std::string list;
      for (size_t i = 0; i < devices.size() && i < 4; ++i) list += (i ? ", " : "") + devices[i];
      if (devices.size() > 4) list += ", ...";
      s->parallel = 1;
      s->effective["parallel"] = {"1", "default: this node has accelerators (" + list +
                                           "), which runs at once would share; set parallel: N (or --parallel N) "
                                           "for runs that each use part of them"};
    } else {
      s->parallel = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      s->effective["parallel"] = {std::to_string(s->parallel), "default: one run per core, this node has no accelerators"};
    }
  }
  if (s->runs <= 0) {
    s->runs = required_runs;
    note(s, "runs", std::to_string(s->runs), "rules");
  }
  if (s->seeds.empty()) {
    if (!s->has_seed_base) {
      s->seed_base = static_cast<long long>(std::hash<std::string>{}(s->benchmark) % 1000000) * 1000 + 1;
      note(s, "seed_base", std::to_string(s->seed_base), "default");
    }
    for (int i = 0; i < s->runs; ++i) s->seeds.push_back(s->seed_base + i);
  }
  if (static_cast<int>(s->seeds.size()) < s->runs) {
    *error = at(s, "seeds") + "the spec lists " + std::to_string(s->seeds.size()) + " seeds for " + std::to_string(s->runs) + " runs";
    return false;
  }
  std::vector<long long> sorted(s->seeds.begin(), s->seeds.begin() + s->runs);
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    *error = at(s, "seeds") + "seeds must be distinct per run (the closed division's seed check would fail)";
    return false;
  }
  for (const char* k : {"benchmark", "ruleset", "division", "backend"})
    if (!s->effective.count(k)) note(s, k, k == std::string("benchmark") ? s->benchmark : k == std::string("ruleset") ? s->ruleset : k == std::string("division") ? s->division : s->backend, "default");
  return true;
}

std::vector<std::string> expand_command(const std::vector<std::string>& cmd, long long seed, int run, const std::string& log) {
  std::vector<std::string> out;
  for (std::string a : cmd) {
    for (const auto& [ph, val] : {std::pair<std::string, std::string>{"{seed}", std::to_string(seed)},
                                  {"{run}", std::to_string(run)}, {"{log}", log}}) {
      size_t p = 0;
      while ((p = a.find(ph, p)) != std::string::npos) {
        a.replace(p, ph.size(), val);
        p += val.size();
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace referee::harness
