// compare, speedup, scaling, leaderboard: questions the store answers.
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

void add_common(CLI::App& sub, Common* c, bool needs_round) {
  sub.add_option("--db", c->db, "database file (default $REFEREE_DB or the user's data directory)");
  if (needs_round) sub.add_option("--round", c->round, "round, e.g. training-3.1.0")->required();
  sub.add_option("--benchmark", c->benchmark, "benchmark, e.g. gpt3")->required();
  sub.add_flag("--json", c->json, "print JSON");
  sub.add_flag("--rescale", c->pipeline, "use the scores the consortium's pipeline computes today instead of the published ones");
}

void row_json(mllog::JsonWriter& w, const submissions::ResultRow& r) {
  w.begin_object();
  w.key("round").value(r.round).key("organisation").value(r.organisation).key("submitter").value(r.submitter);
  w.key("system").value(r.system).key("benchmark").value(r.benchmark).key("division").value(r.division);
  w.key("availability").value(r.availability).key("accelerator").value(r.accelerator);
  w.key("accelerators").value(r.accelerators).key("nodes").value(r.nodes);
  if (r.has_score) w.key("score_minutes").value(r.score); else w.key("score_minutes").null();
  w.key("checks_pass").value(r.pass).key("rcp_status").value(r.rcp_status).key("resubmission").value(r.resubmission);
  w.key("runs").begin_array();
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    w.begin_object().key("file").value(r.run_files[i]);
    if (r.run_minutes[i] >= 0) w.key("minutes").value(r.run_minutes[i]); else w.key("minutes").null();
    w.key("counted").value(static_cast<bool>(r.run_counted[i])).end_object();
  }
  w.end_array().end_object();
}

std::string score_cell(const submissions::ResultRow& r) { return r.has_score ? fixed(r.score, 4) : "-"; }

std::string runs_cell(const submissions::ResultRow& r) {
  std::string out;
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    if (!out.empty()) out += " ";
    out += r.run_minutes[i] >= 0 ? fixed(r.run_minutes[i], 3) : "-";
    if (!r.run_counted[i]) out += "*";
  }
  return out;
}

}  // namespace

Command compare_command() {
  return {"compare", "Results of one benchmark and round side by side", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto names = std::make_shared<std::vector<std::string>>();
            add_common(sub, c.get(), true);
            sub.add_option("RESULT", *names, "ORG/SYSTEM or SYSTEM, two or more")->required()->expected(2, 1000);
            return [c, names]() -> int {
              auto store = open_store("compare", c->db);
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
                w.begin_object().key("schema").value("referee.compare/1").key("round").value(c->round);
                w.key("benchmark").value(c->benchmark).key("results").begin_array();
                for (const auto& r : rows) {
                  row_json(w, r);
                }
                w.end_array().key("relative_to_first").begin_array();
                for (const auto& r : rows) {
                  if (r.has_score && base.has_score) w.value(r.score / base.score - 1); else w.null();
                }
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              Table t({"result", "accelerators", "score (min)", "vs first", "checks", "runs (min; * not counted)"});
              for (const auto& r : rows) {
                std::string rel = r.has_score && base.has_score ? (r.score >= base.score ? "+" : "") + percent(r.score / base.score - 1, 2) : "-";
                t.add({r.organisation + "/" + r.system, std::to_string(r.accelerators) + " x " + r.accelerator, score_cell(r),
                       &r == &base ? "" : rel, std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : ""),
                       runs_cell(r)});
              }
              std::cout << c->benchmark << ", " << c->round << (c->pipeline ? " (pipeline scores)" : "") << "\n";
              t.print(std::cout);
              return kPass;
            };
          }};
}

Command leaderboard_command() {
  return {"leaderboard", "A round's results for a benchmark, fastest first", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            add_common(sub, c.get(), true);
            sub.add_option("--division", c->division, "closed or open (default: both)");
            return [c]() -> int {
              auto store = open_store("leaderboard", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              auto rows = submissions::leaderboard(*store, {c->round, c->benchmark, c->division, c->pipeline}, &error);
              if (rows.empty()) {
                std::cerr << "referee leaderboard: " << (error.empty() ? "no scored results" : error) << "\n";
                return kCannotCheck;
              }
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.leaderboard/1").key("round").value(c->round);
                w.key("benchmark").value(c->benchmark).key("results").begin_array();
                for (const auto& r : rows) row_json(w, r);
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              Table t({"#", "submitter", "system", "division", "availability", "accelerators", "score (min)", "checks"});
              int rank = 0;
              for (const auto& r : rows)
                t.add({std::to_string(++rank), r.submitter, r.system, r.division, r.availability,
                       std::to_string(r.accelerators) + " x " + r.accelerator, score_cell(r),
                       std::string(r.pass ? "pass" : "FAIL") + (r.resubmission ? " (resubmitted)" : "")});
              std::cout << c->benchmark << ", " << c->round << "\n";
              t.print(std::cout);
              return kPass;
            };
          }};
}

