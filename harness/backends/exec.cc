#include "harness/backends/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "harness/preflight.h"

extern char** environ;

namespace referee::harness {

namespace {

using Clock = std::chrono::steady_clock;

// The processes of process group `pgid` that still run, by name.
std::vector<std::string> group_members(pid_t pgid) {
  std::vector<std::string> names;
  for (const auto& p : running_processes())
    if (p.pgrp == pgid) names.push_back(p.name);
  return names;
}

std::string name_list(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class ExecHandle : public RunHandle {
 public:
  // `output`: the file the run writes its output to and `fd` reads (followed,
  // as Slurm's output file is); "" when `fd` is a pipe.
  ExecHandle(std::string id, pid_t pid, int fd, LineSink sink, std::chrono::seconds timeout,
             std::chrono::milliseconds grace, std::chrono::milliseconds drain, std::string output = "",
             std::string token = "")
      : id_(std::move(id)),
        token_(std::move(token)),
        pid_(pid),
        fd_(fd),
        output_(std::move(output)),
        sink_(std::move(sink)),
        timeout_(timeout),
        grace_(grace),
        drain_(drain) {
    status_.state = RunState::Running;
    thread_ = std::thread([this] { pump(); });
  }
  ~ExecHandle() override {
    cancel("harness shutting down");
    if (thread_.joinable()) thread_.join();
  }
  const std::string& id() const override { return id_; }
  std::string job_id() const override { return std::to_string(pid_); }
  std::string output_path() const override { return output_; }
  RunStatus poll() override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  RunStatus wait(std::chrono::milliseconds limit) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [this] { return done_; });
    return status_;
  }
  void cancel(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_ || cancel_requested_) return;
    if (main_exited_locked()) {
      // It ended before the cancel: it is judged by how it ended; what it
      // left behind is ended now rather than after the drain.
      end_drain_ = true;
      return;
    }
    cancel_requested_ = true;
    cancel_reason_ = reason;
    cancel_at_ = Clock::now();
    ::kill(-pid_, SIGTERM);
  }
  void kill_now(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    if (main_exited_locked()) {
      end_drain_ = true;
      kill_leftovers_now_ = true;
      ::kill(-pid_, SIGKILL);
      return;
    }
    if (!cancel_requested_) {
      cancel_requested_ = true;
      cancel_reason_ = reason;
      cancel_at_ = Clock::now();
    }
    ::kill(-pid_, SIGKILL);
    killed_ = true;
  }

 private:
  // Whether the main process has exited, seen by the pump or not yet (the
  // process is not reaped here). REQUIRES: mu_ held.
  bool main_exited_locked() {
    if (main_exited_) return true;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
      return errno == ECHILD;  // reaped by the pump a moment ago
    return info.si_pid == pid_;
  }

  // Ends what is left of the run's process group once its main process has
  // exited: SIGTERM, then SIGKILL after the grace. Says what it found.
  std::string end_leftovers(bool at_once) {
    auto found = group_members(pid_);
    if (found.empty()) return "";
    std::string what = std::to_string(found.size()) + (found.size() == 1 ? " process" : " processes") +
                       " of its process group still ran after it exited (" + name_list(found) + ")";
    if (at_once) {
      ::kill(-pid_, SIGKILL);
      return what + ": killed (SIGKILL)";
    }
    ::kill(-pid_, SIGTERM);
    auto until = Clock::now() + grace_;
    std::vector<std::string> left = group_members(pid_);
    while (!left.empty() && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      left = group_members(pid_);
    }
    if (left.empty()) return what + ": ended with SIGTERM";
    ::kill(-pid_, SIGKILL);
    return what + ": sent SIGTERM, and SIGKILL to " + name_list(left) + " still running " +
           std::to_string(grace_.count()) + " ms later";
  }

