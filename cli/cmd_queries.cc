// compare, speedup, scaling, leaderboard, list: questions the store answers.
// Each command turns its flags into a submissions::Question and prints the
// answer (submissions/render.h): on the local store, opened read-only and
// never created, or, with --server, the same bytes from a server's
// GET /api/v1/query/NAME.
#include <iostream>

#include "base/text.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "mllog/json.h"
#include "review/api.h"
#include "server/questions.h"
#include "submissions/cost.h"
#include "submissions/render.h"
#include "submissions/store.h"

namespace referee::cli {

namespace {

using submissions::Price;
using submissions::Question;
using submissions::QuestionKind;

// The flags of a question: the question itself, and those that say how to
// ask it and how to print the answer.
struct Flags {
  Question q;
  std::string db;
  bool json = false, csv = false;
  std::string price_accelerator_hour, price_node_month;  // as typed; validated when parsed
};

// --json and --csv: one of them, or the table.
void add_formats(CLI::App& sub, bool* json, bool* csv) {
  auto* j = sub.add_flag("--json", *json, "print JSON");
  auto* c = sub.add_flag("--csv", *csv, "print CSV (RFC 4180, a header row, numbers in full precision)");
  c->excludes(j);
  j->excludes(c);
}

// --price-per-accelerator-hour X | --price-per-node-month X: the cost of one
// training run in an added column.
void add_price(CLI::App& sub, Flags* c) {
  auto check = [](Price::Per per) {
    return CLI::Validator(
        [per](std::string& v) {
          Price p;
          std::string error;
          return submissions::parse_price(v, per, &p, &error) ? std::string() : error;
        },
        "PRICE");
  };
  auto* a = sub.add_option("--price-per-accelerator-hour", c->price_accelerator_hour,
                           "add the cost of one training run at this price per accelerator-hour")
                ->check(check(Price::Per::AcceleratorHour));
  auto* n = sub.add_option("--price-per-node-month", c->price_node_month,
                           "add the cost of one training run at this price per node-month (730 hours), as servers are rented")
                ->check(check(Price::Per::NodeMonth));
  a->excludes(n);
  n->excludes(a);
}

void add_db_option(CLI::App& sub, std::string* db) {
  sub.add_option("--db", *db, "database file (default $REFEREE_DB or the user's data directory); opened read-only");
}

void add_common(CLI::App& sub, Flags* c, bool needs_round, bool needs_benchmark = true) {
  add_db_option(sub, &c->db);
  if (needs_round) sub.add_option("--round", c->q.round, "round: training-3.1.0, training_3.1.0 or 3.1.0")->required();
  auto* b = sub.add_option("--benchmark", c->q.benchmark, "benchmark, e.g. gpt3 (any case)");
  if (needs_benchmark) b->required();
  add_formats(sub, &c->json, &c->csv);
  sub.add_flag("--rescale", c->q.rescale, "use the scores the consortium's pipeline computes today instead of the published ones");
}

// The flags of a question of `kind` that names a round (unless
// `!needs_round`) and a benchmark (unless `!needs_benchmark`), with
// add_common's options and, when `priced`, add_price's.
std::shared_ptr<Flags> question_flags(CLI::App& sub, QuestionKind kind, bool priced, bool needs_round = true,
                                      bool needs_benchmark = true) {
  auto c = std::make_shared<Flags>();
  c->q.kind = kind;
  add_common(sub, c.get(), needs_round, needs_benchmark);
  if (priced) add_price(sub, c.get());
  return c;
}

// The question as the flags give it: its format and price.
Question question_of(const Flags& f) {
  Question q = f.q;
  q.format = f.json ? submissions::Format::Json : f.csv ? submissions::Format::Csv : submissions::Format::Text;
  std::string ignored;  // validated when the options were parsed
  if (!f.price_accelerator_hour.empty())
    submissions::parse_price(f.price_accelerator_hour, Price::Per::AcceleratorHour, &q.price, &ignored);
  if (!f.price_node_month.empty()) submissions::parse_price(f.price_node_month, Price::Per::NodeMonth, &q.price, &ignored);
  return q;
}

// ---------------------------------------------------------------- local or remote

// Options of a question that do not travel to a server.
bool local_only_option(const std::string& name) {
  return name == "help" || name == "db" || name == "server" || name == "token" || name == "cacert" ||
         name == "timeout" || name == "json" || name == "csv";
}

// The question `sub` was given as the query parameters of its route: its flags.
std::vector<std::pair<std::string, std::string>> query_params(const CLI::App& sub, const std::string& format) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* opt : sub.get_options()) {
    std::string key = base::lower(opt->get_single_name());
    if (local_only_option(key) || opt->count() == 0) continue;
    if (opt->get_type_size() == 0) {
      out.emplace_back(key, "true");
      continue;
    }
    for (const auto& v : opt->results()) out.emplace_back(key, v);
  }
  out.emplace_back("format", format);
  return out;
}

// Prints the route's answer as the command does: the body of a 200; else the
// command's output, its message and hint. Post: the exit code.
int print_answer(const char* name, const review::Response& res) {
  if (res.status == 200) {
    std::cout << res.body << std::flush;
    return kPass;
  }
  std::string message = res.body, hint, output;
  mllog::Json doc;
  std::string perr;
  if (mllog::parse_json_permissive(res.body, &doc, &perr)) {
    if (const auto* e = doc.find("error")) {
      if (const auto* m = e->find("message")) message = m->s;
      if (const auto* h = e->find("hint")) hint = h->s;
      if (const auto* o = e->find("output")) output = o->s;
    }
  } else if (res.status != 0) {
    message = "the server answered HTTP " + std::to_string(res.status) + ": " + res.body;
  }
  std::cout << output << std::flush;
  std::cerr << "referee " << name << ": " << message << "\n";
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  return kCannotCheck;
}

