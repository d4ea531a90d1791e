// compare, speedup, scaling, leaderboard, list: questions the store answers.
// They open the store read-only and never create it.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "base/text.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/queries.h"
#include "cli/table.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "submissions/cost.h"
#include "submissions/csv.h"
#include "submissions/queries.h"
#include "submissions/store.h"

namespace referee::cli {

namespace {

struct Common {
  std::string db, round, benchmark, division;
  bool json = false, csv = false, pipeline = false;
  std::string price_accelerator_hour, price_node_month;  // as typed; validated when parsed
};

using submissions::Csv;
using submissions::Price;

// --json and --csv: one of them, or the table.
void add_formats(CLI::App& sub, bool* json, bool* csv) {
  auto* j = sub.add_flag("--json", *json, "print JSON");
  auto* c = sub.add_flag("--csv", *csv, "print CSV (RFC 4180, a header row, numbers in full precision)");
  c->excludes(j);
  j->excludes(c);
}

// --price-per-accelerator-hour X | --price-per-node-month X: the cost of one
// training run in an added column.
void add_price(CLI::App& sub, Common* c) {
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

Price price_of(const Common& c) {
  Price p;
  std::string ignored;  // validated when the options were parsed
  if (!c.price_accelerator_hour.empty()) submissions::parse_price(c.price_accelerator_hour, Price::Per::AcceleratorHour, &p, &ignored);
  if (!c.price_node_month.empty()) submissions::parse_price(c.price_node_month, Price::Per::NodeMonth, &p, &ignored);
  return p;
}

bool priced(const Price& p) { return p.per != Price::Per::None; }

void add_db_option(CLI::App& sub, std::string* db) {
  sub.add_option("--db", *db, "database file (default $REFEREE_DB or the user's data directory); opened read-only");
}

void add_common(CLI::App& sub, Common* c, bool needs_round, bool needs_benchmark = true) {
  add_db_option(sub, &c->db);
  if (needs_round) sub.add_option("--round", c->round, "round: training-3.1.0, training_3.1.0 or 3.1.0")->required();
  auto* b = sub.add_option("--benchmark", c->benchmark, "benchmark, e.g. gpt3 (any case)");
  if (needs_benchmark) b->required();
  add_formats(sub, &c->json, &c->csv);
  sub.add_flag("--rescale", c->pipeline, "use the scores the consortium's pipeline computes today instead of the published ones");
}

std::unique_ptr<submissions::Store> open_for_question(const char* cmd, const std::string& db) {
  return open_store(cmd, db, nullptr, submissions::OpenMode::ReadOnly);
}

// The top level's price fields, when a price was given.
void price_json(mllog::JsonWriter& w, const Price& p) {
  if (!priced(p)) return;
  w.key("price").value(p.amount).key("price_unit").value(submissions::price_unit(p));
}

void row_json(mllog::JsonWriter& w, const submissions::ResultRow& r, const Price& price = {}) {
  w.begin_object();
  w.key("round").value(r.round).key("organisation").value(r.organisation).key("submitter").value(r.submitter);
  w.key("system").value(r.system).key("benchmark").value(r.benchmark).key("division").value(r.division);
  w.key("availability").value(r.availability).key("accelerator").value(r.accelerator);
  w.key("accelerator_type").value(r.accelerator_type);
  w.key("accelerators").value(r.accelerators).key("nodes").value(r.nodes);
  if (r.has_score) w.key("score_minutes").value(r.score); else w.key("score_minutes").null();
  double hours = 0, cost = 0;
  if (submissions::accelerator_hours(r, &hours)) w.key("accelerator_hours").value(hours); else w.key("accelerator_hours").null();
  if (priced(price)) {
    if (submissions::run_cost(r, price, &cost)) w.key("cost").value(cost); else w.key("cost").null();
  }
  w.key("checks_pass").value(r.pass).key("rcp_status").value(r.rcp_status).key("resubmission").value(r.resubmission);
  w.key("review_status");
  if (r.review_status.empty()) {
    w.null();
  } else {
    w.begin_object().key("status").value(r.review_status);
    if (r.has_review_factor) w.key("factor").value(r.review_factor); else w.key("factor").null();
    if (r.objection_id) w.key("objection_id").value(r.objection_id); else w.key("objection_id").null();
    if (r.decision_id) w.key("decision_id").value(r.decision_id); else w.key("decision_id").null();
    w.key("submitted_division").value(r.submitted_division);
    if (r.has_published_score) w.key("published_score_minutes").value(r.published_score);
    w.end_object();
  }
  w.key("runs").begin_array();
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    w.begin_object().key("file").value(r.run_files[i]);
    if (r.run_minutes[i] >= 0) w.key("minutes").value(r.run_minutes[i]); else w.key("minutes").null();
    w.key("counted").value(static_cast<bool>(r.run_counted[i]));
    if (r.run_dropped[i].empty()) w.key("dropped").null(); else w.key("dropped").value(r.run_dropped[i]);
    w.end_object();
  }
  w.end_array().end_object();
}

std::string score_cell(const submissions::ResultRow& r) { return r.has_score ? fixed(r.score, 4) : "-"; }

const char* kRunsHeader = "runs (min; * olympic drop, ! non-compliant)";

std::string runs_cell(const submissions::ResultRow& r) {
  std::string out;
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    if (!out.empty()) out += " ";
    out += r.run_minutes[i] >= 0 ? fixed(r.run_minutes[i], 3) : "-";
    if (r.run_dropped[i] == "olympic") out += "*";
    else if (r.run_dropped[i] == "noncompliant") out += "!";
  }
  return out;
}

std::string size_cell(const submissions::ResultRow& r) { return std::to_string(r.accelerators) + " x " + r.accelerator; }

// The review's status column: shown only when some row has a status, so
// that a store without a review answers as before.
const char* kReviewHeader = "review status";

template <typename Rows, typename Get>
bool any_status(const Rows& rows, Get get) {
  for (const auto& x : rows)
    if (!get(x).review_status.empty()) return true;
  return false;
}

std::string status_cell(const submissions::ResultRow& r) {
  std::string s = submissions::review_status_text(r);
  return s.empty() ? "-" : s;
}

// A score cell that says when the committee's factor made it.
std::string reviewed_score_cell(const submissions::ResultRow& r) {
  return score_cell(r) + (r.review_status == "normalised" ? " (normalised)" : "");
}

std::vector<std::string> with_status(std::vector<std::string> cols, bool show) {
  if (show) cols.push_back(kReviewHeader);
  return cols;
}

// ---------------------------------------------------------------- cost of speed

std::string hours_cell(const submissions::ResultRow& r) {
  double h = 0;
  return submissions::accelerator_hours(r, &h) ? fixed(h, 1) : "-";
}

std::string cost_cell(const submissions::ResultRow& r, const Price& p) {
  double c = 0;
  return submissions::run_cost(r, p, &c) ? fixed(c, 2) : "-";
}

// The line under a table with a cost column.
std::string price_line(const Price& p) {
  std::string s = "cost: one training run (the score's time) at " + submissions::csv_number(p.amount) + " " +
                  submissions::price_unit(p);
  if (p.per == Price::Per::NodeMonth)
    s += " (nodes x hours x price / 730 hours a month; a node is the system's accelerators per node)";
  else
    s += " (accelerators x hours x price)";
  return s;
}

// How much more (or less) accelerator time the later result used: to / from - 1.
bool hours_change(const submissions::ResultRow& from, const submissions::ResultRow& to, double* change) {
  double a = 0, b = 0;
  if (!submissions::accelerator_hours(from, &a) || !submissions::accelerator_hours(to, &b) || a <= 0) return false;
  *change = b / a - 1;
  return true;
}

std::string signed_percent(double x, int digits) { return (x >= 0 ? "+" : "") + percent(x, digits); }

// ---------------------------------------------------------------- CSV
// The columns of one result, each name prefixed with `p` ("from_", "to_").
void csv_result_header(Csv& c, const std::string& p, const Price& price) {
  for (const char* col : {"round", "organisation", "system", "submitter", "division", "availability", "accelerator",
                          "accelerator_type", "accelerators", "nodes", "score_minutes", "accelerator_hours"})
    c.text(p + col);
  if (priced(price)) c.text(p + "cost");
  for (const char* col : {"checks_pass", "resubmission", "review_status"}) c.text(p + col);
}

void csv_result_cells(Csv& c, const submissions::ResultRow& r, const Price& price) {
  c.text(r.round).text(r.organisation).text(r.system).text(r.submitter).text(r.division).text(r.availability);
  c.text(r.accelerator).text(r.accelerator_type).integer(r.accelerators).integer(r.nodes);
  if (r.has_score) c.number(r.score); else c.empty();
  double h = 0, cost = 0;
  if (submissions::accelerator_hours(r, &h)) c.number(h); else c.empty();
  if (priced(price)) {
    if (submissions::run_cost(r, price, &cost)) c.number(cost); else c.empty();
  }
  c.boolean(r.pass).boolean(r.resubmission).text(submissions::review_status_text(r));
}

// Runs as compare's column shows them, each time in full precision.
std::string runs_csv(const submissions::ResultRow& r) {
  std::string out;
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    if (!out.empty()) out += " ";
    out += r.run_minutes[i] >= 0 ? submissions::csv_number(r.run_minutes[i]) : "-";
    if (r.run_dropped[i] == "olympic") out += "*";
    else if (r.run_dropped[i] == "noncompliant") out += "!";
  }
  return out;
}

