// The exec backend and live checking, with real processes.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "harness/backends/exec.h"
#include "harness/live_check.h"
#include "rules/source.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::harness;
using namespace std::chrono_literals;

namespace {

struct Collected {
  std::mutex mu;
  std::vector<std::string> lines;
  void add(const std::string& l) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(l);
  }
  std::vector<std::string> get() {
    std::lock_guard<std::mutex> lock(mu);
    return lines;
  }
};

RunRequest sh(const std::string& id, const std::string& script) {
  RunRequest r;
  r.id = id;
  r.command = {"/bin/sh", "-c", script};
  return r;
}

// A fresh folder inside one that is removed when the tests end.
fs::path temp_dir() {
  static referee::testing::TempDir parent("referee-harness-");
  static int n = 0;
  fs::path p = parent.path / std::to_string(++n);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("exec: lines stream in order while the process runs, exit 0 succeeds") {
    ExecBackend b;
    Collected c;
    std::string error;
    auto t0 = std::chrono::steady_clock::now();
    auto h = b.launch(sh("r1", "echo one; sleep 0.3; echo two; printf 'three'"),
                      [&](const std::string&, const std::string& l) { c.add(l); }, &error);
    REQUIRE_MESSAGE(h, error);
    // "one" arrives before the process ends.
    while (c.get().empty() && std::chrono::steady_clock::now() - t0 < 2s) std::this_thread::sleep_for(10ms);
    CHECK(c.get() == std::vector<std::string>{"one"});
    CHECK(h->poll().state == RunState::Running);
    RunStatus s = h->wait(10s);
    CHECK(s.state == RunState::Succeeded);
    CHECK(s.exit_code == 0);
    CHECK(c.get() == std::vector<std::string>{"one", "two", "three"});
  }

  TEST_CASE("exec: a non-zero exit fails with its code; a missing program is a launch error") {
    ExecBackend b;
    std::string error;
    auto h = b.launch(sh("r2", "echo bad >&2; exit 3"), [](const std::string&, const std::string&) {}, &error);
    REQUIRE(h);
    RunStatus s = h->wait(10s);
    CHECK(s.state == RunState::Failed);
    CHECK(s.exit_code == 3);
    RunRequest missing;
    missing.id = "r3";
    missing.command = {"/nonexistent/train"};
    CHECK_FALSE(b.launch(missing, [](const std::string&, const std::string&) {}, &error));
    CHECK(error.find("cannot start '/nonexistent/train'") != std::string::npos);
    RunRequest empty;
    empty.id = "r4";
    CHECK_FALSE(b.launch(empty, [](const std::string&, const std::string&) {}, &error));
  }

  TEST_CASE("exec: the cache_clear hook runs first and the log gets the cache_clear event; a failing hook starts nothing") {
    ExecBackend b;
    fs::path dir = temp_dir();
    Collected c;
    std::string error;
    RunRequest r = sh("hooked", "echo training; echo ran > ran.marker");
    r.workdir = dir.string();
    r.log_path = (dir / "hooked.log").string();
    r.cache_clear = {"/bin/sh", "-c", "echo \"dropping caches for $REFEREE_HOOK_TEST\""};
    r.env = {{"REFEREE_HOOK_TEST", "run 0"}};
    auto h = b.launch(r, [&](const std::string&, const std::string& l) { c.add(l); }, &error);
    REQUIRE_MESSAGE(h, error);
    RunStatus s = h->wait(10s);
    CHECK(s.state == RunState::Succeeded);
    auto lines = c.get();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "dropping caches for run 0");
    CHECK(lines[1].rfind(":::MLLOG {\"namespace\": \"\", \"time_ms\": ", 0) == 0);
    CHECK(lines[1].find("\"event_type\": \"POINT_IN_TIME\", \"key\": \"cache_clear\", \"value\": true") != std::string::npos);
    CHECK(lines[2] == "training");
    // The event's time is now, in milliseconds.
    long long ms = std::stoll(lines[1].substr(lines[1].find("\"time_ms\": ") + 11));
    long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(std::llabs(now - ms) < 60000);

    // The workload writes its own log ({log}): the event is appended to that file, not printed.
    Collected c2;
    RunRequest own = r;
    own.id = "own";
    own.log_is_file = true;
    own.log_path = (dir / "own.log").string();
    own.command = {"/bin/sh", "-c", "echo ':::MLLOG {\"key\": \"init_start\"}' >> \"$0\"", own.log_path};
    h = b.launch(own, [&](const std::string&, const std::string& l) { c2.add(l); }, &error);
    REQUIRE_MESSAGE(h, error);
    CHECK(h->wait(10s).state == RunState::Succeeded);
    std::ifstream in(own.log_path);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    CHECK(first.find("\"key\": \"cache_clear\"") != std::string::npos);
    CHECK(second == ":::MLLOG {\"key\": \"init_start\"}");
    CHECK(c2.get() == std::vector<std::string>{"dropping caches for run 0"});

    // A hook that fails: exit 125, the reason in the output, the command never ran, no event.
    fs::remove(dir / "ran.marker");
    Collected c3;
    RunRequest failing = r;
    failing.id = "failing";
    failing.log_path = (dir / "failing.log").string();
    failing.cache_clear = {"/bin/sh", "-c", "echo 'sysctl: permission denied' >&2; exit 1"};
    h = b.launch(failing, [&](const std::string&, const std::string& l) { c3.add(l); }, &error);
    REQUIRE_MESSAGE(h, error);
    s = h->wait(10s);
    CHECK(s.state == RunState::Failed);
    CHECK(s.exit_code == kCacheClearFailed);
    CHECK(c3.get() == std::vector<std::string>{"sysctl: permission denied",
                                               "referee: the cache_clear hook ended with exit 1; the run's command was not started"});
    CHECK_FALSE(fs::exists(dir / "ran.marker"));
    fs::remove_all(dir);
  }

  TEST_CASE("exec: cancel stops the whole process group; a timeout is reported") {
    fs::path dir = temp_dir();
    fs::path marker = dir / "survived";
    ExecBackend b(500ms);
    std::string error;
    // A grandchild that would write a marker after 2 s: it must die with the group.
    auto h = b.launch(sh("r5", "(sleep 2; touch " + marker.string() + ") & echo started; sleep 30"),
                      [](const std::string&, const std::string&) {}, &error);
    REQUIRE(h);
    std::this_thread::sleep_for(200ms);
    auto t0 = std::chrono::steady_clock::now();
    h->cancel("test");
    RunStatus s = h->wait(10s);
    CHECK(s.state == RunState::Cancelled);
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
    std::this_thread::sleep_for(2500ms);
    CHECK_FALSE(fs::exists(marker));

    RunRequest slow = sh("r6", "sleep 30");
    slow.timeout = 1s;
    auto t = b.launch(slow, [](const std::string&, const std::string&) {}, &error);
    REQUIRE(t);
    RunStatus ts = t->wait(10s);
    CHECK(ts.state == RunState::TimedOut);
    CHECK(ts.detail.find("timeout of 1 s") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("exec: backend_options.kill_grace sets the time between SIGTERM and SIGKILL; a bad value is a launch error") {
    ExecBackend b(20s);  // the backend's own grace: 20 s
    std::string error;
    for (const char* bad : {"", "abc", "0", "-1", "3601", "2s", "nan"}) {
      RunRequest r = sh("g0", "true");
      r.options["kill_grace"] = bad;
      CHECK_FALSE(b.launch(r, [](const std::string&, const std::string&) {}, &error));
      CHECK_MESSAGE(error.find("backend_options.kill_grace: expected seconds") != std::string::npos, error);
    }
    // A run that ignores SIGTERM, with a grace of 0.2 s instead of 20 s: SIGKILL comes long before 20 s.
    RunRequest r = sh("g1", "trap '' TERM; echo up; while true; do sleep 0.05; done");
    r.options["kill_grace"] = "0.2";
    std::atomic<bool> up{false};
    auto h = b.launch(r, [&](const std::string&, const std::string& line) { if (line == "up") up = true; }, &error);
    REQUIRE_MESSAGE(h, error);
    for (int i = 0; i < 200 && !up; ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(up);
    auto t0 = std::chrono::steady_clock::now();
    h->cancel("test");
    RunStatus s = h->wait(10s);
    CHECK(s.state == RunState::Cancelled);
    CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  }

  TEST_CASE("exec: the run ends when its main process exits; a child holding the pipe is drained, then ended, and said so") {
    fs::path dir = temp_dir();
    fs::path marker = dir / "survived";
    // Grace and drain of half a second each; a timeout the child would pass.
    ExecBackend b(500ms, 500ms);
    Collected c;
    std::string error;
    RunRequest req = sh("leak", "echo one; (sleep 30; touch " + marker.string() + ") & echo $! > " +
                                    (dir / "child").string() + "; echo two; exit 0");
    req.timeout = 3s;
    auto t0 = std::chrono::steady_clock::now();
    auto h = b.launch(req, [&](const std::string&, const std::string& l) { c.add(l); }, &error);
    REQUIRE_MESSAGE(h, error);
    RunStatus s = h->wait(20s);
    auto took = std::chrono::steady_clock::now() - t0;
    // Judged by its exit status: not timed out, not waiting for the child.
    CHECK_MESSAGE(s.state == RunState::Succeeded, s.detail);
    CHECK(s.exit_code == 0);
    CHECK(took < 2500ms);
    CHECK(c.get() == std::vector<std::string>{"one", "two"});
    // The subshell and its sleep.
    CHECK_MESSAGE(s.leftovers.find("2 processes of its process group still ran after it exited (sh, sleep)") == 0,
                  s.leftovers);
    CHECK_MESSAGE(s.leftovers.find("ended with SIGTERM") != std::string::npos, s.leftovers);
    CHECK(s.detail == "exit 0; " + s.leftovers);
    std::ifstream in(dir / "child");
    pid_t child = 0;
    REQUIRE(static_cast<bool>(in >> child));
    // The child is gone (a zombie waiting for a reaper has ended).
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(child) + "/stat"), stat);
    bool alive = !stat.empty() && stat.substr(stat.rfind(')') + 2, 1) != "Z";
    CHECK_FALSE(alive);

    // A child that keeps writing, and ignores SIGTERM: the drain is bounded, SIGKILL follows.
    auto t1 = std::chrono::steady_clock::now();
    auto w = b.launch(sh("chatty", "(trap '' TERM PIPE; while :; do echo more; sleep 0.01; done) & echo first; exit 3"),
                      [&](const std::string&, const std::string& l) { c.add(l); }, &error);
    REQUIRE_MESSAGE(w, error);
    RunStatus ws = w->wait(20s);
    CHECK(std::chrono::steady_clock::now() - t1 < 4s);
    CHECK_MESSAGE(ws.state == RunState::Failed, ws.detail);
    CHECK(ws.exit_code == 3);
    CHECK_MESSAGE(ws.leftovers.find("SIGKILL") != std::string::npos, ws.leftovers);

    // Without a child left, nothing is said.
    auto q = b.launch(sh("clean", "echo only"), [](const std::string&, const std::string&) {}, &error);
    REQUIRE(q);
    RunStatus qs = q->wait(10s);
    CHECK(qs.state == RunState::Succeeded);
    CHECK(qs.leftovers.empty());
    CHECK(qs.detail == "exit 0");
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(fs::exists(marker));
    fs::remove_all(dir);
  }

  TEST_CASE("exec: processes that left the run's process group are found by the run's token and ended, and said so") {
    fs::path dir = temp_dir();
    ExecBackend b(500ms, 500ms);
    std::string error;
    // One leaves with setsid and ignores SIGTERM; the main process exits at once.
    RunRequest req = sh("escape", "setsid sh -c 'trap \"\" TERM; echo $$ > " + (dir / "escaped").string() +
                                      "; sleep 613' < /dev/null > /dev/null 2>&1 & sleep 0.5; echo done");
    req.env[kRunTokenVar] = make_run_token(req.id);
    auto h = b.launch(req, [](const std::string&, const std::string&) {}, &error);
    REQUIRE_MESSAGE(h, error);
    RunStatus s = h->wait(20s);
    CHECK_MESSAGE(s.state == RunState::Succeeded, s.detail);
    // The setsid shell and its sleep.
    CHECK_MESSAGE(s.leftovers.find("2 processes that left its process group still ran after it ended (pid ") == 0,
                  s.leftovers);
    CHECK_MESSAGE(s.leftovers.find("SIGKILL") != std::string::npos, s.leftovers);  // it ignored SIGTERM
    CHECK(s.detail.find(s.leftovers) != std::string::npos);
    std::ifstream in(dir / "escaped");
    pid_t escaped = 0;
    REQUIRE(static_cast<bool>(in >> escaped));
    std::this_thread::sleep_for(100ms);
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(escaped) + "/stat"), stat);
    CHECK_MESSAGE((stat.empty() || stat.substr(stat.rfind(')') + 2, 1) == "Z"), stat);
    // Without the token (a caller that sets none), nothing is looked for.
    RunRequest plain = sh("plain", "echo only");
    auto q = b.launch(plain, [](const std::string&, const std::string&) {}, &error);
    REQUIRE(q);
    CHECK(q->wait(10s).leftovers.empty());
    fs::remove_all(dir);
  }

  TEST_CASE("exec: a cancel that comes after the main process exited does not make the run cancelled") {
    // The drain is long, so the run is still being collected when the cancel comes.
    ExecBackend b(500ms, 5000ms);
    std::string error;
    auto h = b.launch(sh("ended", "sleep 30 & echo done; exit 0"), [](const std::string&, const std::string&) {},
                      &error);
    REQUIRE_MESSAGE(h, error);
    std::this_thread::sleep_for(500ms);
    REQUIRE(h->poll().state == RunState::Running);  // still draining: not yet collected
    auto t0 = std::chrono::steady_clock::now();
    h->cancel("interrupted by SIGTERM");
    RunStatus s = h->wait(10s);
    CHECK_MESSAGE(s.state == RunState::Succeeded, s.detail);
    CHECK(s.exit_code == 0);
    CHECK(s.detail.find("interrupted") == std::string::npos);
    // What it left behind is ended at the cancel, not after the whole drain.
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
    CHECK_MESSAGE(s.leftovers.find("(sleep)") != std::string::npos, s.leftovers);

    // A signal that ends the run is named as a signal.
    auto k = b.launch(sh("killed", "kill -KILL $$"), [](const std::string&, const std::string&) {}, &error);
    REQUIRE(k);
    RunStatus ks = k->wait(10s);
    CHECK(ks.state == RunState::Failed);
    CHECK(ks.detail == "killed by SIGKILL");
  }

  TEST_CASE("live: an external workload breaking a closed-division rule is stopped at the violating line") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rs, error);
    fs::path dir = temp_dir();
    // The example run's log, replayed by a shell script as a training job would write it.
    std::ifstream in(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    REQUIRE(lines.size() > 100);
    auto write_script = [&](const fs::path& p, bool break_rule) {
      std::ofstream o(p);
      o << "#!/bin/sh\n";
      for (size_t i = 0; i < lines.size(); ++i) {
        std::string l = lines[i];
        if (break_rule && l.find("\"opt_adam_beta_1\"") != std::string::npos) {
          auto pos = l.find("\"value\": 0.9");
          REQUIRE(pos != std::string::npos);
          l.replace(pos, 12, "\"value\": 0.95");
          o << "cat <<'EOF'\n" << l << "\nEOF\n";
          o << "echo VIOLATION_SENT\nsleep 30\n";  // a run that would go on for a long time
          continue;
        }
        o << "cat <<'EOF'\n" << l << "\nEOF\n";
        if (i % 20 == 0) o << "sleep 0.05\n";
      }
    };
    for (bool breaking : {false, true}) {
      fs::path script = dir / (breaking ? "bad.sh" : "good.sh");
      write_script(script, breaking);
      LiveChecker live(*rs, 50ms);
      std::mutex mu;
      std::optional<rules::Finding> violation;
      std::chrono::steady_clock::time_point sent{}, stopped_at{};
      bool stopped_at_once = false;
      RunHandle* handle = nullptr;
      ExecBackend b;
      RunRequest req;
      req.id = breaking ? "bad" : "good";
      req.command = {"/bin/sh", script.string()};
      auto h = b.launch(
          req,
          [&](const std::string&, const std::string& l) {
            std::lock_guard<std::mutex> lock(mu);
            if (l == "VIOLATION_SENT") {
              if (!violation) violation = live.check_now();  // the line before it has arrived
              sent = std::chrono::steady_clock::now();
            } else if (auto v = live.add_line(l)) {
              violation = v;
            }
            if (violation && handle && stopped_at == std::chrono::steady_clock::time_point{}) {
              stopped_at = std::chrono::steady_clock::now();
              stopped_at_once = true;  // on the line's arrival, not on a later tick of the wait below
              handle->cancel(violation->rule + ": " + violation->message);
            }
          },
          &error);
      REQUIRE_MESSAGE(h, error);
      {
        std::lock_guard<std::mutex> lock(mu);
        handle = h.get();
        if (violation && stopped_at == std::chrono::steady_clock::time_point{}) {
          stopped_at = std::chrono::steady_clock::now();
          stopped_at_once = true;  // the line came before the handle did: cancelled as soon as there is one
          handle->cancel(violation->rule + ": " + violation->message);
        }
      }
      // Nothing may be waiting on the interval: a run that goes quiet is checked by the harness's tick.
      RunStatus s;
      for (int i = 0; i < 300; ++i) {
        s = h->wait(100ms);
        if (s.state != RunState::Running) break;
        std::lock_guard<std::mutex> lock(mu);
        if (!violation) {
          violation = live.check_now();
          if (violation) {
            stopped_at = std::chrono::steady_clock::now();
            // Found by this tick before the workload's next line came: as soon
            // as it could be (the line arrived between two of the checker's intervals).
            if (sent == std::chrono::steady_clock::time_point{}) stopped_at_once = true;
            h->cancel(violation->rule + ": " + violation->message);
          }
        }
      }
      if (!breaking) {
        CHECK(s.state == RunState::Succeeded);
        CHECK_FALSE(violation.has_value());
        CHECK(live.final_verdict().compliant);
        CHECK(live.last_eval() != "");
      } else {
        REQUIRE(violation.has_value());
        CHECK(violation->key == "opt_adam_beta_1");
        CHECK(violation->found.find("0.95") != std::string::npos);
        CHECK(s.state == RunState::Cancelled);
        CHECK(s.detail.find("opt_adam_beta_1") != std::string::npos);
        // Stopped by the line itself (the output callback that read it cancels the run), and so long before
        // the 30 s the workload would go on: a bound no machine's load can miss. The delay is reported only.
        CHECK(stopped_at_once);
        // Stopped on the violating line before the script could echo VIOLATION_SENT (a loaded machine): the
        // line's arrival, when the run was stopped, is when it was sent as far as anyone can tell.
        if (sent == std::chrono::steady_clock::time_point{}) sent = stopped_at;
        auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(stopped_at - sent);
        auto ended = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
        MESSAGE("stopped " << delay.count() << " ms after the violating line, ended after " << ended.count() << " ms");
        CHECK(ended < 25000ms);
      }
    }
    fs::remove_all(dir);
  }

  TEST_CASE("live: what a later line can still repair is not a reason to stop") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    std::ifstream in(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/miniclf/result_0.txt");
    LiveChecker live(*rs, 0ms);
    size_t n = 0;
    for (std::string l; std::getline(in, l);) {
      if (l.find("\"run_stop\"") != std::string::npos) break;  // half a run: no run_stop, target maybe not reached
      CHECK_FALSE(live.add_line(l).has_value());
      ++n;
    }
    CHECK(n > 10);
    CHECK_FALSE(live.check_now().has_value());
    CHECK_FALSE(live.verdict_so_far().compliant);  // run_stop is missing, but that is not irreparable
    // A second run_start is.
    auto second = live.add_line(":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\", \"value\": 7, \"metadata\": {\"file\": \"x\", \"lineno\": 1}}");
    REQUIRE(second.has_value());
    CHECK(second->key == "run_start");
  }
}