// Asks the server the question `sub` was given: its flags become the query
// parameters; the answer's body is printed as it is.
int ask_server(const char* name, const CLI::App& sub, const ClientOptions& client, const std::string& format) {
  review::Request r;
  r.method = "GET";
  r.path = std::string("/api/v1/query/") + name;
  r.query = query_params(sub, format);
  return print_answer(name, call_api(client, r));
}

// Answers the question on the local store as the user of `token`: what that
// user may see, exactly as a server with this store answers them (a round
// hidden from them reads as one the store does not hold).
int ask_as(const char* name, const CLI::App& sub, submissions::Store& store, const std::string& token,
           const std::string& format) {
  review::Api api(store.path());
  review::Request r;
  r.token = token;
  review::Actor who;
  review::Response refused;
  if (!api.authenticate(r, &who, &refused)) return print_answer(name, refused);
  submissions::RoundVisible visible = [&](const std::string& round) { return api.can_see_round(who, round); };
  return print_answer(name, server::answer_question(store, name, query_params(sub, format), visible));
}

// The handler of a question: with --server or $REFEREE_SERVER (and no
// --db) the question goes to that server; else it is answered on the local
// store. Either way the same bytes are printed.
std::function<int()> query_handler(const char* name, CLI::App& sub, std::shared_ptr<Flags> flags) {
  auto client = std::make_shared<ClientOptions>();
  add_client_options(sub, client.get(), false);
  CLI::App* subp = &sub;
  return [name, subp, flags, client]() -> int {
    bool explicit_db = subp->count("--db") > 0 && subp->count("--server") == 0;
    if (!explicit_db) resolve_client_options(client.get());
    const std::string format = flags->json ? "json" : flags->csv ? "csv" : "text";
    if (!client->server.empty()) return ask_server(name, *subp, *client, format);
    auto store = open_store(name, flags->db, nullptr, submissions::OpenMode::ReadOnly);
    if (!store) return kCannotCheck;
    // A token names who asks: the answer is theirs, with the embargo applied.
    if (!client->token.empty()) return ask_as(name, *subp, *store, client->token, format);
    submissions::Answer a = submissions::answer(*store, question_of(*flags));
    std::cout << a.out << std::flush;
    if (a.ok) return kPass;
    std::cerr << "referee " << name << ": " << a.error << "\n";
    return kCannotCheck;
  };
}

}  // namespace

Command compare_command() {
  return {"compare", "Results of one benchmark and round side by side", [](CLI::App& sub) -> std::function<int()> {
            auto c = question_flags(sub, QuestionKind::Compare, true);
            sub.add_option("RESULT", c->q.results, "ORG/SYSTEM or SYSTEM, two or more, each named once")->required()->expected(2, 1000);
            return query_handler("compare", sub, c);
          }};
}

Command leaderboard_command() {
  return {"leaderboard", "A round's results for a benchmark, fastest first", [](CLI::App& sub) -> std::function<int()> {
            auto c = question_flags(sub, QuestionKind::Leaderboard, true);
            sub.add_option("--division", c->q.division, "closed or open (default: both)")
                ->transform(CLI::IsMember({"closed", "open"}, CLI::ignore_case));
            return query_handler("leaderboard", sub, c);
          }};
}

Command scaling_command() {
  return {"scaling", "One submitter's results of a benchmark at several sizes, one series per accelerator type",
          [](CLI::App& sub) -> std::function<int()> {
            auto c = question_flags(sub, QuestionKind::Scaling, false);
            sub.add_option("--submitter", c->q.submitter, "submitter (system description) or organisation folder, any case")->required();
            return query_handler("scaling", sub, c);
          }};
}

Command speedup_command() {
  return {"speedup", "Round-over-round speedup of a benchmark", [](CLI::App& sub) -> std::function<int()> {
            auto c = question_flags(sub, QuestionKind::Speedup, true, false, false);
            auto* f_opt = sub.add_option("--from", c->q.from, "earlier round, e.g. training-3.0.0 or 3.0.0");
            auto* t_opt = sub.add_option("--to", c->q.to, "later round, e.g. training-3.1.0 or 3.1.0");
            sub.add_flag("--all-rounds", c->q.all_rounds,
                         "every round of the store: each round and the next that has the benchmark, and the first to the last "
                         "(without --benchmark: every benchmark)")
                ->excludes(f_opt)
                ->excludes(t_opt);
            auto* s_opt = sub.add_option("--submitter", c->q.submitter, "only this submitter (any case)");
            sub.add_flag("--overall", c->q.overall, "fastest results of each round, whoever submitted them")->excludes(s_opt);
            // Without --all-rounds the pair and the benchmark are needed: a usage
            // error (exit 2; on a server, a 400) before anything is asked.
            sub.parse_complete_callback([c]() {
              std::string error;
              if (!submissions::check_question(c->q, &error)) throw CLI::ValidationError(error);
            });
            return query_handler("speedup", sub, c);
          }};
}

Command list_command() {
  return {"list", "What the store holds: rounds, benchmarks, systems or submitters", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Flags>();
            c->q.kind = QuestionKind::List;
            sub.add_option("WHAT", c->q.what, "rounds, benchmarks, systems or submitters")
                ->required()
                ->transform(CLI::IsMember({"rounds", "benchmarks", "systems", "submitters"}, CLI::ignore_case));
            sub.add_option("--round", c->q.round, "only this round: training-3.1.0, training_3.1.0 or 3.1.0");
            add_db_option(sub, &c->db);
            add_formats(sub, &c->json, &c->csv);
            return query_handler("list", sub, c);
          }};
}

}  // namespace referee::cli
