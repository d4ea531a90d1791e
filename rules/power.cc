#include "rules/power.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "mllog/reader.h"
#include "rules/interp.h"

namespace fs = std::filesystem;

namespace referee::rules {

namespace {

// Python's int(str) for the ASCII forms a file name can hold: surrounding
// white space, an optional sign, decimal digits.
bool py_int(const std::string& s, long long* out) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  bool neg = false;
  if (b < e && (s[b] == '+' || s[b] == '-')) neg = s[b++] == '-';
  if (b == e) return false;
  long long v = 0;
  for (size_t i = b; i < e; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    if (v > 100000000000000000LL) v = 100000000000000000LL;  // large enough to be out of range
    else v = v * 10 + (s[i] - '0');
  }
  *out = neg ? -v : v;
  return true;
}

// os.path.splitext(name)[0]: the last dot, ignoring leading dots.
std::string splitext_stem(const std::string& name) {
  size_t first = name.find_first_not_of('.');
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || first == std::string::npos || dot <= first) return name;
  return name.substr(0, dot);
}

// The consortium's check_range: every index in [0, n-1]. Its `seen` set is
// never filled, so a repeated index passes.
bool check_range(const std::vector<long long>& idx, size_t n) {
  for (long long e : idx)
    if (e < 0 || e > static_cast<long long>(n) - 1) return false;
  return true;
}

// The consortium's check_equals: positions whose value differs from the most
// frequent one (the first to reach the highest count, in order of appearance).
std::vector<size_t> check_equals(const std::vector<size_t>& l) {
  std::vector<std::pair<size_t, int>> counter;  // insertion order, as a Python dict
  for (size_t e : l) {
    auto it = std::find_if(counter.begin(), counter.end(), [&](const auto& p) { return p.first == e; });
    if (it == counter.end()) counter.push_back({e, 1});
    else ++it->second;
  }
  size_t best = counter.front().first;
  int best_n = counter.front().second;
  for (const auto& [v, n] : counter)
    if (n > best_n) best = v, best_n = n;
  std::vector<size_t> errors;
  for (size_t i = 0; i < l.size(); ++i)
    if (l[i] != best) errors.push_back(i);
  return errors;
}

std::string join_counts(const std::vector<size_t>& l, const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < l.size() && i < names.size(); ++i)
    out += (out.empty() ? "" : ", ") + names[i] + ": " + std::to_string(l[i]);
  return out;
}

}  // namespace

bool has_power_folder(const std::string& bench_dir) {
  std::error_code ec;
  return fs::is_directory(fs::path(bench_dir) / "power", ec);
}

