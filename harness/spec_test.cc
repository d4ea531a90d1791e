// Workload specs: what load_spec accepts and what it refuses, with the reason.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "harness/spec.h"

namespace fs = std::filesystem;
using namespace referee::harness;

namespace {

fs::path spec_file(const std::string& body) {
  std::random_device rd;
  fs::path dir = fs::temp_directory_path() / ("referee-spec-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(dir);
  fs::path p = dir / "spec.yaml";
  std::ofstream(p) << "benchmark: minilm\nruleset: mini-1.0.0\n" << body;
  return p;
}

// The error load_spec gives for `body` after the two required lines; "" when it loads.
std::string refusal(const std::string& body, Spec* spec = nullptr) {
  Spec local;
  std::string error;
  fs::path p = spec_file(body);
  bool ok = load_spec(p.string(), spec ? spec : &local, &error);
  fs::remove_all(p.parent_path());
  return ok ? "" : error;
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("spec: values out of range are refused with the file, line, field, what is expected and what was found") {
    struct Case {
      std::string body, field, found;
    };
    for (const Case& c : {Case{"runs: 0\n", "runs", "found 0"}, Case{"timeout: -5\n", "timeout", "found -5"},
                          Case{"parallel: 0\n", "parallel", "found 0"}, Case{"batch_size: 0\n", "batch_size", "found 0"},
                          Case{"seeds: [1, -2, 3]\n", "seeds", "found -2"}, Case{"seed_base: -1\n", "seed_base", "found -1"},
                          Case{"seeds: 5\n", "seeds", "found '5'"}, Case{"runs: 1001\n", "runs", "found 1001"}}) {
      CAPTURE(c.body);
      std::string e = refusal(c.body);
      CHECK(e.find("spec.yaml:3: ") != std::string::npos);
      CHECK(e.find("'" + c.field + "'") != std::string::npos);
      CHECK(e.find("expected") != std::string::npos);
      CHECK(e.find(c.found) != std::string::npos);
    }
    CHECK(refusal("runs: 0\n").find("expected an integer from 1 to 1000") != std::string::npos);
  }

  TEST_CASE("spec: a field given twice is refused, naming both lines (yaml-cpp alone would keep the last)") {
    std::string e = refusal("runs: 3\nparallel: 2\nruns: 5\n");
    CHECK(e.find("spec.yaml:5: ") != std::string::npos);
    CHECK(e.find("field 'runs' given twice (first on line 3)") != std::string::npos);
    std::string m = refusal("env: {A: \"1\", A: \"2\"}\n");
    CHECK(m.find("'env': key 'A' given twice") != std::string::npos);
  }

  TEST_CASE("spec: values in range load; seed_base 0 is a seed base, not 'derive one'; listed seeds are shown") {
    Spec s;
    REQUIRE(refusal("runs: 3\ntimeout: 60\nparallel: 2\nbatch_size: 128\nseed_base: 0\n", &s) == "");
    CHECK(s.runs == 3);
    CHECK(s.timeout_s == 60);
    CHECK(s.parallel == 2);
    CHECK(s.batch_size == 128);
    std::string error;
    REQUIRE(finalize_spec(&s, 5, &error));
    CHECK(s.seeds == std::vector<long long>{0, 1, 2});
    Spec p;
    REQUIRE(refusal("seeds: [11, 12, 13]\nenv: {A: \"1\"}\n", &p) == "");
    CHECK(p.effective["seeds"].first == "[11, 12, 13]");
    CHECK(p.effective["env"].first == "[A=1]");
  }
}
