#include "harness/backends/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "base/subprocess.h"
#include "base/text.h"
#include "harness/environment/node_environment.h"

extern char** environ;

namespace referee::harness {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace slurm {

const std::vector<std::string> kOptionKeys = {
    "nodes",          "tasks_per_node",     "gpus_per_node",        "partition",           "account",
    "extra_args",     "work_dir",           "launcher",             "srun_args",           "container_image",
    "container_mounts", "container_workdir", "container_name",      "container_env",       "container_writable",
    "container_remap_root", "container_mount_home", "container_entrypoint", "describe",   "describe_timeout",
    "runs_per_job"};

std::optional<std::vector<std::string>> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      cur += text.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            (text[j + 1] == '"' || text[j + 1] == '\\' || text[j + 1] == '$' || text[j + 1] == '`')) {
          ++j;
        }
        cur += text[j];
      }
      if (j >= text.size()) return std::nullopt;
      i = j;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) return std::nullopt;
      cur += text[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

int read_exit_code(const std::string& exit_code_file) {
  std::ifstream in(exit_code_file);
  int code = -1;
  if (in >> code) return code;
  return -1;
}

JobFiles job_files(const std::string& dir) {
  JobFiles f;
  f.dir = dir;
  f.script = dir + "/job.sh";
  f.output = dir + "/output.txt";
  f.exit_code = dir + "/exit_code";
  f.started = dir + "/started";
  f.cancel = dir + "/cancel";
  return f;
}

std::optional<bool> yes_no(const std::string& v) {
  std::string l = base::lower(v);
  if (l == "true" || l == "yes" || l == "on" || l == "1") return true;
  if (l == "false" || l == "no" || l == "off" || l == "0") return false;
  return std::nullopt;
}

namespace {

bool is_shell_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Printable ASCII only (for a comment line in the script).
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Slurm expands %j, %x, ... in --output: a literal % is %%.
std::string escape_percent(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

bool has_control_chars(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

}  // namespace

namespace {

const std::string* option(const RunRequest& req, const char* key) {
  auto it = req.options.find(key);
  return it == req.options.end() ? nullptr : &it->second;
}


// More than one of something: "2", "2-4", "1,3" (any number in it above 1).
bool more_than_one(const std::string& v) {
  long long n = 0;
  bool any = false;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      n = n * 10 + (c - '0');
      any = true;
      if (n > 1) return true;
    } else {
      n = 0;
    }
  }
  return !any ? false : n > 1;
}

}  // namespace

std::vector<std::string> container_flags(const RunRequest& req, std::string* error) {
  std::vector<std::string> flags;
  static const std::pair<const char*, const char*> text[] = {{"container_image", "--container-image"},
                                                              {"container_mounts", "--container-mounts"},
                                                              {"container_workdir", "--container-workdir"},
                                                              {"container_name", "--container-name"},
                                                              {"container_env", "--container-env"}};
  static const std::tuple<const char*, const char*, const char*> flag[] = {
      {"container_writable", "--container-writable", "--container-readonly"},
      {"container_remap_root", "--container-remap-root", "--no-container-remap-root"},
      {"container_mount_home", "--container-mount-home", "--no-container-mount-home"},
      {"container_entrypoint", "--container-entrypoint", "--no-container-entrypoint"}};
  for (const auto& [key, f] : text)
    if (const std::string* v = option(req, key)) flags.push_back(std::string(f) + "=" + *v);
  for (const auto& [key, on, off] : flag) {
    const std::string* v = option(req, key);
    if (!v) continue;
    auto b = yes_no(*v);
    if (!b) {
      *error = std::string("slurm option ") + key + " is yes or no (true/false), not '" + *v + "'";
      return {};
    }
    flags.push_back(*b ? on : off);
  }
  if (!flags.empty() && !option(req, "container_image") && !option(req, "container_name")) {
    *error = "container options need container_image (or container_name, a container this job made before)";
    return {};
  }
  return flags;
}

std::optional<std::vector<std::string>> launcher_words(const RunRequest& req, std::string* error) {
  std::string launcher = "auto";
  if (const std::string* v = option(req, "launcher")) launcher = *v;
  if (launcher != "auto" && launcher != "srun" && launcher != "none") {
    *error = "slurm option launcher is auto, srun or none, not '" + launcher + "'";
    return std::nullopt;
  }
  std::string err;
  std::vector<std::string> flags = container_flags(req, &err);
  if (!err.empty()) {
    *error = err;
    return std::nullopt;
  }
  std::vector<std::string> extra;
  if (const std::string* v = option(req, "srun_args")) {
    auto words = split_words(*v);
    if (!words) {
      *error = "slurm option srun_args has an unclosed quote or a trailing backslash: " + *v;
      return std::nullopt;
    }
    extra = *words;
  }
  if (launcher == "none") {
    if (!flags.empty() || !extra.empty()) {
      *error = std::string("launcher: none runs the command without srun, so ") +
               (!flags.empty() ? "the container options (Pyxis adds them to srun)" : "srun_args") +
               " cannot apply; use launcher: srun or auto";
      return std::nullopt;
    }
    return std::vector<std::string>{};
  }
  const std::string* nodes = option(req, "nodes");
  const std::string* tasks = option(req, "tasks_per_node");
  bool several = (nodes && more_than_one(*nodes)) || (tasks && more_than_one(*tasks));
  if (launcher == "auto" && !several && flags.empty() && extra.empty()) return std::vector<std::string>{};
  std::vector<std::string> words = {"srun", "--kill-on-bad-exit=1"};
  words.insert(words.end(), flags.begin(), flags.end());
  words.insert(words.end(), extra.begin(), extra.end());
  return words;
}

std::string node_env_file(const RunRequest& req, const std::string& dir) {
  if (req.log_path.empty()) return dir + "/env.json";
  return node_environment_file(req.log_path);
}

std::string batch_script(const RunRequest& req, const JobFiles& files, std::string* error, const NodeCapture* capture) {
  if (req.command.empty() || req.command[0].empty()) {
    *error = "run " + req.id + " has no command (the slurm backend runs the spec's command in a batch job)";
    return "";
  }
  std::error_code ec;
  std::string workdir =
      req.workdir.empty() ? fs::current_path(ec).string() : fs::absolute(req.workdir, ec).string();
  if (ec || workdir.empty()) {
    *error = "run " + req.id + ": cannot resolve its working directory: " + ec.message();
    return "";
  }
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# Written by referee's slurm backend for run " << printable(req.id) << " (benchmark "
    << printable(req.benchmark) << ", run " << req.run_index << ", seed " << req.seed << ").\n"
    << "# Runs the command; its exit status goes to the exit code file.\n"
    << "exit_file=" << shell_quote(files.exit_code) << "\n"
    << "finish() {\n"
    << "  printf '%s\\n' \"$1\" >\"$exit_file.tmp\" && mv -f \"$exit_file.tmp\" \"$exit_file\"\n"
    << "  exit \"$1\"\n"
    << "}\n"
    << "cd " << shell_quote(workdir) << " || { echo \"referee: cannot enter the working directory\" "
    << shell_quote(workdir) << " >&2; finish 126; }\n";
  for (const auto& [name, value] : req.env) {
    if (!is_shell_name(name)) {
      *error = "run " + req.id + ": environment name '" + printable(name) +
               "' is not a shell variable name (letters, digits, _)";
      return "";
    }
    s << "export " << name << "=" << shell_quote(value) << "\n";
  }
  auto launcher = launcher_words(req, error);
  if (!launcher) {
    *error = "run " + req.id + ": " + *error;
    return "";
  }
  if (capture && !capture->referee_binary.empty()) {
    // The environment of the node (and container) the command runs on; a
    // capture that fails leaves its reason in the .err file, and the run goes on.
    s << "# The environment, captured where the command runs.\n"
      << "env_file=" << shell_quote(capture->env_file) << "\n"
      << "if ";
    if (!launcher->empty()) {
      s << "srun --nodes=1 --ntasks=1";
      std::string ignored;
      for (const auto& f : container_flags(req, &ignored)) s << " " << shell_quote(f);
      s << " ";
    }
    s << shell_quote(capture->referee_binary) << " system env --json";
    if (!capture->spec.empty()) s << " --spec " << shell_quote(capture->spec);
    s << " >\"$env_file.tmp\" 2>\"$env_file.err\" </dev/null; then\n"
      << "  mv -f \"$env_file.tmp\" \"$env_file\" && rm -f \"$env_file.err\"\n"
      << "else\n"
      << "  echo \"referee: the environment capture ended with exit $? on $(hostname)\" >>\"$env_file.err\"\n"
      << "  rm -f \"$env_file.tmp\"\n"
      << "fi\n";
  }
  s << cache_clear_lines(req, hook_launcher(*launcher), "finish " + std::to_string(kCacheClearFailed));
  for (const auto& w : *launcher) s << shell_quote(w) << " ";
  for (size_t i = 0; i < req.command.size(); ++i) s << (i ? " " : "") << shell_quote(req.command[i]);
  s << " </dev/null\n"
    << "finish $?\n";
  return s.str();
}

std::vector<std::string> hook_launcher(const std::vector<std::string>& launcher) {
  if (launcher.empty()) return {};
  return {"srun", "--ntasks-per-node=1", "--kill-on-bad-exit=1"};
}

std::string group_script(const std::vector<RunRequest>& reqs, const std::vector<JobFiles>& files, std::string* error,
                         const NodeCapture* capture) {
  if (reqs.empty() || reqs.size() != files.size()) {
    *error = "a job of several runs needs one set of files per run";
    return "";
  }
  const RunRequest& first = reqs[0];
  std::error_code ec;
  std::string workdir =
      first.workdir.empty() ? fs::current_path(ec).string() : fs::absolute(first.workdir, ec).string();
  if (ec || workdir.empty()) {
    *error = "run " + first.id + ": cannot resolve its working directory: " + ec.message();
    return "";
  }
  std::vector<std::string> flags = container_flags(first, error);
  if (!error->empty()) {
    *error = "run " + first.id + ": " + *error;
    return "";
  }
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "# Written by referee's slurm backend: " << reqs.size() << " runs of benchmark " << printable(first.benchmark)
    << " in this job, one after another, each a job step of its own.\n";
  for (const auto& r : reqs) s << "#   " << printable(r.id) << " (run " << r.run_index << ", seed " << r.seed << ")\n";
  s << "# Each run's output goes to its output file, its exit status to its exit code file; a run whose\n"
    << "# cancel file exists when its turn comes is not started.\n"
    << "finish() {\n"
    << "  printf '%s\\n' \"$2\" >\"$1.tmp\" && mv -f \"$1.tmp\" \"$1\"\n"
    << "}\n"
    << "all_end() {\n"
    << "  echo \"referee: $2\" >&2\n";
  for (const auto& f : files)
    s << "  echo \"referee: $2\" >>" << shell_quote(f.output) << "; finish " << shell_quote(f.exit_code) << " \"$1\"\n";
  s << "  exit \"$1\"\n"
    << "}\n"
    << "cd " << shell_quote(workdir) << " || all_end 126 " << shell_quote("cannot enter the working directory " + workdir)
    << "\n";
  if (!flags.empty()) {
    // One container start for the whole job: its image imported once on each node under
    // its name; every run's step uses it (Pyxis skips the import of a container that exists).
    s << "# The container, started once on each node.\n"
      << "srun --ntasks-per-node=1 --kill-on-bad-exit=1";
    for (const auto& f : flags) s << " " << shell_quote(f);
    s << " true </dev/null || all_end 125 \"the container did not start (srun exit $?): no run of this job started\"\n";
  }
  if (capture && !capture->referee_binary.empty()) {
    s << "# The environment, captured once where the runs run, for each of them.\n"
      << "env_file=" << shell_quote(capture->env_file) << "\n"
      << "if srun --nodes=1 --ntasks=1";
    for (const auto& f : flags) s << " " << shell_quote(f);
    s << " " << shell_quote(capture->referee_binary) << " system env --json";
    if (!capture->spec.empty()) s << " --spec " << shell_quote(capture->spec);
    s << " >\"$env_file.tmp\" 2>\"$env_file.err\" </dev/null; then\n"
      << "  mv -f \"$env_file.tmp\" \"$env_file\" && rm -f \"$env_file.err\"\n";
    for (size_t i = 1; i < reqs.size(); ++i) {
      std::string to = node_env_file(reqs[i], files[i].dir);
      s << "  cp \"$env_file\" " << shell_quote(to + ".tmp") << " && mv -f " << shell_quote(to + ".tmp") << " "
        << shell_quote(to) << "\n";
    }
    s << "else\n"
      << "  echo \"referee: the environment capture ended with exit $? on $(hostname)\" >>\"$env_file.err\"\n"
      << "  rm -f \"$env_file.tmp\"\n"
      << "fi\n";
  }
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RunRequest& r = reqs[i];
    const JobFiles& f = files[i];
    if (r.command.empty() || r.command[0].empty()) {
      *error = "run " + r.id + " has no command (the slurm backend runs the spec's command in a batch job)";
      return "";
    }
    auto launcher = launcher_words(r, error);
    if (!launcher) {
      *error = "run " + r.id + ": " + *error;
      return "";
    }
    // Always a step of its own (srun), named after the run, so that it is stopped alone.
    std::vector<std::string> step = {"srun", "--kill-on-bad-exit=1", "--job-name=" + printable(r.id)};
    if (std::string t = time_limit(r.timeout); !t.empty()) step.push_back("--time=" + t);
    if (!launcher->empty()) step.insert(step.end(), launcher->begin() + 2, launcher->end());
    s << "\n# " << printable(r.id) << " (run " << r.run_index << ", seed " << r.seed << ")\n"
      << "if [ -e " << shell_quote(f.cancel) << " ]; then\n"
      << "  echo \"referee: cancelled before it started\" >>" << shell_quote(f.output) << "\n"
      << "  finish " << shell_quote(f.exit_code) << " 143\n"
      << "else\n"
      << "(\n"
      << ": >" << shell_quote(f.started) << "\n";
    for (const auto& [name, value] : r.env) {
      if (!is_shell_name(name)) {
        *error = "run " + r.id + ": environment name '" + printable(name) +
                 "' is not a shell variable name (letters, digits, _)";
        return "";
      }
      s << "export " << name << "=" << shell_quote(value) << "\n";
    }
    // The hook's step carries the run's name too: a cancel or a timeout during the hook stops it.
    std::vector<std::string> hook = hook_launcher(step);
    hook.push_back("--job-name=" + printable(r.id));
    s << cache_clear_lines(r, hook, "exit " + std::to_string(kCacheClearFailed))
      << "[ -e " << shell_quote(f.cancel) << " ] && exit 143\n"
      << "exec";
    for (const auto& w : step) s << " " << shell_quote(w);
    for (const auto& w : r.command) s << " " << shell_quote(w);
    s << " </dev/null\n"
      << ") >" << shell_quote(f.output) << " 2>&1 </dev/null\n"
      << "finish " << shell_quote(f.exit_code) << " $?\n"
      << "fi\n";
  }
  s << "exit 0\n";
  return s.str();
}

