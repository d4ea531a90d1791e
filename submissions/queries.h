// Questions the store answers: compare, speedup, scaling, leaderboard.
#pragma once

#include <string>
#include <vector>

#include "submissions/store.h"

namespace referee::submissions {

struct ResultRow {
  long long result_id = 0;
  std::string round, organisation, submitter, system, benchmark, division, availability, accelerator;
  long long accelerators = 0, nodes = 0;
  bool has_score = false;
  double score = 0;           // minutes (published, or pipeline when asked)
  bool pass = false;          // the directory passed the package checks
  std::string rcp_status;
  bool resubmission = false;  // every run is a log from an earlier round
  std::vector<double> run_minutes;  // counted runs first, then the others
  std::vector<std::string> run_files;
  std::vector<bool> run_counted;
};

struct Query {
  std::string round;      // training-3.1.0
  std::string benchmark;  // gpt3
  std::string division;   // "" = any
  bool pipeline = false;  // use the pipeline's scores
};

// All results of a benchmark in a round.
std::vector<ResultRow> results_for(Store& s, const Query& q, std::string* error);

// `ORG/SYSTEM` or `SYSTEM`: matching results of the query's round and benchmark.
std::vector<ResultRow> find_results(Store& s, const Query& q, const std::vector<std::string>& names, std::string* error);

struct Speedup {
  std::string submitter;           // or "best overall"
  ResultRow from, to;
  double speedup = 0;              // from.score / to.score
  double accelerator_ratio = 0;    // to.accelerators / from.accelerators
  double efficiency = 0;           // speedup / accelerator_ratio
  bool comparable = true;          // false when `to` is a resubmission of `from`
  std::string note;
};

// Fastest scored result per submitter in each round (or overall when
// per_submitter is false), resubmissions excluded from the later round.
std::vector<Speedup> speedups(Store& s, const std::string& from_round, const std::string& to_round,
                              const std::string& benchmark, bool per_submitter, const std::string& submitter,
                              bool pipeline, std::string* error);

struct ScalingPoint {
  ResultRow result;
  double speedup = 1;     // time of the smallest / this time
  double size_ratio = 1;  // accelerators / the smallest's
  double efficiency = 1;  // speedup / size_ratio
};

std::vector<ScalingPoint> scaling(Store& s, const Query& q, const std::string& submitter, std::string* error);

// Scored results ranked by score.
std::vector<ResultRow> leaderboard(Store& s, const Query& q, std::string* error);

// Rounds in the store, oldest first.
std::vector<std::string> rounds(Store& s);

}  // namespace referee::submissions