// ---------------------------------------------------------------- local or remote

using QueryBody = std::function<int(submissions::Store&, std::ostream& out, std::ostream& err)>;

// Set while a server runs a question (run_query): the store and streams to use.
struct QueryTarget {
  submissions::Store* store;
  std::ostream* out;
  std::ostream* err;
  const std::function<bool(const std::string&)>* visible;
};
thread_local QueryTarget* t_target = nullptr;

// Options of a question that do not travel to a server.
bool local_only_option(const std::string& name) {
  return name == "help" || name == "db" || name == "server" || name == "token" || name == "cacert" ||
         name == "timeout" || name == "json" || name == "csv";
}

// Asks the server the question `sub` was given: its flags become the query
// parameters; the answer's body is printed as it is.
int ask_server(const char* name, const CLI::App& sub, const ClientOptions& client, const std::string& format) {
  review::Request r;
  r.method = "GET";
  r.path = std::string("/api/v1/query/") + name;
  for (const CLI::Option* opt : sub.get_options()) {
    std::string key = base::lower(opt->get_single_name());
    if (local_only_option(key) || opt->count() == 0) continue;
    if (opt->get_type_size() == 0) {
      r.query.emplace_back(key, "true");
      continue;
    }
    for (const auto& v : opt->results()) r.query.emplace_back(key, v);
  }
  r.query.emplace_back("format", format);
  review::Response res = call_api(client, r);
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

// The handler of a question: on a server (run_query) the body runs on the
// server's store; with --server or $REFEREE_SERVER (and no --db) the
// question goes to that server; else the body runs on the local store.
std::function<int()> query_handler(const char* name, CLI::App& sub, const std::string& db, QueryBody body) {
  auto client = std::make_shared<ClientOptions>();
  add_client_options(sub, client.get(), false);
  const std::string* dbp = &db;
  CLI::App* subp = &sub;
  return [name, subp, dbp, client, body]() -> int {
    if (t_target) return body(*t_target->store, *t_target->out, *t_target->err);
    bool explicit_db = subp->count("--db") > 0 && subp->count("--server") == 0;
    if (!explicit_db) resolve_client_options(client.get());
    if (!client->server.empty()) {
      auto* json = subp->get_option_no_throw("--json");
      auto* csv = subp->get_option_no_throw("--csv");
      std::string format = json && json->count() > 0 ? "json" : csv && csv->count() > 0 ? "csv" : "text";
      return ask_server(name, *subp, *client, format);
    }
    auto store = open_for_question(name, *dbp);
    if (!store) return kCannotCheck;
    return body(*store, std::cout, std::cerr);
  };
}

}  // namespace

