// rules/scoring.h: the olympic mean and time to train, and that every caller
// (score, the review's score impact, the reports' head-to-head difference)
// gives the same olympic mean on the same run times, for every benchmark of
// every training round 3.0 to 5.1.
#include "rules/scoring.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "base/text.h"
#include "mllog/reader.h"
#include "reports/pages.h"
#include "rules/score.h"
#include "submissions/queries.h"
#include "tests/reference_data.h"
#include "tests/review_fixture.h"

namespace {

using namespace referee;
using referee::testing::have_reference_data;
using referee::testing::reference_rules;
namespace rf = referee::testing::review_fixture;

mllog::ParsedLog parse_log(const std::string& text) {
  mllog::LogReader reader;
  mllog::ParsedLog log;
  reader.parse(text, &log);
  return log;
}

std::string line(const std::string& key, long long t, const std::string& metadata = "{}") {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(t) + ", \"event_type\": \"INTERVAL_END\", \"key\": \"" +
         key + "\", \"value\": null, \"metadata\": " + metadata + "}\n";
}

// A result's run times in minutes as score_package takes them: whole
// milliseconds from run_start to run_stop, / 60 / 1000.
std::vector<double> minutes_of(const std::vector<long long>& ms) {
  std::vector<double> out;
  for (long long m : ms) out.push_back(static_cast<double>(m) / 60 / 1000);
  return out;
}

// The run times (ms) of a result with `n` runs: spread out, unsorted, with a
// tie, so that the window and the order of summing both matter.
std::vector<long long> run_ms(int n, long long base) {
  std::vector<long long> out;
  for (int i = 0; i < n; ++i) out.push_back(base + ((i * 7919) % 13) * 1234 + (i % 3 == 0 ? 0 : 17 * i));
  if (n >= 4) out[3] = out[1];  // a tie
  return out;
}

// score_package's unscaled olympic mean for results of `benchmark` with the
// given run times: one benchmark directory per result, every run compliant.
std::vector<rules::BenchmarkScore> scores_of(const rules::RoundFacts& facts, const std::string& benchmark,
                                             const std::vector<std::vector<long long>>& results) {
  rules::PackageReport report;
  report.package = "Org";
  report.path = "/nonexistent/referee-scoring-test";
  for (size_t k = 0; k < results.size(); ++k) {
    rules::BenchmarkDir d;
    d.system = "sys" + std::to_string(k);
    d.benchmark = benchmark;
    d.path = report.path + "/results/" + d.system + "/" + benchmark;
    for (size_t i = 0; i < results[k].size(); ++i) {
      rules::ResultFile f;
      f.name = "result_" + std::to_string(i) + ".txt";
      f.has_times = true;
      f.run_starts = 1;
      f.run_start_ms = f.first_run_start_ms = 1000;
      f.run_stop_ms = 1000 + static_cast<double>(results[k][i]);
      d.files.push_back(f);
    }
    report.benchmarks.push_back(d);
  }
  rules::ScoreReport s = rules::score_package(report, facts, rules::ScaleMode::Published);
  std::vector<rules::BenchmarkScore> out;
  for (const auto& row : s.rows)
    for (const auto& b : row.scores) out.push_back(b);
  REQUIRE(out.size() == results.size());
  return out;
}

// The review fixture's store with one more round in review, `ruleset`
// (NVIDIA and Google submitted), and NVIDIA's result `benchmark` in it with
// runs `minutes` plus one extra run (result_<n>.txt, 999 min). Returns the
// impact of an objection that drops that extra run: the olympic mean of
// exactly `minutes` (score = unscaled: no factor). NaN when not scorable.
double objection_impact(rf::Review& f, const std::string& ruleset, const std::string& benchmark,
                        const std::vector<double>& minutes) {
  long long round_id = 0;
  {
    submissions::Stmt q(f.s->db(), "SELECT id FROM rounds WHERE name = ?1");
    q.bind(1, ruleset);
    if (q.step()) round_id = q.col_int(0);
  }
  if (!round_id) {
    int major = ruleset[9] - '0', minor = ruleset[11] - '0';
    round_id = f.round(ruleset, major * 1000000LL + minor * 1000LL);
  }
  f.exec("INSERT OR IGNORE INTO round_reviews (round_id, state) VALUES (" + std::to_string(round_id) + ", 'review')");
  f.exec("UPDATE round_reviews SET state = 'review' WHERE round_id = " + std::to_string(round_id));
  static int systems = 0;
  std::string system = "sys" + std::to_string(++systems);
  {
    submissions::Stmt q(f.s->db(),
                        "SELECT p.id FROM packages p JOIN organisations o ON o.id = p.organisation_id "
                        "WHERE p.round_id = ?1 AND o.name = 'NVIDIA'");
    q.bind(1, round_id);
    long long nv = q.step() ? q.col_int(0) : f.package(round_id, "NVIDIA", "/nowhere/NVIDIA");
    std::vector<double> runs = minutes;
    runs.push_back(999);
    f.result(nv, system, benchmark, 1.0, 1.0, 0, 1, runs);
    submissions::Stmt g(f.s->db(),
                        "SELECT p.id FROM packages p JOIN organisations o ON o.id = p.organisation_id "
                        "WHERE p.round_id = ?1 AND o.name = 'Google'");
    g.bind(1, round_id);
    if (!g.step()) f.package(round_id, "Google", "/nowhere/Google");
  }
  std::string version = ruleset.substr(9);
  rf::Response r = f.call("goog", "POST", "/api/v1/objections",
                          R"({"round":")" + version + R"(","against":"NVIDIA","results":["NVIDIA/)" + system + "/" + benchmark +
                              R"("],"title":"t","rule":"r","drop_runs":["result_)" + std::to_string(minutes.size()) +
                              R"(.txt"]})");
  REQUIRE_MESSAGE(r.status == 201, r.body);
  const mllog::Json body = rf::parse(r.body);  // m points into it
  const mllog::Json* m = body.find("objection")->find("impact")->find("minutes");
  if (m->kind == mllog::Json::Kind::Null) return NAN;
  return m->kind == mllog::Json::Kind::Int ? static_cast<double>(m->i) : m->f;
}

