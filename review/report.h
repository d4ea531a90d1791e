// The review committee's report of a round (agenda and minutes): schedule
// and state, pairings, announcements, every objection with its results,
// evidence, responses, votes, decision and overrides, and the status of each
// result. Read from the store; rendered as JSON, Markdown, or one GitHub
// issue per objection (docs/review.md, "Rounds, pairings and the report").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "submissions/store.h"

namespace referee::review {

struct ReportObjection {
  long long id = 0;
  std::string by, against, filed_by, title, rule, text, state, created_at;
  bool has_impact = false;
  double impact_minutes = 0;
  struct Result {
    std::string name;  // ORG/SYSTEM/BENCHMARK
    bool has_score = false;
    double score = 0;
  };
  std::vector<Result> results;
  struct Evidence {
    std::string kind;
    std::string summary;  // one line: what it is, where from
    std::string quoted;   // the log lines or check message quoted, as added ("" for a figure)
  };
  std::vector<Evidence> evidence;
  struct Reply {
    std::string organisation, user, text, remedy, at;
    bool has_factor = false;
    double factor = 0;
  };
  std::vector<Reply> responses;
  std::vector<Reply> comments;  // the discussion, oldest first (organisation "" for a chair of none)
  struct Vote {
    std::string organisation, user, vote, remedy, at;
    bool has_factor = false;
    double factor = 0;
  };
  std::vector<Vote> votes;
  bool decided = false;
  long long decision_id = 0;
  std::string outcome, remedy, majority, decided_by, decision_text, decided_at;
  bool has_factor = false;
  double factor = 0;
  long long uphold = 0, reject = 0, abstain = 0;
  // A fix decision: "delivered" | "due" | "overdue" (fix_state), when it is
  // due, and what each corrected package changed (result_change_text lines).
  std::string fix_state, fix_due;
  std::vector<std::string> fix_changes;
  struct Override {
    long long seq = 0;
    std::string action, actor, at, reason;
    std::string deadline;  // which deadline was overridden ("" when the event does not say)
  };
  std::vector<Override> overrides;
  // More time a neutral chair gave one organisation here (each objection.extend, oldest first).
  struct Extension {
    long long seq = 0;
    std::string organisation, deadline, until, round_deadline, actor, at, reason;
  };
  std::vector<Extension> extensions;
  // A withdrawal: who, when and why (from its objection.withdraw event).
  bool withdrawn = false;
  std::string withdrawn_by, withdrawn_at, withdrawal_text;
  // Decisions replaced by an amendment, oldest first, one line each.
  std::vector<std::string> superseded;
};

struct ReportRound {
  std::string name, state;
  bool has_review = false;
  long long version = 0;
  std::vector<std::pair<std::string, std::string>> schedule;  // field, value ("" unset)
  struct Pairing {
    long long id = 0;
    std::string reviewer, reviewed, reason, status;
  };
  std::vector<Pairing> pairings;
  struct Announcement {
    long long id = 0;
    std::string organisation, result, text, user, at;
  };
  std::vector<Announcement> announcements;
  std::vector<ReportObjection> objections;
  struct Status {
    std::string result, status;
    bool has_factor = false;
    double factor = 0;
    long long objection_id = 0, decision_id = 0;
  };
  std::vector<Status> statuses;
};

// Fills objections and statuses of round `round_id`. False with *error when
// the store cannot be read.
bool load_report(submissions::Store& s, long long round_id, ReportRound* out, std::string* error);

std::string report_json(const ReportRound& r);

// The minutes of one meeting (review::meeting_minutes): what is shown, read.
struct MeetingMinutes {
  std::string round;
  long long id = 0;
  std::string held_at, since;  // since: the previous meeting's time ("" for the first)
  std::string recorded_by, recorded_at, notes;
  std::vector<std::string> attendees;
  std::vector<ReportObjection> discussed;  // as they stand
  std::vector<long long> decided_here;     // discussed objections decided since the previous meeting
  struct Happened {
    long long seq = 0;  // 0: not shown (a member reads no event numbers)
    std::string at, actor, organisation, action, subject;
  };
  std::vector<Happened> happened;  // the round's events since the previous meeting, up to this one
  std::string chain_head;          // "seq:hash" of the last event up to the meeting ("" for a member)
};
std::string minutes_markdown(const MeetingMinutes& m);
std::string minutes_json(const MeetingMinutes& m);
std::string report_markdown(const ReportRound& r);
// One block per objection, each ready for `gh issue create`: a front matter
// with title and labels, then the body (docs/review.md).
std::string report_github(const ReportRound& r);

}  // namespace referee::review
