// The slurm backend: its pieces (quoting, the batch script, sbatch's
// arguments, state mapping) on their own, then runs on a REAL Slurm cluster,
// the single-node one that scripts/slurm/start.sh starts. Without a
// reachable cluster the cluster cases fail under CI and skip elsewhere.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/manifest.h"
#include "harness/environment/node_environment.h"
#include "harness/runner.h"
#include "harness/backends/slurm.h"
#include "harness/backends/slurm_describe.h"
#include "harness/spec.h"
#include "harness/environment/system_describe.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/source.h"
#include "tests/run_referee.h"
#include "tests/torch_example.h"

namespace fs = std::filesystem;
using namespace referee::harness;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A directory removed at the end of the test case.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& prefix) {
    std::string tmpl = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// SLURM_CONF of the cluster to use: the environment's, else start.sh's.
std::string cluster_conf() {
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) return c;
  const char* d = std::getenv("REFEREE_SLURM_DIR");
  std::string conf = std::string(d && *d ? d : "/tmp/referee-slurm") + "/slurm.conf";
  return fs::exists(conf) ? conf : "";
}

// True when sinfo answers with a usable node. When not: under CI this is a
// failure; elsewhere the case says that it skips.
bool have_cluster() {
  static std::optional<std::string> problem;
  static bool probed = false;
  if (!probed) {
    probed = true;
    auto r = slurm::run_command({"sinfo", "--noheader", "--format=%t"}, cluster_conf(), 20s);
    if (!r.started) {
      problem = r.error;
    } else if (r.exit_code != 0) {
      problem = "sinfo failed: " + r.err;
    } else if (r.out.find("idle") == std::string::npos && r.out.find("mix") == std::string::npos &&
               r.out.find("alloc") == std::string::npos) {
      problem = "no usable node (sinfo: " + r.out + ")";
    }
  }
  if (!problem) return true;
  if (std::getenv("CI")) {
    FAIL("no Slurm cluster (run scripts/slurm/start.sh): " << *problem << "; CI must have one, so this fails");
  } else {
    MESSAGE("SKIPPED: no Slurm cluster (run scripts/slurm/start.sh): " << *problem);
  }
  return false;
}

SlurmOptions fast_options() {
  SlurmOptions o;
  o.slurm_conf = cluster_conf();
  o.read_interval = 100ms;
  o.state_interval = 250ms;
  return o;
}

// Lines received per run, with the time each arrived.
struct Collector {
  std::mutex mu;
  std::map<std::string, std::vector<std::pair<std::string, Clock::time_point>>> lines;
  LineSink sink() {
    return [this](const std::string& id, const std::string& line) {
      std::lock_guard lock(mu);
      lines[id].emplace_back(line, Clock::now());
    };
  }
  std::vector<std::string> of(const std::string& id) {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (auto& [l, t] : lines[id]) {
      // srun's own notice that a step waits for its node to be freed by the step before it
      // ("srun: Job N step creation temporarily disabled, retrying ..."): the cluster's, not the run's.
      if (l.rfind("srun: Job ", 0) == 0 && l.find("step creation") != std::string::npos) continue;
      out.push_back(l);
    }
    return out;
  }
  bool has(const std::string& id, const std::string& line) {
    auto v = of(id);
    return std::find(v.begin(), v.end(), line) != v.end();
  }
};

std::string unique_id(const std::string& what) { return "slurmtest-" + std::to_string(::getpid()) + "-" + what; }

RunRequest request(const std::string& id, std::vector<std::string> command, const ScratchDir& dir) {
  RunRequest r;
  r.id = id;
  r.benchmark = "test";
  r.command = std::move(command);
  r.log_path = (dir.path / (id + ".log")).string();
  r.workdir = dir.path.string();
  return r;
}

}  // namespace

TEST_SUITE("slurm") {

// ------------------------------------------------------------ pieces

TEST_CASE("shell_quote and split_words") {
  CHECK(slurm::shell_quote("plain") == "'plain'");
  CHECK(slurm::shell_quote("it's") == "'it'\\''s'");
  CHECK(slurm::shell_quote("") == "''");
  auto w = slurm::split_words("--exclusive  --constraint='a100&nvlink' \"--comment=x y\" a\\ b");
  REQUIRE(w);
  CHECK(*w == std::vector<std::string>{"--exclusive", "--constraint=a100&nvlink", "--comment=x y", "a b"});
  CHECK(slurm::split_words("")->empty());
  CHECK_FALSE(slurm::split_words("--comment='open"));
  CHECK_FALSE(slurm::split_words("trailing\\"));
}

TEST_CASE("sbatch arguments from the request's options") {
  RunRequest r;
  r.id = "bert-1";
  r.command = {"train"};
  r.timeout = 90s;
  r.options = {{"nodes", "8"},        {"tasks_per_node", "8"}, {"gpus_per_node", "8"},
               {"partition", "gpu"},  {"account", "mlperf"},   {"extra_args", "--exclusive --qos='high prio'"}};
  auto files = slurm::job_files("/shared/runs/bert-1.abc");
  std::string err;
  auto args = slurm::sbatch_args(r, files, "/work", &err);
  CHECK(err.empty());
  std::vector<std::string> want = {"--parsable",       "--job-name=bert-1",
                                   "--output=/shared/runs/bert-1.abc/output.txt",
                                   "--open-mode=truncate", "--chdir=/work",
                                   "--nodes=8",        "--ntasks-per-node=8",
                                   "--gpus-per-node=8", "--partition=gpu",
                                   "--account=mlperf",  "--time=2",
                                   "--exclusive",      "--qos=high prio",
                                   "/shared/runs/bert-1.abc/job.sh"};
  CHECK(args == want);

  CHECK(slurm::time_limit(0s).empty());
  CHECK(slurm::time_limit(1s) == "1");
  CHECK(slurm::time_limit(60s) == "1");
  CHECK(slurm::time_limit(61s) == "2");

  // % in a path is literal for Slurm only when doubled.
  RunRequest plain;
  plain.id = "x";
  plain.command = {"c"};
  auto pct = slurm::sbatch_args(plain, slurm::job_files("/tmp/50%"), "/", &err);
  CHECK(std::find(pct.begin(), pct.end(), "--output=/tmp/50%%/output.txt") != pct.end());

  RunRequest typo = r;
  typo.options = {{"partiton", "gpu"}};
  err.clear();
  CHECK(slurm::sbatch_args(typo, files, "/work", &err).empty());
  CHECK(err.find("unknown slurm option 'partiton'") != std::string::npos);

  RunRequest unclosed = r;
  unclosed.options = {{"extra_args", "--comment='x"}};
  err.clear();
  CHECK(slurm::sbatch_args(unclosed, files, "/work", &err).empty());
  CHECK(err.find("unclosed quote") != std::string::npos);
}

TEST_CASE("the batch script runs the command with its env and workdir, quoted, and records the exit code") {
  ScratchDir dir("referee-slurm-script-");
  fs::create_directories(dir.path / "work dir");
  RunRequest r;
  r.id = "odd\nid";
  r.command = {"sh", "-c", "printf '%s|%s|%s\\n' \"$1\" \"$ODD\" \"$(basename \"$PWD\")\"; exit 7", "arg0",
               "it's $(not run) `nor this` \"q\" ; | &"};
  r.env = {{"ODD", "a b 'c' $HOME"}};
  r.workdir = (dir.path / "work dir").string();
  auto files = slurm::job_files(dir.path.string());
  std::string err;
  std::string script = slurm::batch_script(r, files, &err);
  REQUIRE(err.empty());
  CHECK(script.find("odd?id") != std::string::npos);  // no newline smuggled into the script
  {
    std::ofstream(files.script) << script;
  }
  auto res = slurm::run_command({"sh", files.script}, "", 20s);
  REQUIRE(res.started);
  CHECK(res.exit_code == 7);
  CHECK(res.out == "it's $(not run) `nor this` \"q\" ; | &|a b 'c' $HOME|work dir\n");
  CHECK(slurp(files.exit_code) == "7\n");

  RunRequest bad = r;
  bad.env = {{"NOT-A-NAME", "x"}};
  err.clear();
  CHECK(slurm::batch_script(bad, files, &err).empty());
  CHECK(err.find("NOT-A-NAME") != std::string::npos);

  bad = r;
  bad.command.clear();
  err.clear();
  CHECK(slurm::batch_script(bad, files, &err).empty());
  CHECK(err.find("no command") != std::string::npos);
}

TEST_CASE("Slurm's answers: job ids, scontrol fields, states") {
  CHECK(slurm::parse_job_id("42\n") == "42");
  CHECK(slurm::parse_job_id("42;cluster\n") == "42");
  CHECK(slurm::parse_job_id("sbatch: error: x\n").empty());
  CHECK(slurm::parse_job_id("").empty());

  auto f = slurm::parse_scontrol(
      "JobId=5 JobName=x UserId=root(0) JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 TimeLimit=00:01:00");
  CHECK(f["JobState"] == "FAILED");
  CHECK(f["ExitCode"] == "3:0");
  CHECK(f["Reason"] == "NonZeroExitCode");

  CHECK(slurm::map_state("PENDING", -1, 0, "Resources").state == RunState::Pending);
  CHECK(slurm::map_state("PENDING", -1, 0, "Resources").detail == "slurm state PENDING (Resources)");
  CHECK(slurm::map_state("RUNNING", -1, 0, "None").state == RunState::Running);
  CHECK(slurm::map_state("COMPLETING", -1, 0, "").state == RunState::Running);
  auto ok = slurm::map_state("COMPLETED", -1, 0, "");
  CHECK(ok.state == RunState::Succeeded);
  CHECK(ok.exit_code == 0);
  auto failed = slurm::map_state("FAILED", 3, 0, "NonZeroExitCode");
  CHECK(failed.state == RunState::Failed);
  CHECK(failed.exit_code == 3);
  CHECK(failed.detail == "exit 3");
  CHECK(slurm::map_state("FAILED", 0, 9, "").detail == "killed by SIGKILL");
  CHECK(slurm::map_state("TIMEOUT", -1, 15, "").state == RunState::TimedOut);
  CHECK(slurm::map_state("TIMEOUT", -1, 15, "").detail.find("time limit") != std::string::npos);
  CHECK(slurm::map_state("CANCELLED", -1, 15, "").state == RunState::Cancelled);
  CHECK(slurm::map_state("NODE_FAIL", -1, 0, "").state == RunState::Failed);
  CHECK(slurm::map_state("NODE_FAIL", -1, 0, "").detail == "slurm state NODE_FAIL");
  CHECK(slurm::map_state("OUT_OF_MEMORY", -1, 0, "").state == RunState::Failed);
  CHECK(slurm::is_terminal("COMPLETED"));
  CHECK_FALSE(slurm::is_terminal("COMPLETING"));
}

TEST_CASE("a missing Slurm command is a clear error") {
  auto r = slurm::run_command({"referee-no-such-slurm-command"}, "", 5s);
  CHECK_FALSE(r.started);
  CHECK(r.error.find("referee-no-such-slurm-command not found on PATH") != std::string::npos);
}

// ------------------------------------------------------------ a real cluster

TEST_CASE("a job's lines stream in order while it runs") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-stream-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string id = unique_id("stream");
  auto req = request(id, {"sh", "-c", "for i in 1 2 3 4; do echo line $i; sleep 1; done; printf 'no newline'"}, dir);
  std::string err;
  auto h = backend.launch(req, c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  CHECK(h->id() == id);
  auto st = h->wait(60s);
  auto ended = Clock::now();
  CHECK(st.state == RunState::Succeeded);
  CHECK(st.exit_code == 0);
  CHECK(c.of(id) == std::vector<std::string>{"line 1", "line 2", "line 3", "line 4", "no newline"});
  std::lock_guard lock(c.mu);
  auto& lines = c.lines[id];
  REQUIRE(lines.size() == 5);
  // The first line came while the job still had seconds to run, and each
  // about a second after the one before.
  CHECK(ended - lines[0].second > 2000ms);
  CHECK(lines[3].second - lines[0].second > 1500ms);
  // The run's files are beside its log.
  CHECK(fs::exists(dir.path / ".slurm"));
}

TEST_CASE("exit 0 is Succeeded, exit 3 is Failed with exit code 3") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-exit-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string err;
  auto ok = backend.launch(request(unique_id("exit0"), {"sh", "-c", "echo fine"}, dir), c.sink(), &err);
  REQUIRE_MESSAGE(ok, err);
  auto bad = backend.launch(request(unique_id("exit3"), {"sh", "-c", "echo failing >&2; exit 3"}, dir), c.sink(), &err);
  REQUIRE_MESSAGE(bad, err);
  auto s0 = ok->wait(60s);
  auto s3 = bad->wait(60s);
  CHECK(s0.state == RunState::Succeeded);
  CHECK(s0.exit_code == 0);
  CHECK(s3.state == RunState::Failed);
  CHECK(s3.exit_code == 3);
  CHECK(s3.detail == "exit 3");
  CHECK(c.of(unique_id("exit0")) == std::vector<std::string>{"fine"});
  CHECK(c.of(unique_id("exit3")) == std::vector<std::string>{"failing"});  // stderr too
}

