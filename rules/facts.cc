#include "rules/facts.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace referee::rules {

namespace {

// Required result files per benchmark. Policy: MLPerf Training rules,
// "Benchmark results" (number of runs per benchmark); mlperf_logging
// benchmark_meta.py _ALL_RESULT_FILE_COUNTS.
const std::map<std::string, int>& runs_table() {
  static const std::map<std::string, int> t = {
      {"bert", 10}, {"dlrm", 5}, {"dlrm_dcnv2", 10}, {"gnmt", 10}, {"gpt3", 3}, {"maskrcnn", 5},
      {"minigo", 10}, {"resnet", 5}, {"ssd", 5}, {"retinanet", 5}, {"stable_diffusion", 10},
      {"transformer", 10}, {"ncf", 10}, {"rnnt", 10}, {"unet3d", 40}, {"gnn", 10}, {"rgat", 10},
      {"llama2_70b_lora", 10}, {"llama31_405b", 3}, {"llama31_8b", 10}, {"flux1", 10},
      {"gpt_oss_20b", 10}, {"deepseekv3_671b", 3}, {"qwen35_397b_grpo", 3}};
  return t;
}

// Benchmarks per round. Policy: MLPerf Training rules, "Benchmarks" table of
// each round; mlperf_logging benchmark_meta.py _ALL_ALLOWED_BENCHMARKS.
const std::map<std::string, std::vector<std::string>>& rounds_table() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"0.6", {"resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo"}},
      {"0.7", {"bert", "dlrm", "gnmt", "maskrcnn", "minigo", "resnet", "ssd", "transformer"}},
      {"1.0", {"bert", "dlrm", "maskrcnn", "minigo", "resnet", "ssd", "rnnt", "unet3d"}},
      {"1.1", {"bert", "dlrm", "maskrcnn", "minigo", "resnet", "ssd", "rnnt", "unet3d"}},
      {"2.0", {"bert", "dlrm", "maskrcnn", "minigo", "resnet", "ssd", "rnnt", "unet3d"}},
      {"2.1", {"bert", "dlrm", "maskrcnn", "minigo", "resnet", "ssd", "rnnt", "unet3d"}},
      {"3.0", {"bert", "dlrm_dcnv2", "gpt3", "maskrcnn", "resnet", "ssd", "rnnt", "unet3d"}},
      {"3.1", {"bert", "dlrm_dcnv2", "gpt3", "maskrcnn", "resnet", "ssd", "rnnt", "unet3d", "stable_diffusion"}},
      {"4.0", {"bert", "dlrm_dcnv2", "gpt3", "resnet", "ssd", "unet3d", "stable_diffusion", "llama2_70b_lora", "gnn"}},
      {"4.1", {"bert", "dlrm_dcnv2", "gpt3", "ssd", "stable_diffusion", "llama2_70b_lora", "gnn"}},
      {"5.0", {"bert", "dlrm_dcnv2", "retinanet", "stable_diffusion", "llama2_70b_lora", "rgat", "llama31_405b"}},
      {"5.1", {"llama31_8b", "dlrm_dcnv2", "retinanet", "flux1", "llama2_70b_lora", "rgat", "llama31_405b"}},
      {"6.0", {"llama31_8b", "dlrm_dcnv2", "flux1", "llama2_70b_lora", "llama31_405b", "gpt_oss_20b", "deepseekv3_671b"}},
      {"6.1", {"llama31_8b", "flux1", "llama2_70b_lora", "gpt_oss_20b", "deepseekv3_671b", "qwen35_397b_grpo"}},
  };
  return t;
}

// MLPerf HPC. Policy: MLPerf HPC rules, "Benchmarks" and "Scaling"
// (strong scaling: time to train one model, as Training; weak scaling: many
// models trained at once); mlperf_logging benchmark_meta.py 'hpc'.
const std::map<std::string, int>& hpc_runs_table() {
  static const std::map<std::string, int> t = {{"deepcam", 5}, {"cosmoflow", 10}, {"oc20", 5}, {"openfold", 10}};
  return t;
}