#include "harness/runner.h"
#include "harness/spec.h"
#include "harness/environment/system_describe.h"
#include "rules/facts.h"
#include "rules/package.h"

TEST_SUITE("harness") {
  TEST_CASE("a relative system_description in a spec is found beside the spec, from any working directory") {
    fs::path dir = temp_dir();
    fs::path spec_file = dir / "spec.yaml";
    {
      std::ofstream o(spec_file);
      o << "benchmark: minilm\nruleset: mini-1.0.0\nsystem_description: sys/desc.yaml\n";
    }
    fs::create_directories(dir / "sys");
    std::ofstream(dir / "sys" / "desc.yaml") << "system_name: x\n";
    harness::Spec spec;
    std::string error;
    REQUIRE_MESSAGE(load_spec(spec_file.string(), &spec, &error), error);
    CHECK(spec.system_description == (dir / "sys" / "desc.yaml").lexically_normal().string());
  }

  TEST_CASE("system description file: a field given twice and a count that is not a whole number are refused with file:line") {
    fs::path dir = temp_dir();
    struct Case {
      std::string body, says;
    };
    for (const Case& c : {Case{"system_name: a\nnumber_of_nodes: \"1\"\nsystem_name: b\n",
                               "sys.yaml:3: field 'system_name' given twice (first on line 1)"},
                          Case{"number_of_nodes: two\n", "sys.yaml:1: 'number_of_nodes': expected a whole number from 1, found 'two'"},
                          Case{"accelerators_per_node: \"-1\"\n", "sys.yaml:1: 'accelerators_per_node': expected a whole number from 0, found '-1'"},
                          Case{"host_processors_per_node: \"0\"\n", "'host_processors_per_node': expected a whole number from 1, found '0'"}}) {
      CAPTURE(c.body);
      std::ofstream(dir / "sys.yaml") << c.body;
      harness::SystemDescription sys;
      harness::Environment env;
      std::string error;
      CHECK_FALSE(describe_system((dir / "sys.yaml").string(), "", &sys, &error, &env));
      CHECK(error.find(c.says) != std::string::npos);
    }
    std::ofstream(dir / "sys.yaml") << "number_of_nodes: 2\naccelerators_per_node: \"0\"\nhost_processors_per_node: 1\n";
    harness::SystemDescription sys;
    harness::Environment env;
    std::string error;
    CHECK_MESSAGE(describe_system((dir / "sys.yaml").string(), "", &sys, &error, &env), error);
    fs::remove_all(dir);
  }

  TEST_CASE("run: five exec runs become a package that passes check-package; a broken run is stopped and left out") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rs, error);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    fs::path dir = temp_dir();
    std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
    fs::path spec_file = dir / "replay.yaml";
    {
      std::ofstream o(spec_file);
      o << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nsystem: cpu_2x_example\n"
        << "system_description: " << example << "/systems/cpu_2x_example.json\n"
        << "command: [\"/bin/sh\", \"-c\", \"cat " << example << "/results/cpu_2x_example/minilm/result_{run}.txt\"]\n";
    }
    harness::Spec spec;
    REQUIRE_MESSAGE(load_spec(spec_file.string(), &spec, &error), error);
    REQUIRE_MESSAGE(finalize_spec(&spec, facts.find("minilm")->runs, &error), error);
    CHECK(spec.runs == 5);
    CHECK(spec.effective["runs"].second == "rules");
    CHECK(spec.effective["backend"].second == "spec");
    SystemDescription sys;
    REQUIRE(describe_system(spec.system_description, spec.system, &sys, &error));
    CHECK(sys.missing.empty());
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = sys.to_json();
    HarnessReport report;
    REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
    REQUIRE(report.runs.size() == 5);
    for (const auto& r : report.runs) {
      CHECK(r.status.state == RunState::Succeeded);
      CHECK(r.verdict.compliant);
      CHECK_FALSE(r.result_file.empty());
    }
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*rs, facts, report.package_dir, {}, &pr, &error));
    CHECK(pr.pass);

    // Run 2 logs a closed-division hyperparameter the rules forbid, then would go on for a minute.
    {
      std::ofstream o(dir / "bad_run.sh");
      o << "if [ \"$1\" = 2 ]; then sed 's/\"opt_adam_beta_1\", \"value\": 0.9,/\"opt_adam_beta_1\", \"value\": 0.95,/' \"$2\"; sleep 60; "
        << "else cat \"$2\"; fi\n";
    }
    spec.command = {"/bin/sh", (dir / "bad_run.sh").string(), "{run}",
                    example + "/results/cpu_2x_example/minilm/result_{run}.txt"};
    opt.replace = true;  // the same package, run again from scratch
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
    CHECK(std::chrono::steady_clock::now() - t0 < 20s);
    CHECK(report.removed.size() == 5);
    REQUIRE(report.runs.size() == 5);
    CHECK(report.runs[2].aborted);
    CHECK(report.runs[2].abort_reason.find("opt_adam_beta_1") != std::string::npos);
    CHECK(report.runs[2].result_file.empty());
    CHECK(fs::exists(report.runs[2].kept_log));
    int in_package = 0;
    for (const auto& r : report.runs) in_package += r.result_file.empty() ? 0 : 1;
    CHECK(in_package == 4);
    REQUIRE(rules::check_package(*rs, facts, report.package_dir, {}, &pr, &error));
    CHECK_FALSE(pr.pass);  // four runs where five are required: the package says so
    fs::remove_all(dir);
  }
}

