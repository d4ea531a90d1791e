// Objections and everything done to them, as typed operations: file,
// add evidence, respond, vote, decide (or amend a decision), withdraw; and
// their reading back as the API's JSON. No HTTP and no JSON parsing here:
// the route layer (objection_routes.cc) decodes a request body into these
// values, and the CLI fills them from its flags. Every write goes through
// policy's write() in one order (docs/review.md): the embargo, role and
// party, still open, version, deadline or a chair's override, round state,
// the change, the version bump, the event, commit.
#pragma once

#include <string>
#include <vector>

#include "review/actor.h"
#include "review/policy.h"
#include "review/result.h"
#include "submissions/store.h"

namespace referee::review {

// One item of evidence, as sent.
struct EvidenceItem {
  enum class Kind { Finding, Lines, Figure, Check };
  Kind kind = Kind::Check;
  long long finding = 0;                 // Finding: a finding of referee audit
  std::string result, file, lines;       // Lines: ORG/SYSTEM/BENCHMARK, a run's log file, "N" or "N-M"
  std::string figure, unit;              // Figure: its name, value and unit
  double value = 0;
  bool has_impact = false;               // Figure: the score if the objection holds, in minutes
  double impact_minutes = 0;
  std::string check;                     // Check: a checker's message
  std::string note;                      // any kind: a note
};

// What every change to an existing objection carries.
struct ObjectionChange {
  long long objection = 0;
  Expected version;              // the version read (body `version` or If-Match); none = no check
  std::string override_reason;   // a chair acting after a deadline or in a final round
};

struct FileObjection {
  std::string round, against, title, rule, text, override_reason;
  std::vector<std::string> results;    // ORG/SYSTEM/BENCHMARK
  std::vector<std::string> drop_runs;  // runs that would not count if it holds
  bool has_finding = false;            // fill round, against, results, rule, title from a finding
  long long finding = 0;
  std::vector<EvidenceItem> evidence;
};

struct AddEvidence : ObjectionChange {
  std::vector<EvidenceItem> evidence;  // one or more
};

struct Respond : ObjectionChange {
  std::string text, remedy;  // remedy "" = none proposed
  bool has_factor = false;
  double factor = 0;
};

// A comment in the objection's discussion (objector, accused, chairs), in
// any state of the objection until the round is published. `version`, when
// sent, is checked; a comment leaves the version as it is.
struct Comment : ObjectionChange {
  std::string text;  // 1 to 10,000 bytes
};
inline constexpr long long kMaxComments = 1000;  // comments one objection takes (then 422)

struct CastVote : ObjectionChange {
  std::string vote;  // uphold | reject | abstain
  std::string remedy;
  bool has_factor = false;
  double factor = 0;
};

struct Decide : ObjectionChange {
  std::string remedy, tie_break, text;
  // Remedy fix: when the corrected package is due (an instant, as deadlines
  // are given); "" = the round's scores_final, or no date when it has none.
  std::string fix_due;
  bool has_factor = false;
  double factor = 0;
  bool waive = false;
  bool amend = false;  // amend the recorded decision, for `reason`
  std::string reason;
};

struct Withdraw : ObjectionChange {
  std::string text;
};

// A neutral chair gives one organisation more time on one objection:
// `deadline` (objections_due | responses_due | decisions_due) becomes
// `until` for that organisation there, for `reason`.
struct Extend : ObjectionChange {
  std::string organisation, deadline, until, reason;
};

// A neutral chair sets when the votes on one objection are due (`until`),
// for `reason`: every organisation's vote meets it instead of the round's
// decisions_due (an organisation's extension of decisions_due still gives it
// more time). Before scores_final.
struct SetVoteDeadline : ObjectionChange {
  std::string until, reason;
};

// The objection a write leaves: its number and version, and when filed, how
// its score impact was found (or why it is unknown).
struct Objection {
  long long id = 0;
  long long version = 0;
  std::string state;
  std::string impact_basis;
};

Result<Objection> file_objection(submissions::Store& s, const Actor& who, const FileObjection& in);
Result<Objection> add_evidence(submissions::Store& s, const Actor& who, const AddEvidence& in);
Result<Objection> respond(submissions::Store& s, const Actor& who, const Respond& in);
Result<Objection> comment(submissions::Store& s, const Actor& who, const Comment& in);
Result<Objection> vote(submissions::Store& s, const Actor& who, const CastVote& in);
Result<Objection> decide(submissions::Store& s, const Actor& who, const Decide& in);
Result<Objection> withdraw(submissions::Store& s, const Actor& who, const Withdraw& in);
Result<Objection> extend(submissions::Store& s, const Actor& who, const Extend& in);
Result<Objection> set_vote_deadline(submissions::Store& s, const Actor& who, const SetVoteDeadline& in);

// The extensions granted on objection `objection` (by organisation, then deadline).
struct ExtensionRecord {
  std::string organisation, deadline, until, reason, granted_by, created_at;
};
std::vector<ExtensionRecord> read_extensions(submissions::Store& s, long long objection, std::string* error = nullptr);

// The time organisation `org_id` was given for `deadline` on objection
// `objection`; "" when none.
std::string extended_until(submissions::Store& s, long long objection, long long org_id, const std::string& deadline);

// The filter of objection lists ("" = any).
struct ObjectionFilter {
  std::string round, state, by, against;
};

// Objection `id` as the API shows it ({"objection": {...}}, plus
// "impact_basis" when not empty); a hidden or unknown one is 404.
Result<std::string> objection_json(submissions::Store& s, const Actor& who, long long id,
                                   const std::string& impact_basis = "");
// The objections the actor may see that match `f` ({"objections": [...]}).
Result<std::string> objections_json(submissions::Store& s, const Actor& who, const ObjectionFilter& f);

// A response or a vote on an objection, as stored. `said` is the response's
// text or the vote (uphold | reject | abstain); `user` is "" (has_user false)
// where the local administrator wrote it.
struct Opinion {
  long long id = 0;  // the response's id; 0 for a vote
  std::string organisation, user, said, remedy, at;
  bool has_user = false, has_remedy = false, has_factor = false;
  double factor = 0;
};
// The responses to objection `objection` (oldest first), or its votes (by
// organisation); *error set on a store error, with the rows read until then.
std::vector<Opinion> read_opinions(submissions::Store& s, long long objection, bool votes, std::string* error);

// The discussion of objection `objection`, oldest first. `organisation` is
// "" for a comment made for none (a chair of no organisation, the local
// administrator); `user` "" (has_user false) for the local administrator.
struct CommentRecord {
  long long id = 0;
  std::string organisation, user, text, at;
  bool has_user = false;
};
std::vector<CommentRecord> read_comments(submissions::Store& s, long long objection, std::string* error = nullptr);

// The decision on an objection, as stored. `decided_by` is "" (has_decider
// false) where the local administrator decided; `remedy` "" when none.
struct DecisionRecord {
  long long id = 0;
  std::string outcome, remedy, majority, decided_by, text, at;
  bool has_decider = false, has_text = false, has_factor = false;
  double factor = 0;
  long long uphold = 0, reject = 0, abstain = 0;
  std::string fix_due;  // remedy fix: when the corrected package is due; "" = no date
};
// The decision on objection `objection`; false when there is none, or with
// *error on a store error.
bool read_decision(submissions::Store& s, long long objection, DecisionRecord* out, std::string* error);

// The 404 of an objection that does not exist or that the actor may not see.
Error no_objection(const std::string& id_text);

// The score impact, in minutes, of dropping `drop_runs` from result
// `result_id`: the olympic mean of the converged, compliant runs left, times
// the published score's scaling factor. False with *basis when too few runs
// would remain; *err set (404) when a run named is not one of them.
bool impact_of_dropped_runs(submissions::Store& s, long long result_id, const std::vector<std::string>& drop_runs,
                            double* impact, std::string* basis, Error* err);

}  // namespace referee::review
