// The questions' answers as text tables, JSON and CSV (submissions/render.h).
#include "submissions/render.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "mllog/json_writer.h"
#include "submissions/csv.h"
#include "submissions/table.h"

namespace referee::submissions {

namespace {

bool priced(const Price& p) { return p.per != Price::Per::None; }

// The top level's price fields, when a price was given.
void price_json(mllog::JsonWriter& w, const Price& p) {
  if (!priced(p)) return;
  w.key("price").value(p.amount).key("price_unit").value(price_unit(p));
}

void row_json(mllog::JsonWriter& w, const ResultRow& r, const Price& price = {}) {
  w.begin_object();
  w.key("round").value(r.round).key("organisation").value(r.organisation).key("submitter").value(r.submitter);
  w.key("system").value(r.system).key("benchmark").value(r.benchmark).key("division").value(r.division);
  w.key("availability").value(r.availability).key("availability_raw").value(r.availability_raw);
  if (!r.availability_known) w.key("availability_known").value(false);  // the text names no category
  w.key("accelerator").value(r.accelerator);
  w.key("accelerator_type").value(r.accelerator_type).key("accelerator_model").value(r.accelerator_model);
  w.key("accelerators").value(r.accelerators).key("nodes").value(r.nodes);
  if (!r.twins.empty()) w.key("twins").strings(r.twins);
  if (r.twin_of) w.key("twin_of").value(r.twin_of_name);
  if (r.has_score) w.key("score_minutes").value(r.score); else w.key("score_minutes").null();
  double hours = 0, cost = 0;
  if (accelerator_hours(r, &hours)) w.key("accelerator_hours").value(hours); else w.key("accelerator_hours").null();
  if (priced(price)) {
    if (run_cost(r, price, &cost)) w.key("cost").value(cost); else w.key("cost").null();
  }
  w.key("checks_pass").value(r.pass).key("checks").value(checks_word(r));
  w.key("failed_checks").strings(r.failed_checks);
  w.key("accepted");
  if (accepted(r)) {
    w.begin_object().key("by").value(accepted_by(r) ? "decision" : "scaling.json").key("decision_id");
    if (accepted_by(r)) w.value(r.decision_id); else w.null();
    w.key("objection_id");
    if (accepted_by(r)) w.value(r.objection_id); else w.null();
    w.key("why").value(accepted_text(r)).end_object();
  } else {
    w.null();
  }
  w.key("rcp_status").value(r.rcp_status).key("resubmission").value(r.resubmission);
  w.key("review_status");
  if (r.review_status.empty()) {
    w.null();
  } else {
    w.begin_object().key("status").value(r.review_status);
    if (r.has_review_factor) w.key("factor").value(r.review_factor); else w.key("factor").null();
    if (r.objection_id) w.key("objection_id").value(r.objection_id); else w.key("objection_id").null();
    if (r.decision_id) w.key("decision_id").value(r.decision_id); else w.key("decision_id").null();
    w.key("submitted_division").value(r.submitted_division);
    // Normalised: the figure published (unscaled x the committee's factor)
    // beside the one submitted.
    if (r.has_submitted_score) {
      w.key("published_score_minutes").value(r.score).key("submitted_score_minutes").value(r.submitted_score);
      if (r.has_unscaled) w.key("unscaled_score_minutes").value(r.unscaled);
    }
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

std::string score_cell(const ResultRow& r) { return r.has_score ? fixed(r.score, 4) : "-"; }

const char* kRunsHeader = "runs (min; * olympic drop, ! non-compliant)";

std::string runs_cell(const ResultRow& r) {
  std::string out;
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    if (!out.empty()) out += " ";
    out += r.run_minutes[i] >= 0 ? fixed(r.run_minutes[i], 3) : "-";
    if (r.run_dropped[i] == "olympic") out += "*";
    else if (r.run_dropped[i] == "noncompliant") out += "!";
  }
  return out;
}

std::string size_cell(const ResultRow& r) { return std::to_string(r.accelerators) + " x " + r.accelerator; }

// The review's status column: shown only when some row has a status, so
// that a store without a review answers as before.
const char* kReviewHeader = "review status";

template <typename Rows, typename Get>
bool any_status(const Rows& rows, Get get) {
  for (const auto& x : rows)
    if (!get(x).review_status.empty()) return true;
  return false;
}

std::string status_cell(const ResultRow& r) {
  std::string s = review_status_text(r);
  return s.empty() ? "-" : s;
}

// A score cell that says when the committee's factor made it.
std::string reviewed_score_cell(const ResultRow& r) {
  return score_cell(r) + (r.review_status == "normalised" ? " (normalised)" : "");
}

std::vector<std::string> with_status(std::vector<std::string> cols, bool show) {
  if (show) cols.push_back(kReviewHeader);
  return cols;
}

// ---------------------------------------------------------------- cost of speed

std::string hours_cell(const ResultRow& r) {
  double h = 0;
  return accelerator_hours(r, &h) ? fixed(h, 1) : "-";
}

std::string cost_cell(const ResultRow& r, const Price& p) {
  double c = 0;
  return run_cost(r, p, &c) ? fixed(c, 2) : "-";
}

// The line under a table with a cost column.
std::string price_line(const Price& p) {
  std::string s = "cost: one training run (the score's time) at " + csv_number(p.amount) + " " +
                  price_unit(p);
  if (p.per == Price::Per::NodeMonth)
    s += " (nodes x hours x price / 730 hours a month; a node is the system's accelerators per node)";
  else
    s += " (accelerators x hours x price)";
  return s;
}

// How much more (or less) accelerator time the later result used: to / from - 1.
bool hours_change(const ResultRow& from, const ResultRow& to, double* change) {
  double a = 0, b = 0;
  if (!accelerator_hours(from, &a) || !accelerator_hours(to, &b) || a <= 0) return false;
  *change = b / a - 1;
  return true;
}

std::string signed_percent(double x, int digits) { return (x >= 0 ? "+" : "") + percent(x, digits); }

// ---------------------------------------------------------------- CSV
// The columns of one result, each name prefixed with `p` ("from_", "to_").
void csv_result_header(Csv& c, const std::string& p, const Price& price) {
  for (const char* col : {"round", "organisation", "system", "submitter", "division", "availability", "availability_raw",
                          "accelerator", "accelerator_type", "accelerators", "nodes", "score_minutes", "accelerator_hours"})
    c.text(p + col);
  if (priced(price)) c.text(p + "cost");
  for (const char* col : {"checks_pass", "resubmission", "review_status", "checks", "twin_of", "twins"}) c.text(p + col);
}

void csv_result_cells(Csv& c, const ResultRow& r, const Price& price) {
  c.text(r.round).text(r.organisation).text(r.system).text(r.submitter).text(r.division).text(r.availability);
  c.text(r.availability_raw).text(r.accelerator).text(r.accelerator_type).integer(r.accelerators).integer(r.nodes);
  if (r.has_score) c.number(r.score); else c.empty();
  double h = 0, cost = 0;
  if (accelerator_hours(r, &h)) c.number(h); else c.empty();
  if (priced(price)) {
    if (run_cost(r, price, &cost)) c.number(cost); else c.empty();
  }
  c.boolean(r.pass).boolean(r.resubmission).text(review_status_text(r)).text(checks_word(r));
  // Twins (the same logs under other names): the result they are ranked as; the first's others, space-separated.
  std::string twins;
  for (const auto& n : r.twins) twins += (twins.empty() ? "" : " ") + n;
  c.text(r.twin_of ? r.twin_of_name : "").text(twins);
}

// Runs as compare's column shows them, each time in full precision.
std::string runs_csv(const ResultRow& r) {
  std::string out;
  for (size_t i = 0; i < r.run_files.size(); ++i) {
    if (!out.empty()) out += " ";
    out += r.run_minutes[i] >= 0 ? csv_number(r.run_minutes[i]) : "-";
    if (r.run_dropped[i] == "olympic") out += "*";
    else if (r.run_dropped[i] == "noncompliant") out += "!";
  }
  return out;
}

// ---------------------------------------------------------------- answers

Answer done(std::ostringstream& out) {
  Answer a;
  a.out = out.str();
  return a;
}

Answer fail(std::ostringstream& out, const std::string& error) {
  Answer a;
  a.ok = false;
  a.out = out.str();
  a.error = error;
  return a;
}

Answer answer_compare(Store& store, const Question& q) {
  std::ostringstream out;
  const bool as_json = q.format == Format::Json, as_csv = q.format == Format::Csv;
  std::string error;
  auto rows = find_results(store, {q.round, q.benchmark, "", q.rescale}, q.results, &error);
  if (rows.empty()) return fail(out, error);
  const Price& price = q.price;
  const auto& base = rows.front();
  if (as_json) {
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
    return done(out);
  }
  if (as_csv) {
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
      if (priced(price)) csv.text(price_unit(price));
      csv.end_row();
    }
    out << csv.str();
    return done(out);
  }
  bool status = any_status(rows, [](const auto& r) -> const ResultRow& { return r; });
  std::vector<std::string> cols = {"result", "accelerators", "score (min)", "accelerator-hours"};
  if (priced(price)) cols.push_back("cost");
  for (const char* col : {"vs first", "checks", kRunsHeader}) cols.push_back(col);
  Table t(with_status(cols, status));
  for (const auto& r : rows) {
    std::string rel = r.has_score && base.has_score ? (r.score >= base.score ? "+" : "") + percent(r.score / base.score - 1, 2) : "-";
    std::vector<std::string> row = {r.organisation + "/" + r.system, size_cell(r), reviewed_score_cell(r), hours_cell(r)};
    if (priced(price)) row.push_back(cost_cell(r, price));
    for (auto cell : {&r == &base ? std::string() : rel,
                      checks_cell(r), runs_cell(r)})
      row.push_back(cell);
    if (status) row.push_back(status_cell(r));
    t.add(row);
  }
  out << base.benchmark << ", " << base.round << (q.rescale ? " (pipeline scores)" : "") << "\n";
  t.print(out);
  if (priced(price)) out << price_line(price) << "\n";
  return done(out);
}

Answer answer_leaderboard(Store& store, const Question& q) {
  std::ostringstream out;
  const bool as_json = q.format == Format::Json, as_csv = q.format == Format::Csv;
  std::string error;
  std::vector<std::string> left_out;
  auto rows = leaderboard(store, {q.round, q.benchmark, q.division, q.rescale}, &error, &left_out);
  if (rows.empty()) {
    // Nothing to rank: why the results there are left out is the answer.
    std::string why = error.empty() ? "no scored results" : error;
    for (const auto& l : left_out) why += "\nleft out: " + l;
    return fail(out, why);
  }
  const Price& price = q.price;
  if (as_json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.leaderboard/1").key("round").value(rows.front().round);
    w.key("benchmark").value(rows.front().benchmark);
    price_json(w, price);
    // Fastest first within each division (closed, then open); each result's rank is within its division.
    w.key("results").begin_array();
    for (const auto& r : rows) row_json(w, r, price);
    w.end_array().key("ranks").begin_array();
    {
      std::vector<const ResultRow*> sorted;
      for (const auto& r : rows) sorted.push_back(&r);
      for (int k : division_ranks(sorted)) w.value(static_cast<long long>(k));
    }
    w.end_array().key("left_out").strings(left_out).end_object();
    out << w.str() << "\n";
    return done(out);
  }
  if (as_csv) {
    Csv csv;
    csv.text("benchmark").text("rank");
    csv_result_header(csv, "", price);
    if (priced(price)) csv.text("price_unit");
    csv.end_row();
    std::vector<const ResultRow*> sorted;
    for (const auto& r : rows) sorted.push_back(&r);
    std::vector<int> ranks = division_ranks(sorted);
    size_t i = 0;
    for (const auto& r : rows) {
      csv.text(r.benchmark).integer(ranks[i++]);
      csv_result_cells(csv, r, price);
      if (priced(price)) csv.text(price_unit(price));
      csv.end_row();
    }
    out << csv.str();
    return done(out);
  }
  bool status = any_status(rows, [](const auto& r) -> const ResultRow& { return r; });
  std::vector<std::string> cols = {"#", "submitter", "system", "division", "availability", "accelerators", "score (min)",
                                   "accelerator-hours"};
  if (priced(price)) cols.push_back("cost");
  cols.push_back("checks");
  Table t(with_status(cols, status));
  std::vector<const ResultRow*> sorted;
  for (const auto& r : rows) sorted.push_back(&r);
  std::vector<int> ranks = division_ranks(sorted);
  size_t i = 0;
  for (const auto& r : rows) {
    std::vector<std::string> row = {std::to_string(ranks[i++]), r.submitter, r.system, r.division, r.availability, size_cell(r),
                                    reviewed_score_cell(r), hours_cell(r)};
    if (priced(price)) row.push_back(cost_cell(r, price));
    row.push_back(checks_cell(r));
    if (status) row.push_back(status_cell(r));
    t.add(row);
  }
  out << rows.front().benchmark << ", " << rows.front().round << "\n";
  t.print(out);
  if (priced(price)) out << price_line(price) << "\n";
  for (const auto& n : left_out) out << "left out: " << n << "\n";
  return done(out);
}

Answer answer_scaling(Store& store, const Question& q) {
  std::ostringstream out;
  const bool as_json = q.format == Format::Json, as_csv = q.format == Format::Csv;
  std::string error;
  std::vector<std::string> left_out;
  auto series = scaling(store, {q.round, q.benchmark, "", q.rescale}, q.submitter, &error, &left_out);
  if (series.empty()) return fail(out, error);
  const auto& first = series.front().points.front().result;
  if (as_json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.scaling/2").key("round").value(first.round);
    w.key("benchmark").value(first.benchmark).key("submitter").value(q.submitter).key("series").begin_array();
    for (const auto& s : series) {
      w.begin_object().key("division").value(s.division).key("accelerator_type").value(s.accelerator_type).key("points").begin_array();
      for (const auto& p : s.points) {
        w.begin_object().key("result");
        row_json(w, p.result);
        w.key("speedup").value(p.speedup).key("size_ratio").value(p.size_ratio).key("efficiency");
        if (p.has_efficiency) w.value(p.efficiency); else w.null();
        w.end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().key("left_out").strings(left_out).end_object();
    out << w.str() << "\n";
    return done(out);
  }
  if (as_csv) {
    Csv csv;
    csv.text("benchmark").text("series");
    csv_result_header(csv, "", Price{});
    csv.text("speedup").text("size_ratio").text("efficiency").end_row();
    for (const auto& s : series)
      for (const auto& p : s.points) {
        csv.text(p.result.benchmark).text(series_label(s));
        csv_result_cells(csv, p.result, Price{});
        csv.number(p.speedup).number(p.size_ratio);
        if (p.has_efficiency) csv.number(p.efficiency); else csv.empty();
        csv.end_row();
      }
    out << csv.str();
    return done(out);
  }
  out << q.submitter << ", " << first.benchmark << ", " << first.round
       << " (one series per division and accelerator type, relative to its smallest)\n";
  bool status = false;
  for (const auto& s : series) status = status || any_status(s.points, [](const auto& p) -> const ResultRow& { return p.result; });
  Table t(with_status({"accelerator", "system", "accelerators", "score (min)", "speedup", "size ratio", "efficiency"}, status));
  for (const auto& s : series)
    for (const auto& p : s.points) {
      std::vector<std::string> row = {series_label(s), p.result.system, std::to_string(p.result.accelerators),
                                      reviewed_score_cell(p.result), fixed(p.speedup, 3) + "x",
                                      fixed(p.size_ratio, 3) + "x", p.has_efficiency ? percent(p.efficiency, 1) : "-"};
      if (status) row.push_back(status_cell(p.result));
      t.add(row);
    }
  t.print(out);
  for (const auto& n : left_out) out << "left out: " << n << "\n";
  return done(out);
}

// ---------------------------------------------------------------- speedup

void pair_json(mllog::JsonWriter& w, const Speedup& s, const Price& price) {
  w.begin_object().key("submitter").value(s.submitter).key("kind").value(s.kind);
  w.key("comparable").value(s.comparable);
  if (!s.comparable) w.key("reason").value(s.reason);
  if (!s.accelerators.empty()) w.key("accelerators").value(s.accelerators);
  w.key("from");
  row_json(w, s.from, price);
  w.key("to");
  row_json(w, s.to, price);
  if (s.comparable) w.key("speedup").value(s.speedup); else w.key("speedup").null();
  w.key("accelerator_ratio").value(s.accelerator_ratio);
  if (s.has_interval)
    w.key("speedup_interval").begin_object().key("level").value(0.95).key("low").value(s.speedup_low)
        .key("high").value(s.speedup_high).key("runs_from").value(s.runs_from).key("runs_to").value(s.runs_to).end_object();
  else w.key("speedup_interval").null();
  if (s.comparable && s.has_efficiency) w.key("scaling_efficiency").value(s.efficiency);
  else w.key("scaling_efficiency").null();
  if (s.comparable && s.has_efficiency) w.key("efficiency_note").value(s.efficiency_note);
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
  csv.text("speedup").text("speedup_low_95").text("speedup_high_95").text("accelerator_ratio").text("scaling_efficiency");
  csv.text("efficiency_note").text("accelerator_hours_change");
  if (priced(price)) csv.text("price_unit");
  csv.end_row();
}

void speedup_csv_rows(Csv& csv, const SpeedupReport& rep, const std::string& step, const Price& price) {
  for (const auto& s : rep.pairs) {
    csv.text(rep.benchmark).text(step).text(s.submitter).text(s.kind);
    csv.boolean(s.comparable).text(s.comparable ? "" : s.reason);
    csv_result_cells(csv, s.from, price);
    csv_result_cells(csv, s.to, price);
    if (s.comparable) csv.number(s.speedup); else csv.empty();
    if (s.has_interval) csv.number(s.speedup_low).number(s.speedup_high); else csv.empty().empty();
    csv.number(s.accelerator_ratio);
    if (s.comparable && s.has_efficiency) csv.number(s.efficiency).text(s.efficiency_note); else csv.empty().empty();
    double change = 0;
    if (hours_change(s.from, s.to, &change)) csv.number(change); else csv.empty();
    if (priced(price)) csv.text(price_unit(price));
    csv.end_row();
  }
}

// The table's rows for one pair of rounds; `rounds_column` adds a first
// column naming the pair (the chain's table).
void speedup_rows(Table& t, const SpeedupReport& rep, const Price& price, bool rounds_column) {
  for (const auto& s : rep.pairs) {
    auto cell = [](const ResultRow& r) {
      std::string st = review_status_text(r);
      return r.system + " (" + std::to_string(r.accelerators) + " x " + r.accelerator_type + ")" + (st.empty() ? "" : " [" + st + "]");
    };
    std::vector<std::string> row;
    if (rounds_column) row.push_back(rep.from_round + " -> " + rep.to_round);
    double change = 0;
    std::string speed = s.comparable ? fixed(s.speedup, 2) + "x" : s.kind == "carried" ? "carried" : "not comparable";
    if (s.has_interval) speed += " (" + fixed(s.speedup_low, 2) + "-" + fixed(s.speedup_high, 2) + ")";
    for (auto x : {s.kind, s.submitter, cell(s.from), minutes_text(s.from.score), cell(s.to), minutes_text(s.to.score),
                   speed, fixed(s.accelerator_ratio, 2) + "x",
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

void speedup_lines(std::ostream& out, const SpeedupReport& rep, const std::string& prefix) {
  bool interval = false;
  for (const auto& s : rep.pairs) interval = interval || s.has_interval;
  if (interval)
    out << "interval" << prefix << ": the speedup's 95% bootstrap interval from each side's runs, in parentheses after it; "
           "three runs a side tell little\n";
  for (const auto& s : rep.pairs)
    if (s.comparable && s.has_efficiency && s.efficiency > 1)
      out << "efficiency" << prefix << ": " << s.submitter << " " << s.kind << ": " << s.efficiency_note << "\n";
  for (const auto& s : rep.pairs)
    if (!s.comparable)
      out << (s.kind == "carried" ? "carried" + prefix + ": " + s.submitter
                                  : "not comparable" + prefix + ": " + s.submitter + " " + s.kind)
          << ": " << s.reason << "\n";
  for (const auto& n : rep.left_out) out << "left out" << prefix << ": " << n << "\n";
  for (const auto& n : rep.notes) out << "note" << prefix << ": " << n << "\n";
}

const char* kScaleRuleLine = "scale rule: same-scale rows pair results of equal accelerator model and count; ";

// speedup --all-rounds: one block (text), one object (JSON) per benchmark.
Answer answer_chains(Store& store, const Question& c, const SpeedupQuery& q, const RoundVisible& visible) {
  std::ostringstream out;
  const bool overall = c.overall;
  std::vector<SpeedupChain> chains;
  std::string error;
  if (!speedup_chains(store, q, visible, &chains, &error)) return fail(out, error);
  const Price& price = c.price;
  int comparable = 0;
  for (const auto& ch : chains)
    for (const auto& st : ch.steps)
      for (const auto& s : st.report.pairs) comparable += s.comparable;
  if (c.format == Format::Json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.speedup-chain/1").key("groups").value(overall ? "overall" : "per submitter");
    if (!q.submitter.empty()) w.key("submitter").value(q.submitter);
    price_json(w, price);
    w.key("headline_scale_rule").value(kHeadlineScaleRule).key("benchmarks").begin_array();
    for (const auto& ch : chains) {
      w.begin_object().key("benchmark").value(ch.benchmark).key("rounds").strings(ch.rounds).key("steps").begin_array();
      for (const auto& st : ch.steps) {
        w.begin_object().key("kind").value(st.kind).key("from").value(st.report.from_round).key("to").value(st.report.to_round);
        w.key("speedups").begin_array();
        for (const auto& s : st.report.pairs) pair_json(w, s, price);
        w.end_array().key("left_out").strings(st.report.left_out).key("notes").strings(st.report.notes).end_object();
      }
      w.end_array().key("notes").strings(ch.notes).end_object();
    }
    w.end_array().end_object();
    out << w.str() << "\n";
  } else if (c.format == Format::Csv) {
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
      out << "\n" << kScaleRuleLine << kHeadlineScaleRule << "\n";
      out << "rounds: each round and the next that has the benchmark, then the first to the last\n";
      if (priced(price)) out << price_line(price) << "\n";
    }
  }
  if (comparable == 0) {
    return fail(out, "no comparable pair of closed-division results in any two rounds" +
                         (c.benchmark.empty() ? std::string() : " of " + c.benchmark) +
                         (q.submitter.empty() ? std::string() : " for " + q.submitter));
  }
  return done(out);
}

Answer answer_speedup(Store& store, const Question& q, const RoundVisible& visible) {
  std::ostringstream out;
  const bool as_json = q.format == Format::Json, as_csv = q.format == Format::Csv;
  if (q.all_rounds) return answer_chains(store, q, {q.from, q.to, q.benchmark, !q.overall, q.submitter, q.rescale}, visible);
  std::string error;
  SpeedupQuery sq{q.from, q.to, q.benchmark, !q.overall, q.submitter, q.rescale};
  const Price& price = q.price;
  SpeedupReport rep;
  if (!speedups(store, sq, &rep, &error)) return fail(out, error);
  int comparable = 0;
  for (const auto& s : rep.pairs) comparable += s.comparable;
  if (as_json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.speedup/2").key("benchmark").value(rep.benchmark);
    w.key("from").value(rep.from_round).key("to").value(rep.to_round);
    price_json(w, price);
    w.key("headline_scale_rule").value(kHeadlineScaleRule).key("speedups").begin_array();
    for (const auto& s : rep.pairs) pair_json(w, s, price);
    w.end_array().key("left_out").strings(rep.left_out).key("notes").strings(rep.notes).end_object();
    out << w.str() << "\n";
  } else if (as_csv) {
    Csv csv;
    speedup_csv_header(csv, price);
    speedup_csv_rows(csv, rep, "", price);
    out << csv.str();
  } else {
    out << rep.benchmark << ": fastest closed-division results " << (q.overall ? "overall" : "per submitter")
         << ", " << rep.from_round << " -> " << rep.to_round << "\n";
    Table t(speedup_header({"kind", "submitter", rep.from_round, "min", rep.to_round, "min"}, price));
    speedup_rows(t, rep, price, false);
    if (!rep.pairs.empty()) t.print(out);
    out << kScaleRuleLine << kHeadlineScaleRule << "\n";
    if (priced(price)) out << price_line(price) << "\n";
    speedup_lines(out, rep, "");
  }
  if (comparable == 0) {
    return fail(out, "no comparable pair of closed-division " + rep.benchmark + " results in " + rep.from_round + " and " +
                         rep.to_round + (q.submitter.empty() ? "" : " for " + q.submitter) +
                         (rep.pairs.empty() && rep.notes.empty() && rep.left_out.empty() ? " (no scored results)" : ""));
  }
  return done(out);
}

Answer answer_list(Store& store, const Question& q, const RoundVisible& visible) {
  std::ostringstream out;
  const bool as_json = q.format == Format::Json, as_csv = q.format == Format::Csv;
  std::string error;
  Listing l;
  // Rounds the caller may not see are left out of every row and total.
  std::vector<std::string> seen;
  if (visible)
    for (const auto& r : rounds(store))
      if (visible(r)) seen.push_back(r);
  if (!list_store(store, q.what, q.round, &l, &error, visible ? &seen : nullptr)) return fail(out, error);
  if (as_json) {
    mllog::JsonWriter w;
    w.begin_object().key("schema").value("referee.list/1").key("what").value(q.what);
    w.key(q.what.c_str()).begin_array();
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
    return done(out);
  }
  if (as_csv) {
    Csv csv;
    for (const auto& col : l.columns) csv.text(col);
    csv.end_row();
    for (const auto& row : l.rows) {
      for (const auto& cell : row) csv.text(cell);
      csv.end_row();
    }
    out << csv.str();
    return done(out);
  }
  if (l.rows.empty()) {
    out << "the store " << store.path() << " holds no " << q.what << (q.round.empty() ? "" : " in " + q.round)
         << "\n";
    return done(out);
  }
  Table t(l.columns);
  for (auto& row : l.rows) t.add(row);
  t.print(out);
  return done(out);
}

}  // namespace

const char* question_name(QuestionKind kind) {
  switch (kind) {
    case QuestionKind::Compare: return "compare";
    case QuestionKind::Leaderboard: return "leaderboard";
    case QuestionKind::Scaling: return "scaling";
    case QuestionKind::Speedup: return "speedup";
    case QuestionKind::List: return "list";
  }
  return "list";
}

bool question_kind(const std::string& name, QuestionKind* out) {
  for (QuestionKind k : {QuestionKind::Compare, QuestionKind::Leaderboard, QuestionKind::Scaling, QuestionKind::Speedup,
                         QuestionKind::List})
    if (name == question_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

bool check_question(const Question& q, std::string* error) {
  if (q.kind == QuestionKind::Speedup && !q.all_rounds && (q.from.empty() || q.to.empty() || q.benchmark.empty())) {
    *error = "name the rounds and the benchmark (--from R1 --to R2 --benchmark B), or ask for --all-rounds [--benchmark B]";
    return false;
  }
  return true;
}

Answer answer(Store& store, const Question& q, const RoundVisible& visible) {
  switch (q.kind) {
    case QuestionKind::Compare: return answer_compare(store, q);
    case QuestionKind::Leaderboard: return answer_leaderboard(store, q);
    case QuestionKind::Scaling: return answer_scaling(store, q);
    case QuestionKind::Speedup: return answer_speedup(store, q, visible);
    case QuestionKind::List: return answer_list(store, q, visible);
  }
  return {};
}

}  // namespace referee::submissions
