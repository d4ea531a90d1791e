#include "rules/source.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/file.h"
#include "base/text.h"

namespace fs = std::filesystem;

namespace referee::rules {

std::string cache_dir() { return base::user_path("REFEREE_CACHE", "XDG_CACHE_HOME", ".cache", "referee", ".referee-cache"); }

namespace {
// "4.1.59" < "4.1.60" < "5.0.0"
bool version_less(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& s) {
    std::vector<long> v;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find('.', i);
      std::string p = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
      v.push_back(std::strtol(p.c_str(), nullptr, 10));
      if (j == std::string::npos) break;
      i = j + 1;
    }
    return v;
  };
  return parts(a) < parts(b);
}
}  // namespace

std::vector<RuleSource> cached_rule_roots() {
  std::vector<RuleSource> out;
  fs::path dir = fs::path(cache_dir()) / "rules";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<std::string> tags;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory()) continue;
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // staging folders
    if (!fs::exists(e.path() / "manifest.json")) continue;
    tags.push_back(name);
  }
  std::sort(tags.begin(), tags.end(), [](const std::string& a, const std::string& b) { return version_less(b, a); });
  for (const auto& t : tags) out.push_back({(dir / t).string(), "cache (release " + t + ")"});
  return out;
}

std::string builtin_sets_dir() {
  if (const char* s = std::getenv("REFEREE_SETS"); s && *s) return s;
  return std::string(REFEREE_SOURCE_DIR) + "/rules/sets";
}

std::vector<RuleSource> rule_search_path(const std::string& rules_flag) {
  std::vector<RuleSource> out;
  if (!rules_flag.empty()) {
    out.push_back({rules_flag, "--rules " + rules_flag});
    return out;  // an explicit directory is the only place looked
  }
  if (const char* r = std::getenv("REFEREE_RULES"); r && *r) out.push_back({r, std::string("REFEREE_RULES=") + r});
  for (auto& c : cached_rule_roots()) out.push_back(std::move(c));
  out.push_back({builtin_sets_dir(), "built-in rule sets"});
  return out;
}

std::vector<std::string> places_looked(const std::string& rules_flag) {
  // In the order they are searched (rule_search_path), with the places that
  // hold nothing said where they would be.
  std::vector<std::string> out;
  const char* env = std::getenv("REFEREE_RULES");
  if (rules_flag.empty() && !(env && *env)) out.push_back("REFEREE_RULES (not set)");
  bool cache = false;
  for (const auto& src : rule_search_path(rules_flag)) {
    const bool builtin = src.origin == "built-in rule sets";
    if (builtin && !cache) out.push_back("the cache (" + cache_dir() + "/rules: no rule sets installed)");
    out.push_back(src.origin + (src.origin.find(src.root) == std::string::npos ? " (" + src.root + ")" : ""));
    cache = cache || src.origin.rfind("cache", 0) == 0;
  }
  return out;
}

std::unique_ptr<RuleSet> resolve_ruleset(const std::string& ruleset, const std::string& rules_flag,
                                         RuleSource* source, std::string* error) {
  RulesetId id;
  if (!RulesetId::parse(ruleset, &id)) {
    *error = "'" + ruleset + "' is not a rule set name; expected USAGE-X.Y.Z such as training-3.1.0";
    return nullptr;
  }
  if (std::error_code fec; !rules_flag.empty() && fs::exists(rules_flag, fec) && !fs::is_directory(rules_flag, fec)) {
    *error = "--rules " + rules_flag + " is a file; it takes a folder: the consortium's mlperf_logging package (the "
             "folder holding compliance_checker/), or the folder referee rules fetch installed";
    return nullptr;
  }
  if (std::error_code fec; !rules_flag.empty() && !fs::exists(rules_flag, fec)) {
    *error = "--rules " + rules_flag + " does not exist; it takes a folder: the consortium's mlperf_logging package "
             "(the folder holding compliance_checker/), or run 'referee rules fetch' and leave --rules out";
    return nullptr;
  }
  // A --rules path may point at the compliance_checker folder or the package folder above it.
  std::vector<RuleSource> path = rule_search_path(rules_flag);
  for (auto src : path) {
    std::error_code ec;
    for (const char* sub : {"", "/mlperf_logging", "/.."}) {
      fs::path root = fs::path(src.root + sub);
      if (std::string(sub) == "/.." && fs::path(src.root).filename() != "compliance_checker") continue;
      if (!ruleset_folder(root.string(), id).empty()) {
        src.root = fs::weakly_canonical(root, ec).string();
        // Lazy: a command compiles only the files its logs enqueue.
        auto rs = RuleSet::load(src.root, id, error, LoadMode::Lazy);
        if (!rs) return nullptr;
        if (source) *source = src;
        return rs;
      }
    }
  }
  std::string looked;
  for (const auto& place : places_looked(rules_flag)) looked += "\n  " + place;
  // A typo ("trainng-3.1.0") is named with the set it is close to.
  std::vector<std::string> known;
  for (const auto& src : path)
    for (const char* sub : {"", "/mlperf_logging"})
      for (auto& k : list_rulesets(src.root + sub)) known.push_back(std::move(k));
  const std::string near = base::nearest_name(id.id(), known);
  *error = "rule set " + id.id() + " not found" + (near.empty() ? "." : "; did you mean " + near + "?") +
           " Looked in:" + looked +
           "\nfix: pass --rules DIR (a tree with compliance_checker/" + id.dir() +
           "/), or run 'referee rules fetch' to install the consortium's rule sets";
  return nullptr;
}

}  // namespace referee::rules
