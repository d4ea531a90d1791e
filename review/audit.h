// `referee audit`: what a reviewer hunts for in another submitter's results
// that the consortium's checker does not raise. Each finding names the
// result, the rule or policy section it concerns, a one-line summary and its
// evidence (log lines quoted with file and line, or figures with units), and
// is stored in `findings` so that an objection can be filed from it.
//
// A finding's identity is its fingerprint (kind, round, result and what it
// is about, e.g. the log file): re-running an audit keeps the id of a
// finding that is still there, adds new ones, and reports those no longer
// found as gone (they stay in the table). Thresholds are documented in
// docs/review.md ("Audit") and below.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "review/actor.h"
#include "submissions/store.h"

namespace referee::review {

// A cherry-picking outlier: a run whose modified z-score (0.6745 x
// |minutes - median| / MAD, Iglewicz and Hoaglin) exceeds this, on the fast
// side of the median.
// The MAD is floored at kMadFloor x the median, so an outlier is also at
// least 3.5 x 1% / 0.6745 = 5.2% faster than the median.
inline constexpr double kOutlierZ = 3.5;
inline constexpr double kMadFloor = 0.01;
// Too many runs: at least this many times the required number, and at least
// kExtraRunsMin more than required.
inline constexpr double kExtraRunsRatio = 1.5;
inline constexpr int kExtraRunsMin = 2;
// An RCP pass within this fraction of the bound (olympic mean of epochs vs
// RCP mean / max speedup) is reported as a near fail.
inline constexpr double kRcpNearFail = 0.01;

struct Evidence {
  // A quoted line: file (relative to the package: results/SYSTEM/BENCH/FILE
  // or systems/SYSTEM.json), line number from 1, the line's text.
  std::string file;
  long long line = 0;
  std::string text;
  // Or a figure: name, value, unit.
  std::string figure;
  double value = 0;
  std::string unit;
};

struct Finding {
  long long id = 0;
  long long round_id = 0, organisation_id = 0, result_id = 0;  // result_id 0: about no one result
  std::string round, organisation, result;                     // result: ORG/SYSTEM/BENCHMARK
  std::string kind, rule, summary;
  std::vector<Evidence> evidence;
  bool has_impact = false;
  double impact_minutes = 0;  // the result's score if the finding holds
  std::string fingerprint;
  std::string state;  // new | open (found before and again) | gone (not found on the latest run)
  std::string created_at;
};

// Finds everything in a round (`organisation` "" = every organisation of
// the round) without writing. Round and organisation are the store's names
// (training-3.1.0, NVIDIA). Post: true with *out ordered by organisation,
// result, kind; else false with *error.
// *notes (when not null) gets what could not be checked and why (no rule set
// for the round: no RCP statistics). `rcp_margin`: the near-fail threshold.
// Results whose logs are not on disk any more get a note each ("logs of
// ORG/SYSTEM/BENCH not found at PATH") and, when `unchecked` is not null,
// their names (ORG/SYSTEM/BENCH) in it: run_audit keeps their stored findings
// as they were instead of marking them gone. Without the round's rule set
// the rcp-near-fail check does not run: `unchecked` then holds "kind:rcp-near-fail",
// and such stored findings are kept as they were too. On a published round run_audit
// computes the findings but stores nothing and appends no event (a note says so).
// `rules_dir`: where the round's rule set is (as `--rules`: the only place
// looked); "" = the search path (REFEREE_RULES, the cache, the built-in sets).
bool detect_findings(submissions::Store& s, const std::string& round, const std::string& organisation,
                     std::vector<Finding>* out, std::string* error, std::vector<std::string>* notes = nullptr,
                     double rcp_margin = kRcpNearFail, const std::string& rules_dir = "",
                     std::set<std::string>* unchecked = nullptr);

struct AuditRun {
  std::vector<Finding> findings;  // found now (state new or open), with their ids
  std::vector<Finding> gone;      // stored for this scope, not found now
  int added = 0;
  std::vector<std::string> notes;  // what could not be checked, and why
};

// Runs detect_findings and stores the outcome in one transaction: new
// findings are inserted, those found again keep their id (their summary and
// evidence refreshed), and when anything was added, came back or went, an
// event `audit.run` on round/<round> records the ids. Pre: none (the caller
// checked authorisation). Post: true with *out; else false, nothing written.
bool run_audit(submissions::Store& s, const Actor& who, const std::string& round, const std::string& organisation,
               AuditRun* out, std::string* error, double rcp_margin = kRcpNearFail, const std::string& rules_dir = "");

// Stored findings (`round`/`organisation`/`kind` "" = any), each with its
// state replayed from the audit.run events. `id` > 0: that one only.
bool read_findings(submissions::Store& s, const std::string& round, const std::string& organisation,
                   const std::string& kind, long long id, std::vector<Finding>* out, std::string* error);

// The JSON object of one finding (as the API sends it).
std::string finding_json(const Finding& f);

}  // namespace referee::review
