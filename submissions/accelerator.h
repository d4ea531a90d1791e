// What accelerator a system description names: the vendor, the family (the
// chip: H100, Gaudi2, TPU v5e, MI300X), the model (the family with its form
// factor: H100 SXM, H100 PCIe, H100 NVL) and its memory, read from
// `accelerator_model_name` with one table of known names (accelerator.cc),
// in every style the rounds used ("NVIDIA H100-SXM5-80GB", "Intel(R)
// Gaudi(R) 2 AI Accelerator", "NVIDIA Blackwell GPU (B200-SXM-180GB)",
// "TPU-v5e", "AMD Instinct MI300X 192GB HBM3"). A name the table does not know
// is kept as written and flagged (known false), never guessed from its first
// word with a digit.
//
// Results are compared only on like accelerators: the same model (H100 SXM
// against H100 SXM), or the same family where a side names no form factor;
// an H100 PCIe (350 W) is not an H100 SXM (700 W). same_accelerator says
// which level matched.
#pragma once

#include <string>

namespace referee::submissions {

struct Accelerator {
  std::string raw;     // as the system description wrote it
  std::string vendor;  // NVIDIA, Intel, AMD, Google, Graphcore, Huawei; "" when unknown
  std::string family;  // H100, GB200, Gaudi2, TPU v5e, MI300X, RTX 4090; the raw name (trimmed) when unknown
  std::string form;    // SXM, PCIe, NVL, OAM; "" when the name gives none
  std::string memory;  // "80GB"; "" when the name gives none
  bool known = false;  // the table knows the family
  // The family with its form factor: "H100 SXM", "H100 PCIe", "Gaudi2".
  std::string model() const { return form.empty() ? family : family + " " + form; }
};

// The accelerator `raw` names (thread-safe; each name is read once per process).
const Accelerator& identify_accelerator(const std::string& raw);

// How two accelerators compare: Model (same family and form factor), Family
// (same family, a form factor on one side only), Name (neither is in the
// table, and they are written alike), or None (different: another family,
// another form factor, or a name the table does not know).
enum class AcceleratorMatch { None, Name, Family, Model };
AcceleratorMatch same_accelerator(const Accelerator& a, const Accelerator& b);

// Why two accelerators are not compared, or at which level they are: "the
// same model (H100 SXM)", "the same family (H100; the form factor is named on
// one side only)", "H100 PCIe vs H100 SXM: another model of the same family",
// "Gaudi2 vs H100", "an accelerator referee does not know (X)".
std::string accelerator_match_text(const Accelerator& a, const Accelerator& b);

}  // namespace referee::submissions