  void pump() {
    OutputLines lines(id_, sink_);
    char buf[65536];
    auto started = Clock::now();
    bool eof = false;
    bool timed_out = false;
    bool exited = false;
    bool cancelled = false;  // a cancel (or the timeout) came while the main process still ran
    int wstatus = 0;
    bool unknown_status = false;
    Clock::time_point exited_at;
    while (true) {
      if (!eof && !output_.empty()) {
        // A file the run writes: read what is there; at its end, wait a little. It ends once the
        // main process has and nothing of its group is left to write.
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n > 0) {
          lines.feed(std::string_view(buf, static_cast<size_t>(n)));
        } else if (n < 0 && errno != EINTR) {
          eof = true;
        } else {
          bool ended;
          {
            std::lock_guard<std::mutex> lock(mu_);
            ended = main_exited_;
          }
          if (ended && group_members(pid_).empty()) eof = true;
          else std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      } else if (!eof) {
        struct pollfd p {fd_, POLLIN, 0};
        int r = ::poll(&p, 1, 50);
        if (r > 0) {
          ssize_t n = ::read(fd_, buf, sizeof buf);
          if (n > 0) lines.feed(std::string_view(buf, static_cast<size_t>(n)));
          else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      auto now = Clock::now();
      std::lock_guard<std::mutex> lock(mu_);
      if (!exited) {
        pid_t w = ::waitpid(pid_, &wstatus, WNOHANG);
        if (w < 0 && errno == ECHILD) unknown_status = true;  // reaped elsewhere (SIGCHLD ignored)
        if (w == pid_ || unknown_status) {
          // The run ends when its main process does: what it printed is
          // drained for a bounded time, even if a child holds the pipe.
          exited = true;
          exited_at = now;
          main_exited_ = true;
          cancelled = cancel_requested_;
        }
      }
      if (exited && (eof || end_drain_ || now - exited_at >= drain_)) break;
      if (!exited && !cancel_requested_ && timeout_.count() > 0 && now - started > timeout_) {
        timed_out = true;
        cancel_requested_ = true;
        cancel_reason_ = "timeout of " + std::to_string(timeout_.count()) + " s";
        cancel_at_ = now;
        ::kill(-pid_, SIGTERM);
      }
      if (cancel_requested_ && !killed_ && now - cancel_at_ > grace_) {
        ::kill(-pid_, SIGKILL);
        killed_ = true;
      }
    }
    // Whatever is in the pipe now, without waiting for more.
    if (!eof) {
      ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
      for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) lines.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    lines.finish();
    ::close(fd_);
    bool at_once;
    {
      std::lock_guard<std::mutex> lock(mu_);
      at_once = kill_leftovers_now_ || killed_;
    }
    // Children of the run that outlived it (leaked workers, a daemon): the group goes with it.
    std::string leftovers = end_leftovers(at_once);
    // Processes of the run that left its group (setsid, a double fork): found by the token in their environment.
    std::string escaped = end_processes_with_token(token_, pid_, grace_, at_once,
                                                   "that left its process group still ran after it ended");
    if (!escaped.empty()) leftovers += (leftovers.empty() ? "" : "; ") + escaped;
    std::lock_guard<std::mutex> lock(mu_);
    if (unknown_status) {
      status_.detail = "exit status unknown (the process was reaped elsewhere)";
    } else if (WIFEXITED(wstatus)) {
      status_.exit_code = WEXITSTATUS(wstatus);
      status_.detail = "exit " + std::to_string(status_.exit_code);
    } else if (WIFSIGNALED(wstatus)) {
      status_.detail = "killed by " + signal_name(WTERMSIG(wstatus));
    }
    if (timed_out) {
      status_.state = RunState::TimedOut;
      status_.detail = cancel_reason_ + " (" + status_.detail + ")";
    } else if (cancelled) {
      status_.state = RunState::Cancelled;
      status_.detail = cancel_reason_ + " (" + status_.detail + ")";
    } else {
      status_.state =
          !unknown_status && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? RunState::Succeeded : RunState::Failed;
    }
    status_.leftovers = leftovers;
    if (!leftovers.empty()) status_.detail += "; " + leftovers;
    done_ = true;
    cv_.notify_all();
  }

  std::string id_;
  std::string token_;  // kRunTokenVar's value in its environment ("" when the request set none)
  pid_t pid_;
  int fd_;
  std::string output_;
  LineSink sink_;
  std::chrono::seconds timeout_;
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds drain_;
  std::mutex mu_;
  std::condition_variable cv_;
  RunStatus status_;
  bool done_ = false;
  bool main_exited_ = false;
  bool end_drain_ = false;
  bool kill_leftovers_now_ = false;
  bool cancel_requested_ = false;
  bool killed_ = false;
  std::string cancel_reason_;
  Clock::time_point cancel_at_;
  std::thread thread_;
};

}  // namespace

bool ExecBackend::preflight(const RunRequest& sample, std::string* error) {
  *error = program_problem(sample);
  return error->empty();
}

std::unique_ptr<RunHandle> ExecBackend::launch(const RunRequest& req, LineSink sink, std::string* error) {
  if (req.command.empty()) {
    *error = "run " + req.id + ": no command to execute (set 'command' in the spec)";
    return nullptr;
  }
  // backend_options.kill_grace: seconds between SIGTERM and SIGKILL (a workload
  // that saves a checkpoint when told to stop may need more than the default).
  std::chrono::milliseconds grace = grace_;
  if (auto it = req.options.find("kill_grace"); it != req.options.end()) {
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || end == it->second.c_str() || *end != '\0' || !(v > 0 && v <= 3600)) {
      *error = "backend_options.kill_grace: expected seconds, more than 0 and at most 3600, found '" + it->second + "'";
      return nullptr;
    }
    grace = std::chrono::milliseconds(static_cast<long long>(v * 1000));
  }
  // The run's output goes to a file beside its log (<id>.output.txt), which
  // the harness follows: a run outlives a harness that ends first (no pipe to
  // break), and what it printed is left for the resume (manifest `output`).
  // Without a log path (a caller with no run folder), a pipe.
  int fds[2];
  std::string output;
  if (!req.log_path.empty()) {
    std::string base = req.log_path;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".log") == 0) base.resize(base.size() - 4);
    output = base + ".output.txt";
    fds[1] = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    fds[0] = fds[1] < 0 ? -1 : ::open(output.c_str(), O_RDONLY | O_CLOEXEC);
    if (fds[1] < 0 || fds[0] < 0) {
      int e = errno;
      if (fds[1] >= 0) ::close(fds[1]);
      *error = "run " + req.id + ": cannot write its output to " + output + ": " + std::strerror(e);
      return nullptr;
    }
  } else if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  // Everything the child needs is prepared before fork: it only calls async-signal-safe functions.
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && req.env.count(kv.substr(0, eq))) continue;
    env_store.push_back(kv);
  }
  for (const auto& [k, v] : req.env) env_store.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = req.command;
  if (!req.cache_clear.empty()) {
    // The hook first, in the run's process group, then the command in its place (exec).
    argv_store = {"/bin/sh", "-c",
                  cache_clear_lines(req, {}, "exit " + std::to_string(kCacheClearFailed)) + "exec \"$@\"\n",
                  "referee-run"};
    argv_store.insert(argv_store.end(), req.command.begin(), req.command.end());
  }
  std::vector<char*> argv;
  for (auto& s : argv_store) argv.push_back(s.data());
  argv.push_back(nullptr);
  int errpipe[2];
  if (::pipe2(errpipe, O_CLOEXEC) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    *error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return nullptr;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // A run starts as from a shell: SIGPIPE and SIGXFSZ at their defaults even when referee ignores them.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);
    ::sigaction(SIGXFSZ, &dfl, nullptr);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!req.workdir.empty() && ::chdir(req.workdir.c_str()) != 0) {
      int e = errno;
      ssize_t ignored = ::write(errpipe[1], &e, sizeof e);
      (void)ignored;
      ::_exit(127);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(errpipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so that the group exists before any kill
  ::close(fds[1]);
  ::close(errpipe[1]);
  int child_errno = 0;
  ssize_t n = ::read(errpipe[0], &child_errno, sizeof child_errno);
  ::close(errpipe[0]);
  if (n == sizeof child_errno) {
    ::close(fds[0]);
    int ws;
    ::waitpid(pid, &ws, 0);
    *error = "run " + req.id + ": cannot start '" + req.command[0] + "'" +
             (req.workdir.empty() ? "" : " in " + req.workdir) + ": " + std::strerror(child_errno);
    return nullptr;
  }
  return std::make_unique<ExecHandle>(req.id, pid, fds[0], std::move(sink), req.timeout, grace, drain_, output,
                                      run_token_of(req));
}

}  // namespace referee::harness
