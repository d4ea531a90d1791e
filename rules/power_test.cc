// The power checker and energy to train on small power folders built here.
// Expected values come from the consortium's code (mlperf_logging 4.1.59) run
// on the same layouts and logs: PowerChecker('4.0.0').check_power(power_dir,
// sorted result files) for the verdicts, and the summarizer's
// _compute_power_node / _compute_power_sw on parse_file() of each log for the
// energies. tests/power_package_test.cc runs the oracle itself on packages.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rules/power.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using referee::rules::check_power;
using referee::rules::run_energy;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

// result name -> files in power/<result>/ (nullopt: no power folder for it).
using Layout = std::map<std::string, std::optional<std::vector<std::string>>>;

std::vector<std::string> make(const fs::path& bench, const Layout& layout) {
  fs::create_directories(bench / "power");
  std::vector<std::string> files;
  for (const auto& [result, power] : layout) {
    write_file(bench / (result + ".txt"), "");
    files.push_back(result + ".txt");
    if (!power) continue;
    fs::create_directories(bench / "power" / result);
    for (const auto& f : *power) write_file(bench / "power" / result / f, "");
  }
  return files;
}

std::set<std::string> failing(const Layout& layout) {
  TempDir t;
  auto files = make(t.path / "bench", layout);
  return check_power((t.path / "bench").string(), files).failing;
}

std::string L(const std::string& key, const std::string& value, const std::string& t) {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + t + ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key +
         "\", \"value\": " + value + ", \"metadata\": {}}\n";
}

}  // namespace

