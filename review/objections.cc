// Objections and everything done to them: evidence, responses, votes, the
// chair's decision, withdrawal; the score impact; the review log and its
// verification. Each write is one transaction that appends its event.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/router.h"
#include "review/text_format.h"
#include "review/verify.h"
#include "rules/scoring.h"
#include "submissions/queries.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;

const char* const kRemedies[] = {"none", "fix", "open", "withdraw", "normalise"};

bool valid_remedy(const std::string& r) {
  for (const char* k : kRemedies)
    if (r == k) return true;
  return false;
}

// A factor sent with a remedy: finite, above 0 and at most 100; a
// normalisation only penalises (at least 1). Post: true, or false with *err.
bool check_factor(const std::string& remedy, bool has_factor, double factor, Response* err) {
  if (remedy == "normalise" && !has_factor) {
    *err = error_response(400, "bad-field", "remedy normalise needs a factor", "send one (--factor F, API field `factor`)");
    return false;
  }
  if (!has_factor) return true;
  if (remedy != "normalise") {
    *err = error_response(400, "bad-field", "a factor goes with remedy normalise only");
    return false;
  }
  if (!std::isfinite(factor) || !(factor > 0) || factor > 100) {
    *err = error_response(400, "bad-field", "factor " + mllog::json_number(factor) + " is not above 0 and at most 100");
    return false;
  }
  if (factor < 1) {
    *err = error_response(422, "bad-factor",
                          "factor " + mllog::json_number(factor) +
                              ": a factor below 1 would make the result faster; normalisation only penalises",
                          "send a factor of 1 or more (--factor F, API field `factor`)");
    return false;
  }
  return true;
}

std::string lower(std::string s) {
  for (auto& ch : s)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return s;
}

struct Objection {
  long long id = 0, round_id = 0, by_org = 0, against_org = 0, finding_id = 0, version = 0;
  std::string by, against, filed_by, title, rule, text, state, created_at;
  bool has_impact = false;
  double impact = 0;
  std::vector<long long> results;
};

// Reads objection `id_text` and its round. Unknown, or in a round the actor
// may not see: 404.
bool load_objection(Context& c, const std::string& id_text, Objection* o, RoundInfo* round, Response* err) {
  long long id = 0;
  if (id_text.size() > 18 && id_text.find_first_not_of("0123456789") == std::string::npos) {
    *err = error_response(400, "bad-id", "objection id " + id_text + " is out of range",
                          "objections are numbered 1, 2, ...");
    return false;
  }
  if (!path_id(id_text, &id)) {
    *err = error_response(404, "not-found", "no objection " + id_text, "objections are numbered 1, 2, ...");
    return false;
  }
  submissions::Stmt q(c.store.db(),
                      "SELECT j.id, j.round_id, j.by_org, j.against_org, COALESCE(j.finding_id, 0), j.version, b.name, "
                      "a.name, u.name, j.title, j.rule, j.text, j.state, j.created_at, j.impact_minutes FROM objections j "
                      "JOIN organisations b ON b.id = j.by_org JOIN organisations a ON a.id = j.against_org JOIN users u "
                      "ON u.id = j.filed_by WHERE j.id = ?1");
  q.bind(1, id);
  if (!q.step()) {
    *err = q.ok() ? error_response(404, "not-found", "no objection " + id_text)
                  : store_error(c.store, q.rc(), "reading the objection");
    return false;
  }
  o->id = q.col_int(0);
  o->round_id = q.col_int(1);
  o->by_org = q.col_int(2);
  o->against_org = q.col_int(3);
  o->finding_id = q.col_int(4);
  o->version = q.col_int(5);
  o->by = q.col_text(6);
  o->against = q.col_text(7);
  o->filed_by = q.col_text(8);
  o->title = q.col_text(9);
  o->rule = q.col_text(10);
  o->text = q.col_text(11);
  o->state = q.col_text(12);
  o->created_at = q.col_text(13);
  o->has_impact = !q.col_null(14);
  o->impact = q.col_double(14);
  submissions::Stmt r(c.store.db(), "SELECT result_id FROM objection_results WHERE objection_id = ?1 ORDER BY result_id");
  r.bind(1, o->id);
  while (r.step()) o->results.push_back(r.col_int(0));
  if (!load_round_by_id(c, o->round_id, round, err)) {
    if (err->status == 404) *err = error_response(404, "not-found", "no objection " + id_text);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- evidence

struct EvidenceIn {
  std::string kind;  // finding | lines | figure | check
  long long finding_id = 0, run_id = 0, first_line = 0, last_line = 0;
  std::string quoted, figure_name, figure_unit, note;
  double figure_value = 0;
  bool has_impact = false;
  double impact = 0;  // the score if it holds (a finding's or figure's impact_minutes)
  std::string finding_kind;
};

// A finding's evidence_json quoted as text: "file:line: text" and "name = value unit".
std::string quote_finding(const std::string& evidence_json) {
  Json j;
  std::string e;
  if (!mllog::parse_json_permissive(evidence_json, &j, &e) || j.kind != Json::Kind::Array) return evidence_json;
  std::string out;
  auto text_of = [](const Json* v) -> std::string {
    if (!v) return "";
    if (v->kind == Json::Kind::String) return v->s;
    if (v->kind == Json::Kind::Int) return std::to_string(v->i);
    if (v->kind == Json::Kind::Float) return mllog::json_number(v->f);
    return "";
  };
  for (const auto& item : j.items) {
    if (item.find("file")) {
      out += text_of(item.find("file")) + ":" + text_of(item.find("line")) + ": " + text_of(item.find("text")) + "\n";
    } else if (item.find("figure")) {
      std::string unit = text_of(item.find("unit"));
      const Json* value = item.find("value");
      out += text_of(item.find("figure")) + " = " +
             (value && value->kind == Json::Kind::Float ? figure_unit_text(value->f, unit) : text_of(value));
      if (!unit.empty()) out += " " + unit;
      out += "\n";
    }
  }
  return out;
}

struct Finding {
  long long id = 0, round_id = 0, org_id = 0, result_id = 0;
  std::string kind, rule, summary, evidence_json;
  bool has_impact = false;
  double impact = 0;
};

bool load_finding(submissions::Store& s, long long id, Finding* f) {
  submissions::Stmt q(s.db(),
                      "SELECT id, round_id, organisation_id, COALESCE(result_id, 0), kind, rule, summary, evidence_json, "
                      "impact_minutes FROM findings WHERE id = ?1");
  q.bind(1, id);
  if (!q.step()) return false;
  f->id = q.col_int(0);
  f->round_id = q.col_int(1);
  f->org_id = q.col_int(2);
  f->result_id = q.col_int(3);
  f->kind = q.col_text(4);
  f->rule = q.col_text(5);
  f->summary = q.col_text(6);
  f->evidence_json = q.col_text(7);
  f->has_impact = !q.col_null(8);
  f->impact = q.col_double(8);
  return true;
}

bool evidence_finding(Context& c, long long id, long long round_id, EvidenceIn* out, Response* err) {
  Finding f;
  if (!load_finding(c.store, id, &f) || f.round_id != round_id) {
    *err = error_response(404, "unknown-finding", "finding " + std::to_string(id) + " is not a finding of this round",
                          "referee audit lists the findings of a round");
    return false;
  }
  out->kind = "finding";
  out->finding_id = f.id;
  out->quoted = quote_finding(f.evidence_json);
  out->has_impact = f.has_impact;
  out->impact = f.impact;
  out->finding_kind = f.kind;
  return true;
}

// The log files of a result's runs, for a hint: "result_0.txt, result_1.txt".
std::string run_files(Context& c, long long result_id) {
  submissions::Stmt q(c.store.db(), "SELECT file FROM runs WHERE result_id = ?1 ORDER BY file");
  q.bind(1, result_id);
  std::string out;
  while (q.step()) out += (out.empty() ? "" : ", ") + q.col_text(0);
  return out.empty() ? "none stored" : out;
}

// "12" or "12-15".
bool parse_lines(const std::string& text, long long* first, long long* last) {
  size_t dash = text.find('-');
  std::string a = text.substr(0, dash), b = dash == std::string::npos ? a : text.substr(dash + 1);
  auto num = [](const std::string& s, long long* v) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *v = std::stoll(s);
    return true;
  };
  return num(a, first) && num(b, last) && *first >= 1 && *last >= *first && *last - *first < 200;
}

bool evidence_lines(Context& c, long long round_id, const std::vector<long long>& results, const std::string& result,
                    const std::string& file, const std::string& lines, EvidenceIn* out, Response* err) {
  long long result_id = 0, org_id = 0;
  if (!find_result(c.store, round_id, result, &result_id, &org_id, err)) return false;
  if (std::find(results.begin(), results.end(), result_id) == results.end()) {
    std::string names;
    for (long long r : results) names += (names.empty() ? "" : ", ") + result_name(c.store, r);
    *err = error_response(422, "not-this-objection", "lines from " + result + ": it is not one of the objection's results (" +
                                                         names + ")",
                          "quote the logs of the results objected to, or file another objection");
    return false;
  }
  if (!parse_lines(lines, &out->first_line, &out->last_line)) {
    *err = error_response(400, "bad-field", "lines '" + lines + "' is not N or N-M (at most 200 lines, from 1)");
    return false;
  }
  submissions::Stmt q(c.store.db(),
                      "SELECT r.id, p.path, y.name, x.benchmark FROM runs r JOIN results x ON x.id = r.result_id JOIN "
                      "systems y ON y.id = x.system_id JOIN packages p ON p.id = y.package_id WHERE r.result_id = ?1 AND "
                      "r.file = ?2");
  q.bind(1, result_id).bind(2, file);
  if (!q.step()) {
    *err = error_response(404, "unknown-run", "result " + result + " has no run " + file,
                          "its runs: " + run_files(c, result_id) +
                              " (`referee compare --round R --benchmark B ORG/SYSTEM ... --json` lists them too)");
    return false;
  }
  out->run_id = q.col_int(0);
  std::string path = q.col_text(1) + "/results/" + q.col_text(2) + "/" + q.col_text(3) + "/" + file;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = error_response(422, "missing-log", "the log " + path + " of run " + file + " is not on disk",
                          "the package was imported from there; restore it or quote the lines as a check message");
    return false;
  }
  std::string line;
  long long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n < out->first_line) continue;
    if (n > out->last_line) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out->quoted += std::to_string(n) + ": " + line + "\n";
  }
  if (n < out->last_line) {
    *err = error_response(422, "bad-lines", path + " has " + std::to_string(n) + " lines, not " + lines);
    return false;
  }
  out->kind = "lines";
  return true;
}

