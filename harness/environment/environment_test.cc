// The environment capture: the parsers on nvidia-smi output captured on an
// NVIDIA H200 machine (tests/data/nvidia-smi), every probe through the
// command-runner seam (found, absent, failing, hanging), the real runner, a
// fake nvidia-smi on PATH through the whole capture and the binary, and the
// files `referee run` writes beside each run's log.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "harness/environment/environment.h"
#include "harness/environment/system_describe.h"
#include "rules/interp.h"
#include "rules/value.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::harness;
using referee::testing::EnvVar;
using referee::testing::read_file;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

const fs::path kSmi = fs::path(REFEREE_TEST_DATA) / "nvidia-smi";

// A runner that answers from a table keyed by the command line; anything
// else "is not on PATH". Records every call.
struct FakeRunner {
  std::map<std::string, CommandOutput> answers;
  std::vector<std::string> calls;
  std::vector<std::string> workdirs;
  std::vector<std::map<std::string, std::string>> envs;

  static std::string key(const std::vector<std::string>& argv) {
    std::string k;
    for (const auto& a : argv) k += (k.empty() ? "" : " ") + (a.find('\n') != std::string::npos ? std::string("<script>") : a);
    return k;
  }
  void answer(const std::string& cmd, const std::string& out, int code = 0) {
    CommandOutput r;
    r.started = true;
    r.exit_code = code;
    r.out = out;
    answers[cmd] = r;
  }
  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv, const std::string& workdir,
                  const std::map<std::string, std::string>& env, int) {
      std::string k = key(argv);
      calls.push_back(k);
      workdirs.push_back(workdir);
      envs.push_back(env);
      if (auto it = answers.find(k); it != answers.end()) return it->second;
      CommandOutput r;
      r.error = "not found on PATH";
      return r;
    };
  }
};

const std::string kQuery =
    "nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,pci.bus_id,compute_cap --format=csv";

CaptureOptions no_host_env(FakeRunner& f, const fs::path& root) {
  CaptureOptions o;
  o.run = f.runner();
  o.getenv = [](const std::string&) { return std::optional<std::string>(); };
  o.root = root.string();
  return o;
}

// An executable script at `path`.
void script(const fs::path& path, const std::string& body) {
  write_file(path, body);
  chmod(path.c_str(), 0755);
}

// A fake nvidia-smi that prints the H200 captures, in `dir`.
void fake_nvidia_smi(const fs::path& dir) {
  script(dir / "nvidia-smi", "#!/bin/sh\nD='" + kSmi.string() +
                                 "'\ncase \"$1\" in\n"
                                 "  --query-gpu=*) cat \"$D/query-gpu.csv\" ;;\n"
                                 "  -q) cat \"$D/nvidia-smi-q.txt\" ;;\n"
                                 "  '') cat \"$D/nvidia-smi.txt\" ;;\n"
                                 "  *) echo \"nvidia-smi: unknown option $1\" >&2; exit 2 ;;\n"
                                 "esac\n");
}

rules::Value json(const std::string& text) {
  bool ok = false;
  std::string err;
  rules::Value v = rules::value_from_json(text, &ok, &err);
  REQUIRE_MESSAGE(ok, err << "\n" << text);
  return v;
}

