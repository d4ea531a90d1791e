#include "harness/manifest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "base/digest.h"
#include "base/file.h"
#include "base/lines.h"
#include "base/utc_time.h"
#include "harness/backends/slurm.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/facts.h"
#include "rules/ruleset.h"
#include "rules/scoring.h"

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

// A regular file's bytes (a link followed); false for anything else (a
// folder, a FIFO that would block, a device) and for a file it cannot read.
bool read_all(const fs::path& p, std::string* out) {
  std::error_code ec;
  if (fs::status(p, ec).type() != fs::file_type::regular) return false;
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  try {
    out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return false;
  }
  return !in.bad();
}

}  // namespace

ManifestLock::~ManifestLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool ManifestLock::acquire(const std::string& path, std::string* error) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    *error = "another referee run is writing this package (it holds " + path +
             ")\nhint: wait for it to end, or use another --out";
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  return true;
}

namespace {

// ---------------------------------------------------------------- reading

struct Reader {
  std::string path;
  std::string error;
  bool fail(const std::string& where, const std::string& what) {
    if (error.empty()) error = path + ": " + where + ": " + what;
    return false;
  }
  bool str(const mllog::Json& o, const char* k, std::string* out, const std::string& where, bool required = false) {
    const mllog::Json* v = o.find(k);
    if (!v || v->kind == mllog::Json::Kind::Null) return !required || fail(where, std::string("'") + k + "' is missing");
    if (v->kind != mllog::Json::Kind::String) return fail(where, std::string("'") + k + "' must be a string");
    *out = v->s;
    return true;
  }
  bool num(const mllog::Json& o, const char* k, double* out, bool* present, const std::string& where) {
    const mllog::Json* v = o.find(k);
    if (present) *present = v && v->kind != mllog::Json::Kind::Null;
    if (!v || v->kind == mllog::Json::Kind::Null) return true;
    if (v->kind == mllog::Json::Kind::Int) *out = static_cast<double>(v->i);
    else if (v->kind == mllog::Json::Kind::Float) *out = v->f;
    else return fail(where, std::string("'") + k + "' must be a number");
    return true;
  }
  bool integer(const mllog::Json& o, const char* k, long long* out, bool* present, const std::string& where,
               bool required = false) {
    const mllog::Json* v = o.find(k);
    if (present) *present = v && v->kind != mllog::Json::Kind::Null;
    if (!v || v->kind == mllog::Json::Kind::Null) return !required || fail(where, std::string("'") + k + "' is missing");
    if (v->kind != mllog::Json::Kind::Int) return fail(where, std::string("'") + k + "' must be an integer");
    *out = v->i;
    return true;
  }
  bool boolean(const mllog::Json& o, const char* k, bool* out, const std::string& where) {
    const mllog::Json* v = o.find(k);
    if (!v || v->kind == mllog::Json::Kind::Null) return true;
    if (v->kind != mllog::Json::Kind::Bool) return fail(where, std::string("'") + k + "' must be true or false");
    *out = v->b;
    return true;
  }
};

const std::set<std::string>& package_values() {
  static const std::set<std::string> v = {"in", "entering", "out", "removed"};
  return v;
}

}  // namespace

