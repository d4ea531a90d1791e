// Importing checked packages into the store.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "rules/facts.h"
#include "rules/package.h"
#include "rules/ruleset.h"
#include "submissions/store.h"

namespace referee::submissions {

// A package added to or replaced in a round with a review record, or
// replaced in any round, handed to ImportOptions::record_change inside the
// import's transaction.
// What a replacement changed in one result: its files (by content), runs,
// verdict, score and the checks that failed it.
struct ResultChange {
  std::string result;  // system/benchmark
  std::string change;  // "added" | "removed" | "changed"
  std::string verdict_before, verdict_after;  // "" where the result is not (added, removed)
  bool has_score_before = false, has_score_after = false;
  double score_before = 0, score_after = 0;  // minutes, as published
  std::string checks_before = "[]", checks_after = "[]";  // failed_checks ([] when it passes)
  long long runs_before = 0, runs_after = 0;
  std::vector<std::string> files_added, files_removed, files_changed;  // run log file names
};

struct PackageChange {
  std::string round, organisation;
  std::string status;                      // "imported" | "replaced"
  std::string old_sha256, new_sha256;      // old_sha256 "" when imported
  std::vector<std::string> results_changed;  // "system/benchmark: what changed"
  std::vector<ResultChange> changes;       // the same, field by field (on a first import: each result added)
  std::string rows_sha256;                 // package_rows_sha256 of what the import left
};

struct ImportOptions {
  int jobs = 1;
  // Called before each package (index, count, name); for progress display.
  std::function<void(size_t, size_t, const std::string&)> progress;
  // Test hook: called inside the transaction after this many runs were written.
  std::function<void()> fail_after_runs;
  long long fail_after_runs_count = -1;
  // Called inside the transaction when a package is added to or replaced in
  // a round, so that the caller records it (the review log, which keeps the
  // digest of its rows for `review log --verify`); false (with *error) rolls
  // the import back.
  std::function<bool(const PackageChange&, std::string* error)> record_change;
  // The digest of a package's rows as last recorded (package_rows_sha256;
  // "" when none was). The same bytes under the same rules whose rows differ
  // from it (edited in the store) are written again from the files.
  std::function<std::string(const std::string& round, const std::string& organisation)> recorded_rows;
};

struct ImportResult {
  std::string organisation;
  std::string status;  // "imported", "replaced", "unchanged", "repaired" (the same files, rows edited in the store)
  int results = 0, runs = 0, resubmitted_runs = 0;
  int weak_results = 0;  // MLPerf HPC weak-scaling results (not among `results`)
  int weak_runs = 0;     // their runs (not among `runs`)
  int rcp_filled = 0;  // "unchanged": results imported before schema 6 (8) given their rcp_json (failed_checks)
  bool links_restored = false;  // "unchanged": its runs' resubmission links, edited in the store, made again
  std::string verdict;
};

// The SHA-256 (hex) of what the store holds of one package, as an import
// writes it: its round, organisation, content digest, verdict, rule set and
// folder (where quoted log lines are read from);
// each system (every field of its description); each result (verdict, counts,
// seeds, RCP, scores, factors, energy, the checks that failed it); each run
// (file, digests, times, minutes, convergence, seed, compliance, counting,
// messages, energy) and its evaluation points. Left out: the resubmission
// links, which a later round's import sets, and where and when it was
// imported. "" with *error when the store cannot be read.
std::string package_rows_sha256(Store& store, long long package_id, std::string* error);

// Whether the store's derived rows agree with what they are derived from:
// each run's resubmission link (the earliest run with its fingerprint in an
// earlier round), each result's resubmission mark (every run a copy), and,
// for the whole store (`package_id` 0), each round's order against its
// version. "" when they agree; else the first disagreement (and *error set
// when the store cannot be read). With `package_id`, only the runs sharing a
// fingerprint with that package's.
std::string check_resubmission_links(Store& store, std::string* error, long long package_id = 0);

// The organisation folders under `dir`: `dir` itself when it has results/,
// else its sub-folders that have results/ (a round, or a results archive).
// A sub-folder that is not a submission package (is_package false: a report
// written there, say) is left out, and named with why in *skipped.
std::vector<std::string> find_packages(const std::string& dir, std::vector<std::string>* skipped = nullptr);

// Whether `dir` is a submission package: it has a systems/ folder, or result
// logs (results/SYSTEM/BENCHMARK/result_*.txt). False with *why otherwise.
bool is_package(const std::string& dir, std::string* why);

// The checks that failed a result folder: the rules of its errors, each
// once, in order (["RCP"], ["result count", "seeds"]); [] when it passes.
// Kept in results.failed_checks.
std::string failed_checks_json(const rules::BenchmarkDir& dir);

// What the RCP check evaluated for one benchmark directory, as the store keeps
// it in results.rcp_json (docs/store.md, "Convergence against the RCP"); ""
// when the directory's RCPs were not checked (open division, no RCP check in
// the round, a benchmark without RCPs).
std::string rcp_json(const rules::BenchmarkDir& dir, const rules::RuleSet& rules, const rules::RoundFacts& facts);

// Checks and imports one organisation package in one transaction. A round
// whose review is `final` or `published` is not changed: a package that would
// be added or replaced there is refused (false, *error says why; nothing written).
bool import_package(Store& store, const rules::RuleSet& rules, const rules::RoundFacts& facts,
                    const std::string& org_dir, const ImportOptions& opt, ImportResult* out, std::string* error);

}  // namespace referee::submissions