const std::map<std::string, std::vector<std::string>>& hpc_rounds_table() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"0.7", {"cosmoflow", "deepcam"}},
      {"1.0", {"cosmoflow", "deepcam", "oc20"}},
      {"2.0", {"cosmoflow", "deepcam", "oc20"}},
      {"3.0", {"cosmoflow", "deepcam", "oc20", "openfold"}},
  };
  return t;
}

// How the RCP checker reads convergence. Policy: MLPerf Training rules,
// "Reference Convergence Points"; mlperf_logging rcp_checker.read_submission_file.
Convergence convergence_of(const std::string& b) {
  if (b == "stable_diffusion") return Convergence::StableDiffusion;
  if (b == "llama2_70b_lora" || b == "flux1" || b.rfind("llama", 0) == 0 || b.rfind("gpt_oss", 0) == 0 ||
      b.rfind("deepseek", 0) == 0 || b.rfind("qwen", 0) == 0)
    return Convergence::SamplesCount;
  return Convergence::EpochNum;
}

int version_major(const std::string& v) { return std::atoi(v.c_str()); }

}  // namespace

const BenchmarkFacts* RoundFacts::find(const std::string& benchmark) const {
  for (const auto& b : benchmarks)
    if (b.name == benchmark) return &b;
  return nullptr;
}

int rcp_submission_runs(const std::string& benchmark) {
  auto it = runs_table().find(benchmark);
  if (it != runs_table().end()) return it->second;
  auto h = hpc_runs_table().find(benchmark);
  return h == hpc_runs_table().end() ? 0 : h->second;
}

bool consortium_rcp_table_has(const std::string& usage, const std::string& benchmark) {
  // Policy: mlperf_logging 4.1.59 rcp_checker.py, submission_runs.
  static const std::set<std::string> training = {
      "bert", "dlrm_dcnv2", "gpt3", "maskrcnn", "resnet", "ssd", "retinanet", "unet3d", "rnnt", "stable_diffusion",
      "gnn", "rgat", "llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b", "gpt_oss_20b", "deepseekv3_671b",
      "qwen35_397b_grpo"};
  static const std::set<std::string> hpc = {"cosmoflow", "deepcam", "oc20", "openfold"};
  if (usage == "training") return training.count(benchmark) > 0;
  if (usage == "hpc") return hpc.count(benchmark) > 0;
  return true;  // referee's own rule sets: no consortium table to compare with
}

const std::vector<std::string>& required_system_fields() {
  // Policy: MLPerf Training submission rules, "System description";
  // mlperf_logging system_desc_checker.required_fields.
  static const std::vector<std::string> f = {
      "submitter", "division", "status", "system_name", "number_of_nodes", "host_processors_per_node",
      "host_processor_model_name", "host_processor_core_count", "host_processor_vcpu_count",
      "host_processor_frequency", "host_processor_caches", "host_processor_interconnect",
      "host_memory_capacity", "host_storage_type", "host_storage_capacity", "host_networking",
      "host_networking_topology", "host_memory_configuration", "accelerators_per_node",
      "accelerator_model_name", "accelerator_host_interconnect", "accelerator_frequency",
      "accelerator_on-chip_memories", "accelerator_memory_configuration", "accelerator_memory_capacity",
      "accelerator_interconnect", "accelerator_interconnect_topology", "cooling", "hw_notes", "framework",
      "other_software_stack", "operating_system", "sw_notes"};
  return f;
}

const std::vector<std::string>& availability_values() {
  // Policy: MLPerf Training submission rules, "Availability" (from 4.0).
  static const std::vector<std::string> v = {"Available on-premise", "Available cloud",
                                             "Research, Development, or Internal (RDI)", "Preview"};
  return v;
}

bool facts_for(const RuleSet& rules, RoundFacts* out, std::string* error) {
  return facts_for(rules.id(), rules.root(), out, error);
}