std::string time_limit(std::chrono::seconds timeout) {
  if (timeout.count() <= 0) return "";
  return std::to_string((timeout.count() + 59) / 60);
}

std::vector<std::string> sbatch_args(const RunRequest& req, const JobFiles& files, const std::string& workdir,
                                     std::string* error) {
  for (const auto& [key, value] : req.options) {
    if (std::find(kOptionKeys.begin(), kOptionKeys.end(), key) == kOptionKeys.end()) {
      std::string known;
      for (const auto& k : kOptionKeys) known += (known.empty() ? "" : ", ") + k;
      *error = "unknown slurm option '" + key + "' (known: " + known + ")";
      return {};
    }
    if (has_control_chars(value)) {
      *error = "slurm option '" + key + "' has a control character in its value";
      return {};
    }
    if (key != "extra_args" && key != "work_dir" && key != "srun_args" && value.empty()) {
      *error = "slurm option '" + key + "' is empty";
      return {};
    }
  }
  std::vector<std::string> args = {"--parsable",
                                   "--job-name=" + (req.id.empty() ? std::string("referee") : printable(req.id)),
                                   "--output=" + escape_percent(files.output),
                                   "--open-mode=truncate",
                                   "--chdir=" + workdir};
  auto opt = [&](const char* key, const char* flag) {
    if (auto it = req.options.find(key); it != req.options.end()) args.push_back(std::string(flag) + "=" + it->second);
  };
  opt("nodes", "--nodes");
  opt("tasks_per_node", "--ntasks-per-node");
  opt("gpus_per_node", "--gpus-per-node");
  opt("partition", "--partition");
  opt("account", "--account");
  if (std::string t = time_limit(req.timeout); !t.empty()) args.push_back("--time=" + t);
  if (auto it = req.options.find("extra_args"); it != req.options.end()) {
    auto words = split_words(it->second);
    if (!words) {
      *error = "slurm option extra_args has an unclosed quote or a trailing backslash: " + it->second;
      return {};
    }
    args.insert(args.end(), words->begin(), words->end());
  }
  args.push_back(files.script);
  return args;
}

