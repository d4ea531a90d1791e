// The API's JSON for a round's review, both ways, written once: the request
// body of each operation made from its typed value (what the CLI sends with
// --server), and the answer made from its result (what a route answers, and
// what the CLI prints on a local store). The routes (round_routes.cc) decode
// the bodies into the same typed values (review/round_ops.h).
#pragma once

#include <string>
#include <vector>

#include "review/api.h"
#include "review/round_ops.h"

namespace referee::review {

std::string request_body(const SetSchedule& in);
std::string request_body(const ChangeRoundState& in);
std::string request_body(const UpdatePairing& in);
std::string request_body(const AnnounceResubmission& in);
std::string request_body(const RecordMeeting& in);

// 200 with the round ({"round", "state", "review", "schedule", "version"}), or the error.
Response round_answer(const Result<RoundInfo>& r);
// 200 with {"rounds": [...]}, or the error.
Response rounds_answer(const Result<std::vector<RoundInfo>>& r);
// 201 with the assignment when it added a pairing, 200 when it added none; or the error.
Response assignment_answer(const Result<Assignment>& r);
// 200 with the pairing, or the error.
Response pairing_answer(const Result<Pairing>& r);
// 201 with {"round", "late", "announcements": [...]}, or the error.
Response announced_answer(const Result<Announced>& r);
// 200 with {"round", "pairings": [...]} / {"round", "announcements": [...]}, or the error.
Response pairings_answer(const Result<RoundRows<Pairing>>& r);
Response announcements_answer(const Result<RoundRows<Announcement>>& r);
// 201 with the meeting ({id, held_at, attendees, objections, notes, recorded_by, created_at}), or the error.
Response meeting_answer(const Result<Meeting>& r);
// 200 with {"round", "meetings": [...]}, or the error.
Response meetings_answer(const Result<RoundRows<Meeting>>& r);
// 200 with the report (JSON, or text/markdown), or the error.
Response report_answer(const Result<ReportText>& r);

}  // namespace referee::review