bool facts_for(const RulesetId& id, const std::string& root, RoundFacts* out, std::string* error) {
  *out = RoundFacts{};
  out->ruleset = id.id();
  const std::string& usage = id.usage;
  const std::string& version = id.version;
  // The project's own sets carry a facts file.
  std::filesystem::path ff = std::filesystem::path(root) / "facts" / (id.dir() + ".yaml");
  std::error_code ec;
  if (std::filesystem::exists(ff, ec)) {
    try {
      YAML::Node n = YAML::LoadFile(ff.string());
      for (auto it = n["benchmarks"].begin(); it != n["benchmarks"].end(); ++it) {
        BenchmarkFacts b;
        b.name = it->first.as<std::string>();
        b.runs = it->second["runs"].as<int>();
        b.olympic_drop = it->second["olympic_drop"] ? it->second["olympic_drop"].as<int>() : 1;
        b.allowed_failures = it->second["allowed_failures"] ? it->second["allowed_failures"].as<int>() : b.olympic_drop;
        std::string conv = it->second["convergence"] ? it->second["convergence"].as<std::string>() : "epoch_num";
        b.convergence = conv == "samples_count" ? Convergence::SamplesCount : Convergence::EpochNum;
        b.rcp = it->second["rcp"] ? it->second["rcp"].as<bool>() : true;
        out->benchmarks.push_back(b);
      }
      out->system_status_check = n["system_status_check"] ? n["system_status_check"].as<bool>() : true;
      out->seed_check = n["seed_check"] ? n["seed_check"].as<bool>() : true;
      out->rcp_check = n["rcp_check"] ? n["rcp_check"].as<bool>() : true;
      out->source = ff.string();
      return true;
    } catch (const YAML::Exception& e) {
      *error = ff.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
      return false;
    }
  }
  std::string short_version = version.substr(0, version.rfind('.'));
  if (usage == "hpc") {
    auto h = hpc_rounds_table().find(short_version);
    if (h == hpc_rounds_table().end()) {
      *error = "referee knows no benchmarks for HPC round " + version;
      return false;
    }
    for (const auto& name : h->second) {
      BenchmarkFacts b;
      b.name = name;
      b.runs = hpc_runs_table().at(name);
      b.convergence = Convergence::EpochNum;
      out->benchmarks.push_back(b);
    }
    // Seeds and RCPs as in Training from 1.0 (the package checker's round
    // list); no availability values for HPC systems.
    out->scaling_folders = true;
    out->system_check = true;
    out->system_status_check = false;
    out->seed_check = version_major(version) >= 1;
    out->rcp_check = version_major(version) >= 1;
    out->source = "referee's facts table (MLPerf HPC rules; mlperf_logging benchmark_meta)";
    return true;
  }
  if (usage != "training") {
    *error = "referee knows no benchmark facts for rule set " + id.id() + " (and " + ff.string() + " does not exist)";
    return false;
  }
  auto it = rounds_table().find(short_version);
  if (it == rounds_table().end()) {
    *error = "referee knows no benchmarks for training round " + version;
    return false;
  }
  for (const auto& name : it->second) {
    BenchmarkFacts b;
    b.name = name;
    b.runs = runs_table().at(name);
    b.olympic_drop = name == "unet3d" ? 4 : 1;
    b.allowed_failures = name == "unet3d" ? 4 : 1;
    b.convergence = convergence_of(name);
    b.rcp = name != "minigo";
    out->benchmarks.push_back(b);
  }
  bool from_1_0 = version_major(version) >= 1;
  out->system_check = from_1_0;
  out->system_status_check = version_major(version) >= 4;
  out->seed_check = from_1_0;
  out->rcp_check = from_1_0;
  out->source = "referee's facts table (MLPerf Training rules; mlperf_logging benchmark_meta)";
  return true;
}

