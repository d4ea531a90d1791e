// What several commands share: resolving the rule set (and the round's
// facts) named by --ruleset/--round and --rules, the --jobs default, opening
// the store and importing packages into it with a progress bar.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "rules/facts.h"
#include "rules/ruleset.h"
#include "rules/source.h"
#include "submissions/store.h"

namespace referee::cli {

// Registers "--ruleset NAME" (required) and "--rules DIR" on `sub`, with
// the help texts all commands share.
void add_ruleset_options(CLI::App& sub, std::string* ruleset, std::string* rules);
// Registers "--rules DIR"; `for_what` (" for --import", or "") follows
// "rules root" in the help text.
void add_rules_option(CLI::App& sub, std::string* rules, const char* for_what = "");
// Registers "-j,--jobs N" (0 = job_count's default); `for_what` follows
// "threads" in the help text.
void add_jobs_option(CLI::App& sub, int* jobs, const char* for_what = "");

// A number the review counts with (an id, a version): digits only, at most
// 18 of them (no sign, no overflow clamped to the largest value), at least
// `least`. A flag error (exit 2) otherwise.
CLI::Validator count_at_least(long long least);

struct LoadedRules {
  std::unique_ptr<rules::RuleSet> ruleset;
  rules::RuleSource source;  // where the rule set was found
  rules::RoundFacts facts;   // filled only when load_rules() was asked for them
};

// Resolves `ruleset` with rules::resolve_ruleset (`rules_flag` is the --rules
// value, "" for the default search path) and, when `with_facts`, the round's
// facts. Post: true with *out filled; else false after printing
// "referee <cmd>: <error>" on stderr; the command then exits with kCannotCheck.
bool load_rules(const char* cmd, const std::string& ruleset, const std::string& rules_flag, LoadedRules* out,
                bool with_facts = true);

// After a command's checks: the rule files its logs enqueued that failed to
// load (rule sets compile lazily). Prints each as "referee <cmd>: ..." and
// returns true when there is any; the command then exits with kCannotCheck.
bool rules_broken(const char* cmd, const rules::RuleSet& rs);

// The thread count for a --jobs value: `jobs` when positive, else the
// machine's hardware threads (at least 1).
int job_count(int jobs);

// Opens the store at `db_flag` (the --db value; "" for
// submissions::default_db_path()), read-only for questions (nothing is
// created). Post: the store, with *db_path (when not null) set to the file
// used; else null after printing "referee <cmd>: <error>" on stderr.
std::unique_ptr<submissions::Store> open_store(const char* cmd, const std::string& db_flag,
                                               std::string* db_path = nullptr,
                                               submissions::OpenMode mode = submissions::OpenMode::ReadWrite);

// The folders and files a ReadWrite open of `db` would create (the first
// missing ancestor folder, else the file and its -wal/-shm): what
// import_packages removes again when nothing could be imported.
struct CreatedByOpen {
  std::string remove_all;  // "" when `db` already existed
  void undo() const;
};
CreatedByOpen what_open_creates(const std::string& db);

// Pre: `loaded` holds the rule set and facts of `round`. Imports `packages` into
// `store` (the database file `db`, named in the summary) one by one, with a
// progress bar on stderr when it is a terminal; prints a line on stdout for
// each package and a summary line at the end, and "referee <cmd>: <error>" on
// stderr for each package that could not be imported. The summary counts
// only the packages imported; when none was, there is no summary line.
// Returns kPass, or kCannotCheck when any package failed.
int import_packages(const char* cmd, submissions::Store& store, const LoadedRules& loaded,
                    const std::vector<std::string>& packages, int jobs, const std::string& round, const std::string& db);

// Opens (creating if needed) the store named by `db_flag` and imports
// `packages` with import_packages(). A store this call created is removed
// again, with the folders it created, when no package could be imported:
// a failed import leaves nothing behind.
int import_into_store(const char* cmd, const std::string& db_flag, const LoadedRules& loaded,
                      const std::vector<std::string>& packages, int jobs, const std::string& round);

}  // namespace referee::cli
