// `referee run` and `referee system describe` as a user meets them: what a
// spec or a system description file gets refused for, and what the summary
// says of a run that failed (human and JSON).
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "harness/preflight.h"
#include "harness/run_output.h"
#include "rules/interp.h"
#include "rules/value.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"

namespace fs = std::filesystem;
using referee::testing::run_referee;

namespace {

struct Dir {
  fs::path path;
  Dir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("referee-runcli-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~Dir() {
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

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("referee run: a bad backend option, a missing benchmark: exit 2 with file:line, before any run or seed") {
    Dir d;
    fs::path spec = d.path / "spec.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nruns: 1\nbackend_options: {max_epoch: \"7\"}\n";
    std::string out;
    int rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK_MESSAGE(out.find("spec.yaml:4: backend_options: unknown option 'max_epoch' for the builtin backend") != std::string::npos, out);
    CHECK(out.find("did you mean 'max_epochs'?") != std::string::npos);
    CHECK_FALSE(fs::exists(d.path / "out"));  // nothing written, no seed used
    std::ofstream(spec) << "ruleset: mini-1.0.0\nruns: 1\n";
    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK_MESSAGE(out.find("spec.yaml: the spec names no benchmark") != std::string::npos, out);
    // No rule set, or one that is no name: the spec and its line, and what to write.
    std::ofstream(spec) << "benchmark: minilm\nruns: 1\n";
    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK_MESSAGE(out.find("spec.yaml: the spec names no rule set: add a line such as 'ruleset: training-5.1.0'") !=
                      std::string::npos,
                  out);
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-9\nruns: 1\n";
    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK_MESSAGE(out.find("spec.yaml:2: ruleset: 'mini-9' is not a rule set name") != std::string::npos, out);
    // An unknown top-level field: the nearest known one.
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nparalel: 2\n";
    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "'", &out);
    CHECK_MESSAGE(rc == 2, out);
    CHECK_MESSAGE(out.find("spec.yaml:3: unknown field 'paralel' (did you mean 'parallel'?)") != std::string::npos, out);
    CHECK_FALSE(fs::exists(d.path / "out"));
    // A package that fails says why in the JSON summary too.
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: builtin\nruns: 2\n"
                        << "system_description: " << REFEREE_SOURCE_DIR << "/harness/workloads/specs/cpu_system.yaml\n";
    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "out").string() + "' --progress=json 2>/dev/null", &out);
    CHECK_MESSAGE(rc == 1, out);
    std::string last = out.substr(out.rfind("{\"type\":\"summary\""));
    CHECK_MESSAGE(last.find("\"package_pass\":false") != std::string::npos, last);
    CHECK_MESSAGE(last.find("\"package_problems\":[\"cpu_node/minilm: result count: ") != std::string::npos, last);
  }

  TEST_CASE("referee system describe refuses what referee run refuses: a field given twice, a count that is not one") {
    Dir d;
    fs::path sys = d.path / "sys.yaml";
    std::string out;
    std::ofstream(sys) << "system_name: a\nnumber_of_nodes: two\n";
    CHECK(run_referee("system describe --from '" + sys.string() + "'", &out) == 2);
    CHECK_MESSAGE(out.find("sys.yaml:2: 'number_of_nodes': expected a whole number from 1, found 'two'") != std::string::npos, out);
    std::ofstream(sys) << "accelerators_per_node: \"1\"\naccelerators_per_node: \"-1\"\n";
    CHECK(run_referee("system describe --from '" + sys.string() + "'", &out) == 2);
    CHECK_MESSAGE(out.find("sys.yaml:2: field 'accelerators_per_node' given twice (first on line 1)") != std::string::npos, out);
  }

  TEST_CASE("last_output_line: the last line with text, bounded, not cut inside a character") {
    CHECK(referee::harness::last_output_line("a\nTraceback\n  RuntimeError: boom  \n\n   \n") == "RuntimeError: boom");
    CHECK(referee::harness::last_output_line("") == "");
    CHECK(referee::harness::last_output_line("\n \n") == "");
    CHECK(referee::harness::last_output_line("only") == "only");
    std::string long_line = std::string(10, 'x') + "\xc3\xa9" + "yyyy";  // é at bytes 10-11
    CHECK(referee::harness::last_output_line(long_line, 11) == std::string(10, 'x') + "...");
    CHECK(referee::harness::last_output_line(std::string(500, 'z')).size() == referee::harness::kLastLineMax + 3);
  }

  TEST_CASE("referee run: a crash's reason quotes its last output line; others' text in caret notation; warnings in the JSON summary") {
    Dir d;
    std::string ex = example();
    // The example's system description with a field no tool knows: a warning.
    std::string sys = slurp(ex + "/systems/cpu_2x_example.json");
    REQUIRE(sys.find('{') != std::string::npos);
    sys.insert(sys.find('{') + 1, "\n    \"bogus_field\": \"x\",");
    std::ofstream(d.path / "sys.json") << sys;
    fs::path spec = d.path / "spec.yaml";
    std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\n"
                        << "system_description: sys.json\n"
                        << "command: [/bin/sh, -c, \"if [ {run} -eq 0 ]; then echo starting; "
                           "printf 'RuntimeError: bad\\\\007 value\\\\n\\\\n'; exit 1; fi; cat '"
                        << ex << "/results/cpu_2x_example/minilm/result_{run}.txt'\"]\n";
    std::string out;
    int rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "h").string() + "' --progress=plain", &out);
    CHECK_MESSAGE((rc == 0 || rc == 1), out);
    CHECK_MESSAGE(out.find("its last output line: \"RuntimeError: bad^G value\"") != std::string::npos, out);
    CHECK(out.find('\a') == std::string::npos);
    CHECK_MESSAGE(out.find("warnings (1):") != std::string::npos, out);

    rc = run_referee("run '" + spec.string() + "' --out '" + (d.path / "j").string() + "' --progress=json", &out);
    CHECK_MESSAGE((rc == 0 || rc == 1), out);
    std::string last;
    std::istringstream lines(out);
    for (std::string l; std::getline(lines, l);)
      if (!l.empty() && l[0] == '{') last = l;
    bool ok = false;
    std::string err;
    referee::rules::Value v = referee::rules::value_from_json(last, &ok, &err);
    REQUIRE_MESSAGE(ok, err << ": " << last);
    REQUIRE(v.d().find_str("type")->s() == "summary");
    const auto* warnings = v.d().find_str("warnings");
    REQUIRE(warnings != nullptr);
    REQUIRE(warnings->items().size() == 1);
    CHECK(warnings->items()[0].s().find("unknown field 'bogus_field'") != std::string::npos);
    bool quoted = false;
    for (const auto& r : v.d().find_str("runs")->items())
      if (r.d().find_str("run")->s() == "minilm-0")
        quoted = r.d().find_str("left_out")->s().find("its last output line: \"RuntimeError: bad\a value\"") != std::string::npos;
    CHECK_MESSAGE(quoted, last);
  }

  TEST_CASE("referee run: memory stays bounded by a line, not the log: 120 MB of output, a 150 MB line without end") {
    Dir d;
    std::string ex = example();
    // Under the sanitizers freed memory is held in quarantine: the figure is only asserted in the plain build.
    const long limit_kb = referee::testing::kSanitized ? 0 : 100 * 1024;
    auto spec_with = [&](const std::string& name, const std::string& command, int timeout) {
      fs::path spec = d.path / (name + ".yaml");
      std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\nruns: 1\norg: ExampleOrg\n"
                          << "system_description: " << ex << "/systems/cpu_2x_example.json\n"
                          << (timeout ? "timeout: " + std::to_string(timeout) + "\n" : std::string())
                          << "command: [/bin/sh, -c, \"" << command << "\"]\n";
      return spec;
    };
    const std::string chatter = "yes 'step 12 loss 3.1 lr 0.001 and more words of progress chatter' | head -c 120000000";
    // The log after the chatter, with a pause after its first MLLOG line: that
    // line is checked alone, so the line after it (submission_benchmark, which
    // enqueues the benchmark's rules) comes late and reads all before it again.
    const std::string result = "'" + ex + "/results/cpu_2x_example/minilm/result_0.txt'";
    const std::string log = "(head -n 3 " + result + "; sleep 1; tail -n +4 " + result + ")";
    for (bool file : {false, true}) {
      INFO((file ? "the command names {log}" : "the log is what it prints"));
      fs::path spec = file ? spec_with("tofile", chatter + " >> {log}; " + log + " >> {log}", 0)
                           : spec_with("printed", chatter + "; " + log, 0);
      std::string out;
      long rss = 0;
      fs::path o = d.path / (file ? "f" : "p");
      int rc = referee::testing::run_referee_measured("run '" + spec.string() + "' --out '" + o.string() + "'", &out, &rss);
      REQUIRE_MESSAGE((rc == 0 || rc == 1), out);  // 1: one result of the five the package needs
      fs::path result = o / "ExampleOrg/results/cpu_2x_example/minilm/result_0.txt";
      REQUIRE(fs::exists(result));
      CHECK(fs::file_size(result) > 120000000);
      MESSAGE("peak memory " << rss / 1024 << " MB for a log of " << fs::file_size(result) / 1000000 << " MB");
      if (limit_kb) CHECK(rss < limit_kb);
    }
    // A line that never ends: cut at 1 MiB in the kept log, and the timeout still ends the run.
    fs::path spec = spec_with("endless", "head -c 150000000 /dev/zero | tr '\\\\000' x; sleep 600", 4);
    std::string out;
    long rss = 0;
    auto t0 = std::chrono::steady_clock::now();
    int rc = referee::testing::run_referee_measured("run '" + spec.string() + "' --out '" + (d.path / "e").string() + "'", &out, &rss);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK_MESSAGE(rc == 1, out);
    CHECK_MESSAGE(out.find("timed out") != std::string::npos, out);
    CHECK(took < 120);
    MESSAGE("peak memory " << rss / 1024 << " MB for a line of 150 MB");
    if (limit_kb) CHECK(rss < limit_kb);
    std::string kept;
    for (const auto& e : fs::recursive_directory_iterator(d.path / "e"))
      if (e.path().filename() == "minilm-0.log") kept = slurp(e.path());
    CHECK(kept.size() < 2 * 1024 * 1024);
    CHECK(kept.find("[referee: this line is longer than 1048576 bytes; 148951424 more bytes of it were not kept]") !=
          std::string::npos);
  }

  TEST_CASE("referee run: what would fail every run ends with exit 2 and one message before any run, seed or file") {
    Dir d;
    std::string ex = example();
    auto attempt = [&](const std::string& name, const std::string& fields) {
      fs::path spec = d.path / (name + ".yaml");
      std::ofstream(spec) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\n"
                          << "system_description: " << ex << "/systems/cpu_2x_example.json\n" << fields;
      std::string out;
      fs::path o = d.path / ("out-" + name);
      int rc = run_referee("run '" + spec.string() + "' --out '" + o.string() + "'", &out);
      CHECK_MESSAGE(rc == 2, out);
      CHECK_MESSAGE(!fs::exists(o), out);  // nothing written
      CHECK_MESSAGE(out.find("could not start") == std::string::npos, out);
      CHECK_MESSAGE(out.find("RCP") == std::string::npos, out);
      return out;
    };
    std::string out = attempt("typo", "command: [pyhton3, train.py]\n");
    CHECK_MESSAGE(out.find("referee run: the command's program pyhton3 is not found on PATH (") != std::string::npos, out);
    CHECK(out.find("(nothing was run, no seed given out)\nhint: fix 'command' in the spec") != std::string::npos);
    out = attempt("script", "command: [python3, train.py, --seed, \"{seed}\"]\n");
    CHECK_MESSAGE(out.find("the script train.py that python3 is to run does not exist (in ") != std::string::npos, out);
    out = attempt("relative", "command: [./nope.sh]\n");
    CHECK_MESSAGE(out.find("the command's program ./nope.sh does not exist (in ") != std::string::npos, out);
    out = attempt("placeholder", "command: [/bin/sh, -c, \"train --seed {sed}\"]\n");
    CHECK_MESSAGE(out.find("placeholder.yaml:6: 'command': unknown placeholder {sed} in 'train --seed {sed}' (did you mean "
                           "{seed}?); the placeholders are {seed}, {run} and {log}") != std::string::npos, out);
    out = attempt("dry", "command: [cat, x]\ndry_start: [/bin/sh, -c, \"echo importing; echo 'ModuleNotFoundError: no "
                         "torchx' >&2; exit 3\"]\n");
    CHECK_MESSAGE(out.find("the dry start (/bin/sh -c 'echo importing; echo '\\''ModuleNotFoundError: no torchx'\\'' >&2; "
                           "exit 3') exited 3; its last output line: \"ModuleNotFoundError: no torchx\"") != std::string::npos,
                  out);
    // Braces that are not placeholders ({print} for awk) are left alone; a dry start that passes lets the runs go.
    fs::path ok = d.path / "ok.yaml";
    std::ofstream(ok) << "benchmark: minilm\nruleset: mini-1.0.0\nbackend: exec\norg: ExampleOrg\nruns: 1\n"
                      << "system_description: " << ex << "/systems/cpu_2x_example.json\n"
                      << "dry_start: [/bin/sh, -c, \"exit 0\"]\n"
                      << "command: [/bin/sh, -c, \"awk '{print}' " << ex << "/results/cpu_2x_example/minilm/result_0.txt\"]\n";
    int rc = run_referee("run '" + ok.string() + "' --out '" + (d.path / "ok").string() + "'", &out);
    CHECK_MESSAGE((rc == 0 || rc == 1), out);
    CHECK_MESSAGE(fs::exists(d.path / "ok/ExampleOrg/results/cpu_2x_example/minilm/result_0.txt"), out);
  }

  TEST_CASE("preflight: the output folder's room is what the runs need, from the package's own results") {
    Dir d;
    CHECK(referee::harness::output_problem((d.path / "new" / "out").string(), (d.path / "none").string(), 5).empty());
    std::string p = referee::harness::output_problem(d.path.string(), (d.path / "none").string(), 100000000);
    CHECK_MESSAGE(p.find("the output folder " + d.path.string() + " has ") == 0, p);
    CHECK_MESSAGE(p.find(" free, and 100000000 run(s) need about ") != std::string::npos, p);
    fs::create_directories(d.path / "res");
    std::ofstream(d.path / "res" / "result_0.txt") << std::string(3 << 20, 'x');
    p = referee::harness::output_problem(d.path.string(), (d.path / "res").string(), 100000000);
    CHECK_MESSAGE(p.find("(logs of about 3 MB each") != std::string::npos, p);
    std::ofstream(d.path / "file") << "x";
    p = referee::harness::output_problem((d.path / "file" / "out").string(), "", 1);
    CHECK_MESSAGE(p.find("is not a folder") != std::string::npos, p);
  }
}
