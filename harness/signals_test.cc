// Interrupting `referee run`: real referee processes, sent real signals,
// on the exec backend and on the Slurm test cluster (scripts/slurm/start.sh;
// without one the Slurm case fails under CI and skips elsewhere). And the
// progress a batch job or CI sees (--progress=plain|json).
#include <doctest/doctest.h>

#include "tests/run_referee.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/backends/slurm.h"
#include "rules/interp.h"
#include "rules/value.h"
#include "tests/reference_data.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Scratch {
  fs::path path;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "referee-signals-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string example() { return std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg"; }

// Starts `referee <args>` with stdout and stderr to `out`.
pid_t spawn_referee(const std::vector<std::string>& args, const fs::path& out) {
  std::vector<std::string> argv_store = {REFEREE_BINARY};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string out_path = out.string();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) ::_exit(126);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Its exit status, or nullopt when it is still running after `limit`.
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds limit) {
  auto end = Clock::now() + limit;
  while (true) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (Clock::now() > end) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
}

bool wait_until(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  auto end = Clock::now() + limit;
  while (!ok()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// A process that still runs (a zombie has ended).
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

// The pids the runs wrote to <dir>/pids/*.
std::vector<pid_t> recorded_pids(const fs::path& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "pids", ec)) {
    std::istringstream in(slurp(e.path()));
    long p = 0;
    if (in >> p && p > 1) out.push_back(static_cast<pid_t>(p));
  }
  return out;
}

// A spec whose run 0 prints a whole compliant log and ends; every other run
// records its shell's pid and a child's (the process group), prints the first
// lines of a log and a marker, and waits five minutes. Two at a time: run 0
// ends, runs 1 and 2 wait, runs 3 and 4 never start. `ignore_term`: they
// ignore SIGTERM, so only the SIGKILL after the cancel grace (or a second
// interrupt) ends them.
fs::path write_spec(const fs::path& dir, const std::string& backend, bool ignore_term) {
  fs::create_directories(dir / "pids");
  std::string ex = example();
  std::string script = std::string(ignore_term ? "trap '' TERM; " : "") + "if [ {run} -eq 0 ]; then cat '" + ex +
                       "/results/cpu_2x_example/minilm/result_0.txt'; exit 0; fi; "
                       "echo $$ > '" + (dir / "pids").string() + "/{run}.sh'; "
                       "sleep 300 & echo $! > '" + (dir / "pids").string() + "/{run}.child'; "
                       "head -n 12 '" + ex + "/results/cpu_2x_example/minilm/result_{run}.txt'; "
                       "echo marker-{run}; wait";
  std::string quoted;
  for (char c : script) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
  fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: " << backend
                      << "\nparallel: 2\norg: ExampleOrg\nsystem_description: " << ex
                      << "/systems/cpu_2x_example.json\ncommand: [/bin/sh, -c, \"" << quoted << "\"]\n"
                      // A long grace on exec: only a second interrupt can end them quickly.
                      << (ignore_term && backend == "exec" ? "backend_options: {kill_grace: \"60\"}\n" : "");
  return spec;
}

