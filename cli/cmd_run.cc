// referee run SPEC: the harness. referee system describe: a system description.
#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/safe_text.h"
#include "cli/table.h"
#include "harness/backends/slurm_describe.h"
#include "harness/environment/system_describe.h"
#include "harness/progress.h"
#include "harness/run_package.h"
#include "harness/run_words.h"
#include "harness/spec.h"
#include "mllog/json_writer.h"
#include "rules/facts.h"

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
  // Output closed (`referee run ... | head`): the runs go on and are
  // recorded; only what is printed is lost. The runs start with SIGPIPE at
  // its default (harness/backends/exec.cc).
  signal(SIGPIPE, SIG_IGN);
}

void default_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : kInterruptSignals) sigaction(sig, &sa, nullptr);
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
  else if (report.runs.empty() && report.rules_required > report.required)
    out << "nothing to run: the package holds the " << report.kept.size() << " result(s) the spec asks for (runs: "
        << report.required << "), but the rules require " << report.rules_required
        << " of this benchmark: its check fails until it holds them (--runs " << report.rules_required
        << " to grow it)\n";
  else if (report.runs.empty())
    out << "nothing to run: the package holds " << report.kept.size() << " result(s), the " << report.required
        << " the spec asks for (--runs N to grow it, --replace to start it again)\n";
  else if (!report.kept.empty())
    out << "ran " << report.runs.size() << " more to reach " << report.required << "\n";
  if (!report.manifest.empty()) out << "run manifest: " << report.manifest << "\n";
}

// How the runs show while they go on (--progress): a line per event and per
// progress change, JSON lines, or (tty) a table redrawn in place.
class LiveView {
 public:
  explicit LiveView(std::string mode) : mode_(std::move(mode)), json_(mode_ == "json") {}

  void event(const std::string& e) {
    if (json_) {
      std::cout << harness::event_json(e) << "\n" << std::flush;
      return;
    }
    undraw();
    std::cout << "  " << caret_escape(e) << "\n" << std::flush;
  }

  void progress(const harness::ProgressModel& m, const std::vector<harness::RunProgress>& runs,
                const std::vector<size_t>& changed) {
    if (mode_ == "tty") {
      undraw();
      // One row per run, cut to the terminal's width (a wrapped line would spoil the redraw):
      // the key columns come first so that they show on a narrow terminal.
      struct winsize ws {};
      size_t width = ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col - 1 : 0;
      std::cout << harness::progress_header(width) << "\n";
      for (const auto& r : runs) std::cout << harness::progress_row(r, m, width) << "\n";
      drawn_ = runs.size() + 1;
      std::cout << std::flush;
      return;
    }
    for (size_t i : changed) {
      const auto& r = runs[i];
      if (json_) std::cout << harness::progress_json(r, m) << "\n";
      else if (r.state != "waiting")
        std::cout << "  progress " << r.id << " " << r.state << ": " << harness::progress_text(r.progress, m) << "\n";
    }
    std::cout << std::flush;
  }

  // Clears the table last drawn, so that what follows is not written over it.
  void undraw() {
    if (drawn_) std::cout << "\033[" << drawn_ << "A\033[J";
    drawn_ = 0;
  }

 private:
  std::string mode_;
  bool json_;
  size_t drawn_ = 0;
};

// Before the first run: the spec's effective values, the system, the rules.
void print_plan(const harness::PackageRun& p, const std::string& spec_path, std::ostream& say) {
  say << "referee run " << spec_path << "\n";
  for (const auto& [k, v] : p.spec.effective) say << "  " << k << " = " << v.first << "  (" << v.second << ")\n";
  say << "  system = " << p.spec.system << ", rules from " << p.rules_source.origin << "\n";
  if (p.described.from_node) say << "  system described from compute node " << p.described.node << "\n";
}

