// Running the referee binary (the build's REFEREE_BINARY) from tests.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace referee::testing {

// Runs `cmd` through the shell. Returns its exit code (-1 when it did not
// exit) and sets *out to what it wrote to stdout and stderr together.
inline int run_shell_capture(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  out->clear();
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Runs `REFEREE_BINARY <args>` through the shell (so `args` may hold quoted
// words and redirections), as run_shell_capture.
inline int run_referee(const std::string& args, std::string* out) {
  return run_shell_capture(std::string(REFEREE_BINARY) + " " + args, out);
}

// As run_referee, and *max_rss_kb = the peak resident memory of referee (and
// of the processes it waited for: its workloads), from wait4.
inline int run_referee_measured(const std::string& args, std::string* out, long* max_rss_kb) {
  char path[] = "/tmp/referee-measured-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::string cmd = "exec " + std::string(REFEREE_BINARY) + " " + args;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  struct rusage ru {};
  while (wait4(pid, &st, 0, &ru) < 0) {
  }
  *max_rss_kb = ru.ru_maxrss;
  out->clear();
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out->append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace referee::testing
