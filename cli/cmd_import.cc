#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/table.h"
#include "rules/facts.h"
#include "rules/source.h"
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
            sub.add_option("--rules", o->rules, "rules root (a tree with compliance_checker/ and rcp_checker/)");
            sub.add_option("--db", o->db, "database file (default $REFEREE_DB or the user's data directory)");
            sub.add_option("-j,--jobs", o->jobs, "threads (default: all cores)");
            return [o]() -> int {
              rules::RuleSource src;
              std::string error;
              auto rs = rules::resolve_ruleset(o->round, o->rules, &src, &error);
              if (!rs) {
                std::cerr << "referee import: " << error << "\n";
                return kCannotCheck;
              }
              rules::RoundFacts facts;
              if (!rules::facts_for(*rs, &facts, &error)) {
                std::cerr << "referee import: " << error << "\n";
                return kCannotCheck;
              }
              std::string db = o->db.empty() ? submissions::default_db_path() : o->db;
              auto store = submissions::Store::open(db, &error);
              if (!store) {
                std::cerr << "referee import: " << error << "\n";
                return kCannotCheck;
              }
              std::vector<std::string> packages;
              for (const auto& d : o->dirs) {
                auto found = submissions::find_packages(d);
                if (found.empty()) {
                  std::cerr << "referee import: " << d << " holds no package (no results/ folder in it or below it)\n";
                  return kCannotCheck;
                }
                packages.insert(packages.end(), found.begin(), found.end());
              }
              submissions::ImportOptions opt;
              opt.jobs = o->jobs > 0 ? o->jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
              bool tty = isatty(2);
              int rc = kPass;
              auto t0 = std::chrono::steady_clock::now();
              for (size_t i = 0; i < packages.size(); ++i) {
                if (tty) {
                  int width = 30;
                  int done = static_cast<int>(width * i / packages.size());
                  std::cerr << "\r[" << std::string(static_cast<size_t>(done), '#') << std::string(static_cast<size_t>(width - done), '.')
                            << "] " << i << "/" << packages.size() << " " << packages[i] << "\033[K" << std::flush;
                }
                submissions::ImportResult r;
                if (!submissions::import_package(*store, *rs, facts, packages[i], opt, &r, &error)) {
                  if (tty) std::cerr << "\r\033[K";
                  std::cerr << "referee import: " << error << "\n";
                  rc = kCannotCheck;
                  continue;
                }
                if (tty) std::cerr << "\r\033[K";
                std::cout << r.status << " " << r.organisation << " (" << o->round << "): ";
                if (r.status == "unchanged") std::cout << "already in the store with the same content\n";
                else std::cout << r.results << " results, " << r.runs << " runs, package " << r.verdict
                               << (r.resubmitted_runs ? ", " + std::to_string(r.resubmitted_runs) + " runs resubmitted from an earlier round" : "")
                               << "\n";
              }
              double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              std::cout << packages.size() << " package(s) in " << db << " (" << fixed(secs, 2) << " s)\n";
              return rc;
            };
          }};
}

}  // namespace referee::cli
