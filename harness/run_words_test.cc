// What `referee run` says about its runs: one vocabulary for states and
// verdicts, the seed a run logged, the progress table, the system
// description's fields, and the summary (text and JSON).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "harness/backends/exec.h"
#include "harness/manifest.h"
#include "harness/run_words.h"
#include "harness/environment/system_describe.h"
#include "mllog/json.h"
#include "rules/source.h"
#include "tests/run_referee.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::harness;

namespace {

fs::path temp_dir() {
  std::random_device rd;
  fs::path p = fs::temp_directory_path() / ("referee-words-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(p);
  return p;
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const std::string kExample = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
const std::string kCpuSystem = std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/cpu_system.yaml";

// An exec spec replaying the example package's minilm logs (which log their own seeds).
std::string replay_spec(const std::string& extra_command = "") {
  return "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nsystem_description: " + kCpuSystem +
         "\ncommand: [\"/bin/sh\", \"-c\", \"cat " + kExample + "/results/cpu_2x_example/minilm/result_{run}.txt" +
         extra_command + "\"]\n";
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("words: one vocabulary for a run's state and verdict") {
    RunReport r;
    CHECK(state_word(r) == "not started");
    CHECK(verdict_word(r) == "not started");
    r.status = {RunState::Failed, -1, "cannot execute"};
    CHECK(state_word(r) == "failed");  // could not start
    CHECK(verdict_word(r) == "not started");
    r.launched = true;
    r.checked = true;
    // Stopped by the live checker: "stopped", and the rule it broke makes it not compliant.
    r.aborted = true;
    r.status = {RunState::Cancelled, -1, "stopped"};
    CHECK(state_word(r) == "stopped");
    CHECK(verdict_word(r) == "not compliant");
    r.aborted = false;
    // Cut short by the harness or a crash: no verdict of the rules applies.
    for (RunState st : {RunState::Cancelled, RunState::TimedOut, RunState::Failed}) {
      r.status = {st, -1, ""};
      r.log_complete = false;
      CHECK(verdict_word(r) == "incomplete");
      r.log_complete = true;  // a complete log is judged by the rules, however it ended
      r.verdict.compliant = true;
      CHECK(verdict_word(r) == "compliant");
      r.verdict.compliant = false;
      CHECK(verdict_word(r) == "not compliant");
    }
    CHECK(to_string(RunState::TimedOut) == std::string("timed out"));
    r.status = {RunState::Succeeded, 0, ""};
    r.log_complete = false;  // exited 0 without run_stop: the log breaks the rules
    CHECK(verdict_word(r) == "not compliant");
    r.checked = false;  // killed at a second interrupt
    r.status = {RunState::Cancelled, -1, ""};
    CHECK(verdict_word(r) == "not checked");
  }

  TEST_CASE("words: evaluations line up: four decimals, rounded, not cut") {
    CHECK(eval_text("0.900390625") == "0.9004");
    CHECK(eval_text("0.9") == "0.9000");
    CHECK(eval_text("") == "-");
    CHECK(eval_text("n/a") == "n/a");
  }

  TEST_CASE("progress table: on a 100-column terminal the fraction, time left and time to train still show") {
    ProgressModel m;
    m.target.metric = "eval_accuracy";
    m.target.has_target = true;
    m.target.target = 0.9;
    m.quantity = "epochs";
    RunProgress r;
    r.id = "miniclf-0";
    r.state = "running";
    r.wall_s = 12;
    Progress& p = r.progress;
    p.started = p.has_eval = p.has_position = p.has_expected = p.has_fraction = p.has_eta = p.has_time_to_train = true;
    p.eval = 0.87123456;
    p.position = 4;
    p.expected = 6.92;
    p.expected_basis = "RCP interpolated between batch sizes 64 and 256";
    p.fraction = 0.578;
    p.eta_s = 138;
    p.time_to_train_s = 190;
    std::string row = progress_row(r, m, 100);
    CHECK(row.size() <= 100);
    CHECK(row.find("58%") != std::string::npos);
    CHECK(row.find("~2 min 18 s") != std::string::npos);
    CHECK(row.find("3 min 10 s") != std::string::npos);
    CHECK(row.find("0.8712") != std::string::npos);
    CHECK(progress_header(100).find("time to train") != std::string::npos);
    // A run that ended has no time left.
    r.state = "succeeded";
    CHECK(progress_row(r, m, 100).find("~2 min") == std::string::npos);
  }

  TEST_CASE("system description: an unknown field is named with the nearest known one; a workload spec is refused") {
    fs::path dir = temp_dir();
    std::string text = slurp(kCpuSystem);
    size_t at = text.find("cooling: air");
    REQUIRE(at != std::string::npos);
    text.replace(at, 7, "coolnig");
    spit(dir / "typo.yaml", text);
    SystemDescription d;
    std::string error;
    REQUIRE_MESSAGE(describe_system((dir / "typo.yaml").string(), "", &d, &error), error);
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0].find("unknown field 'coolnig' (did you mean 'cooling'?)") != std::string::npos);
    CHECK(d.warnings[0].find("typo.yaml:") == (dir / "typo.yaml").string().size() - 9);
    CHECK(std::find(d.missing.begin(), d.missing.end(), "cooling") != d.missing.end());
    SystemDescription ok;
    REQUIRE(describe_system(kCpuSystem, "", &ok, &error));
    CHECK(ok.warnings.empty());
    CHECK(nearest_system_field("acelerator_model_name") == "accelerator_model_name");
    CHECK(nearest_system_field("favourite_colour") == "");
    SystemDescription spec;
    CHECK_FALSE(describe_system(std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/miniclf.yaml", "", &spec, &error));
    CHECK(error.find("is a workload spec (it has benchmark:, ruleset:") != std::string::npos);
    std::string out;
    int rc = referee::testing::run_referee(
        "system describe --from '" + std::string(REFEREE_SOURCE_DIR) + "/harness/workloads/specs/miniclf.yaml'", &out);
    CHECK_MESSAGE(rc == 2, out);
    rc = referee::testing::run_referee("system describe --from '" + (dir / "typo.yaml").string() + "'", &out);
    CHECK_MESSAGE(rc == 1, out);  // cooling is missing
    CHECK(out.find("warning: " + (dir / "typo.yaml").string()) != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("a timed-out run is incomplete, in the summary and in the manifest alike") {
    fs::path dir = temp_dir();
    spit(dir / "slow.yaml", "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\ntimeout: 1\n"
                            "system_description: " + kCpuSystem + "\ncommand: [\"/bin/sh\", \"-c\", \"sleep 30\"]\n");
    std::string out;
    int rc = referee::testing::run_referee("run '" + (dir / "slow.yaml").string() + "' --runs 1 --progress json --out '" +
                                               (dir / "out").string() + "' 2>/dev/null",
                                           &out);
    CHECK_MESSAGE(rc == 1, out);
    std::string summary = out.substr(out.rfind("{\"type\":\"summary\""));
    CHECK(summary.find("\"state\":\"timed out\",\"verdict\":\"incomplete\"") != std::string::npos);
    std::string manifest = slurp(dir / "out" / ".referee-runs" / "minilm" / "manifest.json");
    CHECK(manifest.find("\"state\": \"timed out\"") != std::string::npos);
    CHECK(manifest.find("\"verdict\": \"incomplete\"") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("referee run: a workload that logs another seed than it was given is said per run, with the seed finding") {
    fs::path dir = temp_dir();
    fs::path spec = dir / "replay.yaml";
    // Run 1 logs run 0's seed too: the package's seed check fails, and says why.
    spit(dir / "dup.sh", "cat " + kExample + "/results/cpu_2x_example/minilm/result_0.txt\n");
    spit(spec, "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nsystem_description: " +
                   kCpuSystem + "\nseeds: [1645906691, 2]\ncommand: [\"/bin/sh\", \"" + (dir / "dup.sh").string() +
                   "\"]\n");
    std::string out;
    int rc = referee::testing::run_referee("run '" + spec.string() + "' --runs 2 --progress plain --out '" +
                                               (dir / "out").string() + "'",
                                           &out);
    CHECK_MESSAGE(rc == 1, out);
    CHECK(out.find("2 (log: 1645906691)") != std::string::npos);  // the table's seed column
    CHECK(out.find("minilm-0: its log says") == std::string::npos);  // run 0 logs the seed it was given
    CHECK(out.find("minilm-1: its log says seed 1645906691, not the seed it was given (2)") != std::string::npos);
    CHECK(out.find("seeds FAIL") != std::string::npos);
    CHECK(out.find("    seeds: Result file result_1.txt logs seed 1645906691") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("referee run: the summary names a teardown crash, the JSON lists kept results, a full package says so") {
    fs::path dir = temp_dir();
    fs::path spec = dir / "replay.yaml";
    spit(spec, replay_spec("; kill -SEGV $$"));
    std::string out, base = "run '" + spec.string() + "' --out '" + (dir / "out").string() + "'";
    int rc = referee::testing::run_referee(base + " --runs 1 --progress plain", &out);
    CHECK_MESSAGE(rc == 1, out);
    CHECK(out.find("minilm-0 is in the package as result_0.txt: compliant, converged; after its log was complete it "
                   "was killed by") != std::string::npos);
    // Grow to 2 with JSON: the summary lists the kept run too, and paths are absolute.
    rc = referee::testing::run_referee(base + " --runs 2 --progress json 2>/dev/null", &out);
    CHECK_MESSAGE(rc == 1, out);
    std::string summary = out.substr(out.rfind("{\"type\":\"summary\""));
    mllog::Json j;
    std::string perr;
    REQUIRE_MESSAGE(mllog::parse_json_permissive(summary, &j, &perr), perr);
    const mllog::Json* package = j.find("package");
    REQUIRE(package);
    CHECK(fs::path(package->s).is_absolute());
    const mllog::Json* runs = j.find("runs");
    const mllog::Json* kept = j.find("kept");
    REQUIRE(runs);
    REQUIRE(kept);
    CHECK(runs->items.size() == 1);
    REQUIRE(kept->items.size() == 1);
    CHECK(kept->items[0].find("run")->s == "minilm-0");
    CHECK(fs::path(kept->items[0].find("result_file")->s).filename() == "result_0.txt");
    CHECK(summary.find("\"batch_size\":64,") != std::string::npos);  // the example logs batch size 64, not 64.0
    // More results than asked for: said as it is.
    rc = referee::testing::run_referee(base + " --runs 1", &out);
    CHECK(out.find("the package already holds 2 result(s), more than the 1 asked for; none was removed") !=
          std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("referee run: an incomplete description named by the spec: the hint names that file") {
    fs::path dir = temp_dir();
    spit(dir / "part.yaml", "submitter: ExampleOrg\nsystem_name: part\n");
    spit(dir / "spec.yaml", "benchmark: minilm\nruleset: mini-1.0.0\nsystem_description: part.yaml\n");
    std::string out;
    int rc = referee::testing::run_referee("run '" + (dir / "spec.yaml").string() + "' --out '" +
                                               (dir / "out").string() + "'",
                                           &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK(out.find("fix: add them to " + (dir / "part.yaml").string() + " (the spec's system_description)") !=
          std::string::npos);
    CHECK(out.find("pass --system-description FILE") == std::string::npos);
    fs::remove_all(dir);
  }
}
