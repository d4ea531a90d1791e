#include "rules/ruleset.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/digest.h"
#include "base/text.h"

namespace fs = std::filesystem;

namespace referee::rules {

int RuleFile::find(const std::string& name) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i].name == name) return static_cast<int>(i);
  return -1;
}

// Small matchers for the names of rule sets and REQ values. Written out
// rather than as std::regex: compiling a std::regex costs more at start-up
// than the whole check of a small log.
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// Length of the run of digits at the start of `s`.
size_t digits_at(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  return n;
}

// Length of the version (\d+\.\d+\.\d+) at the start of `s`, 0 when there is none.
size_t version_at(std::string_view s) {
  size_t at = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (at >= s.size() || s[at] != '.') return 0;
      ++at;
    }
    size_t n = digits_at(s.substr(at));
    if (n == 0) return 0;
    at += n;
  }
  return at;
}

// Length of the word ([A-Za-z][A-Za-z0-9]*) at the start of `s`, 0 when there is none.
size_t word_at(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) return 0;
  size_t n = 1;
  while (n < s.size() && (is_alpha(s[n]) || is_digit(s[n]))) ++n;
  return n;
}

// EXACTLY_ONE, AT_LEAST_ONE, OPTIONAL, AT_LEAST(n) or AT_LEAST_ONE_OR(...).
bool known_req(std::string_view r) {
  if (r == "EXACTLY_ONE" || r == "AT_LEAST_ONE" || r == "OPTIONAL") return true;
  auto inside = [&](std::string_view head, std::string_view* body) {
    if (r.size() < head.size() + 1 || r.substr(0, head.size()) != head || r.back() != ')') return false;
    *body = r.substr(head.size(), r.size() - head.size() - 1);
    return true;
  };
  std::string_view body;
  if (inside("AT_LEAST(", &body)) return !body.empty() && digits_at(body) == body.size();
  if (inside("AT_LEAST_ONE_OR(", &body)) return body.find(')') == std::string_view::npos;
  return false;
}

// A rule folder's name and its slash ("training_3.1.0/", "hpc_3.0.0_warn/"):
// the name, or "" when `word` is not one.
std::string folder_name(std::string_view word) {
  if (word.empty() || word.back() != '/') return "";
  std::string_view name = word.substr(0, word.size() - 1);
  size_t at = word_at(name);
  if (at == 0 || at >= name.size() || name[at] != '_') return "";
  size_t v = version_at(name.substr(at + 1));
  if (v == 0) return "";
  at += 1 + v;
  if (at < name.size()) {
    if (name[at] != '_') return "";
    size_t w = at + 1;
    while (w < name.size() && (is_alpha(name[w]) || is_digit(name[w]))) ++w;
    if (w == at + 1 || w != name.size()) return "";
  }
  return std::string(name);
}

}  // namespace

bool RulesetId::parse(const std::string& text, RulesetId* out) {
  std::string_view t = text;
  std::string_view usage;
  auto whole_version = [](std::string_view v) { return !v.empty() && version_at(v) == v.size(); };
  if (!whole_version(t)) {
    size_t w = word_at(t);
    if (w == 0 || w >= t.size() || (t[w] != '-' && t[w] != '_')) return false;
    usage = t.substr(0, w);
    t.remove_prefix(w + 1);
    if (!whole_version(t)) return false;
  }
  // "HPC-3.0.0" is hpc-3.0.0: the rule folders are named in lower case.
  out->usage = usage.empty() ? "training" : base::lower(std::string(usage));
  out->version = std::string(t);
  return true;
}

namespace {

bool compile(const std::string& src, bool expr, Code* out, const std::string& where, std::string* error) {
  CompileError ce;
  bool ok = expr ? out->compile_expression(base::trim(src), &ce) : out->compile_statements(base::trim(src), &ce);
  if (!ok) {
    *error = where + ": " + ce.message + " (line " + std::to_string(ce.line) + ", column " +
             std::to_string(ce.column) + " of: " + base::trim(src).substr(0, 200) + ")";
  }
  return ok;
}

std::string scalar(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string(); }

// The regular files of a folder with this extension, in name order (none
// when the folder cannot be read).
std::vector<fs::path> sorted_files(const fs::path& dir, const char* extension) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == extension) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An optional code field of `body`: when present, *present = true and the
// code compiled into *out.
bool compile_optional(const YAML::Node& body, const char* field, bool expr, bool* present, Code* out,
                      const std::string& where, std::string* error) {
  if (!body[field]) return true;
  *present = true;
  return compile(scalar(body[field]), expr, out, where, error);
}

// A CHECK field: one expression, or a list of them; each compiles on its own.
// An absent field adds nothing.
bool compile_checks(const YAML::Node& field, const std::string& where, std::vector<Code>* out, std::string* error) {
  if (!field) return true;
  std::vector<std::string> srcs;
  if (field.IsSequence())
    for (const auto& c : field) srcs.push_back(scalar(c));
  else
    srcs.push_back(scalar(field));
  for (const auto& s : srcs) {
    Code c;
    if (!compile(s, true, &c, where, error)) return false;
    out->push_back(std::move(c));
  }
  return true;
}

}  // namespace

