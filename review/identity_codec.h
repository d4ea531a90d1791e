// The API's JSON for users and tokens, both ways: the request body of an
// operation made from its typed value (what the CLI sends with --server),
// and the answer made from its result (what a route answers, and what the
// CLI prints on a local store). The routes (identity_routes.cc) decode the
// bodies into the same typed values (review/identity.h).
#pragma once

#include <string>
#include <vector>

#include "review/api.h"
#include "review/identity.h"

namespace referee::review {

std::string request_body(const AddUser& in);
std::string request_body(const RevokeToken& in);

// 201 with {"user": {...}, "token", "token_prefix"}, or the error.
Response added_user_answer(const Result<NewToken>& r);
// 200 with {"users": [...]}, or the error.
Response users_answer(const Result<std::vector<User>>& r);
// 201 with {"user", "token", "token_prefix"}, or the error.
Response token_answer(const Result<NewToken>& r);
// 200 with {"user", "revoked"} (and "token_prefix" when one token was revoked by it), or the error.
Response revoked_answer(const Result<Revoked>& r);

}  // namespace referee::review