std::string parse_job_id(const std::string& out) {
  size_t i = out.find_first_not_of(" \t\r\n");
  if (i == std::string::npos) return "";
  size_t j = i;
  while (j < out.size() && std::isdigit(static_cast<unsigned char>(out[j]))) ++j;
  if (j == i) return "";
  if (j < out.size() && out[j] != ';' && out[j] != '\n' && out[j] != '\r' && out[j] != ' ') return "";
  return out.substr(i, j - i);
}

std::map<std::string, std::string> parse_scontrol(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) {
    size_t eq = tok.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    fields.emplace(tok.substr(0, eq), tok.substr(eq + 1));
  }
  return fields;
}

bool is_terminal(const std::string& st) {
  static const std::set<std::string> terminal = {
      "COMPLETED", "CANCELLED", "FAILED",  "TIMEOUT",      "NODE_FAIL",    "PREEMPTED",
      "BOOT_FAIL", "DEADLINE",  "REVOKED", "OUT_OF_MEMORY", "SPECIAL_EXIT"};
  return terminal.count(st) > 0;
}

RunStatus map_state(const std::string& st, int exit_code, int signal, const std::string& reason) {
  RunStatus r;
  r.exit_code = exit_code;
  std::string why = (reason.empty() || reason == "None") ? "" : " (" + reason + ")";
  if (st == "PENDING" || st == "CONFIGURING" || st == "REQUEUED" || st == "REQUEUE_FED" ||
      st == "REQUEUE_HOLD" || st == "RESIZING") {
    r.state = RunState::Pending;
    r.detail = "slurm state " + st + why;
  } else if (st == "COMPLETED") {
    r.state = RunState::Succeeded;
    if (r.exit_code < 0) r.exit_code = 0;
    r.detail = "exit " + std::to_string(r.exit_code);
  } else if (st == "FAILED") {
    r.state = RunState::Failed;
    if (exit_code > 0) {
      r.detail = "exit " + std::to_string(exit_code);
    } else if (signal > 0) {
      r.detail = "killed by " + signal_name(signal);
    } else {
      r.detail = "slurm state FAILED" + why;
    }
  } else if (st == "CANCELLED") {
    r.state = RunState::Cancelled;
    r.detail = "slurm state CANCELLED" + why;
  } else if (st == "TIMEOUT" || st == "DEADLINE") {
    r.state = RunState::TimedOut;
    r.detail = "slurm state " + st + ": the job reached its time limit" + why;
  } else if (is_terminal(st)) {
    r.state = RunState::Failed;
    r.detail = "slurm state " + st + why;
  } else {
    r.state = RunState::Running;
    r.detail = "slurm state " + (st.empty() ? std::string("unknown") : st) + why;
  }
  return r;
}

