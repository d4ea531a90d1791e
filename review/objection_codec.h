// The API's JSON for objections, both ways, written once: the request body
// of each operation made from its typed value (what the CLI sends with
// --server), and the answer to an operation made from its result (what a
// route answers, and what the CLI prints on a local store). The bodies are
// decoded by the routes (objection_routes.cc) into the same typed values.
#pragma once

#include <string>

#include "review/api.h"
#include "review/objections.h"

namespace referee::review {

std::string request_body(const FileObjection& in);
std::string request_body(const AddEvidence& in);
std::string request_body(const Respond& in);
std::string request_body(const Comment& in);
std::string request_body(const CastVote& in);
std::string request_body(const Decide& in);
std::string request_body(const Withdraw& in);
std::string request_body(const Extend& in);
std::string request_body(const SetVoteDeadline& in);

// The answer to a write: `status` with the objection as it is now
// (objection_json), or the error.
Response objection_answer(submissions::Store& s, const Actor& who, const Result<Objection>& r, int status);
// The answer to a read: 200 with the JSON, or the error.
Response read_answer(const Result<std::string>& r);

}  // namespace referee::review