Command compare_command() {
  return {"compare", "Results of one benchmark and round side by side", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto names = std::make_shared<std::vector<std::string>>();
            add_common(sub, c.get(), true);
            add_price(sub, c.get());
            sub.add_option("RESULT", *names, "ORG/SYSTEM or SYSTEM, two or more, each named once")->required()->expected(2, 1000);
            return query_handler("compare", sub, c->db, [c, names](submissions::Store& store, std::ostream& out, std::ostream& err) -> int {
              std::string error;
              auto rows = submissions::find_results(store, {c->round, c->benchmark, "", c->pipeline}, *names, &error);
              if (rows.empty()) {
                err << "referee compare: " << error << "\n";
                return kCannotCheck;
              }
              const Price price = price_of(*c);
              const auto& base = rows.front();
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.compare/1").key("round").value(base.round);
                w.key("benchmark").value(base.benchmark);
                price_json(w, price);
                w.key("results").begin_array();
                for (const auto& r : rows) row_json(w, r, price);
                w.end_array().key("relative_to_first").begin_array();
                for (const auto& r : rows) {
                  if (r.has_score && base.has_score) w.value(r.score / base.score - 1); else w.null();
                }
                w.end_array().end_object();
                out << w.str() << "\n";
                return kPass;
              }
              if (c->csv) {
                Csv csv;
                csv.text("benchmark");
                csv_result_header(csv, "", price);
                csv.text("relative_to_first").text("runs_minutes");
                if (priced(price)) csv.text("price_unit");
                csv.end_row();
                for (const auto& r : rows) {
                  csv.text(r.benchmark);
                  csv_result_cells(csv, r, price);
                  if (r.has_score && base.has_score) csv.number(r.score / base.score - 1); else csv.empty();
                  csv.text(runs_csv(r));
                  if (priced(price)) csv.text(submissions::price_unit(price));
                  csv.end_row();
                }
                out << csv.str();
                return kPass;
              }
              bool status = any_status(rows, [](const auto& r) -> const submissions::ResultRow& { return r; });
              std::vector<std::string> cols = {"result", "accelerators", "score (min)", "accelerator-hours"};
              if (priced(price)) cols.push_back("cost");
              for (const char* col : {"vs first", "checks", kRunsHeader}) cols.push_back(col);
              Table t(with_status(cols, status));
              for (const auto& r : rows) {
                std::string rel = r.has_score && base.has_score ? (r.score >= base.score ? "+" : "") + percent(r.score / base.score - 1, 2) : "-";
                std::vector<std::string> row = {r.organisation + "/" + r.system, size_cell(r), reviewed_score_cell(r), hours_cell(r)};
                if (priced(price)) row.push_back(cost_cell(r, price));
                for (auto cell : {&r == &base ? std::string() : rel,
                                  std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : ""), runs_cell(r)})
                  row.push_back(cell);
                if (status) row.push_back(status_cell(r));
                t.add(row);
              }
              out << base.benchmark << ", " << base.round << (c->pipeline ? " (pipeline scores)" : "") << "\n";
              t.print(out);
              if (priced(price)) out << price_line(price) << "\n";
              return kPass;
            });
          }};
}