// ------------------------------------------------------------- run_command

CommandResult run_command(const std::vector<std::string>& argv, const std::string& slurm_conf,
                          std::chrono::milliseconds timeout) {
  base::CommandOptions o;
  if (!slurm_conf.empty()) o.env["SLURM_CONF"] = slurm_conf;
  o.timeout = timeout;
  o.stderr_to = base::StderrTo::Capture;
  o.own_process_group = false;  // a Ctrl-C at the terminal reaches it too
  o.fallback_dirs = {"/usr/bin"};  // Slurm's commands live there; a harness started with a bare PATH still finds them
  o.max_output = std::string().max_size();
  CommandResult r = base::run_command(argv, o);
  if (r.started) {
    r.error.clear();  // a timeout or a signal shows in timed_out and exit_code
  } else if (r.spawn_errno == ENOENT) {
    r.error = argv[0] + " not found on PATH (is the Slurm client installed?)";
  } else if (r.spawn_errno != 0) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(r.spawn_errno);
  }
  return r;
}

}  // namespace slurm

// ------------------------------------------------------------- the handle

namespace {

using base::trim;

std::string first_line(const std::string& s) {
  std::string t = trim(s);
  size_t nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(0, nl);
}

// "3:0" -> exit 3, signal 0.
void parse_exit_code(const std::string& s, int* exit_code, int* signal) {
  size_t colon = s.find(':');
  try {
    *exit_code = std::stoi(s.substr(0, colon));
    if (colon != std::string::npos) *signal = std::stoi(s.substr(colon + 1));
  } catch (...) {
  }
}

// What one look at Slurm found.
struct JobInfo {
  enum Kind { Known, Gone, Unreachable } kind = Unreachable;
  std::string state;   // COMPLETED, RUNNING, ...
  std::string reason;
  int exit_code = -1;  // from scontrol/sacct, when given
  int signal = 0;
  std::string error;   // when Unreachable
};

bool says_invalid_job(const slurm::CommandResult& r) {
  return r.started && r.err.find("Invalid job id") != std::string::npos;
}

// What the runs of one job (runs_per_job) share: one look at Slurm serves
// them all for a moment, so that five runs do not ask five times a second.
struct SharedJobLook {
  std::mutex mu;
  bool have = false;
  Clock::time_point at;
  JobInfo info;
};

// A run that is one of several in its job (group_script).
struct InGroup {
  std::string step_name;  // its job step's name: the run's id
  std::string before;     // the runs before it in the job, for "waiting for ..."
  std::shared_ptr<SharedJobLook> look;
};

class SlurmHandle : public RunHandle {
 public:
  SlurmHandle(std::string id, std::string job_id, slurm::JobFiles files, LineSink sink, SlurmOptions opts,
              std::chrono::seconds timeout, std::string token = "", std::optional<InGroup> group = std::nullopt)
      : id_(std::move(id)),
        token_(std::move(token)),
        job_id_(std::move(job_id)),
        files_(std::move(files)),
        sink_(std::move(sink)),
        lines_(id_, sink_),
        opts_(std::move(opts)),
        timeout_(timeout),
        group_(std::move(group)) {
    status_.state = RunState::Pending;
    status_.detail = "submitted as slurm job " + job_id_;
    thread_ = std::thread([this] { monitor(); });
  }

  ~SlurmHandle() override {
    bool running;
    {
      std::lock_guard lock(mu_);
      running = !done_;
    }
    if (running) cancel("the run's handle was destroyed");
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  const std::string& id() const override { return id_; }
  std::string job_id() const override { return job_id_; }
  std::string output_path() const override { return files_.output; }

  RunStatus poll() override {
    std::lock_guard lock(mu_);
    return status_;
  }

  RunStatus wait(std::chrono::milliseconds limit) override {
    std::unique_lock lock(mu_);
    if (limit >= std::chrono::hours(24 * 365)) {
      cv_.wait(lock, [&] { return done_; });
    } else {
      cv_.wait_for(lock, limit, [&] { return done_; });
    }
    return status_;
  }

  void cancel(const std::string& reason) override {
    if (group_) {
      cancel_in_group(reason);
      return;
    }
    {
      std::lock_guard lock(mu_);
      if (done_ || cancel_requested_) return;
    }
    if (ended()) {
      // Its command has ended (or the job has): it is collected as it ended
      // at the next look, not cancelled.
      {
        std::lock_guard lock(mu_);
        poke_ = true;
      }
      cv_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mu_);
      if (done_ || cancel_requested_) return;
      cancel_requested_ = true;
      cancel_reason_ = reason.empty() ? "cancelled" : reason;
    }
    scancel();
    {
      std::lock_guard lock(mu_);
      poke_ = true;
    }
    cv_.notify_all();
  }

  // A run of a job of several: the whole job goes at once (every run of it).
  void kill_now(const std::string& reason) override {
    if (!group_) {
      cancel(reason);
      return;
    }
    {
      std::lock_guard lock(mu_);
      if (done_) return;
      if (!cancel_requested_) {
        cancel_requested_ = true;
        cancel_reason_ = reason.empty() ? "cancelled" : reason;
      }
      killed_job_ = true;
      poke_ = true;
    }
    touch(files_.cancel);
    slurm::run_command({"scancel", job_id_}, opts_.slurm_conf, opts_.command_timeout);
    cv_.notify_all();
  }

 private:
  static void touch(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  }
  bool exists(const std::string& path) const {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }

