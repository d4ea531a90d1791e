// A round's review as typed operations: set its schedule, change its state,
// assign the required reviews (pairings), change a pairing's status,
// announce resubmitted logs; and their reading back (the rounds the actor
// may see, a round's pairings and announcements, the committee's report).
// No HTTP and no JSON parsing here: the route layer (round_routes.cc)
// decodes a request into these values, and the CLI fills them from its
// flags. Every write goes through policy's write(); every lookup of a round
// makes the embargo its first step (find_round), so a round the actor may
// not see answers as an unknown one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "review/actor.h"
#include "review/policy.h"
#include "review/result.h"
#include "review/rounds.h"
#include "submissions/store.h"

namespace referee::review {

// PUT /rounds/{round}/schedule: the dates given, each by its API name
// (schedule_fields()) as sent: an ISO-8601 date or date-time in UTC, "" to
// clear it. A field not given keeps its value.
struct SetSchedule {
  std::string round;
  std::map<std::string, std::string> dates;
  Expected version;  // the review record's version read; none = no check
};

// POST /rounds/{round}/state.
struct ChangeRoundState {
  std::string round;
  std::string state;            // review | final | published (any case)
  std::string reason;           // required to go back from final to review
  std::string override_reason;  // a chair: go on with objections still open
  Expected version;
};

// POST /rounds/{round}/pairings: the required reviews from the ranking (idempotent).
struct AssignPairings {
  std::string round;
};

// PATCH /pairings/{id}.
struct UpdatePairing {
  long long pairing = 0;
  std::string status;  // assigned | in-progress | done (any case)
  Expected version;
};

// POST /rounds/{round}/announcements.
struct AnnounceResubmission {
  std::string round;
  std::vector<std::string> results;  // ORG/SYSTEM/BENCHMARK, the announcer's organisation's
  std::string text;                  // which earlier logs are resubmitted
  std::string override_reason;       // a chair: accepted after the first meeting
};

// One required review, as stored.
struct Pairing {
  long long id = 0;
  std::string reviewer, reviewed, reason, status;
  long long version = 0;
};

// What an assignment did: the ranking it was made from (most results
// first, ties by name), the pairings it added, how many were there before,
// the submitters the plan gives nobody to review, the pairings kept that the
// plan no longer requires, and the round's pairings now.
struct Assignment {
  std::string round;
  std::vector<SubmitterCount> ranking;
  std::vector<PairingPlan> added;
  long long kept = 0;
  std::vector<std::string> unpaired;
  std::vector<Pairing> not_required, pairings;
};

// One announcement of resubmitted logs, as stored.
struct Announcement {
  long long id = 0;
  std::string organisation, result, text, user, at;
  bool resubmission = false;
};

// The announcements one request made, and whether a chair accepted them late.
struct Announced {
  std::string round;
  bool late = false;
  std::vector<Announcement> announcements;
};

// Whether the actor's role lets them set a schedule, change a round's state
// or assign pairings at all (Action::SetSchedule, ChangeRoundState,
// AssignPairings: chairs and administrators); else false with the 403. The
// operations check it first; the routes check it before they read the body,
// so that a refused actor is told so whatever they sent.
bool role_may(const Actor& who, Action action, Error* err);

// Each write answers with what it left: the round's review record as it is
// after the commit (read again, the embargo first), the assignment, the
// pairing, or the announcements made.
Result<RoundInfo> set_schedule(submissions::Store& s, const Actor& who, const SetSchedule& in);
Result<RoundInfo> change_round_state(submissions::Store& s, const Actor& who, const ChangeRoundState& in);
Result<Assignment> assign_pairings(submissions::Store& s, const Actor& who, const AssignPairings& in);
Result<Pairing> update_pairing(submissions::Store& s, const Actor& who, const UpdatePairing& in);
Result<Announced> announce_resubmission(submissions::Store& s, const Actor& who, const AnnounceResubmission& in);

// POST /rounds/{round}/meetings: a meeting of the committee, recorded by a
// chair: when it was held (not in the future), the organisations that
// attended (each with a package in the round), the objections discussed (of
// this round) and the notes.
struct RecordMeeting {
  std::string round, held_at, notes;
  std::vector<std::string> attendees;
  std::vector<long long> objections;
};

struct Meeting {
  long long id = 0;
  std::string held_at, notes, recorded_by, created_at;
  std::vector<std::string> attendees;
  std::vector<long long> objections;
};
Result<Meeting> record_meeting(submissions::Store& s, const Actor& who, const RecordMeeting& in);

// ------------------------------------------------------------ reads

// The rounds the actor may see, in the store's order (an embargoed one is left out).
Result<std::vector<RoundInfo>> visible_rounds(submissions::Store& s, const Actor& who);
// Round `round` (3.1.0, training-3.1.0); hidden or unknown is 404.
Result<RoundInfo> show_round(submissions::Store& s, const Actor& who, const std::string& round);

// A round's rows of one kind, oldest first.
template <typename Row>
struct RoundRows {
  std::string round;
  std::vector<Row> rows;
};
Result<RoundRows<Pairing>> round_pairings(submissions::Store& s, const Actor& who, const std::string& round);
Result<RoundRows<Announcement>> round_announcements(submissions::Store& s, const Actor& who, const std::string& round);
Result<RoundRows<Meeting>> round_meetings(submissions::Store& s, const Actor& who, const std::string& round);


// The committee's report of a round in `format`: json, md or github (any
// case; anything else is 400, after the round is found).
struct ReportText {
  std::string text;
  bool markdown = false;  // md, github
};
Result<ReportText> round_report(submissions::Store& s, const Actor& who, const std::string& round,
                                const std::string& format);

// The minutes of meeting `meeting` of `round` in `format` (md or json), made
// from the store and the review log: the attendees, each objection discussed
// as it stood (its ballot and decision; the decisions taken since the
// previous meeting marked), everything the log recorded in the round since
// the previous meeting, the notes, and the chain's head at the meeting.
Result<ReportText> meeting_minutes(submissions::Store& s, const Actor& who, const std::string& round, long long meeting,
                                   const std::string& format);

}  // namespace referee::review