// What the summary of an interrupted run must say, whatever the backend:
// runs 0 (finished), 1 and 2 (cancelled), 3 and 4 (never started).
void check_interrupted_summary(const fs::path& dir, const std::string& out, const std::string& signal_words) {
  CHECK_MESSAGE(out.find("interrupted by " + signal_words) != std::string::npos, out);
  CHECK_MESSAGE(out.find("holds 1 result file(s): result_0.txt") != std::string::npos, out);
  CHECK_MESSAGE(out.find("never started (no log, no result): minilm-3, minilm-4") != std::string::npos, out);
  std::istringstream lines(out);
  std::string l;
  std::set<std::string> named;
  bool in_logs = false;
  while (std::getline(lines, l)) {
    // No verdict for a run that never started; no result for a cancelled one.
    if (l.rfind("minilm-3 ", 0) == 0 || l.rfind("minilm-4 ", 0) == 0) {
      if (l.find("is not in the package") == std::string::npos) {
        CHECK_MESSAGE(l.find("compliant") == std::string::npos, l);
        CHECK_MESSAGE(l.find("not started") != std::string::npos, l);
      }
    }
    if (l.rfind("minilm-1 ", 0) == 0 && l.find("  ") != std::string::npos) {
      CHECK_MESSAGE(l.find(" compliant ") == std::string::npos, l);
      CHECK_MESSAGE(l.find("result_") == std::string::npos, l);
    }
    if (auto at = l.find("its log is kept in "); at != std::string::npos) named.insert(l.substr(at + 19));
    if (l == "logs kept:") in_logs = true;
    else if (in_logs && l.rfind("  ", 0) == 0) named.insert(l.substr(2));
    else in_logs = false;
  }
  // Every log named exists, and holds what the run printed before it was stopped.
  CHECK(named.size() == 3);
  for (const auto& n : named) {
    CHECK_MESSAGE(fs::exists(n), n);
    std::string id = fs::path(n).stem().string();
    if (id != "minilm-0") CHECK_MESSAGE(slurp(n).find("marker-" + id.substr(7)) != std::string::npos, n);
    CHECK(n.find("minilm-3") == std::string::npos);
    CHECK(n.find("minilm-4") == std::string::npos);
  }
  fs::path results = dir / "out" / "ExampleOrg" / "results" / "cpu_2x_example" / "minilm";
  CHECK(fs::exists(results / "result_0.txt"));
  CHECK_FALSE(fs::exists(results / "result_1.txt"));
  // Nothing referee wrote is half-written. (A Slurm job's own work directory,
  // .slurm/, belongs to the job: its batch script, killed by scancel while it
  // records the exit status, may leave exit_code.tmp, which nobody reads.)
  for (auto it = fs::recursive_directory_iterator(dir / "out"); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == ".slurm") {
      it.disable_recursion_pending();
      continue;
    }
    CHECK_MESSAGE(it->path().filename().string().find(".tmp") == std::string::npos, it->path());
  }
}

// Runs 1 and 2 are up (their pids recorded, their marker printed) once both
// children have written their pid: they print the marker right after.
bool runs_up(const fs::path& dir) { return recorded_pids(dir).size() >= 4; }

}  // namespace

