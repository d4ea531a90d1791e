// Questions the store answers: compare, speedup, scaling, leaderboard, list.
//
// Names typed by a user are resolved against the store first: rounds as
// `training-4.1.0`, `training_4.1.0` or `4.1.0`; benchmark, submitter and
// organisation names whatever their case. An unknown value is an error that
// lists the valid ones. A statement that fails on a damaged store is an
// error that says so, never an empty answer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "submissions/store.h"

namespace referee::submissions {

struct ResultRow {
  long long result_id = 0;
  std::string round, organisation, submitter, system, benchmark, division;
  // MLCommons' category (rules::availability_category: "Available cloud" for
  // "cloud", "Available in cloud" or "Available Cloud"); the text as written
  // when it names none (availability_known false). availability_raw: the
  // system description's status as written.
  std::string availability, availability_raw;
  bool availability_known = true;
  std::string accelerator;       // the system description's accelerator_model_name
  std::string accelerator_type;  // its family (submissions/accelerator.h): "H100" for "NVIDIA H100-SXM5-80GB"
  std::string accelerator_model;  // the family with its form factor: "H100 SXM"; what results are compared on
  long long accelerators = 0, nodes = 0;
  bool has_score = false;
  double score = 0;           // minutes (published, or pipeline when asked)
  // The score is no time to train (zero or less, from a scaling.json factor
  // of zero or less, or not a number): has_score is false, `score` keeps the
  // figure, and no ranking, speedup or scaling counts the result; the
  // rankings say why it is left out, the audit names it (no-time-to-train).
  bool no_time_to_train = false;
  bool pass = false;          // the directory passed the package checks
  std::string rcp_status;     // "" when the RCP check did not run; found | interpolated | smaller_batch_ok | ...
  bool rcp_pass = false;      // what the RCP check concluded (only when rcp_status is not "")
  bool resubmission = false;  // every run is a log from an earlier round
  std::vector<double> run_minutes;  // counted runs first, then the others
  std::vector<std::string> run_files;
  std::vector<bool> run_counted;
  std::vector<std::string> run_dropped;  // "" (counted, or the result has no score), "noncompliant", "olympic"
  // What the peer review did to the result (table result_status; none in a
  // store from before the review, or for a result nobody objected to):
  // "" | objection-open | fixed | moved-to-open | withdrawn | normalised.
  // moved-to-open: `division` is "open" (submitted_division keeps what was
  // submitted). normalised: `score` is unscaled minutes x review_factor, the
  // committee's factor (the figure published); `submitted_score` keeps the
  // score as submitted.
  std::string review_status;
  bool has_review_factor = false;
  double review_factor = 0;
  long long objection_id = 0, decision_id = 0;  // 0 = none
  std::string submitted_division;
  bool has_submitted_score = false;
  double submitted_score = 0;
  std::string objection_rule;  // the rule of the objection behind review_status
  bool has_published_factor = false, has_rcp_factor = false, has_unscaled = false;
  double published_factor = 0;  // the package's scaling.json (1 without one)
  double rcp_factor = 0;        // the RCP check's normalisation factor
  double unscaled = 0;          // the olympic mean before any factor
  bool round_published = true;  // the round's review is published (or it has no review record)
  bool round_reviewed = false;  // the round has a review record (reviewed in this store)
  // The checks that failed the result (results.failed_checks: "RCP", "result
  // count", "seeds", ...); empty when it passes.
  bool failed_checks_known = false;
  std::vector<std::string> failed_checks;
  // Twins: results of one round and benchmark whose logs are the same bytes
  // (every run's content digest equal, as one system submitted under several
  // names: 4.0's smc, smc-ac-power, smc-dc-power). They are one result: the
  // first by organisation/system name is ranked and compared, naming the
  // others in `twins`; the others carry its id in `twin_of` and are never
  // ranked, paired or compared with it.
  long long twin_of = 0;
  std::string twin_of_name;        // "ORG/SYSTEM" of that result
  std::vector<std::string> twins;  // "ORG/SYSTEM" of its twins (on the one ranked)
  std::vector<std::string> run_digests;  // the runs' content digests, sorted
};

// The decision by which the committee accepted a result whose checks fail: a
// normalisation upheld when the RCP check is the only one that failed (the
// committee's remedy for it, as the consortium's scaling.json). 0 for none:
// the result passes, or something else fails too.
long long accepted_by(const ResultRow& r);

// Whether a failing result is accepted: by a decision (accepted_by), or, in a
// published round and with no review status, by its package's scaling.json
// when the RCP check is the only one that failed and that file normalises at
// least by the RCP factor (the committee's decision as published; before
// publication a scaling.json is only the submitter's).
bool accepted(const ResultRow& r);

// The result's checks for JSON and CSV: "pass", "fail" or "accepted".
const char* checks_word(const ResultRow& r);

// By what an accepted result was accepted, for after "accepted": " (decision
// N)" or " (scaling.json)"; "" when it is not.
std::string accepted_label(const ResultRow& r);

// The result's checks in one word for tables: "pass", "FAIL", "accepted
// (decision N)" or "accepted (scaling.json)"; " (resubmitted)" after it for a
// resubmission.
std::string checks_cell(const ResultRow& r);

// Why a result is accepted: "the RCP check failed; the committee normalised
// the score x1.0758 (decision 1 on objection 1: rcp_checker: RCP test)"; ""
// when not accepted.
std::string accepted_text(const ResultRow& r);

// "withdrawn (decision 4)", "normalised x1.0758 (decision 7)", ...; "" when
// the result has no review status.
// The outcome of the review for a result of a reviewed round once it is
// published, for the public pages: "accepted as submitted", "accepted with
// factor 1.0758 by decision 3", "moved to the open division by decision 4",
// "withdrawn by decision 5", "accepted as fixed by decision 6"; "" while the
// round is not published or was not reviewed here.
std::string review_outcome_text(const ResultRow& r);
std::string review_status_text(const ResultRow& r);

// The RCP check's conclusion and how the reference point was had:
// "pass (found)", "fail (found)", "pass (interpolated)", ...; "not checked"
// when the check did not run on the result.
std::string rcp_text(const ResultRow& r);

struct Query {
  std::string round;      // training-3.1.0 (or 3.1.0, training_3.1.0)
  std::string benchmark;  // gpt3 (any case)
  std::string division;   // "" = any
  bool pipeline = false;  // use the pipeline's scores
};

// The consortium's availability categories (its summarizer's mapping, case
// ignored): "onprem", "available" -> "Available on-premise", "cloud" ->
// "Available cloud", "rdi", "research", ... -> "Research, Development, or
// Internal (RDI)", "preview" -> "Preview". Anything else comes back as it is,
// with *known (when not null) false.
std::string normalize_availability(const std::string& raw, bool* known = nullptr);

// The folder of a stored result in its package, relative to the package:
// results/<system>/<benchmark>, or results/<system>/strong/<benchmark> in an
// MLPerf HPC round ("hpc-X.Y.Z"), whose results rows are its strong-scaling
// results (weak scaling is weak_results). Every reader of a result's files
// (audit, evidence, publish, links) goes through it.
std::string result_dir(const std::string& round, const std::string& system, const std::string& benchmark);

// The chip of an accelerator model name: vendor words and form factors left
// out ("NVIDIA H100-SXM5-80GB" and "NVIDIA H100-SXM-80GB" -> "H100",
// "NVIDIA B200-SXM-180GB" -> "B200", "TPU-v5p" -> "TPU-v5p"). Results are
// comparable across rounds, and form one scaling series, only when their
// types are equal.
// The family of the accelerator a system description names (identify_accelerator).
std::string accelerator_type(const std::string& model);

// Name resolution. Each returns false with *error naming the valid values.
bool resolve_round(Store& s, const std::string& text, std::string* round, std::string* error);
// `round` "" = any round.
bool resolve_benchmark(Store& s, const std::string& round, const std::string& text, std::string* benchmark,
                       std::string* error, const std::string& round2 = "");
// A submitter (system descriptions' `submitter`) or organisation folder name.
// With `visible`, only names of the rounds it accepts are known: one that is
// only in a round hidden from the caller is answered as one not there.
bool resolve_submitter(Store& s, const std::string& round, const std::string& text, std::string* submitter,
                       std::string* error, const std::string& round2 = "",
                       const std::function<bool(const std::string&)>& visible = nullptr);

// The earlier results a resubmission copies: the results of the runs its runs
// are copies of, oldest round first. Empty for a result that copies nothing.
struct Origin {
  long long result_id = 0;
  std::string round, organisation, system;
  std::string name() const { return organisation + "/" + system + " (" + round + ")"; }
};
std::vector<Origin> resubmission_origins(Store& s, long long result_id, std::string* error);
// The same, as "ORG/SYSTEM (ROUND), ..." ("" when none or unreadable).
std::string resubmission_origin_names(Store& s, long long result_id);

// Marks twins among results of one round and benchmark (ResultRow::twin_of,
// twins): what results_for does; public for tests.
void mark_twins_for_test(std::vector<ResultRow>* rows);

// All results of a benchmark in a round (names resolved).
std::vector<ResultRow> results_for(Store& s, const Query& q, std::string* error);

// Runs dropped at each end of a result's olympic window: rules::olympic_drop
// of its round and benchmark (1 when the store has no such result).
int olympic_drop(Store& s, long long result_id);

// `ORG/SYSTEM` or `SYSTEM` (any case): matching results of the query's round
// and benchmark. The same result named twice is an error.
std::vector<ResultRow> find_results(Store& s, const Query& q, const std::vector<std::string>& names, std::string* error);

struct Speedup {
  std::string submitter;   // or "overall"
  // "headline": each round's fastest result, whatever its size; "same-scale";
  // "carried": the later round's fastest is a resubmission of an earlier
  // round's result (the record carried forward, not a new result): never
  // comparable, never a regression.
  std::string kind;
  ResultRow from, to;
  bool comparable = true;
  std::string reason;      // why not, when not comparable
  std::string accelerators;  // at which level the accelerators matched (accelerator_match_text), or why not
  double speedup = 0;            // from.score / to.score (comparable only)
  double accelerator_ratio = 0;  // to.accelerators / from.accelerators
  bool has_efficiency = false;
  double efficiency = 0;         // speedup / accelerator_ratio: only when the later result has more accelerators
  // What the efficiency counts: across rounds, the later round's software
  // and systems as well as scale ("" without an efficiency).
  std::string efficiency_note;
  // A 95% bootstrap interval of the speedup from each side's runs
  // (rules::bootstrap_ratio of their times, times each score's factor);
  // comparable pairs whose sides have enough runs only.
  bool has_interval = false;
  double speedup_low = 0, speedup_high = 0;
  int runs_from = 0, runs_to = 0;  // the runs each side's interval resampled
};

struct SpeedupQuery {
  std::string from_round, to_round, benchmark;
  bool per_submitter = true;
  std::string submitter;  // "" = all (only with per_submitter)
  bool pipeline = false;
};

struct SpeedupReport {
  std::string from_round, to_round, benchmark;  // resolved
  std::vector<Speedup> pairs;                   // headline first in each group, then same-scale by size
  std::vector<std::string> left_out;            // resubmissions (counted in their first round only) and withdrawn results
  std::vector<std::string> notes;               // groups without a pair, and why
};

// The rule the headline rows follow, printed with them.
extern const char* const kHeadlineScaleRule;

// Closed-division, scored results. A result that is a resubmission (all its
// runs are logs of an earlier round) counts in the round it was first
// submitted in; in a later round it is that record carried forward, never a
// new result: no pair is made with it, and when it is faster than every new
// result of its round the headline is a "carried" row (the record stands),
// not a regression. On the earlier side of a pair a carried record is the
// round's standing record: it may head the headline. Per group (submitter, or
// overall): a headline pair (each round's fastest) and one same-scale pair per
// accelerator model and count present in both rounds (new results only). A pair is comparable only when its accelerator types are equal;
// a headline pair whose later result is both smaller and slower is not
// comparable either. False with *error when the names do not resolve, when
// `from` is not earlier than `to`, or when the store cannot be read.
bool speedups(Store& s, const SpeedupQuery& q, SpeedupReport* out, std::string* error);

// `speedup --all-rounds`: the chain of one benchmark across every round of
// the store that has it (results of that benchmark), oldest first.
struct ChainStep {
  std::string kind;     // "consecutive" (each round and the next that has the benchmark) or "first-to-last"
  SpeedupReport report;  // as speedups() answers the pair
};

struct SpeedupChain {
  std::string benchmark;
  std::vector<std::string> rounds;  // the rounds that have it, oldest first
  std::vector<ChainStep> steps;      // consecutive pairs, then first to last (when there are three rounds or more)
  std::vector<std::string> notes;    // why there is no chain (fewer than two rounds)
};

// One chain per benchmark: `q.benchmark` (resolved), or every benchmark of
// the store when it is "". `q.from_round` and `q.to_round` are not used;
// per_submitter, submitter and pipeline mean what they mean for speedups().
// `visible(round)` (when set) leaves out the rounds it refuses, as if the
// store did not hold them (an unknown benchmark is then answered as one
// that is only in such rounds, without the list of valid names). False with
// *error when a name does not resolve or the store cannot be read.
bool speedup_chains(Store& s, const SpeedupQuery& q, const std::function<bool(const std::string&)>& visible,
                    std::vector<SpeedupChain>* out, std::string* error);

struct ScalingPoint {
  ResultRow result;
  double speedup = 1;     // time of the series' smallest / this time
  double size_ratio = 1;  // accelerators / the smallest's
  bool has_efficiency = false;  // not for a point the size of the smallest (ratio 1): the speedup says it all
  double efficiency = 0;        // speedup / size_ratio
};

struct ScalingSeries {
  std::string division;  // closed | open (a result the review moved to open is in an open series)
  std::string accelerator_type;   // the family; the model where another series has another model of it
  std::string accelerator_model;  // what the series' results share: "H100 SXM"
  std::vector<ScalingPoint> points;  // by size; relative to the first
};

// Results are ranked within their division: closed first, then open, then
// any other, each fastest first; a result the review moved to the open
// division (ResultRow::division "open") ranks with the open ones.
bool division_rank_less(const ResultRow& a, const ResultRow& b);
// The rank of each of `sorted` (in division_rank_less order) within its
// division: 1, 2, ... again from 1 where the division changes.
std::vector<int> division_ranks(const std::vector<const ResultRow*>& sorted);

// A series' name: its accelerator type, with " (open)" for an open-division series.
std::string series_label(const ScalingSeries& s);

// One submitter's scored results of a benchmark, one series per division and accelerator type.
// Withdrawn results are left out, named in *left_out (when not null).
std::vector<ScalingSeries> scaling(Store& s, const Query& q, const std::string& submitter, std::string* error,
                                   std::vector<std::string>* left_out = nullptr);
// The same series of results already read (results_for of one round and
// benchmark) for the submitter named exactly as the store names it (or as
// its organisation); empty when it has none.
std::vector<ScalingSeries> scaling_series(std::vector<ResultRow> rows, const std::string& submitter,
                                          std::vector<std::string>* left_out = nullptr);

// Scored results ranked by score. A withdrawn result is never ranked: it is
// named in *left_out (when not null) with the reason.
std::vector<ResultRow> leaderboard(Store& s, const Query& q, std::string* error,
                                   std::vector<std::string>* left_out = nullptr);
// The same ranking of results already read (results_for of one round and
// benchmark, every division), of one division ("" for both).
std::vector<ResultRow> leaderboard_of(std::vector<ResultRow> rows, const std::string& division, std::string* error,
                                      std::vector<std::string>* left_out = nullptr);

// Rounds in the store, oldest first.
std::vector<std::string> rounds(Store& s);

// `referee list`: what the store holds, as a table (column names, rows).
struct Listing {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
// `what`: rounds, benchmarks, systems or submitters; `round` "" = all rounds.
// `only` (when given): the rounds counted; every other round is left out of
// every row and total, as if the store did not hold it (the embargo).
bool list_store(Store& s, const std::string& what, const std::string& round, Listing* out, std::string* error,
                const std::vector<std::string>* only = nullptr);

}  // namespace referee::submissions