TEST_CASE("N runs as separate jobs all complete, their logs collected, env and workdir applied") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-many-");
  SlurmBackend backend(fast_options());
  Collector c;
  const int n = 4;
  std::vector<std::unique_ptr<RunHandle>> handles;
  for (int i = 0; i < n; ++i) {
    auto req = request(unique_id("many-" + std::to_string(i)),
                       {"sh", "-c", "echo \"run $RUN seed $SEED in $(basename \"$PWD\")\"; sleep 1; echo done"}, dir);
    req.run_index = i;
    req.seed = 1000 + i;
    req.env = {{"RUN", std::to_string(i)}, {"SEED", std::to_string(1000 + i)}};
    std::string err;
    auto h = backend.launch(req, c.sink(), &err);
    REQUIRE_MESSAGE(h, err);
    handles.push_back(std::move(h));
  }
  std::string wd = dir.path.filename().string();
  for (int i = 0; i < n; ++i) {
    auto st = handles[i]->wait(60s);
    CHECK_MESSAGE(st.state == RunState::Succeeded, st.detail);
    CHECK(c.of(unique_id("many-" + std::to_string(i))) ==
          std::vector<std::string>{"run " + std::to_string(i) + " seed " + std::to_string(1000 + i) + " in " + wd,
                                   "done"});
  }
}

TEST_CASE("cancel reaches scancel: the job leaves squeue, the handle says Cancelled, the job stops") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-cancel-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string id = unique_id("cancel");
  fs::path marker = dir.path / "marker";
  auto t0 = Clock::now();
  std::string err;
  auto h = backend.launch(request(id, {"sh", "-c", "echo started; sleep 5 && touch marker && echo woke"}, dir), c.sink(),
                          &err);
  REQUIRE_MESSAGE(h, err);
  while (!c.has(id, "started") && Clock::now() - t0 < 30s) std::this_thread::sleep_for(50ms);
  REQUIRE(c.has(id, "started"));
  CHECK(h->poll().state == RunState::Running);
  h->cancel("test asked");
  h->cancel("twice");  // idempotent
  auto st = h->wait(30s);
  CHECK(st.state == RunState::Cancelled);
  CHECK(st.detail.find("test asked") != std::string::npos);
  auto q = slurm::run_command({"squeue", "--noheader", "--name=" + id, "--format=%i %T"}, cluster_conf(), 20s);
  CHECK(q.exit_code == 0);
  CHECK_MESSAGE(q.out.empty(), "still in squeue: " << q.out);
  // Past the moment the job would have written its marker.
  std::this_thread::sleep_until(t0 + 7s);
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(c.has(id, "woke"));
}

TEST_CASE("a cancel that comes after the job ended, before its state was polled, does not cancel it") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-ended-");
  SlurmOptions o = fast_options();
  o.state_interval = std::chrono::hours(1);  // Slurm is asked once, at the start, then only when poked
  SlurmBackend backend(o);
  Collector c;
  std::string id = unique_id("ended");
  std::string err;
  auto h = backend.launch(request(id, {"sh", "-c", "echo finished"}, dir), c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  // The job ran and wrote its exit code; the handle has not looked at its state since.
  auto exit_file = [&]() -> fs::path {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir.path / ".slurm", ec))
      if (e.path().filename().string().rfind(id, 0) == 0 && fs::exists(e.path() / "exit_code")) return e.path() / "exit_code";
    return {};
  };
  auto t0 = Clock::now();
  while (exit_file().empty() && Clock::now() - t0 < 60s) std::this_thread::sleep_for(50ms);
  REQUIRE_FALSE(exit_file().empty());
  RunState before = h->poll().state;
  CHECK((before == RunState::Running || before == RunState::Pending));
  h->cancel("interrupted by SIGTERM");
  auto st = h->wait(30s);
  CHECK_MESSAGE(st.state == RunState::Succeeded, st.detail);
  CHECK(st.exit_code == 0);
  CHECK_MESSAGE(st.detail.find("cancel") == std::string::npos, st.detail);
  CHECK(c.of(id) == std::vector<std::string>{"finished"});
}

TEST_CASE("a job past its timeout is reported TimedOut, the limit explained") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-timeout-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string id = unique_id("timeout");
  // "&&": when the time limit signals sleep before the shell, the shell must not go on to print.
  auto req = request(id, {"sh", "-c", "echo begin; sleep 60 && echo never"}, dir);
  req.timeout = 2s;
  auto t0 = Clock::now();
  std::string err;
  auto h = backend.launch(req, c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  auto st = h->wait(40s);
  CHECK(st.state == RunState::TimedOut);
  CHECK_MESSAGE(st.detail.find("time limit of 2 s exceeded") != std::string::npos, st.detail);
  CHECK(Clock::now() - t0 < 20s);
  // Slurm may add its own note ("slurmstepd: error: *** JOB n ON node CANCELLED ...").
  auto lines = c.of(id);
  REQUIRE(!lines.empty());
  CHECK(lines[0] == "begin");
  CHECK_FALSE(c.has(id, "never"));
  auto q = slurm::run_command({"squeue", "--noheader", "--name=" + id, "--format=%i %T"}, cluster_conf(), 20s);
  CHECK(q.out.empty());
}

TEST_CASE("a process of a job that ignores SIGTERM and left the job's tracking is found after the cancel and ended") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-leftover-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string err;
  fs::path pidfile = dir.path / "escaped";
  auto req = request(unique_id("leftover"),
                     {"sh", "-c", "setsid sh -c 'trap \"\" TERM; echo $$ > " + pidfile.string() +
                                      "; sleep 617' < /dev/null > /dev/null 2>&1 & echo up; sleep 600"},
                     dir);
  req.env[kRunTokenVar] = make_run_token(req.id);
  auto h = backend.launch(req, c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  for (int i = 0; i < 600 && !fs::exists(pidfile); ++i) std::this_thread::sleep_for(100ms);
  REQUIRE(fs::exists(pidfile));
  h->cancel("test");
  RunStatus st = h->wait(120s);
  CHECK_MESSAGE(st.state == RunState::Cancelled, st.detail);
  CHECK_MESSAGE(st.leftovers.find("of the job still ran on this machine after Slurm ended the job (pid ") !=
                    std::string::npos,
                st.detail);
  CHECK(st.detail.find(st.leftovers) != std::string::npos);
  pid_t escaped = 0;
  std::ifstream(pidfile) >> escaped;
  REQUIRE(escaped > 0);
  std::this_thread::sleep_for(200ms);
  std::string stat;
  std::getline(std::ifstream("/proc/" + std::to_string(escaped) + "/stat"), stat);
  CHECK_MESSAGE((stat.empty() || stat.substr(stat.rfind(')') + 2, 1) == "Z"), stat);
}