#include "tests/run_referee.h"

TEST_SUITE("harness") {
  TEST_CASE("referee demo: the mini workloads become a package that passes its checks and lands in the store") {
    fs::path dir = temp_dir();
    std::string out;
    int rc = referee::testing::run_referee("demo --out '" + (dir / "demo").string() + "'", &out);
    CHECK_MESSAGE(rc == 0, out);
    CHECK(out.find("check-package " + (dir / "demo" / "referee").string() + ": PASS") != std::string::npos);
    CHECK(out.find("imported referee (mini-1.0.0): 2 results, 10 runs, package pass") != std::string::npos);
    CHECK(fs::exists(dir / "demo" / "referee.db"));
    CHECK(fs::exists(dir / "demo" / "referee" / "results" ));
    fs::remove_all(dir);
  }
}

TEST_SUITE("harness") {
  TEST_CASE("Ctrl-C cancels every run and leaves a consistent package of what finished") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    fs::path dir = temp_dir();
    std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
    harness::Spec spec;
    spec.benchmark = "minilm";
    spec.ruleset = "mini-1.0.0";
    spec.backend = "exec";
    spec.org = "ExampleOrg";
    spec.system = "cpu_2x_example";
    spec.parallel = 5;
    // Runs 0 and 1 finish at once; the others would take a minute.
    spec.command = {"/bin/sh", "-c",
                    "cat " + example + "/results/cpu_2x_example/minilm/result_{run}.txt; [ {run} -lt 2 ] || sleep 60"};
    REQUIRE(finalize_spec(&spec, facts.find("minilm")->runs, &error));
    SystemDescription sys;
    REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
    ExecBackend backend(200ms);
    std::atomic<bool> interrupt{false};
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = sys.to_json();
    opt.interrupt = &interrupt;
    std::thread ctrl_c([&] {
      std::this_thread::sleep_for(1500ms);
      interrupt = true;
    });
    auto t0 = std::chrono::steady_clock::now();
    HarnessReport report;
    bool ok = run_harness(spec, backend, *rs, opt, &report, &error);
    ctrl_c.join();
    REQUIRE_MESSAGE(ok, error);
    CHECK(std::chrono::steady_clock::now() - t0 < 10s);
    CHECK(report.interrupted);
    REQUIRE(report.runs.size() == 5);
    int finished = 0;
    for (const auto& r : report.runs) {
      if (r.index < 2) {
        CHECK(r.status.state == RunState::Succeeded);
        ++finished;
      } else {
        CHECK(r.status.state == RunState::Cancelled);
        CHECK(r.result_file.empty());
      }
    }
    CHECK(finished == 2);
    fs::path results = fs::path(report.package_dir) / "results" / "cpu_2x_example" / "minilm";
    CHECK(fs::exists(results / "result_0.txt"));
    CHECK(fs::exists(results / "result_1.txt"));
    CHECK_FALSE(fs::exists(results / "result_2.txt"));
    for (const auto& e : fs::directory_iterator(results)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    fs::remove_all(dir);
  }
}

