// Rounds under review: the schedule and state of a round, the required
// reviews (pairings), announcements of resubmitted logs and the committee's
// report. The pure parts are here so that they can be tested and used by the
// CLI and the audit; the operations on a store are in review/round_ops.h and
// their routes in round_routes.cc (docs/review.md, "Rounds, pairings and the
// report").
#pragma once

#include <string>
#include <vector>

#include "submissions/store.h"

namespace referee::review {

// A round's schedule, each instant normalised to UTC ISO-8601 with seconds
// ("2026-05-09T23:59:59Z"); "" = not set (an unset deadline restricts nothing).
struct Schedule {
  std::string submission_deadline, objections_due, responses_due, decisions_due, scores_final, publication,
      first_meeting;
};

// The schedule's fields by their API names, in their required order
// (first_meeting last: it is outside the chain).
std::vector<std::pair<const char*, std::string Schedule::*>> schedule_fields();

// Parses an ISO-8601 date ("2026-05-02": the end of that day, 23:59:59 UTC)
// or date-time in UTC ("2026-05-02T17:00", "2026-05-02T17:00:00Z"; an offset
// other than Z or +00:00 is refused). Post: true with *out normalised; else
// false with *error saying what was expected.
bool parse_instant(const std::string& text, std::string* out, std::string* error);

// The order the policy requires: submission_deadline <= objections_due <=
// responses_due <= decisions_due <= scores_final <= publication, over the
// fields that are set; first_meeting, when set, not before the submission
// deadline. False with *error naming the two fields out of order.
bool schedule_in_order(const Schedule& s, std::string* error);

// The MLCommons default from a submission deadline (a date or date-time):
// objections due at the end of review week 1 (deadline + 7 days), responses
// on the Monday of week 2 (the first Monday after that), decisions at the end
// of week 2 (+14 days), scores final at the end of week 3 (+21), publication
// at the end of week 4 (+28). first_meeting is left unset. False with *error
// when `deadline` does not parse.
bool default_schedule(const std::string& deadline, Schedule* out, std::string* error);

// One required review: `reviewer` reviews `reviewed`.
struct PairingPlan {
  std::string reviewer, reviewed;
  std::string reason;  // "rank" or "scale-512"
};

struct SubmitterCount {
  std::string organisation;  // organisation folder: Azure+NVIDIA is its own submitter
  long long results = 0;     // results in the round
  long long max_accelerators = 0;  // the largest system among them
};

// Whether two organisation folders share a partner (Azure+NVIDIA and NVIDIA,
// Azure+NVIDIA and NVIDIA+CoreWeave): they do not review each other.
bool same_party(const std::string& a, const std::string& b);

// The required reviews of a round: submitters ranked by number of results
// (most first, ties by name), paired 1-2, 3-4, ..., each reviewing the other;
// with an odd count the last one joins the last pair as a three-way (each
// reviews both others). A submitter that shares a partner with the one it
// would be paired with (a joint submission and its partner) swaps with the
// next one down the ranking that does not; when none is left, the two are
// not paired with each other. Every two submitters with a result of at least
// 512 accelerators review each other ("scale-512") unless the rank already
// pairs them or they share a partner. Returned in a stable order (rank pairs
// first).
std::vector<PairingPlan> plan_pairings(std::vector<SubmitterCount> submitters);

// Whether the resubmitted logs of result `result_id` were announced
// (a row of `announcements` names it). False on a store without the table.
bool announced(submissions::Store& s, long long result_id);

}  // namespace referee::review