TEST_SUITE("signals") {
  TEST_CASE("SIGTERM to referee run on exec: every run cancelled, no process left, the summary says what is on disk") {
    Scratch s;
    fs::path spec = write_spec(s.path, "exec", false);
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    REQUIRE_MESSAGE(wait_until([&] { return runs_up(s.path); }, 30s), slurp(s.path / "stdout"));
    std::this_thread::sleep_for(300ms);  // the markers are read
    auto pids = recorded_pids(s.path);
    ::kill(pid, SIGTERM);
    auto rc = wait_exit(pid, 20s);
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    for (pid_t p : pids) CHECK_MESSAGE(!alive(p), "process " << p << " outlived referee");
    CHECK_MESSAGE(out.find("interrupted by SIGTERM: cancelling every run") != std::string::npos, out);
    CHECK_MESSAGE(out.find("interrupted by SIGTERM: the runs still going were cancelled") != std::string::npos, out);
    check_interrupted_summary(s.path, out, "SIGTERM");
  }

  TEST_CASE("kill -9 of referee run on exec: the runs go on, printing, and the next referee run adopts them") {
    Scratch s;
    // Each run prints a line a second for three seconds, then a whole log (one of the example package's).
    fs::path spec = s.path / "adopt.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nparallel: 5\n"
                        << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/cpu_system.yaml\n"
                        << "command: [\"/bin/sh\", \"-c\", \"for i in 1 2 3; do echo step $i; sleep 1; done; cat " << example()
                        << "/results/cpu_2x_example/minilm/result_{run}.txt\"]\n";
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    fs::path manifest = s.path / "out" / ".referee-runs" / "minilm" / "manifest.json";
    REQUIRE_MESSAGE(wait_until([&] { return slurp(s.path / "stdout").find("step 1") != std::string::npos ||
                                            slurp(manifest).find("\"running\"") != std::string::npos; }, 30s),
                    slurp(s.path / "stdout"));
    std::this_thread::sleep_for(500ms);
    ::kill(pid, SIGKILL);
    REQUIRE(wait_exit(pid, 10s));
    // The runs outlive it (their output is a file, no pipe to break) and end by themselves.
    std::string record = slurp(manifest);
    REQUIRE_MESSAGE(record.find("\"running\"") != std::string::npos, record);
    std::this_thread::sleep_for(4500ms);
    std::string out;
    int rc = referee::testing::run_referee("run '" + spec.string() + "' --out '" + (s.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 0, out);
    for (int k = 0; k < 5; ++k) {
      std::string line = "\nresume: minilm-" + std::to_string(k) + " (";
      size_t at = out.find(line);
      REQUIRE_MESSAGE(at != std::string::npos, out);
      const std::string adopted = "adopted: it ended while no harness watched it";
      CHECK_MESSAGE(out.compare(out.find("): ", at) + 3, adopted.size(), adopted) == 0, out);
    }
    CHECK_MESSAGE(out.find("nothing to run") != std::string::npos, out);
    CHECK_MESSAGE(out.find("lost:") == std::string::npos, out);
    int files = 0;
    for (const auto& e : fs::directory_iterator(s.path / "out" / "ExampleOrg" / "results" / "cpu_node" / "minilm"))
      files += e.path().filename().string().rfind("result_", 0) == 0 ? 1 : 0;
    CHECK(files == 5);
  }

  TEST_CASE("the run record cannot be written (a full disk): nothing more starts, the summary says so, the resume adopts") {
    Scratch s;
    fs::path spec = s.path / "full.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nparallel: 1\n"
                        << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/cpu_system.yaml\n"
                        << "command: [\"/bin/sh\", \"-c\", \"sleep 2; cat " << example()
                        << "/results/cpu_2x_example/minilm/result_{run}.txt\"]\n";
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    fs::path manifest = s.path / "out" / ".referee-runs" / "minilm" / "manifest.json";
    // Once run 0 runs (its process recorded as its job: the record's last write before it ends).
    REQUIRE_MESSAGE(wait_until([&] { return slurp(manifest).find("\"job_id\": \"") != std::string::npos; }, 30s),
                    slurp(s.path / "stdout"));
    // From now on the record cannot be replaced: its temporary file's name is taken by a folder
    // (what a full disk does to every write, even root's).
    fs::path blocker = manifest.string() + ".tmp-" + std::to_string(pid);
    fs::create_directories(blocker);
    auto rc = wait_exit(pid, 60s);
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK_MESSAGE(*rc == 2, out);
    CHECK_MESSAGE(out.find("cannot record the run: ") != std::string::npos, out);
    CHECK_MESSAGE(out.find("stopped: the run record cannot be written (") != std::string::npos, out);
    CHECK_MESSAGE(out.find("minilm-1: started") == std::string::npos, out);  // nothing started after
    CHECK_MESSAGE(out.find("never started") != std::string::npos, out);
    // The record as last written: run 0 with its seed, running; no other run.
    std::string record = slurp(manifest);
    CHECK(record.find("\"minilm-1\"") == std::string::npos);
    // Room again: the resume adopts run 0 from the output it left, and runs the rest with new seeds.
    fs::remove_all(blocker);
    std::string again;
    int rc2 = referee::testing::run_referee("run '" + spec.string() + "' --out '" + (s.path / "out").string() + "'", &again);
    CHECK_MESSAGE(rc2 == 0, again);
    CHECK_MESSAGE(again.find("\nresume: minilm-0 (") != std::string::npos, again);
    CHECK_MESSAGE(again.find("adopted: it ended while no harness watched it") != std::string::npos, again);
    CHECK_MESSAGE(again.find("lost:") == std::string::npos, again);
  }

  TEST_CASE("SIGTERM just after the runs ended (a child still holds their output): they are kept, none cancelled") {
    Scratch s;
    fs::create_directories(s.path / "pids");
    std::string ex = example();
    // Each run prints a whole compliant log, leaves a child holding its output, and exits 0.
    std::string script = "cat '" + ex + "/results/cpu_2x_example/minilm/result_{run}.txt'; sleep 30 & echo $! > '" +
                         (s.path / "pids").string() + "/{run}.child'; exit 0";
    fs::path spec = s.path / "spec.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\nparallel: 2\norg: ExampleOrg\n"
                        << "system_description: " << ex << "/systems/cpu_2x_example.json\n"
                        << "command: [/bin/sh, -c, \"" << script << "\"]\n";
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--runs", "2",
                               "--progress=plain"},
                              s.path / "stdout");
    // Both main processes have exited; the harness drains their output for 2 s.
    REQUIRE_MESSAGE(wait_until([&] { return recorded_pids(s.path).size() >= 2; }, 30s), slurp(s.path / "stdout"));
    std::this_thread::sleep_for(300ms);
    auto pids = recorded_pids(s.path);
    ::kill(pid, SIGTERM);
    auto rc = wait_exit(pid, 20s);
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    CHECK_MESSAGE(out.find("interrupted by SIGTERM: no run was still going: none was cancelled") != std::string::npos,
                  out);
    CHECK_MESSAGE(out.find("holds 2 result file(s): result_0.txt result_1.txt") != std::string::npos, out);
    CHECK_MESSAGE(out.find("minilm-0: succeeded [exit 0; ") != std::string::npos, out);
    CHECK_MESSAGE(out.find("cancelled") == out.find("cancelled\n"), out);  // only the summary's "none was cancelled"
    // What they left behind did not outlive referee, and the summary said so.
    for (pid_t p : pids) CHECK_MESSAGE(!alive(p), "process " << p << " outlived referee");
    CHECK_MESSAGE(out.find("minilm-1: 1 process of its process group still ran after it exited (sleep)") !=
                      std::string::npos,
                  out);
  }

  TEST_CASE("SIGHUP behaves like Ctrl-C") {
    Scratch s;
    fs::path spec = write_spec(s.path, "exec", false);
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    REQUIRE_MESSAGE(wait_until([&] { return runs_up(s.path); }, 30s), slurp(s.path / "stdout"));
    std::this_thread::sleep_for(300ms);
    auto pids = recorded_pids(s.path);
    ::kill(pid, SIGHUP);
    auto rc = wait_exit(pid, 20s);
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    for (pid_t p : pids) CHECK_MESSAGE(!alive(p), "process " << p << " outlived referee");
    check_interrupted_summary(s.path, out, "SIGHUP: the runs still going were cancelled");
  }

  TEST_CASE("a second signal ends at once: runs that ignore SIGTERM are killed without the grace, logs kept whole") {
    Scratch s;
    fs::path spec = write_spec(s.path, "exec", true);
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    REQUIRE_MESSAGE(wait_until([&] { return runs_up(s.path); }, 30s), slurp(s.path / "stdout"));
    std::this_thread::sleep_for(300ms);
    auto pids = recorded_pids(s.path);
    ::kill(pid, SIGINT);
    std::this_thread::sleep_for(300ms);
    // They ignore SIGTERM: without a second signal they would last the 60 s grace.
    for (pid_t p : pids) CHECK(alive(p));
    auto t0 = Clock::now();
    ::kill(pid, SIGTERM);
    auto rc = wait_exit(pid, 20s);
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    CHECK_MESSAGE(took < 15, took);  // far less than the grace
    MESSAGE("referee ended " << took << " s after the second signal");
    for (pid_t p : pids) CHECK_MESSAGE(!alive(p), "process " << p << " outlived referee");
    CHECK_MESSAGE(out.find("minilm-1: killed at a second interrupt") != std::string::npos, out);
    // The run record says the same: cancelled, out, its log not checked (never "compliant").
    std::string manifest = slurp(s.path / "out" / ".referee-runs" / "minilm" / "manifest.json");
    bool ok = false;
    std::string err;
    rules::Value m = rules::value_from_json(manifest, &ok, &err);
    REQUIRE_MESSAGE(ok, err << ": " << manifest);
    std::set<std::string> recorded;
    for (const auto& r : m.d().find_str("runs")->items()) {
      std::string id = r.d().find_str("run")->s();
      recorded.insert(id);
      if (id == "minilm-0") continue;
      CHECK_MESSAGE(r.d().find_str("verdict")->s() == "not checked", id);
      CHECK(r.d().find_str("state")->s() == "cancelled");
      CHECK(r.d().find_str("package")->s() == "out");
    }
    CHECK(recorded == std::set<std::string>{"minilm-0", "minilm-1", "minilm-2"});
    CHECK_MESSAGE(out.find("not checked") != std::string::npos, out);
    check_interrupted_summary(s.path, out, "Ctrl-C (SIGINT), then again: the runs still going were killed at once");
  }

  TEST_CASE("--progress=json: stdout is one JSON object per line, progress against the RCP, a summary last") {
    Scratch s;
    std::string ex = example();
    fs::path spec = s.path / "spec.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\nparallel: 5\norg: ExampleOrg\n"
                        << "system_description: " << ex << "/systems/cpu_2x_example.json\n"
                        << "command: [/bin/sh, -c, \"while IFS= read -r l; do printf '%s\\\\n' \\\"$l\\\"; case \\\"$l\\\" in "
                           "*eval_accuracy*) sleep 0.05;; esac; done < "
                        << ex << "/results/cpu_2x_example/minilm/result_{run}.txt\"]\n";
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=json"}, s.path / "all");
    auto rc = wait_exit(pid, 120s);
    REQUIRE(rc);
    // stdout and stderr went to one file: the JSON lines are those that start with '{'.
    std::string all = slurp(s.path / "all");
    CHECK_MESSAGE(*rc == 0, all);
    std::istringstream in(all);
    std::string l, last_type;
    int progress = 0, events = 0, with_fraction = 0;
    while (std::getline(in, l)) {
      if (l.empty() || l[0] != '{') continue;
      bool ok = false;
      std::string err;
      rules::Value v = rules::value_from_json(l, &ok, &err);
      REQUIRE_MESSAGE(ok, err << ": " << l);
      REQUIRE(v.kind == rules::VKind::Dict);
      last_type = v.d().find_str("type")->s();
      if (last_type == "progress") {
        ++progress;
        rules::Value* f = v.d().find_str("fraction");
        if (f && f->is_num()) {
          ++with_fraction;
          CHECK(v.d().find_str("expected_basis")->s() == "RCP at batch size 64");
          CHECK(v.d().find_str("position")->as_double() / v.d().find_str("expected")->as_double() ==
                doctest::Approx(f->as_double()));
        }
      } else if (last_type == "event") {
        ++events;
      } else {
        CHECK(last_type == "summary");
        REQUIRE(v.d().find_str("runs")->items().size() == 5);
        for (const auto& r : v.d().find_str("runs")->items()) {
          CHECK(r.d().find_str("verdict")->s() == "compliant");
          CHECK(r.d().find_str("result_file")->kind == rules::VKind::Str);
          CHECK(fs::path(r.d().find_str("result_file")->s()).is_absolute());  // as package and log are
          CHECK(fs::exists(r.d().find_str("result_file")->s()));
          CHECK(r.d().find_str("progress")->d().find_str("run_stop")->b);
        }
        CHECK(v.d().find_str("package_pass")->b);
        CHECK(v.d().find_str("package_problems")->items().empty());
        CHECK(fs::exists(v.d().find_str("manifest")->s()));
      }
    }
    CHECK(last_type == "summary");
    CHECK(events >= 10);  // started and succeeded, for each run
    CHECK(progress >= 5);
    CHECK(with_fraction >= 5);
    // What is for a person went to stderr, not among the JSON lines.
    CHECK(all.find("referee run ") != std::string::npos);

    // The same spec, one line per progress event.
    pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out2").string(), "--progress=plain"}, s.path / "plain");
    rc = wait_exit(pid, 120s);
    REQUIRE(rc);
    std::string plain = slurp(s.path / "plain");
    CHECK_MESSAGE(*rc == 0, plain);
    CHECK(plain.find("\033[") == std::string::npos);  // no redrawing
    CHECK_MESSAGE(plain.find("  progress minilm-0 succeeded: eval_accuracy ") != std::string::npos, plain);
    CHECK_MESSAGE(plain.find(" of ~2.5 epochs (RCP at batch size 64): ") != std::string::npos, plain);
  }
}

