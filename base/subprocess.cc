#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace referee::base {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollSliceMs = 200;

std::string seconds_text(std::chrono::milliseconds t) {
  if (t.count() % 1000 == 0) return std::to_string(t.count() / 1000);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(t.count()) / 1000.0);
  return buf;
}

// Reads the open pipes until EOF on all of them or the deadline.
void drain(int out_fd, int err_fd, CommandResult* r, size_t max_output, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* bufs[2] = {&r->out, &r->err};
  int open_count = (out_fd >= 0) + (err_fd >= 0);
  char buf[8192];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r->timed_out = true;
      return;
    }
    int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        size_t room = max_output > bufs[i]->size() ? max_output - bufs[i]->size() : 0;
        bufs[i]->append(buf, std::min(room, static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& o) {
  CommandResult r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "no command";
    return r;
  }
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq && o.env.count(std::string(*e, static_cast<size_t>(eq - *e)))) continue;
    env_store.emplace_back(*e);
  }
  for (const auto& [k, v] : o.env) env_store.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int outp[2] = {-1, -1}, errp[2] = {-1, -1};
  if (::pipe2(outp, O_CLOEXEC) != 0 || (o.stderr_to == StderrTo::Capture && ::pipe2(errp, O_CLOEXEC) != 0)) {
    r.spawn_errno = errno;
    r.error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {outp[0], outp[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  if (o.stderr_to == StderrTo::Capture) posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
  else if (o.stderr_to == StderrTo::Stdout) posix_spawn_file_actions_adddup2(&fa, outp[1], 2);
  else posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (!o.workdir.empty()) posix_spawn_file_actions_addchdir_np(&fa, o.workdir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGXFSZ);  // referee ignores it (cli/main.cc); a workload gets the default
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (o.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), envp.data());
  bool bare = argv[0].find('/') == std::string::npos;
  for (size_t i = 0; rc == ENOENT && bare && i < o.fallback_dirs.size(); ++i) {
    std::string full = o.fallback_dirs[i] + "/" + argv[0];
    cargv[0] = full.data();
    rc = posix_spawn(&pid, full.c_str(), &fa, &attr, cargv.data(), envp.data());
    cargv[0] = args[0].data();
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(outp[1]);
  if (errp[1] >= 0) ::close(errp[1]);
  if (rc != 0) {
    ::close(outp[0]);
    if (errp[0] >= 0) ::close(errp[0]);
    r.spawn_errno = rc;
    r.error = rc == ENOENT ? (bare ? "not found on PATH" : "not found") : std::strerror(rc);
    if (!o.workdir.empty() && ::access(o.workdir.c_str(), X_OK) != 0) r.error = "cannot enter " + o.workdir;
    return r;
  }
  r.started = true;
  const auto deadline = Clock::now() + o.timeout;
  drain(outp[0], errp[0], &r, o.max_output, deadline);
  ::close(outp[0]);
  if (errp[0] >= 0) ::close(errp[0]);
  // Its output is closed; it may still be running: wait for it until the deadline.
  int status = 0;
  bool reaped = false;
  while (!r.timed_out) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline) r.timed_out = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (r.timed_out) {
    ::kill(o.own_process_group ? -pid : pid, SIGKILL);
    r.error = "no answer within " + seconds_text(o.timeout) + " s (stopped)";
  }
  if (!reaped)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (o.own_process_group) ::kill(-pid, SIGKILL);  // whatever it left behind goes with it
  if (r.timed_out) return r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.error = std::string("killed by ") + strsignal(r.signal);
  }
  return r;
}

std::string self_binary() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.string();
}

}  // namespace referee::base
