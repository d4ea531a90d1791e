#include "server/questions.h"

#include "base/text.h"
#include "mllog/json_writer.h"
#include "submissions/cost.h"
#include "submissions/queries.h"

namespace referee::server {

namespace {

using submissions::Price;
using submissions::Question;
using submissions::QuestionKind;

// The exit code of a command that could not answer (the CLI's kCannotCheck),
// which the answer's error carries.
constexpr int kNoAnswerExit = 2;

enum class Kind {
  Text,        // one value
  Flag,        // true|1|"" or false|0
  Choice,      // one of `choices`, any case
  Price,       // a price per accelerator-hour or per node-month
  Positional,  // a positional argument, repeated in order
};

// One parameter of a question: the command's flag (or positional argument)
// of the same name.
struct Param {
  const char* name;
  Kind kind;
  bool required = false;
  std::vector<std::string> choices = {};
};

// Each question's parameters, in the order the command declares its flags.
std::vector<Param> params_of(QuestionKind k) {
  const Param round{"round", Kind::Text, true}, benchmark{"benchmark", Kind::Text, true}, rescale{"rescale", Kind::Flag};
  const Param price_hour{"price-per-accelerator-hour", Kind::Price}, price_month{"price-per-node-month", Kind::Price};
  switch (k) {
    case QuestionKind::Compare:
      return {round, benchmark, rescale, price_hour, price_month, {"result", Kind::Positional, true}};
    case QuestionKind::Leaderboard:
      return {round, benchmark, rescale, price_hour, price_month, {"division", Kind::Choice, false, {"closed", "open"}}};
    case QuestionKind::Scaling:
      return {round, benchmark, rescale, {"submitter", Kind::Text, true}};
    case QuestionKind::Speedup:
      return {{"benchmark", Kind::Text}, rescale, price_hour, price_month, {"from", Kind::Text}, {"to", Kind::Text},
              {"all-rounds", Kind::Flag}, {"submitter", Kind::Text}, {"overall", Kind::Flag}};
    case QuestionKind::List:
      return {{"what", Kind::Choice, true, {"rounds", "benchmarks", "systems", "submitters"}}, {"round", Kind::Text}};
  }
  return {};
}

// Pairs of parameters a question does not take together.
const std::vector<std::pair<std::string, std::string>> kExcludes = {
    {"price-per-accelerator-hour", "price-per-node-month"},
    {"all-rounds", "from"},
    {"all-rounds", "to"},
    {"overall", "submitter"},
};

// Where a parameter's value goes in the question.
void store(Question* q, const std::string& name, const std::string& value) {
  if (name == "round") q->round = value;
  else if (name == "benchmark") q->benchmark = value;
  else if (name == "division") q->division = value;
  else if (name == "submitter") q->submitter = value;
  else if (name == "from") q->from = value;
  else if (name == "to") q->to = value;
  else if (name == "what") q->what = value;
  else if (name == "result") q->results.push_back(value);
}

void set_flag(Question* q, const std::string& name, bool on) {
  if (name == "rescale") q->rescale = on;
  else if (name == "all-rounds") q->all_rounds = on;
  else if (name == "overall") q->overall = on;
}

review::Response error_reply(int status, const std::string& code, const std::string& message, const std::string& hint = "") {
  return review::error_response(status, code, message, hint);
}

}  // namespace

bool decode_question(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
                     Question* out, std::string* error) {
  Question q;
  if (!submissions::question_kind(name, &q.kind)) {
    *error = "no question '" + name + "'";
    return false;
  }
  const std::vector<Param> table = params_of(q.kind);
  std::string known;
  for (const auto& p : table) known += (known.empty() ? "" : ", ") + std::string(p.name);
  std::vector<std::string> given;
  for (const auto& [key, value] : params) {
    if (key == "format") {
      if (value == "json") q.format = submissions::Format::Json;
      else if (value == "csv") q.format = submissions::Format::Csv;
      else if (value == "text") q.format = submissions::Format::Text;
      else {
        *error = "format=" + value + " is not offered; choose text, json or csv";
        return false;
      }
      continue;
    }
    const Param* p = nullptr;
    for (const auto& t : table)
      if (key == t.name) p = &t;
    if (!p) {
      *error = "unknown parameter '" + key + "' for " + name + "; it takes: " + known + ", format";
      return false;
    }
    bool repeated = false;
    for (const auto& g : given) repeated = repeated || g == key;
    if (repeated && p->kind != Kind::Positional) {
      *error = "parameter '" + key + "' is given more than once";
      return false;
    }
    given.push_back(key);
    switch (p->kind) {
      case Kind::Text:
      case Kind::Positional:
        store(&q, key, value);
        break;
      case Kind::Flag:
        if (value == "true" || value == "1" || value.empty()) {
          set_flag(&q, key, true);
        } else if (value != "false" && value != "0") {
          *error = "parameter '" + key + "' is true or false, not '" + value + "'";
          return false;
        }
        break;
      case Kind::Choice: {
        std::string v = base::lower(value), list;
        bool found = false;
        for (const auto& c : p->choices) {
          found = found || c == v;
          list += (list.empty() ? "" : ", ") + c;
        }
        if (!found) {
          *error = key + ": '" + value + "' is not one of " + list;
          return false;
        }
        store(&q, key, v);
        break;
      }
      case Kind::Price: {
        Price::Per per = key == "price-per-node-month" ? Price::Per::NodeMonth : Price::Per::AcceleratorHour;
        std::string e;
        if (!submissions::parse_price(value, per, &q.price, &e)) {
          *error = key + ": " + e;
          return false;
        }
        break;
      }
    }
  }
  auto has = [&given](const std::string& n) {
    for (const auto& g : given)
      if (g == n) return true;
    return false;
  };
  for (const auto& p : table)
    if (p.required && !has(p.name)) {
      *error = "parameter '" + std::string(p.name) + "' is required";
      return false;
    }
  for (const auto& [a, b] : kExcludes)
    if (has(a) && has(b)) {
      *error = "parameter '" + a + "' excludes '" + b + "'";
      return false;
    }
  if (q.kind == QuestionKind::Compare && q.results.size() < 2) {
    *error = "result: two or more are needed (ORG/SYSTEM or SYSTEM), given " + std::to_string(q.results.size());
    return false;
  }
  if (!submissions::check_question(q, error)) return false;
  *out = std::move(q);
  return true;
}

review::Response answer_question(submissions::Store& store, const std::string& name,
                                 const std::vector<std::pair<std::string, std::string>>& params,
                                 const submissions::RoundVisible& visible) {
  QuestionKind kind;
  if (!submissions::question_kind(name, &kind))
    return error_reply(404, "not-found", "no question '" + name + "'",
                       "ask one of: leaderboard, compare, speedup, scaling, list");
  // A round the caller may not see is answered exactly like one the store
  // does not hold, before anything else is looked at.
  for (const auto& [k, v] : params) {
    if (k != "round" && k != "from" && k != "to") continue;
    std::string round, ignored;
    if (!submissions::resolve_round(store, v, &round, &ignored) || !visible(round)) return review::unknown_round(v);
  }
  Question q;
  std::string error;
  if (!decode_question(name, params, &q, &error)) return error_reply(400, "bad-parameter", error);
  submissions::Answer a = submissions::answer(store, q, visible);
  if (a.ok) {
    review::Response ok;
    ok.body = std::move(a.out);
    ok.content_type = q.format == submissions::Format::Json  ? "application/json"
                      : q.format == submissions::Format::Csv ? "text/csv; charset=utf-8"
                                                             : "text/plain; charset=utf-8";
    return ok;
  }
  // The command's text goes back as UTF-8 text (a byte that is not UTF-8 as its latin-1 character).
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("error").begin_object();
  w.key("status").value(404).key("code").value("no-answer").key("message").value(a.error);
  w.key("output").value(a.out).key("exit").value(kNoAnswerExit);
  w.end_object().end_object();
  review::Response res;
  res.status = 404;
  res.body = w.str();
  return res;
}

Reply question_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  std::string serr;
  submissions::Store* store = ctx.reader(&serr);
  if (!store) return json_reply(error_reply(500, "store", serr));
  submissions::RoundVisible visible = [&](const std::string& round) { return ctx.api.can_see_round(caller.who, round); };
  return json_reply(answer_question(*store, params.at(0), call.query, visible));
}

}  // namespace referee::server