// ---------------------------------------------------------------- Slurm

namespace {

std::string cluster_conf() {
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) return c;
  const char* d = std::getenv("REFEREE_SLURM_DIR");
  std::string conf = std::string(d && *d ? d : "/tmp/referee-slurm") + "/slurm.conf";
  return fs::exists(conf) ? conf : "";
}

bool have_cluster() {
  auto r = harness::slurm::run_command({"sinfo", "--noheader", "--format=%t"}, cluster_conf(), 20s);
  std::string problem = !r.started ? r.error : r.exit_code != 0 ? "sinfo failed: " + r.err : "";
  if (problem.empty() && r.out.find("idle") == std::string::npos && r.out.find("mix") == std::string::npos &&
      r.out.find("alloc") == std::string::npos)
    problem = "no usable node (sinfo: " + r.out + ")";
  if (problem.empty()) return true;
  if (std::getenv("CI")) FAIL("no Slurm test cluster (eval \"$(scripts/slurm/start.sh)\"): " << problem);
  MESSAGE("SKIPPED: no Slurm test cluster (eval \"$(scripts/slurm/start.sh)\"): " << problem);
  referee::testing::skip_log().current = true;
  referee::testing::skip_log().reason = problem;
  return false;
}

// job id -> state of the jobs whose batch script lies under `dir`.
std::map<std::string, std::string> jobs_under(const fs::path& dir) {
  std::map<std::string, std::string> out;
  auto r = harness::slurm::run_command({"squeue", "--noheader", "--states=all", "--format=%i|%T|%o"}, cluster_conf(), 20s);
  std::istringstream in(r.out);
  std::string l;
  while (std::getline(in, l)) {
    auto a = l.find('|'), b = l.find('|', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string id = l.substr(0, a), state = l.substr(a + 1, b - a - 1), cmd = l.substr(b + 1);
    while (!id.empty() && id[0] == ' ') id.erase(0, 1);
    if (cmd.rfind(dir.string(), 0) == 0) out[id] = state;
  }
  return out;
}

// Once referee has ended: none of its jobs is queued or running, each reaches a
// final state, and the processes the runs recorded are gone (within `wait`).
void check_no_job_left(const fs::path& dir, const std::vector<pid_t>& pids, std::chrono::seconds wait) {
  for (const auto& job : jobs_under(dir)) {
    const auto& [id, state] = job;
    CHECK_MESSAGE((state != "PENDING" && state != "RUNNING"), "job " << job.first << " is " << job.second);
  }
  CHECK(wait_until(
      [&] {
        for (const auto& [id, state] : jobs_under(dir))
          if (state != "CANCELLED" && state != "COMPLETED" && state != "FAILED") return false;
        return true;
      },
      60s));
  CHECK(wait_until([&] {
    for (pid_t p : pids)
      if (alive(p)) return false;
    return true;
  }, wait));
}

}  // namespace