Command leaderboard_command() {
  return {"leaderboard", "A round's results for a benchmark, fastest first", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            add_common(sub, c.get(), true);
            add_price(sub, c.get());
            sub.add_option("--division", c->division, "closed or open (default: both)")
                ->transform(CLI::IsMember({"closed", "open"}, CLI::ignore_case));
            return query_handler("leaderboard", sub, c->db, [c](submissions::Store& store, std::ostream& out, std::ostream& err) -> int {
              std::string error;
              std::vector<std::string> left_out;
              auto rows = submissions::leaderboard(store, {c->round, c->benchmark, c->division, c->pipeline}, &error, &left_out);
              if (rows.empty()) {
                err << "referee leaderboard: " << (error.empty() ? "no scored results" : error) << "\n";
                return kCannotCheck;
              }
              const Price price = price_of(*c);
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.leaderboard/1").key("round").value(rows.front().round);
                w.key("benchmark").value(rows.front().benchmark);
                price_json(w, price);
                w.key("results").begin_array();
                for (const auto& r : rows) row_json(w, r, price);
                w.end_array().key("left_out").begin_array();
                for (const auto& n : left_out) w.value(n);
                w.end_array().end_object();
                out << w.str() << "\n";
                return kPass;
              }
              if (c->csv) {
                Csv csv;
                csv.text("benchmark").text("rank");
                csv_result_header(csv, "", price);
                if (priced(price)) csv.text("price_unit");
                csv.end_row();
                long long rank = 0;
                for (const auto& r : rows) {
                  csv.text(r.benchmark).integer(++rank);
                  csv_result_cells(csv, r, price);
                  if (priced(price)) csv.text(submissions::price_unit(price));
                  csv.end_row();
                }
                out << csv.str();
                return kPass;
              }
              bool status = any_status(rows, [](const auto& r) -> const submissions::ResultRow& { return r; });
              std::vector<std::string> cols = {"#", "submitter", "system", "division", "availability", "accelerators", "score (min)",
                                               "accelerator-hours"};
              if (priced(price)) cols.push_back("cost");
              cols.push_back("checks");
              Table t(with_status(cols, status));
              int rank = 0;
              for (const auto& r : rows) {
                std::vector<std::string> row = {std::to_string(++rank), r.submitter, r.system, r.division, r.availability, size_cell(r),
                                                reviewed_score_cell(r), hours_cell(r)};
                if (priced(price)) row.push_back(cost_cell(r, price));
                row.push_back(std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : ""));
                if (status) row.push_back(status_cell(r));
                t.add(row);
              }
              out << rows.front().benchmark << ", " << rows.front().round << "\n";
              t.print(out);
              if (priced(price)) out << price_line(price) << "\n";
              for (const auto& n : left_out) out << "left out: " << n << "\n";
              return kPass;
            });
          }};
}

