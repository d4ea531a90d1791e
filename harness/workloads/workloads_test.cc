// The mini reference workloads: their logs pass mini-1.0.0, they reach their
// targets, they are deterministic, they stop when cancelled, and a package of
// their runs passes the package checker (seeds and RCPs included).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "harness/workloads/workloads.h"
#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/source.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using referee::harness::WorkloadConfig;
using referee::harness::WorkloadResult;
using referee::harness::run_workload;
namespace mllog = referee::mllog;
namespace rules = referee::rules;

namespace {

// The log of one run, in memory.
struct Run {
  bool ok = false;
  std::string error;
  WorkloadResult result;
  std::vector<std::string> lines;
  std::string text() const {
    std::string t;
    for (const auto& l : lines) t += l + "\n";
    return t;
  }
};

Run run(const WorkloadConfig& cfg, const std::atomic<bool>& cancel,
        std::function<void(std::string_view)> on_line = nullptr) {
  Run r;
  {
    mllog::Options opt;
    opt.mode = mllog::WriteMode::kSync;
    opt.callback = [&r, on_line](std::string_view line) {
      r.lines.emplace_back(line);
      if (on_line) on_line(line);
    };
    mllog::Logger log(opt);
    r.ok = run_workload(cfg, log, cancel, &r.error, &r.result);
  }
  return r;
}

Run run(const std::string& bench, long long seed, int batch = 0, int max_epochs = 0) {
  WorkloadConfig cfg;
  cfg.benchmark = bench;
  cfg.seed = seed;
  cfg.global_batch_size = batch;
  cfg.max_epochs = max_epochs;
  std::atomic<bool> cancel{false};
  return run(cfg, cancel);
}

const rules::RuleSet& mini_rules() {
  static std::unique_ptr<rules::RuleSet> rs = [] {
    rules::RuleSource src;
    std::string error;
    auto r = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(r, error);
    return r;
  }();
  return *rs;
}

rules::FileVerdict check(const std::string& text) {
  mllog::LogReader reader;
  mllog::ParsedLog log;
  reader.parse(text, &log);
  REQUIRE(log.errors.empty());
  return rules::check_log(mini_rules(), log);
}

std::string describe(const rules::FileVerdict& v) {
  std::string s;
  for (const auto& f : v.errors) s += "line " + std::to_string(f.line) + ": " + f.rule + ": " + f.message + "\n";
  return s;
}

// The lines with time_ms blanked: what must not change between two runs.
std::vector<std::string> without_times(const std::vector<std::string>& lines) {
  static const std::regex time(R"("time_ms": [0-9]+)");
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(std::regex_replace(l, time, "\"time_ms\": 0"));
  return out;
}

// The value of the last line with `key`, as text.
std::string last_value(const std::vector<std::string>& lines, const std::string& key) {
  std::string v;
  for (const auto& l : lines) {
    if (l.find("\"key\": \"" + key + "\"") == std::string::npos) continue;
    size_t a = l.find("\"value\": ");
    size_t b = l.find(", \"metadata\"");
    if (a != std::string::npos && b != std::string::npos) v = l.substr(a + 9, b - a - 9);
  }
  return v;
}

bool has_line(const std::vector<std::string>& lines, const std::string& key, const std::string& text) {
  for (const auto& l : lines)
    if (l.find("\"key\": \"" + key + "\"") != std::string::npos && l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_SUITE("workloads") {
  TEST_CASE("the built-in workloads and what they say about themselves") {
    auto names = referee::harness::builtin_workloads();
    REQUIRE(names == std::vector<std::string>{"minilm", "miniclf"});
    referee::harness::WorkloadInfo lm, clf, none;
    REQUIRE(referee::harness::workload_info("minilm", &lm));
    REQUIRE(referee::harness::workload_info("miniclf", &clf));
    CHECK_FALSE(referee::harness::workload_info("bert", &none));
    // The targets are the rule set's, and the sources' optima leave room below them.
    CHECK(lm.lower_is_better);
    CHECK(lm.target == 2.10);
    CHECK(lm.optimum < lm.target - 0.1);
    CHECK(lm.optimum == doctest::Approx(referee::harness::detail::minilm_entropy_rate()));
    CHECK(referee::harness::detail::minilm_true_eval_loss() == doctest::Approx(lm.optimum).epsilon(0.03));
    CHECK_FALSE(clf.lower_is_better);
    CHECK(clf.target == 0.90);
    CHECK(clf.optimum > clf.target + 0.015);
    CHECK(referee::harness::detail::miniclf_bayes_accuracy(20000) == doctest::Approx(clf.optimum).epsilon(0.01));
    CHECK(referee::harness::default_learning_rate("minilm", 64) == 0.005);
    CHECK(referee::harness::default_learning_rate("miniclf", 128) == 0.02);
    CHECK(referee::harness::default_learning_rate("bert", 64) == 0);
  }

  TEST_CASE("each workload's log passes mini-1.0.0 and reaches the target") {
    for (const std::string bench : {"minilm", "miniclf"}) {
      CAPTURE(bench);
      Run r = run(bench, 7);
      REQUIRE_MESSAGE(r.ok, r.error);
      CHECK(r.result.converged);
      CHECK_FALSE(r.result.cancelled);
      auto v = check(r.text());
      CHECK_MESSAGE(v.compliant, describe(v));
      CHECK(v.warnings.empty());
      CHECK(has_line(r.lines, "run_stop", "\"status\": \"success\""));
      CHECK(has_line(r.lines, "seed", "\"value\": 7,"));
      CHECK(has_line(r.lines, "cache_clear", "\"value\": true"));
      // The call sites are named relative to the source tree.
      CHECK(has_line(r.lines, "seed", "\"file\": \"harness/"));
      double last = std::stod(last_value(r.lines, "eval_accuracy"));
      CHECK(last == r.result.quality);
      if (bench == "minilm") {
        CHECK(last <= 2.10);
        CHECK(has_line(r.lines, "block_start", "\"first_epoch_num\": 0.0, \"epoch_count\": 0.25"));
        CHECK(last_value(r.lines, "opt_adam_epsilon") == "1e-08");
        CHECK(last_value(r.lines, "global_batch_size") == "64");
      } else {
        CHECK(last >= 0.90);
        CHECK(has_line(r.lines, "epoch_start", "\"epoch_num\": 1}"));
        CHECK(last_value(r.lines, "opt_learning_rate_warmup_epochs") == "1");
        CHECK(last_value(r.lines, "global_batch_size") == "128");
      }
    }
  }

  TEST_CASE("other batch sizes, open division and an explicit learning rate") {
    WorkloadConfig cfg;
    cfg.benchmark = "minilm";
    cfg.seed = 11;
    cfg.global_batch_size = 100;  // does not divide an evaluation block
    cfg.learning_rate = 0.006;
    cfg.division = "open";
    std::atomic<bool> cancel{false};
    Run r = run(cfg, cancel);
    REQUIRE(r.ok);
    CHECK(r.result.converged);
    CHECK(r.result.learning_rate == 0.006);
    CHECK(last_value(r.lines, "opt_base_learning_rate") == "0.006");
    CHECK(last_value(r.lines, "submission_division") == "\"open\"");
    auto v = check(r.text());
    CHECK_MESSAGE(v.compliant, describe(v));

    cfg.benchmark = "miniclf";
    cfg.global_batch_size = 300;
    cfg.learning_rate = 0;
    cfg.division = "closed";
    r = run(cfg, cancel);
    REQUIRE(r.ok);
    CHECK(r.result.converged);
    CHECK(last_value(r.lines, "opt_learning_rate_warmup_epochs") == "2");
    v = check(r.text());
    CHECK_MESSAGE(v.compliant, describe(v));
  }

  TEST_CASE("a seed gives the same run every time; another seed another run") {
    for (const std::string bench : {"minilm", "miniclf"}) {
      CAPTURE(bench);
      Run a = run(bench, 3), b = run(bench, 3), c = run(bench, 4);
      REQUIRE(a.ok);
      CHECK(without_times(a.lines) == without_times(b.lines));
      CHECK(a.result.steps == b.result.steps);
      CHECK(a.result.quality == b.result.quality);
      CHECK(without_times(a.lines) != without_times(c.lines));
    }
  }

  TEST_CASE("cancelling stops the run at once with run_stop aborted") {
    for (const std::string bench : {"minilm", "miniclf"}) {
      CAPTURE(bench);
      WorkloadConfig cfg;
      cfg.benchmark = bench;
      cfg.seed = 5;
      std::atomic<bool> cancel{false};
      std::chrono::steady_clock::time_point cancelled_at;
      // Cancel as the first evaluation is reported.
      Run r = run(cfg, cancel, [&](std::string_view line) {
        if (!cancel && line.find("\"key\": \"eval_accuracy\"") != std::string_view::npos) {
          cancel = true;
          cancelled_at = std::chrono::steady_clock::now();
        }
      });
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count();
      REQUIRE(r.ok);
      CHECK(secs < 0.5);
      CHECK(r.result.cancelled);
      CHECK_FALSE(r.result.converged);
      CHECK(r.result.evals == 1);
      CHECK(has_line(r.lines, "run_stop", "\"status\": \"aborted\""));
      CHECK(r.lines.back().find("\"key\": \"run_stop\"") != std::string::npos);
      // Still a well-formed log; only the quality rule fails, the target not being reached.
      auto v = check(r.text());
      CHECK_FALSE(v.compliant);
      for (const auto& f : v.errors) CHECK_MESSAGE(f.key == "eval_accuracy", describe(v));

      // Cancelled before it starts: no training at all, but run_stop aborted.
      std::atomic<bool> already{true};
      Run early = run(cfg, already);
      REQUIRE(early.ok);
      CHECK(early.result.cancelled);
      CHECK(early.result.steps == 0);
      CHECK(has_line(early.lines, "run_stop", "\"status\": \"aborted\""));
    }
  }

  TEST_CASE("a run that misses the target within max_epochs is aborted") {
    Run lm = run("minilm", 1, 0, 1);
    REQUIRE(lm.ok);
    CHECK_FALSE(lm.result.converged);
    CHECK_FALSE(lm.result.cancelled);
    CHECK(lm.result.evals == 4);
    CHECK(lm.result.epochs == 1.0);
    CHECK(has_line(lm.lines, "run_stop", "\"status\": \"aborted\", \"epoch_num\": 1.0"));
    Run clf = run("miniclf", 1, 0, 2);
    REQUIRE(clf.ok);
    CHECK_FALSE(clf.result.converged);
    CHECK(has_line(clf.lines, "run_stop", "\"status\": \"aborted\", \"epoch_num\": 2"));
    // The quality rule fails (no evaluation reaches the target), the rest holds.
    auto v = check(clf.text());
    CHECK_FALSE(v.compliant);
    for (const auto& f : v.errors) CHECK(f.key == "eval_accuracy");
  }

  TEST_CASE("what cannot run is refused before anything is logged") {
    auto refused = [](WorkloadConfig cfg, const std::string& why) {
      std::atomic<bool> cancel{false};
      Run r = run(cfg, cancel);
      CHECK_FALSE(r.ok);
      CHECK(r.lines.empty());
      CHECK_MESSAGE(r.error.find(why) != std::string::npos, r.error);
    };
    WorkloadConfig cfg;
    cfg.benchmark = "bert";
    refused(cfg, "unknown workload 'bert'");
    cfg.benchmark = "minilm";
    cfg.seed = -1;
    refused(cfg, "seed");
    cfg.seed = 1;
    cfg.global_batch_size = -5;
    refused(cfg, "batch size");
    cfg.global_batch_size = 1 << 20;
    refused(cfg, "batch size");
    cfg.global_batch_size = 0;
    cfg.learning_rate = -1;
    refused(cfg, "learning rate");
    cfg.learning_rate = 0;
    cfg.max_epochs = -1;
    refused(cfg, "max_epochs");
  }

  TEST_CASE("a package of five runs per workload passes check_package, seeds and RCPs included") {
    referee::testing::TempDir tmp;
    const std::string org = "MiniOrg", system = "cpu_1x_test";
    fs::path pkg = tmp.path / org;
    for (const std::string bench : {"minilm", "miniclf"}) {
      for (int n = 0; n < 5; ++n) {
        WorkloadConfig cfg;
        cfg.benchmark = bench;
        cfg.seed = 1 + n;
        cfg.org = org;
        cfg.platform = system;
        std::atomic<bool> cancel{false};
        Run r = run(cfg, cancel);
        REQUIRE(r.ok);
        referee::testing::write_file(pkg / "results" / system / bench / ("result_" + std::to_string(n) + ".txt"),
                                     r.text());
      }
    }
    // The system description: the example package's, renamed.
    std::string sys = referee::testing::read_file(fs::path(REFEREE_SOURCE_DIR) /
                                                  "submissions/examples/ExampleOrg/systems/cpu_2x_example.json");
    REQUIRE(!sys.empty());
    sys = std::regex_replace(sys, std::regex("ExampleOrg"), org);
    sys = std::regex_replace(sys, std::regex("cpu_2x_example"), system);
    referee::testing::write_file(pkg / "systems" / (system + ".json"), sys);

    rules::RoundFacts facts;
    std::string error;
    REQUIRE_MESSAGE(rules::facts_for(mini_rules(), &facts, &error), error);
    rules::PackageReport rep;
    REQUIRE_MESSAGE(rules::check_package(mini_rules(), facts, pkg.string(), {}, &rep, &error), error);
    for (const auto& s : rep.systems) CHECK(s.valid);
    REQUIRE(rep.benchmarks.size() == 2);
    for (const auto& d : rep.benchmarks) {
      CAPTURE(d.benchmark);
      CHECK(d.result_count == 5);
      for (const auto& f : d.files) CHECK_MESSAGE(f.verdict.compliant, (f.name + "\n" + describe(f.verdict)));
      CHECK(d.seeds_checked);
      CHECK(d.seeds_ok);
      CHECK(d.rcp_checked);
      CHECK_MESSAGE(d.rcp.pass, (d.rcp.status + ": " + d.rcp.message + " " + d.rcp.explanation));
      // The default batch sizes have reference points, or sit between two
      // (the RCP checker prunes a point above the line between its neighbours).
      CHECK((d.rcp.status == "found" || d.rcp.status == "interpolated"));
      CHECK(d.rcp.evaluated);
      CHECK(d.errors.empty());
      CHECK(d.pass);
    }
    CHECK(rep.pass);

    // The same seed twice is caught.
    fs::copy_file(pkg / "results" / system / "miniclf" / "result_0.txt",
                  pkg / "results" / system / "miniclf" / "result_1.txt", fs::copy_options::overwrite_existing);
    REQUIRE(rules::check_package(mini_rules(), facts, pkg.string(), {}, &rep, &error));
    CHECK_FALSE(rep.pass);
  }

  TEST_CASE("check_package: a rule file enqueued megabytes into a result file reads the lines before it again") {
    // check_package reads a result file in pieces; the benchmark's rule file,
    // enqueued by submission_benchmark in a later piece, must still see a
    // broken line at the top, as the batch checker over the whole text does.
    referee::testing::TempDir tmp;
    const std::string org = "MiniOrg", system = "cpu_1x_test";
    WorkloadConfig cfg;
    cfg.benchmark = "minilm";
    cfg.seed = 3;
    cfg.org = org;
    cfg.platform = system;
    std::atomic<bool> cancel{false};
    Run r = run(cfg, cancel);
    REQUIRE(r.ok);
    std::string text = r.text();
    std::string beta, rest;
    size_t first_time = text.find("\"time_ms\": ");
    REQUIRE(first_time != std::string::npos);
    std::string time = text.substr(first_time + 11, text.find(',', first_time) - first_time - 11);
    for (size_t at = 0; at < text.size();) {
      size_t nl = text.find('\n', at);
      std::string l = text.substr(at, nl == std::string::npos ? std::string::npos : nl + 1 - at);
      at = nl == std::string::npos ? text.size() : nl + 1;
      if (l.find("\"key\": \"opt_adam_beta_1\"") != std::string::npos) beta = l;
      else rest += l;
    }
    REQUIRE(!beta.empty());
    beta = std::regex_replace(beta, std::regex("\"value\": 0\\.9"), "\"value\": 0.5");
    std::string filler = ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + time +
                         ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"filler_line\", \"value\": null, "
                         "\"metadata\": {\"file\": \"x.py\", \"lineno\": 1}}\n";
    std::string log = beta;
    while (log.size() < (std::size_t{9} << 20)) log += filler;  // two pieces and more before the benchmark is named
    log += rest;
    referee::testing::write_file(tmp.path / org / "results" / system / "minilm" / "result_0.txt", log);
    std::string sys = referee::testing::read_file(fs::path(REFEREE_SOURCE_DIR) /
                                                  "submissions/examples/ExampleOrg/systems/cpu_2x_example.json");
    sys = std::regex_replace(sys, std::regex("ExampleOrg"), org);
    sys = std::regex_replace(sys, std::regex("cpu_2x_example"), system);
    referee::testing::write_file(tmp.path / org / "systems" / (system + ".json"), sys);

    rules::RoundFacts facts;
    std::string error;
    REQUIRE_MESSAGE(rules::facts_for(mini_rules(), &facts, &error), error);
    rules::PackageReport rep;
    REQUIRE_MESSAGE(rules::check_package(mini_rules(), facts, (tmp.path / org).string(), {}, &rep, &error), error);
    REQUIRE(rep.benchmarks.size() == 1);
    REQUIRE(rep.benchmarks[0].files.size() == 1);
    const rules::FileVerdict& streamed = rep.benchmarks[0].files[0].verdict;

    mllog::LogReader reader;
    mllog::ParsedLog parsed;
    reader.parse(log, &parsed);
    rules::FileVerdict batch = rules::check_log(mini_rules(), parsed);
    CHECK_FALSE(batch.compliant);
    CHECK_FALSE(streamed.compliant);
    CHECK(describe(streamed) == describe(batch));
    CHECK(describe(streamed).find("opt_adam_beta_1") != std::string::npos);
  }

  TEST_CASE("referee workload run and list") {
    std::string out;
    CHECK(referee::testing::run_referee("workload list", &out) == 0);
    CHECK(out.find("minilm") != std::string::npos);
    CHECK(out.find("miniclf") != std::string::npos);
    CHECK(referee::testing::run_referee("workload run miniclf --seed 2 --log - -q", &out) == 0);
    CHECK(out.find(":::MLLOG {") == 0);
    CHECK(out.find("\"status\": \"success\"") != std::string::npos);
    CHECK(check(out).compliant);
    referee::testing::TempDir tmp;
    std::string log = (tmp.path / "result_0.txt").string();
    referee::testing::write_file(log, "stale\n");
    CHECK(referee::testing::run_referee("workload run minilm --seed 2 --batch-size 32 --log " + log, &out) == 0);
    CHECK(out.find("reached") != std::string::npos);
    std::string text = referee::testing::read_file(log);
    CHECK(text.find("stale") == std::string::npos);
    CHECK(check(text).compliant);
    CHECK(referee::testing::run_referee("workload run minilm --seed 2 --max-epochs 1 --log /dev/null", &out) == 1);
    CHECK(referee::testing::run_referee("workload run bert --seed 2", &out) == 2);
    CHECK(out.find("unknown workload") != std::string::npos);
  }
}
