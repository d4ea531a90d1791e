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
              LoadedRules loaded;
              if (!load_rules("import", o->round, o->rules, &loaded)) return kCannotCheck;
              std::string db;
              auto store = open_store("import", o->db, &db);
              if (!store) return kCannotCheck;
              std::vector<std::string> packages;
              for (const auto& d : o->dirs) {
                auto found = submissions::find_packages(d);
                if (found.empty()) {
                  std::cerr << "referee import: " << d << " holds no package (no results/ folder in it or below it)\n";
                  return kCannotCheck;
                }
                packages.insert(packages.end(), found.begin(), found.end());
              }
              return import_packages("import", *store, loaded, packages, o->jobs, o->round, db);
            };
          }};
}

}  // namespace referee::cli