PowerCheck check_power(const std::string& bench_dir, const std::vector<std::string>& result_files) {
  PowerCheck out;
  fs::path power = fs::path(bench_dir) / "power";
  std::error_code ec;
  if (!fs::exists(power, ec)) return out;
  out.present = true;
  std::vector<size_t> node_lens, sw_lens;
  std::vector<std::string> with_power;  // result names that have a power folder, in order
  std::vector<std::string> names;
  for (const auto& rf : result_files) names.push_back(splitext_stem(rf));
  for (const auto& name : names) {
    fs::path dir = power / name;
    std::string rel = "power/" + name;
    if (!fs::exists(dir, ec)) {
      Finding f;
      f.rule = "power";
      f.message = "Package does not contain power result for " + name + ": no " + rel + "/ folder";
      f.expected = rel + "/ with node_<k>.txt files (and sw_<k>.txt for switches)";
      f.found = "none";
      f.hint = "every result file of a benchmark with a power/ folder needs its own power/result_<n>/ folder";
      out.errors.push_back(f);
      out.failing.insert(name);
      continue;
    }
    if (!fs::is_directory(dir, ec)) {
      Finding f;
      f.rule = "power";
      f.message = rel + " is not a folder";
      f.expected = rel + "/ holding node_<k>.txt files";
      f.found = "a file";
      f.hint = "the consortium's package checker stops here (NotADirectoryError); make it a folder of node and switch logs";
      out.errors.push_back(f);
      out.failing.insert(name);
      if (out.consortium_stops.empty()) out.consortium_stops = rel + " is a file (NotADirectoryError)";
      continue;
    }
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path().filename().string());
    std::sort(entries.begin(), entries.end());
    std::vector<long long> node_idx, sw_idx;
    size_t nodes = 0, sws = 0;
    bool unreadable = false;
    for (const auto& e : entries) {
      bool node = e.rfind("node", 0) == 0, sw = e.rfind("sw", 0) == 0;
      if (!node && !sw) continue;
      (node ? nodes : sws) += 1;
      std::string stem = splitext_stem(e);
      std::string last = stem.substr(stem.rfind('_') == std::string::npos ? 0 : stem.rfind('_') + 1);
      long long idx = 0;
      if (!py_int(last, &idx)) {
        Finding f;
        f.rule = "power: file names";
        f.message = rel + "/" + e + " has no number after its last '_'";
        f.expected = std::string(node ? "node" : "sw") + "_<k>.txt with k a number";
        f.found = "'" + last + "'";
        f.hint = "the consortium's package checker stops on this name (ValueError from int()); rename or remove the file";
        out.errors.push_back(f);
        if (out.consortium_stops.empty()) out.consortium_stops = rel + "/" + e + ": ValueError, invalid literal for int() '" + last + "'";
        unreadable = true;
        continue;
      }
      (node ? node_idx : sw_idx).push_back(idx);
    }
    if (unreadable) {
      out.failing.insert(name);
      node_lens.push_back(nodes);
      sw_lens.push_back(sws);
      with_power.push_back(name);
      continue;
    }
    if (entries.size() > nodes + sws) {
      Finding f;
      f.rule = "power: file names";
      f.message = "Detected " + std::to_string(entries.size()) + " total files in directory " + rel +
                  ", but some do not conform";
      f.hint = "only node_<k> and sw_<k> files are read";
      out.warnings.push_back(f);
    }
    for (int pass = 0; pass < 2; ++pass) {
      const auto& idx = pass == 0 ? node_idx : sw_idx;
      size_t n = pass == 0 ? nodes : sws;
      const char* what = pass == 0 ? "node" : "sw";
      if (check_range(idx, n)) continue;
      Finding f;
      f.rule = "power: file names";
      f.message = std::string("Bad naming of ") + what + " power files in directory " + rel + ", expected to be " + what +
                  "_x with x in range [0, " + std::to_string(static_cast<long long>(n) - 1) + "]";
      std::string found;
      for (long long i : idx) found += (found.empty() ? "" : ", ") + std::to_string(i);
      f.expected = std::string(what) + "_0 ... " + what + "_" + std::to_string(static_cast<long long>(n) - 1);
      f.found = "numbers " + found;
      f.hint = "number the files of a run from 0 without gaps";
      out.errors.push_back(f);
      out.failing.insert(name);
    }
    node_lens.push_back(nodes);
    sw_lens.push_back(sws);
    with_power.push_back(name);
  }
  if (node_lens.empty()) {
    // max() of an empty sequence: the consortium's checker raises ValueError.
    if (out.consortium_stops.empty())
      out.consortium_stops = "no result has a power folder (ValueError: max() arg is an empty sequence)";
    return out;
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto& lens = pass == 0 ? node_lens : sw_lens;
    const char* what = pass == 0 ? "nodes" : "sw";
    for (size_t i : check_equals(lens)) {
      // The consortium names result_names[i]: position i among the runs that
      // have a power folder, looked up among all result files.
      const std::string& blamed = names[i];
      Finding f;
      f.rule = "power: node count";
      f.message = std::string("Inconsistent number of ") + what + " in directory power/" + blamed;
      f.expected = "the same number of " + std::string(pass == 0 ? "node" : "sw") + " files in every run";
      f.found = join_counts(lens, with_power);
      if (blamed != with_power[i])
        f.hint = "the file counted is power/" + with_power[i] + "; the consortium's checker names " + blamed +
                 " because it counts position among runs with a power folder";
      out.errors.push_back(f);
      out.failing.insert(blamed);
    }
  }
  return out;
}

namespace {

struct PowerLine {
  double ts = 0;
  std::string key;
  Value value;
};

// Reads a power log as the consortium's parse_file does: lines that do not
// parse are skipped, except those lacking a field, on which it raises.
bool read_power_log(const fs::path& p, std::vector<PowerLine>* out, std::string* error) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    *error = p.filename().string() + " is a folder (IsADirectoryError)";
    return false;
  }
  mllog::FileBuffer buf;
  if (!buf.open(p.string(), error)) return false;
  mllog::LogReader reader;
  mllog::ParsedLog log;
  reader.parse(buf.view(), &log);
  for (const auto& e : log.errors) {
    if (e.message.rfind("missing", 0) == 0) {
      *error = p.filename().string() + ":" + std::to_string(e.file_line) + ": " + e.message + " (KeyError)";
      return false;
    }
  }
  for (const auto& ev : log.events) {
    PowerLine l;
    l.ts = ev.time_ms;
    l.key = log.keys[ev.key_id];
    if (l.key == "power_reading" || l.key == "conversion_eff" || l.key == "interconnect_power_est") {
      Value lv = line_value_from_json(ev.json);
      if (Value* v = lv.kind == VKind::Dict ? lv.d().find_str("value") : nullptr) l.value = *v;
    }
    out->push_back(std::move(l));
  }
  return true;
}

