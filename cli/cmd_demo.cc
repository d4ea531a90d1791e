// referee demo: the mini workloads through the harness, a package, its
// checks and scores, and the store, in one command.
#include <csignal>
#include <filesystem>
#include <iostream>

#include "base/subprocess.h"
#include "cli/commands.h"
#include "cli/demo_review.h"
#include "cli/common.h"
#include "cli/table.h"
#include "harness/backends/registry.h"
#include "harness/run_words.h"
#include "harness/runner.h"
#include "harness/backends/slurm_describe.h"
#include "harness/spec.h"
#include "harness/environment/system_describe.h"
#include "rules/package.h"
#include "rules/score.h"
#include "submissions/import.h"

namespace referee::cli {

Command demo_command() {
  return {"demo", "Run the mini workloads through the harness, then check, score and store the package",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string out = "referee-demo", db, reference;
              bool review = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("--out", o->out, "where the package and the demo's store are written (default: referee-demo)");
            sub.add_option("--db", o->db, "store to import into (default: <out>/referee.db)");
            sub.add_flag("--review", o->review,
                         "instead: the peer review of NVIDIA's round-3.1 RetinaNet told through a review server on "
                         "127.0.0.1, on the published logs");
            sub.add_option("--reference", o->reference,
                           "with --review: the folder holding mlperf/training_results_v3.1 and mlperf/logging "
                           "(default $REFEREE_REFERENCE_DATA, else ../shared beside the source tree)");
            return [o]() -> int {
              // Output closed (`referee demo | head`): finish, and stop the
              // server the review demo started, instead of dying of SIGPIPE.
              signal(SIGPIPE, SIG_IGN);
              if (o->review) return run_review_demo({o->out, o->reference});
              LoadedRules loaded;
              if (!load_rules("demo", "mini-1.0.0", "", &loaded)) return kCannotCheck;
              std::string error;
              harness::SystemDescription sys;
              std::string desc = std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/cpu_system.yaml";
              if (!harness::describe_system(desc, "", &sys, &error)) {
                std::cerr << "referee demo: " << error << "\n";
                return kCannotCheck;
              }
              sys.fields["division"] = "closed";
              auto backend = harness::make_backend("builtin", &error);
              std::cout << "referee demo: mini-1.0.0, builtin backend, package in " << o->out << "/referee\n";
              std::string package;
              Table runs({"run", "seed", "state", "seconds", "last eval", "verdict", "in package"});
              std::vector<std::string> left_out;
              struct Bench {
                const char* name;
                int batch;
              };
              for (const Bench& b : {Bench{"minilm", 64}, Bench{"miniclf", 128}}) {
                harness::Spec spec;
                spec.benchmark = b.name;
                spec.ruleset = "mini-1.0.0";
                spec.backend = "builtin";
                spec.batch_size = b.batch;
                spec.org = "referee";
                spec.system = sys.fields["system_name"];
                if (!harness::finalize_spec(&spec, loaded.facts.find(b.name)->runs, &error)) {
                  std::cerr << "referee demo: " << error << "\n";
                  return kCannotCheck;
                }
                harness::RunnerOptions ropt;
                ropt.out_dir = o->out;
                ropt.system_json = sys.to_json();
                ropt.replace = true;  // the demo shows five fresh runs each time, in any folder
                harness::HarnessReport report;
                if (!harness::run_harness(spec, *backend, *loaded.ruleset, ropt, &report, &error)) {
                  std::cerr << "referee demo: " << error << "\n";
                  return kCannotCheck;
                }
                package = report.package_dir;
                for (const auto& r : report.runs)
                  runs.add({r.id, std::to_string(r.seed), harness::state_word(r), fixed(r.seconds, 2),
                            harness::eval_text(r.last_eval), harness::verdict_word(r),
                            r.result_file.empty() ? "no" : std::filesystem::path(r.result_file).filename().string()});
                for (const auto& r : report.runs)
                  if (!r.left_out.empty()) left_out.push_back(r.id + " is not in the package: " + r.left_out);
              }
              runs.print(std::cout);
              for (const auto& l : left_out) std::cout << l << "\n";
              rules::PackageOptions popt;
              rules::PackageReport pr;
              if (!rules::check_package(*loaded.ruleset, loaded.facts, package, popt, &pr, &error)) {
                std::cerr << "referee demo: " << error << "\n";
                return kCannotCheck;
              }
              auto scores = rules::score_package(pr, loaded.facts, rules::ScaleMode::Published);
              std::cout << "\ncheck-package " << package << ": " << (pr.pass ? "PASS" : "FAIL") << "\n";
              Table t({"benchmark", "files", "seeds", "RCP", "score (min)"});
              for (const auto& d : pr.benchmarks) {
                std::string score = "-";
                for (const auto& row : scores.rows)
                  for (const auto& s : row.scores)
                    if (s.benchmark == d.benchmark && s.has_score) score = fixed(s.score, 4);
                t.add({d.system + "/" + d.benchmark, std::to_string(d.result_count) + "/" + std::to_string(d.expected_count),
                       d.seeds_ok ? "ok" : "FAIL", d.rcp.status + (d.rcp.pass ? "" : " FAIL"), score});
              }
              t.print(std::cout);
              std::string db_path;
              auto store = open_store("demo", o->db.empty() ? o->out + "/referee.db" : o->db, &db_path);
              if (!store) return kCannotCheck;
              std::cout << "\n";
              int rc = import_packages("demo", *store, loaded, {package}, 0, "mini-1.0.0", db_path);
              if (rc != kPass) return rc;
              std::cout << "\nnext: " << base::self_binary() << " leaderboard --db " << db_path << " --round mini-1.0.0 --benchmark minilm\n";
              return pr.pass ? kPass : kFail;
            };
          }};
}

}  // namespace referee::cli
