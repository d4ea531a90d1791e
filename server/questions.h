// GET /api/v1/query/{name}: the store's questions (submissions/render.h)
// answered on the server's store for the caller, with the embargo applied.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "server/routes.h"
#include "submissions/render.h"

namespace referee::server {

// The question `name` asks with query parameters `params`: each is a flag
// of the command `referee NAME` without its dashes (round=3.1.0,
// rescale=true), a positional argument by its name (result=ORG/SYSTEM,
// repeated in order; what=rounds), or format=text|json|csv. Post: true with
// *out; else false with *error naming the parameter (a 400).
bool decode_question(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
                     submissions::Question* out, std::string* error);

// The question `name` with query `params` answered on `store` for a caller
// who sees the rounds `visible` accepts, as the route answers it: what a
// server sends, and what `referee NAME --token T` prints on a local store.
review::Response answer_question(submissions::Store& store, const std::string& name,
                                 const std::vector<std::pair<std::string, std::string>>& params,
                                 const submissions::RoundVisible& visible);

// The route's handler: 404 for no such question; 404 `unknown round` for a
// round the caller may not see, as for one the store does not hold; 403 for
// totals across rounds (list benchmarks|submitters) while a round is hidden
// from the caller; 400 for bad parameters; 200 with what the command prints;
// 404 with the command's message, its output and exit code when it cannot
// answer.
Reply question_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);

}  // namespace referee::server
