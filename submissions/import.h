// Importing checked packages into the store.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "rules/facts.h"
#include "rules/ruleset.h"
#include "submissions/store.h"

namespace referee::submissions {

struct ImportOptions {
  int jobs = 1;
  // Called before each package (index, count, name); for progress display.
  std::function<void(size_t, size_t, const std::string&)> progress;
  // Test hook: called inside the transaction after this many runs were written.
  std::function<void()> fail_after_runs;
  long long fail_after_runs_count = -1;
};

struct ImportResult {
  std::string organisation;
  std::string status;  // "imported", "replaced", "unchanged"
  int results = 0, runs = 0, resubmitted_runs = 0;
  std::string verdict;
};

// The organisation folders under `dir`: `dir` itself when it has results/,
// else its sub-folders that have results/ (a round, or a results archive).
std::vector<std::string> find_packages(const std::string& dir);

// Checks and imports one organisation package in one transaction.
bool import_package(Store& store, const rules::RuleSet& rules, const rules::RoundFacts& facts,
                    const std::string& org_dir, const ImportOptions& opt, ImportResult* out, std::string* error);

}  // namespace referee::submissions
