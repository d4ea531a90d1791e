#include "harness/runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "base/digest.h"
#include "base/file.h"
#include "base/lines.h"
#include "base/utc_time.h"
#include "harness/backends/slurm.h"
#include "harness/live_check.h"
#include "harness/manifest.h"
#include "harness/environment/node_environment.h"
#include "harness/run_output.h"
#include "harness/run_words.h"
#include "harness/environment/system_describe.h"
#include "mllog/json.h"
#include "rules/facts.h"

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

using Clock = std::chrono::steady_clock;

struct Live {
  RunReport report;
  RunRequest request;
  std::unique_ptr<RunHandle> handle;
  std::unique_ptr<LiveChecker> checker;
  std::unique_ptr<ProgressTracker> tracker;
  uint64_t progress_seen = 0;  // tracker events at the last progress call
  std::string state_seen;      // state at the last progress call
  std::mutex mu;
  Clock::time_point started;
  bool launched = false, finished = false;
  // When the command names {log}: the file the workload writes is the log,
  // followed as it grows; its output (stdout and stderr) is kept apart.
  bool follows_file = false;
  unsigned long long offset = 0;
  base::LineSplitter split;
  // The file's first bytes as read and its inode: a workload that truncates
  // or replaces its log and writes it again (open with "w") is seen even when
  // the new file is already longer than what was read.
  std::string log_head;
  unsigned long long log_inode = 0;
  // Its output, when the backend keeps no file of it: lines that came before
  // launch() returned, then <run>.out written as they come.
  bool output_decided = false;
  std::string output_early;
  std::FILE* output_out = nullptr;
  std::string output_error;
  size_t output_mllog_lines = 0;
  std::string last_output;   // the last line it printed with something in it (cut to a few hundred bytes)
  size_t entry = 0;  // its record in the manifest, once launched
  // Launched but waiting in the backend's queue (a Slurm job PENDING): why, as
  // the backend says ("slurm state PENDING (Resources)"); "" once it runs.
  bool queued = false;
  std::string queued_why;
  // Runs of the same launch (a Slurm job of several runs) share this count of
  // those not yet ended: the launch takes one of `parallel` until the last ends.
  std::shared_ptr<int> unit_left;
  std::string keep_error;  // why its log could not be written whole when it ended ("" when it was)
  ~Live() {
    if (output_out) std::fclose(output_out);
  }
};

// Feeds what the workload added to its {log} file to the live checker, whole
// lines only (the last partial line too when `final`). Returns an
// irreparable finding once there is one. REQUIRES: l.mu held.
std::optional<rules::Finding> follow_log_file(Live& l, const rules::RuleSet& rules, bool final) {
  std::optional<rules::Finding> found;
  auto line = [&](std::string_view text, size_t) {
    ++l.report.lines;
    l.tracker->add_line(text);
    if (auto f = l.checker->add_line(text); f && !found) found = f;
  };
  int fd = ::open(l.request.log_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      auto size = static_cast<unsigned long long>(st.st_size);
      bool restarted = l.offset > 0 && (size < l.offset || static_cast<unsigned long long>(st.st_ino) != l.log_inode);
      if (!restarted && !l.log_head.empty()) {
        char head[256];
        ssize_t n = ::pread(fd, head, l.log_head.size(), 0);
        restarted = n != static_cast<ssize_t>(l.log_head.size()) || l.log_head.compare(0, l.log_head.size(), head, n) != 0;
      }
      l.log_inode = static_cast<unsigned long long>(st.st_ino);
      if (restarted) {
        // The workload truncated (or replaced) its log and wrote it again: check it afresh.
        l.checker = std::make_unique<LiveChecker>(rules);
        l.tracker->reset();
        l.offset = 0;
        l.split.reset();
        l.report.lines = 0;
        l.log_head.clear();
      }
      // In pieces, as far as the file goes now: memory holds a piece and a line, not what was added.
      char buf[1 << 16];
      while (l.offset < size) {
        ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(l.offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (l.offset < 256 && l.log_head.size() == l.offset)
          l.log_head.append(buf, std::min<size_t>(static_cast<size_t>(n), 256 - l.log_head.size()));
        l.offset += static_cast<unsigned long long>(n);
        l.split.feed(std::string_view(buf, static_cast<size_t>(n)), line);
      }
    }
    ::close(fd);
  }
  if (final) l.split.finish(line);
  return found;
}

// What a run printed: counted, its last line with something in it kept, and,
// when the backend keeps no file of it, written to <run>.out as it comes.
// REQUIRES: l.mu held.
void take_output(Live& l, const std::string& line) {
  // Slurm's own notes (srun: ..., slurmstepd: ...) do not hide what the workload said last.
  bool slurm_note = line.rfind("srun: ", 0) == 0 || line.rfind("slurmstepd: ", 0) == 0;
  if (line.find_first_not_of(" \t\r") != std::string::npos && (!slurm_note || l.last_output.empty()))
    l.last_output = line.size() > 4 * kLastLineMax ? line.substr(0, 4 * kLastLineMax) : line;
  if (!l.follows_file) return;
  if (line.find(mllog::kToken) != std::string::npos) ++l.output_mllog_lines;
  if (!l.output_decided) {
    l.output_early.append(line).push_back('\n');
  } else if (l.output_out) {
    if (std::fwrite(line.data(), 1, line.size(), l.output_out) != line.size() || std::fputc('\n', l.output_out) == EOF)
      if (l.output_error.empty()) l.output_error = "cannot write " + l.report.output_file + ": " + std::strerror(errno);
  }
}