TEST_CASE("sbatch refusing a job is an error with sbatch's message") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-refused-");
  SlurmBackend backend(fast_options());
  auto req = request(unique_id("refused"), {"true"}, dir);
  req.options = {{"partition", "referee-no-such-partition"}};
  std::string err;
  auto h = backend.launch(req, nullptr, &err);
  CHECK_FALSE(h);
  CHECK_MESSAGE(err.find("sbatch refused run") != std::string::npos, err);
  CHECK_MESSAGE(err.find("nvalid partition") != std::string::npos, err);
}

TEST_CASE("referee run on slurm: a partition the cluster lacks is refused by sbatch --test-only, before any job") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-preflight-");
  std::string name = unique_id("preflight");
  std::ofstream(dir.path / "spec.yaml")
      << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: slurm\ncommand: [\"true\"]\n"
      << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/torch_cpu_system.yaml\n"
      << "backend_options: {partition: referee-no-such-partition, extra_args: \"--job-name=" << name << "\"}\n";
  std::string out;
  int rc = referee::testing::run_shell_capture("SLURM_CONF='" + cluster_conf() + "' " + REFEREE_BINARY + " run '" +
                                                   (dir.path / "spec.yaml").string() + "' --out '" +
                                                   (dir.path / "out").string() + "'",
                                               &out);
  CHECK_MESSAGE(rc == 2, out);
  CHECK_MESSAGE(out.find("Slurm refuses the job a run would submit (sbatch --test-only, exit ") != std::string::npos, out);
  CHECK_MESSAGE(out.find("nvalid partition") != std::string::npos, out);
  CHECK_MESSAGE(out.find("(nothing was run, no seed given out)") != std::string::npos, out);
  CHECK_FALSE(fs::exists(dir.path / "out"));  // no describe job, no package, no seed
  auto q = slurm::run_command({"sacct", "--noheader", "--name=" + name, "--format=JobID"}, cluster_conf(), 20s);
  CHECK_MESSAGE(q.out.find_first_not_of(" \n") == std::string::npos, q.out);
  // A container asked of a cluster without Pyxis.
  std::ofstream(dir.path / "spec.yaml")
      << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: slurm\ncommand: [\"true\"]\n"
      << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/torch_cpu_system.yaml\n"
      << "backend_options: {container_image: \"nvcr.io/nvidia/pytorch:24.01-py3\"}\n";
  rc = referee::testing::run_shell_capture("SLURM_CONF='" + cluster_conf() + "' " + REFEREE_BINARY + " run '" +
                                               (dir.path / "spec.yaml").string() + "' --out '" +
                                               (dir.path / "out").string() + "'",
                                           &out);
  CHECK_MESSAGE(rc == 2, out);
  CHECK_MESSAGE(out.find("this cluster's srun has no --container-image: Pyxis") != std::string::npos, out);
  CHECK_FALSE(fs::exists(dir.path / "out"));
}

TEST_CASE("resume on slurm: the manifest records the job's output.txt from launch on; a live job is named and never started twice") {
  if (!have_cluster()) return;
  if (!std::getenv("SLURM_CONF")) ::setenv("SLURM_CONF", cluster_conf().c_str(), 1);
  std::string error;
  referee::rules::RuleSource src;
  auto rs = referee::rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  referee::rules::RoundFacts facts;
  REQUIRE(referee::rules::facts_for(*rs, &facts, &error));
  ScratchDir dir("referee-slurm-resume-");
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "slurm";
  spec.org = "ExampleOrg";
  spec.system = "cpu_2x_example";
  spec.command = {"/bin/sh", "-c", "sleep 2; cat " + example + "/results/cpu_2x_example/minilm/result_{run}.txt"};
  REQUIRE_MESSAGE(finalize_spec(&spec, 1, &error), error);
  SystemDescription sys;
  REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
  SlurmBackend backend(fast_options());
  RunnerOptions opt;
  opt.out_dir = (dir.path / "out").string();
  opt.system_json = sys.to_json();
  fs::path manifest_path = dir.path / "out" / ".referee-runs" / "minilm" / "manifest.json";
  std::string output_at_launch;
  opt.event = [&](const std::string& e) {
    if (e.find(": started") == std::string::npos && e.find(": submitted") == std::string::npos) return;
    Manifest m;
    bool existed = false;
    std::string err;
    if (load_manifest(manifest_path.string(), "minilm", &m, &existed, &err) && !m.runs.empty())
      output_at_launch = m.runs.back().output;
  };
  HarnessReport report;
  REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
  REQUIRE(report.runs.size() == 1);
  CHECK_MESSAGE(fs::path(output_at_launch).filename() == "output.txt", output_at_launch);
  CHECK(fs::exists(resolve_in(opt.out_dir, output_at_launch)));

  // A job that still runs, recorded "running" by a harness that was killed.
  auto sb = slurm::run_command({"sbatch", "--parsable", "--job-name=" + unique_id("resume"), "--output=/dev/null",
                                "--wrap=sleep 120"},
                               cluster_conf(), 20s);
  REQUIRE_MESSAGE(sb.exit_code == 0, sb.err);
  std::string job = slurm::parse_job_id(sb.out);
  REQUIRE_FALSE(job.empty());
  Manifest m;
  bool existed = false;
  REQUIRE(load_manifest(manifest_path.string(), "minilm", &m, &existed, &error));
  ManifestRun r = m.runs[0];
  r.run = "minilm-3";
  r.invocation = "killed";
  r.job_id = job;
  r.state = "running";
  r.package = "out";
  r.result_file.clear();
  r.log = ".referee-runs/minilm/killed/minilm-3.log";
  r.output = output_at_launch;
  m.runs.push_back(r);
  REQUIRE(save_manifest(manifest_path.string(), m, &error));
  std::string before = slurp(manifest_path);
  // Pending or running, it is alive either way.
  Reconciled rec;
  fs::path results = dir.path / "out" / "ExampleOrg" / "results" / "cpu_2x_example" / "minilm";
  CHECK_FALSE(reconcile_package(&m, manifest_path.string(), opt.out_dir, results.string(), "ExampleOrg",
                                "cpu_2x_example", *rs, false, &rec, &error));
  CHECK_MESSAGE(error.find("minilm-3 (Slurm job " + job + ", ") == 0, error);
  CHECK_MESSAGE(error.find("invocation killed) is still running: wait for it, or scancel " + job + ", then run again") !=
                    std::string::npos,
                error);
  CHECK(slurp(manifest_path) == before);

  // Cancelled: it has ended, and the resume records it lost, pointing at its output. (The output file
  // recorded is the earlier job's: the exit status that job's script wrote beside it goes, as a cancelled
  // job's script writes none.)
  fs::remove(fs::path(resolve_in(opt.out_dir, output_at_launch)).parent_path() / "exit_code");
  slurm::run_command({"scancel", job}, cluster_conf(), 20s);
  Liveness l;
  for (auto until = Clock::now() + 30s; Clock::now() < until; std::this_thread::sleep_for(200ms))
    if ((l = probe_run(r)).kind == Liveness::Ended) break;
  REQUIRE_MESSAGE(l.kind == Liveness::Ended, l.words << ": " << l.how);
  REQUIRE_MESSAGE(reconcile_package(&m, manifest_path.string(), opt.out_dir, results.string(), "ExampleOrg",
                                    "cpu_2x_example", *rs, false, &rec, &error),
                  error);
  CHECK(m.runs.back().state == "lost");
  CHECK(m.runs.back().log.empty());
  CHECK_MESSAGE(m.runs.back().reason.find("lost: the harness ended before the run did (Slurm job " + job) == 0,
                m.runs.back().reason);
  CHECK(m.runs.back().reason.find("its output is in " + output_at_launch) != std::string::npos);
  CHECK_MESSAGE(m.runs.back().reason.find("it did not end by itself (Slurm state CANCELLED") != std::string::npos,
                m.runs.back().reason);

  // A job that ran to its end while no harness watched (the harness killed with -9): its output
  // holds a whole log, Slurm says COMPLETED; the resume adopts it, seed and all.
  fs::path adopted_out = dir.path / "out" / ".referee-runs" / "minilm" / "killed" / "output-4.txt";
  fs::create_directories(adopted_out.parent_path());
  auto done = slurm::run_command({"sbatch", "--parsable", "--job-name=" + unique_id("adopt"), "--output=" + adopted_out.string(),
                                  "--wrap=sleep 1; cat " + example + "/results/cpu_2x_example/minilm/result_1.txt"},
                                 cluster_conf(), 20s);
  REQUIRE_MESSAGE(done.exit_code == 0, done.err);
  std::string job2 = slurm::parse_job_id(done.out);
  ManifestRun a = r;
  a.run = "minilm-4";
  a.slot = 4;
  a.job_id = job2;
  a.log = ".referee-runs/minilm/killed/minilm-4.log";  // never written: the harness was gone
  a.output = relative_to(opt.out_dir, adopted_out.string());
  for (auto until = Clock::now() + 60s; Clock::now() < until; std::this_thread::sleep_for(200ms))
    if ((l = probe_run(a)).kind == Liveness::Ended) break;
  REQUIRE_MESSAGE(l.final_state == "COMPLETED", l.words);
  m.runs.push_back(a);
  REQUIRE_MESSAGE(reconcile_package(&m, manifest_path.string(), opt.out_dir, results.string(), "ExampleOrg",
                                    "cpu_2x_example", *rs, false, &rec, &error),
                  error);
  const ManifestRun& got = m.runs.back();
  CHECK(got.state == "succeeded");
  CHECK(got.package == "in");
  CHECK(got.verdict == "compliant");
  CHECK_MESSAGE(got.reason.rfind("adopted: it ended while no harness watched it (Slurm job " + job2 + " ended COMPLETED), its output (" +
                                     a.output + ") complete; compliant",
                                 0) == 0,
                got.reason);
  CHECK(slurp(dir.path / "out" / got.result_file) ==
        slurp(example + "/results/cpu_2x_example/minilm/result_1.txt"));
}

TEST_CASE("a job waiting in the queue is queued, with Slurm's reason, until it runs: never called started before") {
  if (!have_cluster()) return;
  if (!std::getenv("SLURM_CONF")) ::setenv("SLURM_CONF", cluster_conf().c_str(), 1);
  std::string error;
  referee::rules::RuleSource src;
  auto rs = referee::rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  ScratchDir dir("referee-slurm-queued-");
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "slurm";
  spec.org = "ExampleOrg";
  spec.system = "cpu_2x_example";
  spec.command = {"/bin/sh", "-c", "cat " + example + "/results/cpu_2x_example/minilm/result_{run}.txt"};
  spec.backend_options = {{"extra_args", "--begin=now+4"}};  // held in the queue (BeginTime) for a few seconds
  REQUIRE_MESSAGE(finalize_spec(&spec, 1, &error), error);
  SystemDescription sys;
  REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
  SlurmBackend backend(fast_options());
  RunnerOptions opt;
  opt.out_dir = (dir.path / "out").string();
  opt.system_json = sys.to_json();
  std::vector<std::string> events;
  std::mutex mu;
  opt.event = [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  };
  HarnessReport report;
  REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
  std::string all;
  for (const auto& e : events) all += e + "\n";
  size_t submitted = all.find("minilm-0: submitted as job "), queued = all.find("minilm-0: queued: slurm state PENDING (BeginTime)"),
         started = all.find("minilm-0: started (job ");
  CHECK_MESSAGE(submitted != std::string::npos, all);
  CHECK_MESSAGE(queued != std::string::npos, all);
  CHECK_MESSAGE(started != std::string::npos, all);
  CHECK_MESSAGE((submitted < queued && queued < started), all);
  CHECK_MESSAGE(all.find("minilm-0: started (seed") == std::string::npos, all);
  REQUIRE(report.runs.size() == 1);
  CHECK(report.runs[0].status.state == RunState::Succeeded);
}

TEST_CASE("the harness on slurm: N runs as jobs, their logs collected into a package that passes check-package") {
  if (!have_cluster()) return;
  std::string error;
  referee::rules::RuleSource src;
  auto rs = referee::rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  referee::rules::RoundFacts facts;
  REQUIRE(referee::rules::facts_for(*rs, &facts, &error));
  fs::path dir = fs::temp_directory_path() / ("referee-slurm-harness-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "slurm";
  spec.org = "ExampleOrg";
  spec.system = "cpu_2x_example";
  spec.command = {"/bin/cat", example + "/results/cpu_2x_example/minilm/result_{run}.txt"};
  REQUIRE_MESSAGE(finalize_spec(&spec, facts.find("minilm")->runs, &error), error);
  SystemDescription sys;
  REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
  SlurmOptions so;
  so.slurm_conf = cluster_conf();
  SlurmBackend backend(so);
  RunnerOptions opt;
  opt.out_dir = (dir / "out").string();
  opt.system_json = sys.to_json();
  HarnessReport report;
  REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
  REQUIRE(report.runs.size() == 5);
  for (const auto& r : report.runs) CHECK_MESSAGE(r.status.state == RunState::Succeeded, r.id << ": " << r.status.detail);
  // The manifest names each run's Slurm job.
  Manifest m;
  bool existed = false;
  REQUIRE_MESSAGE(load_manifest(report.manifest, "minilm", &m, &existed, &error), error);
  REQUIRE(m.runs.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(m.runs[i].backend == "slurm");
    CHECK_FALSE(m.runs[i].job_id.empty());
    CHECK(m.runs[i].job_id.find_first_not_of("0123456789") == std::string::npos);
    CHECK(m.runs[i].job_id == report.runs[i].job_id);
  }
  referee::rules::PackageReport pr;
  REQUIRE(referee::rules::check_package(*rs, facts, report.package_dir, {}, &pr, &error));
  CHECK(pr.pass);
  fs::remove_all(dir);
}

TEST_CASE("runs_per_job: a cache_clear hook that hangs is stopped by the run's timeout (its step), and the next run still runs") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-group-hook-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::vector<RunRequest> reqs;
  std::vector<LineSink> sinks;
  for (int i = 0; i < 2; ++i) {
    auto r = request(unique_id("hook-" + std::to_string(i)), {"sh", "-c", "echo ran; touch ran." + std::to_string(i)}, dir);
    r.run_index = i;
    r.timeout = 3s;
    r.options = {{"runs_per_job", "2"}};
    r.cache_clear = {"sh", "-c", i == 0 ? "sleep 1000" : "true"};
    reqs.push_back(r);
    sinks.push_back(c.sink());
  }
  std::string err;
  auto t0 = Clock::now();
  auto hs = backend.launch_group(reqs, sinks, &err);
  REQUIRE_MESSAGE(hs.size() == 2, err);
  auto s0 = hs[0]->wait(90s);
  CHECK(s0.state == RunState::TimedOut);
  CHECK_MESSAGE(s0.detail.find("time limit of 3 s exceeded: referee cancelled step " + hs[0]->job_id() + ".") !=
                    std::string::npos,
                s0.detail);
  CHECK(Clock::now() - t0 < 45s);  // not Slurm's minute-rounded job limit
  auto s1 = hs[1]->wait(90s);
  CHECK_MESSAGE(s1.state == RunState::Succeeded, s1.detail);
  CHECK_FALSE(fs::exists(dir.path / "ran.0"));
  CHECK(fs::exists(dir.path / "ran.1"));
}

TEST_CASE("the harness on slurm with runs_per_job: five runs in two jobs, a run the live checker stops is stopped alone") {
  if (!have_cluster()) return;
  std::string error;
  referee::rules::RuleSource src;
  auto rs = referee::rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  referee::rules::RoundFacts facts;
  REQUIRE(referee::rules::facts_for(*rs, &facts, &error));
  ScratchDir dir("referee-slurm-harness-group-");
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  std::string results = example + "/results/cpu_2x_example/minilm/";
  Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "slurm";
  spec.org = "ExampleOrg";
  spec.system = "cpu_2x_example";
  // Run 1 logs a second run_start (a rule no later line repairs) and would go on for a minute.
  // (`&&`: Slurm ends a step's processes one at a time, so the shell may outlive its sleep
  // by a moment; the marker says the sleep ran its full minute.)
  spec.command = {"/bin/sh", "-c",
                  "if [ {run} = 1 ]; then cat " + results + "result_0.txt " + results +
                      "result_0.txt; sleep 60 && touch " + (dir.path / "run1.marker").string() + "; else grep -v cache_clear " +
                      results + "result_{run}.txt; fi"};
  spec.cache_clear = {"/bin/sh", "-c", "echo clearing"};
  spec.backend_options = {{"runs_per_job", "3"}};
  REQUIRE_MESSAGE(finalize_spec(&spec, facts.find("minilm")->runs, &error), error);
  SystemDescription sys;
  REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
  SlurmBackend backend(fast_options());
  RunnerOptions opt;
  opt.out_dir = (dir.path / "out").string();
  opt.system_json = sys.to_json();
  std::vector<std::string> events;
  std::mutex mu;
  opt.event = [&](const std::string& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  };
  auto t0 = Clock::now();
  HarnessReport report;
  REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
  CHECK(Clock::now() - t0 < 50s);  // run 1 was stopped, not waited for
  REQUIRE(report.runs.size() == 5);
  // Two jobs: runs 0-2, then 3-4.
  CHECK(report.runs[0].job_id == report.runs[1].job_id);
  CHECK(report.runs[1].job_id == report.runs[2].job_id);
  CHECK(report.runs[3].job_id == report.runs[4].job_id);
  CHECK(report.runs[0].job_id != report.runs[3].job_id);
  for (size_t i : {0, 2, 3, 4}) {
    CHECK_MESSAGE(report.runs[i].status.state == RunState::Succeeded, report.runs[i].id << ": " << report.runs[i].status.detail);
    CHECK_MESSAGE(!report.runs[i].result_file.empty(), report.runs[i].id << ": " << report.runs[i].left_out);
    // The hook's event is in the log that entered the package (the workload's own was left out).
    CHECK(slurp(report.runs[i].result_file).find("\"key\": \"cache_clear\"") != std::string::npos);
  }
  CHECK(report.runs[1].aborted);
  CHECK(report.runs[1].status.state == RunState::Cancelled);
  CHECK_MESSAGE(report.runs[1].status.detail.find("(scancel " + report.runs[1].job_id + ".") != std::string::npos,
                report.runs[1].status.detail);
  CHECK(report.runs[1].result_file.empty());
  CHECK_FALSE(fs::exists(dir.path / "run1.marker"));
  {
    std::lock_guard lock(mu);
    std::string all;
    for (const auto& e : events) all += e + "\n";
    CHECK_MESSAGE(all.find("minilm-1: submitted as job " + report.runs[1].job_id + " (seed " +
                           std::to_string(report.runs[1].seed) + ", run 2 of 3 in the job), queued") != std::string::npos,
                  all);
  }
  // Every run and its job in the manifest, each with its own log.
  Manifest m;
  bool existed = false;
  REQUIRE_MESSAGE(load_manifest(report.manifest, "minilm", &m, &existed, &error), error);
  REQUIRE(m.runs.size() == 5);
  std::set<std::string> logs;
  for (size_t i = 0; i < 5; ++i) {
    CHECK(m.runs[i].job_id == report.runs[i].job_id);
    CHECK(m.runs[i].seed == report.runs[i].seed);
    logs.insert(m.runs[i].log);
  }
  CHECK(logs.size() == 5);
  CHECK(m.runs[1].state == "stopped");
}

TEST_CASE("referee run harness/workloads/specs/torchclf_slurm.yaml: the PyTorch example as Slurm jobs, a package both package checkers pass") {
  if (!have_cluster()) return;
  if (!referee::testing::have_torch_example()) return;
  fs::path dir = fs::temp_directory_path() / ("referee-slurm-torch-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string out;
  int rc = referee::testing::run_shell_capture(
      "cd '" + std::string(REFEREE_SOURCE_DIR) + "' && SLURM_CONF='" + cluster_conf() + "' " + REFEREE_BINARY +
          " run harness/workloads/specs/torchclf_slurm.yaml --out '" + (dir / "out").string() + "'",
      &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("backend = slurm  (spec)") != std::string::npos, out);
  CHECK_MESSAGE(out.find("cpu_node_pytorch/torchclf: 5/5 result files, seeds ok, RCP found") != std::string::npos, out);
  // The system was described on the cluster's node, by a job of its own.
  auto node = slurm::run_command({"sinfo", "--noheader", "--format=%n"}, cluster_conf(), 20s);
  std::string node_name = node.out.substr(0, node.out.find('\n'));
  CHECK_MESSAGE(out.find("system described from compute node " + node_name) != std::string::npos, out);
  CHECK_MESSAGE(out.find("warning") == std::string::npos, out);
  // Each run was a batch job (and the description one more): its work
  // directory holds the batch script and its exit code; each run's
  // environment was captured on its node, Python and torch included.
  size_t jobs = 0, envs = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "out")) {
    if (e.path().filename() == "exit_code") {
      ++jobs;
      CHECK(slurp(e.path()) == "0\n");
    }
    std::string name = e.path().filename().string();
    if (name.size() > 9 && name.compare(name.size() - 9, 9, ".env.json") == 0 && name.find("node-env") == std::string::npos) {
      ++envs;
      Environment env;
      std::string err;
      REQUIRE_MESSAGE(environment_from_json(slurp(e.path()), &env, &err), err);
      CHECK(env.hostname == node_name);
      CHECK(env.python_packages.count("torch"));
      CHECK(env.submission.count("submission_benchmark"));
      CHECK(fs::exists(node_environment_file((e.path().parent_path() / (name.substr(0, name.size() - 9) + ".log")).string())));
    }
  }
  CHECK(jobs == 6);
  CHECK(envs == 5);
  referee::testing::check_torch_package(dir / "out" / "referee");
  fs::remove_all(dir);
}