  // Stops one run of a job of several: its cancel file keeps it from
  // starting when its turn comes; once it has started, its step is sent
  // scancel (the monitor tries again until Slurm lists the step).
  void cancel_in_group(const std::string& reason) {
    {
      std::lock_guard lock(mu_);
      if (done_ || cancel_requested_) return;
    }
    if (read_exit_file() >= 0) {
      std::lock_guard lock(mu_);
      poke_ = true;
      cv_.notify_all();
      return;
    }
    touch(files_.cancel);
    {
      std::lock_guard lock(mu_);
      cancel_requested_ = true;
      cancel_reason_ = reason.empty() ? "cancelled" : reason;
    }
    scancel_step();
    {
      std::lock_guard lock(mu_);
      poke_ = true;
    }
    cv_.notify_all();
  }

  // The run's steps, when it has started and Slurm lists them: each sent
  // scancel once. A run has up to two steps of its name (the cache-clear
  // hook's, then its own), and a step that has just ended may still be
  // listed, so every listed step of the name is sent scancel, and the monitor
  // looks again until the run has ended. True when one was found.
  bool scancel_step() {
    if (!exists(files_.started) || read_exit_file() >= 0) return false;
    auto r = slurm::run_command({"squeue", "--noheader", "--steps", "--jobs=" + job_id_, "--format=%i|%j"},
                                opts_.slurm_conf, opts_.command_timeout);
    std::istringstream in(r.out);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) {
      size_t bar = line.find('|');
      if (bar == std::string::npos) continue;
      std::string step = trim(line.substr(0, bar)), name = trim(line.substr(bar + 1));
      if (name != group_->step_name) continue;
      found = true;
      {
        std::lock_guard lock(mu_);
        if (!steps_cancelled_.insert(step).second) continue;
        step_cancelled_ = step;
      }
      slurm::run_command({"scancel", step}, opts_.slurm_conf, opts_.command_timeout);
    }
    return found;
  }

  // Whether the job has ended though the monitor may not have seen it yet:
  // the batch script wrote its exit code, or Slurm gives a final state.
  bool ended() {
    if (read_exit_file() >= 0) return true;
    JobInfo info = query();
    return info.kind == JobInfo::Known && slurm::is_terminal(info.state);
  }

  void scancel() {
    // A job that has just ended makes scancel complain; the state query tells what happened.
    slurm::run_command({"scancel", job_id_}, opts_.slurm_conf, opts_.command_timeout);
  }

  JobInfo query() {
    if (!group_ || !group_->look) return query_slurm();
    SharedJobLook& look = *group_->look;
    std::lock_guard lock(look.mu);
    if (look.have && Clock::now() - look.at < opts_.state_interval / 2) return look.info;
    look.info = query_slurm();
    look.at = Clock::now();
    look.have = true;
    return look.info;
  }

  JobInfo query_slurm() {
    JobInfo info;
    auto sq = slurm::run_command({"squeue", "--noheader", "--states=all", "--jobs=" + job_id_, "--format=%T|%r"},
                                 opts_.slurm_conf, opts_.command_timeout);
    bool gone = says_invalid_job(sq);
    std::string line = first_line(sq.out);
    if (sq.exit_code == 0 && !line.empty()) {
      size_t bar = line.find('|');
      info.kind = JobInfo::Known;
      info.state = line.substr(0, bar);
      if (bar != std::string::npos) info.reason = line.substr(bar + 1);
      if (!slurm::is_terminal(info.state)) return info;
    }
    // Finished (for its exit code), or no longer in squeue: scontrol keeps it for MinJobAge.
    auto sc = slurm::run_command({"scontrol", "--oneliner", "show", "job", job_id_}, opts_.slurm_conf,
                                 opts_.command_timeout);
    if (sc.exit_code == 0) {
      auto f = slurm::parse_scontrol(sc.out);
      if (auto it = f.find("JobState"); it != f.end()) {
        info.kind = JobInfo::Known;
        info.state = it->second;
        if (auto r = f.find("Reason"); r != f.end()) info.reason = r->second;
        if (auto e = f.find("ExitCode"); e != f.end()) parse_exit_code(e->second, &info.exit_code, &info.signal);
        return info;
      }
    }
    gone = gone || says_invalid_job(sc);
    if (info.kind == JobInfo::Known) return info;
    // Gone from the controller: accounting, where the cluster has it.
    auto sa = slurm::run_command({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + job_id_,
                                  "--format=State,ExitCode"},
                                 opts_.slurm_conf, opts_.command_timeout);
    std::string acct = first_line(sa.out);
    if (sa.exit_code == 0 && !acct.empty()) {
      size_t bar = acct.find('|');
      std::string st = acct.substr(0, bar);
      st = st.substr(0, st.find(' '));  // "CANCELLED by 0"
      info.kind = JobInfo::Known;
      info.state = st;
      if (bar != std::string::npos) parse_exit_code(acct.substr(bar + 1), &info.exit_code, &info.signal);
      return info;
    }
    if (gone) {
      info.kind = JobInfo::Gone;
    } else {
      info.kind = JobInfo::Unreachable;
      info.error = first_line(!sq.error.empty() ? sq.error : sq.err);
      if (info.error.empty() && sq.timed_out) info.error = "squeue timed out";
    }
    return info;
  }

  // The exit status the batch script wrote, or -1.
  int read_exit_file() const { return slurm::read_exit_code(files_.exit_code); }