// The runs: a table, then a line for each thing a run has to say (its
// progress, a seed the log disagrees with, warnings, why it is or is not in
// the package, where its log is kept).
void print_runs(const harness::HarnessReport& report, std::ostream& say) {
  const harness::ProgressModel& model = *report.progress_model;
  // The seed given, and the logged one beside it when the workload logged another.
  auto seed_of = [](const harness::RunReport& r) {
    return std::to_string(r.seed) +
           (r.seed_note.empty() ? std::string() : " (log: " + std::to_string(r.logged_seed) + ")");
  };
  Table t({"run", "seed", "state", "time to train", "last eval", "verdict", "in package"});
  for (const auto& r : report.runs)
    t.add({r.id, seed_of(r), harness::state_word(r),
           r.has_time_to_train             ? harness::format_duration(r.time_to_train_ms / 1000.0)
           : r.progress.has_time_to_train ? harness::format_duration(r.progress.time_to_train_s) + " (no run_stop)"
                                          : "-",
           harness::eval_text(r.last_eval), harness::verdict_word(r),
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
}

// Why a benchmark directory of the package fails its check, one line each
// ("result count: found 2, expected 5", "seeds: ..."), for the summary and its JSON.
template <typename Dir>
std::vector<std::string> failure_lines(const Dir& d) {
  std::vector<std::string> out;
  for (const auto& e : d.errors) out.push_back(e.rule + ": " + e.message);
  for (const auto& e : d.seed_errors) out.push_back("seeds: " + e.message + (e.hint.empty() ? "" : " (" + e.hint + ")"));
  return out;
}

// The package: check-package's verdict and the score of each benchmark, the
// warnings about the system description, and after an interruption exactly
// what is on disk.
void print_package(const harness::PackageRun& run, const std::string& signal, std::ostream& say) {
  const harness::HarnessReport& report = run.report;
  const rules::PackageReport& pr = run.package;
  say << "\npackage: " << report.package_dir << " (" << (pr.pass ? "passes" : "FAILS") << " check-package with "
      << run.ruleset_id << ")\n";
  for (const auto& d : pr.benchmarks) {
    say << "  " << d.system << "/" << d.benchmark << ": " << d.result_count << "/" << d.expected_count
        << " result files";
    if (d.seeds_checked) say << ", seeds " << (d.seeds_ok ? "ok" : "FAIL");
    if (d.rcp_checked) say << ", RCP " << d.rcp.status << (d.rcp.pass ? "" : " FAIL");
    for (const auto& row : run.scores.rows)
      for (const auto& s : row.scores)
        if (s.benchmark == d.benchmark && s.system == d.system && s.has_score)
          say << ", score " << fixed(s.score, 4) << " min";
    say << "\n";
    for (const auto& line : failure_lines(d)) say << "    " << line << "\n";
  }
  if (!run.warnings.empty()) {
    say << "\nwarnings (" << run.warnings.size() << "):\n";
    for (const auto& w : run.warnings) say << "  " << w << "\n";
  }
  if (!report.interrupted) return;
  std::string never, logs;
  for (const auto& r : report.runs) {
    if (!r.launched) never += (never.empty() ? "" : ", ") + r.id;
    if (!r.kept_log.empty() && std::filesystem::exists(r.kept_log)) logs += "\n  " + r.kept_log;
  }
  if (!report.record_error.empty()) say << "\nstopped: " << report.record_error << ": " << report.interrupt_did;
  else say << "\ninterrupted by " << signal << (report.stopped_at_once ? ", then again: " : ": ") << report.interrupt_did;
  say
      << "\non disk: " << run.results_dir << " holds "
      << (run.on_disk.empty() ? std::string("no result files")
                              : std::to_string(run.on_disk.size()) + " result file(s):");
  for (const auto& n : run.on_disk) say << " " << n;
  say << "\n";
  if (!logs.empty()) say << "logs kept:" << logs << "\n";
  if (!never.empty()) say << "never started (no log, no result): " << never << "\n";
}

// --progress=json's last line: the summary.
std::string json_summary(const harness::PackageRun& run, const std::string& signal) {
  const harness::HarnessReport& report = run.report;
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("type").value("summary");
  w.key("interrupted").value(report.interrupted);
  w.key("signal").value(report.interrupted && report.record_error.empty() ? signal : std::string());
  if (!report.record_error.empty()) w.key("record_error").value(report.record_error);
  w.key("stopped_at_once").value(report.stopped_at_once);
  w.key("package").value(std::filesystem::absolute(report.package_dir).lexically_normal().string());
  w.key("manifest").value(report.manifest);
  w.key("package_pass").value(run.package.pass);
  // Why it fails, as the text summary says it: "cpu_node/minilm: result count: ...".
  w.key("package_problems").begin_array();
  for (const auto& d : run.package.benchmarks)
    for (const auto& line : failure_lines(d)) w.value(d.system + "/" + d.benchmark + ": " + line);
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& x : run.warnings) w.value(x);
  w.end_array();
  w.key("runs").begin_array();
  for (const auto& r : report.runs) {
    auto opt = [&](const char* k, const std::string& v) {
      w.key(k);
      if (v.empty()) w.null();
      else w.value(v);
    };
    w.begin_object().key("run").value(r.id).key("seed").value(r.seed).key("state").value(harness::state_word(r));
    w.key("verdict").value(harness::verdict_word(r));
    opt("result_file", r.result_file.empty() ? "" : std::filesystem::absolute(r.result_file).string());
    opt("left_out", r.left_out);
    opt("log", !r.kept_log.empty() && std::filesystem::exists(r.kept_log) ? r.kept_log : "");
    opt("output", !r.output_file.empty() && std::filesystem::exists(r.output_file) ? r.output_file : "");
    w.key("progress").raw(harness::progress_json(
        harness::RunProgress{r.id, harness::state_word(r), r.seconds, r.lines, r.progress}, *report.progress_model));
    w.end_object();
  }
  w.end_array();
  // The results of earlier invocations this one kept: the package is both.
  w.key("kept").begin_array();
  for (const auto& [k, result_file] : run.kept) {
    w.begin_object().key("run").value(k.run).key("invocation").value(k.invocation);
    w.key("seed");
    if (k.has_seed) w.value(k.seed);
    else w.null();
    w.key("state").value(k.state).key("verdict").value(k.verdict);
    w.key("result_file").value(result_file);
    w.key("reason").value(k.reason);
    w.end_object();
  }
  w.end_array().end_object();
  return w.str();
}

// --progress=json's last line when a signal came while the system was
// described on a compute node: stdout holds JSON lines only, the summary says
// what stderr says.
std::string json_describe_interrupted(const harness::PackageRun& run, const std::string& signal) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("type").value("summary");
  w.key("interrupted").value(true);
  w.key("signal").value(signal);
  w.key("stage").value("describe");
  w.key("describe_job").value(run.describe_job);
  w.key("runs").begin_array().end_array();
  w.end_object();
  return w.str();
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
              std::string mode = o->progress == "auto" ? (isatty(1) ? "tty" : "plain") : o->progress;
              bool json = mode == "json";
              // With --progress=json stdout holds only JSON lines; what is for a person goes to stderr.
              std::ostream& say = json ? std::cerr : std::cout;
              harness::PackageRequest req;
              req.spec_path = o->spec;
              req.backend = o->backend;
              req.runs = o->runs;
              req.parallel = o->parallel;
              req.system = o->system;
              req.system_description = o->system_description;
              req.out_dir = o->out;
              req.rules_root = o->rules;
              req.replace = o->replace;
              req.interrupt = &g_interrupt;
              req.stop_now = &g_stop_now;
              req.interrupt_signal = &g_signal;
              LiveView view(mode);
              harness::RunHooks hooks;
              hooks.interruptible = [](bool on) {
                if (!on) return default_interrupts();
                g_interrupt = false;
                g_stop_now = false;
                g_signal = 0;
                catch_interrupts();
              };
              // Warnings about the system description: said at once on stderr, and again in the summary.
              hooks.warning = [](const std::string& w) { std::cerr << "referee run: warning: " << w << "\n"; };
              hooks.starting = [&](const harness::PackageRun& p) { print_plan(p, o->spec, say); };
              hooks.event = [&](const std::string& e) { view.event(e); };
              hooks.progress = [&](const harness::ProgressModel& m, const std::vector<harness::RunProgress>& runs,
                                   const std::vector<size_t>& changed) { view.progress(m, runs, changed); };
              harness::PackageRun run = harness::run_package(req, hooks);
              view.undraw();
              std::string signal = harness::interrupt_name(g_signal.load());
              if (!run.ran) {
                std::cerr << "referee run: " << run.error << "\n";
                if (run.describe_interrupted && json) std::cout << json_describe_interrupted(run, signal) << "\n" << std::flush;
                return kCannotCheck;
              }
              // Summary: runs, verdicts, the package's checks and score. Log lines and
              // reasons quote the workload's text: control characters in caret notation.
              SafeTextFilter others_text(say);
              print_runs(run.report, say);
              if (!run.checked) {
                std::cerr << "referee run: " << run.error << "\n";
                return kCannotCheck;
              }
              print_package(run, signal, say);
              if (json) std::cout << json_summary(run, signal) << "\n" << std::flush;
              return run.report.interrupted ? kCannotCheck : run.package.pass ? kPass : kFail;
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
              harness::Environment env = harness::capture_environment(harness::capture_options(have_spec ? &spec : nullptr));
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