// ------------------------------------------------------------ launcher, containers, node capture (pieces)

TEST_CASE("the launcher: srun for several nodes or tasks or a container, with the Pyxis flags; none runs the command itself") {
  auto words = [](std::map<std::string, std::string> options, std::string* err = nullptr) {
    RunRequest r;
    r.id = "x";
    r.command = {"train"};
    r.options = std::move(options);
    std::string e;
    auto w = slurm::launcher_words(r, err ? err : &e);
    return w;
  };
  using V = std::vector<std::string>;
  // One task on one node: the batch script runs the command itself.
  CHECK(words({}) == V{});
  CHECK(words({{"nodes", "1"}, {"tasks_per_node", "1"}}) == V{});
  // Several nodes, several tasks, a range that may be several: srun.
  CHECK(words({{"nodes", "2"}}) == V{"srun", "--kill-on-bad-exit=1"});
  CHECK(words({{"tasks_per_node", "8"}}) == V{"srun", "--kill-on-bad-exit=1"});
  CHECK(words({{"nodes", "1-4"}}) == V{"srun", "--kill-on-bad-exit=1"});
  CHECK(words({{"launcher", "srun"}}) == V{"srun", "--kill-on-bad-exit=1"});
  CHECK(words({{"nodes", "8"}, {"launcher", "none"}}) == V{});
  CHECK(words({{"srun_args", "--mpi=pmix --cpu-bind='map_cpu:0,1'"}}) ==
        V{"srun", "--kill-on-bad-exit=1", "--mpi=pmix", "--cpu-bind=map_cpu:0,1"});
  // A container: Pyxis's flags on srun, as its documentation spells them.
  auto c = words({{"container_image", "nvcr.io#nvidia/pytorch:24.09-py3"},
                  {"container_mounts", "/lustre/data:/data:ro,/lustre/out:/lustre/out"},
                  {"container_workdir", "/workspace"},
                  {"container_name", "mlperf"},
                  {"container_env", "NCCL_DEBUG,PYTHONPATH"},
                  {"container_writable", "true"},
                  {"container_remap_root", "no"},
                  {"container_mount_home", "false"},
                  {"container_entrypoint", "yes"}});
  CHECK(c == V{"srun", "--kill-on-bad-exit=1", "--container-image=nvcr.io#nvidia/pytorch:24.09-py3",
               "--container-mounts=/lustre/data:/data:ro,/lustre/out:/lustre/out", "--container-workdir=/workspace",
               "--container-name=mlperf", "--container-env=NCCL_DEBUG,PYTHONPATH", "--container-writable",
               "--no-container-remap-root", "--no-container-mount-home", "--container-entrypoint"});
  CHECK(words({{"container_image", "ubuntu"}, {"container_writable", "off"}}) ==
        V{"srun", "--kill-on-bad-exit=1", "--container-image=ubuntu", "--container-readonly"});
  // Errors say what is wrong.
  std::string err;
  CHECK_FALSE(words({{"container_image", "ubuntu"}, {"launcher", "none"}}, &err));
  CHECK(err.find("launcher: none") != std::string::npos);
  CHECK(err.find("container options") != std::string::npos);
  err.clear();
  CHECK_FALSE(words({{"srun_args", "--mpi=pmix"}, {"launcher", "none"}}, &err));
  CHECK(err.find("srun_args") != std::string::npos);
  err.clear();
  CHECK_FALSE(words({{"launcher", "mpirun"}}, &err));
  CHECK(err.find("auto, srun or none, not 'mpirun'") != std::string::npos);
  err.clear();
  CHECK_FALSE(words({{"container_image", "ubuntu"}, {"container_writable", "maybe"}}, &err));
  CHECK(err.find("container_writable is yes or no") != std::string::npos);
  err.clear();
  CHECK_FALSE(words({{"container_mounts", "/a:/a"}}, &err));
  CHECK(err.find("need container_image") != std::string::npos);
  err.clear();
  CHECK_FALSE(words({{"srun_args", "--x='y"}}, &err));
  CHECK(err.find("srun_args has an unclosed quote") != std::string::npos);
}

