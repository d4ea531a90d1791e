// Power results in a real package, side by side with the consortium's tools.
//
// The reference data has no power results, so the test builds them: a copy of
// training_results_v3.1/Azure+NVIDIA (gpt3, three runs) gets
// power/result_<n>/node_<k>.txt logs (a reading every second over the run's
// window, from run_start to run_stop) and a switch estimate, then variants of
// it are checked and scored by referee and, when Debian's python3 with
// pandas, scipy and yaml is there, by the consortium's package checker and
// result summarizer (on their own copies: they write into the package). The
// figures below (ORACLE_*) are what those tools printed for the same packages
// (mlperf_logging 4.1.59, `python3 -m mlperf_logging.package_checker DIR
// training 3.1.0` and `... result_summarizer DIR training 3.1.0 --csv out.csv`,
// column gpt3:Energy of out_detailed.csv); without Python the test compares
// with them instead.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using referee::testing::read_file;
using referee::testing::run_referee;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

const char* kOracleBaseEnergy = "2577227.307";  // gpt3:Energy of the base package

long long time_of(const std::string& log, const std::string& key) {
  size_t k = log.find("\"key\": \"" + key + "\"");
  REQUIRE(k != std::string::npos);
  size_t line = log.rfind('\n', k);
  size_t t = log.find("\"time_ms\": ", line == std::string::npos ? 0 : line);
  return std::atoll(log.c_str() + t + 11);
}

std::string mllog_line(const std::string& key, const std::string& value, long long t, const std::string& meta = "{}") {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(t) +
         ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value +
         ", \"metadata\": " + meta + "}\n";
}

// The base package: every run has node_0, node_1 and sw_0.
fs::path gpt3_dir(const fs::path& pkg) { return pkg / "results" / "ND_H100_v5_n1344_pytorch" / "gpt3"; }

void make_power_package(const fs::path& pkg) {
  fs::copy(referee::testing::reference_dir() + "/mlperf/training_results_v3.1/Azure+NVIDIA", pkg,
           fs::copy_options::recursive);
  for (auto& e : fs::recursive_directory_iterator(pkg))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  // The summarizer's private id for the system (its --generate_private_ids writes such files).
  write_file(pkg / "results" / "ND_H100_v5_n1344_pytorch" / "privateid.json", "{\"private_id\": \"alpha-bravo-charlie-delta\"}");
  fs::path d = gpt3_dir(pkg);
  for (int r = 0; r < 3; ++r) {
    std::string name = "result_" + std::to_string(r);
    std::string log = read_file(d / (name + ".txt"));
    long long start = time_of(log, "run_start"), stop = time_of(log, "run_stop");
    for (int k = 0; k < 2; ++k) {
      std::string text = mllog_line("power_measurement_start", "null", start) + mllog_line("conversion_eff", "0.95", start);
      long long t = start;
      for (int i = 1; t < stop; ++i) {
        t = std::min(t + 1000, stop);
        text += mllog_line("power_reading", std::to_string(5000 + 10 * k + i % 7), t,
                           "{\"host\": \"node_" + std::to_string(k) + "\"}");
      }
      text += mllog_line("power_measurement_stop", "null", stop);
      write_file(d / "power" / name / ("node_" + std::to_string(k) + ".txt"), text);
    }
    write_file(d / "power" / name / "sw_0.txt", mllog_line("interconnect_power_est", "1200.5", start, "{\"host\": \"sw_0\"}"));
  }
}

bool have_oracle() {
  return std::system("/usr/bin/python3 -c 'import numpy, scipy, pandas, yaml' >/dev/null 2>&1") == 0;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Variant {
  std::string name;
  std::string mutate;          // shell command run in the gpt3 folder
  bool oracle_pass;            // the package checker's verdict (ORACLE)
  std::string oracle_energy;   // gpt3:Energy, "" where the summarizer raises (ORACLE)
  std::string summarizer_raises;  // the exception it raises, where it does (ORACLE)
};

// What the consortium's tools said on these variants (see the top of the file).
const std::vector<Variant> kVariants = {
    {"base", "true", true, kOracleBaseEnergy, ""},
    {"one run without power", "rm -r power/result_1", true, "", "AssertionError"},
    {"two runs without power", "rm -r power/result_1 power/result_2", false, "", "AssertionError"},
    // result_2 is the slowest run: the olympic window leaves result_0, whose logs are whole.
    {"one run with a node log missing", "rm power/result_2/node_1.txt", true, kOracleBaseEnergy, ""},
    {"no switch logs", "rm power/result_0/sw_0.txt power/result_1/sw_0.txt power/result_2/sw_0.txt", true,
     "2288495.052", ""},
    {"node log without power_measurement_start", "sed -i /power_measurement_start/d power/result_1/node_0.txt", true, "",
     "ValueError"},
};

}  // namespace

