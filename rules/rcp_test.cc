// The RCP checker: numpy/scipy numerics and the table lookups of the
// consortium's rcp_checker.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rules/rcp.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee::rules;

namespace {

using referee::testing::TempDir;

// One reference record: `n` points, the middle ones equal to `mean`, one at each end `spread` away.
std::string record(const std::string& name, const std::string& bench, int bs, double mean, double spread = 1.0, int n = 10) {
  std::string pts = std::to_string(mean - spread);
  for (int i = 0; i < n - 2; ++i) pts += ", " + std::to_string(mean);
  pts += ", " + std::to_string(mean + spread);
  return "\"" + name + "\": {\"Benchmark\": \"" + bench + "\", \"Creator\": \"test\", \"When\": \"Reference RCPs\", " +
         "\"Platform\": \"x\", \"BS\": " + std::to_string(bs) + ", \"Hyperparams\": {\"opt_base_learning_rate\": 0.1}, " +
         "\"Epochs to converge\": [" + pts + "]}";
}

std::string table(const std::vector<std::string>& records) {
  std::string out = "{\n";
  for (size_t i = 0; i < records.size(); ++i) out += (i ? ",\n" : "") + records[i];
  return out + "\n}\n";
}

RcpTable load(const TempDir& dir, const std::string& json, const std::string& bench = "bert", int n_runs = 10) {
  fs::path p = dir.path / ("rcps_" + bench + ".json");
  std::ofstream(p, std::ios::binary | std::ios::trunc) << json;
  RcpTable t;
  std::string error;
  bool ok = t.load(p.string(), bench, n_runs, &error);
  REQUIRE_MESSAGE(ok, error);
  return t;
}

std::vector<RunConvergence> runs(int n, double epochs, int64_t bs, const std::string& bench = "bert") {
  std::vector<RunConvergence> out(static_cast<size_t>(n));
  for (auto& r : out) {
    r.converged = true;
    r.epochs = epochs;
    r.has_bs = true;
    r.bs = Value::integer(bs);
    r.benchmark = bench;
  }
  return out;
}

// BS 100: mean 12, BS 200: mean 14, BS 400: mean 20 (each with a small spread).
std::string standard_table() {
  return table({record("bert_ref_100", "bert", 100, 12), record("bert_ref_200", "bert", 200, 14),
                record("bert_ref_400", "bert", 400, 20)});
}

}  // namespace