TEST_SUITE("power") {
  TEST_CASE("every run with the same node and switch files passes") {
    CHECK(failing({{"result_0", {{"node_0.txt", "node_1.txt", "sw_0.txt"}}},
                   {"result_1", {{"node_0.txt", "node_1.txt", "sw_0.txt"}}}})
              .empty());
  }

  TEST_CASE("a run without a power folder does not comply") {
    TempDir t;
    auto files = make(t.path / "b", {{"result_0", {{"node_0.txt"}}}, {"result_1", std::nullopt}, {"result_2", {{"node_0.txt"}}}});
    auto pc = check_power((t.path / "b").string(), files);
    CHECK(pc.present);
    CHECK(pc.failing == std::set<std::string>{"result_1"});
    REQUIRE(pc.errors.size() == 1);
    CHECK(pc.errors[0].message.find("Package does not contain power result for result_1") != std::string::npos);
    CHECK(pc.consortium_stops.empty());
  }

  TEST_CASE("node numbers outside 0..n-1 fail; a repeated number does not (the consortium never fills its seen set)") {
    CHECK(failing({{"result_0", {{"node_-1.txt"}}}, {"result_1", {{"node_0.txt"}}}}) == std::set<std::string>{"result_0"});
    CHECK(failing({{"result_0", {{"node_0.txt", "node_0.log"}}}, {"result_1", {{"node_0.txt", "node_1.txt"}}}}).empty());
    CHECK(failing({{"result_0", {{"node_0.txt", "node_5.txt"}}}, {"result_1", {{"node_0.txt", "node_1.txt"}}}}) ==
          std::set<std::string>{"result_0"});
  }

  TEST_CASE("node counts: the first most frequent count wins, ties included") {
    // PowerChecker: tie -> (True, {'result_1'})
    CHECK(failing({{"result_0", {{"node_0.txt"}}}, {"result_1", {{"node_0.txt", "node_1.txt"}}}}) ==
          std::set<std::string>{"result_1"});
    // sw counts [1, 1, 0] and sw_1 out of range: (False, {'result_1', 'result_2'})
    CHECK(failing({{"result_0", {{"node_0.txt", "sw_0.txt"}}},
                   {"result_1", {{"node_0.txt", "sw_1.txt"}}},
                   {"result_2", {{"node_0.txt"}}}}) == std::set<std::string>{"result_1", "result_2"});
  }

  TEST_CASE("a miscounted run is named by its position among runs with a power folder, as the consortium does") {
    // PowerChecker: (False, {'result_0', 'result_1'}): result_2 has one node
    // file, but the checker blames result_1.
    TempDir t;
    auto files = make(t.path / "b", {{"result_0", std::nullopt},
                                     {"result_1", {{"node_0.txt", "node_1.txt"}}},
                                     {"result_2", {{"node_0.txt"}}},
                                     {"result_3", {{"node_0.txt", "node_1.txt"}}}});
    auto pc = check_power((t.path / "b").string(), files);
    CHECK(pc.failing == std::set<std::string>{"result_0", "result_1"});
    bool explained = false;
    for (const auto& e : pc.errors) explained |= e.hint.find("power/result_2") != std::string::npos;
    CHECK(explained);
  }

  TEST_CASE("where the consortium's checker raises, referee reports it and fails the runs") {
    // An empty power/ folder: max() of an empty sequence (ValueError).
    TempDir t;
    auto files = make(t.path / "b", {{"result_0", std::nullopt}, {"result_1", std::nullopt}});
    auto pc = check_power((t.path / "b").string(), files);
    CHECK(pc.failing.size() == 2);
    CHECK(pc.consortium_stops.find("max() arg is an empty sequence") != std::string::npos);
    // node_a.txt: int('a') raises ValueError.
    TempDir u;
    files = make(u.path / "b", {{"result_0", {{"node_0.txt", "node_a.txt"}}}, {"result_1", {{"node_0.txt", "node_1.txt"}}}});
    pc = check_power((u.path / "b").string(), files);
    CHECK(pc.failing == std::set<std::string>{"result_0"});
    CHECK(pc.consortium_stops.find("invalid literal for int()") != std::string::npos);
  }

  TEST_CASE("no power entry: nothing checked") {
    TempDir t;
    write_file(t.path / "b" / "result_0.txt", "");
    auto pc = check_power((t.path / "b").string(), {"result_0.txt"});
    CHECK_FALSE(pc.present);
    CHECK(pc.failing.empty());
  }

  TEST_CASE("energy: node readings sorted by time, integrated over the window, scaled to time to train; switches") {
    TempDir t;
    fs::path b = t.path / "b";
    // _compute_power_node(.., 8000.0) == 1080.9; _compute_power_sw(.., 8000.0) == 200.0
    write_file(b / "power" / "result_0" / "node_0.txt",
               L("power_measurement_start", "null", "1000") + L("conversion_eff", "0.9", "1000") +
                   L("power_reading", "100", "2000") + L("power_reading", "200", "4000") +
                   L("power_reading", "300.5", "3000") + L("power_measurement_stop", "null", "5000") +
                   L("power_reading", "999", "6000"));
    write_file(b / "power" / "result_0" / "sw_0.txt",
               L("conversion_eff", "0.5", "0") + L("interconnect_power_est", "50", "0") +
                   L("interconnect_power_est", "70", "0"));
    auto e = run_energy(b.string(), "result_0.txt", 8000.0);
    REQUIRE(e.ok);
    CHECK(e.nodes == 1);
    CHECK(e.switches == 1);
    CHECK(e.joules == doctest::Approx(1080.9 + 200.0).epsilon(1e-15));
  }

  TEST_CASE("energy: without power_measurement_stop the last reading ends the window, with a warning") {
    TempDir t;
    fs::path b = t.path / "b";
    // _compute_power_node(.., 8000.0) == 1200.0 (and its "Power stop not found" warning)
    write_file(b / "power" / "result_0" / "node_0.txt",
               L("power_measurement_start", "null", "1000") + L("power_reading", "100", "2000") +
                   L("power_reading", "200", "3000"));
    auto e = run_energy(b.string(), "result_0.txt", 8000.0);
    REQUIRE(e.ok);
    CHECK(e.joules == 1200.0);
    REQUIRE(e.warnings.size() == 1);
    CHECK(e.warnings[0].find("power_measurement_stop") != std::string::npos);
  }

  TEST_CASE("energy: every input the summarizer raises on gives a reason instead") {
    TempDir t;
    fs::path b = t.path / "b";
    auto reason = [&](const std::string& node) {
      write_file(b / "power" / "result_0" / "node_0.txt", node);
      auto e = run_energy(b.string(), "result_0.txt", 8000.0);
      CHECK_FALSE(e.ok);
      return e.error;
    };
    CHECK(reason(L("power_reading", "100", "2000")).find("no power_measurement_start") != std::string::npos);
    CHECK(reason(L("power_measurement_start", "null", "5") + L("power_measurement_stop", "null", "5"))
              .find("ZeroDivisionError") != std::string::npos);
    CHECK(reason(L("power_measurement_start", "null", "1") + L("power_reading", "\"100\"", "2"))
              .find("TypeError") != std::string::npos);
    CHECK(reason(L("power_measurement_start", "null", "1") + L("conversion_eff", "null", "1") +
                 L("power_measurement_stop", "null", "2"))
              .find("conversion_eff") != std::string::npos);
    CHECK(reason(":::MLLOG {\"time_ms\": 1, \"key\": \"power_reading\", \"metadata\": {}}\n").find("KeyError") !=
          std::string::npos);
    fs::remove_all(b / "power" / "result_0");
    fs::create_directories(b / "power" / "result_0");
    auto e = run_energy(b.string(), "result_0.txt", 8000.0);
    CHECK_FALSE(e.ok);
    CHECK(e.error.find("no power/result_0/node_*.txt") != std::string::npos);
  }
}
