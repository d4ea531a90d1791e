// referee run SPEC: the harness. referee system describe: a system description.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <filesystem>
#include <thread>

#include "cli/commands.h"
#include "cli/table.h"
#include "harness/backends.h"
#include "harness/runner.h"
#include "harness/spec.h"
#include "harness/system_describe.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"

namespace referee::cli {

namespace {

std::atomic<bool> g_interrupt{false};
extern "C" void on_sigint(int) { g_interrupt.store(true); }

// What the environment capture needs from a spec: the workload's command
// (its Python), its working directory (its git commit) and environment.
harness::CaptureOptions capture_options(const harness::Spec* spec) {
  harness::CaptureOptions c;
  if (spec) {
    c.command = spec->command;
    c.workdir = spec->workdir;
    c.env = spec->env;
  }
  return c;
}

// What the package held before this invocation, what --replace removed, what
// a resume set right, and where the record is.
void print_package_record(const harness::HarnessReport& report, std::ostream& out) {
  for (const auto& f : report.removed) out << "removed (--replace): " << f << "\n";
  for (const auto& m : report.resumed) out << "resume: " << m << "\n";
  if (!report.kept.empty()) {
    out << "kept from earlier runs (" << report.kept.size() << "):";
    for (const auto& k : report.kept) out << "\n  " << k;
    out << "\n";
  }
  if (report.runs.empty())
    out << "nothing to run: the package holds " << report.kept.size() << " result(s) where " << report.required
        << " are required (--runs N to grow it, --replace to start it again)\n";
  else if (!report.kept.empty())
    out << "ran " << report.runs.size() << " more to reach " << report.required << "\n";
  if (!report.manifest.empty()) out << "run manifest: " << report.manifest << "\n";
}

}  // namespace

Command run_command() {
  return {"run", "Run a workload spec on a backend, check it live, write a submission package",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string spec, backend, out = "referee-out", rules, system, system_description;
              int runs = 0, parallel = 0;
              bool replace = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("SPEC", o->spec, "workload spec (YAML)")->required();
            sub.add_option("--backend", o->backend, "builtin, exec or slurm (default: the spec's, else builtin)");
            sub.add_option("--out", o->out, "where the package is written (<out>/<org>/...)");
            sub.add_option("--rules", o->rules, "rules root (a tree with compliance_checker/ and rcp_checker/)");
            sub.add_option("--runs", o->runs, "number of runs (default: the spec's, else what the rules require)")
                ->check(CLI::Range(1, 1000));
            sub.add_option("--parallel", o->parallel, "runs at once (default: the spec's, else the number of cores)")
                ->check(CLI::Range(1, 4096));
            sub.add_option("--system", o->system, "system name (systems/<name>.json)");
            sub.add_flag("--replace", o->replace,
                         "remove the package's result files for this benchmark first and run every run again "
                         "(default: keep them and add only the runs it lacks)");
            sub.add_option("--system-description", o->system_description, "YAML/JSON file with the system fields referee cannot detect");
            return [o]() -> int {
              std::string error;
              harness::Spec spec;
              if (!harness::load_spec(o->spec, &spec, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              if (!o->backend.empty()) harness::set_from_flag(&spec, "backend", o->backend);
              if (o->runs > 0) harness::set_from_flag(&spec, "runs", std::to_string(o->runs));
              if (o->parallel > 0) harness::set_from_flag(&spec, "parallel", std::to_string(o->parallel));
              if (!o->system.empty()) harness::set_from_flag(&spec, "system", o->system);
              if (!o->system_description.empty()) spec.system_description = o->system_description;
              rules::RuleSource src;
              auto rs = rules::resolve_ruleset(spec.ruleset, o->rules, &src, &error);
              if (!rs) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              rules::RoundFacts facts;
              if (!rules::facts_for(*rs, &facts, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              const rules::BenchmarkFacts* bf = facts.find(spec.benchmark);
              if (!bf) {
                std::string list;
                for (const auto& b : facts.benchmarks) list += (list.empty() ? "" : ", ") + b.name;
                std::cerr << "referee run: " << spec.benchmark << " is not a benchmark of " << rs->id().id() << " (" << list << ")\n";
                return kCannotCheck;
              }
              if (!harness::finalize_spec(&spec, bf->runs, &error)) {
                std::cerr << "referee run: " << o->spec << ": " << error << "\n";
                return kCannotCheck;
              }
              // The system description, complete, before any run starts.
              harness::Environment environment = harness::capture_environment(capture_options(&spec));
              harness::SystemDescription sys;
              if (!harness::describe_system(spec.system_description, spec.system, &sys, &error, &environment)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              sys.fields["division"] = spec.division;
              sys.fields["submitter"] = sys.fields.count("submitter") ? sys.fields["submitter"] : spec.org;
              sys.missing.clear();
              for (const auto& f : rules::required_system_fields())
                if (!sys.fields.count(f)) sys.missing.push_back(f);
              if (!sys.missing.empty()) {
                std::string list;
                for (const auto& f : sys.missing) list += "\n  " + f;
                std::cerr << "referee run: the system description lacks required fields (nothing was run):" << list
                          << "\nfix: put them in a YAML file and pass --system-description FILE (see 'referee system describe')\n";
                return kCannotCheck;
              }
              if (spec.system.empty()) spec.system = sys.fields["system_name"];
              auto backend = harness::make_backend(spec.backend, &error);
              if (!backend) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              std::cout << "referee run " << o->spec << "\n";
              for (const auto& [k, v] : spec.effective) std::cout << "  " << k << " = " << v.first << "  (" << v.second << ")\n";
              std::cout << "  system = " << spec.system << ", rules from " << src.origin << "\n";
              std::signal(SIGINT, on_sigint);
              harness::RunnerOptions ropt;
              ropt.out_dir = o->out;
              ropt.system_json = sys.to_json();
              ropt.environment = &environment;
              ropt.interrupt = &g_interrupt;
              ropt.replace = o->replace;
              bool tty = isatty(1);
              size_t drawn = 0;
              ropt.event = [&](const std::string& e) {
                if (tty && drawn) {
                  std::cout << "\033[" << drawn << "A\033[J";
                  drawn = 0;
                }
                std::cout << "  " << e << "\n" << std::flush;
              };
              if (tty)
                ropt.status = [&](const std::vector<std::string>& lines) {
                  if (drawn) std::cout << "\033[" << drawn << "A\033[J";
                  for (const auto& l : lines) std::cout << "    " << l << "\n";
                  drawn = lines.size();
                  std::cout << std::flush;
                };
              harness::HarnessReport report;
              if (!harness::run_harness(spec, *backend, *rs, ropt, &report, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              std::signal(SIGINT, SIG_DFL);
              // Summary: runs, verdicts, the package's checks and score.
              Table t({"run", "seed", "state", "seconds", "last eval", "verdict", "in package"});
              for (const auto& r : report.runs)
                t.add({r.id, std::to_string(r.seed), r.aborted ? "aborted" : harness::to_string(r.status.state), fixed(r.seconds, 1),
                       r.last_eval.empty() ? "-" : r.last_eval, r.verdict.compliant ? "compliant" : "NOT compliant",
                       r.result_file.empty() ? "no" : std::filesystem::path(r.result_file).filename().string()});
              std::cout << "\n";
              print_package_record(report, std::cout);
              if (!report.runs.empty()) t.print(std::cout);
              for (const auto& r : report.runs) {
                for (const auto& w : r.verdict.warnings)
                  std::cout << r.id << ": warning: " << (w.line ? "line " + std::to_string(w.line) + ": " : std::string())
                            << w.rule << ": " << w.message << "\n";
                if (!r.result_file.empty() && !r.converged)
                  std::cout << r.id << " is in the package as " << std::filesystem::path(r.result_file).filename().string()
                            << ": " << r.package_reason << "\n";
                if (r.left_out.empty()) continue;
                std::cout << r.id << " is not in the package: " << r.left_out << "\n";
                if (std::filesystem::exists(r.kept_log)) std::cout << "  its log is kept in " << r.kept_log << "\n";
                if (!r.output_file.empty()) std::cout << "  its output is kept in " << r.output_file << "\n";
              }
              if (!report.runs.empty() && !report.runs.front().environment_file.empty())
                std::cout << "environment of each run: " << std::filesystem::path(report.runs.front().environment_file).parent_path().string()
                          << "/<run>.env.json\n";
              rules::PackageOptions popt;
              rules::PackageReport pr;
              if (!rules::check_package(*rs, facts, report.package_dir, popt, &pr, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              auto scores = rules::score_package(pr, facts, rules::ScaleMode::Published);
              std::cout << "\npackage: " << report.package_dir << " (" << (pr.pass ? "passes" : "FAILS") << " check-package with "
                        << rs->id().id() << ")\n";
              for (const auto& d : pr.benchmarks) {
                std::cout << "  " << d.system << "/" << d.benchmark << ": " << d.result_count << "/" << d.expected_count
                          << " result files";
                if (d.seeds_checked) std::cout << ", seeds " << (d.seeds_ok ? "ok" : "FAIL");
                if (d.rcp_checked) std::cout << ", RCP " << d.rcp.status << (d.rcp.pass ? "" : " FAIL");
                for (const auto& row : scores.rows)
                  for (const auto& s : row.scores)
                    if (s.benchmark == d.benchmark && s.system == d.system && s.has_score)
                      std::cout << ", score " << fixed(s.score, 4) << " min";
                std::cout << "\n";
                for (const auto& e : d.errors) std::cout << "    " << e.rule << ": " << e.message << "\n";
              }
              if (report.interrupted) std::cout << "interrupted: the package holds the runs that finished\n";
              return report.interrupted ? kCannotCheck : pr.pass ? kPass : kFail;
            };
          }};
}

Command system_command() {
  return {"system", "System descriptions (systems/<system>.json) and the environment runs see",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string file, name, division, spec;
              bool json = false;
            };
            auto o = std::make_shared<Opts>();
            auto* d = sub.add_subcommand("describe", "Detect this machine and merge a YAML file: print systems/<system>.json");
            auto* e = sub.add_subcommand("env", "Print the environment a run records (kernel, libc, Python, frameworks, NVIDIA, container, git)");
            sub.require_subcommand(1);
            d->add_option("--from", o->file, "YAML or JSON file with the fields referee cannot detect (default: the spec's system_description)");
            d->add_option("--name", o->name, "system name");
            d->add_option("--division", o->division, "closed or open: the division of the submission (default: the spec's, else the file's, else closed)")
                ->check(CLI::IsMember({"closed", "open"}));
            for (auto* c : {d, e})
              c->add_option("--spec", o->spec, "workload spec: its command (Python and framework versions), workdir (git commit) and env");
            e->add_flag("--json", o->json, "JSON, as written beside each run's log (<run>.env.json)");
            return [o, d]() -> int {
              const char* who = d->parsed() ? "referee system describe" : "referee system env";
              std::string error;
              harness::Spec spec;
              bool have_spec = !o->spec.empty();
              if (have_spec && !harness::load_spec(o->spec, &spec, &error)) {
                std::cerr << who << ": " << error << "\n";
                return kCannotCheck;
              }
              harness::Environment env = harness::capture_environment(capture_options(have_spec ? &spec : nullptr));
              if (!d->parsed()) {
                std::cout << (o->json ? env.to_json() : env.to_text());
                return kPass;
              }
              std::string file = !o->file.empty() ? o->file : have_spec ? spec.system_description : "";
              std::string name = !o->name.empty() ? o->name : have_spec ? spec.system : "";
              harness::SystemDescription s;
              if (!harness::describe_system(file, name, &s, &error, &env)) {
                std::cerr << who << ": " << error << "\n";
                return kCannotCheck;
              }
              // The division belongs to the submission, as in `referee run`: the
              // flag, else the spec's, else the file's, else closed.
              if (!o->division.empty()) s.fields["division"] = o->division, s.origin["division"] = "flag";
              else if (have_spec) s.fields["division"] = spec.division, s.origin["division"] = "spec";
              else if (!s.fields.count("division")) s.fields["division"] = "closed", s.origin["division"] = "default";
              if (have_spec && !s.fields.count("submitter")) s.fields["submitter"] = spec.org, s.origin["submitter"] = "spec";
              s.missing.clear();
              for (const auto& f : rules::required_system_fields())
                if (!s.fields.count(f)) s.missing.push_back(f);
              std::cout << s.to_json();
              if (!s.missing.empty()) {
                std::cerr << who << ": missing required fields:";
                for (const auto& f : s.missing) std::cerr << " " << f;
                std::cerr << "\nfix: add them to the file given with --from\n";
                return kFail;
              }
              return kPass;
            };
          }};
}

}  // namespace referee::cli