TEST_CASE("sbatch gets the allocation; the launcher and container options stay off sbatch's line") {
  RunRequest r;
  r.id = "c";
  r.command = {"train"};
  r.options = {{"nodes", "2"},
               {"tasks_per_node", "4"},
               {"gpus_per_node", "h100:4"},
               {"container_image", "ubuntu"},
               {"container_mounts", "/a:/a"},
               {"srun_args", ""},
               {"launcher", "auto"},
               {"describe", "node"},
               {"describe_timeout", "60"}};
  std::string err;
  auto args = slurm::sbatch_args(r, slurm::job_files("/s/c"), "/w", &err);
  REQUIRE_MESSAGE(err.empty(), err);
  std::vector<std::string> want = {"--parsable", "--job-name=c",         "--output=/s/c/output.txt", "--open-mode=truncate",
                                   "--chdir=/w", "--nodes=2",            "--ntasks-per-node=4",      "--gpus-per-node=h100:4",
                                   "/s/c/job.sh"};
  CHECK(args == want);
}

TEST_CASE("the batch script: srun with the container flags runs the command; the environment is captured first, on the node") {
  ScratchDir dir("referee-slurm-srun-");
  // A stand-in for srun: records its arguments, then runs what follows its options.
  fs::path bin = dir.path / "bin";
  fs::create_directories(bin);
  {
    std::ofstream f(bin / "srun");
    f << "#!/bin/sh\nprintf '%s\\n' \"srun $*\" >>" << slurm::shell_quote((dir.path / "srun.calls").string()) << "\n"
      << "while [ $# -gt 0 ]; do case \"$1\" in --*) shift ;; *) break ;; esac; done\nexec \"$@\"\n";
  }
  // A stand-in for the referee binary: prints an environment.
  {
    std::ofstream f(bin / "referee");
    f << "#!/bin/sh\necho \"args $*\" >&2\nprintf '{\"hostname\": \"node7\", \"host\": {\"cpu_logical\": 96}}\\n'\n";
  }
  fs::permissions(bin / "srun", fs::perms::owner_all);
  fs::permissions(bin / "referee", fs::perms::owner_all);
  RunRequest r;
  r.id = "cont";
  r.command = {"sh", "-c", "echo ran in \"$(basename \"$PWD\")\"; exit 4"};
  r.workdir = dir.path.string();
  r.log_path = (dir.path / "cont-0.log").string();
  r.options = {{"container_image", "nvcr.io#nvidia/pytorch:24.09-py3"}, {"container_mounts", "/d:/d"}};
  auto files = slurm::job_files(dir.path.string());
  slurm::NodeCapture cap{(bin / "referee").string(), "/specs/my spec.yaml", slurm::node_env_file(r, dir.path.string())};
  CHECK(cap.env_file == (dir.path / "cont-0.node-env.json").string());
  std::string err;
  std::string script = slurm::batch_script(r, files, &err, &cap);
  REQUIRE_MESSAGE(err.empty(), err);
  {
    std::ofstream(files.script) << script;
  }
  std::string path = bin.string() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  auto res = slurm::run_command({"env", "PATH=" + path, "sh", files.script}, "", 20s);
  REQUIRE(res.started);
  CHECK(res.exit_code == 4);
  CHECK(res.out == "ran in " + dir.path.filename().string() + "\n");
  CHECK(slurp(files.exit_code) == "4\n");
  // The capture ran first, as one task on one node, in the container; then the command on every task.
  CHECK(slurp(dir.path / "srun.calls") ==
        "srun --nodes=1 --ntasks=1 --container-image=nvcr.io#nvidia/pytorch:24.09-py3 --container-mounts=/d:/d " +
            (bin / "referee").string() + " system env --json --spec /specs/my spec.yaml\n"
            "srun --kill-on-bad-exit=1 --container-image=nvcr.io#nvidia/pytorch:24.09-py3 --container-mounts=/d:/d "
            "sh -c echo ran in \"$(basename \"$PWD\")\"; exit 4\n");
  CHECK(slurp(cap.env_file).find("\"node7\"") != std::string::npos);
  CHECK_FALSE(fs::exists(cap.env_file + ".err"));
  CHECK_FALSE(fs::exists(cap.env_file + ".tmp"));

  // A binary the node cannot run: the reason is kept, no JSON is left, the command still runs.
  fs::remove(cap.env_file);
  cap.referee_binary = "/nonexistent/referee";
  r.options.clear();  // no launcher: the script runs both itself
  script = slurm::batch_script(r, files, &err, &cap);
  REQUIRE_MESSAGE(err.empty(), err);
  CHECK(script.find("srun --") == std::string::npos);
  CHECK(script.find("'srun'") == std::string::npos);
  {
    std::ofstream(files.script) << script;
  }
  res = slurm::run_command({"sh", files.script}, "", 20s);
  CHECK(res.exit_code == 4);
  CHECK_FALSE(fs::exists(cap.env_file));
  CHECK_FALSE(fs::exists(cap.env_file + ".tmp"));
  std::string why = slurp(cap.env_file + ".err");
  CHECK_MESSAGE(why.find("/nonexistent/referee") != std::string::npos, why);
  CHECK_MESSAGE(why.find("the environment capture ended with exit 127 on ") != std::string::npos, why);

  // A malformed container option is the launch error.
  r.options = {{"container_image", "x"}, {"launcher", "none"}};
  err.clear();
  CHECK(slurm::batch_script(r, files, &err).empty());
  CHECK(err.find("run cont: launcher: none") != std::string::npos);
}