std::string not_a_number(const fs::path& p, const PowerLine& l) {
  return p.filename().string() + ": " + l.key + " value " + py_repr(l.value) + " is not a number (TypeError)";
}

// read_power_log for run_energy: a failure is the run's error, under `rel`.
bool read_power_log(const fs::path& p, const std::string& rel, std::vector<PowerLine>* lines, RunEnergy* out) {
  std::string err;
  if (read_power_log(p, lines, &err)) return true;
  out->error = rel + err;
  return false;
}

}  // namespace

RunEnergy run_energy(const std::string& bench_dir, const std::string& result_file, double ttt) {
  RunEnergy out;
  std::string name = result_file.substr(0, result_file.find('.'));
  fs::path dir = fs::path(bench_dir) / "power" / name;
  std::vector<fs::path> node_files, sw_files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.size() < 4 || n.compare(n.size() - 4, 4, ".txt") != 0) continue;
    if (n.rfind("node_", 0) == 0) node_files.push_back(e.path());
    else if (n.rfind("sw_", 0) == 0) sw_files.push_back(e.path());
  }
  std::sort(node_files.begin(), node_files.end());
  std::sort(sw_files.begin(), sw_files.end());
  out.nodes = static_cast<int>(node_files.size());
  out.switches = static_cast<int>(sw_files.size());
  std::string rel = "power/" + name + "/";
  if (node_files.empty()) {
    out.error = "no " + rel + "node_*.txt log for " + result_file + " (AssertionError)";
    return out;
  }
  double total = 0;
  for (const auto& p : node_files) {
    std::vector<PowerLine> lines;
    if (!read_power_log(p, rel, &lines, &out)) return out;
    std::stable_sort(lines.begin(), lines.end(), [](const PowerLine& a, const PowerLine& b) { return a.ts < b.ts; });
    double prev = 0, last = 0, start = 0, stop = 0, agg = 0;
    Value eff = Value::number(1.0);
    const PowerLine* eff_line = nullptr;
    bool started = false, stopped = false;
    for (const auto& l : lines) {
      if (l.key == "power_measurement_start") {
        start = prev = l.ts;
        started = true;
      }
      if (l.key == "power_reading" && !stopped && started) {
        if (!l.value.is_num()) {
          out.error = rel + not_a_number(p, l);
          return out;
        }
        agg += l.value.as_double() * (l.ts - prev);
        prev = l.ts;
        last = std::max(last, l.ts);
      }
      if (l.key == "power_measurement_stop") {
        stop = l.ts;
        stopped = true;
      }
      if (l.key == "conversion_eff") {
        eff = l.value;
        eff_line = &l;
      }
    }
    if (!started) {
      out.error = rel + p.filename().string() + " has no power_measurement_start (ValueError: Power start timestamp not found)";
      return out;
    }
    if (!stopped) {
      stop = last;
      out.warnings.push_back(rel + p.filename().string() +
                             " has no power_measurement_stop: the last reading ends the measured window");
    }
    if (!eff.is_num()) {
      out.error = rel + not_a_number(p, *eff_line);
      return out;
    }
    if (stop - start == 0) {
      out.error = rel + p.filename().string() + ": the measured window (power_measurement_start to stop) is 0 ms (ZeroDivisionError)";
      return out;
    }
    total += eff.as_double() * agg * ttt / (stop - start) / 1000;
  }
  for (const auto& p : sw_files) {
    std::vector<PowerLine> lines;
    if (!read_power_log(p, rel, &lines, &out)) return out;
    Value eff = Value::number(1.0);
    Value est = Value::integer(0);
    const PowerLine* eff_line = nullptr;
    const PowerLine* est_line = nullptr;
    for (const auto& l : lines) {
      if (l.key == "conversion_eff") {
        eff = l.value;
        eff_line = &l;
      }
      if (l.key == "interconnect_power_est") {
        est = l.value;
        est_line = &l;
        break;
      }
    }
    if (!eff.is_num()) {
      out.error = rel + not_a_number(p, *eff_line);
      return out;
    }
    if (!est.is_num()) {
      out.error = rel + not_a_number(p, *est_line);
      return out;
    }
    total += eff.as_double() * est.as_double() * ttt / 1000;
  }
  out.joules = total;
  out.ok = true;
  return out;
}

}  // namespace referee::rules
