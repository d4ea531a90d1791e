#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "submissions/fetch_round.h"
#include "submissions/import.h"
#include "submissions/store.h"

namespace referee::cli {

Command import_command() {
  return {"import", "Check and import packages (or whole rounds) into the store", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::vector<std::string> dirs;
              std::string round, rules, db;
              int jobs = 0;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("DIR", o->dirs, "organisation folders, or folders holding them (a round)")->required();
            sub.add_option("--round", o->round, "rule set of the round, e.g. training-3.1.0")->required();
            add_rules_option(sub, &o->rules);
            sub.add_option("--db", o->db, "database file (default $REFEREE_DB or the user's data directory)");
            add_jobs_option(sub, &o->jobs);
            return [o]() -> int {
              std::vector<std::string> packages;
              for (const auto& d : o->dirs) {
                std::error_code ec;
                if (!std::filesystem::is_directory(d, ec)) {
                  std::cerr << "referee import: " << d << ": no such folder\n";
                  return kCannotCheck;
                }
                std::vector<std::string> skipped;
                auto found = submissions::find_packages(d, &skipped);
                for (const auto& s : skipped) std::cerr << "referee import: skipped " << s << "\n";
                if (found.empty()) {
                  const bool is_results = std::filesystem::path(d).filename() == "results" ||
                                          (std::filesystem::path(d).filename().empty() &&
                                           std::filesystem::path(d).parent_path().filename() == "results");
                  std::cerr << "referee import: " << d << " holds no package (no results/ folder in it or below it"
                            << (is_results ? "; it is a results/ folder itself: give the organisation folder above it" : "")
                            << ")\n";
                  return kCannotCheck;
                }
                packages.insert(packages.end(), found.begin(), found.end());
              }
              LoadedRules loaded;
              if (!load_rules("import", o->round, o->rules, &loaded)) return kCannotCheck;
              // A folder named for another round (training_results_v3.1 under --round training-3.0.0)
              // would replace that round's packages with another round's: refused before anything is written.
              for (const auto& d : o->dirs) {
                std::string named;
                if (submissions::results_folder_round_differs(d, loaded.ruleset->id().id(), &named)) {
                  std::cerr << "referee import: " << d << " is a folder of " << named << "'s results (its path says so), not "
                            << loaded.ruleset->id().id() << "'s; nothing was imported\n"
                            << "hint: --round " << named << "; a folder that really is " << loaded.ruleset->id().id()
                            << "'s but named for another round must be renamed first\n";
                  return kCannotCheck;
                }
              }
              return import_into_store("import", o->db, loaded, packages, o->jobs, loaded.ruleset->id().id());
            };
          }};
}

}  // namespace referee::cli
