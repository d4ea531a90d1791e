// The review's policy, in one place: who may do what (roles and party
// rules, a pure function tested as a table), the embargo as the first step
// of every lookup, deadlines and the chair's override, the round state, the
// version check, and the one way every write is made (write()). No HTTP: the
// errors are review::Error values (review/result.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "review/actor.h"
#include "review/result.h"
#include "review/rounds.h"
#include "submissions/store.h"

namespace referee::review {

// ------------------------------------------------------------ authorisation

enum class Action {
  FileObjection,     // POST /objections
  AddEvidence,       // POST /objections/{id}/evidence
  Respond,           // POST /objections/{id}/responses
  Comment,           // POST /objections/{id}/comments
  Vote,              // POST /objections/{id}/votes
  Decide,            // POST /objections/{id}/decision
  Withdraw,          // POST /objections/{id}/withdraw
  OverrideDeadline,  // any write sent with an override reason
  SetSchedule,       // PUT /rounds/{round}/schedule
  ChangeRoundState,  // POST /rounds/{round}/state
  AssignPairings,    // POST /rounds/{round}/pairings
  SetPairingStatus,  // PATCH /pairings/{id}
  Announce,          // POST /rounds/{round}/announcements
  ManageUsers,       // POST /users, /users/{name}/tokens, /users/{name}/revoke, /tokens/revoke
  ListUsers,         // GET /users
  Publish,           // referee review publish (a local store)
  RecordMeeting,     // POST /rounds/{round}/meetings
};

// What the actor is to the object acted on, found in the store before asking.
struct Standing {
  bool objecting = false;     // their organisation filed the objection
  bool accused = false;       // their organisation's results are objected to
  bool partner = false;       // their organisation shares a partner with either party (NVIDIA and Azure+NVIDIA)
  bool submitted = false;     // their organisation has a package in the round
  bool reviewer = false;      // their organisation is the pairing's reviewer
  bool owns_result = false;   // every result named is their organisation's
};

enum class Access {
  Allowed,
  Forbidden,  // 403: not for this role or party
  Closed,     // 422: the round is published; nothing in it changes
};

// Whether `who` may do `action` given their standing and the round's state
// (review | final | published). Pure: the role x action matrix is tested as
// a table (review/policy_test.cc). A final round's limits and deadlines,
// which a chair may override with a reason, are check_not_final and
// check_deadline.
Access authorize(const Actor& who, Action action, const Standing& standing, const std::string& round_state);

// 403 with the rule that refused it.
Error forbidden(const std::string& message, const std::string& hint = "");

// ------------------------------------------------------------ the embargo

struct RoundInfo {
  long long id = 0;
  std::string name;           // training-3.1.0
  std::string asked;          // the round as the request named it ("3.1.0"); "" when found by id
  bool reviewed = false;      // has a round_reviews row
  std::string state = "published";  // review | final | published (no row: published)
  Schedule schedule;          // as stored ("" = not set)
  long long version = 0;      // the review record's version (0 without one)
};

// Whether `who` may see round `round_id` in `state`: every published round;
// a round in review or final only for chairs, administrators and members of
// an organisation that submitted to it. The one statement of the embargo.
bool may_see_round(submissions::Store& s, const Actor& who, long long round_id, const std::string& state);

// The 404 for a round `text` that does not exist or that the actor may not
// see: the same, word for word, for both.
Error unknown_round_error(const std::string& text);

// Resolves `text` (3.1.0, training-3.1.0) to a round and reads its review
// record; the embargo is the first check made on it: a round the actor may
// not see is reported exactly as an unknown one (404). The local
// administrator, who sees every round, is told which rounds the store has.
bool find_round(submissions::Store& s, const Actor& who, const std::string& text, RoundInfo* out, Error* err);
// The same by id; a hidden or unknown round is `not_found`.
bool find_round_by_id(submissions::Store& s, const Actor& who, long long id, const Error& not_found, RoundInfo* out,
                      Error* err);

// ------------------------------------------------------------ deadlines

// An ISO-8601 deadline as a comparable UTC instant; a bare date
// (2026-11-30) means the end of that day.
std::string deadline_instant(const std::string& text);

// The schedule field named `name` ("objections_due", ...), "" when the
// schedule has no such field or it is not set.
std::string deadline_of(const Schedule& schedule, const std::string& name);

// A deadline as it holds for one organisation on one objection: the round's
// `round_deadline`, or `extended_until` when an extension gives later; ""
// (no restriction) when the round sets none.
std::string extended_deadline(const std::string& round_deadline, const std::string& extended_until);

// An override reason, when one is sent, must say something: one of white
// space or invisible characters alone is 400. Post: true when `reason` is
// empty (no override) or says something.
bool check_override_reason(const std::string& reason, Error* err);

// Whether a change to `round` may be made now. `published` refuses every
// change (422). `deadline_name` is the schedule field the action must meet
// ("objections_due", ...; "" = none but scores_final): after it, and for any
// action after scores_final, the change is refused (422 naming the deadline
// and its time) unless the actor is a chair and `override_reason` is not
// empty; then *overridden says which deadline was overridden (for the event
// payload). An override sent by anyone but a chair, or by a chair whose
// organisation is a party (`standing`: objecting or accused), is 403: nobody
// grants their own side more time. An unset deadline does not restrict.
// `extended_until` (not empty): the actor's organisation was given until then
// for `deadline_name` on this objection (an extension by a neutral chair):
// that deadline is the later of the two; scores_final still holds.
// `set_on_objection` (not empty): the objection sets this deadline itself
// (`deadline_name` "votes_due": a neutral chair's vote deadline), used in
// place of the round's.
// A published round takes no change (422 `published`): true when `round`
// is not published. The first check of check_deadline, and all a change
// under no deadline (a comment) meets.
bool check_not_published(const RoundInfo& round, Error* err);

bool check_deadline(const Actor& who, const RoundInfo& round, const std::string& deadline_name,
                    const std::string& override_reason, std::string* overridden, Error* err,
                    const Standing& standing = {}, const std::string& extended_until = "",
                    const std::string& set_on_objection = "");

// A round in `final` takes no new objection, evidence, response or vote
// (`what` names the action): 422, unless a chair sends an override reason;
// then *overridden (for the event payload) says so. Pre: check_deadline
// passed (a non-chair's override is already refused).
bool check_not_final(const RoundInfo& round, const std::string& what, const std::string& override_reason,
                     std::string* overridden, Error* err);

// ------------------------------------------------------------ the waiver

// How far a score impact moves a result's score, in percent of the score, to
// a thousandth of a percent (a change that rounds to nothing is 0, never -0);
// NaN without a score above 0 or for a figure that gives no finite change.
double impact_percent(bool has_score, double score, double impact_minutes);
// A problem whose impact moves the score by less than this may be waived.
constexpr double kWaiverPercent = 2.0;
// Whether a change of `percent` (impact_percent) may be waived: finite and under kWaiverPercent.
bool waivable(double percent);

// ------------------------------------------------------------ versions

// The version a write was based on: `given` false = none sent (no check).
struct Expected {
  bool given = false;
  long long version = 0;
};

// The one 409 body: `what` ("objection 12", "the review record of
// training-3.1.0") changed since it was read at `expected`; it is at
// `current` now; `read_again` is the command that shows it.
Error stale(const std::string& what, long long expected, long long current, const std::string& read_again);

// false with stale() when `expected` was given and is not `current`.
bool check_version(const Expected& expected, long long current, const std::string& what, const std::string& read_again,
                   Error* err);

// ------------------------------------------------------------ writes

// One change's event (review/events.h): appended in the change's transaction.
struct Change {
  std::string action;   // objection.file, round.schedule, ...
  std::string subject;  // objection/12, round/training-3.1.0, ...
  std::string payload;  // a JSON object
  bool record = true;   // false: nothing changed, no event (an idempotent write that found nothing to do)
};

// Every write of the review: BEGIN IMMEDIATE (503 when the store is busy);
// `change` loads what it changes (its embargo first), checks it in the
// policy's order (role and party, still open, version, deadline or
// override, round state), changes it and fills *event; the event is
// appended and the transaction committed. Any Error rolls everything back.
Result<long long> write(submissions::Store& s, const Actor& who, const std::function<Result<long long>(Change* event)>& change);

// ------------------------------------------------------------ numbers

// Objections, findings, pairings, decisions, responses, evidence,
// announcements and extensions are numbered per round as the packages and
// results are (submissions::kIdsPerRound): the numbers a member sees count
// what their rounds hold only, never activity in a round hidden from them.
using submissions::kIdsPerRound;

// The id for a new row of `table` (one of those above) in round `round_id`:
// one more than the highest of that round's block. Call it inside the
// writing transaction. Post: > 0; 0 with *err (500) on a store error or a
// block that is full.
long long next_id(submissions::Store& s, const char* table, long long round_id, Error* err);

// The objections still open (or responded) in round `round_id` that
// organisation `org` is a party to, or shares a partner with a party of
// ("#3, #1000005"); "" for none. A chair of such an organisation does not
// steer the round's schedule or close it over them.
std::string open_cases_of(submissions::Store& s, long long round_id, const std::string& org);

// The round of objection `objection` (0 when none).
long long round_of_objection(submissions::Store& s, long long objection);

// ------------------------------------------------------------ names

// The organisation named `name` (case-insensitive): its id and spelling.
// Post: true; false when not in the store.
bool find_organisation(submissions::Store& s, const std::string& name, long long* id, std::string* spelled);

// The organisation named `name` as `who` may know it: chairs, administrators
// and the organisation's own members know every organisation of the store; a
// member of another knows it only when it has a package in a round they may
// see. Post: true with *spelled; false for one the store does not hold and for
// one whose every package is in a round hidden from `who`, alike (answer both
// with unknown_organisation_error).
bool find_visible_organisation(submissions::Store& s, const Actor& who, const std::string& name, std::string* spelled);
// The 404 for an organisation that does not exist or that the actor may not know.
Error unknown_organisation_error(const std::string& name);

// The organisations with a package in round `round_id`, by name: those that
// vote on its objections and that an objection may be filed against.
std::vector<std::string> round_submitters(submissions::Store& s, long long round_id);

// Whether `org_id` has a package in round `round_id` (it submitted: it votes).
bool submitted(submissions::Store& s, long long round_id, long long org_id);

// A result named ORG/SYSTEM/BENCHMARK in a round. Post: true with *id and
// *org_id (and *org the organisation's spelling when not null); else false
// with *err: 400 when not of that form, else 404 listing the organisation's
// results in the round (at most 20). Case-insensitive.
bool find_result(submissions::Store& s, long long round_id, const std::string& name, long long* id, long long* org_id,
                 Error* err, std::string* org = nullptr);
// ORG/SYSTEM/BENCHMARK of a result id.
std::string result_name(submissions::Store& s, long long result_id);

// A failed statement as a 500 naming the store.
Error store_error(submissions::Store& s, int rc, const std::string& what);

// The users row that stands for the actor (the local administrator gets one
// named local-admin, made on first use, so that rows can point at a user).
bool actor_user_id(submissions::Store& s, const Actor& who, long long* id, std::string* error);

// ------------------------------------------------------------ decisions

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


// One uphold vote's proposal: the remedy it names ("" = none: it leaves the
// remedy to the votes that name one) and, for normalise, its factor.
struct Proposal {
  std::string remedy;
  bool has_factor = false;
  double factor = 0;
};

// The remedy an upheld objection's votes carry. `asked` is the chair's remedy
// ("" = the one most uphold votes name; a tie between two is for the chair to
// name). A remedy is carried when the votes that support it (the uphold votes
// naming it with the same factor, and those naming none) are the majority the
// remedy needs among all votes cast, as decide_outcome counts it (two thirds
// for withdraw and open). A remedy or factor the votes do not carry is
// refused: it needs its own vote. Pure; tested as a table.
struct Carried {
  bool ok = false;
  std::string remedy;
  bool has_factor = false;
  double factor = 0;
  int support = 0;       // the votes that carry it
  std::string majority;  // simple | two-thirds | chair-tie-break
  std::string code, error, hint;  // when not ok: no-remedy | not-carried
};
Carried carried_remedy(const std::vector<Proposal>& uphold, int reject, const std::string& asked, bool has_factor,
                       double factor, const std::string& tie_break);

// ------------------------------------------------------------ a result's status

// The status a remedy sets on a result: fixed, moved-to-open, withdrawn,
// normalised; "" for none.
const char* status_of_remedy(const std::string& remedy);

// One objection naming a result, with its decision (decision 0: none).
struct ObjectionOnResult {
  long long objection = 0;
  std::string state;  // open | responded | decided | withdrawn
  long long decision = 0;
  std::string outcome, remedy;
  bool has_factor = false;
  double factor = 0;
};

// What the review made of a result. Statuses stack: the newest upheld
// decision that sets one (the highest decision id: an amendment keeps its
// decision's place) wins, so amending an older decision never undoes a newer
// one; without one, an objection still open (or responded) makes it
// objection-open (naming the oldest such); else no status (status "").
struct StatusOfResult {
  std::string status;
  bool has_factor = false;
  double factor = 0;
  long long objection = 0, decision = 0;
};
StatusOfResult status_of_result(const std::vector<ObjectionOnResult>& on);

}  // namespace referee::review