TEST_SUITE("signals") {
  TEST_CASE("SIGTERM to referee run on Slurm: every job scancelled, its output kept, no job left") {
    if (!have_cluster()) return;
    Scratch s;
    ::chmod(s.path.c_str(), 0755);
    fs::path spec = write_spec(s.path, "slurm", false);
    std::string conf = cluster_conf();
    if (!conf.empty()) ::setenv("SLURM_CONF", conf.c_str(), 0);
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    // Runs 1 and 2 are jobs that print their marker and wait (the cluster may be busy: allow a while).
    bool up = wait_until([&] { return runs_up(s.path); }, 120s);
    if (!up) {
      ::kill(pid, SIGTERM);
      wait_exit(pid, 60s);
      FAIL("the jobs did not start: " << slurp(s.path / "stdout"));
    }
    // Their markers reach the output files, and referee reads them.
    std::this_thread::sleep_for(1500ms);
    auto jobs = jobs_under(s.path);
    CHECK_MESSAGE(jobs.size() >= 3, slurp(s.path / "stdout"));
    auto pids = recorded_pids(s.path);
    auto t0 = Clock::now();
    ::kill(pid, SIGTERM);
    auto rc = wait_exit(pid, 90s);
    MESSAGE("referee ended " << std::chrono::duration<double>(Clock::now() - t0).count() << " s after SIGTERM");
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    // No job of this run is queued or running once referee has ended.
    check_no_job_left(s.path, pids, 30s);
    CHECK_MESSAGE(out.find("interrupted by SIGTERM (scancel ") != std::string::npos, out);
    CHECK_MESSAGE(out.find("cancelled: interrupted") == std::string::npos, out);  // the state is not said twice
    check_interrupted_summary(s.path, out, "SIGTERM: the runs still going were cancelled");
  }
}