namespace {

bool is_num_char(char c) { return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'; }

// Flips a comparison written NUM OP v into v OP' NUM.
std::string flip(const std::string& op) {
  if (op == "<=") return ">=";
  if (op == ">=") return "<=";
  if (op == "<") return ">";
  if (op == ">") return "<";
  return op;
}

}  // namespace

bool target_from_check(const std::string& e, double* target, std::string* direction) {
  // One target only: a conditional picks between several.
  if (e.find(" if ") != std::string::npos) return false;
  struct Cmp {
    std::string op;  // v OP num
    double num;
  };
  std::vector<Cmp> cmps;
  size_t pos = 0;
  while (pos < e.size()) {
    size_t a = e.find("v['value']", pos), b = e.find("v[\"value\"]", pos);
    size_t at = std::min(a, b);
    if (at == std::string::npos) break;
    size_t end = at + 10;
    pos = end;
    if (end < e.size() && e[end] == '[') continue;  // v['value']['FID']: a part of the value
    // NUM OP v['value'] on the left.
    {
      size_t i = at;
      while (i > 0 && e[i - 1] == ' ') --i;
      size_t op_end = i;
      while (i > 0 && (e[i - 1] == '<' || e[i - 1] == '>' || e[i - 1] == '=')) --i;
      std::string op = e.substr(i, op_end - i);
      while (i > 0 && e[i - 1] == ' ') --i;
      size_t num_end = i;
      while (i > 0 && is_num_char(e[i - 1])) --i;
      if ((op == "<" || op == "<=" || op == ">" || op == ">=") && num_end > i) {
        std::string num = e.substr(i, num_end - i);
        char* stop = nullptr;
        double v = std::strtod(num.c_str(), &stop);
        if (stop && *stop == 0 && (i == 0 || !(std::isalnum(static_cast<unsigned char>(e[i - 1])) || e[i - 1] == '_' ||
                                              e[i - 1] == ']' || e[i - 1] == ')')))
          cmps.push_back({flip(op), v});
      }
    }
    // v['value'] OP NUM on the right.
    {
      size_t i = end;
      while (i < e.size() && e[i] == ' ') ++i;
      size_t op_start = i;
      while (i < e.size() && (e[i] == '<' || e[i] == '>' || e[i] == '=')) ++i;
      std::string op = e.substr(op_start, i - op_start);
      while (i < e.size() && e[i] == ' ') ++i;
      size_t num_start = i;
      while (i < e.size() && is_num_char(e[i])) ++i;
      if ((op == "<" || op == "<=" || op == ">" || op == ">=") && i > num_start) {
        std::string num = e.substr(num_start, i - num_start);
        char* stop = nullptr;
        double v = std::strtod(num.c_str(), &stop);
        bool whole = i == e.size() || !(std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '_' || e[i] == '[' ||
                                        e[i] == '(' || e[i] == '*' || e[i] == '/');
        if (stop && *stop == 0 && whole) cmps.push_back({op, v});
      }
    }
  }
  for (const auto& c : cmps) {
    if (c.op == ">=") {
      *target = c.num;
      *direction = "max";
      return true;
    }
    if (c.op == "<=") {
      *target = c.num;
      *direction = "min";
      return true;
    }
  }
  return false;
}

QualityTarget quality_target(const RuleSet& rules, const std::string& benchmark) {
  QualityTarget out;
  const RuleFile* f = rules.file(rules.folder() + "/closed_" + benchmark + ".yaml");
  if (!f) return out;
  int k = f->find(out.metric);
  if (k < 0 || !f->keys[static_cast<size_t>(k)].has_atleast_one) return out;
  out.check = f->keys[static_cast<size_t>(k)].atleast_one_check.source();
  out.has_target = target_from_check(out.check, &out.target, &out.direction);
  return out;
}

std::string convergence_field(Convergence how, const std::string& ruleset_version) {
  switch (how) {
    case Convergence::EpochNum: return "epoch_num";
    case Convergence::SamplesCount: return "samples_count";
    case Convergence::StableDiffusion: return ruleset_version == "3.1.0" ? "step_num" : "samples_count";
  }
  return "epoch_num";
}

std::string convergence_unit(Convergence how, const std::string& ruleset_version) {
  std::string field = convergence_field(how, ruleset_version);
  if (field == "step_num") return "steps";
  return field == "samples_count" ? "samples" : "epochs";
}

namespace {
std::string version_of(const std::string& ruleset) {
  size_t cut = ruleset.find_last_of("-_");
  return cut == std::string::npos ? ruleset : ruleset.substr(cut + 1);
}
struct Rename {
  const char* old_name;
  const char* from_version;  // first round with the old name meaning the lineage (inclusive)
  const char* lineage;
  const char* renamed_in;    // first round with the new name
};
// Policy: MLPerf Training benchmark history (RetinaNet replaced SSD in 2.0
// keeping the key "ssd"; the keys were renamed in 5.0); the consortium's
// benchmark_meta lists both names.
constexpr Rename kRenames[] = {{"ssd", "2.0", "retinanet", "5.0"}, {"gnn", "4.0", "rgat", "5.0"}};

bool version_at_least(const std::string& v, const char* min) {
  int a = 0, b = 0, x = 0, y = 0;
  std::sscanf(v.c_str(), "%d.%d", &a, &b);
  std::sscanf(min, "%d.%d", &x, &y);
  return a != x ? a > x : b >= y;
}
}  // namespace

std::string benchmark_lineage(const std::string& ruleset, const std::string& benchmark) {
  std::string v = version_of(ruleset);
  for (const auto& r : kRenames)
    if (benchmark == r.old_name && version_at_least(v, r.from_version) && !version_at_least(v, r.renamed_in)) return r.lineage;
  return benchmark;
}

std::string benchmark_rename_note(const std::string& ruleset, const std::string& benchmark) {
  std::string v = version_of(ruleset);
  for (const auto& r : kRenames)
    if (benchmark == r.old_name && version_at_least(v, r.from_version) && !version_at_least(v, r.renamed_in))
      return benchmark + " in " + ruleset + " is " + r.lineage + " under its earlier name (renamed in " + r.renamed_in + ")";
  return "";
}

BenchmarkDescription benchmark_description(const std::string& ruleset, const std::string& benchmark) {
  struct Row {
    const char *lineage, *model, *dataset, *task;
  };
  // By lineage; "ssd" reaches here only before 2.0 (SSD itself).
  static constexpr Row kRows[] = {
      {"resnet", "ResNet-50 v1.5", "ImageNet (ILSVRC 2012)", "image classification"},
      {"ssd", "SSD (ResNet-34 backbone)", "COCO 2017", "object detection, light-weight"},
      {"retinanet", "RetinaNet (ResNeXt-50 backbone)", "OpenImages (MLPerf subset)", "object detection"},
      {"maskrcnn", "Mask R-CNN (ResNet-50 FPN)", "COCO 2017", "object detection and instance segmentation"},
      {"bert", "BERT-Large", "Wikipedia (2020-01-01 dump)", "masked language model pre-training"},
      {"gpt3", "GPT-3 175B", "C4", "large language model pre-training"},
      {"dlrm", "DLRM", "Criteo Terabyte click logs", "recommendation"},
      {"dlrm_dcnv2", "DLRM with DCNv2", "Criteo 4TB, multi-hot", "recommendation"},
      {"rnnt", "RNN-T", "LibriSpeech", "speech recognition"},
      {"unet3d", "3D U-Net", "KiTS19", "medical image segmentation"},
      {"minigo", "MiniGo", "self-play games of Go (9x9)", "reinforcement learning"},
      {"transformer", "Transformer (big)", "WMT17 English-German", "translation"},
      {"gnmt", "GNMT", "WMT16 English-German", "translation"},
      {"ncf", "NCF", "MovieLens 20M", "recommendation"},
      {"stable_diffusion", "Stable Diffusion v2", "LAION-400M (filtered)", "text to image"},
      {"llama2_70b_lora", "Llama 2 70B with LoRA", "SCROLLS GovReport", "large language model fine-tuning"},
      {"rgat", "R-GAT", "IGBH-Full (Illinois Graph Benchmark, heterogeneous)", "graph node classification"},
      {"llama31_405b", "Llama 3.1 405B", "C4", "large language model pre-training"},
      {"llama31_8b", "Llama 3.1 8B", "C4", "large language model pre-training"},
      {"flux1", "FLUX.1", "CC12M", "text to image"},
  };
  const std::string lineage = benchmark_lineage(ruleset, benchmark);
  BenchmarkDescription d;
  for (const auto& r : kRows)
    if (lineage == r.lineage) {
      d.known = true;
      d.model = r.model;
      d.dataset = r.dataset;
      d.task = r.task;
    }
  return d;
}

std::string convergence_quantity(const std::string& ruleset, const std::string& benchmark) {
  // "training-3.1.0", "training_3.1.0" or "3.1.0": the version is what follows the last '-' or '_'.
  return convergence_quantity(benchmark, convergence_of(benchmark), version_of(ruleset));
}

std::string convergence_quantity(const std::string& benchmark, Convergence how, const std::string& ruleset_version) {
  std::string unit = convergence_unit(how, ruleset_version);
  if (unit != "epochs") return unit;
  if (benchmark == "bert") return "samples";
  if (benchmark == "gpt3") return "tokens";
  return unit;
}

}  // namespace referee::rules