bool load_manifest(const std::string& path, const std::string& benchmark, Manifest* out, bool* existed,
                   std::string* error) {
  *out = Manifest{};
  out->benchmark = benchmark;
  *existed = false;
  std::error_code ec;
  if (!fs::exists(path, ec)) return true;
  *existed = true;
  const std::string hint =
      "\nhint: the manifest records the seeds and results of earlier runs; restore it, or move it aside to start "
      "a new record (the package's result files are kept and recorded as found)";
  if (!fs::is_regular_file(path, ec)) {
    *error = "the run manifest " + path + " is " + (fs::is_directory(path, ec) ? "a directory" : "not a regular file") +
             ", not a file referee wrote" + hint;
    return false;
  }
  std::string text;
  if (!read_all(path, &text)) {
    *error = "cannot read the run manifest " + path + hint;
    return false;
  }
  mllog::Json root;
  std::string perr;
  if (!mllog::parse_json_permissive(text, &root, &perr)) {
    *error = "the run manifest " + path + " is not valid JSON (" + perr + ")" + hint;
    return false;
  }
  Reader r{path, ""};
  if (root.kind != mllog::Json::Kind::Object) {
    *error = "the run manifest " + path + " is not a JSON object" + hint;
    return false;
  }
  std::string format;
  if (!r.str(root, "format", &format, "top level") || format != kManifestFormat) {
    *error = "the run manifest " + path + " is not a referee run manifest (format: expected \"" + kManifestFormat +
             "\", found " + (format.empty() ? "none" : "\"" + format + "\"") + ")" + hint;
    return false;
  }
  long long version = 0;
  bool have = false;
  if (!r.integer(root, "version", &version, &have, "top level", true)) {
    *error = r.error + hint;
    return false;
  }
  if (version != kManifestVersion) {
    *error = "the run manifest " + path + " has format version " + std::to_string(version) +
             (version > kManifestVersion ? ", written by a newer referee" : ", which no referee wrote") +
             "; this referee reads version " + std::to_string(kManifestVersion) +
             "\nhint: run the referee that wrote it, or move it aside to start a new record";
    return false;
  }
  out->version = static_cast<int>(version);
  std::string bench;
  if (!r.str(root, "benchmark", &bench, "top level", true)) {
    *error = r.error + hint;
    return false;
  }
  if (bench != benchmark) {
    *error = "the run manifest " + path + " records benchmark " + bench + ", not " + benchmark + hint;
    return false;
  }
  r.str(root, "updated", &out->updated, "top level");
  const mllog::Json* runs = root.find("runs");
  if (!runs || runs->kind != mllog::Json::Kind::Array) {
    *error = "the run manifest " + path + ": top level: 'runs' must be a list" + hint;
    return false;
  }
  for (size_t i = 0; i < runs->items.size(); ++i) {
    const mllog::Json& o = runs->items[i];
    std::string where = "runs[" + std::to_string(i) + "]";
    if (o.kind != mllog::Json::Kind::Object) {
      *error = path + ": " + where + " is not an object" + hint;
      return false;
    }
    ManifestRun m;
    long long slot = 0, exit_code = -1;
    bool has_exit = false, has_ttt = false;
    bool ok = r.str(o, "run", &m.run, where, true) && r.str(o, "invocation", &m.invocation, where) &&
              r.str(o, "org", &m.org, where, true) && r.str(o, "system", &m.system, where, true) &&
              r.integer(o, "slot", &slot, nullptr, where) && r.integer(o, "seed", &m.seed, &m.has_seed, where) &&
              r.integer(o, "logged_seed", &m.logged_seed, &m.has_logged_seed, where) &&
              r.str(o, "backend", &m.backend, where) && r.str(o, "job_id", &m.job_id, where) &&
              r.str(o, "token", &m.token, where) && r.str(o, "job_token", &m.job_token, where) &&
              r.str(o, "state", &m.state, where, true) && r.str(o, "detail", &m.detail, where) &&
              r.integer(o, "exit_code", &exit_code, &has_exit, where) &&
              r.num(o, "wall_seconds", &m.wall_seconds, nullptr, where) &&
              r.num(o, "time_to_train_ms", &m.time_to_train_ms, &has_ttt, where) &&
              r.str(o, "run_stop_status", &m.run_stop_status, where) && r.str(o, "verdict", &m.verdict, where) &&
              r.str(o, "first_error", &m.first_error, where) && r.str(o, "package", &m.package, where, true) &&
              r.boolean(o, "converged", &m.converged, where) && r.str(o, "result_file", &m.result_file, where) &&
              r.str(o, "result_sha256", &m.result_sha256, where) && r.str(o, "reason", &m.reason, where) &&
              r.str(o, "note", &m.note, where) && r.str(o, "log", &m.log, where) &&
              r.str(o, "output", &m.output, where) && r.str(o, "environment", &m.environment, where) &&
              r.str(o, "command", &m.command, where) && r.str(o, "ruleset", &m.ruleset, where) &&
              r.str(o, "system_sha256", &m.system_sha256, where) &&
              r.str(o, "global_batch_size", &m.global_batch_size, where);
    if (!ok) {
      *error = r.error + hint;
      return false;
    }
    if (!package_values().count(m.package)) {
      *error = path + ": " + where + ": 'package' must be in, entering, out or removed, not \"" + m.package + "\"" + hint;
      return false;
    }
    if ((m.package == "in" || m.package == "entering") && m.result_file.empty()) {
      *error = path + ": " + where + ": a run " + (m.package == "in" ? "in" : "entering") +
               " the package must name its result_file" + hint;
      return false;
    }
    m.slot = static_cast<int>(slot);
    m.exit_code = has_exit ? static_cast<int>(exit_code) : -1;
    m.has_time_to_train = has_ttt;
    out->runs.push_back(std::move(m));
  }
  return true;
}

