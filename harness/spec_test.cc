// Workload specs: what load_spec accepts and what it refuses, with the reason.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "harness/spec.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee::harness;

namespace {

fs::path spec_file(const std::string& body) {
  // Inside a folder that is removed when the tests end.
  static referee::testing::TempDir parent("referee-spec-");
  static int n = 0;
  fs::path dir = parent.path / std::to_string(++n);
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

// What load_spec and then finalize_spec say of a spec (5 runs required).
std::string finalize_refusal(const std::string& body) {
  Spec spec;
  std::string error;
  fs::path p = spec_file(body);
  bool ok = load_spec(p.string(), &spec, &error) && finalize_spec(&spec, 5, &error);
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

  TEST_CASE("spec: backend_options are checked when the spec loads: known keys per backend, their values, file:line") {
    struct Case {
      std::string body, line, says;
    };
    for (const Case& c : {
             // builtin
             Case{"backend_options: {max_epoch: \"7\"}\n", ":3: ", "unknown option 'max_epoch' for the builtin backend"},
             Case{"backend_options:\n  max_epochs: x\n", ":4: ", "backend_options.max_epochs: expected a whole number of epochs"},
             Case{"backend_options: {max_epochs: \"-3\"}\n", ":3: ", "found '-3'"},
             Case{"backend_options: {division: open}\n", ":3: ", "division is a field of the spec itself"},
             Case{"backend_options: {partition: debug}\n", ":3: ", "it is an option of the slurm backend"},
             // exec
             Case{"backend: exec\ncommand: [\"true\"]\nbackend_options: {kill_grace: \"0\"}\n", ":5: ",
                  "backend_options.kill_grace: expected seconds"},
             Case{"backend: exec\ncommand: [\"true\"]\nbackend_options: {kill_grac: \"5\"}\n", ":5: ",
                  "did you mean 'kill_grace'?"},
             // slurm
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  partiton: debug\n", ":6: ",
                  "did you mean 'partition'?"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  nodes: two\n", ":6: ", "backend_options.nodes: expected a number of nodes"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  nodes: \"0\"\n", ":6: ", "found '0'"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  gpus_per_node: \"-1\"\n", ":6: ", "expected a number of GPUs"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  tasks_per_node: \"1.5\"\n", ":6: ", "tasks per node"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  launcher: mpirun\n", ":6: ", "expected auto, srun or none"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  describe: nodes\n", ":6: ", "expected node or host"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  describe_timeout: \"0\"\n", ":6: ", "seconds above 0"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  container_image: x\n  container_writable: maybe\n", ":7: ",
                  "expected yes or no"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  extra_args: \"--x 'y\"\n", ":6: ", "unclosed quote"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  partition: \"\"\n", ":6: ", "it is empty"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  container_mounts: /a:/b\n", ":6: ", "need container_image"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  launcher: none\n  srun_args: -l\n", ":6: ",
                  "launcher: none runs the command without srun"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  runs_per_job: \"0\"\n", ":6: ",
                  "backend_options.runs_per_job: expected a number of runs from 1 to 1000, found '0'"},
             Case{"backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  launcher: none\n  runs_per_job: \"5\"\n", ":6: ",
                  "runs_per_job: 5 runs each run as a job step of its own (srun)"},
             Case{"backend: exec\ncommand: [\"true\"]\nbackend_options: {runs_per_job: \"5\"}\n", ":5: ",
                  "it is an option of the slurm backend"},
         }) {
      CAPTURE(c.body);
      std::string e = refusal(c.body);
      CHECK(e.find("spec.yaml" + c.line) != std::string::npos);
      CHECK(e.find(c.says) != std::string::npos);
    }
    Spec ok;
    CHECK(refusal("backend: slurm\ncommand: [\"true\"]\nbackend_options:\n  nodes: 2-4\n  gpus_per_node: a100:8\n"
                  "  container_image: img\n  container_writable: \"yes\"\n  launcher: srun\n  describe: host\n"
                  "  extra_args: \"\"\n",
                  &ok) == "");
    CHECK(refusal("backend_options: {max_epochs: \"3\", batch_size: \"64\"}\n") == "");
    CHECK(refusal("backend: slurm\ncommand: [\"true\"]\nbackend_options: {runs_per_job: \"5\", launcher: srun}\n") == "");
    // cache_clear: a list or a shell line, its placeholders checked; not for the builtin workloads.
    Spec hooked;
    CHECK(refusal("backend: exec\ncommand: [\"true\"]\ncache_clear: \"sync; echo 3 > /proc/sys/vm/drop_caches\"\n", &hooked) == "");
    CHECK(hooked.cache_clear == std::vector<std::string>{"/bin/sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"});
    std::string hook_error = finalize_refusal("backend: exec\ncommand: [\"true\"]\ncache_clear: [\"drop\", \"{rn}\"]\n");
    CHECK_MESSAGE(hook_error.find("spec.yaml:5: 'cache_clear': unknown placeholder {rn}") != std::string::npos, hook_error);
    CHECK(refusal("backend: exec\ncommand: [\"true\"]\ncache_clear: []\n").find(
              "spec.yaml:5: 'cache_clear': expected a command (a list of words, or one shell line), found an empty one") !=
          std::string::npos);
    hook_error = finalize_refusal("cache_clear: [\"drop\"]\n");
    CHECK_MESSAGE(hook_error.find("spec.yaml:3: 'cache_clear': the builtin workloads log cache_clear themselves") !=
                      std::string::npos,
                  hook_error);
    CHECK(refusal("backend: exec\ncommand: [\"true\"]\nbackend_options: {kill_grace: \"2.5\"}\n") == "");
    // A --backend flag changes what the options must be: checked again before any seed is made.
    Spec flagged;
    REQUIRE(refusal("backend_options: {max_epochs: \"3\"}\n", &flagged) == "");
    set_from_flag(&flagged, "backend", "exec");
    flagged.command = {"true"};
    std::string error;
    CHECK_FALSE(finalize_spec(&flagged, 5, &error));
    CHECK(error.find("unknown option 'max_epochs' for the exec backend") != std::string::npos);
    CHECK(flagged.seeds.empty());
  }

  TEST_CASE("spec: finalize errors name the file and line; org \"\", a missing local workdir or system description are refused") {
    auto finalized = [](const std::string& body, int runs = 5) {
      Spec s;
      std::string e = refusal(body, &s);
      if (!e.empty()) return "load: " + e;
      std::string error;
      return finalize_spec(&s, runs, &error) ? std::string() : error;
    };
    std::string e = finalized("backend: exce\n");
    CHECK(e.find("spec.yaml:3: 'backend': expected builtin, exec or slurm, found 'exce' (did you mean 'exec'?)") != std::string::npos);
    Spec flagged;
    REQUIRE(refusal("runs: 1\n", &flagged) == "");
    set_from_flag(&flagged, "backend", "slrum");
    CHECK_FALSE(finalize_spec(&flagged, 5, &e));
    CHECK(e == "--backend: expected builtin, exec or slurm, found 'slrum' (did you mean 'slurm'?)");
    e = finalized("division: closd\n");
    CHECK(e.find("spec.yaml:3: 'division': expected closed or open, found 'closd'") != std::string::npos);
    e = finalized("seeds: [1, 1, 2]\n", 3);
    CHECK(e.find("spec.yaml:3: seeds must be distinct") != std::string::npos);
    e = finalized("seeds: [1, 2]\n", 3);
    CHECK(e.find("spec.yaml:3: the spec lists 2 seeds for 3 runs") != std::string::npos);
    e = finalized("backend: exec\n");
    CHECK(e.find("spec.yaml:3: the exec backend needs a command") != std::string::npos);
    e = refusal("org: \"\"\n");
    CHECK(e.find("spec.yaml:3: 'org': expected the submitter's name") != std::string::npos);
    e = finalized("workdir: /nonexistent-referee-dir\n");
    CHECK(e.find("spec.yaml:3: 'workdir': expected a directory that exists, found '/nonexistent-referee-dir' (no such directory)") !=
          std::string::npos);
    // On Slurm the workdir is the compute nodes': it may not exist on the submitting host.
    CHECK(finalized("backend: slurm\ncommand: [true]\nworkdir: /nonexistent-referee-dir\n") == "");
    e = refusal("runs: 5\nsystem_description: nonexist.yaml\n");
    CHECK(e.find("spec.yaml:4: 'system_description': expected a file") != std::string::npos);
    CHECK(e.find("nonexist.yaml' (no such file)") != std::string::npos);
    CHECK(refusal("workdir: /tmp\norg: acme\n") == "");
  }

  TEST_CASE("spec: exec runs one at a time on a node with accelerators, one per core without, and says why") {
    std::random_device rd;
    fs::path dev = fs::temp_directory_path() / ("referee-dev-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dev);
    auto finalized = [&](const std::string& body) {
      Spec spec;
      std::string error;
      REQUIRE_MESSAGE(load_spec(spec_file(body).string(), &spec, &error), error);
      REQUIRE_MESSAGE(finalize_spec(&spec, 5, &error, dev.string()), error);
      return spec;
    };
    const std::string exec = "backend: exec\ncommand: [\"/bin/true\"]\n";
    // No device files: one run per core.
    Spec plain = finalized(exec);
    CHECK(plain.parallel >= 1);
    CHECK(plain.effective["parallel"].second.find("one run per core") != std::string::npos);
    // NVIDIA GPUs (nvidiactl is no GPU), AMD's kfd, Gaudi's accel class: one at a time, the devices named.
    for (const char* f : {"nvidiactl", "nvidia-uvm"}) std::ofstream(dev / f) << "";
    CHECK(finalized(exec).parallel == static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    std::ofstream(dev / "nvidia0") << "";
    std::ofstream(dev / "nvidia1") << "";
    Spec gpus = finalized(exec);
    CHECK(gpus.parallel == 1);
    CHECK(gpus.effective["parallel"].first == "1");
    CHECK(gpus.effective["parallel"].second.find((dev / "nvidia0").string() + ", " + (dev / "nvidia1").string()) !=
          std::string::npos);
    CHECK(gpus.effective["parallel"].second.find("--parallel N") != std::string::npos);
    fs::remove(dev / "nvidia0");
    fs::remove(dev / "nvidia1");
    fs::create_directories(dev / "accel");
    std::ofstream(dev / "accel" / "accel0") << "";
    CHECK(finalized(exec).parallel == 1);
    // Asked for: as asked, accelerators or not.
    Spec asked = finalized(exec + "parallel: 3\n");
    CHECK(asked.parallel == 3);
    CHECK(asked.effective["parallel"].second == "spec");
    fs::remove_all(dev);
  }
}