// One item of an evidence array.
bool parse_evidence(Context& c, const Json& item, long long round_id, const std::vector<long long>& results,
                    EvidenceIn* out, Response* err) {
  static const char* const kFields[] = {"finding", "result", "file", "lines", "figure", "value", "unit",
                                        "impact_minutes", "check", "note"};
  if (item.kind != Json::Kind::Object) {
    *err = error_response(400, "bad-field", "each evidence item must be an object");
    return false;
  }
  for (const auto& [k, v] : item.fields)
    if (std::find_if(std::begin(kFields), std::end(kFields), [&](const char* f) { return k == f; }) == std::end(kFields)) {
      *err = error_response(400, "unknown-field", "unknown field '" + k + "' in an evidence item",
                            "evidence is {finding}, {result, file, lines}, {figure, value, unit, impact_minutes} or "
                            "{check}, each with an optional note");
      return false;
    }
  if (!body_string(item, "note", false, &out->note, err)) return false;
  if (item.find("finding")) {
    long long id = 0;
    if (!body_int(item, "finding", true, &id, nullptr, err)) return false;
    return evidence_finding(c, id, round_id, out, err);
  }
  if (item.find("file") || item.find("lines") || item.find("result")) {
    std::string result, file, lines;
    if (!body_string(item, "result", true, &result, err) || !body_string(item, "file", true, &file, err) ||
        !body_string(item, "lines", true, &lines, err))
      return false;
    return evidence_lines(c, round_id, results, result, file, lines, out, err);
  }
  if (item.find("figure")) {
    bool has_value = false;
    if (!body_string(item, "figure", true, &out->figure_name, err) ||
        !body_number(item, "value", true, &out->figure_value, &has_value, err) ||
        !body_string(item, "unit", false, &out->figure_unit, err) ||
        !body_number(item, "impact_minutes", false, &out->impact, &out->has_impact, err))
      return false;
    if (out->has_impact && !(out->impact > 0)) {
      *err = error_response(400, "bad-field", "impact_minutes must be a score in minutes, above 0");
      return false;
    }
    out->kind = "figure";
    return true;
  }
  if (item.find("check")) {
    if (!body_string(item, "check", true, &out->quoted, err)) return false;
    if (out->quoted.empty()) {
      *err = error_response(400, "bad-field", "check: the message is empty");
      return false;
    }
    out->kind = "check";
    return true;
  }
  *err = error_response(400, "bad-field", "an evidence item names no finding, lines, figure or check");
  return false;
}

// `results`: the objection's results (log lines must come from one of them).
bool parse_evidence_array(Context& c, const Json& body, long long round_id, const std::vector<long long>& results,
                          std::vector<EvidenceIn>* out, Response* err) {
  const Json* ev = body.find("evidence");
  if (!ev || ev->kind == Json::Kind::Null) return true;
  if (ev->kind != Json::Kind::Array) {
    *err = error_response(400, "bad-field", "field 'evidence' must be an array of evidence items");
    return false;
  }
  if (ev->items.size() > 100) {
    *err = error_response(400, "bad-field", "at most 100 evidence items per request");
    return false;
  }
  for (const auto& item : ev->items) {
    EvidenceIn e;
    if (!parse_evidence(c, item, round_id, results, &e, err)) return false;
    out->push_back(std::move(e));
  }
  return true;
}

