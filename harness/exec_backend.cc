#include "harness/exec_backend.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace referee::harness {

namespace {

using Clock = std::chrono::steady_clock;

class ExecHandle : public RunHandle {
 public:
  ExecHandle(std::string id, pid_t pid, int fd, LineSink sink, std::chrono::seconds timeout,
             std::chrono::milliseconds grace)
      : id_(std::move(id)), pid_(pid), fd_(fd), sink_(std::move(sink)), timeout_(timeout), grace_(grace) {
    status_.state = RunState::Running;
    thread_ = std::thread([this] { pump(); });
  }
  ~ExecHandle() override {
    cancel("harness shutting down");
    if (thread_.joinable()) thread_.join();
  }
  const std::string& id() const override { return id_; }
  std::string job_id() const override { return std::to_string(pid_); }
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
    cancel_requested_ = true;
    cancel_reason_ = reason;
    cancel_at_ = Clock::now();
    ::kill(-pid_, SIGTERM);
  }
  void kill_now(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    if (!cancel_requested_) {
      cancel_requested_ = true;
      cancel_reason_ = reason;
      cancel_at_ = Clock::now();
    }
    ::kill(-pid_, SIGKILL);
    killed_ = true;
  }

 private:
  void emit(std::string& pending, const char* data, size_t n) {
    pending.append(data, n);
    size_t start = 0;
    while (true) {
      size_t nl = pending.find('\n', start);
      if (nl == std::string::npos) break;
      std::string line = pending.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      sink_(id_, line);
      start = nl + 1;
    }
    pending.erase(0, start);
  }

  void pump() {
    std::string pending;
    char buf[65536];
    auto started = Clock::now();
    bool eof = false;
    bool timed_out = false;
    while (!eof) {
      struct pollfd p {fd_, POLLIN, 0};
      int r = ::poll(&p, 1, 100);
      if (r > 0) {
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n > 0) emit(pending, buf, static_cast<size_t>(n));
        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
      }
      auto now = Clock::now();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!cancel_requested_ && timeout_.count() > 0 && now - started > timeout_) {
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
    }
    if (!pending.empty()) sink_(id_, pending);
    ::close(fd_);
    int wstatus = 0;
    while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
    // Children of the run that outlived it: the group goes with it.
    ::kill(-pid_, SIGKILL);
    std::lock_guard<std::mutex> lock(mu_);
    if (WIFEXITED(wstatus)) {
      status_.exit_code = WEXITSTATUS(wstatus);
      status_.detail = "exit " + std::to_string(status_.exit_code);
    } else if (WIFSIGNALED(wstatus)) {
      status_.detail = std::string("killed by ") + strsignal(WTERMSIG(wstatus));
    }
    if (timed_out) {
      status_.state = RunState::TimedOut;
      status_.detail = cancel_reason_ + " (" + status_.detail + ")";
    } else if (cancel_requested_) {
      status_.state = RunState::Cancelled;
      status_.detail = cancel_reason_ + " (" + status_.detail + ")";
    } else {
      status_.state = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? RunState::Succeeded : RunState::Failed;
    }
    done_ = true;
    cv_.notify_all();
  }

  std::string id_;
  pid_t pid_;
  int fd_;
  LineSink sink_;
  std::chrono::seconds timeout_;
  std::chrono::milliseconds grace_;
  std::mutex mu_;
  std::condition_variable cv_;
  RunStatus status_;
  bool done_ = false;
  bool cancel_requested_ = false;
  bool killed_ = false;
  std::string cancel_reason_;
  Clock::time_point cancel_at_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<RunHandle> ExecBackend::launch(const RunRequest& req, LineSink sink, std::string* error) {
  if (req.command.empty()) {
    *error = "run " + req.id + ": no command to execute (set 'command' in the spec)";
    return nullptr;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
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
  return std::make_unique<ExecHandle>(req.id, pid, fds[0], std::move(sink), req.timeout, grace_);
}

}  // namespace referee::harness
