// compare, speedup, scaling, leaderboard, list: questions the store answers.
// They open the store read-only and never create it.
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/table.h"
#include "mllog/json_writer.h"
#include "submissions/queries.h"
#include "submissions/store.h"

namespace referee::cli {

namespace {

struct Common {
  std::string db, round, benchmark, division;
  bool json = false, pipeline = false;
};

void add_db_option(CLI::App& sub, std::string* db) {
  sub.add_option("--db", *db, "database file (default $REFEREE_DB or the user's data directory); opened read-only");
}

void add_common(CLI::App& sub, Common* c, bool needs_round) {
  add_db_option(sub, &c->db);
  if (needs_round) sub.add_option("--round", c->round, "round: training-3.1.0, training_3.1.0 or 3.1.0")->required();
  sub.add_option("--benchmark", c->benchmark, "benchmark, e.g. gpt3 (any case)")->required();
  sub.add_flag("--json", c->json, "print JSON");
  sub.add_flag("--rescale", c->pipeline, "use the scores the consortium's pipeline computes today instead of the published ones");
}

std::unique_ptr<submissions::Store> open_for_question(const char* cmd, const std::string& db) {
  return open_store(cmd, db, nullptr, submissions::OpenMode::ReadOnly);
}

void row_json(mllog::JsonWriter& w, const submissions::ResultRow& r) {
  w.begin_object();
  w.key("round").value(r.round).key("organisation").value(r.organisation).key("submitter").value(r.submitter);
  w.key("system").value(r.system).key("benchmark").value(r.benchmark).key("division").value(r.division);
  w.key("availability").value(r.availability).key("accelerator").value(r.accelerator);
  w.key("accelerator_type").value(r.accelerator_type);
  w.key("accelerators").value(r.accelerators).key("nodes").value(r.nodes);
  if (r.has_score) w.key("score_minutes").value(r.score); else w.key("score_minutes").null();
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

}  // namespace

Command compare_command() {
  return {"compare", "Results of one benchmark and round side by side", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto names = std::make_shared<std::vector<std::string>>();
            add_common(sub, c.get(), true);
            sub.add_option("RESULT", *names, "ORG/SYSTEM or SYSTEM, two or more, each named once")->required()->expected(2, 1000);
            return [c, names]() -> int {
              auto store = open_for_question("compare", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              auto rows = submissions::find_results(*store, {c->round, c->benchmark, "", c->pipeline}, *names, &error);
              if (rows.empty()) {
                std::cerr << "referee compare: " << error << "\n";
                return kCannotCheck;
              }
              const auto& base = rows.front();
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.compare/1").key("round").value(base.round);
                w.key("benchmark").value(base.benchmark).key("results").begin_array();
                for (const auto& r : rows) row_json(w, r);
                w.end_array().key("relative_to_first").begin_array();
                for (const auto& r : rows) {
                  if (r.has_score && base.has_score) w.value(r.score / base.score - 1); else w.null();
                }
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              bool status = any_status(rows, [](const auto& r) -> const submissions::ResultRow& { return r; });
              Table t(with_status({"result", "accelerators", "score (min)", "vs first", "checks", kRunsHeader}, status));
              for (const auto& r : rows) {
                std::string rel = r.has_score && base.has_score ? (r.score >= base.score ? "+" : "") + percent(r.score / base.score - 1, 2) : "-";
                std::vector<std::string> row = {r.organisation + "/" + r.system, size_cell(r), reviewed_score_cell(r), &r == &base ? "" : rel,
                       std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : ""), runs_cell(r)};
                if (status) row.push_back(status_cell(r));
                t.add(row);
              }
              std::cout << base.benchmark << ", " << base.round << (c->pipeline ? " (pipeline scores)" : "") << "\n";
              t.print(std::cout);
              return kPass;
            };
          }};
}

Command leaderboard_command() {
  return {"leaderboard", "A round's results for a benchmark, fastest first", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            add_common(sub, c.get(), true);
            sub.add_option("--division", c->division, "closed or open (default: both)")
                ->transform(CLI::IsMember({"closed", "open"}, CLI::ignore_case));
            return [c]() -> int {
              auto store = open_for_question("leaderboard", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              std::vector<std::string> left_out;
              auto rows = submissions::leaderboard(*store, {c->round, c->benchmark, c->division, c->pipeline}, &error, &left_out);
              if (rows.empty()) {
                std::cerr << "referee leaderboard: " << (error.empty() ? "no scored results" : error) << "\n";
                return kCannotCheck;
              }
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.leaderboard/1").key("round").value(rows.front().round);
                w.key("benchmark").value(rows.front().benchmark).key("results").begin_array();
                for (const auto& r : rows) row_json(w, r);
                w.end_array().key("left_out").begin_array();
                for (const auto& n : left_out) w.value(n);
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              bool status = any_status(rows, [](const auto& r) -> const submissions::ResultRow& { return r; });
              Table t(with_status({"#", "submitter", "system", "division", "availability", "accelerators", "score (min)", "checks"}, status));
              int rank = 0;
              for (const auto& r : rows) {
                std::vector<std::string> row = {std::to_string(++rank), r.submitter, r.system, r.division, r.availability, size_cell(r),
                                                reviewed_score_cell(r), std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : "")};
                if (status) row.push_back(status_cell(r));
                t.add(row);
              }
              std::cout << rows.front().benchmark << ", " << rows.front().round << "\n";
              t.print(std::cout);
              for (const auto& n : left_out) std::cout << "left out: " << n << "\n";
              return kPass;
            };
          }};
}