bool insert_evidence(Context& c, long long objection_id, const EvidenceIn& e, Response* err) {
  submissions::Stmt ins(c.store.db(),
                        "INSERT INTO evidence (objection_id, kind, finding_id, run_id, first_line, last_line, quoted, "
                        "figure_name, figure_value, figure_unit, note, user_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, "
                        "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  ins.bind(1, objection_id).bind(2, e.kind);
  if (e.finding_id) ins.bind(3, e.finding_id); else ins.bind_null(3);
  if (e.run_id) ins.bind(4, e.run_id).bind(5, e.first_line).bind(6, e.last_line);
  else ins.bind_null(4).bind_null(5).bind_null(6);
  if (e.quoted.empty()) ins.bind_null(7); else ins.bind(7, e.quoted);
  if (e.kind == "figure") ins.bind(8, e.figure_name).bind(9, e.figure_value).bind(10, e.figure_unit);
  else ins.bind_null(8).bind_null(9).bind_null(10);
  if (e.note.empty()) ins.bind_null(11); else ins.bind(11, e.note);
  if (c.who.user_id) ins.bind(12, c.who.user_id); else ins.bind_null(12);
  ins.bind(13, now_utc());
  if (!ins.run()) {
    *err = store_error(c.store, ins.rc(), "storing evidence");
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ impact

struct ResultScore {
  bool has_score = false, has_unscaled = false, has_norm = false;
  double score = 0, unscaled = 0, norm = 0;
  long long rcp_pass = -1;  // -1 unknown
};

ResultScore read_score(submissions::Store& s, long long result_id) {
  ResultScore r;
  submissions::Stmt q(s.db(), "SELECT score_minutes, unscaled_minutes, rcp_norm_factor, rcp_pass FROM results WHERE id = ?1");
  q.bind(1, result_id);
  if (!q.step()) return r;
  r.has_score = !q.col_null(0);
  r.score = q.col_double(0);
  r.has_unscaled = !q.col_null(1);
  r.unscaled = q.col_double(1);
  r.has_norm = !q.col_null(2);
  r.norm = q.col_double(2);
  if (!q.col_null(3)) r.rcp_pass = q.col_int(3);
  return r;
}

// What the first result's score would be if the objection holds. *basis
// says how it was found, or why it is unknown (then false).
bool compute_impact(Context& c, long long result_id, const std::string& rule, const std::string& finding_kind,
                    const std::vector<EvidenceIn>& evidence, const std::vector<std::string>& drop_runs, double* impact,
                    std::string* basis, Response* err) {
  for (const auto& e : evidence)
    if (e.has_impact) {
      *impact = e.impact;
      *basis = e.kind == "finding" ? "the impact of finding " + std::to_string(e.finding_id)
                                   : "the impact given with figure " + e.figure_name;
      return true;
    }
  ResultScore rs = read_score(c.store, result_id);
  if (!drop_runs.empty()) {
    std::vector<double> kept;
    std::set<std::string> dropped;
    submissions::Stmt q(c.store.db(),
                        "SELECT file, minutes FROM runs WHERE result_id = ?1 AND compliant = 1 AND converged = 1 AND "
                        "minutes IS NOT NULL ORDER BY file");
    q.bind(1, result_id);
    while (q.step()) {
      std::string file = q.col_text(0);
      if (std::find(drop_runs.begin(), drop_runs.end(), file) != drop_runs.end()) dropped.insert(file);
      else kept.push_back(q.col_double(1));
    }
    for (const auto& d : drop_runs)
      if (!dropped.count(d)) {
        *err = error_response(404, "unknown-run", "drop_runs: " + d + " is not a converged, compliant run of " +
                                                      result_name(c.store, result_id),
                              "its runs: " + run_files(c, result_id));
        return false;
      }
    // A result needs its required number of runs (at least the olympic minimum, 2 x drop + 1).
    const int drop = submissions::olympic_drop(c.store, result_id);
    long long required = 2 * drop + 1;
    {
      submissions::Stmt e(c.store.db(), "SELECT COALESCE(expected_count, 0) FROM results WHERE id = ?1");
      e.bind(1, result_id);
      if (e.step()) required = std::max(required, e.col_int(0));
    }
    if (static_cast<long long>(kept.size()) < required) {
      *basis = "not scorable: " + std::to_string(kept.size()) + " converged run" + (kept.size() == 1 ? "" : "s") +
               " would remain where " + result_name(c.store, result_id) + " needs " + std::to_string(required);
      return false;
    }
    double mean = rules::olympic_mean(kept, drop);
    // The published score carries the package's scaling factor: keep it.
    double scale = rs.has_score && rs.has_unscaled && rs.unscaled > 0 ? rs.score / rs.unscaled : 1.0;
    *impact = mean * scale;
    *basis = "the olympic mean of the " + std::to_string(kept.size()) + " remaining runs";
    return true;
  }
  std::string k = lower(rule + " " + finding_kind);
  if (k.find("rcp") != std::string::npos) {
    if (rs.has_norm && rs.has_unscaled && rs.norm > 0) {
      *impact = rs.unscaled * rs.norm;
      *basis = "the unscaled score times the RCP normalisation factor " + factor_text(rs.norm);
      return true;
    }
    *basis = "unknown: the result has no RCP normalisation factor";
    return false;
  }
  *basis = "unknown: no finding or figure gives it, no runs are dropped and it is not an RCP failure";
  return false;
}

// -------------------------------------------------------------- rendering

void write_opt_text(JsonWriter& w, const char* key, submissions::Stmt& q, int col) {
  w.key(key);
  if (q.col_null(col)) w.null(); else w.value(q.col_text(col));
}
void write_opt_number(JsonWriter& w, const char* key, submissions::Stmt& q, int col) {
  w.key(key);
  if (q.col_null(col)) w.null(); else w.value(q.col_double(col));
}

void write_objection(Context& c, JsonWriter& w, const Objection& o, const RoundInfo& round, bool full) {
  w.begin_object().key("id").value(o.id).key("round").value(round.name).key("round_state").value(round.state);
  w.key("by").value(o.by).key("against").value(o.against).key("filed_by").value(o.filed_by);
  w.key("title").value(o.title).key("rule").value(o.rule).key("state").value(o.state).key("version").value(o.version);
  w.key("created_at").value(o.created_at);
  w.key("finding");
  if (o.finding_id) w.value(o.finding_id); else w.null();
  w.key("results").begin_array();
  for (long long r : o.results) w.value(result_name(c.store, r));
  w.end_array();
  // Impact on the first result.
  w.key("impact").begin_object();
  ResultScore rs = o.results.empty() ? ResultScore{} : read_score(c.store, o.results[0]);
  w.key("result");
  if (o.results.empty()) w.null(); else w.value(result_name(c.store, o.results[0]));
  w.key("score_minutes");
  if (rs.has_score) w.value(rs.score); else w.null();
  w.key("minutes");
  if (o.has_impact) w.value(o.impact); else w.null();
  if (o.has_impact && rs.has_score && rs.score > 0) {
    double pct = (o.impact - rs.score) / rs.score * 100.0;
    w.key("change_percent").value(std::round(pct * 1000.0) / 1000.0);
    w.key("under_waiver_threshold").value(std::fabs(pct) < 2.0);
  } else {
    w.key("change_percent").null().key("under_waiver_threshold").null();
  }
  w.end_object();
  if (!full) {
    w.end_object();
    return;
  }
  w.key("text").value(o.text);
  w.key("deadlines").begin_object();
  auto dl = [&](const char* k, const std::string& v) {
    w.key(k);
    if (v.empty()) w.null(); else w.value(v);
  };
  dl("objections_due", round.objections_due);
  dl("responses_due", round.responses_due);
  dl("decisions_due", round.decisions_due);
  dl("scores_final", round.scores_final);
  w.end_object();
  w.key("evidence").begin_array();
  {
    submissions::Stmt q(c.store.db(),
                        "SELECT e.id, e.kind, e.finding_id, r.file, e.first_line, e.last_line, e.quoted, e.figure_name, "
                        "e.figure_value, e.figure_unit, e.note, COALESCE(u.name, 'local-admin'), e.created_at, e.run_id "
                        "FROM evidence e LEFT JOIN runs r ON r.id = e.run_id LEFT JOIN users u ON u.id = e.user_id "
                        "WHERE e.objection_id = ?1 ORDER BY e.id");
    q.bind(1, o.id);
    while (q.step()) {
      w.begin_object().key("id").value(q.col_int(0)).key("kind").value(q.col_text(1));
      w.key("finding");
      if (q.col_null(2)) w.null(); else w.value(q.col_int(2));
      if (!q.col_null(13)) {
        submissions::Stmt rr(c.store.db(), "SELECT result_id FROM runs WHERE id = ?1");
        rr.bind(1, q.col_int(13));
        w.key("result").value(rr.step() ? result_name(c.store, rr.col_int(0)) : std::string());
      }
      write_opt_text(w, "file", q, 3);
      w.key("first_line");
      if (q.col_null(4)) w.null(); else w.value(q.col_int(4));
      w.key("last_line");
      if (q.col_null(5)) w.null(); else w.value(q.col_int(5));
      write_opt_text(w, "quoted", q, 6);
      write_opt_text(w, "figure", q, 7);
      write_opt_number(w, "value", q, 8);
      write_opt_text(w, "unit", q, 9);
      write_opt_text(w, "note", q, 10);
      w.key("by").value(q.col_text(11)).key("created_at").value(q.col_text(12)).end_object();
    }
  }
  w.end_array();
  w.key("responses").begin_array();
  {
    submissions::Stmt q(c.store.db(),
                        "SELECT s.id, o.name, COALESCE(u.name, 'local-admin'), s.text, s.remedy, s.factor, s.created_at "
                        "FROM responses s JOIN organisations o ON o.id = s.organisation_id LEFT JOIN users u ON u.id = "
                        "s.user_id WHERE s.objection_id = ?1 ORDER BY s.id");
    q.bind(1, o.id);
    while (q.step()) {
      w.begin_object().key("id").value(q.col_int(0)).key("organisation").value(q.col_text(1));
      w.key("by").value(q.col_text(2)).key("text").value(q.col_text(3));
      write_opt_text(w, "remedy", q, 4);
      write_opt_number(w, "factor", q, 5);
      w.key("created_at").value(q.col_text(6)).end_object();
    }
  }
  w.end_array();
  w.key("votes").begin_array();
  {
    submissions::Stmt q(c.store.db(),
                        "SELECT o.name, COALESCE(u.name, 'local-admin'), v.vote, v.remedy, v.factor, v.created_at FROM "
                        "votes v JOIN organisations o ON o.id = v.organisation_id LEFT JOIN users u ON u.id = v.user_id "
                        "WHERE v.objection_id = ?1 ORDER BY o.name");
    q.bind(1, o.id);
    while (q.step()) {
      w.begin_object().key("organisation").value(q.col_text(0)).key("by").value(q.col_text(1));
      w.key("vote").value(q.col_text(2));
      write_opt_text(w, "remedy", q, 3);
      write_opt_number(w, "factor", q, 4);
      w.key("created_at").value(q.col_text(5)).end_object();
    }
  }
  w.end_array();
  w.key("decision");
  {
    submissions::Stmt q(c.store.db(),
                        "SELECT d.id, d.outcome, d.remedy, d.factor, d.votes_uphold, d.votes_reject, d.votes_abstain, "
                        "d.majority, COALESCE(u.name, 'local-admin'), d.text, d.created_at FROM decisions d LEFT JOIN "
                        "users u ON u.id = d.decided_by WHERE d.objection_id = ?1");
    q.bind(1, o.id);
    if (q.step()) {
      w.begin_object().key("id").value(q.col_int(0)).key("outcome").value(q.col_text(1));
      w.key("remedy").value(q.col_text(2));
      write_opt_number(w, "factor", q, 3);
      w.key("votes").begin_object().key("uphold").value(q.col_int(4)).key("reject").value(q.col_int(5));
      w.key("abstain").value(q.col_int(6)).end_object();
      w.key("majority").value(q.col_text(7)).key("decided_by").value(q.col_text(8));
      write_opt_text(w, "text", q, 9);
      w.key("created_at").value(q.col_text(10)).end_object();
    } else {
      w.null();
    }
  }
  // Amended decisions: each as it was, from its decision.amend event, oldest
  // first; a withdrawal: who, when and why, from its objection.withdraw event.
  std::string withdrawn_by, withdrawn_at, withdrawal_text;
  w.key("superseded").begin_array();
  {
    std::string error, subject = "objection/" + std::to_string(o.id);
    for (const auto& e : read_events(c.store, subject, &error)) {
      if (e.subject != subject || (e.action != "decision.amend" && e.action != "objection.withdraw")) continue;
      Json pj;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &pj, &perr)) continue;
      if (e.action == "objection.withdraw") {
        withdrawn_by = e.actor;
        withdrawn_at = e.at;
        const Json* t = pj.find("text");
        withdrawal_text = t && t->kind == Json::Kind::String ? t->s : "";
        continue;
      }
      const Json* before = pj.find("before");
      const Json* why = pj.find("reason");
      if (!before || before->kind != Json::Kind::Object) continue;
      w.begin_object().key("decision").begin_object();
      for (const char* k : {"outcome", "remedy", "factor", "majority", "decided_by", "text", "created_at"}) {
        const Json* v = before->find(k);
        w.key(k);
        if (!v || v->kind == Json::Kind::Null) w.null();
        else if (v->kind == Json::Kind::String) w.value(v->s);
        else if (v->kind == Json::Kind::Int) w.value(v->i);
        else if (v->kind == Json::Kind::Float) w.value(v->f);
        else w.null();
      }
      w.end_object();
      w.key("amended_at").value(e.at).key("amended_by").value(e.actor);
      w.key("reason").value(why && why->kind == Json::Kind::String ? why->s : std::string()).end_object();
    }
  }
  w.end_array();
  w.key("withdrawal");
  if (withdrawn_by.empty()) w.null();
  else w.begin_object().key("by").value(withdrawn_by).key("at").value(withdrawn_at).key("text").value(withdrawal_text).end_object();
  w.end_object();
}

Response show_response(Context& c, long long id, int status = 200, const std::string& extra_key = "",
                       const std::string& extra_value = "") {
  Objection o;
  RoundInfo round;
  Response err;
  if (!load_objection(c, std::to_string(id), &o, &round, &err)) return err;
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("objection");
  write_objection(c, w, o, round, true);
  if (!extra_key.empty()) w.key(extra_key).value(extra_value);
  w.end_object();
  return json_response(w.str(), status);
}

// --------------------------------------------------------- result status

// Filing: every result gets objection-open unless the review already decided it.
bool mark_open(Context& c, long long objection_id, const std::vector<long long>& results, Response* err) {
  for (long long r : results) {
    submissions::Stmt q(c.store.db(),
                        "INSERT INTO result_status (result_id, status, objection_id, updated_at) VALUES (?1, "
                        "'objection-open', ?2, ?3) ON CONFLICT(result_id) DO NOTHING");
    q.bind(1, r).bind(2, objection_id).bind(3, now_utc());
    if (!q.run()) {
      *err = store_error(c.store, q.rc(), "marking the result's status");
      return false;
    }
  }
  return true;
}

// Rejected, waived, withdrawn or upheld without remedy: an objection-open
// status goes, or points at another open objection of the result.
bool clear_open(Context& c, long long objection_id, const std::vector<long long>& results, Response* err) {
  for (long long r : results) {
    submissions::Stmt other(c.store.db(),
                            "SELECT j.id FROM objections j JOIN objection_results x ON x.objection_id = j.id WHERE "
                            "x.result_id = ?1 AND j.id <> ?2 AND j.state IN ('open', 'responded') ORDER BY j.id LIMIT 1");
    other.bind(1, r).bind(2, objection_id);
    bool another = other.step();
    long long other_id = another ? other.col_int(0) : 0;
    submissions::Stmt q(c.store.db(),
                        another ? "UPDATE result_status SET objection_id = ?2, updated_at = ?3 WHERE result_id = ?1 AND "
                                  "status = 'objection-open'"
                                : "DELETE FROM result_status WHERE result_id = ?1 AND status = 'objection-open' AND "
                                  "(?2 = ?2) AND (?3 = ?3)");
    q.bind(1, r).bind(2, other_id).bind(3, now_utc());
    if (!q.run()) {
      *err = store_error(c.store, q.rc(), "updating the result's status");
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------ routes

void write_payload_common(JsonWriter& p, const Objection& o, const RoundInfo& round) {
  p.key("objection").value(o.id).key("round").value(round.name).key("by").value(o.by).key("against").value(o.against);
}

bool check_version(const Context& c, const Json& body, const Objection& o, Response* err) {
  long long v = 0;
  bool present = false;
  if (!body_int(body, "version", false, &v, &present, err)) return false;
  if (!present && !c.req.if_match.empty()) {
    if (!if_match_version(c.req.if_match, &v)) {
      *err = error_response(400, "bad-request", "If-Match '" + c.req.if_match + "' is not a version number");
      return false;
    }
    present = true;
  }
  if (present && v != o.version) {
    *err = error_response(409, "stale", "objection " + std::to_string(o.id) + " changed since you read it (version " +
                                             std::to_string(v) + ", now " + std::to_string(o.version) + ")",
                          "read it again (referee objection show " + std::to_string(o.id) + ") and retry with --version " +
                              std::to_string(o.version) + " (API: `version`)");
    return false;
  }
  return true;
}

bool bump(Context& c, const Objection& o, const std::string& new_state, Response* err) {
  submissions::Stmt q(c.store.db(), "UPDATE objections SET version = version + 1, state = ?3 WHERE id = ?1 AND version = ?2");
  q.bind(1, o.id).bind(2, o.version).bind(3, new_state);
  if (!q.run()) {
    *err = store_error(c.store, q.rc(), "updating the objection");
    return false;
  }
  if (sqlite3_changes(c.store.db()) != 1) {
    *err = error_response(409, "stale", "objection " + std::to_string(o.id) + " changed while this request ran", "retry");
    return false;
  }
  return true;
}

bool still_open(const Objection& o, Response* err) {
  if (o.state == "open" || o.state == "responded") return true;
  *err = error_response(422, "closed", "objection " + std::to_string(o.id) + " is " + o.state + ": it takes no more changes");
  return false;
}

Response file_objection(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"round", "against", "results", "title", "rule", "text", "finding", "evidence", "drop_runs",
                          "override"},
                  &body, &err))
    return err;
  std::string round_text, against, title, rule, text, override_reason;
  std::vector<std::string> results, drop_runs;
  long long finding_id = 0;
  bool has_finding = false;
  if (!body_string(body, "round", false, &round_text, &err) || !body_string(body, "against", false, &against, &err) ||
      !body_strings(body, "results", false, &results, &err) || !body_string(body, "title", false, &title, &err) ||
      !body_string(body, "rule", false, &rule, &err) || !body_string(body, "text", false, &text, &err) ||
      !body_int(body, "finding", false, &finding_id, &has_finding, &err) ||
      !body_strings(body, "drop_runs", false, &drop_runs, &err) ||
      !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (c.who.organisation.empty())
    return forbidden("an objection is filed by an organisation; " + c.who.user + " acts for none",
                     "file it as a member of the objecting organisation");
  Finding f;
  if (has_finding) {
    if (!load_finding(c.store, finding_id, &f))
      return error_response(404, "unknown-finding", "no finding " + std::to_string(finding_id),
                            "referee audit lists findings");
    submissions::Stmt q(c.store.db(), "SELECT r.name, o.name FROM rounds r, organisations o WHERE r.id = ?1 AND o.id = ?2");
    q.bind(1, f.round_id).bind(2, f.org_id);
    if (q.step()) {
      if (round_text.empty()) round_text = q.col_text(0);
      if (against.empty()) against = q.col_text(1);
    }
    if (results.empty() && f.result_id) results.push_back(result_name(c.store, f.result_id));
    if (rule.empty()) rule = f.rule;
    if (title.empty()) title = f.summary;
  }
  if (round_text.empty()) return error_response(400, "missing-field", "--round R (API field `round`) is required");
  if (against.empty()) return error_response(400, "missing-field", "--against ORG (API field `against`) is required");
  if (results.empty())
    return error_response(400, "missing-field", "no result named: --result ORG/SYSTEM/BENCHMARK (API field `results`) is required");
  if (title.empty()) return error_response(400, "missing-field", "--title TEXT (API field `title`) is required");
  if (rule.empty())
    return error_response(400, "missing-field", "--rule RULE (API field `rule`) is required",
                          "cite the rule file and key (training_3.1.0/closed_common.yaml: ...) or the policy section");
  if (title.size() > 500 || rule.size() > 500 || text.size() > 100000)
    return error_response(400, "bad-field", "title and rule take at most 500 bytes, text 100000");
  RoundInfo round;
  if (!load_round(c, round_text, &round, &err)) return err;
  if (has_finding && f.round_id != round.id)
    return error_response(404, "unknown-finding", "finding " + std::to_string(finding_id) + " is not of round " + round.name);
  long long by_id = 0, against_id = 0;
  std::string by_name, against_name;
  if (!find_organisation(c.store, c.who.organisation, &by_id, &by_name))
    return error_response(422, "unknown-organisation", "organisation " + c.who.organisation + " is not in the store");
  if (!find_organisation(c.store, against, &against_id, &against_name) || !submitted(c.store, round.id, against_id))
    return error_response(404, "unknown-organisation", "organisation " + against + " did not submit to " + round.name);
  if (by_id == against_id)
    return forbidden("an organisation cannot object to its own results", "withdraw or fix them instead");
  std::vector<long long> result_ids;
  for (const auto& name : results) {
    long long rid = 0, org = 0;
    if (!find_result(c.store, round.id, name, &rid, &org, &err)) return err;
    if (org != against_id)
      return error_response(422, "wrong-organisation", "result " + name + " is not " + against_name + "'s",
                            "an objection is against one organisation's results");
    if (std::find(result_ids.begin(), result_ids.end(), rid) == result_ids.end()) result_ids.push_back(rid);
  }
  std::string overridden;
  if (!check_deadline(c, round, "objections_due", override_reason, &overridden, &err)) return err;
  if (!check_not_final(round, "new objections", override_reason, &overridden, &err)) return err;
  std::vector<EvidenceIn> evidence;
  if (has_finding) {
    EvidenceIn e;
    if (!evidence_finding(c, finding_id, round.id, &e, &err)) return err;
    evidence.push_back(std::move(e));
  }
  if (!parse_evidence_array(c, body, round.id, result_ids, &evidence, &err)) return err;
  if (!drop_runs.empty()) {
    // Which runs would not count is part of the objection: kept as a check item.
    EvidenceIn e;
    e.kind = "check";
    e.quoted = "runs that would not count if the objection holds:";
    for (const auto& d : drop_runs) e.quoted += " " + d;
    evidence.push_back(std::move(e));
  }
  double impact = 0;
  std::string basis;
  bool has_impact =
      compute_impact(c, result_ids[0], rule, f.kind, evidence, drop_runs, &impact, &basis, &err);
  if (!has_impact && err.status != 200) return err;

  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  submissions::Stmt ins(c.store.db(),
                        "INSERT INTO objections (round_id, by_org, against_org, filed_by, title, rule, text, finding_id, "
                        "state, impact_minutes, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?10)");
  ins.bind(1, round.id).bind(2, by_id).bind(3, against_id);
  if (c.who.user_id) ins.bind(4, c.who.user_id); else ins.bind_null(4);
  ins.bind(5, title).bind(6, rule).bind(7, text);
  if (has_finding) ins.bind(8, finding_id); else ins.bind_null(8);
  if (has_impact) ins.bind(9, impact); else ins.bind_null(9);
  ins.bind(10, now_utc());
  if (!ins.run()) return store_error(c.store, ins.rc(), "filing the objection");
  long long id = sqlite3_last_insert_rowid(c.store.db());
  for (long long r : result_ids) {
    submissions::Stmt x(c.store.db(), "INSERT INTO objection_results (objection_id, result_id) VALUES (?1, ?2)");
    x.bind(1, id).bind(2, r);
    if (!x.run()) return store_error(c.store, x.rc(), "linking the results");
  }
  for (const auto& e : evidence)
    if (!insert_evidence(c, id, e, &err)) return err;
  if (!mark_open(c, id, result_ids, &err)) return err;
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object().key("objection").value(id).key("round").value(round.name).key("by").value(by_name);
  p.key("against").value(against_name).key("results").begin_array();
  for (const auto& r : result_ids) p.value(result_name(c.store, r));
  p.end_array().key("title").value(title).key("rule").value(rule).key("evidence").value(static_cast<long long>(evidence.size()));
  p.key("impact_minutes");
  if (has_impact) p.value(impact); else p.null();
  p.key("impact_basis").value(basis);
  if (!drop_runs.empty()) {
    p.key("drop_runs").begin_array();
    for (const auto& d : drop_runs) p.value(d);
    p.end_array();
  }
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  p.end_object();
  if (!tx.commit(c.who, "objection.file", "objection/" + std::to_string(id), p.str(), &err)) return err;
  return show_response(c, id, 201, "impact_basis", basis);
}

Response list_objections(Context& c) {
  std::string round_text = c.query("round"), state = c.query("state"), by = c.query("by"), against = c.query("against");
  long long round_id = 0;
  if (!round_text.empty()) {
    RoundInfo r;
    Response err;
    if (!load_round(c, round_text, &r, &err)) return err;
    round_id = r.id;
  }
  if (!state.empty() && state != "open" && state != "responded" && state != "decided" && state != "withdrawn")
    return error_response(400, "bad-query", "state '" + state + "' is not open, responded, decided or withdrawn");
  submissions::Stmt q(c.store.db(),
                      "SELECT j.id FROM objections j JOIN organisations b ON b.id = j.by_org JOIN organisations a ON "
                      "a.id = j.against_org WHERE (?1 = 0 OR j.round_id = ?1) AND (?2 = '' OR j.state = ?2) AND (?3 = '' "
                      "OR b.name = ?3 COLLATE NOCASE) AND (?4 = '' OR a.name = ?4 COLLATE NOCASE) ORDER BY j.id");
  q.bind(1, round_id).bind(2, state).bind(3, by).bind(4, against);
  std::vector<long long> ids;
  while (q.step()) ids.push_back(q.col_int(0));
  if (!q.ok()) return store_error(c.store, q.rc(), "reading objections");
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("objections").begin_array();
  for (long long id : ids) {
    Objection o;
    RoundInfo r;
    Response err;
    if (!load_objection(c, std::to_string(id), &o, &r, &err)) {
      if (err.status == 404) continue;  // embargoed
      return err;
    }
    write_objection(c, w, o, r, false);
  }
  w.end_array().end_object();
  return json_response(w.str());
}

Response show_objection(Context& c) {
  Objection o;
  RoundInfo round;
  Response err;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  return show_response(c, o.id);
}

Response add_evidence(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"evidence", "version", "override"}, &body, &err)) return err;
  std::string override_reason;
  if (!body_string(body, "override", false, &override_reason, &err)) return err;
  // Read and changed in one transaction: concurrent writers queue, none is lost.
  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  Objection o;
  RoundInfo round;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  long long org_id = 0;
  bool party = find_organisation(c.store, c.who.organisation, &org_id, nullptr) &&
               (org_id == o.by_org || org_id == o.against_org);
  if (!party && c.who.role != Role::Chair)
    return forbidden("evidence is added by the objecting or the accused organisation, or a chair");
  if (!still_open(o, &err)) return err;
  if (!check_version(c, body, o, &err)) return err;
  std::string deadline = party && org_id == o.by_org ? "objections_due" : party ? "responses_due" : "decisions_due";
  std::string overridden;
  if (!check_deadline(c, round, deadline, override_reason, &overridden, &err)) return err;
  if (!check_not_final(round, "new evidence", override_reason, &overridden, &err)) return err;
  std::vector<EvidenceIn> evidence;
  if (!parse_evidence_array(c, body, round.id, o.results, &evidence, &err)) return err;
  if (evidence.empty()) return error_response(400, "missing-field", "field 'evidence' is required (one item or more)");
  bool new_impact = false;
  double impact = 0;
  for (const auto& e : evidence) {
    if (!insert_evidence(c, o.id, e, &err)) return err;
    if (e.has_impact && !new_impact) {  // a finding's or figure's impact replaces the one computed at filing
      new_impact = true;
      impact = e.impact;
    }
  }
  if (!bump(c, o, o.state, &err)) return err;
  if (new_impact) {
    submissions::Stmt up(c.store.db(), "UPDATE objections SET impact_minutes = ?2 WHERE id = ?1");
    up.bind(1, o.id).bind(2, impact);
    if (!up.run()) return store_error(c.store, up.rc(), "updating the score impact");
  }
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object();
  write_payload_common(p, o, round);
  p.key("kinds").begin_array();
  for (const auto& e : evidence) p.value(e.kind);
  p.end_array();
  if (new_impact) p.key("impact_minutes").value(impact);
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  p.end_object();
  if (!tx.commit(c.who, "evidence.add", "objection/" + std::to_string(o.id), p.str(), &err)) return err;
  return show_response(c, o.id, 201);
}