TEST_CASE("a job of several runs: the container starts once, each run is a step of its own with its hook, its output and exit status") {
  ScratchDir dir("referee-slurm-group-");
  fs::path bin = dir.path / "bin";
  fs::create_directories(bin);
  {
    // A stand-in for srun: records its arguments, then runs what follows its options.
    std::ofstream f(bin / "srun");
    f << "#!/bin/sh\nprintf '%s\\n' \"srun $*\" >>" << slurm::shell_quote((dir.path / "srun.calls").string()) << "\n"
      << "while [ $# -gt 0 ]; do case \"$1\" in --*) shift ;; *) break ;; esac; done\nexec \"$@\"\n";
  }
  fs::permissions(bin / "srun", fs::perms::owner_all);
  std::vector<RunRequest> reqs;
  std::vector<slurm::JobFiles> files;
  for (int i = 0; i < 3; ++i) {
    RunRequest r;
    r.id = "g-" + std::to_string(i);
    r.benchmark = "test";
    r.run_index = i;
    r.seed = 40 + i;
    r.command = {"sh", "-c", "echo run $RUN; exit $CODE"};
    r.env = {{"RUN", std::to_string(i)}, {"CODE", i == 1 ? "3" : "0"}};
    r.workdir = dir.path.string();
    r.log_path = (dir.path / (r.id + ".log")).string();
    r.timeout = 90s;
    r.cache_clear = {"sh", "-c", "echo clearing"};
    r.options = {{"container_image", "nvcr.io#nvidia/pytorch:24.09-py3"}, {"container_name", "referee_g"}};
    fs::create_directories(dir.path / r.id);
    files.push_back(slurm::job_files((dir.path / r.id).string()));
    reqs.push_back(r);
  }
  // The last run is stopped before its turn: its cancel file exists.
  std::ofstream(files[2].cancel).close();
  std::string err;
  std::string script = slurm::group_script(reqs, files, &err);
  REQUIRE_MESSAGE(err.empty(), err);
  fs::path job = dir.path / "job.sh";
  std::ofstream(job) << script;
  std::string path = bin.string() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  auto res = slurm::run_command({"env", "PATH=" + path, "sh", job.string()}, "", 20s);
  REQUIRE(res.started);
  CHECK_MESSAGE(res.exit_code == 0, res.err);
  // The container once on each node, then per run: the hook on each node (outside the container), the run's step.
  const std::string c = "--container-image=nvcr.io#nvidia/pytorch:24.09-py3 --container-name=referee_g";
  CHECK(slurp(dir.path / "srun.calls") ==
        "srun --ntasks-per-node=1 --kill-on-bad-exit=1 " + c + " true\n"
        "srun --ntasks-per-node=1 --kill-on-bad-exit=1 --job-name=g-0 sh -c echo clearing\n"
        "srun --kill-on-bad-exit=1 --job-name=g-0 --time=2 " + c + " sh -c echo run $RUN; exit $CODE\n"
        "srun --ntasks-per-node=1 --kill-on-bad-exit=1 --job-name=g-1 sh -c echo clearing\n"
        "srun --kill-on-bad-exit=1 --job-name=g-1 --time=2 " + c + " sh -c echo run $RUN; exit $CODE\n");
  // Each run's output and exit status in its own files; the cache_clear event after the hook's output.
  for (int i = 0; i < 2; ++i) {
    std::string out = slurp(files[i].output);
    CHECK_MESSAGE(out.rfind("clearing\n:::MLLOG {\"namespace\": \"\", \"time_ms\": ", 0) == 0, out);
    CHECK(out.find("\"key\": \"cache_clear\", \"value\": true") != std::string::npos);
    CHECK(out.find("run " + std::to_string(i) + "\n") != std::string::npos);
    CHECK(fs::exists(files[i].started));
  }
  CHECK(slurp(files[0].exit_code) == "0\n");
  CHECK(slurp(files[1].exit_code) == "3\n");  // a failing run does not stop the next
  CHECK(slurp(files[2].exit_code) == "143\n");
  CHECK_FALSE(fs::exists(files[2].started));
  CHECK(slurp(files[2].output) == "referee: cancelled before it started\n");

  // A hook that fails: the run's command never starts, exit 125, and the next run still goes.
  fs::remove(dir.path / "srun.calls");
  fs::remove(files[2].cancel);
  reqs[0].cache_clear = {"sh", "-c", "echo no permission >&2; exit 1"};
  reqs[0].options.clear();
  reqs[1].options.clear();
  reqs[2].options.clear();
  reqs[2].log_is_file = true;  // its workload writes its own log: the event goes there
  script = slurm::group_script(reqs, files, &err);
  REQUIRE_MESSAGE(err.empty(), err);
  std::ofstream(job, std::ios::trunc) << script;
  res = slurm::run_command({"env", "PATH=" + path, "sh", job.string()}, "", 20s);
  CHECK(slurp(files[0].exit_code) == "125\n");
  std::string out0 = slurp(files[0].output);
  CHECK(out0.find("referee: the cache_clear hook ended with exit 1; the run's command was not started") != std::string::npos);
  CHECK(out0.find("run 0") == std::string::npos);
  CHECK(out0.find("cache_clear\"") == std::string::npos);
  CHECK(slurp(files[2].exit_code) == "0\n");
  CHECK(slurp(reqs[2].log_path).find("\"key\": \"cache_clear\"") != std::string::npos);
  CHECK(slurp(files[2].output).find("cache_clear\"") == std::string::npos);
  CHECK(slurp(dir.path / "srun.calls").find("--container") == std::string::npos);

  // A run without a command, or files that do not match, are errors.
  reqs[1].command.clear();
  err.clear();
  CHECK(slurm::group_script(reqs, files, &err).empty());
  CHECK(err.find("run g-1 has no command") != std::string::npos);
  files.pop_back();
  err.clear();
  CHECK(slurm::group_script(reqs, files, &err).empty());
  CHECK_FALSE(err.empty());
}

TEST_CASE("runs_per_job on the cluster: one job, the runs in turn, one stopped alone (its step), one before its turn") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-group-run-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::vector<RunRequest> reqs;
  std::vector<LineSink> sinks;
  // (`&&`: the shell may outlive its sleep by a moment when the step is stopped.)
  const std::vector<std::string> cmds = {"echo first; sleep 4; echo first done",
                                         "echo second; sleep 60 && touch second.marker",
                                         "echo third; sleep 1; echo third done",
                                         "touch fourth.marker; echo fourth"};
  for (size_t i = 0; i < cmds.size(); ++i) {
    auto r = request(unique_id("grp-" + std::to_string(i)), {"sh", "-c", cmds[i]}, dir);
    r.run_index = static_cast<int>(i);
    r.options = {{"runs_per_job", "4"}};
    r.cache_clear = {"sh", "-c", "echo clearing"};
    reqs.push_back(r);
    sinks.push_back(c.sink());
  }
  CHECK(backend.runs_per_launch(reqs[0]) == 4);
  std::string err;
  auto hs = backend.launch_group(reqs, sinks, &err);
  REQUIRE_MESSAGE(hs.size() == 4, err);
  for (auto& h : hs) CHECK(h->job_id() == hs[0]->job_id());  // one job
  // The last run is stopped before its turn comes.
  hs[3]->cancel("not wanted");
  // While the first runs, the second waits for its turn.
  auto t0 = Clock::now();
  while (!c.has(reqs[0].id, "first") && Clock::now() - t0 < 60s) std::this_thread::sleep_for(50ms);
  REQUIRE(c.has(reqs[0].id, "first"));
  // (The handle hears of the job's state at its next look: a moment.)
  RunStatus waiting = hs[1]->poll();
  for (auto until = Clock::now() + 10s; Clock::now() < until && waiting.detail.find("waiting in job") == std::string::npos;
       std::this_thread::sleep_for(50ms))
    waiting = hs[1]->poll();
  CHECK(waiting.state == RunState::Pending);
  CHECK_MESSAGE(waiting.detail.find("waiting in job " + hs[0]->job_id() + " for the runs before it (" + reqs[0].id + ")") !=
                    std::string::npos,
                waiting.detail);
  auto s0 = hs[0]->wait(60s);
  CHECK_MESSAGE(s0.state == RunState::Succeeded, s0.detail);
  // The second runs: stopped alone, its step sent scancel; the third still runs after it.
  while (!c.has(reqs[1].id, "second") && Clock::now() - t0 < 60s) std::this_thread::sleep_for(50ms);
  REQUIRE(c.has(reqs[1].id, "second"));
  CHECK(hs[1]->poll().state == RunState::Running);
  hs[1]->cancel("stopped by the test");
  auto s1 = hs[1]->wait(60s);
  CHECK(s1.state == RunState::Cancelled);
  CHECK_MESSAGE(s1.detail.find("stopped by the test (scancel " + hs[0]->job_id() + ".") != std::string::npos, s1.detail);
  auto s2 = hs[2]->wait(60s);
  CHECK_MESSAGE(s2.state == RunState::Succeeded, s2.detail);
  CHECK(c.has(reqs[2].id, "third done"));
  auto s3 = hs[3]->wait(60s);
  CHECK(s3.state == RunState::Cancelled);
  CHECK_MESSAGE(s3.detail.find("before its turn came in job " + hs[0]->job_id()) != std::string::npos, s3.detail);
  CHECK_FALSE(fs::exists(dir.path / "fourth.marker"));
  CHECK_FALSE(fs::exists(dir.path / "second.marker"));
  // Each run that ran cleared the cache first, and its output says so as the rules want it.
  for (int i = 0; i < 3; ++i) {
    auto lines = c.of(reqs[i].id);
    REQUIRE(lines.size() >= 2);
    CHECK(lines[0] == "clearing");
    CHECK(lines[1].find("\"key\": \"cache_clear\", \"value\": true") != std::string::npos);
  }
}

