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
  // MLPerf HPC: results/<system>/strong|weak/<benchmark>/. A strong-scaling
  // directory holds exactly `runs` results (time to train, as in Training);
  // a weak-scaling one at least `runs` models trained at once (throughput).
  bool scaling_folders = false;
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
// The same for a rule set named by its id, without loading its rule files:
// `<root>/facts/<usage>_<version>.yaml` when `root` has one, else referee's
// table (training rounds).
bool facts_for(const RulesetId& id, const std::string& root, RoundFacts* out, std::string* error);

// Whether the consortium's current RCP checker (mlperf_logging 4.1.59, the
// oracle referee is held to) has a run count for `benchmark` under `usage`
// ("training" or "hpc"). Its table lacks the benchmarks retired before 3.0
// (dlrm, minigo, ...): on their closed directories it stops with
// KeyError('<benchmark>'), and with KeyError(None) where the logs name no
// benchmark or disagree on the batch size. Reports say so (BenchmarkDir::
// consortium_stops); referee checks such a directory by the round's rules.
bool consortium_rcp_table_has(const std::string& usage, const std::string& benchmark);

// Required system-description fields (training).
const std::vector<std::string>& required_system_fields();
const std::vector<std::string>& availability_values();

// Required runs per benchmark for the RCP statistics (the RCP checker's own table).
int rcp_submission_runs(const std::string& benchmark);

// What a benchmark's runs must reach, as the rule set's closed-division file
// (`<usage>_<version>/closed_<benchmark>.yaml`) checks it: the metric key and
// the first inclusive bound (`>=` or `<=`) of that key's ATLEAST_ONE_CHECK on
// v['value']. Strict bounds (`v['value'] < 1.0`, `> 0.0`) are sanity limits,
// not the target. has_target is false when the rule set has no such check or
// its target is not one number: a conditional (`... if ... else ...`), or
// stable_diffusion's two metrics (FID and CLIP) of aggregated_eval_accuracy.
struct QualityTarget {
  std::string metric = "eval_accuracy";
  bool has_target = false;
  double target = 0;
  std::string direction;  // "max" (higher is better: value >= target) | "min" (value <= target)
  std::string check;      // the expression it was read from ("" when none)
};
QualityTarget quality_target(const RuleSet& rules, const std::string& benchmark);
// The same, from the text of a check expression (for tests and other callers).
bool target_from_check(const std::string& expression, double* target, std::string* direction);

// Where the RCP checker reads a run's convergence point: "epoch_num",
// "samples_count", or "step_num" (stable_diffusion in 3.1.0).
std::string convergence_field(Convergence how, const std::string& ruleset_version);
// The unit a run's convergence point is read in, named after the column of
// eval_points that holds it: "epochs" (epoch_num, eval_points.epoch),
// "samples" (samples_count, eval_points.samples) or "steps" (step_num, not
// kept in eval_points).
std::string convergence_unit(Convergence how, const std::string& ruleset_version);
// What those numbers count, where it is not what the field's name says:
// "samples" for BERT (its logs fill epoch_num with training samples: its RCPs
// are in the millions), "tokens" for GPT-3 (epoch_num holds samples x
// 2048-token sequences, RCPs about 1.2e9); otherwise the unit.
std::string convergence_quantity(const std::string& benchmark, Convergence how, const std::string& ruleset_version);
// The same for a round named by its rule set id ("training-3.1.0" or
// "3.1.0"), for callers that know only names (the store's rounds, pages,
// findings): the benchmark's convergence as the RCP checker reads it in that
// round. Every page, table, CSV and JSON names its convergence figures with
// this word ("epochs", "samples", "tokens", "steps").
std::string convergence_quantity(const std::string& ruleset, const std::string& benchmark);

// A benchmark renamed between rounds is one benchmark: its lineage is its
// latest name. RetinaNet replaced SSD in 2.0 under the name "ssd" (target
// 0.34 mAP where SSD's was 0.23) and is "retinanet" from 5.0; the R-GAT
// benchmark is "gnn" in 4.0 and 4.1 and "rgat" from 5.0. "ssd" before 2.0 is
// SSD itself, another benchmark. Any other name is its own lineage.
// `ruleset`: "training-4.1.0", "training_4.1.0" or "4.1.0".
std::string benchmark_lineage(const std::string& ruleset, const std::string& benchmark);
// "ssd in training-4.1.0 is retinanet under its earlier name (renamed in
// 5.0)"; "" when the name is its lineage.
std::string benchmark_rename_note(const std::string& ruleset, const std::string& benchmark);

// What a benchmark trains, as the MLPerf Training benchmark table describes
// it: the model, the data set and the task, by lineage (benchmark_lineage),
// SSD before 2.0 apart from RetinaNet. known is false for a name the table
// does not hold (its fields then empty): a page says nothing rather than guess.
struct BenchmarkDescription {
  bool known = false;
  std::string model, dataset, task;
};
BenchmarkDescription benchmark_description(const std::string& ruleset, const std::string& benchmark);

}  // namespace referee::rules