// ---------------------------------------------------------------- system files the consortium can read

#include <sys/wait.h>

#include <algorithm>
#include <iterator>

#include "rules/interp.h"
#include "rules/value.h"
#include "tests/reference_data.h"

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o << text;
}

// Runs a shell command, returns its exit status and what it printed.
int shell(const std::string& cmd, std::string* out) { return referee::testing::run_shell_capture(cmd, out); }

// The consortium's Python package from the reference data, run with Debian's
// python3. False (skip, or a failure under CI) when either is missing.
bool have_oracle() {
  if (!referee::testing::have_reference_data()) return false;
  std::string out;
  int rc = shell("PYTHONPATH='" + referee::testing::reference_dir() +
                     "/mlperf/logging' /usr/bin/python3 -c 'from mlperf_logging.system_desc_checker import "
                     "system_desc_checker; from mlperf_logging import mllog'",
                 &out);
  if (rc == 0) return true;
  if (std::getenv("CI")) {
    FAIL("the consortium's mlperf_logging cannot be imported with /usr/bin/python3 (CI must install "
         "python3-numpy python3-scipy python3-pandas python3-yaml): "
         << out);
  } else {
    MESSAGE("SKIPPED: the consortium's mlperf_logging cannot be imported with /usr/bin/python3: " << out);
  }
  return false;
}