bool load_rule_file(const std::string& path, const std::string& rel, RuleFile* out, std::string* error) {
  out->rel = rel;
  out->path = path;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ": YAML error: " + e.msg;
    return false;
  }
  if (root.IsNull()) return true;  // an empty file checks nothing
  if (!root.IsSequence()) {
    *error = path + ": expected a list of BEGIN/KEY/END records";
    return false;
  }
  int index = 0;
  for (const auto& rec : root) {
    ++index;
    std::string where = path + ": record " + std::to_string(index);
    if (!rec.IsMap() || rec.size() < 1) {
      *error = where + ": expected a BEGIN, KEY or END record";
      return false;
    }
    // The consortium takes the record's first key.
    std::string kind = rec.begin()->first.as<std::string>();
    YAML::Node body = rec.begin()->second;
    if (kind == "BEGIN") {
      if (out->has_begin) {
        *error = where + ": more than one BEGIN record";
        return false;
      }
      out->has_begin = true;
      if (!compile(scalar(body["CODE"]), false, &out->begin, where + " (BEGIN CODE)", error)) return false;
    } else if (kind == "END") {
      if (out->has_end) {
        *error = where + ": more than one END record";
        return false;
      }
      out->has_end = true;
      if (!compile_optional(body, "PRE", false, &out->has_end_pre, &out->end_pre, where + " (END PRE)", error))
        return false;
      if (!compile_checks(body["CHECK"], where + " (END CHECK)", &out->end_checks, error)) return false;
    } else if (kind == "KEY") {
      KeyRecord k;
      if (!body.IsMap() || !body["NAME"]) {
        *error = where + ": KEY record without NAME";
        return false;
      }
      k.name = scalar(body["NAME"]);
      std::string w = path + ": KEY " + k.name;
      if (body["REQ"]) {
        k.req = scalar(body["REQ"]);
        if (!known_req(k.req)) {
          *error = w + ": unknown REQ '" + k.req + "' (expected EXACTLY_ONE, AT_LEAST_ONE, AT_LEAST(n), AT_LEAST_ONE_OR(a, b) or OPTIONAL)";
          return false;
        }
      }
      for (auto it = body.begin(); it != body.end(); ++it) {
        std::string f = it->first.as<std::string>();
        static const char* const known[] = {"NAME", "REQ", "PRE", "CHECK", "POST", "FIRST_CHECK", "ATLEAST_ONE_CHECK"};
        if (std::none_of(std::begin(known), std::end(known), [&](const char* x) { return f == x; })) {
          *error = w + ": unknown field '" + f + "'";
          return false;
        }
      }
      if (!compile_optional(body, "PRE", false, &k.has_pre, &k.pre, w + " (PRE)", error) ||
          !compile_optional(body, "POST", false, &k.has_post, &k.post, w + " (POST)", error) ||
          !compile_optional(body, "FIRST_CHECK", true, &k.has_first_check, &k.first_check, w + " (FIRST_CHECK)", error) ||
          !compile_optional(body, "ATLEAST_ONE_CHECK", true, &k.has_atleast_one, &k.atleast_one_check,
                            w + " (ATLEAST_ONE_CHECK)", error))
        return false;
      if (!compile_checks(body["CHECK"], w + " (CHECK)", &k.checks, error)) return false;
      int existing = out->find(k.name);
      if (existing >= 0) out->keys[static_cast<size_t>(existing)] = std::move(k);
      else out->keys.push_back(std::move(k));
    } else {
      *error = where + ": unknown record type '" + kind + "' (expected BEGIN, KEY or END)";
      return false;
    }
  }
  return true;
}

std::string ruleset_folder(const std::string& root, const RulesetId& id) {
  std::error_code ec;
  const fs::path checker = fs::path(root) / "compliance_checker";
  if (fs::is_directory(checker / id.dir(), ec)) return id.dir();
  if (id.usage == "training" && fs::is_directory(checker / id.version, ec)) return id.version;
  return "";
}

std::unique_ptr<RuleSet> RuleSet::load(const std::string& root, const RulesetId& id, std::string* error,
                                       LoadMode mode) {
  auto rs = std::make_unique<RuleSet>();
  rs->id_ = id;
  rs->root_ = root;
  rs->folder_ = ruleset_folder(root, id);
  if (rs->folder_.empty()) {
    *error = "rule set " + id.id() + " not found: no directory " +
             (fs::path(root) / "compliance_checker" / id.dir()).string();
    return nullptr;
  }
  fs::path dir = fs::path(root) / "compliance_checker" / rs->folder_;
  for (const auto& p : sorted_files(dir, ".yaml")) {
    auto slot = std::make_unique<Slot>();
    slot->path = p.string();
    rs->slots_.emplace(rs->folder_ + "/" + p.filename().string(), std::move(slot));
  }
  if (mode == LoadMode::Eager && !rs->compile_all(error)) return nullptr;
  return rs;
}