TEST_SUITE("signals") {
  TEST_CASE("two SIGTERMs to referee run on Slurm: it ends at once and still leaves no job behind") {
    if (!have_cluster()) return;
    Scratch s;
    ::chmod(s.path.c_str(), 0755);
    // The jobs' processes take SIGTERM: on the test cluster (proctrack/linuxproc) a
    // process that ignores it outlives its batch script and escapes Slurm's SIGKILL,
    // whatever referee does (docs/progress.md).
    fs::path spec = write_spec(s.path, "slurm", false);
    std::string conf = cluster_conf();
    if (!conf.empty()) ::setenv("SLURM_CONF", conf.c_str(), 0);
    pid_t pid = spawn_referee({"run", spec.string(), "--out", (s.path / "out").string(), "--progress=plain"}, s.path / "stdout");
    bool up = wait_until([&] { return runs_up(s.path); }, 120s);
    if (!up) {
      ::kill(pid, SIGTERM);
      ::kill(pid, SIGTERM);
      wait_exit(pid, 60s);
      FAIL("the jobs did not start: " << slurp(s.path / "stdout"));
    }
    std::this_thread::sleep_for(1500ms);
    auto pids = recorded_pids(s.path);
    auto t0 = Clock::now();
    ::kill(pid, SIGTERM);
    std::this_thread::sleep_for(100ms);
    ::kill(pid, SIGTERM);
    auto rc = wait_exit(pid, 60s);
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string out = slurp(s.path / "stdout");
    REQUIRE_MESSAGE(rc, out);
    CHECK(*rc == 2);
    MESSAGE("referee ended " << took << " s after the first of two SIGTERMs");
    CHECK_MESSAGE(took < 10, took);
    check_no_job_left(s.path, pids, 60s);
    check_interrupted_summary(s.path, out, "SIGTERM, then again: the runs still going were sent scancel at once");
    // On Slurm referee sends scancel and does not wait: it does not claim the processes were killed.
    CHECK_MESSAGE(out.find("killed") == std::string::npos, out);
  }
}
