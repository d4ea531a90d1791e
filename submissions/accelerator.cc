#include "submissions/accelerator.h"

#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <vector>

namespace referee::submissions {

namespace {

// The name as the table reads it: upper case, the trade marks dropped
// ("(R)", "(TM)", their signs), every character but letters, digits, '+'
// and '.' a space, one space between words, a space at each end.
std::string normalised(const std::string& raw) {
  std::string s;
  for (size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (raw.compare(i, 3, "(R)") == 0 || raw.compare(i, 3, "(r)") == 0) { i += 2; continue; }
    if (raw.compare(i, 4, "(TM)") == 0 || raw.compare(i, 4, "(tm)") == 0) { i += 3; continue; }
    if (raw.compare(i, 2, "\xC2\xAE") == 0) { i += 1; continue; }        // (R) sign
    if (raw.compare(i, 3, "\xE2\x84\xA2") == 0) { i += 2; continue; }    // TM sign
    if (c >= 'a' && c <= 'z') s += static_cast<char>(c - 'a' + 'A');
    else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '.') s += static_cast<char>(c);
    else s += ' ';
  }
  std::string out = " ";
  for (char c : s)
    if (c != ' ' || out.back() != ' ') out += c;
  if (out.back() != ' ') out += ' ';
  return out;
}

// One family of the table: its vendor, the pattern that finds it in a
// normalised name, and its name ($1 is the pattern's first group).
struct Family {
  const char* vendor;
  const char* pattern;
  const char* name;
  bool lower_group = false;  // $1 in lower case (TPU v5e)
};

// Longer names first where one contains another (GB200 before B200, GH200
// before H200, L40S before L40 before L4).
const Family kFamilies[] = {
    {"NVIDIA", " GB300 ", "GB300"},
    {"NVIDIA", " GB200 ", "GB200"},
    {"NVIDIA", " GH200 ", "GH200"},
    {"NVIDIA", " B300 ", "B300"},
    {"NVIDIA", " B200 ", "B200"},
    {"NVIDIA", " B100 ", "B100"},
    {"NVIDIA", " H200 ", "H200"},
    {"NVIDIA", " H100 ", "H100"},
    {"NVIDIA", " H800 ", "H800"},
    {"NVIDIA", " H20 ", "H20"},
    {"NVIDIA", " A100 ", "A100"},
    {"NVIDIA", " A800 ", "A800"},
    {"NVIDIA", " A40 ", "A40"},
    {"NVIDIA", " A30 ", "A30"},
    {"NVIDIA", " A10G? ", "A10"},
    {"NVIDIA", " L40S ", "L40S"},
    {"NVIDIA", " L40 ", "L40"},
    {"NVIDIA", " L4 ", "L4"},
    {"NVIDIA", " V100S? ", "V100"},
    {"NVIDIA", " T4 ", "T4"},
    {"NVIDIA", " RTX PRO 6000 ", "RTX PRO 6000"},
    {"NVIDIA", " (?:GEFORCE )?RTX ([0-9]{4}) ", "RTX $1"},
    {"Intel", " GAUDI ?([0-9]) ", "Gaudi$1"},
    {"Intel", " HL ?22[05] ", "Gaudi2"},
    {"Intel", " GAUDI ", "Gaudi"},
    {"Intel", " XEON ", "Xeon"},
    {"AMD", " MI ?([0-9]{3}[A-Z]?) ", "MI$1"},
    {"AMD", " EPYC ", "EPYC"},
    {"Google", " TPU ?V([0-9]+[A-Z]?) ", "TPU v$1", true},
    {"Google", " TRILLIUM ", "TPU v6e"},
    {"Graphcore", " BOW ", "Bow IPU"},
    {"Graphcore", " (?:IPU )?M2000 ", "IPU-M2000"},
    {"Huawei", " ASCEND ?([0-9]{3}[A-Z]?) ", "Ascend $1"},
};

struct Compiled {
  const Family* family;
  std::regex re;
};

const std::vector<Compiled>& table() {
  static const std::vector<Compiled> t = [] {
    std::vector<Compiled> out;
    for (const auto& f : kFamilies) out.push_back({&f, std::regex(f.pattern)});
    return out;
  }();
  return t;
}

Accelerator read(const std::string& raw) {
  Accelerator a;
  a.raw = raw;
  const std::string n = normalised(raw);
  std::smatch m;
  for (const auto& c : table()) {
    if (!std::regex_search(n, m, c.re)) continue;
    a.known = true;
    a.vendor = c.family->vendor;
    std::string name = c.family->name;
    if (size_t at = name.find("$1"); at != std::string::npos) {
      std::string g = m.size() > 1 ? m[1].str() : "";
      if (c.family->lower_group)
        for (auto& ch : g) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
      name.replace(at, 2, g);
    }
    a.family = name;
    break;
  }
  if (!a.known) {
    // Kept as written (trimmed), flagged.
    size_t b = raw.find_first_not_of(" \t"), e = raw.find_last_not_of(" \t");
    a.family = b == std::string::npos ? "" : raw.substr(b, e - b + 1);
    return a;
  }
  static const std::regex sxm(" SXM[0-9]? "), pcie(" PCIE "), nvl(" NVL([0-9]*) "), oam(" OAM "), memory(" ([0-9]+) ?GB ");
  if (std::regex_search(n, m, sxm)) a.form = "SXM";
  else if (std::regex_search(n, m, pcie)) a.form = "PCIe";
  else if (std::regex_search(n, m, nvl)) a.form = "NVL" + m[1].str();
  else if (std::regex_search(n, m, oam)) a.form = "OAM";
  if (std::regex_search(n, m, memory)) a.memory = m[1].str() + "GB";
  return a;
}

}  // namespace

const Accelerator& identify_accelerator(const std::string& raw) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Accelerator>> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = seen[raw];
  if (!slot) slot = std::make_unique<Accelerator>(read(raw));
  return *slot;
}

AcceleratorMatch same_accelerator(const Accelerator& a, const Accelerator& b) {
  if (!a.known || !b.known) {
    if (!a.known && !b.known && normalised(a.raw) == normalised(b.raw) && !a.family.empty()) return AcceleratorMatch::Name;
    return AcceleratorMatch::None;
  }
  if (a.family != b.family) return AcceleratorMatch::None;
  if (a.form == b.form) return AcceleratorMatch::Model;
  if (a.form.empty() || b.form.empty()) return AcceleratorMatch::Family;
  return AcceleratorMatch::None;
}

std::string accelerator_match_text(const Accelerator& a, const Accelerator& b) {
  switch (same_accelerator(a, b)) {
    case AcceleratorMatch::Model: return "the same model (" + a.model() + ")";
    case AcceleratorMatch::Family: return "the same family (" + a.family + "; the form factor is named on one side only)";
    case AcceleratorMatch::Name: return "the same name (" + a.family + ", an accelerator referee does not know)";
    case AcceleratorMatch::None: break;
  }
  if (!a.known) return "an accelerator referee does not know (" + a.family + ")";
  if (!b.known) return "an accelerator referee does not know (" + b.family + ")";
  if (a.family == b.family) return a.model() + " vs " + b.model() + ": another model of the same family";
  return a.model() + " vs " + b.model();
}

}  // namespace referee::submissions
