// The store questions (compare, speedup, scaling, leaderboard, list) as a
// server answers them: the same command code, run on the server's store,
// its output captured. `referee serve` answers GET /api/v1/query/NAME with
// it; the commands with --server ask that route and print the answer, so
// the output is the same as on a local store.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "submissions/store.h"

namespace referee::cli {

struct QueryAnswer {
  int exit = 0;              // the command's exit code (kPass, kCannotCheck)
  bool bad_request = false;  // the parameters do not make a command line; `err` says why
  bool json = false;         // format=json was asked for
  bool csv = false;          // format=csv was asked for
  std::string out;           // what the command printed on stdout
  std::string err;           // on stderr ("referee NAME: ..." lines)
};

// Whether `name` is one of the questions.
bool is_query(const std::string& name);

// Runs question `name` with `params`: each is a flag of the command without
// its dashes (round=3.1.0, benchmark=ssd, rescale=true), a positional
// argument by its name (result=ORG/SYSTEM, repeated in order; what=rounds),
// or format=text|json|csv. `visible(round)` (when set) says whether the caller
// may see a round: `list` leaves the others out.
QueryAnswer run_query(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
                      submissions::Store& store, const std::function<bool(const std::string&)>& visible);

}  // namespace referee::cli