// The consortium's system_desc_checker on `file`: "valid", "invalid", or "CRASH <exception>".
std::string oracle_system_desc(const fs::path& file, const std::string& ruleset) {
  std::string out;
  shell("cd '" + file.parent_path().string() + "' && PYTHONPATH='" + referee::testing::reference_dir() +
            "/mlperf/logging' /usr/bin/python3 -c '\n"
            "import sys\n"
            "from mlperf_logging.system_desc_checker import system_desc_checker as s\n"
            "try:\n"
            "  print(\"RESULT\", \"valid\" if s.check_system_desc(sys.argv[1], \"training\", sys.argv[2])[0] else \"invalid\")\n"
            "except Exception as e:\n"
            "  print(\"RESULT\", \"CRASH\", type(e).__name__, e)\n"
            "' '" + file.string() + "' " + ruleset,
        &out);
  auto at = out.rfind("RESULT ");
  if (at == std::string::npos) return "no answer: " + out;
  std::string r = out.substr(at + 7);
  while (!r.empty() && r.back() == '\n') r.pop_back();
  return r;
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("system descriptions: every scalar is written as a string, as in every published system file") {
    fs::path dir = temp_dir();
    spit(dir / "sys.yaml",
         "submitter: Org\nstatus: Available on-premise\nsystem_name: box\nnumber_of_nodes: 2\n"
         "host_processors_per_node: 2\nhost_processor_core_count: 64\nhost_processor_vcpu_count: 128\n"
         "accelerators_per_node: 8\naccelerator_model_name: X\nframework: F\nhw_notes: \"\"\n"
         "other_software_stack: {compiler: gcc 12, cuda: 12.2}\n");
    SystemDescription sys;
    std::string error;
    REQUIRE_MESSAGE(describe_system((dir / "sys.yaml").string(), "", &sys, &error), error);
    bool ok = false;
    rules::Value v = rules::value_from_json(sys.to_json(), &ok, &error);
    REQUIRE(ok);
    REQUIRE(v.kind == rules::VKind::Dict);
    for (const auto& entry : v.d().entries) {
      const auto& k = entry.first;
      const auto& val = entry.second;
      if (k.s() == "other_software_stack") {
        CHECK(val.kind == rules::VKind::Dict);
        continue;
      }
      CHECK_MESSAGE(val.kind == rules::VKind::Str, k.s() << " is not a string in " << sys.to_json());
    }
    CHECK(v.d().find_str("accelerators_per_node")->s() == "8");
    CHECK(v.d().find_str("number_of_nodes")->s() == "2");
    CHECK(v.d().find_str("host_processor_core_count")->s() == "64");
    CHECK(consortium_read_problems(sys.to_json()).empty());
    // What neither consortium tool can read is refused before anything runs.
    std::string bad = sys.to_json();
    bad.replace(bad.find("\"framework\": \"F\""), 16, "\"framework\": [\"F\"]");
    auto problems = consortium_read_problems(bad);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].find("framework") == 0);
    CHECK(problems[0].find("TypeError") != std::string::npos);
    std::string nodes = sys.to_json();
    nodes.replace(nodes.find("\"number_of_nodes\": \"2\""), 22, "\"number_of_nodes\": \"two\"");
    problems = consortium_read_problems(nodes);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].find("int()") != std::string::npos);
    harness::Spec spec;
    spec.benchmark = "minilm";
    spec.ruleset = "mini-1.0.0";
    spec.backend = "exec";
    spec.system = "box";
    spec.command = {"/bin/true"};
    REQUIRE(finalize_spec(&spec, 5, &error));
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = bad;
    HarnessReport report;
    CHECK_FALSE(run_harness(spec, backend, *rs, opt, &report, &error));
    CHECK(error.find("nothing was run") != std::string::npos);
    CHECK(error.find("framework") != std::string::npos);
    CHECK(report.runs.empty());
    fs::remove_all(dir);
  }

  TEST_CASE("check-package rejects a system file the consortium's package checker cannot read, naming the field") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    fs::path dir = temp_dir();
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", dir / "ExampleOrg",
             fs::copy_options::recursive);
    fs::path sys = dir / "ExampleOrg" / "systems" / "cpu_2x_example.json";
    std::string original = slurp(sys);
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*rs, facts, (dir / "ExampleOrg").string(), {}, &pr, &error));
    REQUIRE(pr.pass);
    struct Case {
      std::string from, to, field, found;
    };
    for (const Case& c : {Case{"\"accelerators_per_node\": \"0\"", "\"accelerators_per_node\": 0", "accelerators_per_node", "0 (a number)"},
                          Case{"\"host_processor_core_count\": \"16\"", "\"host_processor_core_count\": 16", "host_processor_core_count", "16 (a number)"},
                          Case{"\"framework\": \"referee builtin\"", "\"framework\": null", "framework", "null"},
                          Case{"\"submitter\": \"ExampleOrg\"", "\"submitter\": [\"ExampleOrg\"]", "submitter", "a list"}}) {
      std::string text = original;
      REQUIRE(text.find(c.from) != std::string::npos);
      text.replace(text.find(c.from), c.from.size(), c.to);
      spit(sys, text);
      REQUIRE(rules::check_package(*rs, facts, (dir / "ExampleOrg").string(), {}, &pr, &error));
      CHECK_FALSE(pr.pass);
      REQUIRE(pr.systems.size() == 1);
      CHECK_FALSE(pr.systems[0].valid);
      bool named = false;
      for (const auto& f : pr.systems[0].errors) {
        if (f.rule != "system description: field type") continue;
        named = true;
        CHECK(f.key == c.field);
        CHECK(f.message.find("\"" + c.field + "\"") == 0);
        CHECK(f.message.find("TypeError") != std::string::npos);
        CHECK(f.expected.find("a JSON string") == 0);
        CHECK(f.found == c.found);
        CHECK_FALSE(f.hint.empty());
      }
      CHECK_MESSAGE(named, c.field);
    }
    // Counts the package checker does not join stay as they are (it reads them fine).
    std::string text = original;
    text.replace(text.find("\"number_of_nodes\": \"1\""), 22, "\"number_of_nodes\": 1");
    spit(sys, text);
    REQUIRE(rules::check_package(*rs, facts, (dir / "ExampleOrg").string(), {}, &pr, &error));
    CHECK(pr.pass);
    // The CLI says which field, expected, found and the fix, and exits 1.
    text = original;
    text.replace(text.find("\"accelerators_per_node\": \"0\""), 28, "\"accelerators_per_node\": 8");
    spit(sys, text);
    std::string out;
    int rc = referee::testing::run_referee("check-package '" + (dir / "ExampleOrg").string() + "' --ruleset mini-1.0.0", &out);
    CHECK(rc == 1);
    CHECK(out.find("accelerators_per_node") != std::string::npos);
    CHECK(out.find("write the value in quotes: \"accelerators_per_node\": \"8\"") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("oracle: the consortium reads the system file referee writes, and crashes where check-package says it would") {
    if (!have_oracle()) return;
    fs::path dir = temp_dir();
    std::string out;
    int rc = referee::testing::run_referee("demo --out '" + (dir / "demo").string() + "'", &out);
    REQUIRE_MESSAGE(rc == 0, out);
    fs::path systems = dir / "demo" / "referee" / "systems";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(systems)) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    // The consortium's own package checker, run on referee's rule set (usage mini, version 1.0.0),
    // passes the demo's package: compliance, seeds and RCPs of both mini workloads.
    {
      std::string pc;
      int prc = referee::testing::run_shell_capture("/usr/bin/python3 '" + std::string(REFEREE_SOURCE_DIR) +
                                                        "/tests/oracle/ruleset_package_checker.py' '" +
                                                        (dir / "demo" / "referee").string() + "'",
                                                    &pc);
      CHECK_MESSAGE(prc == 0, pc);
      CHECK_MESSAGE(pc.find("Benchmark minilm") != std::string::npos, pc);
      CHECK_MESSAGE(pc.find("Benchmark miniclf") != std::string::npos, pc);
      CHECK_MESSAGE(pc.find("PASS: the consortium's package checker") != std::string::npos, pc);
    }
    // The round the consortium's tools know that is closest to the mini set's checks (status wording from 4.0).
    CHECK(oracle_system_desc(files[0], "3.1.0") == "valid");
    CHECK(oracle_system_desc(files[0], "4.0.0") == "valid");
    // Every field the consortium joins as text: a number there stops it, and check-package says so.
    rules::RuleSource src;
    std::string error;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    std::string original = slurp(files[0]);
    for (const auto& field : rules::system_text_fields()) {
      std::string text = original;
      auto at = text.find("\"" + field + "\": \"");
      REQUIRE_MESSAGE(at != std::string::npos, field);
      auto end = text.find('"', at + field.size() + 5);
      text.replace(at, end + 1 - at, "\"" + field + "\": 8");
      spit(files[0], text);
      CHECK_MESSAGE(oracle_system_desc(files[0], "3.1.0").find("CRASH TypeError") == 0, field);
      rules::PackageReport pr;
      REQUIRE(rules::check_package(*rs, facts, (dir / "demo" / "referee").string(), {}, &pr, &error));
      CHECK_MESSAGE(!pr.pass, field);
    }
    // A field outside that list, as a number: the consortium reads it, and so does check-package.
    std::string text = original;
    auto at = text.find("\"number_of_nodes\": \"1\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 22, "\"number_of_nodes\": 1");
    spit(files[0], text);
    CHECK(oracle_system_desc(files[0], "3.1.0") == "valid");
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*rs, facts, (dir / "demo" / "referee").string(), {}, &pr, &error));
    CHECK(pr.pass);
    fs::remove_all(dir);
  }
}