std::vector<double> ones(size_t n) { return std::vector<double>(n, 1.0); }

}  // namespace

TEST_SUITE("scoring") {
  TEST_CASE("score --csv rows come in the summarizer's order: every column's value, text by characters, numbers by value, empty last") {
    using referee::rules::BenchmarkScore;
    using referee::rules::ScoreReport;
    using referee::rules::SystemRow;
    ScoreReport r;
    r.benchmarks = {"bert", "gpt3"};
    auto row = [&](const std::string& sys, const std::string& avail, long long acc, bool bert, double bert_min) {
      SystemRow x;
      x.system_file = sys;
      x.division = "closed";
      x.availability = avail;
      x.submitter = "Org";
      x.system = sys;
      x.accelerators_count = acc;
      BenchmarkScore b;
      b.benchmark = "bert";
      b.has_score = bert;
      b.score = bert_min;
      x.scores.push_back(b);
      r.rows.push_back(x);
    };
    // In folder order: the summarizer sorts by division, availability, submitter, system, ...
    row("a_sys", "preview", 8, true, 5.0);
    row("b_sys", "onprem", 64, true, 1.5);
    row("c_sys", "onprem", 8, false, 0);
    row("Z_sys", "onprem", 8, true, 2.0);
    row("\xc3\x9c_sys", "onprem", 8, true, 2.0);  // Ü sorts after every ASCII letter, as in Python
    const std::string csv = referee::rules::scores_csv(r, false);
    std::vector<std::string> systems;
    for (const auto& line : referee::base::split(csv, '\n'))
      if (!line.empty()) systems.push_back(referee::base::split(line, ',')[3]);
    CHECK(systems == std::vector<std::string>{"Z_sys", "b_sys", "c_sys", "\xc3\x9c_sys", "a_sys"});
    // Numbers by value: 8 before 64 accelerators; and across packages the rows sort together.
    ScoreReport other = r;
    other.rows.erase(other.rows.begin() + 1, other.rows.end());
    other.rows[0].system = other.rows[0].system_file = "0_first";
    other.rows[0].availability = "cloud";
    const std::string both = referee::rules::summary_csv({&r, &other});
    CHECK(both.find("0_first") < both.find("Z_sys"));
  }

  TEST_CASE("the olympic mean: its window, too few runs, runs already dropped, NaN") {
    using rules::olympic_mean;
    CHECK(olympic_mean({1, 2, 3, 4, 100}, 1) == doctest::Approx(3));
    CHECK(olympic_mean({100, 4, 3, 2, 1}, 1) == doctest::Approx(3));
    // Too few runs: none (the summarizer's None; score_package gives no score).
    // The head-to-head page used to take the plain mean of two runs (3 here).
    CHECK(std::isnan(olympic_mean({2, 4}, 1)));
    CHECK(std::isnan(olympic_mean({}, 1)));
    CHECK(std::isnan(olympic_mean({1, 2, 3, 4, 5, 6, 7, 8}, 4)));
    CHECK(olympic_mean({1, 2, 3, 4, 5, 6, 7, 8, 9}, 4) == 5);
    CHECK(olympic_mean({9, 1, 8, 2, 7, 3, 6, 4, 5, 10}, 4) == 5.5);
    CHECK(olympic_mean({5}, 0) == 5);
    // Runs already dropped (non-compliant) count at the slow end.
    CHECK(olympic_mean({1, 2, 3, 4, 5}, 1, 1) == doctest::Approx(3.5));  // 2 3 4 5
    CHECK(olympic_mean({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 4, 3) == 7);  // 5 6 7 8 9
    CHECK(std::isnan(olympic_mean({1, 2, 3, 4, 5}, 1, 2)));  // more than olympic scoring accepts
    rules::OlympicWindow w = rules::olympic_window(10, 4, 3);
    CHECK(w.lo == 4);
    CHECK(w.hi == 9);
    CHECK(rules::olympic_window(8, 4).empty());
    CHECK(rules::olympic_window(2, 1).size() == 0);
    // Summed left to right, then divided (Python's sum(...) * 1.0 / len(...)).
    std::vector<double> t = {0.1, 0.7, 0.2, 0.3, 0.9};
    CHECK(olympic_mean(t, 1) == ((0.2 + 0.3) + 0.7) / 3);
    // A NaN time is not taken out: sorted with `<`, as score_package sorted
    // the times; inside the window it makes the mean NaN.
    CHECK(olympic_mean({NAN, 1, 2, 3}, 1) == 1.5);
    CHECK(std::isnan(olympic_mean({1, 2, NAN, 3}, 1)));
  }

  TEST_CASE("time to train pairs run_start and run_stop as the result summarizer does") {
    // A relaunched run: the last run_start before the first run_stop counts.
    mllog::ParsedLog log = parse_log(line("run_start", 1000) + line("init_start", 1500) + line("run_start", 2000) +
                                     line("run_stop", 62000, R"({"status": "success"})") + line("run_start", 70000) +
                                     line("run_stop", 90000));
    rules::TimeToTrain t = rules::time_to_train(log);
    REQUIRE(t.has_times);
    CHECK(t.run_start_ms == 2000);
    CHECK(t.run_stop_ms == 62000);
    CHECK(t.ms() == 60000);
    CHECK(t.minutes() == 1.0);
    CHECK(t.run_starts == 3);
    CHECK(t.first_run_start_ms == 1000);
    CHECK(t.first_run_start_line == 1);
    CHECK(t.run_start_line == 3);
    CHECK(t.run_stop_event == 3);
    // run_stop before run_start: the latest of each until both have appeared.
    rules::TimeToTrain back = rules::time_to_train(parse_log(line("run_stop", 5000) + line("run_stop", 6000) +
                                                             line("run_start", 7000) + line("run_stop", 9000)));
    REQUIRE(back.has_times);
    CHECK(back.run_stop_ms == 6000);
    CHECK(back.run_start_ms == 7000);
    CHECK(back.run_stop_event == 1);
    // Only a run_start: no time to train.
    rules::TimeToTrain none = rules::time_to_train(parse_log(line("run_start", 7000)));
    CHECK_FALSE(none.has_times);
    CHECK(none.has_run_start);
    CHECK_FALSE(none.has_run_stop);
    CHECK(none.run_stop_event == -1);
    CHECK_FALSE(rules::time_to_train(parse_log("")).has_times);
  }

  TEST_CASE("score, an objection's impact and the head-to-head difference give the same olympic mean, rounds 3.0 to 5.1") {
    if (!have_reference_data()) return;
    rf::Review f;
    int benchmarks = 0;
    for (const char* ruleset :
         {"training-3.0.0", "training-3.1.0", "training-4.0.0", "training-4.1.0", "training-5.0.0", "training-5.1.0"}) {
      CAPTURE(ruleset);
      rules::RulesetId id;
      REQUIRE(rules::RulesetId::parse(ruleset, &id));
      std::string error;
      auto rs = rules::RuleSet::load(reference_rules(), id, &error, rules::LoadMode::Lazy);
      REQUIRE_MESSAGE(rs, error);
      rules::RoundFacts facts;
      REQUIRE_MESSAGE(rules::facts_for(*rs, &facts, &error), error);
      REQUIRE_FALSE(facts.benchmarks.empty());
      for (const auto& b : facts.benchmarks) {
        CAPTURE(b.name);
        ++benchmarks;
        // The benchmark is the consortium's: its rule set has its closed-division file.
        CHECK(std::filesystem::exists(reference_rules() + "/compliance_checker/" + id.dir() + "/closed_" + b.name + ".yaml"));
        const int drop = rules::olympic_drop(facts, b.name);
        CHECK(drop == (b.name == "unet3d" ? 4 : 1));
        // The reports and the review know the round by its name only.
        CHECK(rules::olympic_drop(ruleset, b.name) == drop);
        // Enough runs for the benchmark (10 for unet3d, 5 otherwise), and the
        // edge case of one run left in the window.
        const int n = drop == 1 ? 5 : 10;
        std::vector<long long> a_ms = run_ms(n, 600000), b_ms = run_ms(n, 660000), edge_ms = run_ms(2 * drop + 1, 630000);
        auto scores = scores_of(facts, b.name, {a_ms, b_ms, edge_ms});
        std::vector<double> a = minutes_of(a_ms), bm = minutes_of(b_ms), edge = minutes_of(edge_ms);
        for (const auto& s : scores) REQUIRE_MESSAGE(s.has_score, s.note);
        CHECK(scores[0].max_dropped == drop);
        // score_package counts exactly the window.
        int counted = 0;
        for (const auto& r : scores[0].runs) counted += r.counted ? 1 : 0;
        CHECK(counted == n - 2 * drop);
        CHECK(scores[0].unscaled == rules::olympic_mean(a, drop));
        CHECK(scores[2].unscaled == rules::olympic_mean(edge, drop));
        // Head-to-head: the difference of the two olympic means is the scores'.
        CHECK(reports::difference_percent(a, bm, drop) == 100.0 * (scores[1].unscaled / scores[0].unscaled - 1.0));
        CHECK(reports::difference_percent(ones(a.size()), bm, drop) ==
              doctest::Approx(100.0 * (scores[1].unscaled - 1.0)).epsilon(1e-12));
        CHECK(reports::difference_percent(edge, a, drop) == 100.0 * (scores[0].unscaled / scores[2].unscaled - 1.0));
        CHECK(reports::bootstrap_difference(a, bm, drop, 200).ok);
        // The review: an objection's impact when it leaves these runs.
        CHECK(objection_impact(f, ruleset, b.name, a) == doctest::Approx(scores[0].unscaled).epsilon(1e-12));
        CHECK(objection_impact(f, ruleset, b.name, edge) == doctest::Approx(scores[2].unscaled).epsilon(1e-12));
      }
    }
    CHECK(benchmarks == 8 + 9 + 9 + 7 + 7 + 7);
  }

  TEST_CASE("unet3d: the objection impact and the head-to-head drop 4 runs at each end, as the score does") {
    // Ten runs: 1 .. 10 minutes. Dropping 4 at each end leaves 5 and 6.
    std::vector<double> runs = {7, 1, 10, 3, 5, 9, 2, 6, 4, 8};
    CHECK(rules::olympic_drop("training-4.0.0", "unet3d") == 4);
    CHECK(rules::olympic_drop("training-3.1.0", "unet3d") == 4);
    CHECK(rules::olympic_drop("3.0.0", "unet3d") == 4);
    CHECK(rules::olympic_drop("training-3.1.0", "bert") == 1);
    CHECK(rules::olympic_drop("training-9.9.9", "unet3d") == 1);  // a round referee knows nothing of
    CHECK(rules::olympic_mean(runs, 4) == 5.5);
    // The head-to-head page takes the round's drop: 5.5 against 5.5 x 1.1.
    std::vector<double> slower;
    for (double r : runs) slower.push_back(r * 1.1);
    int drop = rules::olympic_drop("training-4.0.0", "unet3d");
    CHECK(reports::difference_percent(runs, slower, drop) == doctest::Approx(10.0));
    // Dropping one at each end (the old copy) would give 5.5 as well for this
    // symmetric set; an asymmetric one tells them apart.
    std::vector<double> skewed = {1, 1, 1, 1, 5, 6, 50, 60, 70, 80};
    CHECK(rules::olympic_mean(skewed, 4) == 5.5);
    CHECK(reports::difference_percent(ones(10), skewed, drop) == doctest::Approx(450.0));
    CHECK(reports::bootstrap_difference(ones(10), skewed, drop, 500).ok);
    // Too few runs for drop 4 (8): no interval, no difference.
    CHECK_FALSE(reports::bootstrap_difference(ones(8), skewed, drop).ok);
    CHECK(std::isnan(reports::difference_percent(ones(8), skewed, drop)));
    // The objection's impact: result NVIDIA/eos/unet3d of round 3.1 with the
    // skewed runs and one extra run the objection drops.
    rf::Review f;
    CHECK(objection_impact(f, "training-3.1.0", "unet3d", skewed) == doctest::Approx(5.5));
    // Nine runs are the fewest an olympic mean with drop 4 takes: with eight
    // left the objection's impact is not scorable.
    CHECK(std::isnan(objection_impact(f, "training-4.0.0", "unet3d", {1, 2, 3, 4, 5, 6, 7, 8})));
    CHECK(objection_impact(f, "training-4.0.0", "unet3d", {1, 2, 3, 4, 5, 6, 7, 8, 9}) == doctest::Approx(5));
  }

  TEST_CASE("the bootstrap interval is the one each resample sorted would give, to the last bit") {
    // The definition: each side resampled with splitmix64 in turn, each
    // resample sorted and its olympic mean taken; the interval the 2.5th and
    // 97.5th percentiles of the ratios.
    auto by_definition = [](const std::vector<double>& a, int da, const std::vector<double>& b, int db, int n,
                            uint64_t seed, int aa, int ab) {
      uint64_t state = seed;
      auto next = [&state]() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
      };
      std::vector<double> ratios, ra(a.size()), rb(b.size());
      for (int i = 0; i < n; ++i) {
        for (auto& x : ra) x = a[next() % a.size()];
        for (auto& x : rb) x = b[next() % b.size()];
        ratios.push_back(rules::olympic_mean(ra, da, aa) / rules::olympic_mean(rb, db, ab));
      }
      std::sort(ratios.begin(), ratios.end());
      auto at = [&](double q) {
        size_t k = static_cast<size_t>(std::floor(q * static_cast<double>(ratios.size() - 1) + 0.5));
        return ratios[std::min(k, ratios.size() - 1)];
      };
      return std::make_pair(at(0.025), at(0.975));
    };
    uint64_t lcg = 12345;
    auto uniform = [&lcg]() {
      lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(lcg >> 11) / 9007199254740992.0;
    };
    for (int trial = 0; trial < 60; ++trial) {
      int drop = trial % 3 == 0 ? 4 : 1;
      size_t na = static_cast<size_t>(2 * drop + 1 + trial % 9), nb = static_cast<size_t>(2 * drop + 1 + (trial * 7) % 11);
      std::vector<double> a, b;
      for (size_t i = 0; i < na; ++i) a.push_back(trial % 4 == 1 ? std::floor(uniform() * 3) + 10 : 10 + uniform());  // ties too
      for (size_t i = 0; i < nb; ++i) b.push_back(11 + uniform() * (trial % 5 + 1));
      int already = trial % 7 == 3 ? 1 : 0;
      auto want = by_definition(a, drop, b, drop, 400, 0x5eed2026ULL + static_cast<uint64_t>(trial), already, 0);
      auto got = rules::bootstrap_ratio(a, drop, b, drop, 400, 0x5eed2026ULL + static_cast<uint64_t>(trial), already, 0);
      CAPTURE(trial);
      REQUIRE(got.ok);
      CHECK(got.low == want.first);
      CHECK(got.high == want.second);
    }
    // A NaN time keeps the sorted path: still the definition's interval (NaN or not).
    std::vector<double> with_nan = {10, NAN, 11, 12, 13};
    auto want = by_definition(with_nan, 1, ones(5), 1, 200, 7, 0, 0);
    auto got = rules::bootstrap_ratio(with_nan, 1, ones(5), 1, 200, 7);
    CHECK(std::isnan(got.low) == std::isnan(want.first));
    if (!std::isnan(want.first)) CHECK(got.low == want.first);
  }
}
