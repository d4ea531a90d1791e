// Scores as the consortium's result summarizer computes them for training:
// time to train per run, non-compliant runs dropped, the olympic mean, and the
// scaling factor of the directory.
#pragma once

#include <filesystem>

#include <string>
#include <vector>

#include "rules/package.h"

namespace referee::rules {

enum class ScaleMode {
  Published,  // apply a scaling.json present in the package (the review committee's decision)
  Pipeline,   // as the consortium's pipeline today: its RCP pass replaces scaling.json, then the summarizer runs
};

struct RunScore {
  std::string file;
  double minutes = 0;     // (run_stop - run_start) / 60 / 1000
  bool counted = false;   // inside the olympic window
  std::string dropped;    // why not counted: "non-compliant: ...", "fastest (olympic)", "slowest (olympic)"
  std::string drop_kind;  // "noncompliant" (dropped before the olympic window), "olympic", or "" (counted, or no score)
  // The consortium accepts a log with more than one run_start (a warning) and
  // times the run from the last one before run_stop; this says so, with the
  // time from the first one.
  std::string warning;
  int run_starts = 1;
  double minutes_from_first_start = 0;
  bool has_energy = false;   // the run's energy to train (benchmark directories with a power/ folder)
  double energy_j = 0;       // joules, as the summarizer's _compute_total_power
  std::string energy_error;  // why the run has no energy figure
};

struct BenchmarkScore {
  std::string system, benchmark;
  std::string scaling;        // MLPerf HPC: "strong" or "weak"; "" in Training
  bool has_score = false;
  double score = 0;           // minutes, factor applied
  double unscaled = 0;        // olympic mean before the factor
  double factor = 1.0;
  std::string factor_source;  // "none", "scaling.json", "RCP normalisation (pipeline)", "scaling.json removed by the RCP pass"
  double published_factor = 1.0;   // the scaling.json in the package, if any
  bool has_published_factor = false;
  double pipeline_factor = 1.0;    // what the pipeline's RCP pass leaves
  std::vector<RunScore> runs;      // sorted by time
  int noncompliant = 0;
  int max_dropped = 1;
  std::string note;                // why there is no score
  // Energy to train (the summarizer's "<benchmark>:Energy"), when the
  // directory has a power/ folder: the mean energy of the runs that the
  // olympic window of times counts, times the same factor.
  bool has_power = false;
  bool has_energy = false;
  double energy_j = 0, unscaled_energy_j = 0;
  std::string energy_note;                // why there is no energy figure
  std::vector<std::string> energy_warnings;
  // For the detailed CSV: the RCP columns as the summarizer fills them (closed division).
  bool has_gbs = false, has_samples_to_converge = false;
  double gbs = 0, samples_to_converge = 0;
  std::string rcp_label;                  // "Pass", "Fail", "Interp. Fail", "Missing", "No RCP", "Unknown state" or ""

  // MLPerf HPC weak scaling (scaling == "weak"), as the summarizer's weak
  // table: the models trained (compliant runs with a run_start and a
  // run_stop), the minutes from the first run_start to the last run_stop
  // among them, and the accelerators one model used (rules::instance_scale).
  // has_score is set when at least `runs` models count; `score` is then
  // time_to_train_all_minutes.
  int number_of_models = 0;
  double time_to_train_all_minutes = 0;
  bool has_instance_scale = false;
  long long instance_scale = 0;
  // Set where the consortium's summarizer stops with a traceback on this
  // directory (runs whose instance scales differ, a value int() cannot
  // take): the figures above follow the rules; the summarizer gives none.
  std::string consortium_stops;
};

struct SystemRow {
  std::string system_file;  // stem of systems/<x>.json (= results/<x>)
  std::string division, availability, submitter, system, number_of_nodes, host_processor_model_name;
  long long host_processors_count = 0, accelerators_count = 0;
  std::string accelerator_model_name, framework, notes, details_url, code_url;
  std::string private_id;   // results/<system>/privateid.json's "private_id", else ""
  bool complete = true;
  std::string error;  // a required field is missing
  // Where the consortium's result summarizer stops with a traceback on this
  // system (a description that is not JSON, not UTF-8, or lacks a field); ""
  // where it reads it or, the description missing, leaves the system out.
  std::string consortium_stops;
  std::vector<BenchmarkScore> scores;  // one per benchmark directory of this system
};

struct ScoreReport {
  std::string package;
  std::string ruleset;
  ScaleMode mode = ScaleMode::Published;
  std::vector<std::string> benchmarks;  // the round's benchmarks (CSV columns)
  std::vector<SystemRow> rows;
};

// A benchmark folder's scaling.json as the summarizer reads it (an integer,
// a float or a boolean `scaling_factor`), for score and for publish alike.
// `package_root` is resolved (weakly_canonical): a file leading outside it is
// not read.
struct ScalingFile {
  bool present = false;   // there is a scaling.json (or something of that name)
  bool usable = false;    // it gives a finite factor
  double factor = 1.0;
  bool outside = false;   // a link out of the package, to `real`
  std::filesystem::path real;
  std::string problem;    // why it is not usable ("" when usable or absent)
};
ScalingFile read_scaling_json(const std::filesystem::path& dir, const std::filesystem::path& package_root);

// Scores a package from a finished check_package report.
ScoreReport score_package(const PackageReport& report, const RoundFacts& facts, ScaleMode mode);

// The consortium's CSV (result summarizer columns).
std::string scores_csv(const ScoreReport& r, bool header);
// MLPerf HPC: the summarizer's weak-scaling table (it appends it to the same
// CSV file, after the strong one, header and all): per benchmark
// <b>:number_of_models, <b>:instance_scale, <b>:time_to_train_all (minutes);
// a row per system with weak-scaling results.
std::string scores_csv_weak(const ScoreReport& r, bool header);
// The summarizer's CSV file of one or more packages: the strong table (one
// header, every package's rows), then, where any package has weak-scaling
// results, the weak table.
std::string summary_csv(const std::vector<const ScoreReport*>& packages);

// The summarizer's detailed CSV (its `<name>_detailed.csv`): per benchmark
// time_to_train, Energy, GBS, samples_to_converge, RCP, rcp_scaling_factor.
std::string scores_csv_detailed(const ScoreReport& r, bool header);

}  // namespace referee::rules
