#include "cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/table.h"
#include "review/events.h"
#include "submissions/import.h"

namespace referee::cli {

void add_ruleset_options(CLI::App& sub, std::string* ruleset, std::string* rules) {
  sub.add_option("--ruleset", *ruleset, "rule set, e.g. training-3.1.0")->required();
  add_rules_option(sub, rules);
}

void add_rules_option(CLI::App& sub, std::string* rules, const char* for_what) {
  sub.add_option("--rules", *rules,
                 std::string("rules root") + for_what + " (a tree with compliance_checker/ and rcp_checker/)");
}

CLI::Validator count_at_least(long long least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
          return "'" + text + "' is not a number of at most 18 digits";
        if (std::stoll(text) < least) return "'" + text + "' is less than " + std::to_string(least);
        return "";
      },
      "NUMBER>=" + std::to_string(least));
}

void add_jobs_option(CLI::App& sub, int* jobs, const char* for_what) {
  sub.add_option("-j,--jobs", *jobs, std::string("threads") + for_what + " (default: all cores)")
      ->check(CLI::Range(0, 1024));
}

bool load_rules(const char* cmd, const std::string& ruleset, const std::string& rules_flag, LoadedRules* out,
                bool with_facts) {
  std::string error;
  out->ruleset = rules::resolve_ruleset(ruleset, rules_flag, &out->source, &error);
  if (out->ruleset && (!with_facts || rules::facts_for(*out->ruleset, &out->facts, &error))) return true;
  std::cerr << "referee " << cmd << ": " << error << "\n";
  return false;
}

bool rules_broken(const char* cmd, const rules::RuleSet& rs) {
  auto errors = rs.load_errors();
  for (const auto& e : errors) std::cerr << "referee " << cmd << ": rule set " << rs.id().id() << " is broken: " << e << "\n";
  return !errors.empty();
}

