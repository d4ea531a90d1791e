#include "harness/preflight.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "base/subprocess.h"
#include "harness/backends/slurm.h"
#include "harness/run_output.h"

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

bool executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string mib(unsigned long long bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MB"; }

}  // namespace

namespace {

std::string argv_problem(const RunRequest& req, const std::vector<std::string>& argv, const std::string& whose);

}  // namespace

std::string program_problem(const RunRequest& req) {
  std::string p = argv_problem(req, req.command, "the command's");
  if (p.empty() && !req.cache_clear.empty()) p = argv_problem(req, req.cache_clear, "the cache_clear hook's");
  return p;
}

namespace {

std::string argv_problem(const RunRequest& req, const std::vector<std::string>& argv, const std::string& whose) {
  if (argv.empty()) return "";
  std::error_code ec;
  fs::path workdir = req.workdir.empty() ? fs::current_path(ec) : fs::absolute(req.workdir, ec);
  const std::string& prog = argv[0];
  fs::path found;
  if (prog.find('/') != std::string::npos) {
    found = fs::path(prog).is_absolute() ? fs::path(prog) : workdir / prog;
    if (!fs::exists(found, ec)) return whose + " program " + prog + " does not exist (in " + workdir.string() + ")";
    if (!executable_file(found)) return whose + " program " + found.string() + " is not an executable file";
  } else {
    auto env = req.env.find("PATH");
    const char* own = std::getenv("PATH");
    std::string path = env != req.env.end() ? env->second : own ? own : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (found.empty() && start <= path.size()) {
      size_t colon = path.find(':', start);
      std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      fs::path candidate = (dir.empty() ? workdir : fs::path(dir)) / prog;
      if (executable_file(candidate)) found = candidate;
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (found.empty()) return whose + " program " + prog + " is not found on PATH (" + path + ")";
  }
  // An interpreter's script: the first argument that is not an option, when it names a file.
  std::string name = found.filename().string();
  static const char* interpreters[] = {"python", "sh", "bash", "dash", "zsh", "perl", "ruby", "node", "Rscript", "julia"};
  bool interpreter = std::any_of(std::begin(interpreters), std::end(interpreters), [&](const char* i) {
    std::string s(i);
    return name == s || (name.rfind(s, 0) == 0 && name.find_first_not_of("0123456789.", s.size()) == std::string::npos);
  });
  if (!interpreter) return "";
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-c" || a == "-m" || a == "-e" || a == "--") return "";  // code or a module, not a file
    if (!a.empty() && a[0] == '-') continue;
    fs::path script = fs::path(a).is_absolute() ? fs::path(a) : workdir / a;
    if (!fs::exists(script, ec))
      return "the script " + a + " that " + name + " is to run does not exist (in " + workdir.string() + ")";
    return "";
  }
  return "";
}

}  // namespace

std::string output_problem(const std::string& out_dir, const std::string& results_dir, int runs) {
  std::error_code ec;
  fs::path at = fs::absolute(out_dir, ec);
  while (!at.empty() && !fs::exists(at, ec) && at != at.root_path()) at = at.parent_path();
  if (!fs::is_directory(at, ec)) return "the output folder " + out_dir + " cannot be made: " + at.string() + " is not a folder";
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    return "the output folder " + out_dir + " cannot be written (" + at.string() + " is not writable by this user)";
  unsigned long long per_run = 1 << 20;
  for (const auto& e : fs::directory_iterator(results_dir, ec))
    if (e.path().filename().string().rfind("result_", 0) == 0)
      per_run = std::max<unsigned long long>(per_run, e.file_size(ec));
  unsigned long long need = static_cast<unsigned long long>(std::max(runs, 0)) * per_run * 3 + (64ULL << 20);
  struct statvfs fsinfo {};
  if (::statvfs(at.c_str(), &fsinfo) != 0) return "";
  unsigned long long free_bytes = static_cast<unsigned long long>(fsinfo.f_bavail) * fsinfo.f_frsize;
  if (free_bytes >= need) return "";
  return "the output folder " + out_dir + " has " + mib(free_bytes) + " free, and " + std::to_string(runs) +
         " run(s) need about " + mib(need) + " (logs of about " + mib(per_run) +
         " each, kept three times while a run ends: the checker's copy, the kept log, the result file)";
}

std::string dry_start_problem(const Spec& spec, const RunRequest& sample, int timeout_s) {
  if (spec.dry_start.empty()) return "";
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec) / ("referee-dry-start-" + std::to_string(::getpid()));
  fs::create_directories(tmp, ec);
  base::CommandOptions o;
  o.workdir = sample.workdir;
  o.env = sample.env;
  o.timeout = std::chrono::seconds(timeout_s);
  o.stderr_to = base::StderrTo::Stdout;
  base::CommandResult r = base::run_command(expand_command(spec.dry_start, 0, 0, (tmp / "dry-start.log").string()), o);
  fs::remove_all(tmp, ec);
  if (r.started && !r.timed_out && r.exit_code == 0) return "";
  std::string what = !r.started     ? "could not start: " + r.error
                     : r.timed_out  ? "did not end within " + std::to_string(timeout_s) + " s"
                     : r.signal     ? r.error
                                    : "exited " + std::to_string(r.exit_code);
  std::string last = last_output_line(r.out);
  return "the dry start (" + slurm::shell_words(spec.dry_start) + ") " + what +
         (last.empty() ? std::string() : "; its last output line: \"" + last + "\"");
}

bool preflight(const Spec& spec, Backend& backend, const RunRequest& sample, const std::string& out_dir,
               const std::string& results_dir, int runs, std::string* error) {
  std::string problem;
  std::string hint;
  if (!backend.preflight(sample, &problem)) {
    hint = spec.backend == "slurm" ? "fix 'backend_options' in the spec (or ask the cluster's administrators), then run again"
                                   : "fix 'command' in the spec (a path relative to 'workdir', or a program on the "
                                     "PATH the runs get)";
  } else if (!(problem = output_problem(out_dir, results_dir, runs)).empty()) {
    hint = "free some room, or give --out another folder";
  } else if (!(problem = dry_start_problem(spec, sample)).empty()) {
    hint = "the runs would fail the same way: fix the workload or its spec, then run again";
  } else {
    return true;
  }
  *error = problem + " (nothing was run, no seed given out)\nhint: " + hint;
  return false;
}

}  // namespace referee::harness