std::string manifest_json(const Manifest& m) {
  mllog::JsonWriter w(2, mllog::JsonText::kUtf8);
  w.begin_object();
  w.key("format").value(kManifestFormat);
  w.key("version").value(m.version);
  w.key("benchmark").value(m.benchmark);
  w.key("updated").value(m.updated);
  w.key("paths_relative_to").value("the --out directory");
  w.key("runs").begin_array();
  auto opt_str = [&](const char* k, const std::string& v) {
    w.key(k);
    if (v.empty()) w.null();
    else w.value(v);
  };
  for (const auto& r : m.runs) {
    w.begin_object();
    w.key("run").value(r.run);
    w.key("invocation").value(r.invocation);
    w.key("org").value(r.org);
    w.key("system").value(r.system);
    w.key("slot").value(r.slot);
    w.key("seed");
    if (r.has_seed) w.value(r.seed);
    else w.null();
    w.key("logged_seed");
    if (r.has_logged_seed) w.value(r.logged_seed);
    else w.null();
    w.key("backend").value(r.backend);
    opt_str("job_id", r.job_id);
    opt_str("token", r.token);
    opt_str("job_token", r.job_token);
    w.key("state").value(r.state);
    w.key("detail").value(r.detail);
    w.key("exit_code");
    if (r.exit_code >= 0) w.value(r.exit_code);
    else w.null();
    w.key("wall_seconds").value(r.wall_seconds);
    w.key("time_to_train_ms");
    if (r.has_time_to_train) w.value(r.time_to_train_ms);
    else w.null();
    w.key("time_to_train_minutes");
    if (r.has_time_to_train) w.value(r.time_to_train_ms / 60000.0);
    else w.null();
    opt_str("run_stop_status", r.run_stop_status);
    w.key("verdict").value(r.verdict);
    opt_str("first_error", r.first_error);
    w.key("package").value(r.package);
    w.key("converged").value(r.converged);
    opt_str("result_file", r.result_file);
    opt_str("result_sha256", r.result_sha256);
    w.key("reason").value(r.reason);
    opt_str("note", r.note);
    opt_str("log", r.log);
    opt_str("output", r.output);
    opt_str("environment", r.environment);
    opt_str("command", r.command);
    opt_str("ruleset", r.ruleset);
    opt_str("system_sha256", r.system_sha256);
    opt_str("global_batch_size", r.global_batch_size);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

bool save_manifest(const std::string& path, Manifest& m, std::string* error) {
  m.updated = base::utc_now();
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  return base::write_file_atomic(path, manifest_json(m), error);
}

// ---------------------------------------------------------------- logs

LogFacts read_log_facts(std::string_view text) {
  mllog::LogReader reader;
  mllog::ParsedLog log;
  reader.parse(text, &log);
  return read_log_facts(log);
}

bool filter_mllog_lines(const std::string& path, const std::vector<std::string_view>& needles, std::string* kept,
                        size_t* mllog_lines) {
  *mllog_lines = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  // The reader's lines: "\r" ends a line too (universal newlines) when the file has one.
  auto line = [&](std::string_view l, size_t) {
    while (true) {
      size_t cr = l.find('\r');
      std::string_view one = l.substr(0, cr);
      if (one.find(mllog::kToken) != std::string_view::npos) {
        ++*mllog_lines;
        for (std::string_view n : needles)
          if (one.find(n) != std::string_view::npos) {
            kept->append(one).push_back('\n');
            break;
          }
      }
      if (cr == std::string_view::npos) break;
      l.remove_prefix(cr + 1);
    }
  };
  base::LineSplitter split;
  char buf[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    split.feed(std::string_view(buf, static_cast<size_t>(n)), line);
  }
  split.finish(line);
  ::close(fd);
  return ok;
}

LogFacts read_log_facts_file(const std::string& path, bool* readable) {
  std::string kept;
  size_t lines = 0;
  *readable = filter_mllog_lines(path, {"\"run_start\"", "\"run_stop\"", "\"seed\"", "\"submission_", "\"global_batch_size\""},
                                 &kept, &lines);
  LogFacts f = read_log_facts(kept);
  f.mllog_lines = lines;
  return f;
}

LogFacts read_log_facts(const mllog::ParsedLog& log) {
  LogFacts f;
  f.mllog_lines = log.mllog_lines;
  // The first line of each key that says what the run was.
  const std::pair<const char*, std::string*> stated[] = {{"submission_org", &f.submission_org},
                                                          {"submission_division", &f.submission_division},
                                                          {"submission_benchmark", &f.submission_benchmark},
                                                          {"global_batch_size", &f.global_batch_size}};
  for (const auto& [key, into] : stated) {
    int id = log.find_key(key);
    if (id < 0) continue;
    for (const auto& ev : log.events) {
      if (static_cast<int>(ev.key_id) != id) continue;
      mllog::Json j;
      std::string err;
      if (mllog::parse_json_permissive(ev.json, &j, &err))
        if (const mllog::Json* v = j.find("value")) {
          if (v->kind == mllog::Json::Kind::String) *into = v->s;
          else if (v->kind == mllog::Json::Kind::Int) *into = std::to_string(v->i);
          else if (v->kind == mllog::Json::Kind::Float) {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.17g", v->f);
            *into = buf;
          }
        }
      break;
    }
  }
  int seed_key = log.find_key("seed");
  for (const auto& ev : log.events) {
    if (static_cast<int>(ev.key_id) != seed_key || f.has_seed) continue;
    mllog::Json j;
    std::string err;
    if (mllog::parse_json_permissive(ev.json, &j, &err))
      if (const mllog::Json* v = j.find("value"); v && v->kind == mllog::Json::Kind::Int) {
        f.has_seed = true;
        f.seed = v->i;
      }
  }
  // As the result summarizer pairs them (rules/scoring.h).
  rules::TimeToTrain t = rules::time_to_train(log);
  f.has_run_start = t.has_run_start;
  f.has_run_stop = t.has_run_stop;
  f.has_times = t.has_times;
  if (f.has_times) f.time_to_train_ms = t.ms();
  if (t.run_stop_event >= 0) {
    const mllog::Event& stop_ev = log.events[static_cast<size_t>(t.run_stop_event)];
    mllog::Json j;
    std::string err;
    if (mllog::parse_json_permissive(stop_ev.json, &j, &err))
      if (const mllog::Json* md = j.find("metadata"); md && md->kind == mllog::Json::Kind::Object)
        if (const mllog::Json* st = md->find("status"); st && st->kind == mllog::Json::Kind::String) f.run_stop_status = st->s;
  }
  return f;
}

// ---------------------------------------------------------------- admission

std::string seed_mismatch(long long given, const LogFacts& log) {
  if (!log.has_seed || log.seed == given) return "";
  return "its log says seed " + std::to_string(log.seed) + ", not the seed it was given (" + std::to_string(given) +
         "): the workload does not use {seed}, and the package's seed check reads the logged seed";
}

bool only_target_not_reached(const rules::FileVerdict& v, const std::string& metric) {
  if (v.errors.empty()) return false;
  const std::string suffix = " KEY " + metric + " ATLEAST_ONE_CHECK";
  for (const auto& e : v.errors) {
    if (e.key != metric) return false;
    if (e.rule.size() < suffix.size() || e.rule.compare(e.rule.size() - suffix.size(), suffix.size(), suffix) != 0)
      return false;
  }
  return true;
}

namespace {

std::string finding_text(const rules::Finding& f) {
  return (f.line ? "line " + std::to_string(f.line) + ": " : std::string()) + f.rule + ": " + f.message;
}

std::string exit_words(const RunStatus& s) {
  if (s.exit_code >= 0) return "exit status " + std::to_string(s.exit_code);
  return std::string(to_string(s.state)) + (s.detail.empty() ? "" : " (" + s.detail + ")");
}

// How a run whose log is complete ended, when not with exit status 0: "it
// then exited with status 1", "it then was killed by Segmentation fault".
std::string ended_after_log(const RunStatus& s) {
  if (s.state == RunState::Succeeded) return "";
  std::string how = s.exit_code >= 0       ? "exited with status " + std::to_string(s.exit_code)
                    : s.detail.empty()     ? std::string(to_string(s.state))
                    : s.detail.rfind("killed", 0) == 0 ? "was " + s.detail
                                                       : "ended: " + s.detail;
  return "; after its log was complete it " + how + ", which does not decide: its log is a complete run";
}

}  // namespace

std::string nonconverged_reason(const std::string& run_stop_status, const std::string& metric, int allowed,
                                int in_package) {
  std::string head = "did not converge (run_stop status \"" + run_stop_status + "\", " + metric +
                     " never reached the target): a result";
  if (in_package <= allowed)
    return head + ", scored as the consortium's rules say (accepted under olympic scoring, at most " +
           std::to_string(allowed) + " such run(s) per benchmark, and dropped from the score)";
  return head + ", but the package holds " + std::to_string(in_package) + " runs that did not converge where the "
         "consortium's package checker accepts at most " + std::to_string(allowed) +
         " (olympic scoring): the package fails its check and gets no score; run again with --replace once the cause "
         "is fixed";
}

void record_log_facts(ManifestRun* m, const LogFacts& facts, const rules::FileVerdict* verdict) {
  m->has_time_to_train = facts.has_times;
  m->time_to_train_ms = facts.time_to_train_ms;
  m->run_stop_status = facts.run_stop_status;
  m->has_logged_seed = facts.has_seed;
  m->logged_seed = facts.seed;
  m->global_batch_size = facts.global_batch_size;
  if (verdict && !verdict->errors.empty()) {
    const auto& f = verdict->errors[0];
    m->first_error = (f.line ? "line " + std::to_string(f.line) + ": " : std::string()) + f.rule + ": " + f.message;
  }
}

Admission admit(const AdmissionInput& in) {
  Admission a;
  const RunStatus& s = in.status;
  // 1. A run the harness stopped is not a result: it did not end by itself.
  if (in.stopped_by_checker) {
    a.reason = "stopped by the live checker: " + in.stop_reason;
    return a;
  }
  if (s.state == RunState::Cancelled || s.state == RunState::TimedOut || s.state == RunState::Pending ||
      s.state == RunState::Running) {
    a.reason = std::string(to_string(s.state)) + (s.detail.empty() ? "" : " (" + s.detail + ")") +
               ": the harness stopped it, so it is not a result";
    return a;
  }
  // 2. A result is a run that ended: its log has run_start and run_stop.
  if (!in.log.has_run_start || !in.log.has_run_stop) {
    a.reason = std::string("its log has no ") + (!in.log.has_run_start ? "run_start" : "run_stop") +
               ": the run did not " + (!in.log.has_run_start ? "start its timed region" : "end") + " (" +
               exit_words(s) + ")";
    if (s.state == RunState::Failed && !s.detail.empty() && s.exit_code < 0) a.reason += ": " + s.detail;
    return a;
  }
  // 3. A log of another package: what it states of itself is not this package.
  const std::pair<const char*, std::pair<const std::string*, const std::string*>> identity[] = {
      {"submission_org", {&in.log.submission_org, &in.org}},
      {"submission_division", {&in.log.submission_division, &in.division}},
      {"submission_benchmark", {&in.log.submission_benchmark, &in.benchmark}}};
  for (const auto& [key, pair] : identity) {
    const std::string& logged = *pair.first;
    const std::string& wanted = *pair.second;
    if (logged.empty() || wanted.empty() || logged == wanted) continue;
    a.reason = std::string("its log states ") + key + " \"" + logged + "\", not \"" + wanted +
               "\": the package holds " + (std::string(key) == "submission_org" ? "the results of " + wanted
                                            : std::string(key) == "submission_division" ? "results of the " + wanted + " division"
                                                                                        : wanted + " results") +
               "; the workload logs what it is told (check its submission_* settings)";
    return a;
  }
  if (!in.package_batch_size.empty() && !in.log.global_batch_size.empty() &&
      in.log.global_batch_size != in.package_batch_size) {
    a.reason = "its global_batch_size is " + in.log.global_batch_size + ", and the package's other results (" +
               in.package_batch_from + ") ran with " + in.package_batch_size +
               ": the runs of a package share their hyperparameters (the consortium's checkers compare them); run "
               "again with the package's batch size, or with --replace to start the package over";
    return a;
  }
  const rules::FileVerdict& v = *in.verdict;
  const std::string exit_note = ended_after_log(s);
  // 4. A compliant log is a result, converged or not (the open division has no quality target).
  if (v.compliant) {
    a.enters = true;
    a.converged = in.log.run_stop_status == "success";
    a.reason = a.converged ? "compliant, converged"
                           : "compliant, run_stop status \"" + in.log.run_stop_status +
                                 "\": did not converge; the consortium's result summarizer times a compliant log "
                                 "whatever its status";
    a.reason += exit_note;
    return a;
  }
  // 5. A run that did not converge: ended with run_stop status other than
  //    success, and the only finding is the quality target not reached. The
  //    consortium's tools take it as a result: the package checker accepts
  //    it under olympic scoring, the RCP checker counts it as not converged,
  //    the result summarizer drops it from the score.
  if (only_target_not_reached(v, in.target_metric) && in.log.run_stop_status != "success") {
    a.enters = true;
    a.converged = false;
    a.reason = nonconverged_reason(in.log.run_stop_status, in.target_metric, in.allowed_failures, 0) + exit_note;
    return a;
  }
  // 6. Any other finding: the log breaks a rule.
  if (only_target_not_reached(v, in.target_metric))
    a.reason = "its run_stop says \"success\" but " + in.target_metric + " never reached the target: " +
               finding_text(v.errors[0]);
  else
    a.reason = "its log is not compliant: " + (v.errors.empty() ? std::string("(no finding)") : finding_text(v.errors[0]));
  return a;
}

bool choose_seed(const std::vector<long long>& pinned, long long seed_base, int slot, int stride,
                 const std::set<long long>& used_anywhere, const std::set<long long>& in_package,
                 std::set<long long>* taken, long long* seed) {
  if (!pinned.empty()) {
    for (long long s : pinned)
      if (!in_package.count(s) && !taken->count(s)) {
        taken->insert(s);
        *seed = s;
        return true;
      }
    return false;
  }
  if (stride < 1) stride = 1;
  for (long long s = seed_base + slot;; s += stride)
    if (!used_anywhere.count(s) && !taken->count(s)) {
      taken->insert(s);
      *seed = s;
      return true;
    }
}

// ---------------------------------------------------------------- the package folder

std::vector<std::pair<int, std::string>> result_files_in(const std::string& dir) {
  std::vector<std::pair<int, std::string>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("result_", 0) != 0 || name.size() <= 11 || name.compare(name.size() - 4, 4, ".txt") != 0) continue;
    std::string num = name.substr(7, name.size() - 11);
    if (num.empty() || num.size() > 6 || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    out.push_back({std::stoi(num), name});
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string relative_to(const std::string& out_dir, const std::string& path) {
  if (path.empty()) return "";
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::absolute(out_dir, ec), ec);
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  fs::path rel = p.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") return p.string();
  return rel.string();
}

std::string resolve_in(const std::string& out_dir, const std::string& rel) {
  if (rel.empty()) return "";
  fs::path p(rel);
  return p.is_absolute() ? p.string() : (fs::path(out_dir) / p).string();
}

namespace {

// A Slurm job of this user whose comment is `token` (sbatch --comment): its
// id and state, or "" when there is none (or squeue cannot tell).
std::pair<std::string, std::string> job_with_comment(const std::string& token) {
  if (token.empty()) return {};
  auto sq = slurm::run_command({"squeue", "--noheader", "--states=all", "--format=%i|%T|%k"}, "", std::chrono::seconds(30));
  if (!sq.started || sq.exit_code != 0) return {};
  std::istringstream in(sq.out);
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find('|'), b = line.find('|', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string comment = line.substr(b + 1);
    while (!comment.empty() && (comment.back() == ' ' || comment.back() == '\r')) comment.pop_back();
    if (comment == token) return {line.substr(0, a), line.substr(a + 1, b - a - 1)};
  }
  return {};
}

// The exit status the batch script wrote beside a Slurm run's output.txt, or -1.
int exit_code_beside(const std::string& output) {
  if (output.empty()) return -1;
  return slurm::read_exit_code(slurm::job_files(fs::path(output).parent_path().string()).exit_code);
}

}  // namespace

Liveness probe_run(const ManifestRun& r) {
  Liveness l;
  if (r.job_id.empty() && (r.backend == "slurm" || r.backend == "exec")) {
    // Recorded, then the harness ended before it heard the job id: found by its token, if it started.
    if (r.backend == "exec") {
      auto procs = processes_with_token(r.token);
      if (!procs.empty()) {
        l.kind = Liveness::Alive;
        l.words = "its processes pid " + std::to_string(procs[0].pid) + " " + procs[0].name +
                  (procs.size() > 1 ? " and " + std::to_string(procs.size() - 1) + " more" : "") + ", found by its token";
        l.how = "wait for them, or kill them (kill " + std::to_string(procs[0].pid) + "), then run again";
      }
      return l;
    }
    auto [job, state] = job_with_comment(r.job_token);
    if (job.empty()) return l;
    l.words = "Slurm job " + job + " (found by its comment)";
    if (!slurm::is_terminal(state)) {
      l.kind = Liveness::Alive;
      l.words += ", " + state;
      l.how = "wait for it, or scancel " + job + ", then run again";
    } else {
      l.words += " ended " + state;
      l.final_state = state;
    }
    return l;
  }
  if (r.backend == "slurm" && !r.job_id.empty()) {
    l.words = "Slurm job " + r.job_id;
    auto sq = slurm::run_command({"squeue", "--noheader", "--states=all", "--jobs=" + r.job_id, "--format=%T"}, "",
                                 std::chrono::seconds(30));
    std::string state = sq.out.substr(0, sq.out.find('\n'));
    while (!state.empty() && (state.back() == ' ' || state.back() == '\r')) state.pop_back();
    if (sq.started && sq.exit_code == 0 && !state.empty() && !slurm::is_terminal(state)) {
      l.kind = Liveness::Alive;
      l.words += ", " + state;
      l.how = "wait for it, or scancel " + r.job_id + ", then run again";
    } else if (sq.started && sq.exit_code == 0) {
      l.words += state.empty() ? " is no longer known to Slurm" : " ended " + state;
      l.final_state = state;
    } else if ((sq.err + sq.out).find("Invalid job id") != std::string::npos) {
      l.words += " is no longer known to Slurm";
    } else {
      std::string why = !sq.error.empty() ? sq.error : sq.err.substr(0, sq.err.find('\n'));
      if (why.empty()) why = sq.timed_out ? "squeue timed out" : "squeue failed";
      l.kind = Liveness::Unknown;
      l.how = "cannot ask Slurm whether it still runs (" + why + "): check it with squeue --jobs=" + r.job_id +
              " (scancel " + r.job_id + " if it must not go on), then run again";
    }
    return l;
  }
  if (r.backend == "exec" && !r.job_id.empty() && r.job_id.size() < 10 &&
      std::all_of(r.job_id.begin(), r.job_id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    pid_t pgid = static_cast<pid_t>(std::stol(r.job_id));
    l.words = "process group " + r.job_id;
    if (pgid > 1 && (::kill(-pgid, 0) == 0 || errno == EPERM)) {
      l.kind = Liveness::Alive;
      l.how = "wait for it, or kill -- -" + r.job_id + ", then run again";
    } else {
      l.words += " has ended";
    }
  }
  return l;
}

namespace {

// A run that ended while no harness watched it, taken into the package as
// the harness would have taken it: its log complete, checked, admitted (the
// same admit), its result file written (or one already holding the same
// bytes claimed: a resume cut short before it saved the record left it).
// 1: adopted (r says how); 0: not (*why_not says why); -1: a file could not
// be written (*error).
int adopt_run(ManifestRun* r, const Liveness& l, const std::string& out_dir, const std::string& results_dir,
              const rules::RuleSet& rules, const std::string& benchmark, std::set<std::string>* claimed,
              std::string* why_not, std::string* error) {
  std::string text, from;
  if (!r->log.empty() && read_all(resolve_in(out_dir, r->log), &text) && read_log_facts(text).mllog_lines > 0) {
    from = "its log (" + r->log + ")";
  } else if (!r->output.empty() && read_all(resolve_in(out_dir, r->output), &text)) {
    from = "its output (" + r->output + ")";
  } else {
    return 0;  // nothing to check: the record says what is left
  }
  LogFacts facts = read_log_facts(text);
  if (facts.mllog_lines == 0) return 0;
  if (!facts.has_run_start || !facts.has_run_stop) {
    *why_not = from + " is cut short: it has no " + (facts.has_run_start ? "run_stop" : "run_start");
    return 0;
  }
  RunStatus status(RunState::Succeeded, -1, "it ended while no harness watched it; its exit status is not known");
  const std::string& s = l.final_state;
  if (l.exit_code == 0) status = RunStatus(RunState::Succeeded, 0, "exit 0");
  else if (l.exit_code > 0) status = RunStatus(RunState::Failed, l.exit_code, "exit " + std::to_string(l.exit_code));
  else if (s == "COMPLETED") status = RunStatus(RunState::Succeeded, 0, "Slurm state COMPLETED");
  else if (s == "CANCELLED" || s.rfind("CANCELLED", 0) == 0) status = RunStatus(RunState::Cancelled, -1, "Slurm state " + s);
  else if (s == "TIMEOUT" || s == "DEADLINE") status = RunStatus(RunState::TimedOut, -1, "Slurm state " + s);
  else if (!s.empty()) status = RunStatus(RunState::Failed, -1, "Slurm state " + s);
  if (status.state == RunState::Cancelled || status.state == RunState::TimedOut) {
    *why_not = "it did not end by itself (" + status.detail + "), so it is not a result";
    return 0;
  }
  mllog::LogReader reader;
  mllog::ParsedLog parsed;
  reader.parse(text, &parsed);
  rules::FileVerdict verdict = rules::check_log(rules, parsed);
  AdmissionInput in;
  in.status = status;
  in.verdict = &verdict;
  in.log = facts;
  in.target_metric = rules::quality_target(rules, benchmark).metric;
  in.org = r->org;  // a log of another package is not adopted into this one
  in.benchmark = benchmark;
  rules::RoundFacts round;
  std::string ferr;
  if (rules::facts_for(rules, &round, &ferr))
    if (const auto* bf = round.find(benchmark)) in.allowed_failures = bf->allowed_failures;
  Admission a = admit(in);
  if (!a.enters) {
    *why_not = from + " does not enter the package: " + a.reason;
    return 0;
  }
  // The file: one of the folder that already holds these bytes, else the first free number.
  const std::string digest = base::sha256_hex(text);
  std::set<int> used;
  fs::path file;
  for (const auto& [n, name] : result_files_in(results_dir)) {
    used.insert(n);
    std::string have;
    // A file another entry holds is never claimed twice (two runs may print the same bytes).
    if (file.empty() && !claimed->count(name) && read_all((fs::path(results_dir) / name).string(), &have) &&
        base::sha256_hex(have) == digest)
      file = fs::path(results_dir) / name;
  }
  if (file.empty()) {
    int n = 0;
    while (used.count(n)) ++n;
    file = fs::path(results_dir) / ("result_" + std::to_string(n) + ".txt");
    std::error_code ec;
    fs::create_directories(results_dir, ec);
    if (!base::write_file_atomic(file.string(), text, error)) return -1;
  }
  claimed->insert(file.filename().string());
  // Its exit status is known only from Slurm's final state; an exec run's is not.
  r->state = l.final_state.empty() && l.exit_code < 0 ? "ended" : to_string(status.state);
  r->detail = status.detail;
  r->exit_code = status.exit_code;
  record_log_facts(r, facts, &verdict);
  r->verdict = verdict.compliant ? "compliant" : "not compliant";
  r->converged = a.converged;
  r->package = "in";
  r->result_file = relative_to(out_dir, file.string());
  r->result_sha256 = digest;
  std::string seed_note = r->has_seed ? seed_mismatch(r->seed, facts) : std::string();
  r->reason = "adopted: it ended while no harness watched it (" + (l.words.empty() ? r->backend : l.words) +
              "), " + from + " complete; " + a.reason + (seed_note.empty() ? "" : "; " + seed_note);
  r->note = "adopted on resume into " + file.filename().string();
  return 1;
}

}  // namespace

std::string runs_still_going(const Manifest& m, const std::string& manifest_path, const std::string& out_dir,
                             const LivenessProbe& probe, std::map<size_t, Liveness>* ended) {
  std::string alive;
  for (size_t i = 0; i < m.runs.size(); ++i) {
    const ManifestRun& r = m.runs[i];
    if (r.state != "running") continue;
    Liveness l = probe ? probe(r) : probe_run(r);
    if (l.kind == Liveness::Ended && l.exit_code < 0 && r.backend == "slurm")
      l.exit_code = exit_code_beside(resolve_in(out_dir, r.output));
    if (l.kind == Liveness::Ended) {
      if (ended) (*ended)[i] = l;
      continue;
    }
    alive += std::string(alive.empty() ? "" : "\n") + r.run + " (" + (l.words.empty() ? r.backend : l.words) +
             ", invocation " + r.invocation + ") " +
             (l.kind == Liveness::Alive ? "is still running: " : "was running when its harness ended: ") + l.how;
  }
  if (alive.empty()) return "";
  return alive + "\n(nothing was started or changed: " + manifest_path +
         " still records it as running; a run that still goes on is not started twice)";
}

bool reconcile_package(Manifest* m, const std::string& manifest_path, const std::string& out_dir,
                       const std::string& results_dir, const std::string& org, const std::string& system,
                       const rules::RuleSet& rules, bool replace, Reconciled* rec, std::string* error,
                       const LivenessProbe& probe) {
  *rec = Reconciled{};
  auto mine = [&](const ManifestRun& r) { return r.org == org && r.system == system; };
  auto file_of = [&](const ManifestRun& r) { return resolve_in(out_dir, r.result_file); };
  std::error_code ec;

  // A result file is one of this package's folder, by name: a record that points elsewhere (edited by
  // hand) is never written to nor counted.
  const fs::path folder = fs::weakly_canonical(fs::absolute(results_dir, ec), ec);
  for (size_t i = 0; i < m->runs.size(); ++i) {
    const ManifestRun& r = m->runs[i];
    if (!mine(r) || r.result_file.empty()) continue;
    fs::path p = fs::path(file_of(r)).lexically_normal();
    std::string name = p.filename().string();
    bool in_folder = fs::weakly_canonical(fs::absolute(p.parent_path(), ec), ec) == folder &&
                     name.rfind("result_", 0) == 0 && !fs::is_symlink(p, ec);
    if (!in_folder) {
      *error = manifest_path + ": runs[" + std::to_string(i) + "] (" + r.run + ") names the result file " + r.result_file +
               ", which is not a result_<n>.txt of the package folder " + results_dir +
               " (the manifest was changed outside referee): correct or remove that entry, then run again (nothing was changed)";
      return false;
    }
  }

  // Runs an earlier harness left "running": first, before anything changes,
  // whether they still run. A live one is never duplicated: nothing starts.
  std::map<size_t, Liveness> ended;
  if (std::string alive = runs_still_going(*m, manifest_path, out_dir, probe, &ended); !alive.empty()) {
    *error = alive;
    return false;
  }

  // --replace: the result files go first, then the record says so; a crash
  // in between leaves entries whose file is gone, which the next resume
  // records as removed.
  if (replace) {
    for (const auto& [n, name] : result_files_in(results_dir)) {
      fs::path p = fs::path(results_dir) / name;
      if (!fs::remove(p, ec) || ec) {
        *error = "cannot remove " + p.string() + (ec ? ": " + ec.message() : std::string());
        return false;
      }
      rec->removed.push_back(p.string());
    }
    for (auto& r : m->runs)
      if (mine(r) && (r.package == "in" || r.package == "entering")) {
        r.package = "removed";
        r.reason = "removed by --replace (was " + fs::path(r.result_file).filename().string() + "): " + r.reason;
        rec->changed = true;
      }
  }

  // Entries left "entering" by an interrupted write: finish them.
  for (auto& r : m->runs) {
    if (!mine(r) || r.package != "entering") continue;
    std::string path = file_of(r), have;
    if (fs::exists(path, ec)) {
      if (read_all(path, &have) && base::sha256_hex(have) == r.result_sha256) {
        r.package = "in";
        r.note = "its result file was written but not yet recorded when the harness ended; recorded on resume";
      } else {
        r.package = "out";
        r.reason = fs::path(path).filename().string() + " holds another log than this run's: " + r.reason;
        r.note = "its result file was being written when the harness ended and the name now holds another log";
        r.result_file.clear();
      }
    } else {
      std::string log;
      if (!r.log.empty() && read_all(resolve_in(out_dir, r.log), &log) && base::sha256_hex(log) == r.result_sha256) {
        if (!base::write_file_atomic(path, log, error)) return false;
        r.package = "in";
        r.note = "the harness ended before its result file was written; written from its kept log on resume";
      } else {
        r.package = "out";
        r.reason = "its result file was never written and its kept log is gone or changed: " + r.reason;
        r.result_file.clear();
      }
    }
    rec->messages.push_back(r.run + " (" + r.invocation + "): " + r.note);
    rec->changed = true;
  }

  // Runs a harness that ended early left "running", and that have ended
  // since: adopted when their log is complete and they ended by themselves
  // (adopt_run); otherwise lost to the package, the record pointing at what
  // they left.
  std::set<std::string> held;  // result files an entry of this package already holds
  for (const auto& r : m->runs)
    if (mine(r) && (r.package == "in" || r.package == "entering") && !r.result_file.empty())
      held.insert(fs::path(r.result_file).filename().string());
  for (auto& [i, l] : ended) {
    ManifestRun& r = m->runs[i];
    if (!r.log.empty() && !fs::exists(resolve_in(out_dir, r.log), ec)) r.log.clear();
    if (!r.output.empty() && !fs::exists(resolve_in(out_dir, r.output), ec)) r.output.clear();
    std::string why_not;
    if (mine(r)) {
      int adopted = adopt_run(&r, l, out_dir, results_dir, rules, m->benchmark, &held, &why_not, error);
      if (adopted < 0) return false;
      if (adopted > 0) {
        rec->messages.push_back(r.run + " (" + r.invocation + "): " + r.reason);
        rec->changed = true;
        continue;
      }
    }
    r.state = "lost";
    r.package = "out";
    if (why_not.find(" is cut short") != std::string::npos) r.verdict = "incomplete";  // no rule's verdict applies
    r.reason = "lost: the harness ended before the run did" + (l.words.empty() ? "" : " (" + l.words + ")") +
               (why_not.empty() ? "" : ", and " + why_not) + "; " +
               (!r.log.empty()      ? "its log is kept in " + r.log + " (not checked, not in the package)"
                : !r.output.empty() ? "its output is in " + r.output + " (not checked, not in the package)"
                                    : std::string("no log or output of it was kept"));
    rec->messages.push_back(r.run + " (" + r.invocation + "): " + r.reason);
    rec->changed = true;
  }

  // Entries in the package whose file is gone or changed.
  std::set<std::string> claimed;
  for (auto& r : m->runs) {
    if (!mine(r) || r.package != "in") continue;
    std::string path = file_of(r), have;
    if (!fs::exists(path, ec)) {
      r.package = "removed";
      r.reason = fs::path(path).filename().string() + " is no longer in the package (removed outside referee): " + r.reason;
      rec->messages.push_back(r.run + ": " + r.reason);
      rec->changed = true;
      continue;
    }
    claimed.insert(fs::path(path).filename().string());
    if (read_all(path, &have) && base::sha256_hex(have) != r.result_sha256 &&
        r.note.find("changed outside referee") == std::string::npos) {
      r.note = fs::path(path).filename().string() + " changed outside referee since it was written (kept as it is)";
      rec->messages.push_back(r.run + ": " + r.note);
      rec->changed = true;
    }
  }

  // Result files no entry claims: recorded as found, checked as they are.
  for (const auto& [n, name] : result_files_in(results_dir)) {
    if (claimed.count(name)) continue;
    fs::path p = fs::path(results_dir) / name;
    std::string text;
    if (!read_all(p, &text)) {
      *error = "cannot read " + p.string();
      return false;
    }
    mllog::LogReader reader;
    mllog::ParsedLog log;
    reader.parse(text, &log);
    rules::FileVerdict v = rules::check_log(rules, log);
    LogFacts f = read_log_facts(log);
    ManifestRun r;
    r.run = m->benchmark + "-found-" + std::to_string(n);
    r.org = org;
    r.system = system;
    r.slot = n;
    r.has_seed = f.has_seed;
    r.seed = f.seed;
    r.state = "found";
    r.has_time_to_train = f.has_times;
    r.time_to_train_ms = f.time_to_train_ms;
    r.run_stop_status = f.run_stop_status;
    r.verdict = v.compliant ? "compliant" : "not compliant";
    if (!v.errors.empty()) r.first_error = finding_text(v.errors[0]);
    r.converged = v.compliant && f.run_stop_status == "success";
    r.package = "in";
    r.result_file = relative_to(out_dir, p.string());
    r.result_sha256 = base::sha256_hex(text);
    r.reason = "found in the package, not recorded by this manifest (run elsewhere, or before the manifest); kept";
    rec->messages.push_back(name + ": " + r.reason + (v.compliant ? "" : "; its log is not compliant: " + r.first_error));
    m->runs.push_back(std::move(r));
    rec->changed = true;
  }
  if (rec->changed && !save_manifest(manifest_path, *m, error)) return false;
  return true;
}

}  // namespace referee::harness
