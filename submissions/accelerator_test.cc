// The accelerator identity (submissions/accelerator.h): every style of name
// the rounds used, the reference data's names, unknown names flagged, and
// which pairs are compared.
#include "submissions/accelerator.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "mllog/json.h"
#include "tests/reference_data.h"

namespace referee::submissions {

namespace {

struct Case {
  const char* raw;
  const char* vendor;
  const char* family;
  const char* form;
  const char* memory;
};

// Names in the styles of the rounds 0.7 to 5.1 (the system descriptions'
// accelerator_model_name), and what they are.
const Case kCases[] = {
    {"NVIDIA H100-SXM5-80GB", "NVIDIA", "H100", "SXM", "80GB"},
    {"NVIDIA H100-SXM-80GB", "NVIDIA", "H100", "SXM", "80GB"},
    {"NVIDIA H100-PCIe-80GB", "NVIDIA", "H100", "PCIe", "80GB"},
    {"NVIDIA H100 80GB PCIe", "NVIDIA", "H100", "PCIe", "80GB"},
    {"NVIDIA H100 NVL", "NVIDIA", "H100", "NVL", ""},
    {"NVIDIA H200-SXM-141GB", "NVIDIA", "H200", "SXM", "141GB"},
    {"NVIDIA GH200 Grace Hopper Superchip 96GB", "NVIDIA", "GH200", "", "96GB"},
    {"NVIDIA GH200-144GB_aarch64", "NVIDIA", "GH200", "", "144GB"},
    {"NVIDIA B200-SXM-180GB", "NVIDIA", "B200", "SXM", "180GB"},
    {"NVIDIA Blackwell GPU (B200-SXM-180GB)", "NVIDIA", "B200", "SXM", "180GB"},
    {"NVIDIA GB200", "NVIDIA", "GB200", "", ""},
    {"NVIDIA Blackwell GPU (GB200)", "NVIDIA", "GB200", "", ""},
    {"NVIDIA GB200 NVL72", "NVIDIA", "GB200", "NVL72", ""},
    {"NVIDIA GB300", "NVIDIA", "GB300", "", ""},
    {"NVIDIA A100-SXM4-80GB", "NVIDIA", "A100", "SXM", "80GB"},
    {"NVIDIA A100-SXM4-40GB", "NVIDIA", "A100", "SXM", "40GB"},
    {"NVIDIA A100-PCIE-40GB", "NVIDIA", "A100", "PCIe", "40GB"},
    {"A100-SXM-80GB", "NVIDIA", "A100", "SXM", "80GB"},
    {"NVIDIA A30", "NVIDIA", "A30", "", ""},
    {"Tesla V100-SXM3-32GB-H", "NVIDIA", "V100", "SXM", "32GB"},
    {"NVIDIA Tesla V100 SXM2 16GB", "NVIDIA", "V100", "SXM", "16GB"},
    {"NVIDIA L40S", "NVIDIA", "L40S", "", ""},
    {"NVIDIA L40", "NVIDIA", "L40", "", ""},
    {"NVIDIA L4", "NVIDIA", "L4", "", ""},
    {"NVIDIA GeForce RTX 4090", "NVIDIA", "RTX 4090", "", ""},
    {"RTX 4090", "NVIDIA", "RTX 4090", "", ""},
    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA", "RTX PRO 6000", "", ""},
    {"Intel(R) Gaudi(R) 2 AI Accelerator", "Intel", "Gaudi2", "", ""},
    {"Intel\xC2\xAE Gaudi\xC2\xAE 2 AI accelerator", "Intel", "Gaudi2", "", ""},
    {"Habana Gaudi2", "Intel", "Gaudi2", "", ""},
    {"HL-225", "Intel", "Gaudi2", "", ""},
    {"Intel Gaudi 3", "Intel", "Gaudi3", "", ""},
    {"Habana Gaudi", "Intel", "Gaudi", "", ""},
    {"Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz", "Intel", "Xeon", "", ""},
    {"AMD Instinct MI300X 192GB HBM3", "AMD", "MI300X", "", "192GB"},
    {"AMD Instinct MI325X", "AMD", "MI325X", "", ""},
    {"AMD MI250", "AMD", "MI250", "", ""},
    {"TPU-v5e", "Google", "TPU v5e", "", ""},
    {"TPU v4", "Google", "TPU v4", "", ""},
    {"Google TPU v5p", "Google", "TPU v5p", "", ""},
    {"TPUv3", "Google", "TPU v3", "", ""},
    {"Google TPU Trillium", "Google", "TPU v6e", "", ""},
    {"Graphcore Bow IPU", "Graphcore", "Bow IPU", "", ""},
    {"IPU-M2000", "Graphcore", "IPU-M2000", "", ""},
    {"Huawei Ascend 910", "Huawei", "Ascend 910", "", ""},
    {"Ascend910", "Huawei", "Ascend 910", "", ""},
};

}  // namespace

TEST_SUITE("store") {
  TEST_CASE("accelerator names of every round's style: vendor, family, form factor and memory from one table") {
    for (const auto& c : kCases) {
      CAPTURE(c.raw);
      const Accelerator& a = identify_accelerator(c.raw);
      CHECK(a.known);
      CHECK(a.raw == c.raw);
      CHECK(a.vendor == c.vendor);
      CHECK(a.family == c.family);
      CHECK(a.form == c.form);
      CHECK(a.memory == c.memory);
    }
  }

  TEST_CASE("a name the table does not know is kept as written and flagged, never guessed from a word with a digit") {
    for (const char* raw : {"Cerebras CS-2", "  Acme XPU 9000 ", "SuperChip 2", ""}) {
      CAPTURE(raw);
      const Accelerator& a = identify_accelerator(raw);
      CHECK_FALSE(a.known);
      CHECK(a.vendor.empty());
      CHECK(a.form.empty());
    }
    CHECK(identify_accelerator("  Acme XPU 9000 ").family == "Acme XPU 9000");
  }

  TEST_CASE("which accelerators are compared, and at which level") {
    auto match = [](const char* a, const char* b) { return same_accelerator(identify_accelerator(a), identify_accelerator(b)); };
    auto text = [](const char* a, const char* b) { return accelerator_match_text(identify_accelerator(a), identify_accelerator(b)); };
    CHECK(match("NVIDIA H100-SXM5-80GB", "NVIDIA H100-SXM-80GB") == AcceleratorMatch::Model);
    CHECK(text("NVIDIA H100-SXM5-80GB", "NVIDIA H100-SXM-80GB") == "the same model (H100 SXM)");
    // An H100 PCIe (350 W) is not an H100 SXM.
    CHECK(match("NVIDIA H100-PCIe-80GB", "NVIDIA H100-SXM5-80GB") == AcceleratorMatch::None);
    CHECK(text("NVIDIA H100-PCIe-80GB", "NVIDIA H100-SXM5-80GB") == "H100 PCIe vs H100 SXM: another model of the same family");
    // Gaudi2 across the rounds' spellings is one accelerator.
    CHECK(match("Intel(R) Gaudi(R) 2 AI Accelerator", "Habana Gaudi2") == AcceleratorMatch::Model);
    CHECK(match("NVIDIA Blackwell GPU (B200-SXM-180GB)", "NVIDIA B200-SXM-180GB") == AcceleratorMatch::Model);
    CHECK(match("NVIDIA GB200", "NVIDIA B200-SXM-180GB") == AcceleratorMatch::None);
    CHECK(text("NVIDIA GB200", "NVIDIA B200-SXM-180GB") == "GB200 vs B200 SXM");
    // A form factor named on one side only: the family matched, and it says so.
    CHECK(match("NVIDIA H100", "NVIDIA H100-SXM5-80GB") == AcceleratorMatch::Family);
    CHECK(text("NVIDIA H100", "NVIDIA H100-SXM5-80GB") == "the same family (H100; the form factor is named on one side only)");
    // Unknown names: alike is the most that can be said.
    CHECK(match("Cerebras CS-2", "cerebras cs 2") == AcceleratorMatch::Name);
    CHECK(match("Cerebras CS-2", "Cerebras CS-3") == AcceleratorMatch::None);
    CHECK(text("Cerebras CS-2", "NVIDIA H100-SXM5-80GB") == "an accelerator referee does not know (Cerebras CS-2)");
  }

  TEST_CASE("every accelerator name of the reference data is known") {
    if (!testing::have_reference_data()) return;
    std::set<std::string> names;
    for (const char* round : {"training_results_v3.0", "training_results_v3.1"})
      for (const auto& org : std::filesystem::directory_iterator(testing::reference_dir() + "/mlperf/" + round)) {
        std::filesystem::path systems = org.path() / "systems";
        if (!std::filesystem::is_directory(systems)) continue;
        for (const auto& f : std::filesystem::directory_iterator(systems)) {
          std::ifstream in(f.path());
          std::stringstream ss;
          ss << in.rdbuf();
          mllog::Json j;
          std::string err;
          if (!mllog::parse_json_permissive(ss.str(), &j, &err)) continue;
          if (const auto* n = j.find("accelerator_model_name"); n && n->kind == mllog::Json::Kind::String) names.insert(n->s);
        }
      }
    REQUIRE(!names.empty());
    for (const auto& n : names) {
      CAPTURE(n);
      const Accelerator& a = identify_accelerator(n);
      CHECK(a.known);
      CHECK(a.model() == "H100 SXM");
    }
  }
}

}  // namespace referee::submissions
