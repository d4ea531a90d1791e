#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/table.h"
#include "rules/fetch.h"
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
  LoadedRules loaded;
  if (o.import && !load_rules("fetch", o.round, o.rules, &loaded)) return kCannotCheck;
  std::string error;

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

  std::vector<std::string> packages = submissions::find_packages(res.dir);
  return import_into_store("fetch", o.db, loaded, packages, o.jobs, o.round);
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
            add_rules_option(sub, &o->rules, " for --import");
            add_jobs_option(sub, &o->jobs, " for --import");
            return [o]() -> int { return run(*o); };
          }};
}

}  // namespace referee::cli