TEST_SUITE("rcp") {

TEST_CASE("np_sum is numpy's pairwise sum") {
  const double a[] = {1, 2, 3};
  CHECK(np_sum(a, 3) == 6.0);
  CHECK(np_sum(a, 0) == 0.0);
  std::vector<double> tenths(10, 0.1);
  CHECK(np_sum(tenths.data(), tenths.size()) == 1.0);  // numpy.sum; Python's sum() gives 0.9999999999999999
  std::vector<double> many(1000, 0.1);
  CHECK(std::fabs(np_sum(many.data(), many.size()) - 100.0) < 1e-12);
  std::vector<double> ints(300);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<double>(i);
  CHECK(np_sum(ints.data(), ints.size()) == 44850.0);
}

TEST_CASE("np_mean and np_std (population)") {
  CHECK(np_mean({1, 2, 3, 4}) == 2.5);
  CHECK(np_std({1, 2, 3, 4}) == doctest::Approx(1.118033988749895).epsilon(1e-15));
  CHECK(np_std({5, 5, 5}) == 0.0);
  CHECK(np_mean(std::vector<double>(10, 0.1)) == 0.1);
  CHECK(std::isnan(np_mean({})));
  CHECK(std::isnan(np_std({})));
}

TEST_CASE("one_sided_p: the consortium's one-sided t-test") {
  // Equal means: t = 0, two-sided p = 1, one-sided 0.5.
  CHECK(one_sided_p(10, 1, 8, 10, 1, 8) == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(one_sided_p(3, 2, 5, 3, 1, 20) == doctest::Approx(0.5).epsilon(1e-12));
  // df = 2 has a closed form: CDF(t) = 1/2 + t / (2 sqrt(2 + t^2)); here t = -1 and +1.
  CHECK(one_sided_p(0, 1, 2, 1, 1, 2) == doctest::Approx(0.21132486540518708).epsilon(1e-12));
  CHECK(one_sided_p(1, 1, 2, 0, 1, 2) == doctest::Approx(0.7886751345948129).epsilon(1e-12));
  // Symmetry: swapping the samples mirrors p around 1/2.
  double p1 = one_sided_p(11.2, 0.7, 8, 12, 0.7, 8);
  double p2 = one_sided_p(12, 0.7, 8, 11.2, 0.7, 8);
  CHECK(p1 < 0.5);
  CHECK(p1 + p2 == doctest::Approx(1.0).epsilon(1e-12));
  // Far apart: p goes to 0 on the slow side of the test.
  CHECK(one_sided_p(0, 1, 100, 100, 1, 100) < 1e-12);
}

TEST_CASE("py_round_to is Python's round(x, n)") {
  CHECK(py_round_to(2.675, 2) == 2.67);  // 2.675 is 2.67499999... in binary
  CHECK(py_round_to(0.125, 2) == 0.12);  // exact tie: half to even
  CHECK(py_round_to(0.375, 2) == 0.38);
  CHECK(py_round_to(-0.125, 2) == -0.12);
  CHECK(py_round_to(1.0005, 3) == 1.0);
  CHECK(py_round_to(2.5, 0) == 2.0);
  CHECK(py_round_to(3.14159, 3) == 3.142);
  CHECK(std::isnan(py_round_to(std::nan(""), 3)));
  CHECK(std::isinf(py_round_to(INFINITY, 3)));
}

TEST_CASE("RcpTable: reference statistics") {
  TempDir dir;
  RcpTable t = load(dir, standard_table());
  REQUIRE(t.records().size() == 3);
  const RcpRecord& r = t.records()[0];
  CHECK(r.bs == 100);
  CHECK(r.benchmark == "bert");
  CHECK(r.points.size() == 10);
  CHECK(r.mean == doctest::Approx(12.0).epsilon(1e-12));              // olympic: drop one at each end
  CHECK(r.stdev == doctest::Approx(std::sqrt(0.2)).epsilon(1e-12));   // all points, ddof 0
  CHECK(r.min_epochs < r.mean);
  CHECK(r.min_epochs > 0.9 * r.mean);
  CHECK(r.max_speedup == doctest::Approx(r.mean / r.min_epochs));
  // At the minimum the one-sided test sits at alpha = 0.05 (within the bisection tolerance).
  CHECK(one_sided_p(r.min_epochs, r.stdev, 8, r.mean, r.stdev, 8) == doctest::Approx(0.05).epsilon(0.01));
  CHECK(t.pruned().size() == 3);

  // A stdev of 0 gives the mean itself.
  RcpTable flat = load(dir, table({record("bert_ref_100", "bert", 100, 12, 0.0)}));
  CHECK(flat.records()[0].min_epochs == 12.0);
  CHECK(flat.records()[0].max_speedup == 1.0);
}

TEST_CASE("RcpTable: pruning") {
  TempDir dir;
  // BS 50 is slower than BS 100 (the fastest) and below it: dropped. BS 200's mean lies
  // above the line from BS 100 to BS 400: dropped.
  RcpTable t = load(dir, table({record("bert_ref_50", "bert", 50, 13), record("bert_ref_100", "bert", 100, 12),
                                record("bert_ref_200", "bert", 200, 19), record("bert_ref_400", "bert", 400, 20)}));
  CHECK(t.records().size() == 4);
  REQUIRE(t.pruned().size() == 2);
  CHECK(t.pruned()[0].bs == 100);
  CHECK(t.pruned()[1].bs == 400);
  // BS 200 is now interpolated between 100 and 400.
  RcpOutcome o = t.evaluate(runs(10, 15, 200), false);
  CHECK(o.status == "interpolated");
  CHECK(o.rcp_mean == doctest::Approx(12.0 + 8.0 / 3.0).epsilon(1e-9));
}

TEST_CASE("RcpTable: lookups") {
  TempDir dir;
  RcpTable t = load(dir, standard_table());

  SUBCASE("found") {
    RcpOutcome o = t.evaluate(runs(10, 14, 200), false);
    CHECK(o.status == "found");
    CHECK(o.message == "RCP found");
    CHECK(o.pass);
    CHECK(o.evaluated);
    CHECK_FALSE(o.bypassed);
    CHECK(o.batch_size == 200);
    CHECK(o.rcp_mean == doctest::Approx(14.0));
    CHECK(o.submission_mean == doctest::Approx(14.0));
    CHECK(o.norm_factor == 1.0);
    CHECK(o.run_epochs.size() == 10);
  }
  SUBCASE("found, converging too fast; bypass turns it into a pass") {
    RcpOutcome o = t.evaluate(runs(10, 5, 200), false);
    CHECK(o.status == "found");
    CHECK_FALSE(o.pass);
    CHECK_FALSE(o.explanation.empty());
    CHECK(o.norm_factor == doctest::Approx(14.0 / 5.0));
    RcpOutcome b = t.evaluate(runs(10, 5, 200), true);
    CHECK(b.pass);
    CHECK(b.bypassed);
    CHECK(b.message == "RCP found passed using rcp_bypass");
  }
  SUBCASE("the olympic mean drops the fastest and the slowest run") {
    auto r = runs(10, 14, 200);
    r[0].epochs = 1;    // dropped
    r[1].epochs = 500;  // dropped
    RcpOutcome o = t.evaluate(r, false);
    CHECK(o.pass);
    CHECK(o.submission_mean == doctest::Approx(14.0));
    REQUIRE(o.run_epochs.size() == 10);
    CHECK(o.run_epochs.front() == 1);
    CHECK(o.run_epochs.back() == 500);
  }
  SUBCASE("interpolated") {
    RcpOutcome o = t.evaluate(runs(10, 17, 300), false);
    CHECK(o.status == "interpolated");
    CHECK(o.message == "RCP Interpolation");
    CHECK(o.pass);
    CHECK(o.batch_size == 300);
    CHECK(o.rcp_mean == doctest::Approx(17.0).epsilon(1e-9));
    CHECK(o.rcp_stdev == doctest::Approx(std::sqrt(0.2)).epsilon(1e-9));
    RcpOutcome fast = t.evaluate(runs(10, 10, 300), false);
    CHECK(fast.status == "interpolated");
    CHECK_FALSE(fast.pass);
  }
  SUBCASE("missing: larger than every record") {
    RcpOutcome o = t.evaluate(runs(10, 30, 800), false);
    CHECK(o.status == "missing");
    CHECK(o.message == "Missing RCP, please submit RCP with BS = 800");
    CHECK_FALSE(o.pass);
    RcpOutcome b = t.evaluate(runs(10, 30, 800), true);
    CHECK(b.pass);
    CHECK(b.bypassed);
    CHECK(b.message == "Missing RCP, please submit RCP with BS = 800 passed using rcp_bypass");
  }
  SUBCASE("smaller than every record: slower convergence passes") {
    RcpOutcome o = t.evaluate(runs(10, 30, 50), false);
    CHECK(o.status == "smaller_batch_ok");
    CHECK(o.message == "RCP not found but slower convergence on smaller batch size");
    CHECK(o.pass);
    CHECK(o.batch_size == 100);  // evaluated against the smallest record
    RcpOutcome fast = t.evaluate(runs(10, 3, 50), false);
    CHECK(fast.status == "missing");
    CHECK(fast.message == "Missing RCP, please submit RCP with BS = 50");
    CHECK_FALSE(fast.pass);
  }
  SUBCASE("not converged: more than one run without success") {
    auto r = runs(10, 14, 200);
    r[3].converged = false;
    r[3].epochs = 1e9;
    RcpOutcome one = t.evaluate(r, false);
    CHECK(one.status == "found");  // one failure is the olympic drop
    CHECK(one.pass);
    r[7].converged = false;
    r[7].epochs = 1e9;
    RcpOutcome two = t.evaluate(r, false);
    CHECK(two.status == "not_converged");
    CHECK(two.message == "Insufficient convergence");
    CHECK_FALSE(two.pass);
    RcpOutcome bypassed = t.evaluate(r, true);
    CHECK_FALSE(bypassed.pass);  // the bypass does not cover non-convergence
  }
  SUBCASE("no batch size: files disagree, or none logs it") {
    auto r = runs(10, 14, 200);
    r[4].bs = Value::integer(100);
    RcpOutcome o = t.evaluate(r, false);
    CHECK(o.status == "no_batch_size");
    CHECK(o.message == "Could not detect global_batch_size");
    CHECK_FALSE(o.pass);
    auto bench = runs(10, 14, 200);
    bench[2].benchmark = "resnet";
    CHECK(t.evaluate(bench, false).status == "no_batch_size");
    auto none = runs(10, 14, 200);
    for (auto& x : none) x.has_bs = false;
    CHECK(t.evaluate(none, false).status == "no_batch_size");
  }
}

TEST_CASE("RcpTable: too few runs fail, and the explanation says so") {
  TempDir dir;
  RcpTable t = load(dir, standard_table());
  for (int n : {1, 2}) {
    CAPTURE(n);
    RcpOutcome o = t.evaluate(runs(n, 14, 200), false);
    // The consortium's olympic mean of n <= 2 runs is nan, which fails the comparison.
    CHECK(o.status == "found");
    CHECK_FALSE(o.pass);
    CHECK(o.too_few_runs);
    CHECK(std::isnan(o.submission_mean));
    CHECK(o.explanation.find("too few runs") != std::string::npos);
    CHECK(o.explanation.find(std::to_string(n) + " result file(s)") != std::string::npos);
    CHECK(o.explanation.find("requires 10") != std::string::npos);
    CHECK(o.explanation.find("faster") == std::string::npos);
    CHECK(o.explanation.find("nan") == std::string::npos);
  }
  RcpOutcome three = t.evaluate(runs(3, 14, 200), false);
  CHECK_FALSE(three.too_few_runs);
  CHECK(three.pass);
}

TEST_CASE("RcpTable: llama31_405b's own max speedup from ruleset 5.0.0") {
  // Expected figures come from the consortium's rcp_checker.py (mlperf_logging
  // 4.1.59) run on the same table: RCP_Checker("training", <ruleset>,
  // "llama31_405b", False, rcp_file=<this JSON>), then _find_rcp(bs,
  // 'pruned_rcps') (or _create_interp_rcp between its neighbours for BS 1512),
  // then _eval_submission_record(record, [epochs] * 3, ''), printing the
  // record's 'Max Speedup' afterwards and the returned pass flag.
  TempDir dir;
  std::string json = table({record("llama31_405b_ref_1008", "llama31_405b", 1008, 300000, 30000),
                            record("llama31_405b_ref_2016", "llama31_405b", 2016, 400000, 30000)});
  fs::path p = dir.path / "rcps_llama31_405b.json";
  std::ofstream(p, std::ios::binary | std::ios::trunc) << json;
  struct Row {
    const char* version;
    int64_t bs;
    double epochs;
    double max_speedup;
    bool pass;
  };
  static const Row rows[] = {
      {"4.1.0", 1008, 250000, 1.098741424031325, false},   {"4.1.0", 1008, 280000, 1.098741424031325, true},
      {"4.1.0", 1512, 280000, 1.0910252501771416, false},  {"5.0.0", 1008, 250000, 1.3218207225397278, true},
      {"5.0.0", 1512, 260000, 1.2740282879343976, false},  {"5.0.0", 1512, 280000, 1.2740282879343976, true},
      {"5.1.0", 1008, 250000, 1.3218207225397278, true},   {"5.1.0", 1512, 250000, 1.2740282879343976, false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.version);
    CAPTURE(r.bs);
    CAPTURE(r.epochs);
    RcpTable t;
    std::string error;
    REQUIRE_MESSAGE(t.load(p.string(), "llama31_405b", 3, &error, r.version), error);
    RcpOutcome o = t.evaluate(runs(3, r.epochs, r.bs, "llama31_405b"), false);
    CHECK(o.evaluated);
    CHECK(std::fabs(o.max_speedup - r.max_speedup) < 1e-9 * r.max_speedup);
    CHECK(o.pass == r.pass);
  }
  // Other benchmarks keep the record's max speedup in 5.0.0.
  RcpTable bert = load(dir, standard_table());
  CHECK(bert.eval_max_speedup(bert.pruned()[0]) == bert.pruned()[0].max_speedup);
}

TEST_CASE("version_at_least compares as the consortium's is_version_at_least") {
  CHECK(version_at_least("5.0.0", "5.0.0"));
  CHECK(version_at_least("5.1.0", "5.0.0"));
  CHECK(version_at_least("10.0.0", "5.0.0"));
  CHECK_FALSE(version_at_least("4.1.0", "5.0.0"));
  CHECK(version_at_least("5.0", "5.0.0"));
  CHECK_FALSE(version_at_least("", "5.0.0"));
  CHECK_FALSE(version_at_least("5.x.0", "5.0.0"));
}

TEST_CASE("RcpTable: no records") {
  TempDir dir;
  RcpTable t = load(dir, "{}");
  CHECK(t.records().empty());
  RcpOutcome o = t.evaluate(runs(10, 14, 200), false);
  CHECK(o.status == "no_rcps");
  CHECK(o.message == "Cannot find any RCPs");
  CHECK_FALSE(o.pass);
  CHECK_FALSE(t.evaluate(runs(10, 14, 200), true).pass);
}

TEST_CASE("RcpTable: load errors") {
  TempDir dir;
  RcpTable t;
  std::string error;
  CHECK_FALSE(t.load((dir.path / "nope.json").string(), "bert", 10, &error));
  CHECK(error.find("nope.json") != std::string::npos);
  {
    std::ofstream(dir.path / "bad.json") << R"({"bert_ref_1": {"Benchmark": "bert", "Epochs to converge": [1, 2, 3]}})";
  }
  RcpTable t2;
  CHECK_FALSE(t2.load((dir.path / "bad.json").string(), "bert", 10, &error));
  CHECK(error.find("bert_ref_1") != std::string::npos);
  {
    std::ofstream(dir.path / "notjson.json") << "[1, 2";
  }
  RcpTable t3;
  CHECK_FALSE(t3.load((dir.path / "notjson.json").string(), "bert", 10, &error));
}

}  // TEST_SUITE("rcp")