Response respond(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"text", "remedy", "factor", "version", "override"}, &body, &err)) return err;
  std::string text, remedy, override_reason;
  double factor = 0;
  bool has_factor = false;
  if (!body_string(body, "text", true, &text, &err) || !body_string(body, "remedy", false, &remedy, &err) ||
      !body_number(body, "factor", false, &factor, &has_factor, &err) ||
      !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (text.empty() || text.size() > 100000) return error_response(400, "bad-field", "text: 1 to 100000 bytes");
  if (!remedy.empty() && !valid_remedy(remedy))
    return error_response(400, "bad-field", "remedy '" + remedy + "' is not none, fix, open, withdraw or normalise");
  if (!check_factor(remedy, has_factor, factor, &err)) return err;
  // Read and changed in one transaction: concurrent writers queue, none is lost.
  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  Objection o;
  RoundInfo round;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  long long org_id = 0;
  if (!find_organisation(c.store, c.who.organisation, &org_id, nullptr) || org_id != o.against_org)
    return forbidden("only the accused organisation (" + o.against + ") responds to objection " + std::to_string(o.id));
  if (!still_open(o, &err)) return err;
  if (!check_version(c, body, o, &err)) return err;
  std::string overridden;
  if (!check_deadline(c, round, "responses_due", override_reason, &overridden, &err)) return err;
  if (!check_not_final(round, "responses", override_reason, &overridden, &err)) return err;
  submissions::Stmt ins(c.store.db(),
                        "INSERT INTO responses (objection_id, organisation_id, user_id, text, remedy, factor, created_at) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  ins.bind(1, o.id).bind(2, org_id);
  if (c.who.user_id) ins.bind(3, c.who.user_id); else ins.bind_null(3);
  ins.bind(4, text);
  if (remedy.empty()) ins.bind_null(5); else ins.bind(5, remedy);
  if (has_factor) ins.bind(6, factor); else ins.bind_null(6);
  ins.bind(7, now_utc());
  if (!ins.run()) return store_error(c.store, ins.rc(), "storing the response");
  if (!bump(c, o, "responded", &err)) return err;
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object();
  write_payload_common(p, o, round);
  p.key("response").value(static_cast<long long>(sqlite3_last_insert_rowid(c.store.db())));
  p.key("remedy").value(remedy.empty() ? "none" : remedy);
  if (has_factor) p.key("factor").value(factor);
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  p.end_object();
  if (!tx.commit(c.who, "response.add", "objection/" + std::to_string(o.id), p.str(), &err)) return err;
  return show_response(c, o.id, 201);
}

Response vote(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"vote", "remedy", "factor", "override"}, &body, &err)) return err;
  std::string v, remedy, override_reason;
  double factor = 0;
  bool has_factor = false;
  if (!body_string(body, "vote", true, &v, &err) || !body_string(body, "remedy", false, &remedy, &err) ||
      !body_number(body, "factor", false, &factor, &has_factor, &err) ||
      !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (v != "uphold" && v != "reject" && v != "abstain")
    return error_response(400, "bad-field", "vote '" + v + "' is not uphold, reject or abstain");
  if (!remedy.empty() && !valid_remedy(remedy))
    return error_response(400, "bad-field", "remedy '" + remedy + "' is not none, fix, open, withdraw or normalise");
  if (v != "uphold" && (!remedy.empty() || has_factor))
    return error_response(400, "bad-field", "a " + v + " vote proposes no remedy or factor",
                          "leave out --remedy and --factor (API fields `remedy`, `factor`), or vote uphold");
  if (!check_factor(remedy, has_factor, factor, &err)) return err;
  // Read and changed in one transaction: concurrent writers queue, none is lost.
  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  Objection o;
  RoundInfo round;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  long long org_id = 0;
  std::string org_name;
  if (!find_organisation(c.store, c.who.organisation, &org_id, &org_name) || !submitted(c.store, round.id, org_id))
    return forbidden("one vote per submitting organisation of " + round.name + "; " + c.who.user +
                     (c.who.organisation.empty() ? " acts for none" : " acts for " + c.who.organisation + ", which did not submit"));
  if (!still_open(o, &err)) return err;
  std::string overridden;
  if (!check_deadline(c, round, "decisions_due", override_reason, &overridden, &err)) return err;
  if (!check_not_final(round, "votes", override_reason, &overridden, &err)) return err;
  submissions::Stmt ins(c.store.db(),
                        "INSERT OR REPLACE INTO votes (objection_id, organisation_id, user_id, vote, remedy, factor, "
                        "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  ins.bind(1, o.id).bind(2, org_id);
  if (c.who.user_id) ins.bind(3, c.who.user_id); else ins.bind_null(3);
  ins.bind(4, v);
  if (remedy.empty()) ins.bind_null(5); else ins.bind(5, remedy);
  if (has_factor) ins.bind(6, factor); else ins.bind_null(6);
  ins.bind(7, now_utc());
  if (!ins.run()) return store_error(c.store, ins.rc(), "storing the vote");
  if (!bump(c, o, o.state, &err)) return err;
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object();
  write_payload_common(p, o, round);
  p.key("organisation").value(org_name).key("vote").value(v);
  if (!remedy.empty()) p.key("remedy").value(remedy);
  if (has_factor) p.key("factor").value(factor);
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  p.end_object();
  if (!tx.commit(c.who, "vote.cast", "objection/" + std::to_string(o.id), p.str(), &err)) return err;
  return show_response(c, o.id, 201);
}

}  // namespace