  // Reads what the job has added to its output file; sends whole lines.
  // True when something was read.
  bool read_output() {
    int fd = ::open(files_.output.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && static_cast<unsigned long long>(st.st_size) < offset_) {
      offset_ = 0;  // truncated: the job was requeued and started again
      lines_.reset();
    }
    bool got_any = false;
    char buf[65536];
    for (;;) {
      ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got_any = true;
      offset_ += static_cast<unsigned long long>(n);
      lines_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    ::close(fd);
    return got_any;
  }

  // Reads until the file stops growing (a shared file system may show the
  // last writes late), then sends the last partial line.
  void final_drain() {
    auto quiet_since = Clock::now();
    auto give_up = Clock::now() + std::chrono::seconds(5);
    read_output();
    while (Clock::now() < give_up && Clock::now() - quiet_since < 2 * opts_.read_interval) {
      std::this_thread::sleep_for(opts_.read_interval / 2);
      if (read_output()) quiet_since = Clock::now();
    }
    lines_.finish();
  }

  void set_status(RunStatus s) {
    std::lock_guard lock(mu_);
    if (!done_) status_ = std::move(s);
  }

  // How a run of a job of several ended: its exit code file, else what
  // became of the job while it ran or before its turn came.
  RunStatus status_in_group(const JobInfo& info) {
    int code = read_exit_file();
    if (code == 0) return {RunState::Succeeded, 0, "exit 0"};
    if (code > 0) {
      RunStatus s{RunState::Failed, code, "exit " + std::to_string(code)};
      if (code == kCacheClearFailed) s.detail += " (its cache_clear hook failed: its command did not start)";
      return s;
    }
    std::string state = info.kind == JobInfo::Known ? info.state : "gone from Slurm";
    if (!exists(files_.started))
      return {RunState::Failed, -1,
              "slurm job " + job_id_ + " ended (" + state + ") before this run's turn came" +
                  (group_->before.empty() ? "" : " (after " + group_->before + ")")};
    RunStatus s = info.kind == JobInfo::Known ? slurm::map_state(info.state, info.exit_code, info.signal, info.reason)
                                              : RunStatus{RunState::Failed, -1, ""};
    if (s.state == RunState::Succeeded || s.state == RunState::Pending || s.state == RunState::Running)
      s = {RunState::Failed, -1, ""};
    s.detail = "slurm job " + job_id_ + " ended (" + state + ") while this run ran, before its exit status was written" +
               (s.detail.empty() ? "" : ": " + s.detail);
    return s;
  }

  void finish(const JobInfo& info, bool timed_out_by_us) {
    final_drain();
    int file_code = read_exit_file();
    int exit_code = file_code >= 0 ? file_code : info.exit_code;
    int signal = file_code >= 0 ? 0 : info.signal;
    RunStatus s;
    if (group_) {
      s = status_in_group(info);
    } else if (info.kind == JobInfo::Gone) {
      if (file_code == 0) {
        s = {RunState::Succeeded, 0, "exit 0"};
      } else if (file_code > 0) {
        s = {RunState::Failed, file_code, "exit " + std::to_string(file_code)};
      } else {
        s = {RunState::Failed, -1,
             "slurm job " + job_id_ + " left the queue without an exit code (not in squeue, scontrol or sacct)"};
      }
    } else {
      s = slurm::map_state(info.state, exit_code, signal, info.reason);
    }
    bool stopped;
    {
      std::lock_guard lock(mu_);
      stopped = cancel_requested_;
    }
    // Slurm ends a job's processes as far as its process tracking follows them (proctrack/linuxproc
    // does not follow one that ignores SIGTERM): those left on this machine are found by their token.
    std::string left;
    if (stopped || timed_out_by_us || s.state == RunState::Cancelled || s.state == RunState::TimedOut)
      left = end_processes_with_token(token_, 0, std::chrono::milliseconds(2000), false,
                                      "of the job still ran on this machine after Slurm ended the job");
    std::lock_guard lock(mu_);
    if (timed_out_by_us && s.state != RunState::Succeeded) {
      s.state = RunState::TimedOut;
      s.detail = "time limit of " + std::to_string(timeout_.count()) + " s exceeded: referee cancelled " +
                 (group_ ? (step_cancelled_.empty() ? "its step of slurm job " + job_id_ : "step " + step_cancelled_)
                         : "slurm job " + job_id_ + " (slurm state " + (info.state.empty() ? "unknown" : info.state) + ")");
    } else if (cancel_requested_ && group_ && !(file_code == 0 && !killed_job_)) {
      bool began = exists(files_.started);
      s.state = RunState::Cancelled;
      s.detail = cancel_reason_ + (killed_job_                ? " (scancel " + job_id_ + ": the whole job)"
                                   : !step_cancelled_.empty() ? " (scancel " + step_cancelled_ + ", its step of job " + job_id_ + ")"
                                   : began                    ? " (its step of job " + job_id_ + " ended first)"
                                                              : " (before its turn came in job " + job_id_ + ")");
    } else if (cancel_requested_ && !group_) {
      s.state = RunState::Cancelled;
      s.detail = cancel_reason_ + " (scancel " + job_id_ + ")";
    } else if (s.state == RunState::Cancelled) {
      s.detail = "slurm job " + job_id_ + " was cancelled outside referee (" + s.detail + ")";
    } else if (s.state == RunState::TimedOut) {
      s.detail += "; limit " + (timeout_.count() > 0 ? slurm::time_limit(timeout_) + " min" : "from the cluster") +
                  ", job " + job_id_;
    }
    if (!left.empty()) {
      s.leftovers = left;
      s.detail += "; " + left;
    }
    status_ = std::move(s);
    done_ = true;
    cv_.notify_all();
  }

  void monitor() {
    auto next_query = Clock::now();
    std::optional<Clock::time_point> started;
    bool timed_out_by_us = false;
    int gone_count = 0;
    for (;;) {
      // Output means the job runs; in a job of several runs, only the run's started file does.
      if (read_output() && !started && !group_) {
        // Output means the job runs, even before squeue has been asked.
        started = Clock::now();
        set_status({RunState::Running, -1, "slurm state RUNNING, job " + job_id_});
      }
      bool poked;
      {
        std::lock_guard lock(mu_);
        poked = poke_;
        poke_ = false;
      }
      if (poked || Clock::now() >= next_query) {
        next_query = Clock::now() + opts_.state_interval;
        JobInfo info = query();
        if (group_ && info.kind != JobInfo::Unreachable) {
          // One run of several: its own files say where it is; the job, when it has ended.
          gone_count = info.kind == JobInfo::Gone ? gone_count + 1 : 0;
          bool began = exists(files_.started);
          if (began && !started) started = Clock::now();
          bool cancelling;
          {
            std::lock_guard lock(mu_);
            cancelling = cancel_requested_ && !killed_job_;
          }
          if (read_exit_file() >= 0 || (info.kind == JobInfo::Known && slurm::is_terminal(info.state)) ||
              gone_count >= 3) {
            finish(info, timed_out_by_us);
            return;
          }
          if (cancelling && began) scancel_step();
          if (began) {
            set_status({RunState::Running, -1, "slurm state RUNNING, a step of job " + job_id_});
          } else if (info.kind == JobInfo::Known && info.state == "RUNNING") {
            set_status({RunState::Pending, -1,
                        "waiting in job " + job_id_ + " for the runs before it" +
                            (group_->before.empty() ? "" : " (" + group_->before + ")")});
          } else if (info.kind == JobInfo::Known) {
            RunStatus st = slurm::map_state(info.state, -1, 0, info.reason);
            if (st.state == RunState::Running) st.state = RunState::Pending;  // the job, not yet this run
            st.detail += ", job " + job_id_;
            set_status(std::move(st));
          }
        } else if (info.kind == JobInfo::Known) {
          gone_count = 0;
          bool script_done = info.state == "COMPLETING" && read_exit_file() >= 0;
          if (slurm::is_terminal(info.state) || script_done) {
            if (script_done) {
              int code = read_exit_file();
              info.state = code == 0 ? "COMPLETED" : "FAILED";
            }
            finish(info, timed_out_by_us);
            return;
          }
          RunStatus s = slurm::map_state(info.state, -1, 0, info.reason);
          if (s.state == RunState::Running && !started) started = Clock::now();
          s.detail += ", job " + job_id_;
          set_status(std::move(s));
        } else if (info.kind == JobInfo::Gone) {
          // A job that ran and left: the exit code file tells how it went
          // (seen again a moment later in case the file system lags).
          if (read_exit_file() >= 0 || ++gone_count >= 3) {
            finish(info, timed_out_by_us);
            return;
          }
        } else {
          RunStatus s = poll();
          s.detail = "cannot reach Slurm (" + info.error + "), job " + job_id_;
          set_status(std::move(s));
        }
        if (timeout_.count() > 0 && started && !timed_out_by_us && Clock::now() - *started > timeout_) {
          bool cancelling;
          {
            std::lock_guard lock(mu_);
            cancelling = cancel_requested_;
          }
          if (!cancelling) {
            timed_out_by_us = true;
            if (!group_) {
              scancel();
            } else {
              // One run of several: its step only (the job goes on with the next run).
              // Its steps are sent scancel as Slurm lists them, until the run has ended.
              touch(files_.cancel);
              {
                std::lock_guard lock(mu_);
                cancel_requested_ = true;
                cancel_reason_ = "time limit of " + std::to_string(timeout_.count()) + " s exceeded";
              }
              scancel_step();
            }
            next_query = Clock::now();
          }
        }
      }
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, opts_.read_interval, [&] { return stop_ || poke_; });
      if (stop_) return;
    }
  }