TEST_CASE("the environment captured on a node: read back whole, used for the run, or the host's with the reason") {
  ScratchDir dir("referee-node-env-");
  Environment node;
  node.captured_at = "2026-01-01T00:00:00Z";
  node.hostname = "gpu-node-17";
  node.kernel = "6.1";
  node.libc = "glibc 2.36";
  node.os = "Ubuntu 22.04";
  node.cpu_model = "AMD EPYC";
  node.cpu_logical = 256;
  node.cpu_sockets = 2;
  node.cpu_cores_per_socket = 64;
  node.cpu_mhz = 2450.5;
  node.memory_kb = 2113929216LL;
  node.python = "python3";
  node.python_version = "3.10.12";
  node.python_packages = {{"torch", "2.5.0a0"}};
  node.torch_cuda = "12.6";
  node.nvidia_smi = true;
  node.driver_version = "560.35";
  node.cuda_version = "12.6";
  GpuInfo g;
  g.index = "0";
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_mib = 81559;
  g.driver_version = "560.35";
  node.gpus = {g, g};
  node.container = "enroot";
  node.container_image = "nvcr.io#nvidia/pytorch:24.09-py3";
  node.container_evidence = "SLURM_CONTAINER_IMAGE";
  node.git_commit = "abc";
  node.git_dirty = true;
  Environment back;
  std::string err;
  REQUIRE_MESSAGE(environment_from_json(node.to_json(), &back, &err), err);
  CHECK(back.to_json() == node.to_json());
  CHECK_FALSE(environment_from_json("[1, 2]", &back, &err));
  CHECK(err.find("referee system env --json") != std::string::npos);

  Environment host;
  host.hostname = "login1";
  std::string log = (dir.path / "bert-0.log").string();
  std::string note;
  CHECK(run_environment(log, host, &note).hostname == "login1");
  CHECK(note.empty());
  { std::ofstream(node_environment_file(log) + ".err") << "sh: 1: /shared/referee: not found\n"; }
  CHECK(run_environment(log, host, &note).hostname == "login1");
  CHECK(note.find("/shared/referee: not found") != std::string::npos);
  CHECK(note.find("submitting host's (login1)") != std::string::npos);
  { std::ofstream(node_environment_file(log)) << node.to_json(); }
  CHECK(node_environment_file(log) == (dir.path / "bert-0.node-env.json").string());
  Environment used = run_environment(log, host, &note);
  CHECK(note.empty());
  CHECK(used.hostname == "gpu-node-17");
  // A system description from it is the node's: its processors, memory, GPUs.
  SystemDescription sys;
  REQUIRE(describe_system("", "n", &sys, &err, &used));
  CHECK(sys.fields["host_processor_model_name"] == "AMD EPYC");
  CHECK(sys.fields["host_processor_vcpu_count"] == "256");
  CHECK(sys.fields["host_processor_core_count"] == "64");
  CHECK(sys.fields["host_processors_per_node"] == "2");
  CHECK(sys.fields["host_memory_capacity"] == "2016 GB");
  CHECK(sys.fields["accelerators_per_node"] == "2");
  CHECK(sys.fields["accelerator_model_name"] == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("nodes and gpus_per_node reach the system description; the file's values win, with a warning") {
  std::string err;
  Spec spec;
  spec.backend = "slurm";
  spec.backend_options = {{"nodes", "4"}, {"gpus_per_node", "h100:8"}};
  SystemDescription sys;
  Environment none;
  none.cpu_logical = 1;
  REQUIRE(describe_system("", "n", &sys, &err, &none));
  CHECK(sys.fields["number_of_nodes"] == "1");
  auto w = apply_allocation(spec, &sys);
  CHECK(sys.fields["number_of_nodes"] == "4");
  CHECK(sys.origin["number_of_nodes"] == "spec");
  CHECK(sys.fields["accelerators_per_node"] == "8");
  REQUIRE(w.size() == 1);  // eight GPUs, but no model detected
  CHECK(w[0].find("accelerator_model_name") != std::string::npos);

  ScratchDir dir("referee-alloc-");
  { std::ofstream(dir.path / "sys.yaml") << "number_of_nodes: 2\naccelerators_per_node: 8\naccelerator_model_name: H100\n"; }
  REQUIRE(describe_system((dir.path / "sys.yaml").string(), "n", &sys, &err, &none));
  w = apply_allocation(spec, &sys);
  CHECK(sys.fields["number_of_nodes"] == "2");
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("says number_of_nodes 2 but the spec's backend_options.nodes asks for 4") != std::string::npos);

  spec.backend_options = {{"nodes", "2-4"}, {"gpus_per_node", "2"}};
  REQUIRE(describe_system("", "n", &sys, &err, &none));
  w = apply_allocation(spec, &sys);
  CHECK(sys.fields["number_of_nodes"] == "1");
  CHECK(sys.fields["accelerators_per_node"] == "2");
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("nodes is 2-4, not a count") != std::string::npos);

  spec.backend = "exec";  // only the slurm backend's options say what a run gets
  REQUIRE(describe_system("", "n", &sys, &err, &none));
  CHECK(apply_allocation(spec, &sys).empty());
  CHECK(sys.fields["number_of_nodes"] == "1");
}

TEST_CASE("runs at once on slurm: one by default, the spec's parallel otherwise") {
  Spec spec;
  spec.benchmark = "minilm";
  spec.ruleset = "mini-1.0.0";
  spec.backend = "slurm";
  spec.command = {"true"};
  std::string err;
  REQUIRE(finalize_spec(&spec, 3, &err));
  CHECK(spec.parallel == 1);
  CHECK(spec.effective["parallel"] == std::pair<std::string, std::string>{"1", "default"});
  Spec three = spec;
  three.parallel = 3;
  REQUIRE(finalize_spec(&three, 3, &err));
  CHECK(three.parallel == 3);
  Spec exec = spec;
  exec.backend = "exec";
  exec.parallel = 0;
  exec.effective.clear();
  REQUIRE(finalize_spec(&exec, 3, &err));
  // exec: one per core on a node without accelerators, one at a time on one with them (harness spec tests).
  CHECK(exec.parallel >= 1);
  CHECK(exec.effective["parallel"].second.rfind("default: ", 0) == 0);
}

// ------------------------------------------------------------ launcher, node capture, describe (the cluster)

TEST_CASE("two tasks on the node: srun launches the command once per task; a failing task fails the job") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-tasks-");
  SlurmBackend backend(fast_options());
  Collector c;
  std::string err;
  auto req = request(unique_id("tasks"), {"sh", "-c", "echo task $SLURM_PROCID of $SLURM_NTASKS step $SLURM_STEP_ID"}, dir);
  req.options = {{"nodes", "1"}, {"tasks_per_node", "2"}};
  auto h = backend.launch(req, c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  auto st = h->wait(120s);
  CHECK_MESSAGE(st.state == RunState::Succeeded, st.detail);
  auto lines = c.of(req.id);
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"task 0 of 2 step 0", "task 1 of 2 step 0"});

  auto bad = request(unique_id("taskfail"), {"sh", "-c", "if [ $SLURM_PROCID = 1 ]; then exit 5; fi; sleep 30"}, dir);
  bad.options = {{"tasks_per_node", "2"}};
  auto start = Clock::now();
  auto hb = backend.launch(bad, c.sink(), &err);
  REQUIRE_MESSAGE(hb, err);
  auto sb = hb->wait(120s);
  CHECK(sb.state == RunState::Failed);
  CHECK_MESSAGE(sb.exit_code != 0, sb.detail);
  CHECK(Clock::now() - start < 25s);  // --kill-on-bad-exit: the other task did not sleep on
}

TEST_CASE("each run's environment is captured on its node before the command, and a capture that fails says why") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-capture-");
  SlurmOptions so = fast_options();
  so.referee_binary = REFEREE_BINARY;
  SlurmBackend backend(so);
  Collector c;
  std::string err;
  for (const char* tasks : {"1", "2"}) {
    auto req = request(unique_id(std::string("capture") + tasks), {"sh", "-c", "echo trained"}, dir);
    req.options = {{"tasks_per_node", tasks}};
    auto h = backend.launch(req, c.sink(), &err);
    REQUIRE_MESSAGE(h, err);
    auto st = h->wait(120s);
    CHECK_MESSAGE(st.state == RunState::Succeeded, st.detail);
    CHECK(c.of(req.id) == std::vector<std::string>(std::stoi(tasks), "trained"));  // the capture prints nothing to the log
    std::string file = node_environment_file(req.log_path);
    REQUIRE_MESSAGE(fs::exists(file), tasks << " task(s): " << slurp(file + ".err"));
    Environment e;
    REQUIRE_MESSAGE(environment_from_json(slurp(file), &e, &err), err);
    // The job's node: the cluster's only node, by the name Slurm gives it.
    auto node = slurm::run_command({"sinfo", "--noheader", "--format=%n"}, cluster_conf(), 20s);
    CHECK(e.hostname == node.out.substr(0, node.out.find('\n')));
    CHECK(e.cpu_logical > 0);
  }
  // The binary is not on the node: the run still runs; the reason is kept.
  so.referee_binary = "/nonexistent/referee";
  SlurmBackend missing(so);
  auto req = request(unique_id("capturemissing"), {"sh", "-c", "echo trained"}, dir);
  auto h = missing.launch(req, c.sink(), &err);
  REQUIRE_MESSAGE(h, err);
  CHECK(h->wait(120s).state == RunState::Succeeded);
  std::string file = node_environment_file(req.log_path);
  CHECK_FALSE(fs::exists(file));
  std::string note;
  Environment host;
  host.hostname = "submit-host";
  CHECK(run_environment(req.log_path, host, &note).hostname == "submit-host");
  CHECK_MESSAGE(note.find("/nonexistent/referee") != std::string::npos, note);
  CHECK_MESSAGE(note.find("exit 127") != std::string::npos, note);
}