Command scaling_command() {
  return {"scaling", "One submitter's results of a benchmark at several sizes, one series per accelerator type",
          [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto who = std::make_shared<std::string>();
            add_common(sub, c.get(), true);
            sub.add_option("--submitter", *who, "submitter (system description) or organisation folder, any case")->required();
            return query_handler("scaling", sub, c->db, [c, who](submissions::Store& store, std::ostream& out, std::ostream& err) -> int {
              std::string error;
              std::vector<std::string> left_out;
              auto series = submissions::scaling(store, {c->round, c->benchmark, "", c->pipeline}, *who, &error, &left_out);
              if (series.empty()) {
                err << "referee scaling: " << error << "\n";
                return kCannotCheck;
              }
              const auto& first = series.front().points.front().result;
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.scaling/2").key("round").value(first.round);
                w.key("benchmark").value(first.benchmark).key("submitter").value(*who).key("series").begin_array();
                for (const auto& s : series) {
                  w.begin_object().key("accelerator_type").value(s.accelerator_type).key("points").begin_array();
                  for (const auto& p : s.points) {
                    w.begin_object().key("result");
                    row_json(w, p.result);
                    w.key("speedup").value(p.speedup).key("size_ratio").value(p.size_ratio).key("efficiency");
                    if (p.has_efficiency) w.value(p.efficiency); else w.null();
                    w.end_object();
                  }
                  w.end_array().end_object();
                }
                w.end_array().key("left_out").begin_array();
                for (const auto& n : left_out) w.value(n);
                w.end_array().end_object();
                out << w.str() << "\n";
                return kPass;
              }
              if (c->csv) {
                Csv csv;
                csv.text("benchmark").text("series");
                csv_result_header(csv, "", Price{});
                csv.text("speedup").text("size_ratio").text("efficiency").end_row();
                for (const auto& s : series)
                  for (const auto& p : s.points) {
                    csv.text(p.result.benchmark).text(s.accelerator_type);
                    csv_result_cells(csv, p.result, Price{});
                    csv.number(p.speedup).number(p.size_ratio);
                    if (p.has_efficiency) csv.number(p.efficiency); else csv.empty();
                    csv.end_row();
                  }
                out << csv.str();
                return kPass;
              }
              out << *who << ", " << first.benchmark << ", " << first.round
                        << " (one series per accelerator type, relative to its smallest)\n";
              bool status = false;
              for (const auto& s : series) status = status || any_status(s.points, [](const auto& p) -> const submissions::ResultRow& { return p.result; });
              Table t(with_status({"accelerator", "system", "accelerators", "score (min)", "speedup", "size ratio", "efficiency"}, status));
              for (const auto& s : series)
                for (const auto& p : s.points) {
                  std::vector<std::string> row = {s.accelerator_type, p.result.system, std::to_string(p.result.accelerators),
                                                  reviewed_score_cell(p.result), fixed(p.speedup, 3) + "x",
                                                  fixed(p.size_ratio, 3) + "x", p.has_efficiency ? percent(p.efficiency, 1) : "-"};
                  if (status) row.push_back(status_cell(p.result));
                  t.add(row);
                }
              t.print(out);
              for (const auto& n : left_out) out << "left out: " << n << "\n";
              return kPass;
            });
          }};
}

// ---------------------------------------------------------------- speedup

void pair_json(mllog::JsonWriter& w, const submissions::Speedup& s, const Price& price) {
  w.begin_object().key("submitter").value(s.submitter).key("kind").value(s.kind);
  w.key("comparable").value(s.comparable);
  if (!s.comparable) w.key("reason").value(s.reason);
  w.key("from");
  row_json(w, s.from, price);
  w.key("to");
  row_json(w, s.to, price);
  if (s.comparable) w.key("speedup").value(s.speedup); else w.key("speedup").null();
  w.key("accelerator_ratio").value(s.accelerator_ratio);
  if (s.comparable && s.has_efficiency) w.key("scaling_efficiency").value(s.efficiency);
  else w.key("scaling_efficiency").null();
  double change = 0;
  if (hours_change(s.from, s.to, &change)) w.key("accelerator_hours_change").value(change);
  else w.key("accelerator_hours_change").null();
  w.end_object();
}

void speedup_csv_header(Csv& csv, const Price& price) {
  csv.text("benchmark").text("chain_step").text("group").text("kind");
  csv.text("comparable").text("reason");
  csv_result_header(csv, "from_", price);
  csv_result_header(csv, "to_", price);
  csv.text("speedup").text("accelerator_ratio").text("scaling_efficiency").text("accelerator_hours_change");
  if (priced(price)) csv.text("price_unit");
  csv.end_row();
}

void speedup_csv_rows(Csv& csv, const submissions::SpeedupReport& rep, const std::string& step, const Price& price) {
  for (const auto& s : rep.pairs) {
    csv.text(rep.benchmark).text(step).text(s.submitter).text(s.kind);
    csv.boolean(s.comparable).text(s.comparable ? "" : s.reason);
    csv_result_cells(csv, s.from, price);
    csv_result_cells(csv, s.to, price);
    if (s.comparable) csv.number(s.speedup); else csv.empty();
    csv.number(s.accelerator_ratio);
    if (s.comparable && s.has_efficiency) csv.number(s.efficiency); else csv.empty();
    double change = 0;
    if (hours_change(s.from, s.to, &change)) csv.number(change); else csv.empty();
    if (priced(price)) csv.text(submissions::price_unit(price));
    csv.end_row();
  }
}

// The table's rows for one pair of rounds; `rounds_column` adds a first
// column naming the pair (the chain's table).
void speedup_rows(Table& t, const submissions::SpeedupReport& rep, const Price& price, bool rounds_column) {
  for (const auto& s : rep.pairs) {
    auto cell = [](const submissions::ResultRow& r) {
      std::string st = submissions::review_status_text(r);
      return r.system + " (" + std::to_string(r.accelerators) + " x " + r.accelerator_type + ")" + (st.empty() ? "" : " [" + st + "]");
    };
    std::vector<std::string> row;
    if (rounds_column) row.push_back(rep.from_round + " -> " + rep.to_round);
    double change = 0;
    for (auto x : {s.kind, s.submitter, cell(s.from), fixed(s.from.score, 3), cell(s.to), fixed(s.to.score, 3),
                   s.comparable ? fixed(s.speedup, 2) + "x" : "not comparable", fixed(s.accelerator_ratio, 2) + "x",
                   s.comparable && s.has_efficiency ? percent(s.efficiency, 1) : "-",
                   hours_cell(s.from) + " -> " + hours_cell(s.to), hours_change(s.from, s.to, &change) ? signed_percent(change, 1) : "-"})
      row.push_back(x);
    if (priced(price)) row.push_back(cost_cell(s.from, price) + " -> " + cost_cell(s.to, price));
    t.add(row);
  }
}

