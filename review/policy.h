// The review's rules shared by its routes: which round a request is about
// and what state it is in, the deadline an action must meet (and the chair's
// override), the embargo, and names of organisations and results.
#pragma once

#include <string>
#include <vector>

#include "mllog/json.h"
#include "review/api.h"
#include "review/router.h"

namespace referee::review {

struct RoundInfo {
  long long id = 0;
  std::string name;          // training-3.1.0
  bool reviewed = false;     // has a round_reviews row
  std::string state;         // review | final | published (no row: published)
  std::string objections_due, responses_due, decisions_due, scores_final;
};

// Resolves `text` (3.1.0, training-3.1.0) to a round and reads its review
// record. A round the actor may not see (the embargo) is reported exactly as
// an unknown one: 404. Post: true with *out; else false with *err.
bool load_round(Context& c, const std::string& text, RoundInfo* out, Response* err);
// The same by id (objections keep the round's id).
bool load_round_by_id(Context& c, long long id, RoundInfo* out, Response* err);

// Whether a change to `round` may be made now. `published` refuses every
// change (422). `deadline_name` is the schedule column the action must meet
// ("objections_due", ...): after it, and for any action after scores_final,
// the change is refused (422 naming the deadline and its time) unless the
// actor is a chair and `override_reason` is not empty; then *overridden
// says which deadline was overridden (for the event payload). An override
// sent by anyone but a chair is 403. An unset deadline does not restrict.
bool check_deadline(const Context& c, const RoundInfo& round, const std::string& deadline_name,
                    const std::string& override_reason, std::string* overridden, Response* err);

// A round in `final` takes no new objection, evidence, response or vote
// (`what` names the action): 422, unless a chair sends an override reason;
// then *overridden (for the event payload) says so. Pre: check_deadline
// passed (a non-chair's override is already refused).
bool check_not_final(const RoundInfo& round, const std::string& what, const std::string& override_reason,
                     std::string* overridden, Response* err);

// An ISO-8601 deadline as a comparable UTC instant; a bare date
// (2026-11-30) means the end of that day.
std::string deadline_instant(const std::string& text);

// The organisation named `name` (case-insensitive): its id and spelling.
// Post: true; false when not in the store.
bool find_organisation(submissions::Store& s, const std::string& name, long long* id, std::string* spelled);

// Whether `org_id` has a package in round `round_id` (it submitted: it votes).
bool submitted(submissions::Store& s, long long round_id, long long org_id);

// A result named ORG/SYSTEM/BENCHMARK in a round. Post: true with *id and
// *org_id; else false with *err: 400 when not of that form, else 404 listing
// the organisation's results in the round (at most 20). Case-insensitive.
bool find_result(submissions::Store& s, long long round_id, const std::string& name, long long* id, long long* org_id,
                 Response* err);
// ORG/SYSTEM/BENCHMARK of a result id.
std::string result_name(submissions::Store& s, long long result_id);

// A bool field of a parsed body; 400 when present and not a bool.
bool body_bool(const mllog::Json& body, const char* name, bool* out, Response* err);

// 403 with the rule that refused it.
Response forbidden(const std::string& message, const std::string& hint = "");

// Commits the transaction; on failure rolls back and sets *err to a 500.
bool commit_or_fail(submissions::Store& s, Response* err);

// The committee's outcome from the votes cast (one per organisation;
// abstentions not counted): upheld with more uphold than reject votes, a tie
// broken by the chair's `tie_break` (uphold | reject; else no outcome), and
// remedies withdraw and open (exclusion, departure from the rules) need two
// thirds of the votes cast.
struct Outcome {
  bool ok = false;
  std::string outcome;   // upheld | rejected
  std::string majority;  // simple | two-thirds | chair-tie-break
  std::string error;     // why there is none
};
Outcome decide_outcome(int uphold, int reject, const std::string& remedy, const std::string& tie_break);

// A write transaction rolled back at scope exit unless committed.
class Transaction {
 public:
  explicit Transaction(submissions::Store& s) : s_(s) {}
  ~Transaction() {
    if (open_) s_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // BEGIN IMMEDIATE; false with *err a 500 (or 503 when the store is busy).
  bool begin(Response* err);
  // Appends the event and commits; false with *err (rolled back).
  bool commit(const Actor& who, const std::string& action, const std::string& subject, const std::string& payload,
              Response* err);

 private:
  submissions::Store& s_;
  bool open_ = false;
};

}  // namespace referee::review
