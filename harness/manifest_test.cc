// The run manifest, resume and grow, and which runs enter the package: with
// the builtin backend (each mini run takes well under a second).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <thread>

#include "base/digest.h"
#include "harness/backends/builtin.h"
#include "harness/backends/exec.h"
#include "harness/manifest.h"
#include "harness/runner.h"
#include "harness/environment/system_describe.h"
#include "harness/workloads/workloads.h"
#include "mllog/reader.h"
#include "mllog/writer.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::harness;

namespace {

fs::path temp_dir() {
  std::random_device rd;
  fs::path p = fs::temp_directory_path() / ("referee-manifest-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o << text;
}

struct Setup {
  std::unique_ptr<rules::RuleSet> rs;
  rules::RoundFacts facts;
  SystemDescription sys;
  fs::path dir;
  Setup() {
    std::string error;
    rules::RuleSource src;
    rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rs, error);
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    REQUIRE_MESSAGE(describe_system(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/systems/cpu_2x_example.json",
                                    "", &sys, &error),
                    error);
    dir = temp_dir();
  }
  ~Setup() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Spec spec(int runs, const std::string& org = "ResumeOrg") const {
    Spec s;
    s.benchmark = "minilm";
    s.ruleset = "mini-1.0.0";
    s.backend = "builtin";
    s.org = org;
    s.system = "cpu_2x_example";
    s.parallel = 1;
    s.runs = runs;
    std::string error;
    REQUIRE_MESSAGE(finalize_spec(&s, runs, &error), error);
    return s;
  }
  RunnerOptions options(bool replace = false) const {
    RunnerOptions o;
    o.out_dir = (dir / "out").string();
    o.system_json = sys.to_json();
    o.replace = replace;
    return o;
  }
  fs::path results(const std::string& org = "ResumeOrg") const {
    return dir / "out" / org / "results" / "cpu_2x_example" / "minilm";
  }
  fs::path manifest() const { return dir / "out" / ".referee-runs" / "minilm" / "manifest.json"; }
  Manifest load() const {
    Manifest m;
    bool existed = false;
    std::string error;
    REQUIRE_MESSAGE(load_manifest(manifest().string(), "minilm", &m, &existed, &error), error);
    REQUIRE(existed);
    return m;
  }
  bool run(const Spec& s, const RunnerOptions& o, HarnessReport* report, std::string* error) const {
    BuiltinBackend backend;
    return run_harness(s, backend, *rs, o, report, error);
  }
};

int count_in(const Manifest& m) {
  int n = 0;
  for (const auto& r : m.runs) n += r.package == "in" ? 1 : 0;
  return n;
}

// A minilm log, as the builtin workload writes it; max_epochs 1 stops it before the target.
std::string workload_log(long long seed, int max_epochs) {
  std::string text;
  mllog::Options o;
  o.mode = mllog::WriteMode::kSync;
  o.callback = [&](std::string_view line) {
    text += line;
    text += '\n';
  };
  o.root_dir = REFEREE_SOURCE_DIR;
  WorkloadConfig cfg;
  cfg.benchmark = "minilm";
  cfg.seed = seed;
  cfg.max_epochs = max_epochs;
  std::atomic<bool> cancel{false};
  std::string error;
  {
    mllog::Logger log(o);
    REQUIRE_MESSAGE(run_workload(cfg, log, cancel, &error), error);
    log.flush();
  }
  return text;
}

rules::FileVerdict verdict_of(const rules::RuleSet& rs, const std::string& text) {
  mllog::LogReader reader;
  mllog::ParsedLog log;
  reader.parse(text, &log);
  return rules::check_log(rs, log);
}

}  // namespace

