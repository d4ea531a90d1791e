#include "harness/runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "harness/live_check.h"
#include "harness/system_describe.h"

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

using Clock = std::chrono::steady_clock;

// Writes `text` to `path` through a temporary file and a rename.
bool write_atomically(const fs::path& path, const std::string& text, std::string* error) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(getpid());
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o << text;
    o.flush();
    if (!o) {
      *error = "cannot write " + tmp.string();
      std::error_code ec;
      fs::remove(tmp, ec);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    *error = "cannot write " + path.string() + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

struct Live {
  RunReport report;
  RunRequest request;
  std::unique_ptr<RunHandle> handle;
  std::unique_ptr<LiveChecker> checker;
  std::mutex mu;
  Clock::time_point started;
  bool launched = false, finished = false;
};

}  // namespace

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error) {
  *out = HarnessReport{};
  out->system = spec.system;
  fs::path pkg = fs::path(opt.out_dir) / spec.org;
  fs::path results = pkg / "results" / spec.system / spec.benchmark;
  fs::path logs = fs::path(opt.out_dir) / ".referee-runs" / spec.benchmark;
  std::error_code ec;
  // The system description must be one the consortium's tools can read, before any run starts.
  if (auto problems = consortium_read_problems(opt.system_json); !problems.empty()) {
    *error = "the system description " + spec.system + ".json cannot be read by the consortium's tools (nothing was run):";
    for (const auto& p : problems) *error += "\n  " + p;
    return false;
  }
  fs::create_directories(results, ec);
  fs::create_directories(pkg / "systems", ec);
  fs::create_directories(logs, ec);
  if (ec) {
    *error = "cannot create " + results.string() + ": " + ec.message();
    return false;
  }
  out->package_dir = pkg.string();
  if (!write_atomically(pkg / "systems" / (spec.system + ".json"), opt.system_json, error)) return false;
  // A package holds exactly the runs of this invocation: earlier result files go.
  for (const auto& e : fs::directory_iterator(results, ec))
    if (e.path().filename().string().rfind("result_", 0) == 0) fs::remove(e.path(), ec);

  std::vector<std::unique_ptr<Live>> runs;
  for (int i = 0; i < spec.runs; ++i) {
    auto l = std::make_unique<Live>();
    l->report.index = i;
    l->report.seed = spec.seeds[static_cast<size_t>(i)];
    l->report.id = spec.benchmark + "-" + std::to_string(i);
    l->report.kept_log = (logs / (l->report.id + ".log")).string();
    RunRequest& r = l->request;
    r.id = l->report.id;
    r.benchmark = spec.benchmark;
    r.run_index = i;
    r.seed = l->report.seed;
    r.log_path = l->report.kept_log;
    r.command = expand_command(spec.command, r.seed, i, r.log_path);
    r.env = spec.env;
    r.workdir = spec.workdir;
    r.timeout = std::chrono::seconds(spec.timeout_s);
    r.options = spec.backend_options;
    if (std::string(backend.name()) == "builtin") {  // what the mini workloads take; other backends run commands
      if (spec.batch_size > 0) r.options["batch_size"] = std::to_string(spec.batch_size);
      r.options["division"] = spec.division;
      r.options["org"] = spec.org;
    }
    l->checker = std::make_unique<LiveChecker>(rules);
    runs.push_back(std::move(l));
  }

  int parallel = spec.parallel > 0 ? spec.parallel
                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t next = 0;
  int active = 0;
  auto event = [&](const std::string& s) {
    if (opt.event) opt.event(s);
  };
  auto stop_run = [&](Live& l, const rules::Finding& f) {
    // REQUIRES: l.mu held
    if (l.report.aborted) return;
    l.report.aborted = true;
    l.report.abort_reason = (f.line ? "line " + std::to_string(f.line) + ": " : std::string()) + f.rule + ": " +
                            f.message + (f.found.empty() ? "" : " (found " + f.found + ")");
    if (l.handle) l.handle->cancel("stopped by the live checker: " + l.report.abort_reason);
  };
  auto last_status = Clock::now();
  while (true) {
    bool interrupted = opt.interrupt && opt.interrupt->load();
    if (interrupted && !out->interrupted) {
      out->interrupted = true;
      event("interrupted: cancelling every run");
      for (auto& l : runs) {
        std::lock_guard<std::mutex> lock(l->mu);
        if (l->handle && !l->finished) l->handle->cancel("interrupted (Ctrl-C)");
      }
    }
    while (!out->interrupted && active < parallel && next < runs.size()) {
      Live& l = *runs[next++];
      l.started = Clock::now();
      std::string err;
      Live* lp = &l;
      auto h = backend.launch(l.request, [lp, &stop_run](const std::string&, const std::string& line) {
        std::lock_guard<std::mutex> lock(lp->mu);
        ++lp->report.lines;
        if (auto f = lp->checker->add_line(line)) stop_run(*lp, *f);
      }, &err);
      std::lock_guard<std::mutex> lock(l.mu);
      if (!h) {
        l.finished = true;
        l.report.status.state = RunState::Failed;
        l.report.status.detail = err;
        event(l.report.id + ": could not start: " + err);
        continue;
      }
      l.handle = std::move(h);
      l.launched = true;
      ++active;
      event(l.report.id + ": started (seed " + std::to_string(l.report.seed) + ")");
    }
    bool all_done = true;
    for (auto& lp : runs) {
      Live& l = *lp;
      std::lock_guard<std::mutex> lock(l.mu);
      if (l.finished) continue;
      if (!l.launched) {
        if (!out->interrupted) all_done = false;
        continue;
      }
      // A run that went quiet is still checked on time.
      if (auto f = l.checker->check_now()) stop_run(l, *f);
      RunStatus s = l.handle->poll();
      if (s.state == RunState::Running || s.state == RunState::Pending) {
        all_done = false;
        continue;
      }
      l.finished = true;
      --active;
      l.report.status = s;
      l.report.seconds = std::chrono::duration<double>(Clock::now() - l.started).count();
      l.report.verdict = l.checker->final_verdict();
      l.report.last_eval = l.checker->last_eval();
      std::string err;
      write_atomically(l.report.kept_log, l.checker->text(), &err);
      event(l.report.id + ": " + to_string(s.state) + (l.report.aborted ? " (aborted: " + l.report.abort_reason + ")" : "") +
            (s.detail.empty() ? "" : " [" + s.detail + "]"));
    }
    if (opt.status && Clock::now() - last_status > std::chrono::seconds(1)) {
      last_status = Clock::now();
      std::vector<std::string> lines;
      for (auto& lp : runs) {
        std::lock_guard<std::mutex> lock(lp->mu);
        char buf[256];
        double el = !lp->launched ? 0
                    : lp->finished ? lp->report.seconds
                                   : std::chrono::duration<double>(Clock::now() - lp->started).count();
        std::snprintf(buf, sizeof buf, "%-16s %-10s %7.1f s  %6zu lines  eval %s", lp->report.id.c_str(),
                      !lp->launched ? "waiting" : lp->finished ? (lp->report.aborted ? "aborted" : to_string(lp->report.status.state)) : "running",
                      el, lp->report.lines, lp->checker->last_eval().empty() ? "-" : lp->checker->last_eval().c_str());
        lines.push_back(buf);
      }
      opt.status(lines);
    }
    if (all_done && active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // The package: the runs that finished, renumbered result_0.. in run order.
  int n = 0;
  for (auto& lp : runs) {
    RunReport& r = lp->report;
    if (r.aborted || r.status.state != RunState::Succeeded) continue;
    fs::path f = results / ("result_" + std::to_string(n++) + ".txt");
    if (!write_atomically(f, lp->checker->text(), error)) return false;
    r.result_file = f.string();
  }
  for (auto& lp : runs) out->runs.push_back(lp->report);
  return true;
}

}  // namespace referee::harness
