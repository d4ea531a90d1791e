#include "harness/run_package.h"

#include <filesystem>
#include <set>

#include "base/subprocess.h"
#include "harness/backends/registry.h"
#include "harness/backends/slurm.h"
#include "harness/environment/system_describe.h"
#include "harness/preflight.h"
#include "harness/spec_options.h"
#include "rules/facts.h"

namespace referee::harness {

namespace {

namespace fs = std::filesystem;

void say_interruptible(const RunHooks& hooks, bool on) {
  if (hooks.interruptible) hooks.interruptible(on);
}

// The manifest's entries of the runs in the package that this invocation did
// not run (kept from earlier ones, or found in the package).
std::vector<KeptRun> kept_runs(const HarnessReport& report, const std::string& out_dir) {
  std::vector<KeptRun> out;
  if (report.manifest.empty() || report.kept.empty()) return out;
  Manifest m;
  bool existed = false;
  std::string error;
  std::string benchmark = fs::path(report.manifest).parent_path().filename().string();
  if (!load_manifest(report.manifest, benchmark, &m, &existed, &error)) return out;
  std::set<std::string> ours;
  for (const auto& r : report.runs)
    if (!r.result_file.empty()) ours.insert(fs::path(r.result_file).filename().string());
  std::string org = fs::path(report.package_dir).filename().string();
  for (const auto& r : m.runs)
    if (r.package == "in" && r.org == org && r.system == report.system &&
        !ours.count(fs::path(r.result_file).filename().string()))
      out.push_back({r, resolve_in(out_dir, r.result_file)});
  return out;
}

// The names in `dir` that start with "result_", sorted as text: what an interrupted run left there.
std::vector<std::string> result_names_in(const fs::path& dir) {
  std::error_code ec;
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("result_", 0) == 0) names.insert(e.path().filename().string());
  return std::vector<std::string>(names.begin(), names.end());
}

int signal_of(const PackageRequest& request) { return request.interrupt_signal ? request.interrupt_signal->load() : 0; }

}  // namespace

CaptureOptions capture_options(const Spec* spec) {
  CaptureOptions c;
  if (spec) {
    c.command = spec->command;
    c.workdir = spec->workdir;
    c.env = spec->env;
  }
  return c;
}

