// referee run SPEC: the harness. referee system describe: a system description.
#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <filesystem>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/safe_text.h"
#include "cli/table.h"
#include "harness/backends/registry.h"
#include "harness/manifest.h"
#include "harness/progress.h"
#include "harness/run_words.h"
#include "harness/runner.h"
#include "harness/backends/slurm.h"
#include "harness/backends/slurm_describe.h"
#include "harness/spec.h"
#include "harness/environment/system_describe.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"
#include "mllog/json_writer.h"

namespace referee::cli {

namespace {

// SIGINT, SIGTERM and SIGHUP: the first asks the harness to cancel every run
// and keep what finished, a second one to kill what still runs and end at
// once. The handler only sets these (lock-free atomics are async-signal-safe);
// the harness looks at them every 50 ms.
std::atomic<bool> g_interrupt{false};
std::atomic<bool> g_stop_now{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
extern "C" void on_signal(int sig) {
  if (g_interrupt.exchange(true)) {
    g_stop_now.store(true);
  } else {
    g_signal.store(sig);
  }
}
constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kInterruptSignals) sigaction(sig, &sa, nullptr);
}

void default_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : kInterruptSignals) sigaction(sig, &sa, nullptr);
}

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
  if (report.runs.empty() && static_cast<int>(report.kept.size()) > report.required)
    out << "nothing to run: the package already holds " << report.kept.size() << " result(s), more than the "
        << report.required << " asked for; none was removed (--replace to start it again)\n";
  else if (report.runs.empty())
    out << "nothing to run: the package holds " << report.kept.size() << " result(s) where " << report.required
        << " are required (--runs N to grow it, --replace to start it again)\n";
  else if (!report.kept.empty())
    out << "ran " << report.runs.size() << " more to reach " << report.required << "\n";
  if (!report.manifest.empty()) out << "run manifest: " << report.manifest << "\n";
}

// The manifest's entries of the runs in the package that this invocation did
// not run (kept from earlier ones, or found in the package).
std::vector<harness::ManifestRun> kept_runs(const harness::HarnessReport& report) {
  std::vector<harness::ManifestRun> out;
  if (report.manifest.empty() || report.kept.empty()) return out;
  harness::Manifest m;
  bool existed = false;
  std::string error;
  std::string benchmark = std::filesystem::path(report.manifest).parent_path().filename().string();
  if (!harness::load_manifest(report.manifest, benchmark, &m, &existed, &error)) return out;
  std::set<std::string> ours;
  for (const auto& r : report.runs)
    if (!r.result_file.empty()) ours.insert(std::filesystem::path(r.result_file).filename().string());
  std::string org = std::filesystem::path(report.package_dir).filename().string();
  for (const auto& r : m.runs)
    if (r.package == "in" && r.org == org && r.system == report.system &&
        !ours.count(std::filesystem::path(r.result_file).filename().string()))
      out.push_back(r);
  return out;
}

}  // namespace