TEST_CASE("the system described from a compute node: a short job with the spec's options; the host's with a warning when it cannot") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-describe-");
  Spec spec;
  spec.benchmark = "minilm";
  spec.backend = "slurm";
  spec.workdir = dir.path.string();
  Environment host;
  host.hostname = "submit-host";
  NodeDescription nd;
  std::string err;
  REQUIRE_MESSAGE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err), err);
  CHECK_MESSAGE(nd.from_node, nd.warning);
  CHECK(nd.warning.empty());
  auto node = slurm::run_command({"sinfo", "--noheader", "--format=%n"}, cluster_conf(), 20s);
  CHECK(nd.node == node.out.substr(0, node.out.find('\n')));
  CHECK(nd.env.hostname == nd.node);
  CHECK(fs::exists(fs::path(nd.work_dir) / "describe.node-env.json"));

  // The spec's partition reaches the describe job: a partition the cluster lacks is sbatch's refusal, then the host.
  spec.backend_options = {{"partition", "no-such-partition"}};
  REQUIRE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err));
  CHECK_FALSE(nd.from_node);
  CHECK(nd.env.hostname == "submit-host");
  CHECK_MESSAGE(nd.warning.find("could not be submitted") != std::string::npos, nd.warning);
  CHECK_MESSAGE(nd.warning.find("nvalid partition") != std::string::npos, nd.warning);
  CHECK_MESSAGE(nd.warning.find("from the submitting host submit-host") != std::string::npos, nd.warning);

  // The binary cannot run on the node.
  spec.backend_options.clear();
  REQUIRE(describe_from_node(spec, "", "/nonexistent/referee", dir.path.string(), fast_options(), host, &nd, &err));
  CHECK_FALSE(nd.from_node);
  CHECK_MESSAGE(nd.warning.find("/nonexistent/referee") != std::string::npos, nd.warning);
  CHECK_MESSAGE(nd.warning.find("backend_options.describe: host") != std::string::npos, nd.warning);
  CHECK_MESSAGE(nd.warning.find("exit 127") != std::string::npos, nd.warning);

  // A job that does not start in time is cancelled, and the warning says so.
  // Named for this test process: other test runs may share the cluster.
  const std::string held = unique_id("describe-held");
  spec.backend_options = {{"extra_args", "--begin=now+1hour --job-name=" + held}, {"describe_timeout", "3"}};
  auto start = Clock::now();
  REQUIRE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err));
  CHECK(Clock::now() - start < 30s);
  CHECK_FALSE(nd.from_node);
  CHECK_MESSAGE(nd.warning.find("did not end within 3 s") != std::string::npos, nd.warning);
  auto q = slurm::run_command({"squeue", "--noheader", "--name=" + held, "--states=PENDING,RUNNING"}, cluster_conf(), 20s);
  CHECK_MESSAGE(q.out.empty(), q.out);

  // Ctrl-C while it waits: the job is cancelled at once.
  spec.backend_options = {{"extra_args", "--begin=now+1hour --job-name=" + held}};
  std::atomic<bool> interrupt{false};
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(1500ms);
    interrupt = true;
  });
  start = Clock::now();
  REQUIRE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err, &interrupt));
  ctrl_c.join();
  CHECK(Clock::now() - start < 20s);
  CHECK(nd.interrupted);
  CHECK_FALSE(nd.from_node);
  q = slurm::run_command({"squeue", "--noheader", "--name=" + held, "--states=PENDING,RUNNING"}, cluster_conf(), 20s);
  CHECK_MESSAGE(q.out.empty(), q.out);

  // describe: host skips the job; bad values are errors.
  spec.backend_options = {{"describe", "host"}};
  REQUIRE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err));
  CHECK_FALSE(nd.from_node);
  CHECK(nd.warning.empty());
  CHECK_FALSE(captures_on_node(spec));
  spec.backend_options = {{"describe", "login"}};
  CHECK_FALSE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err));
  CHECK(err.find("describe is node or host") != std::string::npos);
  spec.backend_options = {{"describe_timeout", "soon"}};
  CHECK_FALSE(describe_from_node(spec, "", REFEREE_BINARY, dir.path.string(), fast_options(), host, &nd, &err));
  CHECK(err.find("describe_timeout is a number of seconds") != std::string::npos);
}

TEST_CASE("referee run on slurm: Ctrl-C while the describe job waits in the queue cancels it, and nothing runs") {
  if (!have_cluster()) return;
  ScratchDir dir("referee-slurm-describe-int-");
  {
    std::ofstream(dir.path / "spec.yaml")
        << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: slurm\ncommand: [\"true\"]\n"
        << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/torch_cpu_system.yaml\n"
        << "backend_options: {extra_args: \"--begin=now+1hour --job-name=" << unique_id("describe-int") << "\"}\n";
  }
  std::string out;
  int rc = referee::testing::run_shell_capture(
      "(SLURM_CONF='" + cluster_conf() + "' " + REFEREE_BINARY + " run '" + (dir.path / "spec.yaml").string() +
          "' --out '" + (dir.path / "out").string() + "' 2>&1 & pid=$!; sleep 3; kill -INT $pid; wait $pid)",
      &out);
  CHECK_MESSAGE(rc == 2, out);
  CHECK_MESSAGE(out.find("interrupted by Ctrl-C (SIGINT) while the system was being described on a compute node (the "
                         "describe job was cancelled)") != std::string::npos,
                out);
  // With --progress=json, stdout still ends with a summary line that says so.
  std::string json;
  rc = referee::testing::run_shell_capture(
      "(SLURM_CONF='" + cluster_conf() + "' " + REFEREE_BINARY + " run '" + (dir.path / "spec.yaml").string() +
          "' --out '" + (dir.path / "out").string() + "' --progress=json 2>/dev/null & pid=$!; sleep 3; kill -TERM $pid; wait $pid)",
      &json);
  CHECK_MESSAGE(rc == 2, json);
  CHECK_MESSAGE(json.find("{\"type\":\"summary\",\"interrupted\":true,\"signal\":\"SIGTERM\"") != std::string::npos, json);
  CHECK_MESSAGE(json.find("\"describe_job\":\"cancelled\"") != std::string::npos, json);
  auto q = slurm::run_command({"squeue", "--noheader", "--name=" + unique_id("describe-int"), "--states=all"},
                              cluster_conf(), 20s);
  CHECK_MESSAGE(q.out.find("PENDING") == std::string::npos, q.out);
  CHECK_MESSAGE(q.out.find("RUNNING") == std::string::npos, q.out);
  CHECK_FALSE(fs::exists(dir.path / "out" / "referee"));  // no package started
}

TEST_CASE("the harness on slurm runs one job at a time by default, and the spec's parallel at once when it says") {
  if (!have_cluster()) return;
  std::string error;
  referee::rules::RuleSource src;
  auto rs = referee::rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
  REQUIRE_MESSAGE(rs, error);
  std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
  SystemDescription sys;
  REQUIRE(describe_system(example + "/systems/cpu_2x_example.json", "", &sys, &error));
  auto most_at_once = [&](int parallel) {
    ScratchDir dir("referee-slurm-parallel-");
    fs::path spans = dir.path / "spans";
    Spec spec;
    spec.benchmark = "minilm";
    spec.ruleset = "mini-1.0.0";
    spec.backend = "slurm";
    spec.runs = 3;
    spec.parallel = parallel;
    spec.system = "cpu_2x_example";
    // Each job waits (up to 20 s) until another has started, so that a slow
    // scheduler cannot make jobs that may overlap run one after the other;
    // when they may not overlap, it waits 1 s.
    std::string f = slurm::shell_quote(spans.string());
    std::string waits = parallel > 1 ? "100" : "5";
    spec.command = {"sh", "-c", "echo start $(date +%s%N) >>" + f + "; i=0; while [ $i -lt " + waits + " ] && [ $(grep -c start " +
                                    f + ") -lt 2 ]; do sleep 0.2; i=$((i+1)); done; sleep 0.5; echo end $(date +%s%N) >>" + f};
    REQUIRE_MESSAGE(finalize_spec(&spec, 3, &error), error);
    SlurmOptions so = fast_options();
    SlurmBackend backend(so);
    RunnerOptions opt;
    opt.out_dir = (dir.path / "out").string();
    opt.system_json = sys.to_json();
    HarnessReport report;
    REQUIRE_MESSAGE(run_harness(spec, backend, *rs, opt, &report, &error), error);
    for (const auto& r : report.runs) CHECK_MESSAGE(r.status.state == RunState::Succeeded, r.status.detail);
    std::vector<std::pair<long long, int>> events;
    std::istringstream in(slurp(spans));
    std::string what;
    long long t;
    while (in >> what >> t) events.emplace_back(t, what == "start" ? 1 : -1);
    std::sort(events.begin(), events.end());
    CHECK(events.size() == 6);
    int now = 0, most = 0;
    for (auto& [when, d] : events) most = std::max(most, now += d);
    return most;
  };
  CHECK(most_at_once(0) == 1);  // the default on slurm
  CHECK(most_at_once(3) >= 2);
}

}  // TEST_SUITE