// ---------------------------------------------------------------- {log}: the workload's own log file

namespace {

struct ExecSetup {
  std::unique_ptr<rules::RuleSet> rs;
  rules::RoundFacts facts;
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  SystemDescription sys;
};

void setup(ExecSetup* s) {
  std::string error;
  rules::RuleSource src;
  auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  s->rs = std::move(rs);
  REQUIRE(rules::facts_for(*s->rs, &s->facts, &error));
  REQUIRE(describe_system(s->example + "/systems/cpu_2x_example.json", "", &s->sys, &error));
}

harness::Spec exec_spec(const ExecSetup& s, const std::string& org, std::vector<std::string> command) {
  harness::Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "exec";
  spec.org = org;
  spec.system = "cpu_2x_example";
  spec.command = std::move(command);
  std::string error;
  REQUIRE_MESSAGE(finalize_spec(&spec, s.facts.find("minilm")->runs, &error), error);
  return spec;
}

std::string example_log(const ExecSetup& s, int run) {
  return s.example + "/results/cpu_2x_example/minilm/result_" + std::to_string(run) + ".txt";
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("{log}: a shell workload that writes its log to {log} has that log followed, kept and packaged as written") {
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    // The log goes to {log} line by line while the script prints something else.
    spit(dir / "train.sh",
         "echo \"training run $1\"\n"
         "while IFS= read -r l; do printf '%s\\n' \"$l\" >> \"$3\"; done < \"$2\"\n"
         "echo 'done'\n");
    auto spec = exec_spec(s, "ExampleOrg", {"/bin/sh", (dir / "train.sh").string(), "{run}", s.example + "/results/cpu_2x_example/minilm/result_{run}.txt", "{log}"});
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = s.sys.to_json();
    Environment env;
    env.kernel = "kernel-of-the-test";
    opt.environment = &env;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    REQUIRE(report.runs.size() == 5);
    for (const auto& r : report.runs) {
      CHECK_MESSAGE(r.verdict.compliant, r.id << ": " << (r.verdict.errors.empty() ? "" : r.verdict.errors[0].message));
      CHECK_MESSAGE(r.left_out.empty(), r.left_out);
      REQUIRE_FALSE(r.result_file.empty());
      // Beside the log, the environment with the submission fields of the file the workload wrote.
      CHECK(r.environment_file == fs::path(r.kept_log).replace_extension(".env.json").string());
      std::string env_json = slurp(r.environment_file);
      CHECK(env_json.find("kernel-of-the-test") != std::string::npos);
      auto sub = submission_fields(slurp(example_log(s, r.index)));
      REQUIRE(sub.count("submission_org"));
      CHECK(env_json.find("\"submission_org\": \"" + sub["submission_org"] + "\"") != std::string::npos);
      // The workload's file is untouched, and the package holds it byte for byte.
      CHECK(slurp(r.kept_log) == slurp(example_log(s, r.index)));
      CHECK(slurp(r.result_file) == slurp(example_log(s, r.index)));
      CHECK(slurp(r.output_file) == "training run " + std::to_string(r.index) + "\ndone\n");
      CHECK(r.lines > 100);
    }
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*s.rs, s.facts, report.package_dir, {}, &pr, &error));
    CHECK(pr.pass);
    // A second invocation keeps the first one's logs: nothing is appended to or overwritten.
    std::string first_log = report.runs[0].kept_log;
    opt.replace = true;
    HarnessReport again;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &again, &error), error);
    REQUIRE(again.runs.size() == 5);
    CHECK(again.runs[0].kept_log != first_log);
    CHECK(slurp(first_log) == slurp(example_log(s, 0)));
    CHECK(slurp(again.runs[0].kept_log) == slurp(example_log(s, 0)));
    fs::remove_all(dir);
  }

  TEST_CASE("{log}: a Python workload logging with the consortium's mllog.config(filename=...) is followed") {
    if (!have_oracle()) return;
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    // Replays a result log through the consortium's logger, which writes to the file and to stdout.
    spit(dir / "train.py",
         "import json, sys\n"
         "from mlperf_logging import mllog\n"
         "src, log = sys.argv[1], sys.argv[2]\n"
         "mllog.config(filename=log)\n"
         "m = mllog.get_mllogger()\n"
         "for line in open(src):\n"
         "    i = line.find(':::MLLOG ')\n"
         "    if i < 0:\n"
         "        continue\n"
         "    e = json.loads(line[i + 9:])\n"
         "    md = {k: v for k, v in (e.get('metadata') or {}).items() if k not in ('file', 'lineno')}\n"
         "    f = {'INTERVAL_START': m.start, 'INTERVAL_END': m.end}.get(e['event_type'], m.event)\n"
         "    f(key=e['key'], value=e['value'], metadata=md or None, time_ms=e['time_ms'])\n");
    auto spec = exec_spec(s, "ExampleOrg", {"/usr/bin/python3", (dir / "train.py").string(), s.example + "/results/cpu_2x_example/minilm/result_{run}.txt", "{log}"});
    spec.env["PYTHONPATH"] = referee::testing::reference_dir() + "/mlperf/logging";
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = s.sys.to_json();
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    REQUIRE(report.runs.size() == 5);
    for (const auto& r : report.runs) {
      CHECK_MESSAGE(r.status.state == RunState::Succeeded, r.status.detail << " " << slurp(r.output_file));
      CHECK_MESSAGE(r.verdict.compliant, r.id << ": " << (r.verdict.errors.empty() ? "" : r.verdict.errors[0].rule + ": " + r.verdict.errors[0].message));
      REQUIRE_FALSE(r.result_file.empty());
      std::string written = slurp(r.kept_log);
      CHECK(slurp(r.result_file) == written);
      // mllog also printed every line: counted once, from the file.
      size_t in_file = 0;
      for (size_t p = 0; (p = written.find(":::MLLOG ", p)) != std::string::npos; ++p) ++in_file;
      CHECK(in_file == r.verdict.mllog_lines);
      CHECK(slurp(r.output_file).find(":::MLLOG ") != std::string::npos);
    }
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*s.rs, s.facts, report.package_dir, {}, &pr, &error));
    CHECK(pr.pass);
    fs::remove_all(dir);
  }

  TEST_CASE("package: a run that exits 0 with a non-compliant log, or writes nothing to {log}, is left out with the reason") {
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    // Run 3 stops writing half-way (no run_stop) and exits 0.
    spit(dir / "train.sh",
         "if [ \"$1\" = 3 ]; then head -n 40 \"$2\" > \"$3\"; else cat \"$2\" > \"$3\"; fi\n");
    auto spec = exec_spec(s, "ExampleOrg", {"/bin/sh", (dir / "train.sh").string(), "{run}", s.example + "/results/cpu_2x_example/minilm/result_{run}.txt", "{log}"});
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = s.sys.to_json();
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    REQUIRE(report.runs.size() == 5);
    CHECK(report.runs[3].status.state == RunState::Succeeded);
    CHECK_FALSE(report.runs[3].verdict.compliant);
    CHECK(report.runs[3].result_file.empty());
    CHECK(report.runs[3].left_out.find("its log has no run_stop") == 0);
    CHECK(fs::file_size(report.runs[3].kept_log) > 0);
    int in_package = 0;
    for (const auto& r : report.runs) in_package += r.result_file.empty() ? 0 : 1;
    CHECK(in_package == 4);
    fs::path results = fs::path(report.package_dir) / "results" / "cpu_2x_example" / "minilm";
    CHECK_FALSE(fs::exists(results / "result_4.txt"));

    // A command that names {log} but prints its log: nothing in the file, so nothing in the package, and it says why.
    // (Another command: a package of its own, as a resume with another setup is refused.)
    spec = exec_spec(s, "ExampleOrg", {"/bin/sh", "-c", "cat " + s.example + "/results/cpu_2x_example/minilm/result_{run}.txt; : {log}"});
    opt.out_dir += "-prints";
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    for (const auto& r : report.runs) {
      CHECK(r.status.state == RunState::Succeeded);
      CHECK(r.result_file.empty());
      CHECK(r.left_out.find("was never written") != std::string::npos);
      CHECK(r.left_out.find("its output had") != std::string::npos);
    }
    fs::remove_all(dir);
  }

  TEST_CASE("{log} written again from the start (open with \"w\") after it was read is checked afresh, not from the old offset") {
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    // The workload (or the cache_clear hook before it) has put a line in the file; then it writes its log with '>'.
    spit(dir / "train.sh",
         "printf ':::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
         "\"cache_clear\", \"value\": true, \"metadata\": {\"file\": \"x\", \"lineno\": 1}}\\n' >> \"$3\"\n"
         "sleep 0.6\n"
         "cat \"$2\" > \"$3\"\n");
    auto spec = exec_spec(s, "ExampleOrg", {"/bin/sh", (dir / "train.sh").string(), "{run}",
                                            s.example + "/results/cpu_2x_example/minilm/result_{run}.txt", "{log}"});
    spec.runs = 2;
    ExecBackend backend;
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = s.sys.to_json();
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    REQUIRE(report.runs.size() == 2);
    for (const auto& r : report.runs) {
      CHECK_MESSAGE(r.verdict.compliant, r.id << ": " << (r.verdict.errors.empty() ? "" : r.verdict.errors[0].message));
      CHECK_MESSAGE(!r.aborted, r.abort_reason);
      CHECK(slurp(r.kept_log) == slurp(example_log(s, r.index)));
      CHECK_FALSE(r.result_file.empty());
    }
    fs::remove_all(dir);
  }

  TEST_CASE("preflight: a cache_clear hook whose program is missing is said before any run or seed") {
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    auto spec = exec_spec(s, "ExampleOrg", {"/bin/cat", s.example + "/results/cpu_2x_example/minilm/result_{run}.txt"});
    spec.cache_clear = {"/usr/local/bin/drop-caches-that-is-not-there"};
    ExecBackend backend;
    RunRequest sample = request_for(spec, backend, "minilm-0", 0, 1, (dir / "minilm-0.log").string());
    std::string problem;
    CHECK_FALSE(backend.preflight(sample, &problem));
    CHECK_MESSAGE(problem == "the cache_clear hook's program /usr/local/bin/drop-caches-that-is-not-there does not exist (in " +
                                 fs::current_path().string() + ")",
                  problem);
    spec.cache_clear = {"/bin/true"};
    sample = request_for(spec, backend, "minilm-0", 0, 1, (dir / "minilm-0.log").string());
    CHECK(backend.preflight(sample, &problem));
    fs::remove_all(dir);
  }

  TEST_CASE("run_start twice: the live checker stops the run with the reason, and it is kept aside as aborted") {
    ExecSetup s;
    setup(&s);
    fs::path dir = temp_dir();
    std::string again =
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1700000999000, \"event_type\": \"INTERVAL_START\", \"key\": "
        "\"run_start\", \"value\": null, \"metadata\": {\"file\": \"train.py\", \"lineno\": 9}}";
    // Run 1 relaunches inside its log (to {log}) and would go on for a minute.
    spit(dir / "again.txt", again + "\n");
    spit(dir / "train.sh",
         "cat \"$2\" > \"$3\"\n"
         "if [ \"$1\" = 1 ]; then cat '" + (dir / "again.txt").string() + "' >> \"$3\"; sleep 60; fi\n");
    auto spec = exec_spec(s, "ExampleOrg", {"/bin/sh", (dir / "train.sh").string(), "{run}", s.example + "/results/cpu_2x_example/minilm/result_{run}.txt", "{log}"});
    ExecBackend backend(300ms);
    RunnerOptions opt;
    opt.out_dir = (dir / "out").string();
    opt.system_json = s.sys.to_json();
    HarnessReport report;
    std::string error;
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, opt, &report, &error), error);
    CHECK(std::chrono::steady_clock::now() - t0 < 20s);
    const RunReport& r = report.runs[1];
    CHECK(r.aborted);
    CHECK(r.status.state == RunState::Cancelled);
    CHECK(r.abort_reason.find("harness: second run_start") != std::string::npos);
    CHECK(r.abort_reason.find("run_start at lines ") != std::string::npos);
    CHECK(r.result_file.empty());
    CHECK(r.left_out.find("stopped by the live checker") == 0);
    CHECK(slurp(r.kept_log).find(again) != std::string::npos);  // kept as the workload wrote it

    // Through the command line: the reason and the package's state are printed.
    fs::path spec_file = dir / "relaunch.yaml";
    spit(spec_file, "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nsystem: cpu_2x_example\n"
                    "system_description: " + s.example + "/systems/cpu_2x_example.json\n"
                    "command: [\"/bin/sh\", \"" + (dir / "train.sh").string() + "\", \"{run}\", \"" + s.example +
                    "/results/cpu_2x_example/minilm/result_{run}.txt\", \"{log}\"]\n");
    std::string out;
    int rc = referee::testing::run_referee("run '" + spec_file.string() + "' --out '" + (dir / "cli").string() + "'", &out);
    CHECK(rc == 1);  // four results where five are required
    CHECK_MESSAGE(out.find("minilm-1 is not in the package: stopped by the live checker: line ") != std::string::npos, out);
    CHECK(out.find("harness: second run_start") != std::string::npos);
    CHECK(out.find("its log is kept in ") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("live: a second run_start is found by the harness itself, whatever the rules' verdict") {
    std::ifstream in(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    mllog::LogReader reader;
    mllog::ParsedLog log;
    reader.parse(text, &log);
    CHECK_FALSE(second_run_start(log).has_value());
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    text += ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"INTERVAL_START\", \"key\": \"run_start\", \"value\": null, \"metadata\": {\"file\": \"x\", \"lineno\": 1}}\n";
    reader.parse(text, &log);
    auto f = second_run_start(log);
    REQUIRE(f.has_value());
    CHECK(f->line == lines + 1);
    CHECK(f->rule == "harness: second run_start");
  }

  TEST_CASE("referee package: a tarball it cannot write is refused before anything is written; links and odd names are named") {
    fs::path dir = temp_dir();
    std::string out;
    REQUIRE_MESSAGE(shell(std::string(REFEREE_BINARY) + " demo --out '" + (dir / "demo").string() + "'", &out) == 0, out);
    fs::path org = dir / "demo" / "referee";
    fs::path code = dir / "code";
    fs::create_directories(code);
    spit(code / "train.py", "print('train')\n");
    fs::create_symlink("/etc/passwd", code / "passwd-link");
    spit(code / std::string("\xff\xfe bad.py"), "x = 1\n");
    std::string base = std::string(REFEREE_BINARY) + " package '" + org.string() + "' --ruleset mini-1.0.0 --code minilm=" +
                       code.string() + " ";
    // A folder that does not exist, and a place inside the package: nothing is written.
    CHECK(shell(base + "--tarball /nonexistent-referee-dir/x.tar.gz", &out) == 2);
    CHECK_MESSAGE(out.find("--tarball /nonexistent-referee-dir/x.tar.gz: its folder /nonexistent-referee-dir does not exist "
                           "(nothing was changed)") != std::string::npos,
                  out);
    CHECK(shell(base + "--tarball '" + (org / "inside.tar.gz").string() + "'", &out) == 2);
    CHECK_MESSAGE(out.find("the next tarball would hold this one") != std::string::npos, out);
    CHECK_FALSE(fs::exists(org / "benchmarks"));
    // Written: the link and the name a tarball cannot hold are left out, and said so.
    CHECK(shell(base + "--tarball '" + (dir / "t.tar.gz").string() + "'", &out) == 0);
    CHECK_MESSAGE(out.find("left out passwd-link (a symbolic link: not followed)") != std::string::npos, out);
    CHECK_MESSAGE(out.find("left out \\xff\\xfe bad.py (its name is not UTF-8: a submission tarball cannot hold it)") !=
                      std::string::npos,
                  out);
    CHECK(fs::exists(dir / "t.tar.gz"));
    CHECK(fs::exists(org / "benchmarks" / "minilm" / "implementations" / "referee" / "train.py"));
    CHECK_FALSE(fs::exists(org / "benchmarks" / "minilm" / "implementations" / "referee" / "passwd-link"));
    fs::remove_all(dir);
  }

  TEST_CASE("referee package: implementation, README, checker params and power assembled; checked; one tarball the consortium passes") {
    fs::path dir = temp_dir();
    std::string out;
    REQUIRE_MESSAGE(shell(std::string(REFEREE_BINARY) + " demo --out '" + (dir / "demo").string() + "'", &out) == 0, out);
    fs::path org = dir / "demo" / "referee";
    // A folder without git: every file, hidden folders aside.
    auto put = [](const fs::path& p, const std::string& text) {
      fs::create_directories(p.parent_path());
      spit(p, text);
    };
    fs::path code = dir / "code";
    put(code / "train.py", "print('train')\n");
    put(code / "configs" / "dgx.sh", "export BATCHSIZE=64\n");
    put(code / ".git-like" / "x", "hidden\n");
    fs::path power = dir / "power";
    put(power / "result_0" / "node_0.txt", "power log\n");
    std::string base = std::string(REFEREE_BINARY) + " package '" + org.string() + "' --ruleset mini-1.0.0 ";
    int rc = shell(base + "--code minilm=" + code.string() + " --rcp-bypass miniclf --tarball '" +
                       (dir / "referee.tar.gz").string() + "'",
                   &out);
    CHECK_MESSAGE(rc == 0, out);
    CHECK_MESSAGE(out.find("wrote benchmarks/minilm/implementations/referee/ (2 source files, README.md)") != std::string::npos, out);
    CHECK_MESSAGE(out.find("wrote results/cpu_node/miniclf/package_checker_params (rcp-bypass)") != std::string::npos, out);
    CHECK_MESSAGE(out.find("warning: benchmarks/miniclf has no source") != std::string::npos, out);
    CHECK_MESSAGE(out.find("verdict: PASS") != std::string::npos, out);
    fs::path impl = org / "benchmarks" / "minilm" / "implementations" / "referee";
    CHECK(slurp(impl / "train.py") == "print('train')\n");
    CHECK(slurp(impl / "configs" / "dgx.sh") == "export BATCHSIZE=64\n");
    CHECK_FALSE(fs::exists(impl / ".git-like"));
    std::string readme = slurp(impl / "README.md");
    CHECK_MESSAGE(readme.find("| result_0.txt | minilm-") != std::string::npos, readme);  // runs enter as they end
    CHECK_MESSAGE(readme.find("builtin minilm batch_size=64") != std::string::npos, readme);
    CHECK_MESSAGE(readme.find("Checked live with rule set `mini-1.0.0`.") != std::string::npos, readme);
    CHECK(slurp(org / "results" / "cpu_node" / "miniclf" / "package_checker_params") == "rcp-bypass");
    // The tarball holds the organisation's folder, and nothing half-written.
    std::string listing;
    REQUIRE(shell("tar tzf '" + (dir / "referee.tar.gz").string() + "' | sort", &listing) == 0);
    CHECK_MESSAGE(listing.find("referee/benchmarks/minilm/implementations/referee/train.py\n") != std::string::npos, listing);
    CHECK(listing.find("referee/results/cpu_node/minilm/result_4.txt\n") != std::string::npos);
    CHECK(listing.find("referee/systems/cpu_node.json\n") != std::string::npos);
    CHECK(listing.find("staging") == std::string::npos);
    CHECK(listing.find(".referee-runs") == std::string::npos);
    if (have_oracle()) {
      std::string pc;
      int prc = shell("/usr/bin/python3 '" + std::string(REFEREE_SOURCE_DIR) + "/tests/oracle/ruleset_package_checker.py' '" +
                          org.string() + "'",
                      &pc);
      CHECK_MESSAGE(prc == 0, pc);
      CHECK_MESSAGE(pc.find("PASS: the consortium's package checker") != std::string::npos, pc);
    }
    // Again, with the power logs: the implementation is replaced whole, the power folder lands beside the results.
    rc = shell(base + "--code minilm=" + code.string() + " --power minilm=" + power.string(), &out);
    CHECK_MESSAGE(out.find("wrote results/cpu_node/minilm/power/ (1 power logs)") != std::string::npos, out);
    CHECK(slurp(org / "results" / "cpu_node" / "minilm" / "power" / "result_0" / "node_0.txt") == "power log\n");
    // Requests that cannot be met change nothing (exit 2).
    const std::string before = slurp(impl / "README.md");
    struct Bad {
      std::string flags, says;
    };
    put(dir / "badpower" / "result_0" / "meter.csv", "x\n");
    put(dir / "nopower" / "result_9" / "node_0.txt", "x\n");
    for (const Bad& b : {Bad{"--code bort=" + code.string(), "--code 'bort' is not a benchmark of the package's results (cpu_node/miniclf, cpu_node/minilm)"},
                         Bad{"--code minilm=" + (dir / "none").string(), "not a folder"},
                         Bad{"--code minilm", "--code: expected BENCHMARK=FOLDER, found 'minilm'"},
                         Bad{"--rcp-bypass minilm --seed-checker-bypass minilm", "one file holds one bypass"},
                         Bad{"--power minilm=" + (dir / "badpower").string(), "result_0/meter.csv is not a power log name"},
                         Bad{"--power minilm=" + (dir / "nopower").string(), "result_9/ has no result file result_9.txt"},
                         Bad{"--implementation '../x'", "--implementation: expected a folder name"}}) {
      rc = shell(base + b.flags, &out);
      INFO(b.flags);
      CHECK_MESSAGE(rc == 2, out);
      CHECK_MESSAGE(out.find(b.says) != std::string::npos, out);
      bool said_unchanged = out.find("(nothing was changed)") != std::string::npos;
      if (b.flags != "--code minilm") CHECK_MESSAGE(said_unchanged, out);
    }
    CHECK(slurp(impl / "README.md") == before);
    rc = shell(std::string(REFEREE_BINARY) + " package '" + dir.string() + "' --ruleset mini-1.0.0", &out);
    CHECK(rc == 2);
    CHECK_MESSAGE(out.find("is not an organisation's package: it has no results/ folder") != std::string::npos, out);
    fs::remove_all(dir);
  }
}