int job_count(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::unique_ptr<submissions::Store> open_store(const char* cmd, const std::string& db_flag, std::string* db_path,
                                               submissions::OpenMode mode) {
  std::string db = db_flag.empty() ? submissions::default_db_path() : db_flag;
  std::string error;
  auto store = submissions::Store::open(db, &error, mode);
  if (!store) std::cerr << "referee " << cmd << ": " << error << "\n";
  if (db_path) *db_path = db;
  return store;
}

CreatedByOpen what_open_creates(const std::string& db) {
  namespace fs = std::filesystem;
  CreatedByOpen out;
  std::error_code ec;
  fs::path p = fs::absolute(db, ec);
  if (ec || fs::exists(p, ec)) return out;
  fs::path first_missing = p;
  for (fs::path q = p.parent_path(); !q.empty() && !fs::exists(q, ec); q = q.parent_path()) {
    first_missing = q;
    if (q == q.parent_path()) break;
  }
  out.remove_all = first_missing.string();
  return out;
}

void CreatedByOpen::undo() const {
  if (remove_all.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(remove_all, ec);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(remove_all + suffix, ec);
}

namespace {
// Ctrl-C or SIGTERM during an import: the package being imported is finished (its transaction), then the
// import stops and says how far it got; a store it created that holds nothing is removed, as after any
// failed import.
volatile std::sig_atomic_t g_import_stop = 0;

struct StopOnSignal {
  struct sigaction old_int {}, old_term {};
  StopOnSignal() {
    g_import_stop = 0;
    struct sigaction a {};
    a.sa_handler = [](int) { g_import_stop = 1; };
    sigemptyset(&a.sa_mask);
    sigaction(SIGINT, &a, &old_int);
    sigaction(SIGTERM, &a, &old_term);
  }
  ~StopOnSignal() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};
}  // namespace

int import_into_store(const char* cmd, const std::string& db_flag, const LoadedRules& loaded,
                      const std::vector<std::string>& packages, int jobs, const std::string& round) {
  StopOnSignal stop_on_signal;
  std::string db = db_flag.empty() ? submissions::default_db_path() : db_flag;
  CreatedByOpen created = what_open_creates(db);
  int rc;
  bool empty = false;
  {
    auto store = open_store(cmd, db);
    if (!store) {
      created.undo();
      return kCannotCheck;
    }
    rc = import_packages(cmd, *store, loaded, packages, jobs, round, db);
    submissions::Stmt st(store->db(), "SELECT COUNT(*) FROM packages");
    empty = st.step() && st.col_int(0) == 0;
  }
  // Another process that has the new store open keeps its -wal file after we
  // closed ours (the last connection to close removes it): leave it alone then.
  std::error_code ec;
  bool shared = std::filesystem::exists(db + "-wal", ec);
  if (rc != kPass && empty && !shared) {
    created.undo();
    if (!created.remove_all.empty()) std::cerr << "referee " << cmd << ": nothing was imported; " << db << " was not created\n";
  }
  return rc;
}

int import_packages(const char* cmd, submissions::Store& store, const LoadedRules& loaded,
                    const std::vector<std::string>& packages, int jobs, const std::string& round, const std::string& db) {
  submissions::ImportOptions opt;
  opt.jobs = job_count(jobs);
  // A package added to or replaced in a round under review goes into its review log.
  opt.record_change = [&store](const submissions::PackageChange& c, std::string* err) {
    return review::record_package_change(store, c, err);
  };
  opt.recorded_rows = [&store](const std::string& round, const std::string& organisation) {
    return review::recorded_package_rows(store, round, organisation);
  };
  bool tty = isatty(2);
  auto count = [](long long n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  int rc = kPass;
  size_t imported = 0;
  std::string error;
  // A store keeps what it is given: every rule file must load before anything is imported.
  if (!loaded.ruleset->compile_all(&error)) {
    std::cerr << "referee " << cmd << ": rule set " << loaded.ruleset->id().id() << " is broken: " << error << "\n";
    return kCannotCheck;
  }
  auto t0 = std::chrono::steady_clock::now();
  size_t interrupted_at = packages.size();
  for (size_t i = 0; i < packages.size(); ++i) {
    if (g_import_stop) {
      interrupted_at = i;
      break;
    }
    if (tty) {
      int width = 30;
      int done = static_cast<int>(width * i / packages.size());
      std::cerr << "\r[" << std::string(static_cast<size_t>(done), '#')
                << std::string(static_cast<size_t>(width - done), '.') << "] " << i << "/" << packages.size() << " "
                << packages[i] << "\033[K" << std::flush;
    }
    submissions::ImportResult r;
    if (!submissions::import_package(store, *loaded.ruleset, loaded.facts, packages[i], opt, &r, &error)) {
      if (tty) std::cerr << "\r\033[K";
      std::cerr << "referee " << cmd << ": " << error << "\n";
      rc = kCannotCheck;
      continue;
    }
    if (tty) std::cerr << "\r\033[K";
    ++imported;
    std::cout << r.status << " " << r.organisation << " (" << round << "): ";
    if (r.status == "unchanged")
      std::cout << "already in the store with the same content"
                << (r.links_restored ? "; its resubmission links, edited in the store, made again from its logs" : "") << "\n";
    else if (r.status == "repaired")
      std::cout << "the same files, but its rows in the store had been edited since they were imported; written "
                   "again from the files: "
                << count(r.results, "result", "results") << ", " << count(r.runs, "run", "runs") << ", package " << r.verdict
                << "\n";
    else
      std::cout << count(r.results, "result", "results") << ", "
                << (r.weak_results ? count(r.weak_results, "weak-scaling result", "weak-scaling results") + " (" +
                                           count(r.weak_runs, "run", "runs") + "), "
                                     : std::string())
                << count(r.runs, "run", "runs") << ", package " << r.verdict
                << (r.resubmitted_runs
                        ? ", " + std::to_string(r.resubmitted_runs) + " runs resubmitted from an earlier round"
                        : "")
                << "\n";
    std::cout.flush();  // each package's line is out as soon as it is in the store
  }
  if (interrupted_at < packages.size()) {
    if (tty) std::cerr << "\r\033[K";
    std::cerr << "referee " << cmd << ": interrupted: " << imported << " of " << packages.size()
              << " package(s) imported; the others were not (import the folder again: what is in is 'unchanged')\n";
    return kCannotCheck;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (imported == packages.size())
    std::cout << packages.size() << " package(s) in " << db << " (" << fixed(secs, 2) << " s)\n";
  else if (imported > 0)
    std::cout << imported << " of " << packages.size() << " package(s) in " << db << " (" << fixed(secs, 2)
              << " s); the others could not be imported\n";
  return rc;
}

}  // namespace referee::cli
