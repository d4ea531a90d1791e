#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "mllog/json_writer.h"
#include "rules/fetch.h"
#include "rules/source.h"

namespace fs = std::filesystem;

namespace referee::cli {

namespace {

struct FetchOpts {
  std::string tag;
  std::string from;
  std::string sha256;
  bool quiet = false;
};

struct ListOpts {
  std::string rules;
  std::string ruleset;
  bool json = false;
};

int run_fetch(const FetchOpts& o) {
  rules::FetchRequest req{o.tag, o.from, o.sha256};
  rules::CurlOptions copts;
  copts.progress = !o.quiet;
  copts.label = "downloading rules";
  if (!o.tag.empty()) copts.label += " " + o.tag;
  else if (o.from.empty()) copts.label += std::string(" ") + rules::kDefaultRulesTag;
  rules::CurlFetcher fetcher(copts);
  rules::FetchResult res;
  std::string error;
  if (!rules::fetch_rules(req, fetcher, &res, &error)) {
    std::cerr << "referee rules fetch: " << error << "\n";
    return kCannotCheck;
  }
  if (o.quiet) return kPass;
  std::cout << (res.replaced ? "replaced" : "installed") << " rules release " << res.manifest.tag << " in " << res.dir
            << "\n  source  " << res.manifest.source << "\n  sha256  " << res.manifest.sha256 << "\n  files   "
            << res.manifest.files.size() << "\n  rule sets";
  if (res.rulesets.empty()) std::cout << " (none)";
  for (const auto& r : res.rulesets) std::cout << " " << r;
  std::cout << "\n";
  return kPass;
}

// The folder that holds compliance_checker/ for a search-path root, mirroring
// resolve_ruleset (a root may be the package folder or compliance_checker/ itself).
std::string effective_root(const std::string& root) {
  std::error_code ec;
  if (fs::is_directory(fs::path(root) / "compliance_checker", ec)) return root;
  if (fs::is_directory(fs::path(root) / "mlperf_logging" / "compliance_checker", ec)) return root + "/mlperf_logging";
  if (fs::path(root).filename() == "compliance_checker" && fs::is_directory(root, ec))
    return fs::path(root).parent_path().string();
  return root;
}

bool is_cache_root(const rules::RuleSource& s) { return s.origin.rfind("cache", 0) == 0; }

int run_resolve(const ListOpts& o) {
  rules::RuleSource src;
  std::string error;
  auto rs = rules::resolve_ruleset(o.ruleset, o.rules, &src, &error);
  if (rs && !rs->compile_all(&error)) rs.reset();  // listing one rule set checks every file of it
  if (!rs) {
    if (o.json) {
      mllog::JsonWriter w;
      w.begin_object().key("schema").value("referee.rules-resolve/1").key("ruleset").value(o.ruleset);
      w.key("error").value(error).end_object();
      std::cout << w.str() << "\n";
    }
    std::cerr << "referee rules list: " << error << "\n";
    return kCannotCheck;
  }
  if (o.json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.rules-resolve/1").key("ruleset").value(rs->id().id());
    w.key("root").value(src.root).key("origin").value(src.origin).key("sha256").value(rs->sha256()).end_object();
    std::cout << w.str() << "\n";
  } else {
    std::cout << rs->id().id() << " -> " << src.root << "\n  from    " << src.origin << "\n  sha256  " << rs->sha256()
              << "\n";
  }
  return kPass;
}

int run_list(const ListOpts& o) {
  if (!o.ruleset.empty()) return run_resolve(o);
  std::vector<rules::RuleSource> path = rules::rule_search_path(o.rules);
  std::map<std::string, size_t> winner;  // ruleset id -> index of the root it resolves to
  std::vector<std::vector<std::string>> sets(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    sets[i] = rules::list_rulesets(effective_root(path[i].root));
    for (const auto& id : sets[i]) winner.emplace(id, i);
  }
  if (o.json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.rules-list/1").key("cache").value(rules::cache_dir());
    w.key("search_path").begin_array();
    for (size_t i = 0; i < path.size(); ++i) {
      w.begin_object().key("origin").value(path[i].origin).key("root").value(path[i].root);
      w.key("exists").value(fs::is_directory(path[i].root));
      w.key("rulesets").begin_array();
      for (const auto& id : sets[i])
        w.begin_object().key("id").value(id).key("selected").value(winner[id] == i).end_object();
      w.end_array();
      rules::Manifest m;
      std::string err;
      if (is_cache_root(path[i]) && rules::read_manifest(path[i].root, &m, &err)) {
        w.key("manifest").begin_object().key("tag").value(m.tag).key("source").value(m.source);
        w.key("sha256").value(m.sha256).key("fetched_at").value(m.fetched_at);
        w.key("files").value(static_cast<long long>(m.files.size())).end_object();
      }
      w.end_object();
    }
    w.end_array().end_object();
    std::cout << w.str() << "\n";
    return kPass;
  }
  std::cout << "Rule search path (the first root that has a rule set wins; * marks the one --ruleset picks):\n";
  for (size_t i = 0; i < path.size(); ++i) {
    std::cout << "  " << i + 1 << ". " << path[i].origin << "\n     " << path[i].root;
    if (!fs::is_directory(path[i].root)) std::cout << " (missing)";
    std::cout << "\n";
    rules::Manifest m;
    std::string err;
    if (is_cache_root(path[i])) {
      if (rules::read_manifest(path[i].root, &m, &err))
        std::cout << "     release " << m.tag << " from " << m.source << "\n     sha256 " << m.sha256 << ", fetched "
                  << m.fetched_at << "\n";
      else
        std::cout << "     manifest: " << err << "\n";
    }
    if (sets[i].empty()) std::cout << "     (no rule sets)\n";
    for (const auto& id : sets[i]) {
      std::cout << "     " << (winner[id] == i ? "* " : "  ") << id;
      if (winner[id] != i) std::cout << " (shadowed by " << winner[id] + 1 << ")";
      std::cout << "\n";
    }
  }
  if (winner.empty())
    std::cout << "No rule sets found. Run 'referee rules fetch' to install the consortium's rule sets.\n";
  return kPass;
}

}  // namespace

Command rules_command() {
  return {"rules", "Install and list rule sets", [](CLI::App& sub) -> std::function<int()> {
            auto fo = std::make_shared<FetchOpts>();
            auto lo = std::make_shared<ListOpts>();
            CLI::App* fetch = sub.add_subcommand(
                "fetch", std::string("Download the consortium's logging package and install its rule sets in the "
                                     "cache (default release ") +
                             rules::kDefaultRulesTag + ")");
            fetch->add_option("TAG", fo->tag,
                              std::string("release tag of mlcommons/logging (default ") + rules::kDefaultRulesTag +
                                  ", or taken from the --from name)");
            fetch->add_option("--from", fo->from,
                              "archive to install instead of the GitHub release: http(s):// or file:// URL, or a path "
                              "(.tar.gz or .zip)");
            fetch->add_option("--sha256", fo->sha256, "expected SHA-256 of the archive; a mismatch installs nothing");
            fetch->add_flag("-q,--quiet", fo->quiet, "no progress bar and no summary");
            CLI::App* list = sub.add_subcommand("list", "Show where rule sets are looked for and which ones are installed");
            list->add_option("--rules", lo->rules, "rules root to use instead of the search path");
            list->add_option("--ruleset", lo->ruleset, "print only where this rule set resolves to, e.g. training-3.1.0");
            list->add_flag("--json", lo->json, "print JSON (schema referee.rules-list/1, or referee.rules-resolve/1 with --ruleset)");
            sub.require_subcommand(1);
            return [fo, lo, fetch, list]() -> int {
              if (fetch->parsed()) return run_fetch(*fo);
              if (list->parsed()) return run_list(*lo);
              return static_cast<int>(kCannotCheck);
            };
          }};
}

}  // namespace referee::cli
