#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/table.h"
#include "rules/facts.h"
#include "rules/fetch.h"
#include "rules/source.h"
#include "submissions/fetch_round.h"
#include "submissions/import.h"
#include "submissions/store.h"

namespace referee::cli {

namespace {

struct FetchRoundOpts {
  std::string round, from, sha256, dest, db, rules;
  bool import = false;
  int jobs = 0;
};

std::string human_mib(std::uint64_t bytes) { return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

int run(const FetchRoundOpts& o) {
  // With --import, a missing rule set is found out before the download.
  std::unique_ptr<rules::RuleSet> rs;
  rules::RoundFacts facts;
  std::string error;
  if (o.import) {
    rules::RuleSource src;
    rs = rules::resolve_ruleset(o.round, o.rules, &src, &error);
    if (!rs) {
      std::cerr << "referee fetch: " << error << "\n";
      return kCannotCheck;
    }
    if (!rules::facts_for(*rs, &facts, &error)) {
      std::cerr << "referee fetch: " << error << "\n";
      return kCannotCheck;
    }
  }

  submissions::RoundFetchRequest req;
  req.round = o.round;
  req.from = o.from;
  req.sha256 = o.sha256;
  req.dest = o.dest;
  rules::CurlOptions copts;
  copts.label = "downloading " + o.round;
  rules::CurlFetcher fetcher(copts);
  submissions::RoundFetchResult res;
  if (!submissions::fetch_round(req, fetcher, &res, &error)) {
    std::cerr << "referee fetch: " << error << "\n";
    return kCannotCheck;
  }
  std::cout << (res.replaced ? "replaced" : "installed") << " the results of " << o.round << " in " << res.dir
            << "\n  source         " << res.source << "\n  sha256         " << res.sha256 << "\n  files          "
            << res.files << " (" << human_mib(res.bytes) << ")\n  organisations  " << res.organisations.size() << "\n";
  if (!o.import) return kPass;

  std::string db = o.db.empty() ? submissions::default_db_path() : o.db;
  auto store = submissions::Store::open(db, &error);
  if (!store) {
    std::cerr << "referee fetch: " << error << "\n";
    return kCannotCheck;
  }
  std::vector<std::string> packages = submissions::find_packages(res.dir);
  submissions::ImportOptions opt;
  opt.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool tty = isatty(2);
  int rc = kPass;
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < packages.size(); ++i) {
    if (tty) {
      int width = 30;
      int done = static_cast<int>(width * i / packages.size());
      std::cerr << "\r[" << std::string(static_cast<size_t>(done), '#')
                << std::string(static_cast<size_t>(width - done), '.') << "] " << i << "/" << packages.size() << " "
                << packages[i] << "\033[K" << std::flush;
    }
    submissions::ImportResult r;
    if (!submissions::import_package(*store, *rs, facts, packages[i], opt, &r, &error)) {
      if (tty) std::cerr << "\r\033[K";
      std::cerr << "referee fetch: " << error << "\n";
      rc = kCannotCheck;
      continue;
    }
    if (tty) std::cerr << "\r\033[K";
    std::cout << r.status << " " << r.organisation << " (" << o.round << "): ";
    if (r.status == "unchanged")
      std::cout << "already in the store with the same content\n";
    else
      std::cout << r.results << " results, " << r.runs << " runs, package " << r.verdict
                << (r.resubmitted_runs
                        ? ", " + std::to_string(r.resubmitted_runs) + " runs resubmitted from an earlier round"
                        : "")
                << "\n";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << packages.size() << " package(s) in " << db << " (" << fixed(secs, 2) << " s)\n";
  return rc;
}

}  // namespace

Command fetch_command() {
  return {"fetch", "Download a round's published results (results/ and systems/ only), optionally import them",
          [](CLI::App& sub) -> std::function<int()> {
            auto o = std::make_shared<FetchRoundOpts>();
            sub.add_option("ROUND", o->round,
                           "rule set of the round, e.g. training-3.1.0 (results from "
                           "github.com/mlcommons/training_results_v3.1)")
                ->required();
            sub.add_option("--from", o->from,
                           "archive to use instead of the GitHub archive of the round's results repository: "
                           "http(s):// or file:// URL, or a path");
            sub.add_option("--sha256", o->sha256, "expected SHA-256 of the archive; a mismatch installs nothing");
            sub.add_option("--dest", o->dest,
                           "folder to install into (default: results/ROUND beside the default database)");
            sub.add_flag("--import", o->import, "import every package into the store after installing");
            sub.add_option("--db", o->db, "database file for --import (default $REFEREE_DB or the user's data directory)");
            sub.add_option("--rules", o->rules, "rules root for --import (a tree with compliance_checker/ and rcp_checker/)");
            sub.add_option("-j,--jobs", o->jobs, "threads for --import (default: all cores)");
            return [o]() -> int { return run(*o); };
          }};
}

}  // namespace referee::cli
