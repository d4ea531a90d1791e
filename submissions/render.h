// The store's questions (compare, leaderboard, scaling, speedup, list) as
// they are answered: a typed question in, the text, JSON or CSV bytes out.
// `referee NAME` prints the answer on a local store; `referee serve` sends
// the same bytes for GET /api/v1/query/NAME (server/questions.h), so a
// command asked through a server prints exactly what it prints locally.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "submissions/cost.h"
#include "submissions/queries.h"
#include "submissions/store.h"

namespace referee::submissions {

enum class Format { Text, Json, Csv };

enum class QuestionKind { Compare, Leaderboard, Scaling, Speedup, List };

// The command's name ("compare", ...).
const char* question_name(QuestionKind kind);
// The kind named `name`; false when it is no question.
bool question_kind(const std::string& name, QuestionKind* out);

// One question with its parameters; each field is the command's flag of the
// same name (docs/store.md). Fields a kind does not take stay empty.
struct Question {
  QuestionKind kind = QuestionKind::List;
  std::string round;      // compare, leaderboard, scaling, list (list: "" = every round)
  std::string benchmark;  // compare, leaderboard, scaling, speedup (speedup with all_rounds: "" = every benchmark)
  std::string division;   // leaderboard: "closed", "open" or "" for both
  std::string submitter;  // scaling (required), speedup ("" = every submitter)
  std::string from, to;   // speedup: the pair of rounds (without all_rounds)
  std::string what;       // list: rounds, benchmarks, systems or submitters
  std::vector<std::string> results;  // compare: ORG/SYSTEM or SYSTEM, two or more, in order
  bool rescale = false;     // the pipeline's scores instead of the published ones
  bool overall = false;     // speedup: fastest results whoever submitted them
  bool all_rounds = false;  // speedup: the chain across every round
  Price price;              // compare, leaderboard, speedup: a cost column (Price::Per::None: none)
  Format format = Format::Text;
};

// Rules between parameters that no single flag states: speedup needs the
// pair and the benchmark unless all_rounds is asked. Post: true, or false
// with *error the usage message.
bool check_question(const Question& q, std::string* error);

// What the command prints: `out` on stdout; when it cannot answer, ok false
// and `error`, one line without the "referee NAME: " the command puts in
// front of it (an answer may fail after printing, e.g. a speedup table with
// no comparable pair).
struct Answer {
  bool ok = true;
  std::string out;
  std::string error;
};

// Whether the caller may see a round (training-3.1.0). Unset: every round.
using RoundVisible = std::function<bool(const std::string& round)>;

// Pre: check_question(q). Answers `q` on `store`. `visible` (when set)
// leaves rounds out of list's rows and of speedup's chain across rounds;
// rounds named in the question are the caller's to check first (a server
// answers a hidden one as an unknown one).
Answer answer(Store& store, const Question& q, const RoundVisible& visible = nullptr);

}  // namespace referee::submissions