Outcome decide_outcome(int uphold, int reject, const std::string& remedy, const std::string& tie_break) {
  Outcome out;
  if (uphold == reject) {
    if (tie_break != "uphold" && tie_break != "reject") {
      out.error = "the votes are tied (" + std::to_string(uphold) + " to " + std::to_string(reject) +
                  "): the chair breaks the tie with --tie-break uphold|reject (API field `tie_break`)";
      return out;
    }
    out.outcome = tie_break == "uphold" ? "upheld" : "rejected";
    out.majority = "chair-tie-break";
  } else {
    out.outcome = uphold > reject ? "upheld" : "rejected";
    out.majority = "simple";
  }
  if (out.outcome == "upheld" && (remedy == "withdraw" || remedy == "open")) {
    // Excluding a result or departing from the rules: two thirds of the votes cast.
    if (3 * uphold < 2 * (uphold + reject)) {
      out.outcome.clear();
      out.error = "remedy " + remedy + " needs two thirds of the votes cast: " + std::to_string(uphold) + " of " +
                  std::to_string(uphold + reject) + " uphold";
      return out;
    }
    out.majority = "two-thirds";
  }
  out.ok = true;
  return out;
}

namespace {

Response decide(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"remedy", "factor", "tie_break", "waive", "text", "override", "version", "amend", "reason"},
                  &body, &err))
    return err;
  std::string remedy, tie_break, text, override_reason, reason;
  double factor = 0;
  bool has_factor = false, waive = false, amend = false;
  if (!body_bool(body, "amend", &amend, &err) || !body_string(body, "reason", false, &reason, &err)) return err;
  if (amend && reason.empty())
    return error_response(400, "missing-field", "amending a decision needs a reason",
                          "send one (--reason TEXT, API field `reason`)");
  if (!amend && !reason.empty())
    return error_response(400, "bad-field", "a reason goes with amending a decision only", "add --amend (API: `amend`)");
  if (!body_string(body, "remedy", false, &remedy, &err) ||
      !body_number(body, "factor", false, &factor, &has_factor, &err) ||
      !body_string(body, "tie_break", false, &tie_break, &err) || !body_bool(body, "waive", &waive, &err) ||
      !body_string(body, "text", false, &text, &err) || !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (!remedy.empty() && !valid_remedy(remedy))
    return error_response(400, "bad-field", "remedy '" + remedy + "' is not none, fix, open, withdraw or normalise");
  if (!tie_break.empty() && tie_break != "uphold" && tie_break != "reject")
    return error_response(400, "bad-field", "tie_break '" + tie_break + "' is not uphold or reject");
  if (!check_factor(remedy, has_factor, factor, &err)) return err;
  // Read and changed in one transaction: concurrent writers queue, none is lost.
  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  Objection o;
  RoundInfo round;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  if (c.who.role != Role::Chair) return forbidden("only a review chair records a decision");
  if (!c.who.organisation.empty()) {
    // A chair does not judge their own organisation's case, either side of it.
    long long own = 0;
    std::string spelled;
    if (find_organisation(c.store, c.who.organisation, &own, &spelled) && (own == o.by_org || own == o.against_org))
      return forbidden("a chair of " + spelled + " cannot decide a case " + spelled + " is party to; another chair must",
                       "ask a review chair of another organisation, or one without an organisation");
  }
  if (amend) {
    if (o.state != "decided")
      return error_response(422, "not-decided", "objection " + std::to_string(o.id) + " is " + o.state +
                                                    ": there is no decision to amend");
  } else if (!still_open(o, &err)) {
    return err;
  }
  if (!check_version(c, body, o, &err)) return err;
  std::string overridden;
  if (!check_deadline(c, round, "decisions_due", override_reason, &overridden, &err)) return err;
  if (!amend) {
    // The accused is heard first: its response, or responses_due passed.
    submissions::Stmt q(c.store.db(), "SELECT COUNT(*) FROM responses WHERE objection_id = ?1 AND organisation_id = ?2");
    q.bind(1, o.id).bind(2, o.against_org);
    bool responded = q.step() && q.col_int(0) > 0;
    bool due_passed = !round.responses_due.empty() && now_utc() > deadline_instant(round.responses_due);
    if (!responded && !due_passed) {
      std::string due = round.responses_due.empty() ? "responses_due is not set"
                                                    : "responses_due (" + round.responses_due + ") has not passed";
      if (override_reason.empty())
        return error_response(422, "not-heard",
                              "objection " + std::to_string(o.id) + " has no response from " + o.against + " and " + due,
                              "wait for " + o.against + "'s response or the deadline; a review chair may decide "
                              "earlier with a reason (--override REASON, API field `override`)");
      std::string before = "responses_due (" + (round.responses_due.empty() ? "not set" : round.responses_due) +
                           "): decided before " + o.against + "'s response";
      overridden = overridden.empty() ? before : overridden + "; " + before;
    }
  }
  int up = 0, rej = 0, abst = 0;
  {
    submissions::Stmt q(c.store.db(), "SELECT vote, COUNT(*) FROM votes WHERE objection_id = ?1 GROUP BY vote");
    q.bind(1, o.id);
    while (q.step()) {
      std::string v = q.col_text(0);
      int n = static_cast<int>(q.col_int(1));
      if (v == "uphold") up = n; else if (v == "reject") rej = n; else abst = n;
    }
  }
  Outcome out;
  if (waive) {
    ResultScore rs = o.results.empty() ? ResultScore{} : read_score(c.store, o.results[0]);
    if (!o.has_impact || !rs.has_score || rs.score <= 0)
      return error_response(422, "waiver", "the score impact of objection " + std::to_string(o.id) +
                                               " is unknown: it cannot be waived as under 2%",
                            "add evidence that gives the impact, or decide on the votes");
    double pct = (o.impact - rs.score) / rs.score * 100.0;
    if (std::fabs(pct) >= 2.0)
      return error_response(422, "waiver", "the score impact is " + mllog::json_number(std::round(pct * 1000) / 1000) +
                                               "%: only problems under 2% may be waived");
    if (!remedy.empty() && remedy != "none")
      return error_response(400, "bad-field", "a waived objection has no remedy");
    out.ok = true;
    out.outcome = "waived";
    out.majority = "waiver";
    remedy = "none";
  } else {
    if (up + rej == 0)
      return error_response(422, "no-votes",
                            "objection " + std::to_string(o.id) + " has no uphold or reject vote (" + std::to_string(abst) +
                                " abstaining): a decision needs at least one",
                            "the submitting organisations vote (referee objection vote " + std::to_string(o.id) +
                                " --vote uphold|reject); an impact under 2% may be waived (--waive)");
    if (remedy.empty() && decide_outcome(up, rej, "none", tie_break).outcome == "upheld") {
      // Upheld without a remedy named: the remedy (and factor) most uphold votes proposed.
      submissions::Stmt q(c.store.db(),
                          "SELECT remedy, factor, COUNT(*) AS n FROM votes WHERE objection_id = ?1 AND vote = 'uphold' "
                          "AND remedy IS NOT NULL GROUP BY remedy, factor ORDER BY n DESC, remedy, factor");
      q.bind(1, o.id);
      std::vector<std::tuple<std::string, bool, double, long long>> proposed;
      while (q.step()) proposed.emplace_back(q.col_text(0), !q.col_null(1), q.col_double(1), q.col_int(2));
      auto label = [](const std::tuple<std::string, bool, double, long long>& p) {
        return std::get<0>(p) + (std::get<1>(p) ? " x" + mllog::json_number(std::get<2>(p)) : "") + " (" +
               std::to_string(std::get<3>(p)) + ")";
      };
      if (proposed.size() >= 2 && std::get<3>(proposed[0]) == std::get<3>(proposed[1]))
        return error_response(422, "no-remedy",
                              "the uphold votes propose " + label(proposed[0]) + " and " + label(proposed[1]) +
                                  " equally: the chair names the remedy",
                              "send it (--remedy R [--factor F], API fields `remedy`, `factor`)");
      if (!proposed.empty()) {
        remedy = std::get<0>(proposed[0]);
        has_factor = std::get<1>(proposed[0]);
        factor = std::get<2>(proposed[0]);
      }
    }
    if (remedy.empty()) remedy = "none";
    out = decide_outcome(up, rej, remedy, tie_break);
    if (!out.ok) return error_response(422, "no-majority", out.error);
    if (out.outcome == "rejected") {
      if (remedy != "none") return error_response(422, "rejected", "the votes reject objection " + std::to_string(o.id) +
                                                                         ": there is no remedy (" + remedy + ")");
      has_factor = false;
    }
  }
  // Amending: the decision as it was goes into the event (the history); the row holds the current one.
  long long decision_id = 0;
  std::string before;
  if (amend) {
    submissions::Stmt q(c.store.db(),
                        "SELECT d.id, d.outcome, d.remedy, d.factor, d.majority, COALESCE(u.name, 'local-admin'), d.text, "
                        "d.created_at FROM decisions d LEFT JOIN users u ON u.id = d.decided_by WHERE d.objection_id = ?1 "
                        "ORDER BY d.id DESC LIMIT 1");
    q.bind(1, o.id);
    if (!q.step()) return q.ok() ? error_response(500, "store", "objection " + std::to_string(o.id) + " is decided "
                                                                "but has no decision row")
                                 : store_error(c.store, q.rc(), "reading the decision");
    decision_id = q.col_int(0);
    JsonWriter b(0);
    b.begin_object().key("outcome").value(q.col_text(1)).key("remedy").value(q.col_text(2));
    b.key("factor");
    if (q.col_null(3)) b.null(); else b.value(q.col_double(3));
    b.key("majority").value(q.col_text(4)).key("decided_by").value(q.col_text(5)).key("text");
    if (q.col_null(6)) b.null(); else b.value(q.col_text(6));
    b.key("created_at").value(q.col_text(7)).end_object();
    before = b.str();
    submissions::Stmt del(c.store.db(), "DELETE FROM result_status WHERE decision_id = ?1");
    del.bind(1, decision_id);
    if (!del.run()) return store_error(c.store, del.rc(), "undoing the decision's result status");
  }
  submissions::Stmt ins(c.store.db(),
                        amend ? "UPDATE decisions SET objection_id = ?1, outcome = ?2, remedy = ?3, factor = ?4, "
                                "votes_uphold = ?5, votes_reject = ?6, votes_abstain = ?7, majority = ?8, decided_by = ?9, "
                                "text = ?10, created_at = ?11 WHERE id = ?12"
                              : "INSERT INTO decisions (objection_id, outcome, remedy, factor, votes_uphold, votes_reject, "
                                "votes_abstain, majority, decided_by, text, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                                "?7, ?8, ?9, ?10, ?11)");
  if (amend) ins.bind(12, decision_id);
  ins.bind(1, o.id).bind(2, out.outcome).bind(3, remedy);
  if (has_factor) ins.bind(4, factor); else ins.bind_null(4);
  ins.bind(5, up).bind(6, rej).bind(7, abst).bind(8, out.majority);
  if (c.who.user_id) ins.bind(9, c.who.user_id); else ins.bind_null(9);
  if (text.empty()) ins.bind_null(10); else ins.bind(10, text);
  ins.bind(11, now_utc());
  if (!ins.run()) return store_error(c.store, ins.rc(), "storing the decision");
  if (!amend) decision_id = sqlite3_last_insert_rowid(c.store.db());
  if (!bump(c, o, "decided", &err)) return err;
  std::string status;
  if (out.outcome == "upheld") {
    if (remedy == "fix") status = "fixed";
    else if (remedy == "open") status = "moved-to-open";
    else if (remedy == "withdraw") status = "withdrawn";
    else if (remedy == "normalise") status = "normalised";
  }
  if (status.empty()) {
    if (!clear_open(c, o.id, o.results, &err)) return err;
  } else {
    for (long long r : o.results) {
      submissions::Stmt q(c.store.db(),
                          "INSERT INTO result_status (result_id, status, factor, objection_id, decision_id, updated_at) "
                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(result_id) DO UPDATE SET status = excluded.status, "
                          "factor = excluded.factor, objection_id = excluded.objection_id, decision_id = "
                          "excluded.decision_id, updated_at = excluded.updated_at");
      q.bind(1, r).bind(2, status);
      if (status == "normalised") q.bind(3, factor); else q.bind_null(3);
      q.bind(4, o.id).bind(5, decision_id).bind(6, now_utc());
      if (!q.run()) return store_error(c.store, q.rc(), "setting the result's status");
    }
  }
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object();
  write_payload_common(p, o, round);
  p.key("decision").value(decision_id).key("outcome").value(out.outcome).key("remedy").value(remedy);
  if (has_factor) p.key("factor").value(factor);
  p.key("votes").begin_object().key("uphold").value(up).key("reject").value(rej).key("abstain").value(abst).end_object();
  p.key("majority").value(out.majority);
  if (!status.empty()) p.key("result_status").value(status);
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  if (amend) p.key("reason").value(reason).key("before").raw(before);
  p.end_object();
  if (!tx.commit(c.who, amend ? "decision.amend" : "decision.record", "objection/" + std::to_string(o.id), p.str(), &err))
    return err;
  return show_response(c, o.id, 201);
}