  const std::string id_;
  const std::string token_;  // kRunTokenVar's value in the job's environment ("" when none)
  const std::string job_id_;
  const slurm::JobFiles files_;
  const LineSink sink_;
  OutputLines lines_;  // monitor thread only
  const SlurmOptions opts_;
  const std::chrono::seconds timeout_;

  // Monitor thread only.
  unsigned long long offset_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  RunStatus status_;
  bool done_ = false;
  bool stop_ = false;
  bool poke_ = false;
  bool cancel_requested_ = false;
  std::string cancel_reason_;
  // A run of a job of several only:
  const std::optional<InGroup> group_;
  std::string step_cancelled_;  // the last step sent scancel ("123.2"), "" until then
  std::set<std::string> steps_cancelled_;  // every step sent scancel
  bool killed_job_ = false;     // kill_now: the whole job was sent scancel
  std::thread thread_;
};

std::string safe_name(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (out.empty() || out[0] == '.') out = "run" + out;
  return out.substr(0, 64);
}

// Makes the run's own work directory: <root>/<id>.XXXXXX.
std::string make_work_dir(const RunRequest& req, const SlurmOptions& opts, std::string* error) {
  fs::path root;
  if (!opts.work_root.empty()) {
    root = opts.work_root;
  } else if (auto it = req.options.find("work_dir"); it != req.options.end() && !it->second.empty()) {
    root = it->second;
  } else if (!req.log_path.empty()) {
    root = fs::absolute(req.log_path).parent_path() / ".slurm";
  } else {
    root = fs::temp_directory_path() / "referee-slurm-runs";
  }
  std::error_code ec;
  root = fs::absolute(root, ec);
  fs::create_directories(root, ec);
  if (ec) {
    *error = "cannot create the slurm work directory " + root.string() + ": " + ec.message();
    return "";
  }
  std::string tmpl = (root / (safe_name(req.id) + ".XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    *error = "cannot create a directory in " + root.string() + ": " + std::strerror(errno);
    return "";
  }
  ::chmod(buf.data(), 0755);
  return std::string(buf.data());
}

}  // namespace

SlurmBackend::SlurmBackend(SlurmOptions options) : options_(std::move(options)) {}

bool SlurmBackend::preflight(const RunRequest& sample, std::string* error) {
  bool container = false;
  for (const auto& [k, v] : sample.options) container = container || k.rfind("container_", 0) == 0;
  if (container) {
    auto r = slurm::run_command({"srun", "--help"}, options_.slurm_conf, options_.command_timeout);
    if (!r.started) {
      *error = "cannot run srun --help to look for Pyxis: " + r.error;
      return false;
    }
    if ((r.out + r.err).find("--container-image") == std::string::npos) {
      *error = "the spec asks for a container (backend_options.container_*), and this cluster's srun has no "
               "--container-image: Pyxis (the Slurm plugin that runs containers) is not installed";
      return false;
    }
  }
  // The job as a run would submit it, to a folder of its own that goes away after.
  std::error_code ec;
  fs::path root = fs::temp_directory_path(ec) / ("referee-slurm-preflight-" + std::to_string(::getpid()));
  fs::create_directories(root, ec);
  struct Remove {
    fs::path p;
    ~Remove() {
      std::error_code e;
      fs::remove_all(p, e);
    }
  } remove{root};
  slurm::JobFiles files = slurm::job_files(root.string());
  std::string script = slurm::batch_script(sample, files, error, nullptr);
  if (script.empty()) return false;
  std::string workdir = sample.workdir.empty() ? fs::current_path(ec).string() : fs::absolute(sample.workdir, ec).string();
  std::vector<std::string> args = slurm::sbatch_args(sample, files, workdir, error);
  if (args.empty()) return false;
  {
    std::ofstream out(files.script, std::ios::binary | std::ios::trunc);
    out << script;
    if (!out.flush()) {
      *error = "cannot write a batch script to " + files.script + " for sbatch --test-only";
      return false;
    }
  }
  args.insert(args.begin(), {"sbatch", "--test-only"});
  auto r = slurm::run_command(args, options_.slurm_conf, options_.command_timeout);
  if (!r.started) {
    *error = "cannot run sbatch: " + r.error;
    return false;
  }
  if (r.timed_out) {
    *error = "sbatch --test-only did not answer in " + std::to_string(options_.command_timeout.count()) + " s";
    return false;
  }
  if (r.exit_code != 0) {
    std::string why = trim(r.err);
    if (why.empty()) why = trim(r.out);
    *error = "Slurm refuses the job a run would submit (sbatch --test-only, exit " + std::to_string(r.exit_code) + ")" +
             (why.empty() ? std::string() : ": " + why);
    return false;
  }
  return true;
}