Command scaling_command() {
  return {"scaling", "One submitter's results of a benchmark at several sizes, one series per accelerator type",
          [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto who = std::make_shared<std::string>();
            add_common(sub, c.get(), true);
            sub.add_option("--submitter", *who, "submitter (system description) or organisation folder, any case")->required();
            return [c, who]() -> int {
              auto store = open_for_question("scaling", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              std::vector<std::string> left_out;
              auto series = submissions::scaling(*store, {c->round, c->benchmark, "", c->pipeline}, *who, &error, &left_out);
              if (series.empty()) {
                std::cerr << "referee scaling: " << error << "\n";
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
                    w.key("speedup").value(p.speedup).key("size_ratio").value(p.size_ratio).key("efficiency").value(p.efficiency).end_object();
                  }
                  w.end_array().end_object();
                }
                w.end_array().key("left_out").begin_array();
                for (const auto& n : left_out) w.value(n);
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              std::cout << *who << ", " << first.benchmark << ", " << first.round
                        << " (one series per accelerator type, relative to its smallest)\n";
              bool status = false;
              for (const auto& s : series) status = status || any_status(s.points, [](const auto& p) -> const submissions::ResultRow& { return p.result; });
              Table t(with_status({"accelerator", "system", "accelerators", "score (min)", "speedup", "size ratio", "efficiency"}, status));
              for (const auto& s : series)
                for (const auto& p : s.points) {
                  std::vector<std::string> row = {s.accelerator_type, p.result.system, std::to_string(p.result.accelerators),
                                                  reviewed_score_cell(p.result), fixed(p.speedup, 3) + "x",
                                                  fixed(p.size_ratio, 3) + "x", percent(p.efficiency, 1)};
                  if (status) row.push_back(status_cell(p.result));
                  t.add(row);
                }
              t.print(std::cout);
              for (const auto& n : left_out) std::cout << "left out: " << n << "\n";
              return kPass;
            };
          }};
}

