// Fixes: a decision with remedy `fix` names a result that a corrected
// package must replace, by a due date. A package.replace of the accused
// organisation's package in that round, made after the decision, that
// changes one of the objection's results delivers the fix: the review log's
// event names it, and fix_deliveries keeps what the replacement changed in
// those results (files, runs, verdict, score, failed checks).
#pragma once

#include <string>
#include <vector>

#include "mllog/json.h"
#include "submissions/import.h"
#include "submissions/store.h"

namespace referee::review {

// A fix a replacement delivers: the objection, its decision, and what the
// replacement changed in the objection's results (changes_json, an array).
struct FixDelivered {
  long long objection = 0, decision = 0;
  std::string changes_json;
};

// The fixes package change `c` delivers (a replacement in a round with fix
// decisions against its organisation); *error set on a store error.
std::vector<FixDelivered> fixes_delivered(submissions::Store& s, const submissions::PackageChange& c, std::string* error);

// Keeps each fix `c` delivered, recorded by review log event `seq`.
bool store_fix_deliveries(submissions::Store& s, const submissions::PackageChange& c,
                          const std::vector<FixDelivered>& fixes, long long seq, std::string* error);

// One delivery, as stored.
struct FixDelivery {
  long long id = 0, decision = 0, event_seq = 0;
  std::string old_sha256, new_sha256, changes_json, at;
};
std::vector<FixDelivery> read_fix_deliveries(submissions::Store& s, long long objection, std::string* error = nullptr);

// Where a fix stands: "delivered" (the package the store holds now is the
// one the latest delivery brought), "overdue" (fix_due passed), "due" (by
// fix_due, or no date when fix_due is ""): a corrected package replaced again
// (by the original, say) is due again. `now` is an instant as now_utc()
// gives it; `current_sha256` the accused's package as the store holds it.
std::string fix_state(const std::vector<FixDelivery>& deliveries, const std::string& fix_due, const std::string& now,
                      const std::string& current_sha256);

// The content digest of the package objection `objection`'s accused
// organisation has in its round now ("" when none).
std::string accused_package_sha256(submissions::Store& s, long long objection);

// Changes as fix_deliveries.changes_json keeps them (an array, one object per result).
std::string result_changes_json(const std::vector<submissions::ResultChange>& changes);

// One change of changes_json in words: "eos/ssd: files changed result_2.txt;
// score 12.5 -> 12.1 minutes; failed checks RCP -> none".
std::string result_change_text(const mllog::Json& change);

}  // namespace referee::review