std::vector<std::string> speedup_header(std::vector<std::string> lead, const Price& price) {
  for (const char* c : {"speedup", "accelerators", "efficiency", "accelerator-hours", "change"}) lead.push_back(c);
  if (priced(price)) lead.push_back("cost");
  return lead;
}

void speedup_lines(std::ostream& out, const submissions::SpeedupReport& rep, const std::string& prefix) {
  for (const auto& s : rep.pairs)
    if (!s.comparable) out << "not comparable" << prefix << ": " << s.submitter << " " << s.kind << ": " << s.reason << "\n";
  for (const auto& n : rep.left_out) out << "left out" << prefix << ": " << n << "\n";
  for (const auto& n : rep.notes) out << "note" << prefix << ": " << n << "\n";
}

const char* kScaleRuleLine = "scale rule: same-scale rows pair results of equal accelerator type and count; ";

// speedup --all-rounds: one block (text), one object (JSON) per benchmark.
int print_chains(const Common& c, const submissions::SpeedupQuery& q, bool overall, submissions::Store& store,
                 std::ostream& out, std::ostream& err) {
  std::function<bool(const std::string&)> visible;
  if (t_target && t_target->visible && *t_target->visible) visible = *t_target->visible;
  std::vector<submissions::SpeedupChain> chains;
  std::string error;
  if (!submissions::speedup_chains(store, q, visible, &chains, &error)) {
    err << "referee speedup: " << error << "\n";
    return kCannotCheck;
  }
  const Price price = price_of(c);
  int comparable = 0;
  for (const auto& ch : chains)
    for (const auto& st : ch.steps)
      for (const auto& s : st.report.pairs) comparable += s.comparable;
  if (c.json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.speedup-chain/1").key("groups").value(overall ? "overall" : "per submitter");
    if (!q.submitter.empty()) w.key("submitter").value(q.submitter);
    price_json(w, price);
    w.key("headline_scale_rule").value(submissions::kHeadlineScaleRule).key("benchmarks").begin_array();
    for (const auto& ch : chains) {
      w.begin_object().key("benchmark").value(ch.benchmark).key("rounds").begin_array();
      for (const auto& r : ch.rounds) w.value(r);
      w.end_array().key("steps").begin_array();
      for (const auto& st : ch.steps) {
        w.begin_object().key("kind").value(st.kind).key("from").value(st.report.from_round).key("to").value(st.report.to_round);
        w.key("speedups").begin_array();
        for (const auto& s : st.report.pairs) pair_json(w, s, price);
        w.end_array().key("left_out").begin_array();
        for (const auto& n : st.report.left_out) w.value(n);
        w.end_array().key("notes").begin_array();
        for (const auto& n : st.report.notes) w.value(n);
        w.end_array().end_object();
      }
      w.end_array().key("notes").begin_array();
      for (const auto& n : ch.notes) w.value(n);
      w.end_array().end_object();
    }
    w.end_array().end_object();
    out << w.str() << "\n";
  } else if (c.csv) {
    Csv csv;
    speedup_csv_header(csv, price);
    for (const auto& ch : chains)
      for (const auto& st : ch.steps) speedup_csv_rows(csv, st.report, st.kind, price);
    out << csv.str();
  } else {
    bool first = true;
    for (const auto& ch : chains) {
      if (!first) out << "\n";
      first = false;
      std::string rounds;
      for (const auto& r : ch.rounds) rounds += (rounds.empty() ? "" : ", ") + r;
      out << ch.benchmark << ": fastest closed-division results " << (overall ? "overall" : "per submitter")
          << ", round over round (" << rounds << ")\n";
      Table t(speedup_header({"rounds", "kind", "submitter", "from", "min", "to", "min"}, price));
      bool rows = false;
      for (const auto& st : ch.steps) {
        speedup_rows(t, st.report, price, true);
        rows = rows || !st.report.pairs.empty();
      }
      if (rows) t.print(out);
      for (const auto& st : ch.steps) speedup_lines(out, st.report, " (" + st.report.from_round + " -> " + st.report.to_round + ")");
      for (const auto& n : ch.notes) out << "note: " << n << "\n";
    }
    if (!chains.empty()) {
      out << "\n" << kScaleRuleLine << submissions::kHeadlineScaleRule << "\n";
      out << "rounds: each round and the next that has the benchmark, then the first to the last\n";
      if (priced(price)) out << price_line(price) << "\n";
    }
  }
  if (comparable == 0) {
    err << "referee speedup: no comparable pair of closed-division results in any two rounds"
        << (c.benchmark.empty() ? "" : " of " + c.benchmark) << (q.submitter.empty() ? "" : " for " + q.submitter) << "\n";
    return kCannotCheck;
  }
  return kPass;
}