Command speedup_command() {
  return {"speedup", "Round-over-round speedup of a benchmark", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto from = std::make_shared<std::string>();
            auto to = std::make_shared<std::string>();
            auto who = std::make_shared<std::string>();
            auto overall = std::make_shared<bool>(false);
            add_common(sub, c.get(), false);
            sub.add_option("--from", *from, "earlier round, e.g. training-3.0.0 or 3.0.0")->required();
            sub.add_option("--to", *to, "later round, e.g. training-3.1.0 or 3.1.0")->required();
            auto* s_opt = sub.add_option("--submitter", *who, "only this submitter (any case)");
            sub.add_flag("--overall", *overall, "fastest results of each round, whoever submitted them")->excludes(s_opt);
            return [c, from, to, who, overall]() -> int {
              auto store = open_for_question("speedup", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              submissions::SpeedupQuery q{*from, *to, c->benchmark, !*overall, *who, c->pipeline};
              submissions::SpeedupReport rep;
              if (!submissions::speedups(*store, q, &rep, &error)) {
                std::cerr << "referee speedup: " << error << "\n";
                return kCannotCheck;
              }
              int comparable = 0;
              for (const auto& s : rep.pairs) comparable += s.comparable;
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.speedup/2").key("benchmark").value(rep.benchmark);
                w.key("from").value(rep.from_round).key("to").value(rep.to_round);
                w.key("headline_scale_rule").value(submissions::kHeadlineScaleRule).key("speedups").begin_array();
                for (const auto& s : rep.pairs) {
                  w.begin_object().key("submitter").value(s.submitter).key("kind").value(s.kind);
                  w.key("comparable").value(s.comparable);
                  if (!s.comparable) w.key("reason").value(s.reason);
                  w.key("from");
                  row_json(w, s.from);
                  w.key("to");
                  row_json(w, s.to);
                  if (s.comparable) w.key("speedup").value(s.speedup); else w.key("speedup").null();
                  w.key("accelerator_ratio").value(s.accelerator_ratio);
                  if (s.comparable && s.has_efficiency) w.key("scaling_efficiency").value(s.efficiency);
                  else w.key("scaling_efficiency").null();
                  w.end_object();
                }
                w.end_array().key("left_out").begin_array();
                for (const auto& n : rep.left_out) w.value(n);
                w.end_array().key("notes").begin_array();
                for (const auto& n : rep.notes) w.value(n);
                w.end_array().end_object();
                std::cout << w.str() << "\n";
              } else {
                std::cout << rep.benchmark << ": fastest closed-division results " << (*overall ? "overall" : "per submitter")
                          << ", " << rep.from_round << " -> " << rep.to_round << "\n";
                Table t({"kind", "submitter", rep.from_round, "min", rep.to_round, "min", "speedup", "accelerators",
                         "efficiency"});
                for (const auto& s : rep.pairs) {
                  auto cell = [](const submissions::ResultRow& r) {
                    std::string st = submissions::review_status_text(r);
                    return r.system + " (" + std::to_string(r.accelerators) + " x " + r.accelerator_type + ")" +
                           (st.empty() ? "" : " [" + st + "]");
                  };
                  t.add({s.kind, s.submitter, cell(s.from), fixed(s.from.score, 3), cell(s.to), fixed(s.to.score, 3),
                         s.comparable ? fixed(s.speedup, 2) + "x" : "not comparable", fixed(s.accelerator_ratio, 2) + "x",
                         s.comparable && s.has_efficiency && s.kind == "headline" ? percent(s.efficiency, 1) : "-"});
                }
                if (!rep.pairs.empty()) t.print(std::cout);
                std::cout << "scale rule: same-scale rows pair results of equal accelerator type and count; "
                          << submissions::kHeadlineScaleRule << "\n";
                for (const auto& s : rep.pairs)
                  if (!s.comparable)
                    std::cout << "not comparable: " << s.submitter << " " << s.kind << ": " << s.reason << "\n";
                for (const auto& n : rep.left_out) std::cout << "left out: " << n << "\n";
                for (const auto& n : rep.notes) std::cout << "note: " << n << "\n";
              }
              if (comparable == 0) {
                std::cerr << "referee speedup: no comparable pair of closed-division " << rep.benchmark << " results in "
                          << rep.from_round << " and " << rep.to_round << (who->empty() ? "" : " for " + *who)
                          << (rep.pairs.empty() && rep.notes.empty() && rep.left_out.empty() ? " (no scored results)" : "")
                          << "\n";
                return kCannotCheck;
              }
              return kPass;
            };
          }};
}

Command list_command() {
  return {"list", "What the store holds: rounds, benchmarks, systems or submitters", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string what, db, round;
              bool json = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("WHAT", o->what, "rounds, benchmarks, systems or submitters")
                ->required()
                ->transform(CLI::IsMember({"rounds", "benchmarks", "systems", "submitters"}, CLI::ignore_case));
            sub.add_option("--round", o->round, "only this round: training-3.1.0, training_3.1.0 or 3.1.0");
            add_db_option(sub, &o->db);
            sub.add_flag("--json", o->json, "print JSON");
            return [o]() -> int {
              auto store = open_for_question("list", o->db);
              if (!store) return kCannotCheck;
              std::string error;
              submissions::Listing l;
              if (!submissions::list_store(*store, o->what, o->round, &l, &error)) {
                std::cerr << "referee list: " << error << "\n";
                return kCannotCheck;
              }
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
                std::cout << w.str() << "\n";
                return kPass;
              }
              if (l.rows.empty()) {
                std::cout << "the store " << store->path() << " holds no " << o->what << (o->round.empty() ? "" : " in " + o->round)
                          << "\n";
                return kPass;
              }
              Table t(l.columns);
              for (auto& row : l.rows) t.add(row);
              t.print(std::cout);
              return kPass;
            };
          }};
}

}  // namespace referee::cli