Response withdraw(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"version", "text", "override"}, &body, &err)) return err;
  std::string text, override_reason;
  if (!body_string(body, "text", false, &text, &err) || !body_string(body, "override", false, &override_reason, &err))
    return err;
  // Read and changed in one transaction: concurrent writers queue, none is lost.
  Transaction tx(c.store);
  if (!tx.begin(&err)) return err;
  Objection o;
  RoundInfo round;
  if (!load_objection(c, c.params[0], &o, &round, &err)) return err;
  long long org_id = 0;
  if (!find_organisation(c.store, c.who.organisation, &org_id, nullptr) || org_id != o.by_org)
    return forbidden("only the objecting organisation (" + o.by + ") withdraws objection " + std::to_string(o.id));
  if (!still_open(o, &err)) return err;
  if (!check_version(c, body, o, &err)) return err;
  std::string overridden;
  if (!check_deadline(c, round, "", override_reason, &overridden, &err)) return err;
  if (!bump(c, o, "withdrawn", &err)) return err;
  if (!clear_open(c, o.id, o.results, &err)) return err;
  JsonWriter p(0, mllog::JsonText::kUtf8);
  p.begin_object();
  write_payload_common(p, o, round);
  if (!text.empty()) p.key("text").value(text);
  if (!overridden.empty()) p.key("override").value(override_reason).key("overridden_deadline").value(overridden);
  p.end_object();
  if (!tx.commit(c.who, "objection.withdraw", "objection/" + std::to_string(o.id), p.str(), &err)) return err;
  return show_response(c, o.id);
}