// Once launch() returned: where the output of a run that names {log} is kept.
// The backend's own file (exec, slurm) when it keeps one, else <run>.out.
// REQUIRES: l.mu held.
void decide_output(Live& l, const std::string& backend_file) {
  if (!l.follows_file || l.output_decided) return;
  l.output_decided = true;
  if (!backend_file.empty()) {
    l.report.output_file = backend_file;
  } else {
    l.output_out = std::fopen(l.report.output_file.c_str(), "we");
    if (!l.output_out) l.output_error = "cannot write " + l.report.output_file + ": " + std::strerror(errno);
    else if (std::fwrite(l.output_early.data(), 1, l.output_early.size(), l.output_out) != l.output_early.size())
      l.output_error = "cannot write " + l.report.output_file + ": " + std::strerror(errno);
  }
  std::string().swap(l.output_early);
}

// Closes <run>.out; its error, if writing it failed. REQUIRES: l.mu held.
std::string close_output(Live& l) {
  decide_output(l, "");
  if (l.output_out) {
    if (std::fclose(l.output_out) != 0 && l.output_error.empty())
      l.output_error = "cannot write " + l.report.output_file + ": " + std::strerror(errno);
    l.output_out = nullptr;
  }
  return l.output_error;
}

// The time, the process id and a count: each invocation keeps its runs' logs
// in a folder of its own, so no earlier log is ever overwritten or appended
// to (mllog appends to an existing file).
std::string invocation_stamp() {
  static std::atomic<int> count{0};
  return base::utc_now(base::UtcFormat::Compact) + "-" + std::to_string(getpid()) + "-" + std::to_string(count++);
}

// ---------------------------------------------------------------- the package and its manifest

// What the runs of a package share, as recorded with each run (ManifestRun).
struct Setup {
  std::string command, ruleset, system_sha256;
};

// The command as the spec gives it (placeholders unexpanded), with the
// environment it sets before it; for the builtin backend, the workload and
// its batch size.
std::string setup_command(const Spec& spec, const Backend& backend) {
  std::string out;
  for (const auto& [k, v] : spec.env) out.append(slurm::shell_words({k + "=" + v})).append(" ");
  if (spec.command.empty()) {
    out.append(backend.name()).append(" ").append(spec.benchmark);
    if (spec.batch_size > 0) out.append(" batch_size=").append(std::to_string(spec.batch_size));
    return out;
  }
  out += slurm::shell_words(spec.command);
  // Runs made with another cache clearing (or none) are another setup.
  if (!spec.cache_clear.empty()) out.append(" (cache_clear: ").append(slurm::shell_words(spec.cache_clear)).append(")");
  return out;
}

// The top-level fields of two system descriptions that differ: "framework
// was \"PyTorch 2.1\", now \"JAX 0.4\"" (at most a few, then how many more).
std::vector<std::string> system_changes(const std::string& before, const std::string& now) {
  mllog::Json a, b;
  std::string err;
  std::vector<std::string> out;
  if (!mllog::parse_json_permissive(before, &a, &err) || !mllog::parse_json_permissive(now, &b, &err) ||
      a.kind != mllog::Json::Kind::Object || b.kind != mllog::Json::Kind::Object)
    return out;
  auto text = [](const mllog::Json* v) -> std::string {
    if (!v) return "(none)";
    if (v->kind == mllog::Json::Kind::String) return "\"" + v->s + "\"";
    if (v->kind == mllog::Json::Kind::Int) return std::to_string(v->i);
    return "(a value)";
  };
  std::set<std::string> names;
  for (const auto& [k, v] : a.fields) names.insert(k);
  for (const auto& [k, v] : b.fields) names.insert(k);
  size_t changed = 0;
  for (const auto& k : names) {
    const mllog::Json *x = a.find(k), *y = b.find(k);
    std::string tx = text(x), ty = text(y);
    bool same = x && y && x->kind == y->kind && tx == ty && (tx != "(a value)");
    if (same) continue;
    if (x && y && tx == "(a value)" && ty == "(a value)") continue;  // lists and numbers aside
    if (++changed <= 4) out.push_back(k + " was " + tx + ", now " + ty);
  }
  if (changed > 4) out.push_back("and " + std::to_string(changed - 4) + " more field(s)");
  return out;
}

}  // namespace

RunRequest request_for(const Spec& spec, const Backend& backend, const std::string& id, int index, long long seed,
                       const std::string& log_path) {
  RunRequest r;
  r.id = id;
  r.benchmark = spec.benchmark;
  r.run_index = index;
  r.seed = seed;
  r.log_path = log_path;
  r.command = expand_command(spec.command, seed, index, log_path);
  r.env = spec.env;
  r.env[kRunTokenVar] = make_run_token(id);  // finds its processes that leave its group (RunStatus::leftovers)
  r.workdir = spec.workdir;
  r.timeout = std::chrono::seconds(spec.timeout_s);
  r.options = spec.backend_options;
  r.cache_clear = expand_command(spec.cache_clear, seed, index, log_path);
  for (const auto& a : spec.command) r.log_is_file = r.log_is_file || a.find("{log}") != std::string::npos;
  if (std::string(backend.name()) == "builtin") {  // what the mini workloads take; other backends run commands
    if (spec.batch_size > 0) r.options["batch_size"] = std::to_string(spec.batch_size);
    r.options["division"] = spec.division;
    r.options["org"] = spec.org;
  }
  return r;
}

