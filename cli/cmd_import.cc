#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
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
                auto found = submissions::find_packages(d);
                if (found.empty()) {
                  std::cerr << "referee import: " << d << " holds no package (no results/ folder in it or below it)\n";
                  return kCannotCheck;
                }
                packages.insert(packages.end(), found.begin(), found.end());
              }
              LoadedRules loaded;
              if (!load_rules("import", o->round, o->rules, &loaded)) return kCannotCheck;
              return import_into_store("import", o->db, loaded, packages, o->jobs, loaded.ruleset->id().id());
            };
          }};
}

}  // namespace referee::cli