// ---------------------------------------------------------------- the log

// The round an event is about: its payload's "round", or a round/NAME subject.
std::string event_round(const Event& e) {
  if (e.subject.rfind("round/", 0) == 0) return e.subject.substr(6);
  Json j;
  std::string err;
  if (mllog::parse_json_permissive(e.payload_json, &j, &err))
    if (const Json* r = j.find("round"); r && r->kind == Json::Kind::String) return r->s;
  return "";
}

Response read_log(Context& c) {
  std::string subject = c.query("subject"), round_text = c.query("round");
  std::string round_name;
  if (!round_text.empty()) {
    RoundInfo r;
    Response err;
    if (!load_round(c, round_text, &r, &err)) return err;
    round_name = r.name;
  }
  std::string error;
  auto events = read_events(c.store, subject, &error);
  if (!error.empty()) return error_response(500, "store", error);
  std::map<std::string, bool> visible;
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("events").begin_array();
  for (const auto& e : events) {
    // objection/1 names objection/1 and what is under it, not objection/12.
    if (!subject.empty() && e.subject.size() > subject.size() && subject.back() != '/' && e.subject[subject.size()] != '/')
      continue;
    std::string r = event_round(e);
    if (!round_name.empty() && r != round_name) continue;
    if (c.who.role == Role::Member) {
      // A member sees the events of the rounds they can see, nothing else.
      if (r.empty()) continue;
      auto it = visible.find(r);
      if (it == visible.end()) {
        RoundInfo info;
        Response ignored;
        it = visible.emplace(r, load_round(c, r, &info, &ignored)).first;
      }
      if (!it->second) continue;
    }
    w.begin_object().key("seq").value(e.seq).key("at").value(e.at).key("actor").value(e.actor);
    w.key("organisation");
    if (e.organisation.empty()) w.null(); else w.value(e.organisation);
    w.key("role").value(e.role).key("action").value(e.action).key("subject").value(e.subject);
    Json pj;
    std::string perr;
    w.key("payload");
    if (mllog::parse_json_permissive(e.payload_json, &pj, &perr)) w.raw(e.payload_json); else w.value(e.payload_json);
    w.key("hash").value(e.hash).end_object();
  }
  w.end_array().end_object();
  return json_response(w.str());
}

