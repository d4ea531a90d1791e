// Facts the consortium keeps in code rather than in its rule files: which
// benchmarks a round has, how many runs each needs, how many olympic scoring
// drops, how the RCP checker reads convergence, and which system-description
// fields are required. referee keeps its own table of them (facts.cc), each
// with the policy it comes from. The project's own rule sets carry theirs in
// `<rules root>/facts/<usage>_<version>.yaml`.
#pragma once

#include <string>
#include <vector>

#include "rules/ruleset.h"

namespace referee::rules {

enum class Convergence {
  EpochNum,          // metadata.epoch_num of the last eval_accuracy before run_stop, rounded to 3 decimals
  SamplesCount,      // metadata.samples_count of that line
  StableDiffusion,   // first eval step (step_num in 3.1.0, samples_count later) with FID <= 90 and CLIP >= 0.15
};

struct BenchmarkFacts {
  std::string name;
  int runs = 0;          // result files required
  int olympic_drop = 1;  // runs dropped at each end (scores, RCP means)
  int allowed_failures = 1;  // failing files accepted under olympic scoring
  Convergence convergence = Convergence::EpochNum;
  bool rcp = true;       // RCP check applies (minigo has none)
};

struct RoundFacts {
  std::string ruleset;  // "training-3.1.0"
  std::vector<BenchmarkFacts> benchmarks;
  bool system_check = true;         // systems/*.json required fields
  bool system_status_check = false; // 'status' must be an availability value (4.0.0 and later)
  bool seed_check = true;           // closed division, 1.0.0 and later
  bool rcp_check = true;            // closed division, 1.0.0 and later
  std::string source;               // where these facts come from
  const BenchmarkFacts* find(const std::string& benchmark) const;
};

// Facts for a loaded rule set. Returns false with *error when referee knows
// no facts for it.
bool facts_for(const RuleSet& rules, RoundFacts* out, std::string* error);

// Required system-description fields (training).
const std::vector<std::string>& required_system_fields();
const std::vector<std::string>& availability_values();

// Required runs per benchmark for the RCP statistics (the RCP checker's own table).
int rcp_submission_runs(const std::string& benchmark);

}  // namespace referee::rules