Command scaling_command() {
  return {"scaling", "One submitter's results of a benchmark at several sizes", [](CLI::App& sub) -> std::function<int()> {
            auto c = std::make_shared<Common>();
            auto who = std::make_shared<std::string>();
            add_common(sub, c.get(), true);
            sub.add_option("--submitter", *who, "submitter (system description) or organisation folder")->required();
            return [c, who]() -> int {
              auto store = open_store("scaling", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              auto pts = submissions::scaling(*store, {c->round, c->benchmark, "", c->pipeline}, *who, &error);
              if (pts.empty()) {
                std::cerr << "referee scaling: " << error << "\n";
                return kCannotCheck;
              }
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.scaling/1").key("round").value(c->round);
                w.key("benchmark").value(c->benchmark).key("submitter").value(*who).key("points").begin_array();
                for (const auto& p : pts) {
                  w.begin_object().key("result");
                  row_json(w, p.result);
                  w.key("speedup").value(p.speedup).key("size_ratio").value(p.size_ratio).key("efficiency").value(p.efficiency).end_object();
                }
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              Table t({"system", "accelerators", "score (min)", "speedup", "size ratio", "efficiency"});
              for (const auto& p : pts)
                t.add({p.result.system, std::to_string(p.result.accelerators), score_cell(p.result), fixed(p.speedup, 3) + "x",
                       fixed(p.size_ratio, 3) + "x", percent(p.efficiency, 1)});
              std::cout << *who << ", " << c->benchmark << ", " << c->round << " (relative to the smallest)\n";
              t.print(std::cout);
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
            sub.add_option("--from", *from, "earlier round, e.g. training-3.0.0")->required();
            sub.add_option("--to", *to, "later round, e.g. training-3.1.0")->required();
            sub.add_option("--submitter", *who, "only this submitter");
            sub.add_flag("--overall", *overall, "fastest result of each round, whoever submitted it");
            return [c, from, to, who, overall]() -> int {
              auto store = open_store("speedup", c->db);
              if (!store) return kCannotCheck;
              std::string error;
              auto sps = submissions::speedups(*store, *from, *to, c->benchmark, !*overall, *who, c->pipeline, &error);
              if (sps.empty()) {
                std::cerr << "referee speedup: " << error << "\n";
                return kCannotCheck;
              }
              if (c->json) {
                mllog::JsonWriter w;
                w.begin_object().key("schema").value("referee.speedup/1").key("benchmark").value(c->benchmark);
                w.key("from").value(*from).key("to").value(*to).key("speedups").begin_array();
                for (const auto& s : sps) {
                  w.begin_object().key("submitter").value(s.submitter).key("comparable").value(s.comparable);
                  if (s.comparable) {
                    w.key("from");
                    row_json(w, s.from);
                    w.key("to");
                    row_json(w, s.to);
                    w.key("speedup").value(s.speedup).key("accelerator_ratio").value(s.accelerator_ratio);
                    w.key("scaling_efficiency").value(s.efficiency);
                  } else {
                    w.key("note").value(s.note);
                  }
                  w.end_object();
                }
                w.end_array().end_object();
                std::cout << w.str() << "\n";
                return kPass;
              }
              Table t({"submitter", *from, "min", *to, "min", "speedup", "accelerators", "efficiency"});
              for (const auto& s : sps) {
                if (!s.comparable) continue;
                t.add({s.submitter, s.from.system + " (" + std::to_string(s.from.accelerators) + ")", fixed(s.from.score, 3),
                       s.to.system + " (" + std::to_string(s.to.accelerators) + ")", fixed(s.to.score, 3),
                       fixed(s.speedup, 2) + "x", fixed(s.accelerator_ratio, 2) + "x", percent(s.efficiency, 1)});
              }
              std::cout << c->benchmark << ": fastest closed-division result " << (*overall ? "overall" : "per submitter")
                        << ", " << *from << " -> " << *to << "\n";
              t.print(std::cout);
              for (const auto& s : sps)
                if (!s.comparable) std::cout << "note: " << s.note << "\n";
              return kPass;
            };
          }};
}

}  // namespace referee::cli