const std::string& RuleSet::sha256() const {
  // Computed when first asked for: reading every rule file and RCP table of
  // the round costs a check that never reports the hash (check-package's
  // text) a millisecond of its start.
  std::call_once(sha256_once_, [&] {
    fs::path dir = fs::path(root_) / "compliance_checker" / folder_;
    std::string hash_input;
    for (const auto& p : sorted_files(dir, ".yaml"))
      hash_input += folder_ + "/" + p.filename().string() + '\0' + file_bytes(p) + '\0';
    // Other rounds' folders that the rule files name (enqueue_config paths
    // such as 'training_3.1.0/closed_resnet_{}.yaml') count towards the hash
    // too: their files decide verdicts of this rule set.
    std::error_code ec;
    std::vector<std::string> folders{folder_}, pending{hash_input};
    while (!pending.empty()) {
      std::string text = std::move(pending.back());
      pending.pop_back();
      // Cheap scan: each '/' and the folder-like word before it.
      for (size_t slash = text.find('/'); slash != std::string::npos; slash = text.find('/', slash + 1)) {
        size_t b = slash;
        while (b > 0 && (std::isalnum(static_cast<unsigned char>(text[b - 1])) || text[b - 1] == '_' || text[b - 1] == '.')) --b;
        std::string word = text.substr(b, slash + 1 - b);
        std::string name = folder_name(word);
        if (name.empty()) continue;
        if (std::find(folders.begin(), folders.end(), name) != folders.end()) continue;
        folders.push_back(name);
        fs::path other = fs::path(root_) / "compliance_checker" / name;
        if (!fs::is_directory(other, ec)) continue;
        std::string bytes;
        for (const auto& p : sorted_files(other, ".yaml"))
          bytes += name + "/" + p.filename().string() + '\0' + file_bytes(p) + '\0';
        hash_input += bytes;
        pending.push_back(std::move(bytes));
      }
    }
    // RCP tables count towards the hash too: they decide verdicts.
    fs::path rcp = fs::path(root_) / "rcp_checker" / folder_;
    if (fs::is_directory(rcp, ec))
      for (const auto& p : sorted_files(rcp, ".json"))
        hash_input += "rcp/" + p.filename().string() + '\0' + file_bytes(p) + '\0';
    sha256_ = base::sha256_hex(hash_input);
  });
  return sha256_;
}

const RuleFile* RuleSet::file(const std::string& rel, std::string* why) const {
  auto it = slots_.find(rel);
  if (it == slots_.end()) return nullptr;
  Slot& s = *it->second;
  std::call_once(s.once, [&] {
    auto f = std::make_unique<RuleFile>();
    std::string err;
    if (load_rule_file(s.path, rel, f.get(), &err)) {
      s.file = std::move(f);
    } else {
      s.error = err;
      std::lock_guard<std::mutex> lock(errors_mu_);
      errors_.push_back(err);
    }
    s.done.store(true, std::memory_order_release);
  });
  if (!s.file && why) *why = s.error;
  return s.file.get();
}

bool RuleSet::compile_all(std::string* error) const {
  for (const auto& [rel, slot] : slots_) {
    std::string why;
    if (!file(rel, &why)) {
      *error = why;
      return false;
    }
  }
  return true;
}

std::vector<std::string> RuleSet::load_errors() const {
  std::lock_guard<std::mutex> lock(errors_mu_);
  return errors_;
}

size_t RuleSet::compiled_count() const {
  size_t n = 0;
  for (const auto& [rel, slot] : slots_) n += slot->done.load(std::memory_order_acquire) && slot->file ? 1 : 0;
  return n;
}

const RuleFile* RuleSet::resolve(const std::string& rel, std::string* why) const {
  if (const RuleFile* f = file(rel)) return f;
  fs::path norm = fs::path(rel).lexically_normal();
  std::string key = norm.generic_string();
  if (const RuleFile* f = file(key)) return f;
  if (norm.empty() || norm.is_absolute() || key == ".." || key.rfind("../", 0) == 0) {
    *why = "the path leaves " + checker_root();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(extra_mu_);
  if (auto it = extra_.find(key); it != extra_.end()) return it->second.get();
  if (auto it = extra_errors_.find(key); it != extra_errors_.end()) {
    *why = it->second;
    return nullptr;
  }
  fs::path path = fs::path(checker_root()) / norm;
  std::error_code ec;
  std::string error;
  if (!fs::is_regular_file(path, ec)) {
    error = "no such file";
  } else {
    auto f = std::make_unique<RuleFile>();
    if (load_rule_file(path.string(), key, f.get(), &error)) {
      const RuleFile* out = f.get();
      extra_.emplace(key, std::move(f));
      return out;
    }
  }
  extra_errors_.emplace(key, error);
  *why = error;
  return nullptr;
}

std::vector<std::string> list_rulesets(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::path dir = fs::path(root) / "compliance_checker";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory()) continue;
    RulesetId id;
    std::string name = e.path().filename().string();
    auto us = name.rfind('_');
    if (us == std::string::npos) continue;
    if (RulesetId::parse(name.substr(0, us) + "-" + name.substr(us + 1), &id) && id.dir() == name) out.push_back(id.id());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace referee::rules