TEST_SUITE("manifest") {
  TEST_CASE("the manifest is JSON that reads back as written; a missing one is empty") {
    Setup s;
    std::string path = (s.dir / "m.json").string(), error;
    Manifest m;
    bool existed = true;
    REQUIRE(load_manifest(path, "minilm", &m, &existed, &error));
    CHECK_FALSE(existed);
    CHECK(m.runs.empty());
    ManifestRun r;
    r.run = "minilm-0";
    r.invocation = "20261201T000000Z-1-0";
    r.org = "Org";
    r.system = "sys\xc3\xa9";  // UTF-8 passes through
    r.slot = 0;
    r.seed = 42;
    r.backend = "slurm";
    r.job_id = "1234";
    r.state = "failed";
    r.exit_code = 1;
    r.wall_seconds = 1.5;
    r.has_time_to_train = true;
    r.time_to_train_ms = 60000;
    r.run_stop_status = "aborted";
    r.verdict = "not compliant";
    r.package = "in";
    r.result_file = "Org/results/sys/minilm/result_0.txt";
    r.reason = "did not converge \"quoted\"";
    r.log = "x/minilm-0.log";
    m.runs.push_back(r);
    ManifestRun found;
    found.run = "minilm-found-1";
    found.org = "Org";
    found.system = "sys";
    found.state = "found";
    found.has_seed = false;
    m.runs.push_back(found);
    REQUIRE_MESSAGE(save_manifest(path, m, &error), error);
    CHECK_FALSE(m.updated.empty());
    std::string text = slurp(path);
    CHECK(text.find("\"format\": \"referee-run-manifest\"") != std::string::npos);
    CHECK(text.find("\"time_to_train_minutes\": 1.0") != std::string::npos);
    Manifest back;
    REQUIRE_MESSAGE(load_manifest(path, "minilm", &back, &existed, &error), error);
    CHECK(existed);
    REQUIRE(back.runs.size() == 2);
    const ManifestRun& b = back.runs[0];
    CHECK(b.system == r.system);
    CHECK(b.seed == 42);
    CHECK(b.job_id == "1234");
    CHECK(b.exit_code == 1);
    CHECK(b.has_time_to_train);
    CHECK(b.time_to_train_ms == 60000);
    CHECK(b.reason == r.reason);
    CHECK(b.package == "in");
    CHECK(b.result_file == r.result_file);
    CHECK_FALSE(back.runs[1].has_seed);
    CHECK(back.runs[1].exit_code == -1);
    CHECK_FALSE(back.runs[1].has_time_to_train);
    // No temporary file is left beside it.
    for (const auto& e : fs::directory_iterator(s.dir)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  }

  TEST_CASE("a corrupt, foreign, newer or mistyped manifest is refused with the file and what to do") {
    Setup s;
    std::string path = (s.dir / "m.json").string();
    struct Case {
      std::string text, want;
    };
    std::vector<Case> cases = {
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"runs\": [", "is not valid JSON"},
        {"", "is not valid JSON"},
        {"[1, 2]", "is not a JSON object"},
        {"{\"version\": 1}", "is not a referee run manifest"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 2, \"benchmark\": \"minilm\", \"runs\": []}",
         "format version 2, written by a newer referee; this referee reads version 1"},
        {"{\"format\": \"referee-run-manifest\", \"version\": \"1\", \"benchmark\": \"minilm\", \"runs\": []}",
         "'version' must be an integer"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"benchmark\": \"miniclf\", \"runs\": []}",
         "records benchmark miniclf, not minilm"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"benchmark\": \"minilm\", \"runs\": {}}",
         "'runs' must be a list"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"benchmark\": \"minilm\", \"runs\": [{\"run\": \"a\", "
         "\"org\": \"o\", \"system\": \"s\", \"state\": \"failed\", \"package\": \"in\", \"seed\": \"7\"}]}",
         "runs[0]: 'seed' must be an integer"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"benchmark\": \"minilm\", \"runs\": [{\"run\": \"a\", "
         "\"org\": \"o\", \"system\": \"s\", \"state\": \"failed\", \"package\": \"maybe\"}]}",
         "'package' must be in, entering, out or removed"},
        {"{\"format\": \"referee-run-manifest\", \"version\": 1, \"benchmark\": \"minilm\", \"runs\": [{\"run\": \"a\", "
         "\"org\": \"o\", \"system\": \"s\", \"state\": \"failed\", \"package\": \"in\"}]}",
         "must name its result_file"},
    };
    for (const auto& c : cases) {
      spit(path, c.text);
      Manifest m;
      bool existed = false;
      std::string error;
      CHECK_FALSE(load_manifest(path, "minilm", &m, &existed, &error));
      CHECK_MESSAGE(error.find(c.want) != std::string::npos, c.text << " -> " << error);
      CHECK_MESSAGE(error.find(path) != std::string::npos, error);
      CHECK_MESSAGE(error.find("hint:") != std::string::npos, error);
    }
  }

  TEST_CASE("log facts read from a file in pieces are those of the whole text: every log of rounds 3.0 and 3.1, and odd ones") {
    if (!testing::have_reference_data()) return;
    auto same = [](const std::string& text, const std::string& label) {
      testing::TempDir t;
      std::string p = (t.path / "log.txt").string();
      std::ofstream(p, std::ios::binary) << text;
      bool readable = false;
      LogFacts a = read_log_facts_file(p, &readable), b = read_log_facts(text);
      INFO(label);
      CHECK(readable);
      CHECK(a.mllog_lines == b.mllog_lines);
      CHECK(a.has_run_start == b.has_run_start);
      CHECK(a.has_run_stop == b.has_run_stop);
      CHECK(a.has_times == b.has_times);
      CHECK(a.time_to_train_ms == b.time_to_train_ms);
      CHECK(a.run_stop_status == b.run_stop_status);
      CHECK(a.has_seed == b.has_seed);
      CHECK(a.seed == b.seed);
    };
    size_t n = 0;
    for (const char* round : {"training_results_v3.0", "training_results_v3.1"})
      for (const auto& e : fs::recursive_directory_iterator(testing::reference_dir() + "/mlperf/" + round)) {
        std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name.rfind("result_", 0) != 0 || (++n % (testing::kSanitized ? 16 : 2)) != 0) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        same(text, e.path().string());
        // Old-Mac line ends, CRLF, and chatter glued before the token.
        std::string cr = text, crlf;
        for (char& c : cr)
          if (c == '\n') c = '\r';
        if (n % 20 == 0) same(cr, e.path().string() + " with CR line ends");
        for (char c : text) {
          if (c == '\n') crlf += "\r\n";
          else crlf += c;
        }
        if (n % 20 == 0) same(crlf, e.path().string() + " with CRLF line ends");
      }
    CHECK(n > 600);
    bool readable = true;
    read_log_facts_file("/nonexistent/log.txt", &readable);
    CHECK_FALSE(readable);
  }

  TEST_CASE("time to train and run_stop status are read as the result summarizer pairs run_start and run_stop") {
    auto line = [](const std::string& key, double t, const std::string& value, const std::string& md) {
      return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(static_cast<long long>(t)) +
             ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value +
             ", \"metadata\": {" + md + "}}\n";
    };
    // Two run_starts before run_stop: the later one counts; a second run_stop after both does not.
    std::string text = line("seed", 1000, "17", "") + line("run_start", 2000, "null", "") +
                       line("run_start", 5000, "null", "") + line("run_stop", 65000, "null", "\"status\": \"aborted\"") +
                       line("run_stop", 99000, "null", "\"status\": \"success\"");
    LogFacts f = read_log_facts(text);
    CHECK(f.has_run_start);
    CHECK(f.has_run_stop);
    REQUIRE(f.has_times);
    CHECK(f.time_to_train_ms == 60000);
    CHECK(f.run_stop_status == "aborted");
    CHECK(f.has_seed);
    CHECK(f.seed == 17);
    LogFacts none = read_log_facts(line("run_start", 1, "null", ""));
    CHECK(none.has_run_start);
    CHECK_FALSE(none.has_run_stop);
    CHECK_FALSE(none.has_times);
    CHECK(none.run_stop_status.empty());
  }

  TEST_CASE("admission: a run that did not converge is a result whatever its exit status; rule breakers and stopped runs are not") {
    Setup s;
    std::string converged = workload_log(5, 0), not_converged = workload_log(5, 1);
    rules::FileVerdict vc = verdict_of(*s.rs, converged), vn = verdict_of(*s.rs, not_converged);
    REQUIRE(vc.compliant);
    REQUIRE_FALSE(vn.compliant);
    const std::string metric = rules::quality_target(*s.rs, "minilm").metric;
    CHECK(metric == "eval_accuracy");
    CHECK(only_target_not_reached(vn, metric));
    CHECK_FALSE(only_target_not_reached(vc, metric));
    LogFacts fc = read_log_facts(converged), fn = read_log_facts(not_converged);
    CHECK(fc.run_stop_status == "success");
    CHECK(fn.run_stop_status == "aborted");
    CHECK(fn.has_times);

    AdmissionInput in;
    in.target_metric = metric;
    in.allowed_failures = 1;
    // Converged, exit 0.
    in.status = {RunState::Succeeded, 0, ""};
    in.verdict = &vc;
    in.log = fc;
    Admission a = admit(in);
    CHECK(a.enters);
    CHECK(a.converged);
    CHECK(a.reason == "compliant, converged");
    // Converged, but the process exited 3 after run_stop: the log decides.
    in.status = {RunState::Failed, 3, "exit 3"};
    a = admit(in);
    CHECK(a.enters);
    CHECK(a.reason.find("after its log was complete it exited with status 3, which does not decide") !=
          std::string::npos);
    // Converged, then killed by a signal on teardown: said in words, not "its failed (...)".
    in.status = {RunState::Failed, -1, "killed by Segmentation fault"};
    a = admit(in);
    CHECK(a.enters);
    CHECK(a.reason == "compliant, converged; after its log was complete it was killed by Segmentation fault, which "
                      "does not decide: its log is a complete run");
    // Did not converge, exit 1 (what the builtin workload and most programs do): a result.
    in.verdict = &vn;
    in.log = fn;
    in.status = {RunState::Failed, 1, "did not reach the quality target"};
    a = admit(in);
    CHECK(a.enters);
    CHECK_FALSE(a.converged);
    CHECK(a.reason.find("did not converge (run_stop status \"aborted\"") == 0);
    CHECK(a.reason.find("at most 1 such run(s)") != std::string::npos);
    // Within the limit it is accepted; beyond, the reason says the limit is exceeded.
    CHECK(nonconverged_reason("aborted", metric, 1, 1).find("accepted under olympic scoring") != std::string::npos);
    std::string over = nonconverged_reason("aborted", metric, 1, 3);
    CHECK(over.find("accepted under olympic scoring") == std::string::npos);
    CHECK(over.find("the package holds 3 runs that did not converge where the consortium's package checker accepts "
                    "at most 1") != std::string::npos);
    CHECK(over.find("the package fails its check") != std::string::npos);
    // ... and with exit 0 just the same.
    in.status = {RunState::Succeeded, 0, ""};
    CHECK(admit(in).enters);
    // Not reaching the target but saying "success" breaks the rules.
    LogFacts lying = fn;
    lying.run_stop_status = "success";
    in.log = lying;
    a = admit(in);
    CHECK_FALSE(a.enters);
    CHECK(a.reason.find("its run_stop says \"success\"") == 0);
    // Another rule broken too: not a non-converged result.
    std::string bad = not_converged;
    size_t at = bad.find("\"opt_adam_beta_1\", \"value\": 0.9,");
    REQUIRE(at != std::string::npos);
    bad.replace(at, 32, "\"opt_adam_beta_1\", \"value\": 0.5,");
    rules::FileVerdict vb = verdict_of(*s.rs, bad);
    CHECK_FALSE(only_target_not_reached(vb, metric));
    in.verdict = &vb;
    in.log = read_log_facts(bad);
    a = admit(in);
    CHECK_FALSE(a.enters);
    CHECK(a.reason.find("its log is not compliant: ") == 0);
    CHECK(a.reason.find("opt_adam_beta_1") != std::string::npos);
    // No run_stop: the run did not end, whatever its exit status.
    std::string half = converged.substr(0, converged.find("\"key\": \"run_stop\""));
    half = half.substr(0, half.rfind('\n') + 1);
    rules::FileVerdict vh = verdict_of(*s.rs, half);
    in.verdict = &vh;
    in.log = read_log_facts(half);
    in.status = {RunState::Succeeded, 0, ""};
    a = admit(in);
    CHECK_FALSE(a.enters);
    CHECK(a.reason.find("its log has no run_stop") == 0);
    // Stopped by the harness: never a result, even with a complete log.
    in.verdict = &vc;
    in.log = fc;
    in.status = {RunState::Cancelled, -1, "interrupted (Ctrl-C)"};
    a = admit(in);
    CHECK_FALSE(a.enters);
    CHECK(a.reason.find("cancelled") == 0);
    in.status = {RunState::TimedOut, -1, "timeout of 5 s"};
    CHECK_FALSE(admit(in).enters);
    in.status = {RunState::Succeeded, 0, ""};
    in.stopped_by_checker = true;
    in.stop_reason = "line 9: a rule";
    a = admit(in);
    CHECK_FALSE(a.enters);
    CHECK(a.reason == "stopped by the live checker: line 9: a rule");
  }

  TEST_CASE("seeds: fresh ones never used by any earlier run; pinned ones as listed, skipping those in the package") {
    std::set<long long> used = {100, 102, 105}, in_package = {100}, taken;
    long long seed = 0;
    REQUIRE(choose_seed({}, 100, 1, 5, used, in_package, &taken, &seed));
    CHECK(seed == 101);
    REQUIRE(choose_seed({}, 100, 0, 5, used, in_package, &taken, &seed));
    CHECK(seed == 110);  // 100 and 105 were used
    REQUIRE(choose_seed({}, 100, 2, 5, used, in_package, &taken, &seed));
    CHECK(seed == 107);
    taken.clear();
    std::vector<long long> pinned = {7, 8, 9};
    REQUIRE(choose_seed(pinned, 0, 0, 3, {7, 8}, {7}, &taken, &seed));
    CHECK(seed == 8);  // a pinned seed is reused by a retry; only the package's own are skipped
    REQUIRE(choose_seed(pinned, 0, 1, 3, {7, 8}, {7}, &taken, &seed));
    CHECK(seed == 9);
    CHECK_FALSE(choose_seed(pinned, 0, 2, 3, {7, 8}, {7}, &taken, &seed));
  }

  TEST_CASE("resume: a package of 2 runs grows to 5, keeping its results byte for byte, with fresh seeds; then there is nothing to run") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 2);
    std::map<std::string, std::string> first;
    std::set<long long> first_seeds;
    for (const auto& r : report.runs) {
      REQUIRE_MESSAGE(!r.result_file.empty(), r.left_out);
      first[fs::path(r.result_file).filename().string()] = slurp(r.result_file);
      first_seeds.insert(r.seed);
    }
    CHECK(first.count("result_0.txt"));
    CHECK(first.count("result_1.txt"));
    Manifest m = s.load();
    REQUIRE(m.runs.size() == 2);
    for (const auto& r : m.runs) {
      CHECK(r.package == "in");
      CHECK(r.state == "succeeded");
      CHECK(r.backend == "builtin");
      CHECK(r.verdict == "compliant");
      CHECK(r.converged);
      CHECK(r.has_time_to_train);
      CHECK(r.time_to_train_ms > 0);
      CHECK(r.run_stop_status == "success");
      CHECK(r.exit_code == 0);
      CHECK(r.result_sha256 == base::sha256_hex(slurp(s.dir / "out" / r.result_file)));
      CHECK(fs::exists(s.dir / "out" / r.log));
      CHECK(fs::path(r.result_file).is_relative());
    }

    // Grow to the 5 the rules require: 3 more runs, the first 2 untouched.
    HarnessReport grown;
    REQUIRE_MESSAGE(s.run(s.spec(5), s.options(), &grown, &error), error);
    REQUIRE(grown.runs.size() == 3);
    CHECK(grown.kept.size() == 2);
    CHECK(grown.removed.empty());
    std::set<int> slots;
    for (const auto& r : grown.runs) {
      REQUIRE_MESSAGE(!r.result_file.empty(), r.left_out);
      CHECK_FALSE(first_seeds.count(r.seed));
      slots.insert(r.index);
    }
    CHECK(slots == std::set<int>{2, 3, 4});
    for (const auto& [name, text] : first) CHECK(slurp(s.results() / name) == text);
    CHECK(result_files_in(s.results().string()).size() == 5);
    m = s.load();
    CHECK(m.runs.size() == 5);
    CHECK(count_in(m) == 5);
    std::set<long long> all;
    for (const auto& r : m.runs) all.insert(r.seed);
    CHECK(all.size() == 5);
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*s.rs, s.facts, (s.dir / "out" / "ResumeOrg").string(), {}, &pr, &error));
    CHECK(pr.pass);

    // Complete: nothing runs, nothing changes.
    std::string before = slurp(s.manifest());
    HarnessReport again;
    REQUIRE_MESSAGE(s.run(s.spec(5), s.options(), &again, &error), error);
    CHECK(again.runs.empty());
    CHECK(again.kept.size() == 5);
    CHECK(slurp(s.manifest()) == before);
  }

  TEST_CASE("--replace removes the package's results, says which, and runs them all again with seeds never used") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(3), s.options(), &report, &error), error);
    std::set<long long> old_seeds;
    for (const auto& r : report.runs) old_seeds.insert(r.seed);
    HarnessReport replaced;
    REQUIRE_MESSAGE(s.run(s.spec(3), s.options(true), &replaced, &error), error);
    REQUIRE(replaced.removed.size() == 3);
    CHECK(replaced.removed[0] == (s.results() / "result_0.txt").string());
    CHECK(replaced.kept.empty());
    REQUIRE(replaced.runs.size() == 3);
    for (const auto& r : replaced.runs) {
      CHECK_FALSE(old_seeds.count(r.seed));
      CHECK_FALSE(r.result_file.empty());
    }
    Manifest m = s.load();
    REQUIRE(m.runs.size() == 6);
    int removed = 0;
    for (const auto& r : m.runs)
      if (r.package == "removed") {
        ++removed;
        CHECK(r.reason.find("removed by --replace (was result_") == 0);
      }
    CHECK(removed == 3);
    CHECK(count_in(m) == 3);
  }

  TEST_CASE("pinned seeds: the spec's list is used in order across invocations") {
    Setup s;
    Spec spec = s.spec(2);
    spec.seeds = {11, 22, 33, 44, 55};
    spec.effective["seeds"] = {"[11, 22, 33, 44, 55]", "spec"};
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(spec, s.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 2);
    CHECK(report.runs[0].seed == 11);
    CHECK(report.runs[1].seed == 22);
    spec.runs = 5;
    REQUIRE_MESSAGE(s.run(spec, s.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 3);
    CHECK(report.runs[0].seed == 33);
    CHECK(report.runs[1].seed == 44);
    CHECK(report.runs[2].seed == 55);
    // Six runs from five pinned seeds: refused before anything runs.
    spec.runs = 6;
    CHECK_FALSE(s.run(spec, s.options(), &report, &error));
    CHECK(error.find("the spec pins 5 seeds and the package holds runs with 5 of them") == 0);
    CHECK(s.load().runs.size() == 5);
  }

  TEST_CASE("a run that did not converge enters the package, exit status 1 and all, and is scored as the consortium scores it") {
    Setup s;
    Spec spec = s.spec(1);
    spec.backend_options["max_epochs"] = "1";  // stops before the target: run_stop status aborted
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(spec, s.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 1);
    const RunReport& r = report.runs[0];
    CHECK(r.status.state == RunState::Failed);
    CHECK(r.status.exit_code == 1);
    CHECK_FALSE(r.verdict.compliant);
    REQUIRE_MESSAGE(!r.result_file.empty(), r.left_out);
    CHECK_FALSE(r.converged);
    CHECK(r.package_reason.find("did not converge") == 0);
    Manifest m = s.load();
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].package == "in");
    CHECK_FALSE(m.runs[0].converged);
    CHECK(m.runs[0].run_stop_status == "aborted");
    CHECK(m.runs[0].verdict == "not compliant");
    CHECK(m.runs[0].first_error.find("ATLEAST_ONE_CHECK") != std::string::npos);
    CHECK(m.runs[0].has_time_to_train);

    // Four more that converge: the package is what the consortium accepts
    // (one failing file under olympic scoring), and the score drops that run.
    Spec grow = s.spec(5);
    REQUIRE_MESSAGE(s.run(grow, s.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 4);
    for (const auto& x : report.runs) CHECK(x.converged);
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*s.rs, s.facts, (s.dir / "out" / "ResumeOrg").string(), {}, &pr, &error));
    REQUIRE(pr.benchmarks.size() == 1);
    CHECK(pr.benchmarks[0].result_count == 5);
    for (const auto& e : pr.benchmarks[0].errors) MESSAGE(e.rule << ": " << e.message);
    CHECK(pr.pass);
    auto scores = rules::score_package(pr, s.facts, rules::ScaleMode::Published);
    REQUIRE(scores.rows.size() == 1);
    REQUIRE(scores.rows[0].scores.size() == 1);
    const auto& bs = scores.rows[0].scores[0];
    CHECK(bs.has_score);
    CHECK(bs.noncompliant == 1);
    // The consortium's own package checker agrees (reference data).
    if (referee::testing::have_reference_data()) {
      std::string out;
      int rc = referee::testing::run_shell_capture("/usr/bin/python3 '" + std::string(REFEREE_SOURCE_DIR) +
                                                       "/tests/oracle/ruleset_package_checker.py' '" +
                                                       (s.dir / "out" / "ResumeOrg").string() + "'",
                                                   &out);
      CHECK_MESSAGE(rc == 0, out);
      CHECK_MESSAGE(out.find("1 file does not comply, accepting this under olympic scoring") != std::string::npos, out);
    }
  }

  TEST_CASE("two runs that did not converge both enter: the package then fails, as the consortium's checker fails it") {
    Setup s;
    Spec spec = s.spec(2);
    spec.backend_options["max_epochs"] = "1";
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(spec, s.options(), &report, &error), error);
    for (const auto& r : report.runs) {
      CHECK_FALSE(r.result_file.empty());
      // Two where one is accepted: no run says "accepted", each says the limit is exceeded.
      CHECK(r.package_reason.find("accepted under olympic scoring") == std::string::npos);
      CHECK(r.package_reason.find("the package holds 2 runs that did not converge") != std::string::npos);
    }
    for (const auto& m : s.load().runs) {
      CHECK(m.reason.find("accepted under olympic scoring") == std::string::npos);
      CHECK(m.reason.find("the package holds 2 runs that did not converge") != std::string::npos);
    }
    REQUIRE_MESSAGE(s.run(s.spec(5), s.options(), &report, &error), error);
    CHECK(report.runs.size() == 3);  // the harness does not run more to hide them
    rules::PackageReport pr;
    REQUIRE(rules::check_package(*s.rs, s.facts, (s.dir / "out" / "ResumeOrg").string(), {}, &pr, &error));
    CHECK_FALSE(pr.pass);
    if (referee::testing::have_reference_data()) {
      std::string out;
      int rc = referee::testing::run_shell_capture("/usr/bin/python3 '" + std::string(REFEREE_SOURCE_DIR) +
                                                       "/tests/oracle/ruleset_package_checker.py' '" +
                                                       (s.dir / "out" / "ResumeOrg").string() + "'",
                                                   &out);
      CHECK_MESSAGE(rc == 1, out);
      CHECK_MESSAGE(out.find("2 files do not comply, directory cannot be accepted") != std::string::npos, out);
    }
  }

  TEST_CASE("resume after a crash: the record and the package folder are brought into agreement") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(4), s.options(), &report, &error), error);
    Manifest m = s.load();
    REQUIRE(count_in(m) == 4);
    // Crash after "entering" was recorded, before the file was renamed into place (run 0),
    // and after the file was written, before "in" was recorded (run 1).
    std::string text0 = slurp(s.dir / "out" / m.runs[0].result_file);
    fs::remove(s.dir / "out" / m.runs[0].result_file);
    m.runs[0].package = "entering";
    m.runs[1].package = "entering";
    // Crash after run 2 ended, before its end was recorded: its record says running, its kept log is whole.
    std::string name2 = fs::path(m.runs[2].result_file).filename().string();
    m.runs[2].package = "out";
    m.runs[2].state = "running";
    m.runs[2].result_file.clear();
    fs::rename(s.results() / name2, s.dir / "aside.txt");
    // A person removed run 3's result file; another file appears that nothing records.
    std::string name3 = fs::path(m.runs[3].result_file).filename().string();
    fs::remove(s.results() / name3);
    fs::copy_file(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt",
                  s.results() / "result_9.txt");
    REQUIRE(save_manifest(s.manifest().string(), m, &error));

    HarnessReport resumed;
    REQUIRE_MESSAGE(s.run(s.spec(5), s.options(), &resumed, &error), error);
    CHECK_FALSE(resumed.resumed.empty());
    Manifest after = s.load();
    const ManifestRun& r0 = after.runs[0];
    CHECK(r0.package == "in");
    CHECK(r0.note.find("written from its kept log on resume") != std::string::npos);
    CHECK(slurp(s.dir / "out" / r0.result_file) == text0);
    CHECK(after.runs[1].package == "in");
    CHECK(after.runs[1].note.find("recorded on resume") != std::string::npos);
    // Adopted from its kept log (its result file had been moved aside): checked and admitted as at its end.
    CHECK(after.runs[2].state == "ended");
    CHECK(after.runs[2].package == "in");
    CHECK(after.runs[2].reason.rfind("adopted: it ended while no harness watched it", 0) == 0);
    CHECK(after.runs[3].package == "removed");
    CHECK(after.runs[3].reason.find("removed outside referee") != std::string::npos);
    bool found = false;
    for (const auto& r : after.runs)
      if (r.state == "found") {
        found = true;
        CHECK(r.package == "in");
        CHECK(fs::path(r.result_file).filename() == "result_9.txt");
        CHECK(r.has_seed);
        CHECK(r.verdict == "compliant");
      }
    CHECK(found);
    // In the package: runs 0, 1, 2 (adopted), the found file, and a new run in the free number.
    CHECK(resumed.runs.size() == 1);
    std::set<std::string> in_record, on_disk;
    for (const auto& r : after.runs)
      if (r.package == "in") in_record.insert(fs::path(r.result_file).filename().string());
    for (const auto& [n, name] : result_files_in(s.results().string())) on_disk.insert(name);
    CHECK(in_record == on_disk);
    CHECK(on_disk.size() == 5);
    // Each in-package record's digest is its file's.
    for (const auto& r : after.runs)
      if (r.package == "in") CHECK(r.result_sha256 == base::sha256_hex(slurp(s.dir / "out" / r.result_file)));
  }

  TEST_CASE("resume: a run the record says is running and whose process group is alive is named and never started twice") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &report, &error), error);
    // A harness killed while its exec run goes on: the run's own process group.
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::setpgid(0, 0);
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    Manifest m = s.load();
    ManifestRun r = m.runs[1];
    r.run = "minilm-7";
    r.slot = 7;
    r.seed = 424242;
    r.invocation = "crashed";
    r.backend = "exec";
    r.job_id = std::to_string(pid);
    r.state = "running";
    r.package = "out";
    r.result_file.clear();
    r.log = ".referee-runs/minilm/crashed/minilm-7.log";  // never written: the harness died first
    fs::path output = s.dir / "out" / ".referee-runs" / "minilm" / "crashed" / "minilm-7.out";
    fs::create_directories(output.parent_path());
    spit(output, "epoch 1\n");
    r.output = relative_to((s.dir / "out").string(), output.string());
    m.runs.push_back(r);
    REQUIRE(save_manifest(s.manifest().string(), m, &error));
    std::string before = slurp(s.manifest());
    auto invocations = [&] {
      int n = 0;
      for (const auto& e : fs::directory_iterator(s.manifest().parent_path())) n += e.is_directory() ? 1 : 0;
      return n;
    };
    int dirs = invocations();

    HarnessReport again;
    CHECK_FALSE(s.run(s.spec(3), s.options(), &again, &error));
    CHECK_MESSAGE(error.find("minilm-7 (process group " + std::to_string(pid) + ", invocation crashed) is still running: "
                             "wait for it, or kill -- -" + std::to_string(pid) + ", then run again") == 0,
                  error);
    CHECK(error.find("nothing was started") != std::string::npos);
    CHECK(slurp(s.manifest()) == before);
    CHECK(invocations() == dirs);
    CHECK(result_files_in(s.results().string()).size() == 2);
    // --replace does not get past it either: nothing is removed.
    CHECK_FALSE(s.run(s.spec(3), s.options(true), &again, &error));
    CHECK(result_files_in(s.results().string()).size() == 2);

    // Through the command line: exit 2, the same words.
    fs::path spec = s.dir / "minilm.yaml";
    spit(spec, "benchmark: minilm\nruleset: mini-1.0.0\nbackend: builtin\norg: ResumeOrg\n"
               "system_description: " + std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/cpu_system.yaml\n");
    std::string out;
    int rc = referee::testing::run_referee("run '" + spec.string() + "' --out '" + (s.dir / "out").string() + "' --runs 3", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK(out.find("minilm-7 (process group " + std::to_string(pid) + ", invocation crashed) is still running") !=
          std::string::npos);
    CHECK(slurp(s.manifest()) == before);

    // Once it has ended: lost, and the record points at what it left, not at a log that never was.
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE_MESSAGE(s.run(s.spec(3), s.options(), &again, &error), error);
    Manifest after = s.load();
    const ManifestRun* lost = nullptr;
    for (const auto& x : after.runs)
      if (x.run == "minilm-7") lost = &x;
    REQUIRE(lost);
    CHECK(lost->state == "lost");
    CHECK(lost->package == "out");
    CHECK(lost->log.empty());
    CHECK(lost->output == r.output);
    CHECK_MESSAGE(lost->reason == "lost: the harness ended before the run did (process group " + std::to_string(pid) +
                                      " has ended); its output is in " + r.output + " (not checked, not in the package)",
                  lost->reason);
    bool said = false;
    for (const auto& msg : again.resumed) said = said || msg == "minilm-7 (crashed): " + lost->reason;
    CHECK(said);
    CHECK(again.runs.size() == 1);
    CHECK(again.runs[0].seed != 424242);
  }

  TEST_CASE("resume: a record whose result file lies outside the package folder (edited by hand) is refused, nothing written") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &report, &error), error);
    Manifest m = s.load();
    m.runs[1].package = "entering";
    m.runs[1].result_file = (s.dir / "elsewhere" / ".." / "outside_result.txt").string();
    REQUIRE(save_manifest(s.manifest().string(), m, &error));
    std::string before = slurp(s.manifest());
    HarnessReport again;
    CHECK_FALSE(s.run(s.spec(3), s.options(), &again, &error));
    CHECK_MESSAGE(error.find("runs[1] (" + m.runs[1].run + ") names the result file") != std::string::npos, error);
    CHECK(error.find("which is not a result_<n>.txt of the package folder") != std::string::npos);
    CHECK_FALSE(fs::exists(s.dir / "outside_result.txt"));
    CHECK(slurp(s.manifest()) == before);
  }

  TEST_CASE("resume: a run of a Slurm job of several is adopted with its own exit status, not the job's state") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(1), s.options(), &report, &error), error);
    Setup other;
    HarnessReport o;
    REQUIRE_MESSAGE(other.run(other.spec(3), other.options(), &o, &error), error);
    Manifest m = s.load();
    auto crashed = [&](const std::string& name, int slot, const std::string& log, const std::string& exit_code) {
      ManifestRun r = m.runs[0];
      r.run = name;
      r.slot = slot;
      r.seed = read_log_facts(log).seed;
      r.invocation = "crashed";
      r.backend = "slurm";
      r.job_id = "4242";
      r.state = "running";
      r.package = "out";
      r.result_file.clear();
      r.result_sha256.clear();
      r.log.clear();
      r.output = ".referee-runs/minilm/crashed/.slurm/" + name + ".abc/output.txt";
      fs::create_directories((s.dir / "out" / r.output).parent_path());
      spit(s.dir / "out" / r.output, log);
      if (!exit_code.empty()) spit((s.dir / "out" / r.output).parent_path() / "exit_code", exit_code);
      m.runs.push_back(r);
    };
    crashed("minilm-5", 5, slurp(other.results() / "result_1.txt"), "3\n");  // its log complete, then exit 3
    crashed("minilm-6", 6, slurp(other.results() / "result_2.txt"), "0\n");
    REQUIRE(save_manifest(s.manifest().string(), m, &error));
    // The job (both runs') ended COMPLETED: its batch script ends with exit 0 whatever its runs did.
    LivenessProbe probe = [](const ManifestRun&) {
      Liveness l;
      l.words = "Slurm job 4242 ended COMPLETED";
      l.final_state = "COMPLETED";
      return l;
    };
    Reconciled rec;
    REQUIRE_MESSAGE(reconcile_package(&m, s.manifest().string(), (s.dir / "out").string(), s.results().string(),
                                      "ResumeOrg", "cpu_2x_example", *s.rs, false, &rec, &error, probe),
                    error);
    const ManifestRun *failed = nullptr, *ok = nullptr;
    for (const auto& x : m.runs) {
      if (x.run == "minilm-5") failed = &x;
      if (x.run == "minilm-6") ok = &x;
    }
    REQUIRE(failed);
    REQUIRE(ok);
    CHECK(failed->state == "failed");
    CHECK(failed->exit_code == 3);
    CHECK(failed->detail == "exit 3");
    CHECK(failed->package == "in");  // a complete, compliant log enters whatever its exit status (admit)
    CHECK(ok->state == "succeeded");
    CHECK(ok->exit_code == 0);
  }

  TEST_CASE("resume: a run recorded without its job id (the harness ended as it started) is found by its token, never run twice") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(1), s.options(), &report, &error), error);
    Manifest m = s.load();
    ManifestRun r = m.runs[0];
    r.run = "minilm-3";
    r.slot = 3;
    r.seed = 313131;
    r.invocation = "crashed";
    r.backend = "exec";
    r.job_id.clear();
    r.state = "running";
    r.package = "out";
    r.result_file.clear();
    r.result_sha256.clear();
    r.token = make_run_token("minilm-3");
    r.log.clear();
    r.output.clear();
    m.runs.push_back(r);
    REQUIRE(save_manifest(s.manifest().string(), m, &error));
    // Its process still runs, carrying the token: the resume is refused, nothing changes.
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      std::string var = std::string(kRunTokenVar) + "=" + r.token;
      char* envp[] = {var.data(), nullptr};
      char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
      ::execve("/bin/sleep", argv, envp);
      ::_exit(127);
    }
    for (int i = 0; i < 100 && processes_with_token(r.token).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::string before = slurp(s.manifest());
    // Said before anything else (a Slurm describe job, the preflight): setup_refusal names it too.
    {
      BuiltinBackend backend;
      std::string refusal = setup_refusal(s.spec(2), backend, *s.rs, (s.dir / "out").string(), false);
      CHECK_MESSAGE(refusal.find("minilm-3 (its processes pid " + std::to_string(pid) + " sleep, found by its token") == 0,
                    refusal);
    }
    HarnessReport again;
    CHECK_FALSE(s.run(s.spec(2), s.options(), &again, &error));
    CHECK_MESSAGE(error.find("minilm-3 (its processes pid " + std::to_string(pid) + " sleep, found by its token") !=
                      std::string::npos,
                  error);
    CHECK(error.find("is still running") != std::string::npos);
    CHECK(slurp(s.manifest()) == before);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // Gone: recorded lost (no log or output of it), and the package grows with a new seed.
    HarnessReport third;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &third, &error), error);
    Manifest after = s.load();
    bool found = false;
    for (const auto& x : after.runs)
      if (x.run == "minilm-3" && x.invocation == "crashed") {
        found = true;
        CHECK(x.state == "lost");
      }
    CHECK(found);
    REQUIRE(third.runs.size() == 1);
    CHECK(third.runs[0].seed != 313131);
  }

  TEST_CASE("resume: a run that ended while no harness watched it is adopted when its log is complete, lost when cut short") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &report, &error), error);
    // The log a run writes (the workload's own {log} file), from a package of its own: another seed.
    Setup other;
    HarnessReport o;
    REQUIRE_MESSAGE(other.run(other.spec(3), other.options(), &o, &error), error);
    const std::string log = slurp(other.results() / "result_2.txt");
    REQUIRE(log.find("run_stop") != std::string::npos);
    const long long seed = read_log_facts(log).seed;
    // A process group that has ended.
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    auto crashed = [&](const std::string& name, int slot, long long seed, const std::string& text) {
      Manifest m = s.load();
      ManifestRun r = m.runs[1];
      r.run = name;
      r.slot = slot;
      r.seed = seed;
      r.invocation = "crashed";
      r.backend = "exec";
      r.job_id = std::to_string(pid);
      r.state = "running";
      r.package = "out";
      r.result_file.clear();
      r.result_sha256.clear();
      r.log = ".referee-runs/minilm/crashed/" + name + ".log";
      r.output.clear();
      fs::create_directories(s.dir / "out" / ".referee-runs" / "minilm" / "crashed");
      spit(s.dir / "out" / r.log, text);
      m.runs.push_back(r);
      REQUIRE(save_manifest(s.manifest().string(), m, &error));
      return r;
    };
    ManifestRun done = crashed("minilm-7", 7, seed, log);
    std::string cut = log.substr(0, log.find("run_stop"));
    cut = cut.substr(0, cut.rfind('\n') + 1);
    ManifestRun short_run = crashed("minilm-8", 8, 525252, cut);
    // Two runs that printed the same bytes each get a file of their own; an output that is a FIFO
    // (it would block) or a folder is no log: lost, never a hang or a crash.
    ManifestRun twin = crashed("minilm-9", 9, seed + 1, log);
    ManifestRun fifo = crashed("minilm-10", 10, 626262, "");
    fs::remove(s.dir / "out" / fifo.log);
    REQUIRE(::mkfifo((s.dir / "out" / fifo.log).c_str(), 0644) == 0);
    ManifestRun folder = crashed("minilm-11", 11, 727272, "");
    fs::remove(s.dir / "out" / folder.log);
    fs::create_directories(s.dir / "out" / folder.log);

    HarnessReport again;
    REQUIRE_MESSAGE(s.run(s.spec(3), s.options(), &again, &error), error);
    Manifest after = s.load();
    const ManifestRun *adopted = nullptr, *lost = nullptr;
    for (const auto& x : after.runs) {
      if (x.run == "minilm-7") adopted = &x;
      if (x.run == "minilm-8") lost = &x;
    }
    REQUIRE(adopted);
    REQUIRE(lost);
    for (const auto& x : after.runs) {
      if (x.run == "minilm-9") {
        CHECK(x.package == "in");
        CHECK(x.result_file != adopted->result_file);
        CHECK(slurp(s.dir / "out" / x.result_file) == log);
      }
      if (x.run == "minilm-10" || x.run == "minilm-11") {
        CHECK(x.state == "lost");
        CHECK(x.package == "out");
      }
    }
    // Adopted: checked and admitted as any run, its file written, its seed kept; nothing new had to run.
    CHECK(adopted->state == "ended");  // its exit status was seen by nobody
    CHECK(adopted->package == "in");
    CHECK(adopted->verdict == "compliant");
    CHECK(adopted->seed == seed);
    CHECK(adopted->logged_seed == seed);
    CHECK_MESSAGE(adopted->reason.rfind("adopted: it ended while no harness watched it (process group " +
                                            std::to_string(pid) + " has ended), its log (" + done.log + ") complete; compliant",
                                        0) == 0,
                  adopted->reason);
    REQUIRE(!adopted->result_file.empty());
    CHECK(slurp(s.dir / "out" / adopted->result_file) == log);
    CHECK(adopted->result_sha256 == base::sha256_hex(log));
    CHECK(result_files_in(s.results().string()).size() == 4);
    CHECK(again.runs.empty());
    std::set<long long> seeds;
    for (const auto& x : after.runs)
      if (x.package == "in") CHECK_MESSAGE(seeds.insert(x.seed).second, x.seed);  // a seed never repeated
    // Cut short: lost, and why.
    CHECK(lost->state == "lost");
    CHECK(lost->package == "out");
    CHECK(lost->verdict == "incomplete");
    CHECK_MESSAGE(lost->reason.find("and its log (" + short_run.log + ") is cut short: it has no run_stop") != std::string::npos,
                  lost->reason);
    // Resumed again: nothing changes, nothing is adopted twice.
    std::string before = slurp(s.manifest());
    HarnessReport third;
    REQUIRE_MESSAGE(s.run(s.spec(3), s.options(), &third, &error), error);
    CHECK(third.runs.empty());
    CHECK(result_files_in(s.results().string()).size() == 4);
  }

  TEST_CASE("two packages in one --out share a benchmark's manifest without touching each other's results") {
    Setup s;
    HarnessReport a, b;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2, "OrgA"), s.options(), &a, &error), error);
    REQUIRE_MESSAGE(s.run(s.spec(2, "OrgB"), s.options(true), &b, &error), error);
    CHECK(b.removed.empty());  // --replace only touches OrgB's folder
    CHECK(result_files_in(s.results("OrgA").string()).size() == 2);
    CHECK(result_files_in(s.results("OrgB").string()).size() == 2);
    std::set<long long> seeds;
    for (const auto& r : s.load().runs) seeds.insert(r.seed);
    CHECK(seeds.size() == 4);
  }

  TEST_CASE("exec: the manifest records each run's process id as its job id, and a run that could not start") {
    Setup s;
    Spec spec = s.spec(2, "ExampleOrg");
    spec.backend = "exec";
    spec.command = {"/bin/sh", "-c",
                    "cat " + std::string(REFEREE_SOURCE_DIR) +
                        "/submissions/examples/ExampleOrg/results/cpu_2x_example/minilm/result_{run}.txt"};
    ExecBackend backend;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, s.options(), &report, &error), error);
    Manifest m = s.load();
    REQUIRE(m.runs.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      // The example logs carry their own seeds, not the ones given: said per run, and recorded.
      CHECK(m.runs[i].has_logged_seed);
      CHECK(m.runs[i].logged_seed != m.runs[i].seed);
      CHECK(report.runs[i].seed_note.find("its log says seed " + std::to_string(m.runs[i].logged_seed) +
                                          ", not the seed it was given (" + std::to_string(m.runs[i].seed) + ")") == 0);
      CHECK(m.runs[i].reason.find(report.runs[i].seed_note) != std::string::npos);
      CHECK(m.runs[i].backend == "exec");
      CHECK(m.runs[i].job_id == report.runs[i].job_id);
      CHECK(std::atol(m.runs[i].job_id.c_str()) > 0);
      CHECK(m.runs[i].package == "in");
    }
    // Another command on the same package: refused, nothing run (its results share one setup).
    spec.runs = 3;
    spec.command = {"/nonexistent/train"};
    CHECK_FALSE(run_harness(spec, backend, *s.rs, s.options(), &report, &error));
    CHECK_MESSAGE(error.find("the package already holds 2 result(s) of minilm made with another setup (nothing was run):\n"
                             "  command: was /bin/sh -c 'cat ") == 0, error);
    CHECK_MESSAGE(error.find(", now /nonexistent/train\n") != std::string::npos, error);
    CHECK(error.find("--replace") != std::string::npos);
    CHECK(s.load().runs.size() == 2);
    // In a package of its own, the run that could not start is recorded.
    Setup other;
    spec.runs = 1;
    REQUIRE_MESSAGE(run_harness(spec, backend, *other.rs, other.options(), &report, &error), error);
    m = other.load();
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].package == "out");
    CHECK(m.runs[0].reason.find("could not start: ") == 0);
    CHECK(m.runs[0].job_id.empty());
    CHECK(m.runs[0].state == "failed");
    CHECK(m.runs[0].verdict == "not started");
  }

  TEST_CASE("a package holds one setup: another command, batch size or system description is refused before any run") {
    Setup s;
    HarnessReport report;
    std::string error;
    REQUIRE_MESSAGE(s.run(s.spec(2), s.options(), &report, &error), error);
    REQUIRE(result_files_in(s.results().string()).size() == 2);
    const std::string manifest_before = slurp(s.manifest());
    // Another batch size for the builtin workload.
    Spec bigger = s.spec(3);
    bigger.batch_size = 128;
    CHECK_FALSE(s.run(bigger, s.options(), &report, &error));
    CHECK_MESSAGE(error.find("the package already holds 2 result(s) of minilm made with another setup (nothing was run):\n"
                             "  command: was builtin minilm, now builtin minilm batch_size=128\n") == 0, error);
    // Another cache clearing (here: one where there was none) is another setup too.
    {
      Setup e;
      ExecBackend backend;
      const std::string ex = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example";
      Spec plain = e.spec(2, "ExampleOrg");
      plain.backend = "exec";
      plain.command = {"/bin/cat", ex + "/minilm/result_{run}.txt"};
      REQUIRE_MESSAGE(run_harness(plain, backend, *e.rs, e.options(), &report, &error), error);
      Spec hooked = plain;
      hooked.runs = 3;
      hooked.cache_clear = {"/bin/true"};
      CHECK_FALSE(run_harness(hooked, backend, *e.rs, e.options(), &report, &error));
      CHECK_MESSAGE(error.find("  command: was /bin/cat " + ex + "/minilm/result_{run}.txt, now /bin/cat " + ex +
                               "/minilm/result_{run}.txt (cache_clear: /bin/true)") != std::string::npos,
                    error);
    }
    // Another system description: the fields that changed are named.
    RunnerOptions o = s.options();
    size_t at = o.system_json.find("\"referee builtin\"");
    REQUIRE(at != std::string::npos);
    o.system_json.replace(at, 17, "\"PyTorch 2.1\"");
    CHECK_FALSE(s.run(s.spec(3), o, &report, &error));
    CHECK_MESSAGE(error.find("  system description cpu_2x_example.json: framework was \"referee builtin\", now \"PyTorch 2.1\"") !=
                      std::string::npos, error);
    CHECK(slurp(s.manifest()) == manifest_before);  // nothing recorded, nothing run
    CHECK(result_files_in(s.results().string()).size() == 2);
    // --replace makes it explicit: the earlier results go, the package starts over with the new setup.
    o.replace = true;
    REQUIRE_MESSAGE(s.run(s.spec(3), o, &report, &error), error);
    CHECK(report.removed.size() == 2);
    CHECK(result_files_in(s.results().string()).size() == 3);
    // The same setup again resumes as before.
    REQUIRE_MESSAGE(s.run(s.spec(4), s.options(), &report, &error) == false, "the system description is the new one");
    o.replace = false;
    REQUIRE_MESSAGE(s.run(s.spec(4), o, &report, &error), error);
    CHECK(result_files_in(s.results().string()).size() == 4);
  }

  TEST_CASE("a log that states another organisation, benchmark or batch size is not admitted into the package") {
    Setup s;
    const std::string ex = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg/results/cpu_2x_example";
    ExecBackend backend;
    HarnessReport report;
    std::string error;
    // Another organisation's logs.
    Spec spec = s.spec(2, "OtherOrg");
    spec.backend = "exec";
    spec.command = {"/bin/sh", "-c", "cat " + ex + "/minilm/result_{run}.txt"};
    REQUIRE_MESSAGE(run_harness(spec, backend, *s.rs, s.options(), &report, &error), error);
    for (const auto& r : report.runs) {
      CHECK(r.result_file.empty());
      CHECK_MESSAGE(r.left_out.find("its log states submission_org \"ExampleOrg\", not \"OtherOrg\": the package holds the "
                                    "results of OtherOrg") == 0, r.left_out);
    }
    // The mini classifier's logs for the mini language model's package.
    Setup t;
    spec = t.spec(1, "ExampleOrg");
    spec.backend = "exec";
    spec.command = {"/bin/sh", "-c", "cat " + ex + "/miniclf/result_0.txt"};
    REQUIRE_MESSAGE(run_harness(spec, backend, *t.rs, t.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 1);
    CHECK_MESSAGE(report.runs[0].left_out.find("its log states submission_benchmark \"miniclf\", not \"minilm\"") == 0,
                  report.runs[0].left_out);
    // Run 1 logs another global batch size than run 0, which entered first.
    Setup u;
    spec = u.spec(2, "ExampleOrg");
    spec.backend = "exec";
    spec.parallel = 1;
    spec.command = {"/bin/sh", "-c", "if [ {run} = 1 ]; then sed 's/\"global_batch_size\", \"value\": 64/\"global_batch_size\", \"value\": 96/' " +
                                         ex + "/minilm/result_1.txt; else cat " + ex + "/minilm/result_{run}.txt; fi"};
    REQUIRE_MESSAGE(run_harness(spec, backend, *u.rs, u.options(), &report, &error), error);
    REQUIRE(report.runs.size() == 2);
    CHECK_FALSE(report.runs[0].result_file.empty());
    CHECK(report.runs[1].result_file.empty());
    CHECK_MESSAGE(report.runs[1].left_out.find("its global_batch_size is 96, and the package's other results (result_0.txt) ran "
                                               "with 64: the runs of a package share their hyperparameters") == 0,
                  report.runs[1].left_out);
    Manifest m = u.load();
    CHECK(m.runs[0].global_batch_size == "64");
    CHECK(m.runs[1].global_batch_size == "96");
  }

  TEST_CASE("seeds: a log that logs the seed it was given has no seed note") {
    LogFacts f;
    CHECK(seed_mismatch(7, f) == "");  // no seed line: nothing to compare
    f.has_seed = true;
    f.seed = 7;
    CHECK(seed_mismatch(7, f) == "");
    f.seed = 42;
    CHECK(seed_mismatch(7, f).find("its log says seed 42, not the seed it was given (7)") == 0);
  }

  TEST_CASE("a directory where the manifest should be is refused with its name, not a stream error") {
    Setup s;
    fs::create_directories(s.manifest());
    Manifest m;
    bool existed = false;
    std::string error;
    CHECK_FALSE(load_manifest(s.manifest().string(), "minilm", &m, &existed, &error));
    CHECK(error.find(s.manifest().string() + " is a directory") != std::string::npos);
    CHECK(error.find("hint: ") != std::string::npos);
  }

  TEST_CASE("referee run: grow, nothing to run, --replace, and a manifest it cannot read (exit 2)") {
    Setup s;
    fs::path spec = s.dir / "minilm.yaml";
    spit(spec, "benchmark: minilm\nruleset: mini-1.0.0\nbackend: builtin\norg: CliOrg\n"
               "system_description: " + std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/cpu_system.yaml\n");
    std::string out, base = "run '" + spec.string() + "' --out '" + (s.dir / "out").string() + "'";
    int rc = referee::testing::run_referee(base + " --runs 2", &out);
    CHECK_MESSAGE(rc == 1, out);  // two results where five are required: the package fails its check
    CHECK(out.find("run manifest: ") != std::string::npos);
    // Asked again for two: nothing to run, and the rules' five said.
    rc = referee::testing::run_referee(base + " --runs 2", &out);
    CHECK_MESSAGE(rc == 1, out);
    CHECK_MESSAGE(out.find("nothing to run: the package holds the 2 result(s) the spec asks for (runs: 2), but the rules "
                           "require 5 of this benchmark: its check fails until it holds them (--runs 5 to grow it)") !=
                      std::string::npos,
                  out);
    rc = referee::testing::run_referee(base, &out);
    CHECK_MESSAGE(rc == 0, out);
    CHECK(out.find("kept from earlier runs (2):") != std::string::npos);
    CHECK(out.find("ran 3 more to reach 5") != std::string::npos);
    rc = referee::testing::run_referee(base, &out);
    CHECK_MESSAGE(rc == 0, out);
    CHECK(out.find("nothing to run: the package holds 5 result(s), the 5 the spec asks for") != std::string::npos);
    rc = referee::testing::run_referee(base + " --replace --runs 5", &out);
    CHECK_MESSAGE(rc == 0, out);
    CHECK(out.find("removed (--replace): ") != std::string::npos);
    CHECK(out.find("result_4.txt") != std::string::npos);
    fs::path manifest = s.manifest();
    spit(manifest, "{\"format\": \"referee-run-manifest\", \"version\": 99, \"benchmark\": \"minilm\", \"runs\": []}");
    rc = referee::testing::run_referee(base, &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK(out.find("written by a newer referee") != std::string::npos);
    auto invocations = [&] {
      int n = 0;
      for (const auto& e : fs::directory_iterator(manifest.parent_path())) n += e.is_directory() ? 1 : 0;
      return n;
    };
    int before = invocations();
    spit(manifest, "{\"format\": \"referee-run-manifest\", \"ver");
    rc = referee::testing::run_referee(base + " --replace", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK(out.find("is not valid JSON") != std::string::npos);
    CHECK(out.find(manifest.string()) != std::string::npos);
    CHECK(slurp(manifest) == "{\"format\": \"referee-run-manifest\", \"ver");  // never overwritten
    CHECK(invocations() == before);
    // Refused before anything was touched.
    CHECK(result_files_in((s.dir / "out" / "CliOrg" / "results" / "cpu_node" / "minilm").string()).size() == 5);
  }
}
