// Running the referee binary (the build's REFEREE_BINARY) from tests.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

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

}  // namespace referee::testing
