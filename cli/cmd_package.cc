// referee package: what a submission holds beyond the results (harness/assemble.h),
// then the package checked as check-package checks it, then one tarball.
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "harness/assemble.h"
#include "rules/package.h"

namespace referee::cli {

namespace {

// "BENCH=DIR" values into a map; false with *error naming the flag.
bool pairs(const std::vector<std::string>& values, const char* flag, std::map<std::string, std::string>* out,
           std::string* error) {
  for (const auto& v : values) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
      *error = std::string(flag) + ": expected BENCHMARK=FOLDER, found '" + v + "'";
      return false;
    }
    (*out)[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return true;
}

}  // namespace

Command package_command() {
  return {"package", "Assemble a submission package: implementations, power logs, checker params; check it; one tarball",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string org_dir, ruleset, rules, implementation = "referee", tarball;
              std::vector<std::string> code, power, rcp_bypass, seed_bypass;
              bool set_scaling = false, verbose = false;
              int jobs = 0;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("ORG_DIR", o->org_dir, "the organisation's folder (<out>/<org>, as referee run writes it)")
                ->required();
            add_ruleset_options(sub, &o->ruleset, &o->rules);
            add_jobs_option(sub, &o->jobs);
            sub.add_option("--code", o->code,
                           "BENCHMARK=FOLDER: the implementation's source, copied to benchmarks/<benchmark>/"
                           "implementations/<name>/ (the files git tracks there, else every file)");
            sub.add_option("--implementation", o->implementation, "the implementation's folder name (default: referee)");
            sub.add_option("--power", o->power,
                           "BENCHMARK=FOLDER (or SYSTEM/BENCHMARK=FOLDER): power logs, result_<n>/node_<i>.txt and "
                           "sw_<i>.txt, copied to results/<system>/<benchmark>/power/");
            sub.add_option("--rcp-bypass", o->rcp_bypass, "BENCHMARK: write package_checker_params rcp-bypass there");
            sub.add_option("--seed-checker-bypass", o->seed_bypass,
                           "BENCHMARK: write package_checker_params seed-checker-bypass there");
            sub.add_flag("--set-scaling", o->set_scaling,
                         "write scaling.json where the RCP normalisation applies (as the consortium's checker does)");
            sub.add_option("--tarball", o->tarball, "write the organisation's folder as one .tar.gz here");
            sub.add_flag("-v,--verbose", o->verbose, "also print warnings of the check");
            return [o]() -> int {
              harness::AssembleOptions a;
              a.org_dir = o->org_dir;
              a.implementation = o->implementation;
              a.rcp_bypass = {o->rcp_bypass.begin(), o->rcp_bypass.end()};
              a.seed_bypass = {o->seed_bypass.begin(), o->seed_bypass.end()};
              std::string error;
              if (!pairs(o->code, "--code", &a.code, &error) || !pairs(o->power, "--power", &a.power, &error)) {
                std::cerr << "referee package: " << error << "\n";
                return kCannotCheck;
              }
              if (!o->tarball.empty())
                if (std::string t = harness::tarball_problem(o->org_dir, o->tarball); !t.empty()) {
                  std::cerr << "referee package: " << t << " (nothing was changed)\n";
                  return kCannotCheck;
                }
              LoadedRules loaded;
              if (!load_rules("package", o->ruleset, o->rules, &loaded)) return kCannotCheck;
              harness::Assembled done;
              if (!harness::assemble_package(a, &done, &error)) {
                std::cerr << "referee package: " << error << " (nothing was changed)\n";
                return kCannotCheck;
              }
              for (const auto& w : done.wrote) std::cout << "wrote " << w << "\n";
              for (const auto& w : done.warnings) std::cerr << "warning: " << w << "\n";
              rules::PackageReport report;
              const rules::PackageOptions popt{.jobs = job_count(o->jobs)};
              if (!rules::check_package(*loaded.ruleset, loaded.facts, o->org_dir, popt, &report, &error)) {
                std::cerr << "referee package: " << error << "\n";
                return kCannotCheck;
              }
              if (o->set_scaling) {
                for (const auto& p : rules::write_scaling_files(report, &error)) std::cout << p << "\n";
                if (!error.empty()) {
                  std::cerr << "referee package: " << error << "\n";
                  return kCannotCheck;
                }
              }
              print_package_report(report, *loaded.ruleset, loaded.source, o->verbose, std::cout);
              if (!o->tarball.empty()) {
                size_t files = 0;
                if (!harness::write_tarball(o->org_dir, o->tarball, &files, &error)) {
                  std::cerr << "referee package: " << error << "\n";
                  return kCannotCheck;
                }
                std::cout << "tarball: " << o->tarball << " (" << files << " files" <<
                    (report.pass ? "" : "; the package FAILS its check: fix it before submitting") << ")\n";
              }
              if (rules_broken("package", *loaded.ruleset)) return kCannotCheck;
              return report.pass ? kPass : kFail;
            };
          }};
}

}  // namespace referee::cli