PackageRun run_package(const PackageRequest& request, const RunHooks& hooks) {
  PackageRun out;
  Spec& spec = out.spec;
  std::string error;
  if (!load_spec(request.spec_path, &spec, &error)) {
    out.error = error;
    return out;
  }
  if (!request.backend.empty()) set_from_flag(&spec, "backend", request.backend);
  if (request.runs > 0) set_from_flag(&spec, "runs", std::to_string(request.runs));
  if (request.parallel > 0) set_from_flag(&spec, "parallel", std::to_string(request.parallel));
  if (!request.system.empty()) set_from_flag(&spec, "system", request.system);
  if (!request.system_description.empty()) spec.system_description = request.system_description;
  if (spec.ruleset.empty()) {
    out.error = request.spec_path;
    out.error.append(": the spec names no rule set: add a line such as 'ruleset: training-5.1.0' "
                     "(`referee rules list` shows the rule sets there are)");
    return out;
  }
  auto rs = rules::resolve_ruleset(spec.ruleset, request.rules_root, &out.rules_source, &error);
  if (!rs) {
    auto line = spec.lines.find("ruleset");
    std::string e = request.spec_path;
    if (line != spec.lines.end()) e.append(":").append(std::to_string(line->second));
    e.append(": ruleset: ").append(error);
    out.error = e;
    return out;
  }
  out.ruleset_id = rs->id().id();
  rules::RoundFacts facts;
  if (!rules::facts_for(*rs, &facts, &error)) {
    out.error = error;
    return out;
  }
  const rules::BenchmarkFacts* bf = facts.find(spec.benchmark);
  if (!bf) {
    std::string list;
    for (const auto& b : facts.benchmarks) list += (list.empty() ? "" : ", ") + b.name;
    auto line = spec.lines.find("benchmark");
    out.error = request.spec_path + (line == spec.lines.end() ? "" : ":" + std::to_string(line->second)) + ": " +
                (spec.benchmark.empty() ? "the spec names no benchmark (benchmark: NAME)"
                                        : "'" + spec.benchmark + "' is not a benchmark") +
                " of " + out.ruleset_id + " (" + list + ")";
    return out;
  }
  if (!finalize_spec(&spec, bf->runs, &error)) {
    out.error = error;
    return out;
  }
  auto backend = make_backend(spec.backend, &error);
  if (!backend) {
    out.error = error;
    return out;
  }
  // What would refuse or fail every run, before anything is written, any seed given out or any job submitted.
  if (std::string refusal = setup_refusal(spec, *backend, *rs, request.out_dir, request.replace); !refusal.empty()) {
    out.error = refusal;
    return out;
  }
  {
    fs::path results = fs::path(request.out_dir) / spec.org / "results" / spec.system / spec.benchmark;
    int held = 0;
    std::error_code ec;
    if (!request.replace && !spec.system.empty())
      for (const auto& e : fs::directory_iterator(results, ec))
        held += e.path().filename().string().rfind("result_", 0) == 0 ? 1 : 0;
    int to_run = std::max(0, spec.runs - held);
    fs::path log = fs::absolute(request.out_dir, ec) / ".referee-runs" / spec.benchmark / "preflight.log";
    RunRequest sample = request_for(spec, *backend, spec.benchmark + "-0", 0, spec.seed_base, log.string());
    if (to_run > 0 && !preflight(spec, *backend, sample, request.out_dir, results.string(), to_run, &error)) {
      out.error = error;
      return out;
    }
  }
  // The system description, complete, before any run starts.
  Environment environment = capture_environment(capture_options(&spec));
  // On Slurm: from a compute node of the allocation (docs/slurm.md).
  NodeDescription& described = out.described;
  described.env = environment;
  auto warn = [&](const std::string& w) {
    out.warnings.push_back(w);
    if (hooks.warning) hooks.warning(w);
  };
  if (spec.backend == "slurm") {
    fs::path work = fs::path(request.out_dir) / ".referee-runs" / spec.benchmark;
    say_interruptible(hooks, true);  // a signal cancels the describe job
    bool described_ok = describe_from_node(spec, request.spec_path, base::self_binary(), work.string(), {}, environment,
                                           &described, &error, request.interrupt);
    say_interruptible(hooks, false);
    if (!described_ok) {
      out.error = request.spec_path + ": " + error;
      return out;
    }
    if (described.interrupted) {
      std::string job = described.ended == "cancelled"
                            ? std::string("the describe job was cancelled")
                            : "the describe job had already ended (" + described.ended + "): nothing to cancel";
      out.describe_interrupted = true;
      out.describe_job = described.ended;
      out.error = "interrupted by " + interrupt_name(signal_of(request)) +
                  " while the system was being described on a compute node (" + job + "); nothing was run";
      return out;
    }
    if (!described.warning.empty()) warn(described.warning);
  }
  SystemDescription sys;
  if (!describe_system(spec.system_description, spec.system, &sys, &error, &described.env)) {
    out.error = error;
    return out;
  }
  for (const auto& w : sys.warnings) warn(w);
  sys.fields["division"] = spec.division;
  sys.fields["submitter"] = sys.fields.count("submitter") ? sys.fields["submitter"] : spec.org;
  for (const auto& w : apply_allocation(spec, &sys)) warn(w);
  sys.missing.clear();
  for (const auto& f : rules::required_system_fields())
    if (!sys.fields.count(f)) sys.missing.push_back(f);
  if (!sys.missing.empty()) {
    std::string list;
    for (const auto& f : sys.missing) list += "\n  " + f;
    out.error = "the system description lacks required fields (nothing was run):" + list +
                (spec.system_description.empty()
                     ? std::string("\nfix: put them in a YAML file and pass --system-description FILE (see "
                                   "'referee system describe')")
                     : "\nfix: add them to " + spec.system_description +
                           (request.system_description.empty() ? " (the spec's system_description)"
                                                               : " (--system-description)") +
                           "; 'referee system describe --from " + spec.system_description +
                           "' shows what is detected and what is missing");
    return out;
  }
  if (spec.system.empty()) spec.system = sys.fields["system_name"];
  if (auto* slurm = dynamic_cast<SlurmBackend*>(backend.get()); slurm && captures_on_node(spec))
    slurm->capture_on_node(base::self_binary(), fs::absolute(request.spec_path).string());
  if (hooks.starting) hooks.starting(out);

  RunnerOptions ropt;
  ropt.out_dir = request.out_dir;
  ropt.system_json = sys.to_json();
  ropt.environment = &environment;
  ropt.interrupt = request.interrupt;
  ropt.stop_now = request.stop_now;
  ropt.interrupt_signal = request.interrupt_signal;
  ropt.replace = request.replace;
  ropt.event = hooks.event;
  ropt.progress = hooks.progress;
  say_interruptible(hooks, true);
  bool ran = run_harness(spec, *backend, *rs, ropt, &out.report, &error);
  out.report.rules_required = bf->runs;
  // Past this point a signal ends referee at once: everything it wrote is whole (atomic renames).
  say_interruptible(hooks, false);
  if (!ran) {
    out.error = error;
    return out;
  }
  out.ran = true;
  const HarnessReport& report = out.report;
  out.kept = kept_runs(report, request.out_dir);
  out.results_dir = (fs::path(report.package_dir) / "results" / spec.system / spec.benchmark).string();
  // After an interruption: exactly what is on disk.
  if (report.interrupted) out.on_disk = result_names_in(out.results_dir);

  rules::PackageOptions popt;
  if (!rules::check_package(*rs, facts, report.package_dir, popt, &out.package, &error)) {
    out.error = error;
    return out;
  }
  out.scores = rules::score_package(out.package, facts, rules::ScaleMode::Published);
  out.checked = true;
  return out;
}

}  // namespace referee::harness
