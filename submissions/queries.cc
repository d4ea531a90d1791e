#include "submissions/queries.h"

#include <algorithm>
#include <map>

namespace referee::submissions {

namespace {

const char* kSelect = R"sql(
  SELECT x.id, d.name, o.name, s.submitter, s.name, x.benchmark, x.division, s.availability,
         s.accelerator_model_name, s.accelerators_count, s.number_of_nodes,
         x.score_minutes, x.score_pipeline_minutes, x.verdict, x.rcp_status, x.resubmission
  FROM results x JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
       JOIN organisations o ON p.organisation_id = o.id JOIN rounds d ON p.round_id = d.id
  WHERE d.name = ?1 AND x.benchmark = ?2 AND (?3 = '' OR x.division = ?3)
  ORDER BY o.name, s.name)sql";

ResultRow read_row(Stmt& st, bool pipeline) {
  ResultRow r;
  r.result_id = st.col_int(0);
  r.round = st.col_text(1);
  r.organisation = st.col_text(2);
  r.submitter = st.col_text(3);
  r.system = st.col_text(4);
  r.benchmark = st.col_text(5);
  r.division = st.col_text(6);
  r.availability = st.col_text(7);
  r.accelerator = st.col_text(8);
  r.accelerators = st.col_int(9);
  r.nodes = st.col_int(10);
  int score_col = pipeline ? 12 : 11;
  r.has_score = !st.col_null(score_col);
  r.score = st.col_double(score_col);
  r.pass = st.col_text(13) == "pass";
  r.rcp_status = st.col_text(14);
  r.resubmission = st.col_int(15) != 0;
  return r;
}

void load_runs(Store& s, ResultRow* r) {
  Stmt st(s.db(), "SELECT file, minutes, counted FROM runs WHERE result_id = ?1 ORDER BY counted DESC, minutes");
  st.bind(1, r->result_id);
  while (st.step()) {
    r->run_files.push_back(st.col_text(0));
    r->run_minutes.push_back(st.col_null(1) ? -1 : st.col_double(1));
    r->run_counted.push_back(st.col_int(2) != 0);
  }
}

bool has_round(Store& s, const std::string& round, std::string* error) {
  Stmt st(s.db(), "SELECT 1 FROM rounds WHERE name = ?1");
  st.bind(1, round);
  if (st.step()) return true;
  std::string known;
  for (const auto& r : rounds(s)) known += (known.empty() ? "" : ", ") + r;
  *error = "round " + round + " is not in the store (" + s.path() + "); it has: " + (known.empty() ? "nothing yet" : known) +
           ". Import it with: referee import DIR --round " + round;
  return false;
}

}  // namespace

std::vector<std::string> rounds(Store& s) {
  std::vector<std::string> out;
  Stmt st(s.db(), "SELECT name FROM rounds ORDER BY ordinal");
  while (st.step()) out.push_back(st.col_text(0));
  return out;
}

std::vector<ResultRow> results_for(Store& s, const Query& q, std::string* error) {
  std::vector<ResultRow> out;
  if (!has_round(s, q.round, error)) return out;
  Stmt st(s.db(), kSelect);
  st.bind(1, q.round).bind(2, q.benchmark).bind(3, q.division);
  while (st.step()) out.push_back(read_row(st, q.pipeline));
  for (auto& r : out) load_runs(s, &r);
  if (out.empty()) *error = "no " + q.benchmark + " results in " + q.round;
  return out;
}

std::vector<ResultRow> find_results(Store& s, const Query& q, const std::vector<std::string>& names, std::string* error) {
  std::vector<ResultRow> all = results_for(s, q, error);
  std::vector<ResultRow> out;
  if (all.empty()) return out;
  error->clear();
  for (const auto& n : names) {
    std::vector<const ResultRow*> hits;
    for (const auto& r : all) {
      if (n == r.organisation + "/" + r.system || n == r.system) hits.push_back(&r);
    }
    if (hits.size() != 1) {
      std::string known;
      for (const auto& r : all) known += "\n  " + r.organisation + "/" + r.system;
      *error = (hits.empty() ? "no " : "more than one ") + q.benchmark + " result in " + q.round + " matches '" + n +
               "'; the results are:" + known;
      return {};
    }
    out.push_back(*hits[0]);
  }
  return out;
}