Command speedup_command() {
  return {"speedup", "Round-over-round speedup of a benchmark", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto from = std::make_shared<std::string>();
            auto to = std::make_shared<std::string>();
            auto who = std::make_shared<std::string>();
            auto overall = std::make_shared<bool>(false);
            auto all = std::make_shared<bool>(false);
            add_common(sub, c.get(), false, false);
            add_price(sub, c.get());
            auto* f_opt = sub.add_option("--from", *from, "earlier round, e.g. training-3.0.0 or 3.0.0");
            auto* t_opt = sub.add_option("--to", *to, "later round, e.g. training-3.1.0 or 3.1.0");
            sub.add_flag("--all-rounds", *all,
                         "every round of the store: each round and the next that has the benchmark, and the first to the last "
                         "(without --benchmark: every benchmark)")
                ->excludes(f_opt)
                ->excludes(t_opt);
            auto* s_opt = sub.add_option("--submitter", *who, "only this submitter (any case)");
            sub.add_flag("--overall", *overall, "fastest results of each round, whoever submitted them")->excludes(s_opt);
            // Without --all-rounds the pair and the benchmark are needed: a usage
            // error (exit 2; on a server, a 400) before anything is asked.
            sub.parse_complete_callback([c, from, to, all]() {
              if (!*all && (from->empty() || to->empty() || c->benchmark.empty()))
                throw CLI::ValidationError("name the rounds and the benchmark (--from R1 --to R2 --benchmark B), or ask for "
                                           "--all-rounds [--benchmark B]");
            });
            return query_handler("speedup", sub, c->db, [c, from, to, who, overall, all](submissions::Store& store, std::ostream& out, std::ostream& err) -> int {
              std::string error;
              submissions::SpeedupQuery q{*from, *to, c->benchmark, !*overall, *who, c->pipeline};
              if (*all) return print_chains(*c, q, *overall, store, out, err);
              const Price price = price_of(*c);
              submissions::SpeedupReport rep;
              if (!submissions::speedups(store, q, &rep, &error)) {
                err << "referee speedup: " << error << "\n";
                return kCannotCheck;
              }
              int comparable = 0;
              for (const auto& s : rep.pairs) comparable += s.comparable;
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.speedup/2").key("benchmark").value(rep.benchmark);
                w.key("from").value(rep.from_round).key("to").value(rep.to_round);
                price_json(w, price);
                w.key("headline_scale_rule").value(submissions::kHeadlineScaleRule).key("speedups").begin_array();
                for (const auto& s : rep.pairs) pair_json(w, s, price);
                w.end_array().key("left_out").begin_array();
                for (const auto& n : rep.left_out) w.value(n);
                w.end_array().key("notes").begin_array();
                for (const auto& n : rep.notes) w.value(n);
                w.end_array().end_object();
                out << w.str() << "\n";
              } else if (c->csv) {
                Csv csv;
                speedup_csv_header(csv, price);
                speedup_csv_rows(csv, rep, "", price);
                out << csv.str();
              } else {
                out << rep.benchmark << ": fastest closed-division results " << (*overall ? "overall" : "per submitter")
                          << ", " << rep.from_round << " -> " << rep.to_round << "\n";
                Table t(speedup_header({"kind", "submitter", rep.from_round, "min", rep.to_round, "min"}, price));
                speedup_rows(t, rep, price, false);
                if (!rep.pairs.empty()) t.print(out);
                out << kScaleRuleLine << submissions::kHeadlineScaleRule << "\n";
                if (priced(price)) out << price_line(price) << "\n";
                speedup_lines(out, rep, "");
              }
              if (comparable == 0) {
                err << "referee speedup: no comparable pair of closed-division " << rep.benchmark << " results in "
                          << rep.from_round << " and " << rep.to_round << (who->empty() ? "" : " for " + *who)
                          << (rep.pairs.empty() && rep.notes.empty() && rep.left_out.empty() ? " (no scored results)" : "")
                          << "\n";
                return kCannotCheck;
              }
              return kPass;
            });
          }};
}

