// `referee serve` as a child process of a test, on 127.0.0.1 with a port it picks.
#pragma once

#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/temp_dir.h"

namespace referee::testing {

// `referee serve` as a child process; the port read from its first line.
struct Serve {
  pid_t pid = -1;
  int port = 0;
  std::string url, err_file;

  Serve(const std::string& db, const std::vector<std::string>& extra, const std::string& err_path,
        const std::string& scheme = "http") {
    err_file = err_path;
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    // Ends with this test process, even when it dies before its destructors run.
    std::vector<std::string> args{REFEREE_BINARY, "serve", "--db", db, "--listen", "127.0.0.1:0",
                                  "--exit-with-parent", std::to_string(getpid())};
    args.insert(args.end(), extra.begin(), extra.end());
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      FILE* e = std::freopen(err_path.c_str(), "a", stderr);
      (void)e;
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char c;
    pollfd p{fds[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && poll(&p, 1, 20000) > 0 && read(fds[0], &c, 1) == 1) line += c;
    close(fds[0]);
    std::string want = "listening on " + scheme + "://127.0.0.1:";
    REQUIRE_MESSAGE(line.rfind(want, 0) == 0, "first line: " << line << "\nstderr: " << read_file(err_path));
    port = std::stoi(line.substr(want.size()));
    url = scheme + "://127.0.0.1:" + std::to_string(port);
  }
  // Sends `sig` and waits (up to 20 s); the exit code, -1 when killed by a signal.
  int stop(int sig) {
    if (pid <= 0) return -1;
    kill(pid, sig);
    int st = 0;
    for (int i = 0; i < 2000; ++i) {
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    pid = -1;
    FAIL("the server did not stop within 20 s of signal " << sig);
    return -2;
  }
  ~Serve() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      int st;
      waitpid(pid, &st, 0);
    }
  }
};

}  // namespace referee::testing
