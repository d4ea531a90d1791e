// The package checker: everything the consortium's package checker does for
// a training submission package <org>/{systems,results}, without modifying it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rules/compliance.h"
#include "rules/facts.h"
#include "rules/power.h"
#include "rules/rcp.h"
#include "rules/ruleset.h"
#include "rules/scoring.h"

namespace referee::rules {

struct PackageOptions {
  int jobs = 1;                // threads for reading and checking files
  bool rcp_bypass = false;     // --rcp-bypass (package-wide)
  bool seed_bypass = false;    // --seed-checker-bypass (package-wide)
  bool details = false;        // also hash each file and collect its evaluation curve (for the store)
};

struct ResultFile {
  std::string name;  // result_0.txt
  std::string path;
  FileVerdict verdict;
  bool readable = true;
  // Not read: for the store (PackageOptions::details), a result file that
  // resolves outside the package (a link to the server's own files) is
  // refused, so that no page, finding or quoted line can show what it points at.
  std::string refused;
  // What the seed and RCP passes read from the same parse.
  struct Seed {
    std::string file;    // as printed
    std::string lineno;
    int64_t seed = 0;
    std::string key;     // (file, lineno) compared as Python compares them in a tuple
  };
  std::vector<Seed> seeds;
  std::string seed_error;  // the seed checker could not read this file's seeds
  RunConvergence convergence;
  // The result summarizer's time to train: run_start and run_stop timestamps (ms).
  bool has_times = false;
  double run_start_ms = 0, run_stop_ms = 0;
  // run_start lines in the file. The summarizer takes the last one before the
  // first run_stop; a relaunched run logs more than one.
  int run_starts = 0;
  uint32_t run_start_line = 0;        // file line of the run_start the time counts from
  uint32_t first_run_start_line = 0;  // and of the first one
  double first_run_start_ms = 0;
  bool parse_errors = false;
  InstanceScale instance;  // MLPerf HPC: nodes x accelerators of one model (weak-scaling scores)
  // The evaluation curve: every eval_accuracy line.
  struct EvalPoint {
    double time_ms = 0;
    double epoch = 0, samples = 0, metric = 0;
    bool has_epoch = false, has_samples = false, has_metric = false;
    std::string value_json;  // the value as logged (maskrcnn logs a dict)
  };
  std::vector<EvalPoint> evals;
  std::string sha256;       // of the file's bytes
  std::string fingerprint;  // of the run: every MLLOG key and timestamp except submission_* lines,
                            // which submitters edit when they resubmit a log in a later round
};

struct BenchmarkDir {
  std::string system, benchmark, division;
  std::string scaling;        // MLPerf HPC: "strong" or "weak" (results/<system>/<scaling>/<benchmark>); "" in Training
  std::string path;
  // "<system>/<benchmark>", or "<system>/<scaling>/<benchmark>" for HPC: the
  // directory under results/, as reports name it.
  std::string key() const { return scaling.empty() ? system + "/" + benchmark : system + "/" + scaling + "/" + benchmark; }
  bool skipped = false;       // not a benchmark of this round
  bool pass = true;
  int result_count = 0, expected_count = 0;
  std::vector<ResultFile> files;  // sorted by name
  bool seeds_checked = false;
  bool seeds_ok = true;
  bool seeds_bypassed = false;
  std::vector<Finding> seed_errors;
  bool rcp_checked = false;
  RcpOutcome rcp;
  bool rcp_bypass = false;
  PowerCheck power;               // the power checker's pass over power/ (power.present when there is one)
  std::vector<Finding> errors;    // directory-level reasons for failure
  std::vector<Finding> warnings;  // stray files, ignored bypass lines, ...
  // Set where the consortium's current package checker stops with a
  // traceback on this directory, so that it gives no verdict (its RCP
  // checker's KeyError on a benchmark retired before 3.0, say): what it
  // raises and why. The verdict above follows the round's rules as written.
  std::string consortium_stops;
};

struct SystemFile {
  std::string name;  // eos_n8.json
  bool valid = true;
  // No "division" field (round 0.7's descriptions had none): the
  // consortium's current package checker stops on every result directory of
  // this system (BenchmarkDir::consortium_stops).
  bool lacks_division = false;
  // Not a JSON object: where the consortium's current package checker stops
  // reading it ("" when it reads it).
  std::string consortium_stops;
  std::vector<Finding> errors;
  std::vector<Finding> warnings;  // accepted, but today's rules for later rounds would refuse it
};

struct PackageReport {
  std::string package;  // folder name of the organisation
  std::string path;
  bool pass = true;
  std::vector<SystemFile> systems;
  std::vector<BenchmarkDir> benchmarks;  // sorted by system/benchmark
  std::vector<Finding> errors;           // package-level (no results/ folder, ...)
  std::vector<Finding> warnings;
  // Set where the consortium's current package checker stops with a
  // traceback before it reaches any directory's verdict (an HPC folder that
  // is neither strong/ nor weak/): why.
  std::string consortium_stops;
  uint64_t bytes = 0;                    // log bytes read
  size_t files = 0;
};

// The fields of systems/<system>.json that the consortium's package checker
// joins as text (the summary-table prefix of system_desc_checker): a value of
// any other JSON type (number, true/false, null, list, object) stops it with a
// TypeError, so the package cannot be checked at all.
const std::vector<std::string>& system_text_fields();

// One error per field of `desc` (a system description, a JSON object) that the
// consortium's package checker cannot read: which field, what it expected,
// what it found and the fix.
std::vector<Finding> system_field_type_errors(const Value& desc);

// The result summarizer's availability map (its config.yaml): the value a
// system's `status` stands for ("cloud" -> "Available cloud"), case aside;
// "" when it is none of the spellings the summarizer knows.
std::string canonical_availability(const std::string& status);

// MLCommons' availability category of a system's `status`, whatever its
// spelling: "Available on-premise", "Available cloud", "Preview" or
// "Research, Development, or Internal (RDI)". Tolerant where the summarizer's
// map is exact: case, hyphens, "in"/"on" and "premise(s)" aside ("Available in
// cloud", "available on premise", "Available on-premises", "onprem"). ""
// when the text names none of them (then shown as written, and flagged).
std::string availability_category(const std::string& status);

// Checks `org_dir`. Returns false (with *error) only when the package cannot
// be checked at all (missing folder); rule breaks are in the report.
bool check_package(const RuleSet& rules, const RoundFacts& facts, const std::string& org_dir,
                   const PackageOptions& opt, PackageReport* out, std::string* error);

// What check_package gives for one package.
struct PackageOutcome {
  bool ok = false;       // false: the package could not be checked at all (error says why)
  PackageReport report;
  std::string error;
};

// Checks several packages (a round's organisations) as check_package checks
// each, with one set of `opt.jobs` threads for the result files of them all:
// a round takes about as long as one package of its size. outcome[i] is
// org_dirs[i]'s.
std::vector<PackageOutcome> check_packages(const RuleSet& rules, const RoundFacts& facts,
                                           const std::vector<std::string>& org_dirs, const PackageOptions& opt);

// Checks one systems/<system>.json as the consortium's system_desc_checker
// does for facts.ruleset; *division gets its "division" field.
void check_system(const std::filesystem::path& p, const RoundFacts& facts, SystemFile* out, std::string* division);

// Does to scaling.json files what the consortium's RCP pass does: in every
// RCP-evaluated directory, writes {"scaling_factor": f} (atomically) where the
// normalisation applies and removes a stale one elsewhere. Returns what changed.
std::vector<std::string> write_scaling_files(const PackageReport& report, std::string* error);

}  // namespace referee::rules