Response verify_log(Context& c) {
  std::string error;
  ChainCheck check = verify_events(c.store, &error);
  if (!error.empty()) return error_response(500, "store", error);
  // The tables against the events, and the head recorded elsewhere (review/verify.h).
  if (check.ok) {
    TableCheck tables = verify_tables(c.store, &error);
    if (!error.empty()) return error_response(500, "store", error);
    if (!tables.ok) check.ok = false, check.problem = tables.problem;
  }
  std::string anchor = c.query("head");
  if (check.ok && !anchor.empty()) {
    std::string problem = check_anchor(c.store, anchor, &error);
    if (!error.empty()) return error_response(500, "store", error);
    if (!problem.empty()) check.ok = false, check.problem = problem;
  }
  LogHead head = log_head(c.store, &error);
  if (!error.empty()) return error_response(500, "store", error);
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("ok").value(check.ok).key("events").value(check.events);
  w.key("head_seq").value(head.seq).key("head_hash").value(head.hash);
  w.key("first_bad");
  if (check.ok || !check.first_bad) w.null(); else w.value(check.first_bad);
  w.key("problem");
  if (check.ok) w.null(); else w.value(check.problem);
  w.end_object();
  return json_response(w.str());
}

}  // namespace

std::vector<Route> objection_routes() {
  return {
      {"POST", "/api/v1/objections", true, file_objection},
      {"GET", "/api/v1/objections", false, list_objections},
      {"GET", "/api/v1/objections/{id}", false, show_objection},
      {"POST", "/api/v1/objections/{id}/evidence", true, add_evidence},
      {"POST", "/api/v1/objections/{id}/responses", true, respond},
      {"POST", "/api/v1/objections/{id}/votes", true, vote},
      {"POST", "/api/v1/objections/{id}/decision", true, decide},
      {"POST", "/api/v1/objections/{id}/withdraw", true, withdraw},
      {"GET", "/api/v1/log", false, read_log},
      {"GET", "/api/v1/log/verify", false, verify_log},
  };
}

}  // namespace referee::review