TEST_SUITE("power") {
  TEST_CASE("power packages: referee's verdicts and energy to train equal the consortium's") {
    if (!referee::testing::have_reference_data()) return;
    if (referee::testing::kSanitized) MESSAGE("sanitizer build: comparing with the recorded figures (the release build runs the consortium's tools)");
    bool oracle = !referee::testing::kSanitized && have_oracle();
    if (!oracle && !referee::testing::kSanitized && std::getenv("CI"))
      FAIL("the consortium's tools need Debian's python3 with python3-numpy/-scipy/-pandas/-yaml; CI must have them");
    if (!oracle) MESSAGE("the consortium's tools need Debian's python3-numpy/-scipy/-pandas/-yaml: comparing with recorded figures");
    TempDir t;
    make_power_package(t.path / "base");
    std::string rules = referee::testing::reference_rules();
    std::string py = "cd {d} && PYTHONPATH=" + shell_quote(referee::testing::reference_dir() + "/mlperf/logging") +
                     " /usr/bin/python3 -m mlperf_logging.";
    std::string oracle_cmd;
    for (size_t i = 0; i < kVariants.size(); ++i) {
      fs::path pkg = t.path / ("v" + std::to_string(i));
      fs::copy(t.path / "base", pkg, fs::copy_options::recursive);
      REQUIRE(std::system(("cd " + shell_quote(gpt3_dir(pkg).string()) + " && " + kVariants[i].mutate).c_str()) == 0);
      if (oracle) {
        // Each tool on its own copy, all at once.
        for (const char* tool : {"pc", "rs"}) {
          fs::path copy = t.path / (std::string(tool) + std::to_string(i));
          fs::copy(pkg, copy, fs::copy_options::recursive);
          std::string c = py;
          c.replace(c.find("{d}"), 3, shell_quote(copy.string()));
          c += std::string(tool) == "pc" ? "package_checker . training 3.1.0" : "result_summarizer . training 3.1.0 --csv out.csv";
          oracle_cmd += "(" + c + " > out.txt 2>&1; echo $? > rc.txt) &\n";
        }
      }
    }
    if (oracle) REQUIRE(std::system(("{\n" + oracle_cmd + "wait\n} >/dev/null 2>&1").c_str()) == 0);

    for (size_t i = 0; i < kVariants.size(); ++i) {
      const Variant& v = kVariants[i];
      CAPTURE(v.name);
      fs::path pkg = t.path / ("v" + std::to_string(i));
      std::string out;
      int rc = run_referee("check-package " + shell_quote(pkg.string()) + " --ruleset training-3.1.0 --rules " +
                               shell_quote(rules) + " -j 2",
                           &out);
      CAPTURE(out);
      CHECK(rc == (v.oracle_pass ? 0 : 1));
      std::string json;
      int src = run_referee("score " + shell_quote(pkg.string()) + " --ruleset training-3.1.0 --rules " + shell_quote(rules) +
                                " --json -j 2",
                            &json);
      CAPTURE(json);
      CHECK(src == 0);
      std::string csv;
      CHECK(run_referee("score " + shell_quote(pkg.string()) + " --ruleset training-3.1.0 --rules " + shell_quote(rules) +
                            " --csv-detailed -j 2",
                        &csv) == 0);
      std::string summary;
      CHECK(run_referee("score " + shell_quote(pkg.string()) + " --ruleset training-3.1.0 --rules " + shell_quote(rules) +
                            " --csv -j 2",
                        &summary) == 0);
      CHECK(summary.find(",alpha-bravo-charlie-delta,") != std::string::npos);
      std::string human;
      CHECK(run_referee("score " + shell_quote(pkg.string()) + " --ruleset training-3.1.0 --rules " + shell_quote(rules) +
                            " -j 2",
                        &human) == 0);
      CAPTURE(human);
      CHECK(human.find("energy to train") != std::string::npos);
      if (!v.summarizer_raises.empty()) {
        // The consortium's summarizer stops with a traceback; referee names the cause.
        CHECK(json.find("\"energy_joules\": null") != std::string::npos);
        CHECK(json.find(v.summarizer_raises) != std::string::npos);
        CHECK(human.find("energy to train: none") != std::string::npos);
      }
      if (!v.oracle_energy.empty()) CHECK(json.find("\"energy_joules\": " + v.oracle_energy + ",") != std::string::npos);
      if (!oracle) continue;
      fs::path pc = t.path / ("pc" + std::to_string(i)), rs = t.path / ("rs" + std::to_string(i));
      std::string pc_out = read_file(pc / "out.txt"), rs_out = read_file(rs / "out.txt");
      CAPTURE(pc_out);
      CAPTURE(rs_out);
      CHECK((pc_out.find("PACKAGE CHECKER FOUND NO ERRORS") != std::string::npos) == v.oracle_pass);
      if (!v.summarizer_raises.empty()) {
        CHECK(std::atoi(read_file(rs / "rc.txt").c_str()) != 0);
        CHECK(rs_out.find(v.summarizer_raises) != std::string::npos);
        continue;
      }
      // The whole detailed row, energy included, as the summarizer writes it.
      std::string detailed = read_file(rs / "out_detailed.csv");
      REQUIRE_FALSE(detailed.empty());
      CHECK(csv == detailed);
      CHECK(summary == read_file(rs / "out.csv"));
      if (!v.oracle_energy.empty()) CHECK(detailed.find("," + v.oracle_energy + ",") != std::string::npos);
    }
  }
}
