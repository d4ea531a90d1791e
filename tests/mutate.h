// Helpers for tests that mutate copies of real result logs: temporary
// folders, line-level edits and mini submission packages copied from the
// reference data. Nothing here writes into the reference data.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/source.h"
#include "tests/reference_data.h"
#include "tests/temp_dir.h"

namespace referee::testing {

namespace fs = std::filesystem;

inline std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_bytes(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  REQUIRE_MESSAGE(out, "cannot write " << p);
}

inline bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// Splits on '\n' only; join_lines(split_lines(t)) == t for every t.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

inline std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

// `"key": "<name>"` as the MLLOG lines of the reference data spell it.
inline std::string key_text(std::string_view name) { return "\"key\": \"" + std::string(name) + "\""; }

// Index (0-based) of the first line at or after `from` that contains `needle`; fails the test when none does.
inline size_t index_of(const std::vector<std::string>& lines, std::string_view needle, size_t from = 0) {
  for (size_t i = from; i < lines.size(); ++i)
    if (contains(lines[i], needle)) return i;
  FAIL("no line contains " << needle);
  return 0;
}

inline size_t count_containing(const std::vector<std::string>& lines, std::string_view needle) {
  size_t n = 0;
  for (const auto& l : lines) n += contains(l, needle) ? 1 : 0;
  return n;
}

// Replaces the first `from` in `s`; fails the test when there is none.
inline std::string replace_once(std::string s, std::string_view from, std::string_view to) {
  size_t p = s.find(from);
  REQUIRE_MESSAGE(p != std::string::npos, "'" << from << "' not in: " << s.substr(0, 200));
  s.replace(p, from.size(), to);
  return s;
}

inline std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t start = 0;
  for (size_t p; (p = s.find(from, start)) != std::string_view::npos; start = p + from.size()) {
    out.append(s.substr(start, p - start));
    out.append(to);
  }
  out.append(s.substr(start));
  return out;
}

// Sets `"time_ms": N` on one MLLOG line.
inline std::string with_time_ms(const std::string& line, long long t) {
  static const std::regex re(R"("time_ms": [0-9.eE+-]+)");
  REQUIRE(std::regex_search(line, re));
  return std::regex_replace(line, re, "\"time_ms\": " + std::to_string(t), std::regex_constants::format_first_only);
}

// Sets `"epoch_num": N` in one MLLOG line's metadata.
inline std::string with_epoch_num(const std::string& line, const std::string& n) {
  static const std::regex re(R"("epoch_num": [0-9.eE+-]+)");
  REQUIRE(std::regex_search(line, re));
  return std::regex_replace(line, re, "\"epoch_num\": " + n);
}

// Rule set training-3.1.0 from the reference rules, loaded once.
inline const rules::RuleSet& rules31() {
  static std::unique_ptr<rules::RuleSet> rs;
  static std::string error;
  if (!rs) {
    rules::RuleSource src;
    rs = rules::resolve_ruleset("training-3.1.0", reference_rules(), &src, &error);
  }
  REQUIRE_MESSAGE(rs, error);
  return *rs;
}

inline const rules::RoundFacts& facts31() {
  static rules::RoundFacts facts;
  static bool loaded = false;
  if (!loaded) {
    std::string error;
    REQUIRE_MESSAGE(rules::facts_for(rules31(), &facts, &error), error);
    loaded = true;
  }
  return facts;
}

// Parses `text` (which must outlive *log) and checks it against training-3.1.0.
inline rules::FileVerdict check_text(const std::string& text, mllog::ParsedLog* log = nullptr) {
  mllog::LogReader reader;
  mllog::ParsedLog local;
  mllog::ParsedLog* out = log ? log : &local;
  reader.parse(text, out);
  return rules::check_log(rules31(), *out);
}

inline std::string results31() { return reference_dir() + "/mlperf/training_results_v3.1"; }

// One benchmark directory of the published round 3.1.
struct Source {
  const char* org;
  const char* system;
  const char* benchmark;
  fs::path dir() const { return fs::path(results31()) / org / "results" / system / benchmark; }
  fs::path file(int n) const { return dir() / ("result_" + std::to_string(n) + ".txt"); }
  fs::path system_json() const { return fs::path(results31()) / org / "systems" / (std::string(system) + ".json"); }
};

inline const Source kGpt3{"Azure+NVIDIA", "ND_H100_v5_n1344_pytorch", "gpt3"};  // 3 files, ~2.6 MB each
inline const Source kBert{"Azure", "ND_H100_v5_pytorch", "bert"};               // 10 small files
inline const Source kSsd{"NVIDIA", "eos_n8_ngc23.09_pytorch", "ssd"};           // 5 files

// A mini package <tmp>/<org>/{systems/<system>.json, results/<system>/<benchmark>/result_N.txt}
// holding copies of one published directory's result files (nothing else).
struct MiniPackage {
  fs::path org;    // the folder check_package takes
  fs::path bench;  // results/<system>/<benchmark>
  fs::path system_dir;
  fs::path file(int n) const { return bench / ("result_" + std::to_string(n) + ".txt"); }
};

inline MiniPackage make_package(const TempDir& tmp, const Source& src) {
  MiniPackage p;
  p.org = tmp.path / src.org;
  p.system_dir = p.org / "results" / src.system;
  p.bench = p.system_dir / src.benchmark;
  fs::create_directories(p.org / "systems");
  fs::create_directories(p.bench);
  fs::copy_file(src.system_json(), p.org / "systems" / (std::string(src.system) + ".json"));
  for (const auto& e : fs::directory_iterator(src.dir())) {
    std::string n = e.path().filename().string();
    if (n.rfind("result_", 0) == 0 && e.path().extension() == ".txt") fs::copy_file(e.path(), p.bench / n);
  }
  return p;
}

// Applies `edit` to the lines of one file in place.
template <class F>
void edit_lines(const fs::path& p, F edit) {
  auto lines = split_lines(read_bytes(p));
  edit(lines);
  write_bytes(p, join_lines(lines));
}

inline rules::PackageReport run_package(const fs::path& org, rules::PackageOptions opt = {}) {
  if (opt.jobs == 1) opt.jobs = 2;
  rules::PackageReport r;
  std::string error;
  REQUIRE_MESSAGE(rules::check_package(rules31(), facts31(), org.string(), opt, &r, &error), error);
  return r;
}

inline const rules::BenchmarkDir& only_dir(const rules::PackageReport& r) {
  REQUIRE(r.benchmarks.size() == 1);
  return r.benchmarks[0];
}

inline const rules::ResultFile& file_named(const rules::BenchmarkDir& d, const std::string& name) {
  for (const auto& f : d.files)
    if (f.name == name) return f;
  FAIL("no file " << name << " in " << d.system << "/" << d.benchmark);
  return d.files.front();
}

// First finding whose rule contains `needle`, or null.
inline const rules::Finding* find_rule(const std::vector<rules::Finding>& v, std::string_view needle) {
  for (const auto& f : v)
    if (contains(f.rule, needle)) return &f;
  return nullptr;
}

inline std::string describe(const std::vector<rules::Finding>& v) {
  std::string out;
  for (const auto& f : v) out += "\n  [" + std::to_string(f.line) + "] " + f.rule + ": " + f.message;
  return out.empty() ? " (none)" : out;
}

}  // namespace referee::testing