namespace {

// The refusal of a resume whose setup is not that of the results the package
// holds ("" when it is, or when the package holds none): the command, the rule
// set and, unless `system_json` is "", the system description (the fields
// that changed, against the one written with them).
std::string setup_changes(const Manifest& manifest, const Spec& spec, const Setup& now, const std::string& out_dir,
                          const std::string& system_json) {
  std::vector<std::string> changes;
  std::set<std::string> seen;
  size_t held = 0;
  for (const auto& r : manifest.runs) {
    if (r.org != spec.org || (!spec.system.empty() && r.system != spec.system) || r.package != "in") continue;
    ++held;
    auto differs = [&](const std::string& what, const std::string& was, const std::string& is) {
      if (was.empty() || was == is || !seen.insert(what + "\n" + was).second) return;
      changes.push_back(what + ": was " + was + ", now " + is);
    };
    differs("command", r.command, now.command);
    differs("rule set", r.ruleset, now.ruleset);
    if (!system_json.empty() && !r.system_sha256.empty() && r.system_sha256 != now.system_sha256 &&
        seen.insert("system").second) {
      std::string before;
      std::ifstream in(fs::path(out_dir) / spec.org / "systems" / (spec.system + ".json"), std::ios::binary);
      before.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      auto fields = system_changes(before, system_json);
      std::string what = "system description " + spec.system + ".json";
      if (fields.empty()) changes.push_back(what + ": changed since those results were made");
      for (const auto& f : fields) changes.push_back(what + ": " + f);
    }
  }
  if (changes.empty()) return "";
  std::string error = "the package already holds " + std::to_string(held) + " result(s) of " + spec.benchmark +
                      " made with another setup (nothing was run):";
  for (const auto& c : changes) error.append("\n  ").append(c);
  error += "\nhint: the results of a package share one setup (the consortium's checkers compare them): run with "
           "the earlier setup to add to them, or with --replace to take them out and start the package over";
  return error;
}

// The package's record for this invocation: the manifest, resumed, and the
// runs the package still lacks (result number to fill, seed).
struct PackagePlan {
  Manifest manifest;
  ManifestLock lock;
  std::string manifest_path, out_dir, invocation;
  std::vector<std::pair<int, long long>> runs;
  std::set<int> numbers;  // result_<n>.txt numbers the package holds
  std::string target_metric = "eval_accuracy";
  int allowed_failures = 1;
  std::string error;      // the first failure to write the package or its record
  std::string org, system, division, benchmark;
  Setup setup;            // recorded with each run this invocation starts
};

int result_number(const std::string& file) {
  std::string name = fs::path(file).filename().string();
  if (name.rfind("result_", 0) != 0 || name.size() <= 11) return -1;
  try {
    return std::stoi(name.substr(7, name.size() - 11));
  } catch (...) {
    return -1;
  }
}

bool plan_package(const Spec& spec, const rules::RuleSet& rules, const RunnerOptions& opt, const fs::path& results,
                  const fs::path& logs, HarnessReport* out, PackagePlan* p, std::string* error) {
  std::error_code ec;
  p->out_dir = fs::absolute(fs::path(opt.out_dir), ec).string();
  fs::path work = logs.parent_path();
  p->invocation = logs.filename().string();
  p->manifest_path = (work / "manifest.json").string();
  out->manifest = p->manifest_path;
  out->required = spec.runs;
  if (!p->lock.acquire((work / "manifest.lock").string(), error)) return false;
  bool existed = false;
  if (!load_manifest(p->manifest_path, spec.benchmark, &p->manifest, &existed, error)) return false;
  Reconciled rec;
  if (!reconcile_package(&p->manifest, p->manifest_path, p->out_dir, results.string(), spec.org, spec.system, rules,
                         opt.replace, &rec, error))
    return false;
  // The results the package holds were made with one setup: another one is refused, not mixed in.
  if (!opt.replace) {
    *error = setup_changes(p->manifest, spec, p->setup, opt.out_dir, opt.system_json);
    if (!error->empty()) return false;
  }
  out->removed = rec.removed;
  out->resumed = rec.messages;
  for (const auto& f : rec.removed)
    if (opt.event) opt.event("removed " + f + " (--replace)");
  for (const auto& m : rec.messages)
    if (opt.event) opt.event("resume: " + m);
  rules::RoundFacts facts;
  std::string ferr;
  if (rules::facts_for(rules, &facts, &ferr))
    if (const auto* bf = facts.find(spec.benchmark)) p->allowed_failures = bf->allowed_failures;
  p->target_metric = rules::quality_target(rules, spec.benchmark).metric;

  std::set<long long> used, in_package;
  int kept = 0;
  for (const auto& r : p->manifest.runs) {
    if (r.has_seed) used.insert(r.seed);
    if (r.org != spec.org || r.system != spec.system || r.package != "in") continue;
    ++kept;
    if (r.has_seed) in_package.insert(r.seed);
    if (int n = result_number(r.result_file); n >= 0) p->numbers.insert(n);
    out->kept.push_back(fs::path(r.result_file).filename().string() + " (" + r.run + ", seed " +
                        (r.has_seed ? std::to_string(r.seed) : std::string("none")) + ", " +
                        (r.invocation.empty() ? std::string("found in the package") : r.invocation) + ")");
  }
  // Pinned seeds: the spec lists them. Otherwise fresh ones.
  auto seeds_from = spec.effective.find("seeds");
  bool pinned = seeds_from != spec.effective.end() && seeds_from->second.second != "default";
  std::set<long long> taken;
  std::set<int> planned = p->numbers;
  for (int k = 0, n = 0; k < spec.runs - kept; ++k) {
    while (planned.count(n)) ++n;
    planned.insert(n);
    long long seed = 0;
    if (!choose_seed(pinned ? spec.seeds : std::vector<long long>{}, spec.seed_base, n, spec.runs, used, in_package,
                     &taken, &seed)) {
      size_t held = 0;
      for (long long x : spec.seeds) held += in_package.count(x);
      *error = "the spec pins " + std::to_string(spec.seeds.size()) + " seeds and the package holds runs with " +
               std::to_string(held) + " of them: " + std::to_string(spec.seeds.size() - held) +
               " pinned seed(s) left for " + std::to_string(spec.runs - kept) + " missing run(s) (nothing was run)" +
               "\nhint: list more seeds in the spec, or remove 'seeds' to have fresh ones chosen";
      return false;
    }
    p->runs.push_back({n, seed});
  }
  return true;
}

void save_record(PackagePlan& p, const std::function<void(const std::string&)>& event) {
  std::string err;
  if (save_manifest(p.manifest_path, p.manifest, &err)) return;
  event("cannot record the run: " + err);
  if (p.error.empty()) p.error = err;
}

// What a run record that cannot be written stops the harness with (HarnessReport::record_error).
std::string record_error_text(const std::string& why) { return "the run record cannot be written (" + why + ")"; }

// Records a run before its process starts (its seed with it); once it runs,
// the launch loop adds its job and where its output lands.
void record_launch(const Spec& spec, const Backend& backend, PackagePlan& p, const RunReport& r,
                   const std::string& token, const std::string& job_token, size_t* entry,
                   const std::function<void(const std::string&)>& event) {
  ManifestRun m;
  m.token = token;
  m.job_token = job_token;
  m.run = r.id;
  m.invocation = p.invocation;
  m.org = spec.org;
  m.system = spec.system;
  m.slot = r.index;
  m.seed = r.seed;
  m.backend = backend.name();
  m.job_id = r.job_id;
  m.state = "running";
  m.verdict = "not checked";
  m.reason = "running";
  m.command = p.setup.command;
  m.ruleset = p.setup.ruleset;
  m.system_sha256 = p.setup.system_sha256;
  m.log = relative_to(p.out_dir, r.kept_log);
  m.output = relative_to(p.out_dir, r.output_file);
  *entry = p.manifest.runs.size();
  p.manifest.runs.push_back(std::move(m));
  save_record(p, event);
}

// Decides whether a run that ended enters the package (harness::admit) and,
// when it does, writes its result file: first the manifest records it as
// entering, with the file's name and the digest of its bytes, then the file
// is written, then the manifest says it is in. A crash between any two steps
// leaves a record the next resume completes (reconcile_package).
void enter_package(Live& l, PackagePlan& p, const fs::path& results,
                   const std::function<void(const std::string&)>& event) {
  RunReport& r = l.report;
  // The log is read from its file, in pieces: memory does not grow with it.
  bool have_text = false;
  LogFacts facts = l.launched ? read_log_facts_file(r.kept_log, &have_text) : LogFacts{};
  if (!have_text) facts = LogFacts{};
  r.has_time_to_train = facts.has_times;
  r.time_to_train_ms = facts.time_to_train_ms;
  AdmissionInput in;
  in.stopped_by_checker = r.aborted;
  in.stop_reason = r.abort_reason;
  in.status = r.status;
  in.verdict = &r.verdict;
  in.log = facts;
  in.target_metric = p.target_metric;
  in.allowed_failures = p.allowed_failures;
  in.org = p.org;
  in.division = p.division;
  in.benchmark = p.benchmark;
  for (const auto& m : p.manifest.runs)
    if (m.package == "in" && m.org == p.org && m.system == p.system && !m.global_batch_size.empty()) {
      in.package_batch_size = m.global_batch_size;
      in.package_batch_from = fs::path(m.result_file).filename().string();
      break;
    }
  Admission a = admit(in);
  r.log_complete = facts.has_run_start && facts.has_run_stop;
  r.has_logged_seed = facts.has_seed;
  r.logged_seed = facts.seed;
  r.seed_note = seed_mismatch(r.seed, facts);
  if (!r.seed_note.empty()) a.reason += "; " + r.seed_note;
  std::error_code ec;
  if (!l.launched) {
    a.enters = false;
    a.reason = "could not start: " + r.status.detail;
  } else if (!a.enters && l.follows_file && l.checker->mllog_lines() == 0 && !r.aborted &&
             r.status.state != RunState::Cancelled && r.status.state != RunState::TimedOut) {
    a.reason = "its log " + r.kept_log + (fs::exists(r.kept_log, ec) ? " has no MLLOG lines" : " was never written") +
               " (the command names {log}, so the harness reads that file)" +
               (l.output_mllog_lines ? "; its output had " + std::to_string(l.output_mllog_lines) +
                                           " MLLOG lines (kept in " + r.output_file +
                                           "): the workload must write its log to the path {log} gives"
                                     : std::string());
  }
  if (!a.enters && l.launched && r.status.state == RunState::Failed) {
    // What the workload said last: a crash's reason is in its output, not in its exit status.
    std::string last = last_output_line(l.last_output);
    if (!last.empty()) a.reason += "; its last output line: \"" + last + "\"";
  }
  if (!a.enters && !l.keep_error.empty())  // what was read is what could be written: the cause comes first
    a.reason = "its log could not be kept whole (" + l.keep_error + "), so " + a.reason;
  if (a.enters) {
    r.package_reason = a.reason;
    r.converged = a.converged;
  } else {
    r.left_out = a.reason;
  }
  ManifestRun& m = p.manifest.runs[l.entry];
  m.state = state_word(r);
  m.detail = r.aborted ? "stopped by the live checker: " + r.abort_reason : r.status.detail;
  m.exit_code = r.status.exit_code;
  m.wall_seconds = r.seconds;
  record_log_facts(&m, facts, &r.verdict);
  m.verdict = verdict_word(r);
  m.converged = a.enters && a.converged;
  m.reason = a.reason;
  m.log = fs::exists(r.kept_log, ec) ? relative_to(p.out_dir, r.kept_log) : "";
  m.output = r.output_file.empty() || !fs::exists(r.output_file, ec) ? "" : relative_to(p.out_dir, r.output_file);
  m.environment = relative_to(p.out_dir, r.environment_file);
  if (!a.enters) {
    m.package = "out";
    save_record(p, event);
    return;
  }
  int n = 0;
  while (p.numbers.count(n)) ++n;
  fs::path f = results / ("result_" + std::to_string(n) + ".txt");
  m.package = "entering";
  m.result_file = relative_to(p.out_dir, f.string());
  m.result_sha256 = base::sha256_file_hex(r.kept_log);
  save_record(p, event);
  std::string err, copied_sha;
  auto copy = [&] {
    base::Status s = base::copy_file_atomic(r.kept_log, f.string(), &copied_sha);
    if (!s.ok()) err = s.message;
    return s.ok();
  };
  if (!p.error.empty() || !copy()) {
    // Not recorded as entering, or not written: the run stays out, and says why.
    if (!err.empty()) {
      event(r.id + ": " + err);
      if (p.error.empty()) p.error = err;
    }
    r.left_out = err.empty() ? "not entered: " + record_error_text(p.error)
                             : "its result file could not be written: " + err;
    r.package_reason.clear();
    m.package = "out";
    m.reason = r.left_out;
    m.result_file.clear();
    save_record(p, event);
    return;
  }
  p.numbers.insert(n);
  m.package = "in";
  m.result_sha256 = copied_sha;  // what the file holds (a log still written to may have grown in between)
  save_record(p, event);
  r.result_file = f.string();
}

// Once every run has ended: the runs in the package that did not converge
// (rule 4) are each accepted under olympic scoring only while the package
// holds at most `allowed_failures` of them. Beyond, each one's reason says
// the limit is exceeded, in the summary and in the manifest.
void settle_nonconverged(const Spec& spec, PackagePlan& p, std::vector<RunReport*> reports,
                         const std::function<void(const std::string&)>& event) {
  std::vector<ManifestRun*> nonconverged;
  for (auto& m : p.manifest.runs)
    if (m.package == "in" && m.verdict == "not compliant" && m.org == spec.org && m.system == spec.system)
      nonconverged.push_back(&m);
  int n = static_cast<int>(nonconverged.size());
  if (n <= p.allowed_failures) return;
  auto settle = [&](std::string* reason, const std::string& status) {
    std::string within = nonconverged_reason(status, p.target_metric, p.allowed_failures, 0);
    std::string rest = reason->rfind(within, 0) == 0 ? reason->substr(within.size()) : "";
    *reason = nonconverged_reason(status, p.target_metric, p.allowed_failures, n) + rest;
  };
  for (RunReport* r : reports)
    for (ManifestRun* m : nonconverged)
      if (!r->result_file.empty() && relative_to(p.out_dir, r->result_file) == m->result_file)
        settle(&r->package_reason, m->run_stop_status);
  for (ManifestRun* m : nonconverged) settle(&m->reason, m->run_stop_status);
  save_record(p, event);
}

// What the display calls the run's state. REQUIRES: l.mu held.
std::string state_of(const Live& l) {
  if (!l.launched) return l.finished ? "failed" : "waiting";
  if (!l.finished && l.queued) return "queued";
  if (!l.finished) return "running";
  if (l.report.aborted) return "stopped";
  return to_string(l.report.status.state);
}

}  // namespace

