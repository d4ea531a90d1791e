#include "base/subprocess.h"

#include <doctest/doctest.h>

#include <cerrno>
#include <csignal>

#include "tests/temp_dir.h"

namespace referee::base {

TEST_SUITE("base") {
  TEST_CASE("run_command collects standard output and the exit status") {
    CommandResult r = run_command({"sh", "-c", "printf 'out\\n'; echo err >&2; exit 3"});
    CHECK(r.started);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 3);
    CHECK(r.out == "out\n");
    CHECK(r.err == "");  // standard error goes to /dev/null by default
    CHECK(r.error == "");
  }

  TEST_CASE("standard error captured apart, or merged into standard output") {
    CommandOptions o;
    o.stderr_to = StderrTo::Capture;
    CommandResult r = run_command({"sh", "-c", "echo out; echo err >&2"}, o);
    CHECK(r.out == "out\n");
    CHECK(r.err == "err\n");
    o.stderr_to = StderrTo::Stdout;
    r = run_command({"sh", "-c", "echo out; echo err >&2"}, o);
    CHECK(r.out == "out\nerr\n");
  }

  TEST_CASE("the working folder, extra variables and standard input from /dev/null") {
    testing::TempDir t;
    CommandOptions o;
    o.workdir = t.path.string();
    o.env["REFEREE_BASE_TEST"] = "value one";
    o.env["HOME"] = "/nowhere";
    CommandResult r = run_command({"sh", "-c", "pwd; echo \"$REFEREE_BASE_TEST\"; echo \"$HOME\"; cat"}, o);
    CHECK(r.exit_code == 0);
    CHECK(r.out == std::filesystem::canonical(t.path).string() + "\nvalue one\n/nowhere\n");
  }

  TEST_CASE("a program that is not there, or a folder that cannot be entered, does not start") {
    CommandResult r = run_command({"referee-no-such-program-xyz"});
    CHECK_FALSE(r.started);
    CHECK(r.spawn_errno == ENOENT);
    CHECK(r.error == "not found on PATH");
    r = run_command({"/no/such/program"});
    CHECK(r.error == "not found");
    CommandOptions o;
    o.workdir = "/no/such/folder";
    r = run_command({"true"}, o);
    CHECK_FALSE(r.started);
    CHECK(r.error == "cannot enter /no/such/folder");
    CHECK(run_command({}).error == "no command");
  }

  TEST_CASE("a bare name not on PATH is looked for in the fallback folders") {
    testing::TempDir t;
    testing::write_file(t.path / "referee-base-test-tool", "#!/bin/sh\necho found\n");
    std::filesystem::permissions(t.path / "referee-base-test-tool", std::filesystem::perms::owner_all);
    CHECK_FALSE(run_command({"referee-base-test-tool"}).started);
    CommandOptions o;
    o.fallback_dirs = {"/no/such/dir", t.path.string()};
    CommandResult r = run_command({"referee-base-test-tool"}, o);
    CHECK(r.started);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "found\n");
  }

  TEST_CASE("past the timeout it is killed, with whatever it started") {
    CommandOptions o;
    o.timeout = std::chrono::milliseconds(300);
    auto start = std::chrono::steady_clock::now();
    CommandResult r = run_command({"sh", "-c", "sleep 30 & sleep 30; echo never"}, o);
    CHECK(r.started);
    CHECK(r.timed_out);
    CHECK(r.exit_code == -1);
    CHECK(r.error == "no answer within 0.3 s (stopped)");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }

  TEST_CASE("killed by a signal: said in words") {
    CommandResult r = run_command({"sh", "-c", "kill -TERM $$"});
    CHECK(r.started);
    CHECK(r.exit_code == -1);
    CHECK(r.signal == SIGTERM);
    CHECK(r.error.find("killed by ") == 0);
  }

  TEST_CASE("output beyond max_output is read and dropped") {
    CommandOptions o;
    o.max_output = 10;
    CommandResult r = run_command({"sh", "-c", "head -c 100000 /dev/zero; exit 0"}, o);
    CHECK(r.exit_code == 0);
    CHECK(r.out.size() == 10);
  }
}

}  // namespace referee::base