std::vector<ResultRow> leaderboard(Store& s, const Query& q, std::string* error) {
  std::vector<ResultRow> rows = results_for(s, q, error);
  std::vector<ResultRow> out;
  for (auto& r : rows)
    if (r.has_score) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const ResultRow& a, const ResultRow& b) { return a.score < b.score; });
  return out;
}

std::vector<ScalingPoint> scaling(Store& s, const Query& q, const std::string& submitter, std::string* error) {
  std::vector<ScalingPoint> out;
  for (auto& r : results_for(s, q, error)) {
    if (!r.has_score) continue;
    if (!submitter.empty() && r.submitter != submitter && r.organisation != submitter) continue;
    ScalingPoint p;
    p.result = std::move(r);
    out.push_back(std::move(p));
  }
  if (out.empty()) {
    if (error->empty()) *error = "no scored " + q.benchmark + " results of " + submitter + " in " + q.round;
    return out;
  }
  std::stable_sort(out.begin(), out.end(), [](const ScalingPoint& a, const ScalingPoint& b) {
    return a.result.accelerators < b.result.accelerators;
  });
  const ResultRow& base = out.front().result;
  for (auto& p : out) {
    p.speedup = base.score / p.result.score;
    p.size_ratio = static_cast<double>(p.result.accelerators) / static_cast<double>(base.accelerators);
    p.efficiency = p.speedup / p.size_ratio;
  }
  return out;
}

std::vector<Speedup> speedups(Store& s, const std::string& from_round, const std::string& to_round,
                              const std::string& benchmark, bool per_submitter, const std::string& submitter,
                              bool pipeline, std::string* error) {
  std::vector<Speedup> out;
  Query qa{from_round, benchmark, "", pipeline}, qb{to_round, benchmark, "", pipeline};
  auto a = results_for(s, qa, error);
  if (a.empty()) return out;
  auto b = results_for(s, qb, error);
  if (b.empty()) return out;
  error->clear();
  auto best_by = [&](const std::vector<ResultRow>& rows, bool exclude_resubmissions) {
    std::map<std::string, ResultRow> best;
    for (const auto& r : rows) {
      if (!r.has_score || r.division != "closed") continue;
      if (exclude_resubmissions && r.resubmission) continue;
      if (!submitter.empty() && r.submitter != submitter && r.organisation != submitter) continue;
      std::string key = per_submitter ? r.submitter : std::string("best overall");
      auto it = best.find(key);
      if (it == best.end() || r.score < it->second.score) best[key] = r;
    }
    return best;
  };
  auto fa = best_by(a, false);
  auto fb = best_by(b, true);
  for (const auto& [key, to] : fb) {
    auto it = fa.find(key);
    if (it == fa.end()) continue;
    Speedup sp;
    sp.submitter = key;
    sp.from = it->second;
    sp.to = to;
    sp.speedup = sp.from.score / sp.to.score;
    sp.accelerator_ratio = static_cast<double>(sp.to.accelerators) / static_cast<double>(sp.from.accelerators);
    sp.efficiency = sp.speedup / sp.accelerator_ratio;
    out.push_back(std::move(sp));
  }
  // Results resubmitted unchanged are left out of the later round, and said so.
  for (const auto& r : b)
    if (r.resubmission && r.has_score && (submitter.empty() || r.submitter == submitter || r.organisation == submitter)) {
      Speedup sp;
      sp.submitter = per_submitter ? r.submitter : "best overall";
      sp.to = r;
      sp.comparable = false;
      sp.note = r.organisation + "/" + r.system + " in " + to_round + " is a resubmission of logs from an earlier round; no speedup is computed for it";
      out.push_back(std::move(sp));
    }
  if (out.empty()) *error = "no submitter has scored closed-division " + benchmark + " results in both " + from_round + " and " + to_round;
  return out;
}

}  // namespace referee::submissions