std::string interrupt_name(int signal) {
  switch (signal) {
    case SIGINT: return "Ctrl-C (SIGINT)";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case 0: return "an interrupt";
  }
  return "signal " + std::to_string(signal);
}

std::string setup_refusal(const Spec& spec, const Backend& backend, const rules::RuleSet& rules,
                          const std::string& out_dir, bool replace) {
  if (replace) return "";
  Manifest manifest;
  bool existed = false;
  std::string error;
  fs::path path = fs::path(out_dir) / ".referee-runs" / spec.benchmark / "manifest.json";
  if (!load_manifest(path.string(), spec.benchmark, &manifest, &existed, &error) || !existed) return "";
  // A run that still goes on: named before a describe job or anything else (reconcile_package says the same).
  if (std::string alive = runs_still_going(manifest, path.string(), out_dir, {}, nullptr); !alive.empty()) return alive;
  return setup_changes(manifest, spec, Setup{setup_command(spec, backend), rules.id().id(), ""}, out_dir, "");
}

bool run_harness(const Spec& spec, Backend& backend, const rules::RuleSet& rules, const RunnerOptions& opt,
                 HarnessReport* out, std::string* error) {
  *out = HarnessReport{};
  out->system = spec.system;
  {
    rules::RoundFacts facts;
    std::string ferr;
    if (!rules::facts_for(rules, &facts, &ferr)) facts = rules::RoundFacts{};
    out->progress_model = load_progress_model(rules, facts, spec.benchmark);
  }
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
  // The package's record: resume it, and plan the runs it still lacks (a
  // record referee cannot read stops everything here, nothing written).
  PackagePlan plan;
  plan.org = spec.org;
  plan.system = spec.system;
  plan.division = spec.division;
  plan.benchmark = spec.benchmark;
  plan.setup = {setup_command(spec, backend), rules.id().id(), base::sha256_hex(opt.system_json)};
  if (!plan_package(spec, rules, opt, results, logs, out, &plan, error)) {
    fs::remove(logs, ec);
    return false;
  }
  if (!base::write_file_atomic(pkg / "systems" / (spec.system + ".json"), opt.system_json, error)) return false;

  // A command that names {log} writes its log there (mllog.config(filename=...)):
  // that file is the run's log; what it prints is only output.
  bool uses_log_file = false;
  for (const auto& a : spec.command) uses_log_file = uses_log_file || a.find("{log}") != std::string::npos;
  std::vector<std::unique_ptr<Live>> runs;
  for (const auto& [i, seed] : plan.runs) {
    auto l = std::make_unique<Live>();
    l->report.index = i;
    l->report.seed = seed;
    l->report.id = spec.benchmark + "-" + std::to_string(i);
    l->report.kept_log = (logs / (l->report.id + ".log")).string();
    l->follows_file = uses_log_file;
    if (uses_log_file) l->report.output_file = (logs / (l->report.id + ".out")).string();
    l->request = request_for(spec, backend, l->report.id, i, seed, l->report.kept_log);
    l->checker = std::make_unique<LiveChecker>(rules);
    l->tracker = std::make_unique<ProgressTracker>(out->progress_model);
    runs.push_back(std::move(l));
  }
  // The handles go before the runs they feed: a backend thread may still
  // send lines until its handle is destroyed (joined).
  struct HandlesFirst {
    std::vector<std::unique_ptr<Live>>& runs;
    ~HandlesFirst() {
      for (auto& l : runs) l->handle.reset();
    }
  } handles_first{runs};

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
  // Keeps what a run that ended logged: the workload's own file stays as it
  // wrote it (what is left of it is read, and checked when `check`) and its
  // output is closed; otherwise its lines go from the checker's spool to its
  // log file, in pieces. REQUIRES: l.mu held.
  auto keep_log = [&](Live& l, bool check) {
    std::string err;
    if (l.follows_file) {
      if (auto f = follow_log_file(l, rules, true); f && check) stop_run(l, *f);
      err = close_output(l);
    } else if (!fs::exists(l.report.kept_log, ec)) {
      l.checker->save_text(l.report.kept_log, &err);
    }
    if (!err.empty()) {
      event(l.report.id + ": " + err);
      l.keep_error = err;
    }
  };
  // <run>.env.json: the environment the run ran in (captured on the run's
  // node when the backend did so, slurm; else before the runs), with what its
  // log says of the submission. REQUIRES: l.mu held.
  auto write_environment = [&](Live& l, bool say) {
    if (!opt.environment) return;
    std::string note, err, lines;
    Environment env = run_environment(l.request.log_path, *opt.environment, &note);
    if (!note.empty() && say) event(l.report.id + ": " + note);
    size_t mllog_lines = 0;
    if (filter_mllog_lines(l.report.kept_log, {"submission_"}, &lines, &mllog_lines))
      env.submission = submission_fields(lines);
    fs::path env_file = logs / (l.report.id + ".env.json");
    if (base::write_file_atomic(env_file, env.to_json(), &err)) l.report.environment_file = env_file.string();
    else if (say) event(l.report.id + ": " + err);
  };
  // Collects a run that ended (by itself, cancelled, timed out): its log and
  // output kept, its environment, its verdict, the package. REQUIRES: l.mu held.
  auto collect = [&](Live& l, const RunStatus& s) {
    l.finished = true;
    if (--*l.unit_left == 0) --active;
    l.report.status = s;
    l.report.seconds = std::chrono::duration<double>(Clock::now() - l.started).count();
    keep_log(l, true);
    write_environment(l, true);
    if (!l.report.aborted)
      if (auto f = l.checker->check_now()) stop_run(l, *f);
    l.report.verdict = l.checker->final_verdict();
    l.report.checked = true;
    l.report.last_eval = l.checker->last_eval();
    l.tracker->end();
    l.report.progress = l.tracker->snapshot();
    enter_package(l, plan, results, event);
    event(l.report.id + ": " +
          (l.report.aborted ? "stopped by the live checker: " + l.report.abort_reason
                            : to_string(s.state) + (s.detail.empty() ? "" : " [" + s.detail + "]")));
  };
  auto last_progress = Clock::now();
  auto signal_name = [&] { return interrupt_name(opt.interrupt_signal ? opt.interrupt_signal->load() : 0); };
  auto interrupt_set = [&] {
    return (opt.interrupt && opt.interrupt->load()) || (opt.stop_now && opt.stop_now->load());
  };
  while (true) {
    // The record cannot be written (a full disk): as an interrupt, nothing more starts, what runs is
    // stopped cleanly, and the summary says what is on disk.
    bool cannot_record = !plan.error.empty() && out->record_error.empty();
    if ((interrupt_set() || cannot_record) && !out->interrupted) {
      out->interrupted = true;
      std::string why = "interrupted by " + signal_name();
      if (cannot_record) {
        out->record_error = record_error_text(plan.error);
        why = "stopped: " + out->record_error;
      }
      event(why + ": cancelling every run" + (cannot_record ? ", starting no other" : " (a second one ends at once)"));
      for (auto& l : runs) {
        std::lock_guard<std::mutex> lock(l->mu);
        if (!l->handle || l->finished) continue;
        // A run that has already ended is collected as it ended (below), not
        // cancelled; the backend's cancel() also leaves alone a run that ends
        // while the interrupt is on its way.
        RunState st = l->handle->poll().state;
        if (st == RunState::Running || st == RunState::Pending) l->handle->cancel(why);
      }
    }
    while (!out->interrupted && !interrupt_set() && plan.error.empty() && active < parallel && next < runs.size()) {
      // The runs of this launch: one, or as many as the backend starts together (a Slurm job of several).
      size_t count = std::min<size_t>(std::max(1, backend.runs_per_launch(runs[next]->request)), runs.size() - next);
      std::vector<Live*> unit;
      for (size_t k = 0; k < count; ++k) unit.push_back(runs[next + k].get());
      // The runs and their seeds are recorded before any process has a seed: one the record
      // cannot hold (a full disk) never starts, and a seed is never handed out twice.
      size_t recorded = 0;
      // The token the launch carries as a whole (a Slurm job's comment): its first run's.
      const std::string job_token = run_token_of(unit[0]->request);
      for (Live* l : unit) {
        record_launch(spec, backend, plan, l->report, run_token_of(l->request), job_token, &l->entry, event);
        if (!plan.error.empty()) break;
        ++recorded;
      }
      if (!plan.error.empty()) {
        plan.manifest.runs.resize(plan.manifest.runs.size() - recorded - 1);
        break;
      }
      next += count;
      auto left = std::make_shared<int>(static_cast<int>(count));
      std::vector<RunRequest> requests;
      std::vector<LineSink> sinks;
      for (Live* lp : unit) {
        lp->started = Clock::now();
        lp->unit_left = left;
        requests.push_back(lp->request);
        sinks.push_back([lp, &stop_run](const std::string&, const std::string& line) {
          std::lock_guard<std::mutex> lock(lp->mu);
          take_output(*lp, line);
          if (lp->follows_file) return;
          ++lp->report.lines;
          lp->tracker->add_line(line);
          if (auto f = lp->checker->add_line(line)) stop_run(*lp, *f);
        });
      }
      std::string err;
      std::vector<std::unique_ptr<RunHandle>> handles;
      if (count == 1) {
        if (auto h = backend.launch(requests[0], sinks[0], &err)) handles.push_back(std::move(h));
      } else {
        handles = backend.launch_group(requests, sinks, &err);
      }
      if (handles.size() != count) {
        for (Live* lp : unit) {
          std::lock_guard<std::mutex> lock(lp->mu);
          lp->finished = true;
          lp->report.status.state = RunState::Failed;
          lp->report.status.detail = err;
          event(lp->report.id + ": could not start: " + err);
          enter_package(*lp, plan, results, event);
        }
        continue;
      }
      ++active;
      for (size_t k = 0; k < count; ++k) {
        Live& l = *unit[k];
        std::lock_guard<std::mutex> lock(l.mu);
        l.handle = std::move(handles[k]);
        decide_output(l, l.handle->output_path());
        l.launched = true;
        l.report.launched = true;
        l.report.job_id = l.handle->job_id();
        {
          // Now that it runs: which job or process group, and where its output lands.
          ManifestRun& m = plan.manifest.runs[l.entry];
          m.job_id = l.report.job_id;
          std::string output = l.report.output_file.empty() ? l.handle->output_path() : l.report.output_file;
          m.output = output.empty() ? "" : relative_to(plan.out_dir, output);
          save_record(plan, event);
        }
        // A job handed to a queue has not started: it is queued until the backend says it runs.
        if (l.handle->poll().state == RunState::Pending) {
          l.queued = true;
          event(l.report.id + ": submitted as job " + l.report.job_id + " (seed " + std::to_string(l.report.seed) +
                (count > 1 ? ", run " + std::to_string(k + 1) + " of " + std::to_string(count) + " in the job" : "") +
                "), queued");
        } else {
          event(l.report.id + ": started (seed " + std::to_string(l.report.seed) + ")");
        }
      }
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
      if (s.state == RunState::Pending) {
        // Waiting in the queue: said once per reason (Priority, then Resources, ...).
        if (!l.queued || s.detail != l.queued_why) event(l.report.id + ": queued: " + s.detail);
        l.queued = true;
        l.queued_why = s.detail;
        all_done = false;
        continue;
      }
      if (s.state == RunState::Running) {
        if (l.queued) event(l.report.id + ": started (job " + l.report.job_id + ")");
        l.queued = false;
        l.queued_why.clear();
        all_done = false;
        continue;
      }
      collect(l, s);
    }
    if (opt.progress) {
      std::vector<size_t> changed;
      for (size_t i = 0; i < runs.size(); ++i) {
        Live& l = *runs[i];
        std::lock_guard<std::mutex> lock(l.mu);
        std::string st = state_of(l);
        if (st != l.state_seen || l.tracker->events() != l.progress_seen) {
          changed.push_back(i);
          l.state_seen = st;
          l.progress_seen = l.tracker->events();
        }
      }
      if (!changed.empty() || Clock::now() - last_progress > std::chrono::seconds(1)) {
        last_progress = Clock::now();
        std::vector<RunProgress> all;
        for (auto& lp : runs) {
          std::lock_guard<std::mutex> lock(lp->mu);
          RunProgress r;
          r.id = lp->report.id;
          r.state = lp->state_seen;
          r.wall_s = !lp->launched ? 0
                     : lp->finished ? lp->report.seconds
                                    : std::chrono::duration<double>(Clock::now() - lp->started).count();
          r.lines = lp->report.lines;
          r.progress = lp->tracker->snapshot();
          all.push_back(std::move(r));
        }
        opt.progress(*out->progress_model, all, changed);
      }
    }
    if (opt.stop_now && opt.stop_now->load() && !out->stopped_at_once) {
      // A second interrupt: kill what still runs, keep what it logged, end.
      out->stopped_at_once = true;
      std::string why = "killed at a second interrupt";
      event("a second interrupt: ending every run still going now");
      std::vector<Live*> going, killed;
      for (auto& lp : runs) {
        std::lock_guard<std::mutex> lock(lp->mu);
        if (!lp->launched || lp->finished) continue;
        if (lp->handle) lp->handle->kill_now(why);
        going.push_back(lp.get());
      }
      // A run that had ended by itself before the kill reached it (its exit
      // status or final state known within a moment) is collected as ended.
      auto until = Clock::now() + std::chrono::seconds(3);
      for (Live* lp : going) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        RunStatus s = lp->handle->wait(std::max(left, std::chrono::milliseconds(0)));
        if (s.state == RunState::Succeeded || s.state == RunState::Failed) {
          std::lock_guard<std::mutex> lock(lp->mu);
          collect(*lp, s);
        } else {
          killed.push_back(lp);
        }
      }
      out->interrupt_did = killed.empty() ? "no run was still going"
                                        : "the runs still going were " + backend.kill_now_says() + " at once";
      why = backend.kill_now_says() + " at a second interrupt";
      // Its last lines reach the run before the log is written (the handle's thread is joined).
      for (Live* l : killed) l->handle.reset();
      for (Live* lp : killed) {
        Live& l = *lp;
        std::lock_guard<std::mutex> lock(l.mu);
        l.finished = true;
        if (--*l.unit_left == 0) --active;
        l.report.status = {RunState::Cancelled, -1, why + " (its log is kept as far as it got; not checked)"};
        l.report.seconds = std::chrono::duration<double>(Clock::now() - l.started).count();
        keep_log(l, false);
        write_environment(l, false);
        l.report.last_eval = l.checker->last_eval();
        l.tracker->end();
        l.report.progress = l.tracker->snapshot();
        enter_package(l, plan, results, event);  // recorded as cancelled, out of the package
        event(l.report.id + ": " + l.report.status.detail);
      }
      break;
    }
    if (all_done && active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  if (out->interrupted && !out->stopped_at_once) {
    bool any = false;
    for (auto& lp : runs) any = any || (lp->report.status.state == RunState::Cancelled && !lp->report.aborted);
    out->interrupt_did = any ? "the runs still going were cancelled" : "no run was still going: none was cancelled";
  }
  // The package: each run entered it (or not) as it ended (enter_package).
  std::error_code rm;
  if (runs.empty()) fs::remove(logs, rm);  // no run, no folder for its logs
  for (auto& lp : runs) {
    // Only what exists is named; a run never launched says so.
    RunReport& r = lp->report;
    if (!lp->launched && !lp->finished) {
      r.left_out = out->record_error.empty() ? "never started (the harness was interrupted first)"
                                             : "never started (" + out->record_error + ")";
      r.kept_log.clear();
      r.output_file.clear();
    }
    if (!r.output_file.empty() && !fs::exists(r.output_file, rm)) r.output_file.clear();
  }
  std::vector<RunReport*> reports;
  for (auto& lp : runs) reports.push_back(&lp->report);
  settle_nonconverged(spec, plan, reports, event);
  for (auto& lp : runs) out->runs.push_back(lp->report);
  // A record that could not be written stopped the runs as an interrupt would: the summary says what
  // is on disk (the caller checks the package and exits 2).
  if (!plan.error.empty() && out->record_error.empty()) out->record_error = record_error_text(plan.error);
  if (!out->record_error.empty()) out->interrupted = true;
  return true;
}

}  // namespace referee::harness
