#include "harness/runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
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

bool read_file(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
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
  // When the command names {log}: the file the workload writes is the log,
  // followed as it grows; its output (stdout and stderr) is kept apart.
  bool follows_file = false;
  unsigned long long offset = 0;
  std::string partial;
  std::string output;
  size_t output_mllog_lines = 0;
};

// Feeds what the workload added to its {log} file to the live checker, whole
// lines only (the last partial line too when `final`). Returns an
// irreparable finding once there is one. REQUIRES: l.mu held.
std::optional<rules::Finding> follow_log_file(Live& l, const rules::RuleSet& rules, bool final) {
  std::optional<rules::Finding> found;
  std::ifstream in(l.request.log_path, std::ios::binary);
  if (in) {
    in.seekg(0, std::ios::end);
    auto size = static_cast<unsigned long long>(std::max<std::streamoff>(0, in.tellg()));
    if (size < l.offset) {
      // The workload truncated its log and started it again: check it afresh.
      l.checker = std::make_unique<LiveChecker>(rules);
      l.offset = 0;
      l.partial.clear();
      l.report.lines = 0;
    }
    if (size > l.offset) {
      in.seekg(static_cast<std::streamoff>(l.offset));
      std::string chunk(static_cast<size_t>(size - l.offset), '\0');
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.resize(static_cast<size_t>(in.gcount()));
      l.offset += chunk.size();
      l.partial += chunk;
      size_t start = 0;
      for (size_t nl; (nl = l.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = l.partial.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        ++l.report.lines;
        if (auto f = l.checker->add_line(line); f && !found) found = f;
      }
      l.partial.erase(0, start);
    }
  }
  if (final && !l.partial.empty()) {
    ++l.report.lines;
    if (auto f = l.checker->add_line(l.partial); f && !found) found = f;
    l.partial.clear();
  }
  return found;
}

// The time, the process id and a count: each invocation keeps its runs' logs
// in a folder of its own, so no earlier log is ever overwritten or appended
// to (mllog appends to an existing file).
std::string invocation_stamp() {
  static std::atomic<int> count{0};
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + std::to_string(getpid()) + "-" + std::to_string(count++);
}

}  // namespace

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error) {
  *out = HarnessReport{};
  out->system = spec.system;
  fs::path pkg = fs::path(opt.out_dir) / spec.org;
  fs::path results = pkg / "results" / spec.system / spec.benchmark;
  std::error_code ec;
  // Absolute: a workload may run in another directory (workdir, a Slurm node) and must find {log}.
  fs::path logs = fs::absolute(fs::path(opt.out_dir), ec) / ".referee-runs" / spec.benchmark / invocation_stamp();
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

  // A command that names {log} writes its log there (mllog.config(filename=...)):
  // that file is the run's log; what it prints is only output.
  bool uses_log_file = false;
  for (const auto& a : spec.command) uses_log_file = uses_log_file || a.find("{log}") != std::string::npos;
  std::vector<std::unique_ptr<Live>> runs;
  for (int i = 0; i < spec.runs; ++i) {
    auto l = std::make_unique<Live>();
    l->report.index = i;
    l->report.seed = spec.seeds[static_cast<size_t>(i)];
    l->report.id = spec.benchmark + "-" + std::to_string(i);
    l->report.kept_log = (logs / (l->report.id + ".log")).string();
    l->follows_file = uses_log_file;
    if (uses_log_file) l->report.output_file = (logs / (l->report.id + ".out")).string();
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
        if (lp->follows_file) {
          lp->output += line;
          lp->output += '\n';
          if (line.find(mllog::kToken) != std::string::npos) ++lp->output_mllog_lines;
          return;
        }
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
      if (l.follows_file)
        if (auto f = follow_log_file(l, rules, false)) stop_run(l, *f);
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
      std::string err;
      if (l.follows_file) {
        // The workload's own file stays as it wrote it; its output goes beside it.
        if (auto f = follow_log_file(l, rules, true)) stop_run(l, *f);
        write_atomically(l.report.output_file, l.output, &err);
      } else if (!fs::exists(l.report.kept_log, ec)) {
        write_atomically(l.report.kept_log, l.checker->text(), &err);
      }
      if (opt.environment) {
        // The environment the run ran in, with what its log says of the submission.
        Environment env = *opt.environment;
        std::string log_text;
        env.submission = submission_fields(l.follows_file && read_file(l.report.kept_log, &log_text) ? log_text
                                                                                                   : l.checker->text());
        fs::path env_file = logs / (l.report.id + ".env.json");
        if (write_atomically(env_file, env.to_json(), &err)) l.report.environment_file = env_file.string();
        else event(l.report.id + ": " + err);
      }
      if (!l.report.aborted)
        if (auto f = l.checker->check_now()) stop_run(l, *f);
      l.report.verdict = l.checker->final_verdict();
      l.report.last_eval = l.checker->last_eval();
      event(l.report.id + ": " +
            (l.report.aborted ? "stopped by the live checker: " + l.report.abort_reason
                              : to_string(s.state) + (s.detail.empty() ? "" : " [" + s.detail + "]")));
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

  // The package: the runs that ended by themselves with exit status 0 and
  // whose whole log the rules find compliant, renumbered result_0.. in run
  // order. Every other run stays out, its log kept, with the reason.
  int n = 0;
  for (auto& lp : runs) {
    RunReport& r = lp->report;
    if (r.aborted) {
      r.left_out = "stopped by the live checker: " + r.abort_reason;
    } else if (r.status.state != RunState::Succeeded) {
      r.left_out = std::string(to_string(r.status.state)) + (r.status.detail.empty() ? "" : " (" + r.status.detail + ")");
    } else if (!r.verdict.compliant) {
      if (lp->follows_file && lp->checker->mllog_lines() == 0)
        r.left_out = "its log " + r.kept_log + (fs::exists(r.kept_log, ec) ? " has no MLLOG lines" : " was never written") +
                     " (the command names {log}, so the harness reads that file)" +
                     (lp->output_mllog_lines ? "; its output had " + std::to_string(lp->output_mllog_lines) +
                                                   " MLLOG lines (kept in " + r.output_file +
                                                   "): the workload must write its log to the path {log} gives"
                                             : std::string());
      else if (!r.verdict.errors.empty())
        r.left_out = "its log is not compliant: " +
                     (r.verdict.errors[0].line ? "line " + std::to_string(r.verdict.errors[0].line) + ": " : std::string()) +
                     r.verdict.errors[0].rule + ": " + r.verdict.errors[0].message;
      else
        r.left_out = "its log is not compliant";
    }
    if (!r.left_out.empty()) continue;
    fs::path f = results / ("result_" + std::to_string(n++) + ".txt");
    std::string text = lp->checker->text();
    // The workload's file, byte for byte, when it wrote one.
    if (lp->follows_file && !read_file(r.kept_log, &text)) {
      *error = "cannot read " + r.kept_log;
      return false;
    }
    if (!write_atomically(f, text, error)) return false;
    r.result_file = f.string();
  }
  for (auto& lp : runs) out->runs.push_back(lp->report);
  return true;
}

}  // namespace referee::harness