std::string str_at(rules::Value& v, std::initializer_list<const char*> path) {
  rules::Value* x = &v;
  for (const char* k : path) {
    REQUIRE_MESSAGE(x->kind == rules::VKind::Dict, k);
    x = x->d().find_str(k);
    REQUIRE_MESSAGE(x != nullptr, "no " << k);
  }
  return x->kind == rules::VKind::Str ? x->s() : rules::py_str(*x);
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("environment: nvidia-smi output captured on an H200 is parsed: GPU, memory, driver, CUDA") {
    std::vector<GpuInfo> gpus;
    std::string error;
    REQUIRE_MESSAGE(parse_gpu_query(read_file(kSmi / "query-gpu.csv"), &gpus, &error), error);
    REQUIRE(gpus.size() == 1);
    CHECK(gpus[0].index == "0");
    CHECK(gpus[0].name == "NVIDIA H200");
    CHECK(gpus[0].uuid == "GPU-7cf468e9-5e78-9b2c-e1e5-6822624de848");
    CHECK(gpus[0].driver_version == "580.159.04");
    CHECK(gpus[0].memory_mib == 143771);
    CHECK(gpus[0].pci_bus_id == "00000000:00:06.0");
    CHECK(gpus[0].compute_cap == "9.0");
    CHECK(parse_cuda_version(read_file(kSmi / "nvidia-smi.txt")) == "13.0");
    CHECK(parse_cuda_version(read_file(kSmi / "nvidia-smi-q.txt")) == "13.0");
    CHECK(parse_cuda_version("No devices were found\n") == "");
    // Eight GPUs (the captured line, eight times with its index changed): all counted.
    std::string csv = read_file(kSmi / "query-gpu.csv");
    std::string header = csv.substr(0, csv.find('\n') + 1), row = csv.substr(csv.find('\n') + 2);
    std::string eight = header;
    for (int i = 0; i < 8; ++i) eight += std::to_string(i) + row;
    REQUIRE(parse_gpu_query(eight, &gpus, &error));
    CHECK(gpus.size() == 8);
    CHECK(gpus[7].index == "7");
    // Without a header the columns cannot be named: said, not guessed.
    CHECK_FALSE(parse_gpu_query(read_file(kSmi / "query-gpu-noheader-nounits.csv"), &gpus, &error));
    CHECK(error.find("header") != std::string::npos);
    CHECK_FALSE(parse_gpu_query("", &gpus, &error));
    CHECK_FALSE(parse_gpu_query(header + "0, NVIDIA H200\n", &gpus, &error));
    CHECK(error.find("columns") != std::string::npos);
  }

  TEST_CASE("environment: through the runner seam, GPUs, CUDA, Python, frameworks and git become system fields") {
    TempDir root;
    FakeRunner f;
    f.answer(kQuery, read_file(kSmi / "query-gpu.csv"));
    f.answer("nvidia-smi", read_file(kSmi / "nvidia-smi.txt"));
    f.answer("python3 -c <script>", "python_version=3.12.3\npython_executable=/opt/torch/.venv/bin/python3\n"
                                     "package.torch=2.11.0+cu130\npackage.mlperf-logging=4.1.0\ntorch_cuda=13.0\n");
    f.answer("git -C /work/train rev-parse HEAD", "0123456789abcdef0123456789abcdef01234567\n");
    f.answer("git -C /work/train status --porcelain --untracked-files=no", " M train.py\n");
    CaptureOptions o = no_host_env(f, root.path);
    o.command = {"python3", "train.py", "--seed", "{seed}"};
    o.workdir = "/work/train";
    o.env = {{"PYTHONPATH", "/work/lib"}};
    Environment e = capture_environment(o);
    CHECK(e.nvidia_smi);
    CHECK(e.driver_version == "580.159.04");
    CHECK(e.cuda_version == "13.0");
    REQUIRE(e.gpus.size() == 1);
    CHECK(e.python == "python3");
    CHECK(e.python_version == "3.12.3");
    CHECK(e.python_packages["torch"] == "2.11.0+cu130");
    CHECK(e.torch_cuda == "13.0");
    CHECK(e.git_commit == "0123456789abcdef0123456789abcdef01234567");
    CHECK(e.git_dirty);
    CHECK(e.container.empty());
    // The Python probe runs where the workload runs, with its environment.
    for (size_t i = 0; i < f.calls.size(); ++i)
      if (f.calls[i] == "python3 -c <script>") {
        CHECK(f.workdirs[i] == "/work/train");
        CHECK(f.envs[i].at("PYTHONPATH") == "/work/lib");
      }
    std::vector<std::string> nested;
    auto fields = e.system_fields(&nested);
    CHECK(fields["framework"] == "PyTorch 2.11.0+cu130");
    CHECK(fields["accelerators_per_node"] == "1");
    CHECK(fields["accelerator_model_name"] == "NVIDIA H200");
    CHECK(fields["accelerator_memory_capacity"] == "140 GB");
    REQUIRE(nested == std::vector<std::string>{"other_software_stack"});
    rules::Value stack = json(fields["other_software_stack"]);
    CHECK(str_at(stack, {"cuda_version"}) == "13.0");
    CHECK(str_at(stack, {"cuda_driver_version"}) == "580.159.04");
    CHECK(str_at(stack, {"python_version"}) == "3.12.3");
    CHECK(str_at(stack, {"torch_version"}) == "2.11.0+cu130");
    CHECK(str_at(stack, {"mlperf_logging_version"}) == "4.1.0");
    CHECK(str_at(stack, {"libc_version"}).rfind("glibc ", 0) == 0);
    // JSON and text say the same.
    rules::Value j = json(e.to_json());
    CHECK(str_at(j, {"nvidia", "gpus"}).find("NVIDIA H200") != std::string::npos);
    CHECK(str_at(j, {"git", "dirty"}) == "True");
    CHECK(e.to_text().find("NVIDIA H200, 143771 MiB") != std::string::npos);
    // A system description takes the captured fields; the file still overrides.
    write_file(root.path / "sys.yaml", "framework: my framework\n");
    SystemDescription sys;
    std::string error;
    REQUIRE(describe_system((root.path / "sys.yaml").string(), "n1", &sys, &error, &e));
    CHECK(sys.fields["accelerator_model_name"] == "NVIDIA H200");
    CHECK(sys.fields["accelerators_per_node"] == "1");
    CHECK(sys.origin["accelerator_model_name"] == "environment");
    CHECK(sys.fields["framework"] == "my framework");
    CHECK(sys.nested["other_software_stack"]);
    CHECK(sys.to_json().find("\"cuda_version\":\"13.0\"") != std::string::npos);
  }

  TEST_CASE("environment: the CUDA version falls back to nvidia-smi -q when the banner lacks it") {
    TempDir root;
    FakeRunner f;
    f.answer(kQuery, read_file(kSmi / "query-gpu.csv"));
    f.answer("nvidia-smi", "a banner without the version\n");
    f.answer("nvidia-smi -q", read_file(kSmi / "nvidia-smi-q.txt"));
    Environment e = capture_environment(no_host_env(f, root.path));
    CHECK(e.cuda_version == "13.0");
    CHECK(e.nvidia_note.empty());
  }

  TEST_CASE("environment: absent or failing probes leave notes and the rest is captured") {
    TempDir root;
    FakeRunner f;  // nothing answers: no nvidia-smi, no git, no python3
    CaptureOptions o = no_host_env(f, root.path);
    o.command = {"python3", "train.py"};
    Environment e = capture_environment(o);
    CHECK_FALSE(e.nvidia_smi);
    CHECK(e.gpus.empty());
    CHECK(e.nvidia_note.find("not found on PATH") != std::string::npos);
    CHECK(e.python_note.find("python3") != std::string::npos);
    CHECK(e.git_note.find("git") != std::string::npos);
    CHECK_FALSE(e.kernel.empty());
    CHECK_FALSE(e.libc.empty());
    auto fields = e.system_fields(nullptr);
    CHECK_FALSE(fields.count("accelerators_per_node"));
    CHECK_FALSE(fields.count("framework"));
    CHECK(fields.count("other_software_stack"));
    // Without GPUs a description says so, as before.
    SystemDescription sys;
    std::string error;
    REQUIRE(describe_system("", "n1", &sys, &error, &e));
    CHECK(sys.fields["accelerators_per_node"] == "0");
    CHECK(sys.fields["accelerator_model_name"] == "N/A");
    CHECK(sys.fields["accelerator_memory_capacity"] == "N/A");

    // nvidia-smi that fails (a driver mismatch), Python that hangs: notes, no failure.
    FakeRunner g;
    g.answer(kQuery, "Failed to initialize NVML: Driver/library version mismatch\n", 18);
    CommandOutput hang;
    hang.started = true;
    hang.timed_out = true;
    hang.error = "no answer within 15 s (stopped)";
    g.answers["python3 -c <script>"] = hang;
    o = no_host_env(g, root.path);
    o.command = {"python3", "train.py"};
    e = capture_environment(o);
    CHECK_FALSE(e.nvidia_smi);
    CHECK(e.nvidia_note.find("exit 18") != std::string::npos);
    CHECK(e.python_note.find("no answer within 15 s") != std::string::npos);
    CHECK(e.python_version.empty());
  }

  TEST_CASE("environment: containers are recognised from what each runtime leaves") {
    TempDir root;
    FakeRunner f;
    auto with_env = [&](std::map<std::string, std::string> vars) {
      CaptureOptions o = no_host_env(f, root.path);
      o.getenv = [vars](const std::string& k) {
        auto it = vars.find(k);
        return it == vars.end() ? std::optional<std::string>() : std::optional<std::string>(it->second);
      };
      return capture_environment(o);
    };
    Environment e = with_env({});
    CHECK(e.container.empty());
    CHECK(e.to_text().find("container        none found") != std::string::npos);
    e = with_env({{"SLURM_CONTAINER_IMAGE", "nvcr.io#nvidia/pytorch:24.09-py3"}, {"NVIDIA_PYTORCH_VERSION", "24.09"}});
    CHECK(e.container == "enroot (pyxis)");
    CHECK(e.container_image == "nvcr.io#nvidia/pytorch:24.09-py3");
    CHECK(e.system_fields(nullptr)["framework"] == "PyTorch NVIDIA Release 24.09");
    e = with_env({{"APPTAINER_CONTAINER", "/images/train.sif"}});
    CHECK(e.container == "apptainer");
    CHECK(e.container_image == "/images/train.sif");
    write_file(root.path / ".dockerenv", "");
    e = with_env({});
    CHECK(e.container == "docker");
    CHECK(e.container_evidence == "/.dockerenv");
    CHECK(e.system_fields(nullptr)["other_software_stack"].find("docker (image not named by the runtime)") != std::string::npos);
    fs::create_directories(root.path / "run");
    write_file(root.path / "run" / ".containerenv", "engine=\"podman-4.9.3\"\nname=\"train\"\nimage=\"docker.io/library/python:3.12\"\n");
    e = with_env({});
    CHECK(e.container == "podman");
    CHECK(e.container_image == "docker.io/library/python:3.12");
  }

  TEST_CASE("environment: which commands are Python programs") {
    TempDir dir;
    CHECK(python_of_command({"python3", "train.py"}, "") == "python3");
    CHECK(python_of_command({"/opt/venv/bin/python3.12", "-u", "train.py"}, "") == "/opt/venv/bin/python3.12");
    CHECK(python_of_command({"/bin/sh", "-c", "cd /w && python train.py --seed 1"}, "") == "python");
    CHECK(python_of_command({"./train.sh"}, "") == "");
    CHECK(python_of_command({"pythonic", "x"}, "") == "");
    CHECK(python_of_command({}, "") == "");
    script(dir.path / "torchrun", "#!/opt/torch/.venv/bin/python3\nimport sys\n");
    script(dir.path / "train.py", "#!/usr/bin/env python3\n");
    script(dir.path / "run.sh", "#!/bin/bash\npython3 train.py\n");
    CHECK(python_of_command({(dir.path / "torchrun").string(), "train.py"}, "") == "/opt/torch/.venv/bin/python3");
    CHECK(python_of_command({"./train.py"}, dir.path.string()) == "python3");
    CHECK(python_of_command({"./run.sh"}, dir.path.string()) == "");
  }

  TEST_CASE("environment: the submission fields of a log") {
    auto f = submission_fields(
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": \"submission_platform\", "
        "\"value\": \"8xH200\", \"metadata\": {}}\n"
        "noise\n"
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 2, \"event_type\": \"POINT_IN_TIME\", \"key\": \"submission_org\", "
        "\"value\": \"ExampleOrg\", \"metadata\": {}}\n"
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 3, \"event_type\": \"POINT_IN_TIME\", \"key\": \"seed\", "
        "\"value\": 7, \"metadata\": {\"note\": \"submission_x\"}}\n"
        ":::MLLOG {broken submission_division\n");
    CHECK(f.size() == 2);
    CHECK(f["submission_platform"] == "8xH200");
    CHECK(f["submission_org"] == "ExampleOrg");
  }

  TEST_CASE("environment: the real runner captures output, reports a missing program and stops a hung one") {
    CommandOutput r = run_command({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, "", {{"X_REFEREE", "1"}}, 10);
    CHECK(r.started);
    CHECK(r.exit_code == 3);
    CHECK(r.out == "out\n");
    r = run_command({"/bin/sh", "-c", "echo $X_REFEREE; pwd"}, "/", {{"X_REFEREE", "42"}}, 10);
    CHECK(r.out == "42\n/\n");
    r = run_command({"referee-no-such-program"}, "", {}, 10);
    CHECK_FALSE(r.started);
    CHECK(r.error == "not found on PATH");
    auto t0 = std::chrono::steady_clock::now();
    r = run_command({"/bin/sh", "-c", "echo partial; sleep 30"}, "", {}, 1);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    CHECK(r.timed_out);
    CHECK(r.out == "partial\n");
  }

  TEST_CASE("environment: the real capture with a fake nvidia-smi and a Python that hangs, on PATH") {
    TempDir dir;
    fake_nvidia_smi(dir.path);
    script(dir.path / "python3", "#!/bin/sh\nsleep 30\n");
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    EnvVar p("PATH", dir.path.string() + ":" + path);
    CaptureOptions o;
    o.command = {"python3", "train.py"};
    o.timeout_s = 1;
    auto t0 = std::chrono::steady_clock::now();
    Environment e = capture_environment(o);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15));
    CHECK(e.nvidia_smi);
    CHECK(e.cuda_version == "13.0");
    REQUIRE(e.gpus.size() == 1);
    CHECK(e.gpus[0].name == "NVIDIA H200");
    CHECK(e.python_note.find("no answer within 1 s") != std::string::npos);
  }

  TEST_CASE("environment: a real Python interpreter is probed without importing frameworks") {
    if (!fs::exists("/usr/bin/python3")) {
      MESSAGE("skipped: /usr/bin/python3 is missing");
      return;
    }
    CaptureOptions o;
    o.command = {"/usr/bin/python3", "train.py"};
    Environment e = capture_environment(o);
    CHECK(e.python == "/usr/bin/python3");
    CHECK(e.python_note == "");
    CHECK(e.python_version.rfind("3.", 0) == 0);
    CHECK(e.python_executable == "/usr/bin/python3");
  }

  TEST_CASE("referee system env / describe: the whole capture with nvidia-smi on PATH, and without it") {
    TempDir dir;
    fs::create_directories(dir.path / "smi");
    fs::create_directories(dir.path / "empty");
    fake_nvidia_smi(dir.path / "smi");
    std::string out;
    std::string with = "PATH='" + (dir.path / "smi").string() + "':\"$PATH\" ";
    REQUIRE(referee::testing::run_shell_capture(with + REFEREE_BINARY " system env --json", &out) == 0);
    rules::Value j = json(out);
    CHECK(str_at(j, {"nvidia", "nvidia_smi"}) == "True");
    CHECK(str_at(j, {"nvidia", "cuda_version"}) == "13.0");
    CHECK(str_at(j, {"nvidia", "driver_version"}) == "580.159.04");
    CHECK(str_at(j, {"nvidia", "gpu_count"}) == "1");
    REQUIRE(referee::testing::run_shell_capture(with + REFEREE_BINARY " system env", &out) == 0);
    CHECK(out.find("NVIDIA driver    580.159.04, CUDA 13.0") != std::string::npos);
    // describe: the accelerator fields from nvidia-smi (missing fields exit 1; the JSON is printed).
    referee::testing::run_shell_capture("(" + with + REFEREE_BINARY " system describe --name gpu_node 2>/dev/null)", &out);
    rules::Value d = json(out);
    CHECK(str_at(d, {"accelerators_per_node"}) == "1");
    CHECK(str_at(d, {"accelerator_model_name"}) == "NVIDIA H200");
    CHECK(str_at(d, {"accelerator_memory_capacity"}) == "140 GB");
    CHECK(str_at(d, {"other_software_stack", "cuda_version"}) == "13.0");
    // Without nvidia-smi (nor git) on PATH: said, exit 0.
    std::string without = "PATH='" + (dir.path / "empty").string() + "' ";
    REQUIRE(referee::testing::run_shell_capture(without + REFEREE_BINARY " system env --json", &out) == 0);
    j = json(out);
    CHECK(str_at(j, {"nvidia", "nvidia_smi"}) == "False");
    CHECK(str_at(j, {"nvidia", "note"}).find("nvidia-smi: not found on PATH") != std::string::npos);
    CHECK(str_at(j, {"git", "note"}).find("git") != std::string::npos);
  }

  TEST_CASE("referee system describe --from harness/workloads/specs/cpu_system.yaml: complete, the division from --division or the spec") {
    // Regression: the shipped example failed with "missing required fields: division".
    std::string src = REFEREE_SOURCE_DIR;
    std::string out;
    int rc = referee::testing::run_referee("system describe --from '" + src + "/harness/workloads/specs/cpu_system.yaml' 2>&1", &out);
    REQUIRE_MESSAGE(rc == 0, out);
    rules::Value d = json(out);
    CHECK(str_at(d, {"division"}) == "closed");
    CHECK(str_at(d, {"system_name"}) == "cpu_node");
    CHECK(str_at(d, {"framework"}) == "referee builtin workloads");
    CHECK(str_at(d, {"other_software_stack", "kernel_version"}) != "");
    rc = referee::testing::run_referee("system describe --division open --from '" + src + "/harness/workloads/specs/cpu_system.yaml'", &out);
    REQUIRE_MESSAGE(rc == 0, out);
    CHECK(str_at(d = json(out), {"division"}) == "open");
    rc = referee::testing::run_referee("system describe --spec '" + src + "/harness/workloads/specs/minilm.yaml'", &out);
    REQUIRE_MESSAGE(rc == 0, out);
    CHECK(str_at(d = json(out), {"system_name"}) == "cpu_node");
    CHECK(referee::testing::run_referee("system describe --division bogus", &out) == 2);
    // A file that lacks fields still says which.
    TempDir dir;
    write_file(dir.path / "partial.yaml", "submitter: x\n");
    CHECK(referee::testing::run_referee("system describe --from '" + (dir.path / "partial.yaml").string() + "'", &out) == 1);
    CHECK(out.find("missing required fields: status") != std::string::npos);
    CHECK(out.find(" cooling ") != std::string::npos);
  }

  TEST_CASE("referee system describe --from a file with control characters: shown safely on a terminal, kept byte for byte in a file") {
    std::string src = REFEREE_SOURCE_DIR;
    TempDir dir;
    std::string yaml = read_file(fs::path(src) / "harness/workloads/specs/cpu_system.yaml");
    // U+009B (a C1 control: the terminal's CSI) and U+202E (right-to-left override) in a note.
    size_t at = yaml.find("hw_notes: \"\"");
    REQUIRE(at != std::string::npos);
    yaml.replace(at, 12, "hw_notes: \"x\xc2\x9b" "2Jy\xe2\x80\xae" "z\"");
    write_file(dir.path / "sys.yaml", yaml);
    std::string file = (dir.path / "sys.yaml").string();
    std::string out;
    // Into a pipe: the description as given, to be kept as systems/<system>.json.
    REQUIRE(referee::testing::run_shell_capture("{ " REFEREE_BINARY " system describe --from '" + file + "' 2>/dev/null; }", &out) == 0);
    CHECK(out.find("x\xc2\x9b" "2Jy\xe2\x80\xae" "z") != std::string::npos);
    // On a terminal (script(1) gives the command one): shown, not obeyed.
    REQUIRE(referee::testing::run_shell_capture("script -qec \"" REFEREE_BINARY " system describe --from '" + file + "'\" /dev/null", &out) == 0);
    CHECK(out.find("\xc2\x9b") == std::string::npos);
    CHECK(out.find("\xe2\x80\xae") == std::string::npos);
    CHECK(out.find("[U+009B]2Jy[U+202E]z") != std::string::npos);
  }

  TEST_CASE("referee run harness/workloads/specs/*.yaml: each shipped spec passes, and each run's environment is kept beside its log") {
    std::string src = REFEREE_SOURCE_DIR;
    for (const char* spec : {"miniclf", "minilm"}) {
      TempDir dir;
      std::string out;
      int rc = referee::testing::run_referee("run '" + src + "/harness/workloads/specs/" + spec + ".yaml' --out '" +
                                                 (dir.path / "out").string() + "'",
                                             &out);
      REQUIRE_MESSAGE(rc == 0, out);
      CHECK(out.find("passes check-package") != std::string::npos);
      int env_files = 0;
      for (const auto& f : fs::recursive_directory_iterator(dir.path / "out" / ".referee-runs")) {
        std::string name = f.path().filename().string();
        if (name.size() < 9 || name.substr(name.size() - 9) != ".env.json") continue;
        ++env_files;
        CHECK(fs::exists(f.path().parent_path() / (name.substr(0, name.size() - 9) + ".log")));
        rules::Value e = json(read_file(f.path()));
        CHECK(str_at(e, {"submission", "submission_benchmark"}) == spec);
        CHECK(str_at(e, {"submission", "submission_division"}) == "closed");
        CHECK(str_at(e, {"host", "libc"}).rfind("glibc ", 0) == 0);
      }
      CHECK(env_files == 5);
      rules::Value sys = json(read_file(dir.path / "out" / "referee" / "systems" / "cpu_node.json"));
      CHECK(str_at(sys, {"other_software_stack", "kernel_version"}) != "");
    }
  }
}