Command run_command() {
  return {"run", "Run a workload spec on a backend, check it live, write a submission package",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string spec, backend, out = "referee-out", rules, system, system_description, progress = "auto";
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
            sub.add_option("--parallel", o->parallel, "runs at once (default: the spec's, else the number of cores; 1 on slurm)")
                ->check(CLI::Range(1, 4096));
            sub.add_option("--system", o->system, "system name (systems/<name>.json)");
            sub.add_flag("--replace", o->replace,
                         "remove the package's result files for this benchmark first and run every run again "
                         "(default: keep them and add only the runs it lacks)");
            sub.add_option("--system-description", o->system_description, "YAML/JSON file with the system fields referee cannot detect");
            sub.add_option("--progress", o->progress,
                           "auto (tty when stdout is a terminal, else plain), tty (redrawn table), plain (a line per "
                           "progress event) or json (a JSON object per line; docs/progress.md)")
                ->check(CLI::IsMember({"auto", "tty", "plain", "json"}));
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
                auto line = spec.lines.find("benchmark");
                std::cerr << "referee run: " << o->spec
                          << (line == spec.lines.end() ? "" : ":" + std::to_string(line->second)) << ": "
                          << (spec.benchmark.empty() ? "the spec names no benchmark (benchmark: NAME)"
                                                     : "'" + spec.benchmark + "' is not a benchmark")
                          << " of " << rs->id().id() << " (" << list << ")\n";
                return kCannotCheck;
              }
              if (!harness::finalize_spec(&spec, bf->runs, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              // The system description, complete, before any run starts.
              harness::Environment environment = harness::capture_environment(capture_options(&spec));
              // On Slurm: from a compute node of the allocation (docs/slurm.md).
              harness::NodeDescription described;
              described.env = environment;
              // Warnings about the system description: said at once on stderr, and again in the summary.
              std::vector<std::string> warnings;
              if (spec.backend == "slurm") {
                std::filesystem::path work = std::filesystem::path(o->out) / ".referee-runs" / spec.benchmark;
                catch_interrupts();  // a signal cancels the describe job
                bool described_ok = harness::describe_from_node(spec, o->spec, harness::self_binary(), work.string(), {},
                                                                environment, &described, &error, &g_interrupt);
                default_interrupts();
                if (!described_ok) {
                  std::cerr << "referee run: " << o->spec << ": " << error << "\n";
                  return kCannotCheck;
                }
                if (described.interrupted) {
                  std::string job = described.ended == "cancelled"
                                        ? std::string("the describe job was cancelled")
                                        : "the describe job had already ended (" + described.ended + "): nothing to cancel";
                  std::cerr << "referee run: interrupted by " << harness::interrupt_name(g_signal.load())
                            << " while the system was being described on a compute node (" << job
                            << "); nothing was run\n";
                  if (o->progress == "json") {
                    // stdout holds JSON lines only: the summary says the same.
                    mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
                    w.begin_object().key("type").value("summary");
                    w.key("interrupted").value(true);
                    w.key("signal").value(harness::interrupt_name(g_signal.load()));
                    w.key("stage").value("describe");
                    w.key("describe_job").value(described.ended);
                    w.key("runs").begin_array().end_array();
                    w.end_object();
                    std::cout << w.str() << "\n" << std::flush;
                  }
                  return kCannotCheck;
                }
                if (!described.warning.empty()) std::cerr << "referee run: warning: " << described.warning << "\n";
              }
              harness::SystemDescription sys;
              if (!harness::describe_system(spec.system_description, spec.system, &sys, &error, &described.env)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              if (!described.warning.empty()) warnings.push_back(described.warning);  // said above
              warnings.insert(warnings.end(), sys.warnings.begin(), sys.warnings.end());
              sys.fields["division"] = spec.division;
              sys.fields["submitter"] = sys.fields.count("submitter") ? sys.fields["submitter"] : spec.org;
              for (const auto& w : harness::apply_allocation(spec, &sys)) warnings.push_back(w);
              for (size_t i = described.warning.empty() ? 0 : 1; i < warnings.size(); ++i)
                std::cerr << "referee run: warning: " << warnings[i] << "\n";
              sys.missing.clear();
              for (const auto& f : rules::required_system_fields())
                if (!sys.fields.count(f)) sys.missing.push_back(f);
              if (!sys.missing.empty()) {
                std::string list;
                for (const auto& f : sys.missing) list += "\n  " + f;
                std::cerr << "referee run: the system description lacks required fields (nothing was run):" << list
                          << (spec.system_description.empty()
                                  ? std::string("\nfix: put them in a YAML file and pass --system-description FILE (see "
                                                "'referee system describe')\n")
                                  : "\nfix: add them to " + spec.system_description +
                                        (o->system_description.empty() ? " (the spec's system_description)"
                                                                       : " (--system-description)") +
                                        "; 'referee system describe --from " + spec.system_description +
                                        "' shows what is detected and what is missing\n");
                return kCannotCheck;
              }
              if (spec.system.empty()) spec.system = sys.fields["system_name"];
              auto backend = harness::make_backend(spec.backend, &error);
              if (!backend) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              if (auto* slurm = dynamic_cast<harness::SlurmBackend*>(backend.get()); slurm && harness::captures_on_node(spec))
                slurm->capture_on_node(harness::self_binary(), std::filesystem::absolute(o->spec).string());
              std::string mode = o->progress == "auto" ? (isatty(1) ? "tty" : "plain") : o->progress;
              bool json = mode == "json";
              // With --progress=json stdout holds only JSON lines; what is for a person goes to stderr.
              std::ostream& say = json ? std::cerr : std::cout;
              say << "referee run " << o->spec << "\n";
              for (const auto& [k, v] : spec.effective) say << "  " << k << " = " << v.first << "  (" << v.second << ")\n";
              say << "  system = " << spec.system << ", rules from " << src.origin << "\n";
              if (described.from_node) say << "  system described from compute node " << described.node << "\n";
              harness::RunnerOptions ropt;
              ropt.out_dir = o->out;
              ropt.system_json = sys.to_json();
              ropt.environment = &environment;
              ropt.interrupt = &g_interrupt;
              ropt.stop_now = &g_stop_now;
              ropt.interrupt_signal = &g_signal;
              ropt.replace = o->replace;
              size_t drawn = 0;
              auto undraw = [&] {
                if (drawn) std::cout << "\033[" << drawn << "A\033[J";
                drawn = 0;
              };
              ropt.event = [&](const std::string& e) {
                if (json) {
                  std::cout << harness::event_json(e) << "\n" << std::flush;
                  return;
                }
                undraw();
                std::cout << "  " << caret_escape(e) << "\n" << std::flush;
              };
              ropt.progress = [&](const harness::ProgressModel& m, const std::vector<harness::RunProgress>& runs,
                                  const std::vector<size_t>& changed) {
                if (mode == "tty") {
                  undraw();
                  // One row per run, cut to the terminal's width (a wrapped line would spoil the redraw):
                  // the key columns come first so that they show on a narrow terminal.
                  struct winsize ws {};
                  size_t width = ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col - 1 : 0;
                  std::cout << harness::progress_header(width) << "\n";
                  for (const auto& r : runs) std::cout << harness::progress_row(r, m, width) << "\n";
                  drawn = runs.size() + 1;
                  std::cout << std::flush;
                  return;
                }
                for (size_t i : changed) {
                  const auto& r = runs[i];
                  if (json) std::cout << harness::progress_json(r, m) << "\n";
                  else if (r.state != "waiting")
                    std::cout << "  progress " << r.id << " " << r.state << ": " << harness::progress_text(r.progress, m) << "\n";
                }
                std::cout << std::flush;
              };
              g_interrupt = false;
              g_stop_now = false;
              g_signal = 0;
              catch_interrupts();
              harness::HarnessReport report;
              bool ran = harness::run_harness(spec, *backend, *rs, ropt, &report, &error);
              // Past this point a signal ends referee at once: everything it wrote is whole (atomic renames).
              default_interrupts();
              undraw();
              if (!ran) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              // Summary: runs, verdicts, the package's checks and score. Log lines and
              // reasons quote the workload's text: control characters in caret notation.
              SafeTextFilter others_text(say);
              const harness::ProgressModel& model = *report.progress_model;
              auto verdict_of = [](const harness::RunReport& r) { return harness::verdict_word(r); };
              auto state_of = [](const harness::RunReport& r) { return harness::state_word(r); };
              // The seed given, and the logged one beside it when the workload logged another.
              auto seed_of = [](const harness::RunReport& r) {
                return std::to_string(r.seed) +
                       (r.seed_note.empty() ? std::string() : " (log: " + std::to_string(r.logged_seed) + ")");
              };
              Table t({"run", "seed", "state", "time to train", "last eval", "verdict", "in package"});
              for (const auto& r : report.runs)
                t.add({r.id, seed_of(r), state_of(r),
                       r.has_time_to_train             ? harness::format_duration(r.time_to_train_ms / 1000.0)
                       : r.progress.has_time_to_train ? harness::format_duration(r.progress.time_to_train_s) + " (no run_stop)"
                                                      : "-",
                       harness::eval_text(r.last_eval), verdict_of(r),
                       r.result_file.empty() ? "no" : std::filesystem::path(r.result_file).filename().string()});
              say << "\n";
              print_package_record(report, say);
              if (!report.runs.empty()) t.print(say);
              for (const auto& r : report.runs) {
                if (r.launched) say << r.id << ": " << harness::progress_text(r.progress, model) << "\n";
              }
              for (const auto& r : report.runs) {
                if (!r.seed_note.empty()) say << r.id << ": " << r.seed_note << "\n";
                if (!r.status.leftovers.empty()) say << r.id << ": " << r.status.leftovers << "\n";
                for (const auto& w : r.verdict.warnings)
                  say << r.id << ": warning: " << (w.line ? "line " + std::to_string(w.line) + ": " : std::string())
                      << w.rule << ": " << w.message << "\n";
                // Not converged, or ended badly after its log was complete (a crash on teardown): say so.
                if (!r.result_file.empty() && (!r.converged || r.status.state != harness::RunState::Succeeded))
                  say << r.id << " is in the package as " << std::filesystem::path(r.result_file).filename().string()
                      << ": " << r.package_reason << "\n";
                if (r.left_out.empty()) continue;
                say << r.id << " is not in the package: " << r.left_out << "\n";
                if (!r.kept_log.empty() && std::filesystem::exists(r.kept_log)) say << "  its log is kept in " << r.kept_log << "\n";
                if (!r.output_file.empty() && std::filesystem::exists(r.output_file))
                  say << "  its output is kept in " << r.output_file << "\n";
              }
              for (const auto& r : report.runs) {
                if (r.environment_file.empty()) continue;
                bool all = true;
                for (const auto& q : report.runs) all = all && !q.environment_file.empty();
                say << "environment of each run" << (all ? "" : " that started") << ": "
                    << std::filesystem::path(r.environment_file).parent_path().string() << "/<run>.env.json\n";
                break;
              }
              rules::PackageOptions popt;
              rules::PackageReport pr;
              if (!rules::check_package(*rs, facts, report.package_dir, popt, &pr, &error)) {
                std::cerr << "referee run: " << error << "\n";
                return kCannotCheck;
              }
              auto scores = rules::score_package(pr, facts, rules::ScaleMode::Published);
              say << "\npackage: " << report.package_dir << " (" << (pr.pass ? "passes" : "FAILS") << " check-package with "
                  << rs->id().id() << ")\n";
              for (const auto& d : pr.benchmarks) {
                say << "  " << d.system << "/" << d.benchmark << ": " << d.result_count << "/" << d.expected_count
                    << " result files";
                if (d.seeds_checked) say << ", seeds " << (d.seeds_ok ? "ok" : "FAIL");
                if (d.rcp_checked) say << ", RCP " << d.rcp.status << (d.rcp.pass ? "" : " FAIL");
                for (const auto& row : scores.rows)
                  for (const auto& s : row.scores)
                    if (s.benchmark == d.benchmark && s.system == d.system && s.has_score)
                      say << ", score " << fixed(s.score, 4) << " min";
                say << "\n";
                for (const auto& e : d.errors) say << "    " << e.rule << ": " << e.message << "\n";
                for (const auto& e : d.seed_errors)
                  say << "    seeds: " << e.message << (e.hint.empty() ? "" : " (" + e.hint + ")") << "\n";
              }
              if (!warnings.empty()) {
                say << "\nwarnings (" << warnings.size() << "):\n";
                for (const auto& w : warnings) say << "  " << w << "\n";
              }
              // After an interruption: exactly what is on disk.
              std::vector<std::string> on_disk;
              if (report.interrupted) {
                std::filesystem::path results = std::filesystem::path(report.package_dir) / "results" / spec.system / spec.benchmark;
                std::error_code ec;
                std::set<std::string> names;
                for (const auto& e : std::filesystem::directory_iterator(results, ec))
                  if (e.path().filename().string().rfind("result_", 0) == 0) names.insert(e.path().filename().string());
                on_disk.assign(names.begin(), names.end());
                std::string never, logs;
                for (const auto& r : report.runs) {
                  if (!r.launched) never += (never.empty() ? "" : ", ") + r.id;
                  if (!r.kept_log.empty() && std::filesystem::exists(r.kept_log)) logs += "\n  " + r.kept_log;
                }
                say << "\ninterrupted by " << harness::interrupt_name(g_signal.load())
                    << (report.stopped_at_once ? ", then again: " : ": ") << report.interrupt_did
                    << "\non disk: " << results.string() << " holds "
                    << (on_disk.empty() ? std::string("no result files") : std::to_string(on_disk.size()) + " result file(s):");
                for (const auto& n : on_disk) say << " " << n;
                say << "\n";
                if (!logs.empty()) say << "logs kept:" << logs << "\n";
                if (!never.empty()) say << "never started (no log, no result): " << never << "\n";
              }
              if (json) {
                mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
                w.begin_object().key("type").value("summary");
                w.key("interrupted").value(report.interrupted);
                w.key("signal").value(report.interrupted ? harness::interrupt_name(g_signal.load()) : std::string());
                w.key("stopped_at_once").value(report.stopped_at_once);
                w.key("package").value(std::filesystem::absolute(report.package_dir).lexically_normal().string());
                w.key("manifest").value(report.manifest);
                w.key("package_pass").value(pr.pass);
                w.key("warnings").begin_array();
                for (const auto& x : warnings) w.value(x);
                w.end_array();
                w.key("runs").begin_array();
                for (const auto& r : report.runs) {
                  auto opt = [&](const char* k, const std::string& v) {
                    w.key(k);
                    if (v.empty()) w.null();
                    else w.value(v);
                  };
                  w.begin_object().key("run").value(r.id).key("seed").value(r.seed).key("state").value(state_of(r));
                  w.key("verdict").value(verdict_of(r));
                  opt("result_file", r.result_file.empty() ? "" : std::filesystem::absolute(r.result_file).string());
                  opt("left_out", r.left_out);
                  opt("log", !r.kept_log.empty() && std::filesystem::exists(r.kept_log) ? r.kept_log : "");
                  opt("output", !r.output_file.empty() && std::filesystem::exists(r.output_file) ? r.output_file : "");
                  w.key("progress").raw(harness::progress_json(harness::RunProgress{r.id, state_of(r), r.seconds, r.lines, r.progress}, model));
                  w.end_object();
                }
                w.end_array();
                // The results of earlier invocations this one kept: the package is both.
                w.key("kept").begin_array();
                for (const auto& k : kept_runs(report)) {
                  w.begin_object().key("run").value(k.run).key("invocation").value(k.invocation);
                  w.key("seed");
                  if (k.has_seed) w.value(k.seed);
                  else w.null();
                  w.key("state").value(k.state).key("verdict").value(k.verdict);
                  w.key("result_file").value(harness::resolve_in(o->out, k.result_file));
                  w.key("reason").value(k.reason);
                  w.end_object();
                }
                w.end_array().end_object();
                std::cout << w.str() << "\n" << std::flush;
              }
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
              for (const auto& w : s.warnings) std::cerr << who << ": warning: " << w << "\n";
              // The division belongs to the submission, as in `referee run`: the
              // flag, else the spec's, else the file's, else closed.
              if (!o->division.empty()) s.fields["division"] = o->division, s.origin["division"] = "flag";
              else if (have_spec) s.fields["division"] = spec.division, s.origin["division"] = "spec";
              else if (!s.fields.count("division")) s.fields["division"] = "closed", s.origin["division"] = "default";
              if (have_spec && !s.fields.count("submitter")) s.fields["submitter"] = spec.org, s.origin["submitter"] = "spec";
              if (have_spec)
                for (const auto& w : harness::apply_allocation(spec, &s)) std::cerr << who << ": warning: " << w << "\n";
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