namespace {

// Writes the batch script and submits it: the job id, or "" with *error.
std::string submit(const std::string& script_path, const std::string& script, std::vector<std::string> args,
                   const std::string& what, const SlurmOptions& options, std::string* error) {
  {
    std::ofstream out(script_path, std::ios::binary | std::ios::trunc);
    out << script;
    if (!out.flush()) {
      *error = "cannot write the batch script " + script_path;
      return "";
    }
  }
  ::chmod(script_path.c_str(), 0755);
  args.insert(args.begin(), "sbatch");
  auto r = slurm::run_command(args, options.slurm_conf, options.command_timeout);
  if (!r.started) {
    *error = "cannot submit " + what + ": " + r.error;
    return "";
  }
  if (r.timed_out) {
    *error = "cannot submit " + what + ": sbatch did not answer in " + std::to_string(options.command_timeout.count()) +
             " s";
    return "";
  }
  std::string job_id = slurm::parse_job_id(r.out);
  if (r.exit_code != 0 || job_id.empty()) {
    std::string why = trim(r.err);
    if (why.empty()) why = trim(r.out);
    *error = "sbatch refused " + what + " (exit " + std::to_string(r.exit_code) + ")" +
             (why.empty() ? std::string() : ": " + why);
    return "";
  }
  return job_id;
}


}  // namespace

std::unique_ptr<RunHandle> SlurmBackend::launch(const RunRequest& req, LineSink sink, std::string* error) {
  std::string err;
  if (!error) error = &err;
  std::string dir = make_work_dir(req, options_, error);
  if (dir.empty()) return nullptr;
  slurm::JobFiles files = slurm::job_files(dir);
  slurm::NodeCapture capture{options_.referee_binary, options_.capture_spec, slurm::node_env_file(req, dir)};
  std::string script = slurm::batch_script(req, files, error, options_.referee_binary.empty() ? nullptr : &capture);
  if (script.empty()) return nullptr;
  std::error_code ec;
  std::string workdir = req.workdir.empty() ? fs::current_path(ec).string() : fs::absolute(req.workdir, ec).string();
  std::vector<std::string> args = slurm::sbatch_args(req, files, workdir, error);
  if (args.empty()) return nullptr;
  // The run's token as the job's comment: a job whose id the harness never heard is still found.
  if (std::string t = run_token_of(req); !t.empty()) args.insert(args.end() - 1, "--comment=" + slurm::printable(t));
  std::string job_id = submit(files.script, script, args, "run " + req.id, options_, error);
  if (job_id.empty()) return nullptr;
  return std::make_unique<SlurmHandle>(req.id, job_id, files, std::move(sink), options_, req.timeout, run_token_of(req));
}

int SlurmBackend::runs_per_launch(const RunRequest& sample) const {
  auto it = sample.options.find("runs_per_job");
  if (it == sample.options.end()) return 1;
  char* end = nullptr;
  long n = std::strtol(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || n < 1) return 1;
  return static_cast<int>(std::min<long>(n, 1000));
}

std::vector<std::unique_ptr<RunHandle>> SlurmBackend::launch_group(const std::vector<RunRequest>& reqs,
                                                                   const std::vector<LineSink>& sinks,
                                                                   std::string* error) {
  std::vector<std::unique_ptr<RunHandle>> handles;
  if (reqs.size() != sinks.size() || reqs.empty()) {
    *error = "launch_group: one sink per request";
    return handles;
  }
  if (reqs.size() == 1) return Backend::launch_group(reqs, sinks, error);
  std::vector<RunRequest> rs = reqs;
  // The job's own folder (its script, Slurm's notes), then one per run.
  RunRequest job = rs.front();
  job.id = rs.front().id + ".." + rs.back().id;
  std::string job_dir = make_work_dir(job, options_, error);
  if (job_dir.empty()) return handles;
  slurm::JobFiles job_files = slurm::job_files(job_dir);
  bool container = false;
  for (const auto& [k, v] : rs.front().options) container = container || k.rfind("container_", 0) == 0;
  if (container && !rs.front().options.count("container_name")) {
    // Named, so that the image is imported once and every run's step finds it.
    std::string name = "referee_" + safe_name(fs::path(job_dir).filename().string());
    for (auto& r : rs) r.options["container_name"] = name;
  }
  std::vector<slurm::JobFiles> files;
  for (const auto& r : rs) {
    std::string dir = make_work_dir(r, options_, error);
    if (dir.empty()) return handles;
    files.push_back(slurm::job_files(dir));
  }
  slurm::NodeCapture capture{options_.referee_binary, options_.capture_spec, slurm::node_env_file(rs[0], files[0].dir)};
  std::string script = slurm::group_script(rs, files, error, options_.referee_binary.empty() ? nullptr : &capture);
  if (script.empty()) return handles;
  // The job's time limit: every run's, and a minute each for its hook and start, when every run has one.
  long long total = 0;
  for (const auto& r : rs) total = (total < 0 || r.timeout.count() <= 0) ? -1 : total + r.timeout.count() + 60;
  job.timeout = std::chrono::seconds(total > 0 ? total : 0);
  std::error_code ec;
  std::string workdir = job.workdir.empty() ? fs::current_path(ec).string() : fs::absolute(job.workdir, ec).string();
  std::vector<std::string> args = slurm::sbatch_args(job, job_files, workdir, error);
  if (args.empty()) return handles;
  if (std::string t = run_token_of(rs.front()); !t.empty()) args.insert(args.end() - 1, "--comment=" + slurm::printable(t));
  std::string job_id = submit(job_files.script, script, args, "runs " + job.id, options_, error);
  if (job_id.empty()) return handles;
  auto look = std::make_shared<SharedJobLook>();
  for (size_t i = 0; i < rs.size(); ++i) {
    std::string before;
    if (i > 0 && i <= 3)
      for (size_t k = 0; k < i; ++k) before.append(k ? ", " : "").append(rs[k].id);
    else if (i > 3)
      before.append(rs[0].id).append(" to ").append(rs[i - 1].id).append(", ").append(std::to_string(i)).append(" runs");
    InGroup g{slurm::printable(rs[i].id), before, look};
    handles.push_back(std::make_unique<SlurmHandle>(rs[i].id, job_id, files[i], sinks[i], options_, rs[i].timeout,
                                                    run_token_of(rs[i]), std::move(g)));
  }
  return handles;
}

}  // namespace referee::harness