Command list_command() {
  return {"list", "What the store holds: rounds, benchmarks, systems or submitters", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string what, db, round;
              bool json = false, csv = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("WHAT", o->what, "rounds, benchmarks, systems or submitters")
                ->required()
                ->transform(CLI::IsMember({"rounds", "benchmarks", "systems", "submitters"}, CLI::ignore_case));
            sub.add_option("--round", o->round, "only this round: training-3.1.0, training_3.1.0 or 3.1.0");
            add_db_option(sub, &o->db);
            add_formats(sub, &o->json, &o->csv);
            return query_handler("list", sub, o->db, [o](submissions::Store& store, std::ostream& out, std::ostream& err) -> int {
              std::string error;
              submissions::Listing l;
              if (!submissions::list_store(store, o->what, o->round, &l, &error)) {
                err << "referee list: " << error << "\n";
                return kCannotCheck;
              }
              // On a server: rows of rounds under embargo for the caller are left out.
              if (t_target && t_target->visible && *t_target->visible && !l.columns.empty() && l.columns[0] == "round")
                l.rows.erase(std::remove_if(l.rows.begin(), l.rows.end(),
                                            [](const std::vector<std::string>& row) { return !(*t_target->visible)(row[0]); }),
                             l.rows.end());
              if (o->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.list/1").key("what").value(o->what);
                w.key(o->what.c_str()).begin_array();
                for (const auto& row : l.rows) {
                  w.begin_object();
                  for (size_t i = 0; i < l.columns.size(); ++i) {
                    const auto& col = l.columns[i];
                    bool count = col == "packages" || col == "results" || col == "runs" || col == "scored" ||
                                 col == "systems" || col == "accelerators";
                    if (count) w.key(col).value(std::atoll(row[i].c_str()));
                    else w.key(col).value(row[i]);
                  }
                  w.end_object();
                }
                w.end_array().end_object();
                out << w.str() << "\n";
                return kPass;
              }
              if (o->csv) {
                Csv csv;
                for (const auto& col : l.columns) csv.text(col);
                csv.end_row();
                for (const auto& row : l.rows) {
                  for (const auto& cell : row) csv.text(cell);
                  csv.end_row();
                }
                out << csv.str();
                return kPass;
              }
              if (l.rows.empty()) {
                out << "the store " << store.path() << " holds no " << o->what << (o->round.empty() ? "" : " in " + o->round)
                          << "\n";
                return kPass;
              }
              Table t(l.columns);
              for (auto& row : l.rows) t.add(row);
              t.print(out);
              return kPass;
            });
          }};
}

bool is_query(const std::string& name) {
  return name == "compare" || name == "leaderboard" || name == "scaling" || name == "speedup" || name == "list";
}

QueryAnswer run_query(const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
                      submissions::Store& store, const std::function<bool(const std::string&)>& visible) {
  QueryAnswer a;
  Command cmd = name == "compare" ? compare_command()
                : name == "leaderboard" ? leaderboard_command()
                : name == "scaling"     ? scaling_command()
                : name == "speedup"     ? speedup_command()
                                        : list_command();
  CLI::App app{"referee"};
  CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
  auto handler = cmd.setup(*sub);
  // The parameters as the command line a user would type.
  std::vector<std::string> args{cmd.name}, positionals;
  std::string known;
  for (const CLI::Option* opt : sub->get_options()) {
    std::string key = base::lower(opt->get_single_name());
    if (!local_only_option(key)) known += (known.empty() ? "" : ", ") + key;
  }
  for (const auto& [key, value] : params) {
    if (key == "format") {
      a.json = value == "json";
      a.csv = value == "csv";
      if (value != "text" && !a.json && !a.csv) {
        a.bad_request = true;
        a.err = "format=" + value + " is not offered; choose text, json or csv";
        return a;
      }
      continue;
    }
    const CLI::Option* opt = nullptr;
    if (!local_only_option(key))
      for (const CLI::Option* o : sub->get_options())
        if (base::lower(o->get_single_name()) == key) opt = o;
    if (!opt) {
      a.bad_request = true;
      a.err = "unknown parameter '" + key + "' for " + name + "; it takes: " + known + ", format";
      return a;
    }
    if (opt->get_positional()) {
      positionals.push_back(value);
    } else if (opt->get_type_size() == 0) {
      if (value == "true" || value == "1" || value.empty()) args.push_back("--" + key);
      else if (value != "false" && value != "0") {
        a.bad_request = true;
        a.err = "parameter '" + key + "' is true or false, not '" + value + "'";
        return a;
      }
    } else {
      args.push_back("--" + key + "=" + value);
    }
  }
  if (a.json) args.push_back("--json");
  if (a.csv) args.push_back("--csv");
  if (!positionals.empty()) {
    args.push_back("--");
    for (auto& p : positionals) args.push_back(p);
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the words last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    a.bad_request = true;
    a.err = e.what();
    return a;
  }
  std::ostringstream out, err;
  QueryTarget target{&store, &out, &err, &visible};
  t_target = &target;
  try {
    a.exit = handler();
  } catch (...) {
    t_target = nullptr;
    throw;
  }
  t_target = nullptr;
  a.out = out.str();
  a.err = err.str();
  return a;
}

}  // namespace referee::cli
