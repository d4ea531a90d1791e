// Objections and everything done to them (review/objections.h): evidence,
// responses, votes, the chair's decision, withdrawal; the score impact; the
// objection as the API shows it. Each write is one policy write(): one
// transaction that checks in the policy's order and appends its event.
#include "review/objections.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/invisible.h"
#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/fixes.h"
#include "review/rounds.h"
#include "review/text_format.h"
#include "review/verify.h"
#include "rules/scoring.h"
#include "submissions/queries.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;
using submissions::Stmt;
using submissions::Store;

const char* const kRemedies[] = {"none", "fix", "open", "withdraw", "normalise"};

bool valid_remedy(const std::string& r) {
  for (const char* k : kRemedies)
    if (r == k) return true;
  return false;
}

// A remedy named by a response, vote or decision: "" or one of kRemedies.
bool check_remedy(const std::string& remedy, Error* err) {
  if (remedy.empty() || valid_remedy(remedy)) return true;
  *err = make_error(400, "bad-field", "remedy '" + remedy + "' is not none, fix, open, withdraw or normalise");
  return false;
}

// A factor sent with a remedy: finite, above 0 and at most 100; a
// normalisation only penalises (at least 1). Post: true, or false with *err.
bool check_factor(const std::string& remedy, bool has_factor, double factor, Error* err) {
  if (remedy == "normalise" && !has_factor) {
    *err = make_error(400, "bad-field", "remedy normalise needs a factor", "send one (--factor F, API field `factor`)");
    return false;
  }
  if (!has_factor) return true;
  if (remedy != "normalise") {
    *err = make_error(400, "bad-field", "a factor goes with remedy normalise only");
    return false;
  }
  if (!std::isfinite(factor) || !(factor > 0) || factor > 100) {
    *err = make_error(400, "bad-field", "factor " + mllog::json_number(factor) + " is not above 0 and at most 100");
    return false;
  }
  if (factor < 1) {
    *err = make_error(422, "bad-factor",
                      "factor " + mllog::json_number(factor) +
                          ": a factor below 1 would make the result faster; normalisation only penalises",
                      "send a factor of 1 or more (--factor F, API field `factor`)");
    return false;
  }
  return true;
}

// An objection as stored.
struct Row {
  long long id = 0, round_id = 0, by_org = 0, against_org = 0, finding_id = 0, version = 0;
  std::string by, against, filed_by, title, rule, text, state, created_at;
  std::string votes_due;  // the objection's own vote deadline ("" = the round's decisions_due)
  bool has_impact = false;
  double impact = 0;
  std::vector<long long> results;
};

bool load_row(Store& s, long long id, Row* o, Error* err);

// Reads objection `id` and its round, the embargo first: an objection of a
// round the actor may not see is no_objection(), as an unknown one is.
bool load(Store& s, const Actor& who, long long id, Row* o, RoundInfo* round, Error* err) {
  Stmt r(s.db(), "SELECT round_id FROM objections WHERE id = ?1");
  r.bind(1, id);
  if (!r.step()) {
    *err = r.ok() ? no_objection(std::to_string(id)) : store_error(s, r.rc(), "reading the objection");
    return false;
  }
  if (!find_round_by_id(s, who, r.col_int(0), no_objection(std::to_string(id)), round, err)) return false;
  return load_row(s, id, o, err);
}

// The objection's row and results, its round already found and seen (load).
bool load_row(Store& s, long long id, Row* o, Error* err) {
  Stmt q(s.db(),
         "SELECT j.id, j.round_id, j.by_org, j.against_org, COALESCE(j.finding_id, 0), j.version, b.name, "
         "a.name, u.name, j.title, j.rule, j.text, j.state, j.created_at, j.impact_minutes FROM objections j "
         "JOIN organisations b ON b.id = j.by_org JOIN organisations a ON a.id = j.against_org JOIN users u "
         "ON u.id = j.filed_by WHERE j.id = ?1");
  q.bind(1, id);
  if (!q.step()) {
    *err = q.ok() ? no_objection(std::to_string(id)) : store_error(s, q.rc(), "reading the objection");
    return false;
  }
  q.row(o->id, o->round_id, o->by_org, o->against_org, o->finding_id, o->version, o->by, o->against, o->filed_by,
        o->title, o->rule, o->text, o->state, o->created_at, Stmt::maybe(o->has_impact, o->impact));
  if (s.opened_version() >= 12) {
    Stmt v(s.db(), "SELECT COALESCE(votes_due, '') FROM objections WHERE id = ?1");
    v.bind(1, o->id);
    if (v.step()) o->votes_due = v.col_text(0);
  }
  Stmt x(s.db(), "SELECT result_id FROM objection_results WHERE objection_id = ?1 ORDER BY result_id");
  x.bind(1, o->id);
  while (x.step()) o->results.push_back(x.col_int(0));
  return true;
}

// ---------------------------------------------------------------- evidence

// Evidence resolved against the store, ready to insert.
struct Evidence {
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

bool load_finding(Store& s, long long id, Finding* f) {
  Stmt q(s.db(),
         "SELECT id, round_id, organisation_id, COALESCE(result_id, 0), kind, rule, summary, evidence_json, "
         "impact_minutes FROM findings WHERE id = ?1");
  q.bind(1, id);
  if (!q.step()) return false;
  q.row(f->id, f->round_id, f->org_id, f->result_id, f->kind, f->rule, f->summary, f->evidence_json,
        Stmt::maybe(f->has_impact, f->impact));
  return true;
}

// A finding as evidence: of the objection's round, and about one of its
// results (or, for a finding about no one result, about their organisation):
// a finding about another result would give its impact to this one.
bool evidence_finding(Store& s, long long id, long long round_id, const std::vector<long long>& results, Evidence* out,
                      Error* err) {
  Finding f;
  if (!load_finding(s, id, &f) || f.round_id != round_id) {
    *err = make_error(404, "unknown-finding", "finding " + std::to_string(id) + " is not a finding of this round",
                      "referee audit lists the findings of a round");
    return false;
  }
  bool about = f.result_id ? std::find(results.begin(), results.end(), f.result_id) != results.end() : false;
  if (!f.result_id && !results.empty()) {
    Stmt q(s.db(),
           "SELECT p.organisation_id FROM results x JOIN systems y ON y.id = x.system_id JOIN packages p ON p.id = "
           "y.package_id WHERE x.id = ?1");
    q.bind(1, results[0]);
    about = q.step() && q.col_int(0) == f.org_id;
  }
  if (!about) {
    *err = make_error(422, "unrelated-finding",
                      "finding " + std::to_string(id) + " is about " +
                          (f.result_id ? result_name(s, f.result_id) : std::string("another organisation")) +
                          ", not about this objection's results",
                      "cite a finding about the results objected to (referee audit lists them)");
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
std::string run_files(Store& s, long long result_id) {
  Stmt q(s.db(), "SELECT file FROM runs WHERE result_id = ?1 ORDER BY file");
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

bool evidence_lines(Store& s, long long round_id, const std::vector<long long>& results, const EvidenceItem& in,
                    Evidence* out, Error* err) {
  long long result_id = 0, org_id = 0;
  if (!find_result(s, round_id, in.result, &result_id, &org_id, err)) return false;
  if (std::find(results.begin(), results.end(), result_id) == results.end()) {
    std::string names;
    for (long long r : results) names += (names.empty() ? "" : ", ") + result_name(s, r);
    *err = make_error(422, "not-this-objection",
                      "lines from " + in.result + ": it is not one of the objection's results (" + names + ")",
                      "quote the logs of the results objected to, or file another objection");
    return false;
  }
  if (!parse_lines(in.lines, &out->first_line, &out->last_line)) {
    *err = make_error(400, "bad-field", "lines '" + in.lines + "' is not N or N-M (at most 200 lines, from 1)");
    return false;
  }
  // A run's file is a name in its result's folder: never a path (a store
  // edited to hold one would otherwise quote any file the server can read).
  if (in.file.empty() || in.file.find('/') != std::string::npos || in.file.find('\\') != std::string::npos ||
      in.file[0] == '.') {
    *err = make_error(400, "bad-field", "file '" + in.file + "' is not the name of a run's log (result_N.txt)",
                      "its runs: " + run_files(s, result_id));
    return false;
  }
  Stmt q(s.db(),
         "SELECT r.id, p.path, y.name, x.benchmark, d.name FROM runs r JOIN results x ON x.id = r.result_id JOIN "
         "systems y ON y.id = x.system_id JOIN packages p ON p.id = y.package_id JOIN rounds d ON d.id = p.round_id "
         "WHERE r.result_id = ?1 AND r.file = ?2");
  q.bind(1, result_id).bind(2, in.file);
  if (!q.step()) {
    *err = make_error(404, "unknown-run", "result " + in.result + " has no run " + in.file,
                      "its runs: " + run_files(s, result_id) +
                          " (`referee compare --round R --benchmark B ORG/SYSTEM ... --json` lists them too)");
    return false;
  }
  out->run_id = q.col_int(0);
  std::string path = q.col_text(1) + "/" + submissions::result_dir(q.col_text(4), q.col_text(2), q.col_text(3)) + "/" + in.file;
  // Only a file inside the package is read: a link to anything else (the
  // server's own files) is refused, as if the log were not there.
  std::error_code lec;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, lec);
  const std::filesystem::path root = std::filesystem::weakly_canonical(q.col_text(1), lec);
  const std::string rel = real.lexically_relative(root).generic_string();
  if (lec || rel.empty() || rel.rfind("..", 0) == 0) path.clear();
  std::ifstream log(path, std::ios::binary);
  if (!log) {
    // Named as the member knows it, never by the server's file system.
    *err = make_error(422, "missing-log", "the log of run " + in.file + " of " + in.result + " is not on the server's disk",
                      "the package's files must stay where they were imported from; restore them or quote the lines "
                      "as a check message");
    return false;
  }
  std::string line;
  long long n = 0;
  while (std::getline(log, line)) {
    ++n;
    if (n < out->first_line) continue;
    if (n > out->last_line) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out->quoted += std::to_string(n) + ": " + line + "\n";
  }
  if (n < out->last_line) {
    *err = make_error(422, "bad-lines",
                      "run " + in.file + " of " + in.result + " has " + std::to_string(n) + " lines, not " + in.lines);
    return false;
  }
  out->kind = "lines";
  return true;
}

// One item as sent, resolved; `results`: the objection's (log lines must come from one of them).
bool resolve_evidence(Store& s, const EvidenceItem& in, long long round_id, const std::vector<long long>& results,
                      Evidence* out, Error* err) {
  // As an objection's title and rule are bounded, so is what an item says (a log line is quoted from the file).
  if (in.note.size() > 10000 || in.check.size() > 10000 || in.figure.size() > 500 || in.unit.size() > 100) {
    *err = make_error(400, "bad-field", "an evidence item's note and check take at most 10000 bytes, figure 500, unit 100");
    return false;
  }
  out->note = in.note;
  switch (in.kind) {
    case EvidenceItem::Kind::Finding: return evidence_finding(s, in.finding, round_id, results, out, err);
    case EvidenceItem::Kind::Lines: return evidence_lines(s, round_id, results, in, out, err);
    case EvidenceItem::Kind::Figure:
      if (in.has_impact && !(in.impact_minutes > 0 && in.impact_minutes <= 100000)) {
        *err = make_error(400, "bad-field", "impact_minutes must be a score in minutes, above 0 and at most 100000");
        return false;
      }
      out->kind = "figure";
      out->figure_name = in.figure;
      out->figure_value = in.value;
      out->figure_unit = in.unit;
      out->has_impact = in.has_impact;
      out->impact = in.impact_minutes;
      return true;
    case EvidenceItem::Kind::Check:
      if (in.check.empty()) {
        *err = make_error(400, "bad-field", "check: the message is empty");
        return false;
      }
      out->kind = "check";
      out->quoted = in.check;
      return true;
  }
  return false;
}

bool resolve_all(Store& s, const std::vector<EvidenceItem>& items, long long round_id,
                 const std::vector<long long>& results, std::vector<Evidence>* out, Error* err) {
  if (items.size() > 100) {
    *err = make_error(400, "bad-field", "at most 100 evidence items per request");
    return false;
  }
  for (const auto& item : items) {
    Evidence e;
    if (!resolve_evidence(s, item, round_id, results, &e, err)) return false;
    out->push_back(std::move(e));
  }
  return true;
}

// Stores one evidence item; its digest (evidence_row_digest) goes to *digests for the event.
bool insert_evidence(Store& s, const Actor& who, long long objection_id, const Evidence& e,
                     std::vector<std::string>* digests, Error* err) {
  long long id = next_id(s, "evidence", round_of_objection(s, objection_id), err);
  if (!id) return false;
  Stmt ins(s.db(),
           "INSERT INTO evidence (objection_id, kind, finding_id, run_id, first_line, last_line, quoted, "
           "figure_name, figure_value, figure_unit, note, user_id, created_at, impact_minutes, id) VALUES (?1, ?2, ?3, "
           "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  ins.bind(1, objection_id).bind(2, e.kind).bind(15, id);
  if (e.finding_id) ins.bind(3, e.finding_id); else ins.bind_null(3);
  if (e.run_id) ins.bind(4, e.run_id).bind(5, e.first_line).bind(6, e.last_line);
  else ins.bind_null(4).bind_null(5).bind_null(6);
  if (e.quoted.empty()) ins.bind_null(7); else ins.bind(7, e.quoted);
  if (e.kind == "figure") ins.bind(8, e.figure_name).bind(9, e.figure_value).bind(10, e.figure_unit);
  else ins.bind_null(8).bind_null(9).bind_null(10);
  if (e.note.empty()) ins.bind_null(11); else ins.bind(11, e.note);
  if (who.user_id) ins.bind(12, who.user_id); else ins.bind_null(12);
  ins.bind(13, now_utc());
  if (e.kind == "figure" && e.has_impact) ins.bind(14, e.impact); else ins.bind_null(14);
  if (!ins.run()) {
    *err = store_error(s, ins.rc(), "storing evidence");
    return false;
  }
  digests->push_back(evidence_row_digest(s, id));
  return true;
}

// ------------------------------------------------------------------ impact

struct ResultScore {
  bool has_score = false, has_unscaled = false, has_norm = false;
  double score = 0, unscaled = 0, norm = 0;
  long long rcp_pass = -1;  // -1 unknown
};

ResultScore read_score(Store& s, long long result_id) {
  ResultScore r;
  Stmt q(s.db(), "SELECT score_minutes, unscaled_minutes, rcp_norm_factor, rcp_pass FROM results WHERE id = ?1");
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

}  // namespace

bool impact_of_dropped_runs(Store& s, long long result_id, const std::vector<std::string>& drop_runs, double* impact,
                            std::string* basis, Error* err) {
  std::vector<double> kept;
  std::set<std::string> dropped;
  Stmt q(s.db(),
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
      *err = make_error(404, "unknown-run",
                        "drop_runs: " + d + " is not a converged, compliant run of " + result_name(s, result_id),
                        "its runs: " + run_files(s, result_id));
      return false;
    }
  // A result needs its required number of runs (at least the olympic minimum, 2 x drop + 1).
  const int drop = submissions::olympic_drop(s, result_id);
  long long required = 2 * drop + 1;
  {
    Stmt e(s.db(), "SELECT COALESCE(expected_count, 0) FROM results WHERE id = ?1");
    e.bind(1, result_id);
    if (e.step()) required = std::max(required, e.col_int(0));
  }
  if (static_cast<long long>(kept.size()) < required) {
    *basis = "not scorable: " + std::to_string(kept.size()) + " converged run" + (kept.size() == 1 ? "" : "s") +
             " would remain where " + result_name(s, result_id) + " needs " + std::to_string(required);
    return false;
  }
  ResultScore rs = read_score(s, result_id);
  double mean = rules::olympic_mean(kept, drop);
  // The published score carries the package's scaling factor: keep it.
  double scale = rs.has_score && rs.has_unscaled && rs.unscaled > 0 ? rs.score / rs.unscaled : 1.0;
  *impact = mean * scale;
  *basis = "the olympic mean of the " + std::to_string(kept.size()) + " remaining runs";
  return true;
}

namespace {

// What the first result's score would be if the objection holds, as referee
// computes it: a finding's impact (referee audit's), the runs that would
// remain, or the RCP factor. Figures that members give are not used here
// (effective_impact weighs them). *basis says how it was found, or why it is
// unknown (then false; *err set when that is an error).
bool compute_impact(Store& s, long long result_id, const std::string& rule, const std::string& finding_kind,
                    const std::vector<Evidence>& evidence, const std::vector<std::string>& drop_runs, double* impact,
                    std::string* basis, Error* err) {
  for (const auto& e : evidence)
    if (e.kind == "finding" && e.has_impact) {
      *impact = e.impact;
      *basis = "the impact of finding " + std::to_string(e.finding_id);
      return true;
    }
  if (!drop_runs.empty()) return impact_of_dropped_runs(s, result_id, drop_runs, impact, basis, err);
  ResultScore rs = read_score(s, result_id);
  std::string k = base::lower(rule + " " + finding_kind);
  if (k.find("rcp") != std::string::npos) {
    if (rs.has_norm && rs.has_unscaled && rs.norm > 0) {
      *impact = rs.unscaled * rs.norm;
      *basis = "the unscaled score times the RCP normalisation factor " + factor_text(rs.norm);
      // The package's own scaling.json may already apply it: then the remedy changes nothing further.
      if (rs.has_score && std::fabs(*impact - rs.score) <= 1e-9 * std::max(1.0, rs.score))
        *basis += ", which the score already is (the package's scaling.json applies that factor; unscaled " +
                  minutes_text(rs.unscaled) + " min)";
      return true;
    }
    *basis = "unknown: the result has no RCP normalisation factor";
    return false;
  }
  *basis = "unknown: no finding gives it, no runs are dropped and it is not an RCP failure";
  return false;
}

// A score impact figure a member gave with their evidence.
struct GivenImpact {
  double minutes = 0;
  std::string organisation;  // the author's organisation ("" for none)
  bool accused = false;      // given by the accused organisation
};

// How far an impact moves the result's score (without a score: the minutes themselves). The one
// measure by which a figure or a later finding may only move referee's figure further.
double impact_distance(const ResultScore& rs, double minutes) {
  return rs.has_score ? std::fabs(minutes - rs.score) : minutes;
}

std::vector<GivenImpact> given_impacts(Store& s, long long objection_id, long long against_org) {
  std::vector<GivenImpact> out;
  Stmt q(s.db(),
         "SELECT e.impact_minutes, COALESCE(o.name, ''), COALESCE(u.organisation_id, 0) FROM evidence e LEFT JOIN "
         "users u ON u.id = e.user_id LEFT JOIN organisations o ON o.id = u.organisation_id WHERE e.objection_id = ?1 "
         "AND e.impact_minutes IS NOT NULL ORDER BY e.id");
  q.bind(1, objection_id);
  while (q.step()) out.push_back({q.col_double(0), q.col_text(1), q.col_int(2) == against_org});
  return out;
}

// The impact the committee weighs (the 2% waiver) and how it was found:
// referee's own figure when it has one; a figure a member gave only when it
// moves the score further from the published one (a figure never lowers the
// computed impact); with no figure of referee's, the largest given by anyone
// but the accused (the accused's own figure is shown, never used alone).
struct Weighed {
  bool has = false;
  double minutes = 0;
  std::string basis;
};

Weighed weigh_impact(const ResultScore& rs, bool has_computed, double computed, const std::string& computed_basis,
                     const std::vector<GivenImpact>& given) {
  Weighed w{has_computed, computed, has_computed ? "computed by referee: " + computed_basis : computed_basis};
  for (const auto& g : given) {
    std::string by = g.organisation.empty() ? std::string("a chair") : g.organisation;
    if (has_computed) {
      if (impact_distance(rs, g.minutes) > impact_distance(rs, w.minutes)) {
        w.minutes = g.minutes;
        w.basis = "the figure given by " + by + ", further from the score than referee's (" + computed_basis + ")";
      }
    } else if (!g.accused && (!w.has || impact_distance(rs, g.minutes) > impact_distance(rs, w.minutes))) {
      w.has = true;
      w.minutes = g.minutes;
      w.basis = "the figure given by " + by + "; referee has none (" + computed_basis + ")";
    }
  }
  return w;
}

// Referee's own impact of objection `id` as stored (a row written before
// schema 7 has no basis: its impact is taken as it was stored).
void stored_computed(Store& s, long long id, bool* has, double* minutes, std::string* basis) {
  Stmt q(s.db(), "SELECT impact_computed, impact_basis, impact_minutes FROM objections WHERE id = ?1");
  q.bind(1, id);
  *has = false;
  basis->clear();
  if (!q.step()) return;
  if (q.col_null(1)) {
    *has = !q.col_null(2);
    *minutes = q.col_double(2);
    *basis = "as stored before referee kept how an impact was found";
    return;
  }
  *has = !q.col_null(0);
  *minutes = q.col_double(0);
  *basis = q.col_text(1);
}

// Stores referee's impact of objection `id` and the one the committee weighs.
// Post: *weighed is what was stored.
bool store_impact(Store& s, long long id, long long against_org, long long result_id, bool has_computed, double computed,
                  const std::string& computed_basis, Weighed* weighed, Error* err) {
  *weighed = weigh_impact(read_score(s, result_id), has_computed, computed, computed_basis,
                          given_impacts(s, id, against_org));
  Stmt up(s.db(), "UPDATE objections SET impact_minutes = ?2, impact_computed = ?3, impact_basis = ?4 WHERE id = ?1");
  up.bind(1, id);
  if (weighed->has) up.bind(2, weighed->minutes); else up.bind_null(2);
  if (has_computed) up.bind(3, computed); else up.bind_null(3);
  up.bind(4, computed_basis);
  if (!up.run()) {
    *err = store_error(s, up.rc(), "storing the score impact");
    return false;
  }
  return true;
}

// -------------------------------------------------------------- rendering

void write_opt_text(JsonWriter& w, const char* key, Stmt& q, int col) {
  w.key(key);
  if (q.col_null(col)) w.null(); else w.value(q.col_text(col));
}
void write_opt_number(JsonWriter& w, const char* key, Stmt& q, int col) {
  w.key(key);
  if (q.col_null(col)) w.null(); else w.value(q.col_double(col));
}

// The responses ({id, organisation, by, text, ...}) or votes ({organisation,
// by, vote, ...}) of an objection, as the array `key`.
// The ballot of objection `o`: the organisations that may vote (those with a
// package in its round), those that have and have not, the count, and what
// the votes cast would decide now (decide_outcome, carried_remedy: the rules a
// chair's decision is held to), before any tie-break or chair's remedy.
void write_ballot(Store& s, JsonWriter& w, const Row& o, const RoundInfo& round) {
  const std::vector<std::string> eligible = round_submitters(s, o.round_id);
  std::set<std::string> voted;
  int up = 0, rej = 0, abst = 0;
  std::vector<Proposal> proposals;
  {
    Stmt q(s.db(),
           "SELECT g.name, v.vote, COALESCE(v.remedy, ''), v.factor FROM votes v JOIN organisations g ON g.id = "
           "v.organisation_id WHERE v.objection_id = ?1 ORDER BY g.name");
    q.bind(1, o.id);
    while (q.step()) {
      voted.insert(q.col_text(0));
      std::string v = q.col_text(1);
      if (v == "uphold") {
        ++up;
        proposals.push_back({q.col_text(2), !q.col_null(3), q.col_double(3)});
      } else if (v == "reject") {
        ++rej;
      } else {
        ++abst;
      }
    }
  }
  w.key("ballot").begin_object();
  w.key("eligible").begin_array();
  for (const auto& e : eligible) w.value(e);
  w.end_array();
  w.key("not_voted").begin_array();
  for (const auto& e : eligible)
    if (!voted.count(e)) w.value(e);
  w.end_array();
  w.key("voted").value(static_cast<long long>(voted.size()));
  w.key("uphold").value(up).key("reject").value(rej).key("abstain").value(abst);
  // Where the votes stand: what a decision on them now would be.
  std::string standing;
  if (up + rej == 0) {
    standing = "no uphold or reject vote yet";
  } else {
    Outcome out = decide_outcome(up, rej, "none", "");
    if (!out.ok) {
      standing = out.error;
    } else if (out.outcome == "rejected") {
      standing = "rejected (" + out.majority + " majority)";
    } else {
      Carried c = carried_remedy(proposals, rej, "", false, 0, "");
      standing = "upheld (" + out.majority + " majority); ";
      if (!c.ok) {
        // Which remedies, if the chair named one, the votes would carry; none: the votes decide nothing yet.
        std::vector<Proposal> candidates = {{"none", false, 0}};
        for (const auto& p : proposals)
          if (!p.remedy.empty()) candidates.push_back(p);
        std::string could;
        std::set<std::string> seen;
        for (const auto& p : candidates) {
          std::string name = p.remedy + (p.has_factor ? " " + mllog::json_number(p.factor) : "");
          if (!seen.insert(name).second) continue;
          if (carried_remedy(proposals, rej, p.remedy, p.has_factor, p.factor, "").ok)
            could += (could.empty() ? "" : " or ") + name;
        }
        standing += could.empty() ? "no remedy is carried: none has the votes it needs yet (" + c.error + ")"
                                  : "the chair names the remedy: the votes carry " + could;
      } else {
        standing += "remedy " + c.remedy;
        if (c.has_factor) standing += " " + mllog::json_number(c.factor);
        standing += " carried by " + std::to_string(c.support) + " vote(s), " + c.majority + " majority";
      }
    }
  }
  w.key("standing").value(standing);
  // When the votes are due: the objection's own vote deadline, else the round's decisions_due.
  const std::string due = o.votes_due.empty() ? round.schedule.decisions_due : o.votes_due;
  w.key("votes_due");
  if (due.empty()) w.null(); else w.value(due);
  w.key("votes_due_set_here").value(!o.votes_due.empty());
  w.end_object();
}

void write_opinions(JsonWriter& w, const char* key, const char* said_key, const std::vector<Opinion>& list) {
  w.key(key).begin_array();
  for (const auto& r : list) {
    w.begin_object();
    if (r.id) w.key("id").value(r.id);
    w.key("organisation").value(r.organisation).key("by").value(r.has_user ? r.user : "local-admin");
    w.key(said_key).value(r.said).key("remedy");
    if (r.has_remedy) w.value(r.remedy); else w.null();
    w.key("factor");
    if (r.has_factor) w.value(r.factor); else w.null();
    w.key("created_at").value(r.at).end_object();
  }
  w.end_array();
}

// What a list of objections looks up again and again (the same results' names and scores), kept for it.
struct ListMemo {
  std::map<long long, std::string> names;
  std::map<long long, ResultScore> scores;
  std::string name(Store& s, long long r) {
    auto it = names.find(r);
    return it != names.end() ? it->second : names[r] = result_name(s, r);
  }
  ResultScore score(Store& s, long long r) {
    auto it = scores.find(r);
    return it != scores.end() ? it->second : scores[r] = read_score(s, r);
  }
};

// `*fault` gets the first store error of the reads (the answer is then not given: a 500, never a part shown as the whole).
void write_objection(Store& s, JsonWriter& w, const Row& o, const RoundInfo& round, bool full, std::string* fault,
                     ListMemo* memo = nullptr) {
  auto note = [&](const std::string& e) {
    if (!e.empty() && fault->empty()) *fault = e;
  };
  auto check = [&](Stmt& q, const char* what) {
    if (!q.ok()) note(s.describe_error(q.rc(), what));
  };
  ListMemo own;
  if (!memo) memo = &own;
  w.begin_object().key("id").value(o.id).key("round").value(round.name).key("round_state").value(round.state);
  w.key("by").value(o.by).key("against").value(o.against).key("filed_by").value(o.filed_by);
  w.key("title").value(o.title).key("rule").value(o.rule).key("state").value(o.state).key("version").value(o.version);
  w.key("created_at").value(o.created_at);
  w.key("finding");
  if (o.finding_id) w.value(o.finding_id); else w.null();
  w.key("results").begin_array();
  for (long long r : o.results) w.value(memo->name(s, r));
  w.end_array();
  // Impact on the first result.
  w.key("impact").begin_object();
  ResultScore rs = o.results.empty() ? ResultScore{} : memo->score(s, o.results[0]);
  w.key("result");
  if (o.results.empty()) w.null(); else w.value(memo->name(s, o.results[0]));
  w.key("score_minutes");
  if (rs.has_score) w.value(rs.score); else w.null();
  w.key("minutes");
  if (o.has_impact) w.value(o.impact); else w.null();
  // A figure near the largest double gives no finite percentage: null, never
  // "Infinity" (which no strict JSON reader takes).
  auto percent = [&](double m) { return impact_percent(rs.has_score, rs.score, m); };
  double pct = o.has_impact ? percent(o.impact) : NAN;
  if (std::isfinite(pct)) {
    w.key("change_percent").value(pct);
    w.key("under_waiver_threshold").value(waivable(pct));
  } else {
    w.key("change_percent").null().key("under_waiver_threshold").null();
  }
  // How it was found: referee's own figure, and each figure a member gave (theirs, weighed beside it).
  bool has_computed = false;
  double computed = 0;
  std::string computed_basis;
  stored_computed(s, o.id, &has_computed, &computed, &computed_basis);
  auto given = given_impacts(s, o.id, o.against_org);
  w.key("computed_minutes");
  if (has_computed) w.value(computed); else w.null();
  w.key("basis").value(weigh_impact(rs, has_computed, computed, computed_basis, given).basis);
  w.key("figures").begin_array();
  for (const auto& g : given) {
    w.begin_object().key("organisation");
    if (g.organisation.empty()) w.null(); else w.value(g.organisation);
    w.key("accused").value(g.accused).key("minutes").value(g.minutes).key("change_percent");
    if (std::isfinite(percent(g.minutes))) w.value(percent(g.minutes)); else w.null();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  if (!full) {
    // Who has voted (the full answer has the whole ballot): a list shows which votes are still owed.
    w.key("voted").begin_array();
    Stmt v(s.db(),
           "SELECT g.name FROM votes x JOIN organisations g ON g.id = x.organisation_id WHERE x.objection_id = ?1 ORDER BY g.name");
    v.bind(1, o.id);
    while (v.step()) w.value(v.col_text(0));
    check(v, "reading votes");
    w.end_array();
    w.end_object();
    return;
  }
  w.key("text").value(o.text);
  w.key("deadlines").begin_object();
  auto dl = [&](const char* k, const std::string& v) {
    w.key(k);
    if (v.empty()) w.null(); else w.value(v);
  };
  dl("objections_due", round.schedule.objections_due);
  dl("responses_due", round.schedule.responses_due);
  dl("decisions_due", round.schedule.decisions_due);
  if (!o.votes_due.empty()) dl("votes_due", o.votes_due);
  dl("scores_final", round.schedule.scores_final);
  w.end_object();
  // More time a neutral chair gave one organisation here.
  w.key("extensions").begin_array();
  std::string rerr;
  const auto extensions = read_extensions(s, o.id, &rerr);
  note(rerr);
  for (const auto& x : extensions) {
    w.begin_object().key("organisation").value(x.organisation).key("deadline").value(x.deadline).key("until").value(x.until);
    w.key("reason").value(x.reason).key("granted_by").value(x.granted_by).key("created_at").value(x.created_at).end_object();
  }
  w.end_array();
  w.key("evidence").begin_array();
  {
    Stmt q(s.db(),
                        "SELECT e.id, e.kind, e.finding_id, r.file, e.first_line, e.last_line, e.quoted, e.figure_name, "
                        "e.figure_value, e.figure_unit, e.note, COALESCE(u.name, 'local-admin'), e.created_at, e.run_id, "
                        "e.impact_minutes "
                        "FROM evidence e LEFT JOIN runs r ON r.id = e.run_id LEFT JOIN users u ON u.id = e.user_id "
                        "WHERE e.objection_id = ?1 ORDER BY e.id");
    q.bind(1, o.id);
    while (q.step()) {
      w.begin_object().key("id").value(q.col_int(0)).key("kind").value(q.col_text(1));
      w.key("finding");
      if (q.col_null(2)) w.null(); else w.value(q.col_int(2));
      if (!q.col_null(13)) {
        Stmt rr(s.db(), "SELECT result_id FROM runs WHERE id = ?1");
        rr.bind(1, q.col_int(13));
        w.key("result").value(rr.step() ? result_name(s, rr.col_int(0)) : std::string());
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
      if (!q.col_null(14)) w.key("impact_minutes").value(q.col_double(14));
      write_opt_text(w, "note", q, 10);
      w.key("by").value(q.col_text(11)).key("created_at").value(q.col_text(12)).end_object();
    }
    check(q, "reading evidence");
  }
  w.end_array();
  rerr.clear();
  write_opinions(w, "responses", "text", read_opinions(s, o.id, false, &rerr));
  note(rerr);
  rerr.clear();
  write_opinions(w, "votes", "vote", read_opinions(s, o.id, true, &rerr));
  note(rerr);
  // The ballot: who may vote, who has, and where the votes stand now.
  write_ballot(s, w, o, round);
  // The discussion, oldest first.
  w.key("comments").begin_array();
  rerr.clear();
  const auto comments = read_comments(s, o.id, &rerr);
  note(rerr);
  for (const auto& c : comments) {
    w.begin_object().key("id").value(c.id).key("organisation");
    if (c.organisation.empty()) w.null(); else w.value(c.organisation);
    w.key("user").value(c.has_user ? c.user : "local-admin").key("text").value(c.text).key("created_at").value(c.at);
    w.end_object();
  }
  w.end_array();
  w.key("decision");
  rerr.clear();
  DecisionRecord decided;
  const bool has_decision = read_decision(s, o.id, &decided, &rerr);
  note(rerr);
  if (has_decision) {
    const DecisionRecord& d = decided;
    w.begin_object().key("id").value(d.id).key("outcome").value(d.outcome).key("remedy").value(d.remedy).key("factor");
    if (d.has_factor) w.value(d.factor); else w.null();
    w.key("votes").begin_object().key("uphold").value(d.uphold).key("reject").value(d.reject);
    w.key("abstain").value(d.abstain).end_object();
    w.key("majority").value(d.majority).key("decided_by").value(d.has_decider ? d.decided_by : "local-admin");
    w.key("text");
    if (d.has_text) w.value(d.text); else w.null();
    w.key("created_at").value(d.at);
    // A fix: when the corrected package is due, and each replacement that delivered it with what it changed.
    if (d.outcome == "upheld" && d.remedy == "fix") {
      rerr.clear();
      const auto deliveries = read_fix_deliveries(s, o.id, &rerr);
      note(rerr);
      w.key("fix").begin_object().key("state").value(fix_state(deliveries, d.fix_due, now_utc(), accused_package_sha256(s, o.id))).key("due");
      if (d.fix_due.empty()) w.null(); else w.value(d.fix_due);
      w.key("deliveries").begin_array();
      for (const auto& f : deliveries) {
        w.begin_object().key("at").value(f.at).key("event").value(f.event_seq).key("old_sha256").value(f.old_sha256);
        w.key("new_sha256").value(f.new_sha256).key("changes");
        mllog::Json j;
        std::string perr;
        if (mllog::parse_json_permissive(f.changes_json, &j, &perr) && j.kind == Json::Kind::Array) w.raw(f.changes_json);
        else w.begin_array().end_array();
        w.end_object();
      }
      w.end_array().end_object();
    }
    w.end_object();
  } else {
    w.null();
  }
  // Amended decisions: each as it was, from its decision.amend event, oldest
  // first; a withdrawal: who, when and why, from its objection.withdraw event.
  std::string withdrawn_by, withdrawn_at, withdrawal_text;
  w.key("superseded").begin_array();
  {
    std::string error, subject = "objection/" + std::to_string(o.id);
    for (const auto& e : read_events(s, subject, &error)) {
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
      for (const char* k : {"outcome", "remedy", "factor", "majority", "decided_by", "text", "created_at", "fix_due"}) {
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

// --------------------------------------------------------- result status

// Writes each result's status as status_of_result() makes it from the
// objections naming it and their decisions (the row goes when there is none).
bool refresh_statuses(Store& s, const std::vector<long long>& results, Error* err) {
  for (long long r : results) {
    std::vector<ObjectionOnResult> on;
    Stmt q(s.db(),
           "SELECT j.id, j.state, COALESCE(d.id, 0), COALESCE(d.outcome, ''), COALESCE(d.remedy, ''), d.factor FROM "
           "objection_results x JOIN objections j ON j.id = x.objection_id LEFT JOIN decisions d ON d.objection_id = "
           "j.id WHERE x.result_id = ?1");
    q.bind(1, r);
    while (q.step()) {
      ObjectionOnResult o;
      q.row(o.objection, o.state, o.decision, o.outcome, o.remedy, Stmt::maybe(o.has_factor, o.factor));
      on.push_back(o);
    }
    if (!q.ok()) {
      *err = store_error(s, q.rc(), "reading the objections on a result");
      return false;
    }
    StatusOfResult want = status_of_result(on);
    Stmt cur(s.db(), "SELECT status, factor, COALESCE(objection_id, 0), COALESCE(decision_id, 0) FROM result_status "
                     "WHERE result_id = ?1");
    cur.bind(1, r);
    if (cur.step()) {
      if (cur.col_text(0) == want.status && cur.col_null(1) == !want.has_factor &&
          (!want.has_factor || cur.col_double(1) == want.factor) && cur.col_int(2) == want.objection &&
          cur.col_int(3) == want.decision)
        continue;
    } else if (want.status.empty()) {
      continue;
    }
    if (want.status.empty()) {
      Stmt del(s.db(), "DELETE FROM result_status WHERE result_id = ?1");
      del.bind(1, r);
      if (!del.run()) {
        *err = store_error(s, del.rc(), "clearing the result's status");
        return false;
      }
      continue;
    }
    Stmt w(s.db(),
           "INSERT INTO result_status (result_id, status, factor, objection_id, decision_id, updated_at) VALUES (?1, ?2, "
           "?3, ?4, ?5, ?6) ON CONFLICT(result_id) DO UPDATE SET status = excluded.status, factor = excluded.factor, "
           "objection_id = excluded.objection_id, decision_id = excluded.decision_id, updated_at = excluded.updated_at");
    w.bind(1, r).bind(2, want.status);
    if (want.has_factor) w.bind(3, want.factor); else w.bind_null(3);
    if (want.objection) w.bind(4, want.objection); else w.bind_null(4);
    if (want.decision) w.bind(5, want.decision); else w.bind_null(5);
    w.bind(6, now_utc());
    if (!w.run()) {
      *err = store_error(s, w.rc(), "setting the result's status");
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------- the one write

// The actor's organisation and what it is to the objection.
struct Party {
  long long org_id = 0;
  std::string org_name;
  Standing standing;
};

Party party_of(Store& s, const Actor& who, const Row& o) {
  Party p;
  if (!who.organisation.empty() && find_organisation(s, who.organisation, &p.org_id, &p.org_name)) {
    p.standing.objecting = p.org_id == o.by_org;
    p.standing.accused = p.org_id == o.against_org;
    p.standing.partner = !p.standing.objecting && !p.standing.accused &&
                         (same_party(p.org_name, o.by) || same_party(p.org_name, o.against));
    p.standing.submitted = submitted(s, o.round_id, p.org_id);
  }
  return p;
}

// How one kind of change to an objection is checked and made.
struct Spec {
  Action action;
  const char* event;                 // objection.withdraw, ...
  const char* final_what = nullptr;  // a final round takes none of it ("responses"); nullptr = not limited
  bool amend = false;                // changes a decided objection (the decision)
  bool after_decision = false;       // also taken by a decided objection (a vote: on an amendment of the decision)
  // The discussion (a comment): taken in any state of the objection, under no
  // deadline until the round is published, and it leaves the objection's
  // state and version as they are (a comment cannot overwrite anything, so it
  // makes no one's pending change stale).
  bool discussion = false;
  // The 403 when authorize() refuses.
  std::function<Error(const Row&, const RoundInfo&, const Party&)> refused;
  // The schedule field the change must meet ("" = only scores_final).
  std::function<std::string(const Party&)> deadline;
  // The change itself: its rows, its event payload's own fields (after the
  // common ones) and the objection's new state. Pre: every check passed.
  std::function<Result<std::string>(const Row&, const RoundInfo&, const Party&, std::string& overridden, JsonWriter& payload)>
      apply;
};

void write_override(JsonWriter& p, const std::string& reason, const std::string& overridden) {
  if (!overridden.empty()) p.key("override").value(reason).key("overridden_deadline").value(overridden);
}

Error still_open_error(const Row& o) {
  return make_error(422, "closed", "objection " + std::to_string(o.id) + " is " + o.state + ": it takes no more changes",
                    o.state == "decided" ? "a review chair amends the decision: referee objection decide " +
                                               std::to_string(o.id) + " --amend --reason \"...\" (API field `amend`)"
                                         : "");
}

// Every change to an existing objection, in one order: begin; load it (the
// embargo first); role and party; still open (or decided, to amend); the
// version read; deadline or a chair's override; round state; the change;
// version + 1; the event; commit.
Result<Objection> change_objection(Store& s, const Actor& who, const ObjectionChange& in, const Spec& spec) {
  Objection done;
  auto r = write(s, who, [&](Change* event) -> Result<long long> {
    Row o;
    RoundInfo round;
    Error err;
    if (!load(s, who, in.objection, &o, &round, &err)) return err;
    Party party = party_of(s, who, o);
    if (authorize(who, spec.action, party.standing, round.state) == Access::Forbidden) return spec.refused(o, round, party);
    bool takes = spec.discussion ? true
                 : spec.amend        ? o.state == "decided"
                                     : o.state == "open" || o.state == "responded" ||
                                    (spec.after_decision && o.state == "decided");
    if (!takes) {
      if (!spec.amend) return still_open_error(o);
      return make_error(422, "not-decided",
                        "objection " + std::to_string(o.id) + " is " + o.state + ": there is no decision to amend");
    }
    const std::string id = std::to_string(o.id);
    if (!check_version(in.version, o.version, "objection " + id, "referee objection show " + id, &err)) return err;
    std::string overridden;
    const std::string deadline = spec.discussion ? "" : spec.deadline(party);
    const std::string extended = party.org_id && !deadline.empty() ? extended_until(s, o.id, party.org_id, deadline) : "";
    // A vote on an objection with its own vote deadline meets that one (an organisation's extension of
    // decisions_due still gives it more time).
    const bool own = spec.action == Action::Vote && !o.votes_due.empty();
    if (spec.discussion && !check_not_published(round, &err)) return err;
    if (!spec.discussion && !check_deadline(who, round, own ? "votes_due" : deadline, in.override_reason, &overridden, &err,
                                            party.standing, extended, own ? o.votes_due : ""))
      return err;
    if (spec.final_what && !check_not_final(round, spec.final_what, in.override_reason, &overridden, &err)) return err;
    JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("objection").value(o.id).key("round").value(round.name).key("by").value(o.by);
    p.key("against").value(o.against);
    Result<std::string> state = spec.apply(o, round, party, overridden, p);
    if (!state.ok()) return state.error();
    p.end_object();
    if (spec.discussion) {
      *event = Change{spec.event, "objection/" + id, p.str()};
      done = Objection{o.id, o.version, o.state, ""};
      return o.id;
    }
    Stmt up(s.db(), "UPDATE objections SET version = version + 1, state = ?3 WHERE id = ?1 AND version = ?2");
    up.bind(1, o.id).bind(2, o.version).bind(3, state.value());
    if (!up.run()) return store_error(s, up.rc(), "updating the objection");
    // The results' statuses follow the objection's state and decision (status_of_result): only a change
    // of state or an amended decision moves them.
    if ((state.value() != o.state || spec.amend) && !refresh_statuses(s, o.results, &err)) return err;
    *event = Change{spec.event, "objection/" + id, p.str()};
    done = Objection{o.id, o.version + 1, state.value(), ""};
    return o.id;
  });
  if (!r.ok()) return r.error();
  return done;
}

}  // namespace

Error no_objection(const std::string& id_text) {
  return make_error(404, "not-found", "no objection " + id_text,
                    "objections are numbered per round: `referee objection list --round R` lists those you may see");
}

// ------------------------------------------------------------------ reading

namespace {

// What `who` may do to objection `o` now, by authorize() and the objection's
// state (deadlines aside: a late change is refused when it is made). What a
// page offers as forms; the write checks everything again.
std::vector<std::string> actions_open_to(Store& s, const Actor& who, const Row& o, const RoundInfo& round) {
  struct Offer {
    const char* name;
    Action action;
    bool decided, withdrawn;  // offered in these states too (open and responded: always)
  };
  static const Offer offers[] = {
      {"evidence", Action::AddEvidence, false, false}, {"respond", Action::Respond, false, false},
      {"comment", Action::Comment, true, true},        {"vote", Action::Vote, true, false},
      {"decide", Action::Decide, true, false},         {"withdraw", Action::Withdraw, false, false},
      {"extend", Action::OverrideDeadline, false, false},
      {"vote-deadline", Action::OverrideDeadline, false, false},
  };
  Party p = party_of(s, who, o);
  std::vector<std::string> out;
  for (const auto& f : offers) {
    if ((o.state == "decided" && !f.decided) || (o.state == "withdrawn" && !f.withdrawn)) continue;
    if (authorize(who, f.action, p.standing, round.state) == Access::Allowed) out.push_back(f.name);
  }
  return out;
}

}  // namespace

Result<std::string> objection_json(Store& s, const Actor& who, long long id, const std::string& impact_basis) {
  Row o;
  RoundInfo round;
  Error err;
  if (!load(s, who, id, &o, &round, &err)) return err;
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("objection");
  std::string fault;
  write_objection(s, w, o, round, true, &fault);
  if (!fault.empty()) return make_error(500, "store", fault);
  if (!impact_basis.empty()) w.key("impact_basis").value(impact_basis);
  w.key("you_may").begin_array();
  for (const auto& a : actions_open_to(s, who, o, round)) w.value(a);
  w.end_array();
  w.end_object();
  return w.str();
}

Result<std::string> objections_json(Store& s, const Actor& who, const ObjectionFilter& f) {
  long long round_id = 0;
  Error err;
  if (!f.round.empty()) {
    RoundInfo r;
    if (!find_round(s, who, f.round, &r, &err)) return err;
    round_id = r.id;
  }
  if (!f.state.empty() && f.state != "open" && f.state != "responded" && f.state != "decided" && f.state != "withdrawn")
    return make_error(400, "bad-query", "state '" + f.state + "' is not open, responded, decided or withdrawn");
  // An organisation named is one the caller may know, or it is unknown (404), as everywhere.
  for (const std::string* org : {&f.by, &f.against}) {
    std::string spelled;
    if (!org->empty() && !find_visible_organisation(s, who, *org, &spelled)) return unknown_organisation_error(*org);
  }
  Stmt q(s.db(),
         "SELECT j.id FROM objections j JOIN organisations b ON b.id = j.by_org JOIN organisations a ON "
         "a.id = j.against_org WHERE (?1 = 0 OR j.round_id = ?1) AND (?2 = '' OR j.state = ?2) AND (?3 = '' "
         "OR b.name = ?3 COLLATE NOCASE) AND (?4 = '' OR a.name = ?4 COLLATE NOCASE) ORDER BY j.id");
  q.bind(1, round_id).bind(2, f.state).bind(3, f.by).bind(4, f.against);
  std::vector<long long> ids;
  while (q.step()) ids.push_back(q.col_int(0));
  if (!q.ok()) return store_error(s, q.rc(), "reading objections");
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("objections").begin_array();
  // Each round's visibility is found once (the embargo, as load() applies it), each result's name and score once.
  std::map<long long, std::optional<RoundInfo>> rounds;
  ListMemo memo;
  for (long long id : ids) {
    Row o;
    if (!load_row(s, id, &o, &err)) {
      if (err.status == 404) continue;
      return err;
    }
    auto seen = rounds.find(o.round_id);
    if (seen == rounds.end()) {
      RoundInfo r;
      Error hidden;
      if (find_round_by_id(s, who, o.round_id, no_objection(std::to_string(id)), &r, &hidden)) {
        seen = rounds.emplace(o.round_id, r).first;
      } else if (hidden.status == 404) {
        seen = rounds.emplace(o.round_id, std::nullopt).first;
      } else {
        return hidden;
      }
    }
    if (!seen->second) continue;  // embargoed
    std::string fault;
    write_objection(s, w, o, *seen->second, false, &fault, &memo);
    if (!fault.empty()) return make_error(500, "store", fault);
  }
  w.end_array().end_object();
  return w.str();
}

// ------------------------------------------------------------------ writes

Result<Objection> file_objection(Store& s, const Actor& who, const FileObjection& in) {
  Objection done;
  auto r = write(s, who, [&](Change* event) -> Result<long long> {
    Error err;
    if (who.organisation.empty())
      return forbidden("an objection is filed by an organisation; " + who.user + " acts for none",
                       "file it as a member of the objecting organisation");
    FileObjection f = in;  // filled from the finding where not given
    Finding finding;
    if (in.has_finding) {
      // The finding's round is looked at first: a finding of a hidden round is not known.
      Error unknown = make_error(404, "unknown-finding", "no finding " + std::to_string(in.finding),
                                 "referee audit lists findings");
      RoundInfo fr;
      if (!load_finding(s, in.finding, &finding)) return unknown;
      if (!find_round_by_id(s, who, finding.round_id, unknown, &fr, &err)) return err;
      Stmt q(s.db(), "SELECT name FROM organisations WHERE id = ?1");
      q.bind(1, finding.org_id);
      if (f.round.empty()) f.round = fr.name;
      if (f.against.empty() && q.step()) f.against = q.col_text(0);
      if (f.results.empty() && finding.result_id) f.results.push_back(result_name(s, finding.result_id));
      if (f.rule.empty()) f.rule = finding.rule;
      if (f.title.empty()) f.title = finding.summary;
    }
    if (f.round.empty()) return make_error(400, "missing-field", "--round R (API field `round`) is required");
    if (f.against.empty()) return make_error(400, "missing-field", "--against ORG (API field `against`) is required");
    if (f.results.empty())
      return make_error(400, "missing-field",
                        "no result named: --result ORG/SYSTEM/BENCHMARK (API field `results`) is required");
    if (f.title.empty()) return make_error(400, "missing-field", "--title TEXT (API field `title`) is required");
    if (base::blank(f.title))
      return make_error(400, "bad-field", "the title shows nothing (only spaces or invisible characters)", "give it words");
    // A name given twice is a mistake in what was sent, not a second thing.
    for (const auto* list : {&f.results, &f.drop_runs})
      for (size_t i = 0; i < list->size(); ++i)
        if (std::find(list->begin() + static_cast<long>(i) + 1, list->end(), (*list)[i]) != list->end())
          return make_error(400, "bad-field",
                            (list == &f.results ? "results: " : "drop_runs: ") + (*list)[i] + " is named twice",
                            "name each once");
    if (f.rule.empty())
      return make_error(400, "missing-field", "--rule RULE (API field `rule`) is required",
                        "cite the rule file and key (training_3.1.0/closed_common.yaml: ...) or the policy section");
    if (f.title.size() > 500 || f.rule.size() > 500 || f.text.size() > 100000)
      return make_error(400, "bad-field", "title and rule take at most 500 bytes, text 100000");
    RoundInfo round;
    if (!find_round(s, who, f.round, &round, &err)) return err;
    if (in.has_finding && finding.round_id != round.id)
      return make_error(404, "unknown-finding", "finding " + std::to_string(in.finding) + " is not of round " + round.name);
    long long by_id = 0, against_id = 0;
    std::string by_name, against_name;
    if (!find_organisation(s, who.organisation, &by_id, &by_name))
      return make_error(422, "unknown-organisation", "organisation " + who.organisation + " is not in the store");
    if (!find_organisation(s, f.against, &against_id, &against_name) || !submitted(s, round.id, against_id)) {
      // The round's submitters, which the caller (who may see the round) may know; the nearest first.
      std::vector<std::string> names = round_submitters(s, round.id), lowered;
      for (const auto& n : names) lowered.push_back(base::lower(n));
      std::string near = base::nearest_name(base::lower(f.against), lowered), list;
      for (size_t i = 0; i < names.size(); ++i)
        if (!near.empty() && lowered[i] == near) near = names[i];
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return make_error(404, "unknown-organisation", "organisation " + base::excerpt(f.against) + " did not submit to " + round.name,
                        (near.empty() ? "" : "did you mean " + near + "? ") + "the round's submitters: " + list);
    }
    Standing standing;
    standing.objecting = true;
    standing.accused = by_id == against_id;
    if (authorize(who, Action::FileObjection, standing, round.state) == Access::Forbidden)
      return forbidden("an organisation cannot object to its own results", "withdraw or fix them instead");
    std::vector<long long> result_ids;
    for (const auto& name : f.results) {
      long long rid = 0, org = 0;
      if (!find_result(s, round.id, name, &rid, &org, &err)) return err;
      if (org != against_id)
        return make_error(422, "wrong-organisation", "result " + name + " is not " + against_name + "'s",
                          "an objection is against one organisation's results");
      if (std::find(result_ids.begin(), result_ids.end(), rid) == result_ids.end()) result_ids.push_back(rid);
    }
    std::string overridden;
    // The filer's organisation is the objecting party: its chair does not give its own side more time.
    if (!check_deadline(who, round, "objections_due", f.override_reason, &overridden, &err, standing)) return err;
    if (!check_not_final(round, "new objections", f.override_reason, &overridden, &err)) return err;
    std::vector<Evidence> evidence;
    if (in.has_finding) {
      Evidence e;
      if (!evidence_finding(s, in.finding, round.id, result_ids, &e, &err)) return err;
      evidence.push_back(std::move(e));
    }
    if (!resolve_all(s, f.evidence, round.id, result_ids, &evidence, &err)) return err;
    if (!f.drop_runs.empty()) {
      // Which runs would not count is part of the objection: kept as a check item.
      Evidence e;
      e.kind = "check";
      e.quoted = "runs that would not count if the objection holds:";
      for (const auto& d : f.drop_runs) e.quoted += " " + d;
      evidence.push_back(std::move(e));
    }
    double impact = 0;
    std::string basis;
    err = Error{};
    err.status = 0;
    bool has_impact =
        compute_impact(s, result_ids[0], f.rule, finding.kind, evidence, f.drop_runs, &impact, &basis, &err);
    if (!has_impact && err.status != 0) return err;
    const long long id = next_id(s, "objections", round.id, &err);
    if (!id) return err;
    Stmt ins(s.db(),
             "INSERT INTO objections (round_id, by_org, against_org, filed_by, title, rule, text, finding_id, "
             "state, impact_minutes, created_at, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?10, ?11)");
    ins.bind(1, round.id).bind(2, by_id).bind(3, against_id).bind(11, id);
    if (who.user_id) ins.bind(4, who.user_id); else ins.bind_null(4);
    ins.bind(5, f.title).bind(6, f.rule).bind(7, f.text);
    if (in.has_finding) ins.bind(8, in.finding); else ins.bind_null(8);
    if (has_impact) ins.bind(9, impact); else ins.bind_null(9);
    ins.bind(10, now_utc());
    if (!ins.run()) return store_error(s, ins.rc(), "filing the objection");
    for (long long rid : result_ids) {
      Stmt x(s.db(), "INSERT INTO objection_results (objection_id, result_id) VALUES (?1, ?2)");
      x.bind(1, id).bind(2, rid);
      if (!x.run()) return store_error(s, x.rc(), "linking the results");
    }
    std::vector<std::string> digests;
    for (const auto& e : evidence)
      if (!insert_evidence(s, who, id, e, &digests, &err)) return err;
    Weighed weighed;
    if (!store_impact(s, id, against_id, result_ids[0], has_impact, impact, basis, &weighed, &err)) return err;
    if (!refresh_statuses(s, result_ids, &err)) return err;
    JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("objection").value(id).key("round").value(round.name).key("by").value(by_name);
    p.key("against").value(against_name).key("results").begin_array();
    for (const auto& rid : result_ids) p.value(result_name(s, rid));
    p.end_array().key("title").value(f.title).key("rule").value(f.rule).key("text_sha256").value(text_digest(f.text));
    p.key("evidence").value(static_cast<long long>(evidence.size()));
    p.key("evidence_sha256").begin_array();
    for (const auto& d : digests) p.value(d);
    p.end_array();
    p.key("impact_minutes");
    if (weighed.has) p.value(weighed.minutes); else p.null();
    p.key("impact_computed");
    if (has_impact) p.value(impact); else p.null();
    p.key("impact_basis").value(weighed.basis).key("impact_computed_basis").value(basis);
    p.key("finding");
    if (in.has_finding) p.value(in.finding); else p.null();
    if (!f.drop_runs.empty()) {
      p.key("drop_runs").begin_array();
      for (const auto& d : f.drop_runs) p.value(d);
      p.end_array();
    }
    write_override(p, f.override_reason, overridden);
    p.end_object();
    *event = Change{"objection.file", "objection/" + std::to_string(id), p.str()};
    done = Objection{id, 1, "open", weighed.basis};
    return id;
  });
  if (!r.ok()) return r.error();
  return done;
}

Result<Objection> add_evidence(Store& s, const Actor& who, const AddEvidence& in) {
  if (in.evidence.empty()) return make_error(400, "missing-field", "field 'evidence' is required (one item or more)");
  Spec spec;
  spec.action = Action::AddEvidence;
  spec.event = "evidence.add";
  spec.final_what = "new evidence";
  spec.refused = [](const Row&, const RoundInfo&, const Party&) {
    return forbidden("evidence is added by the objecting or the accused organisation, or a chair");
  };
  spec.deadline = [](const Party& p) {
    return p.standing.objecting ? "objections_due" : p.standing.accused ? "responses_due" : "decisions_due";
  };
  spec.apply = [&](const Row& o, const RoundInfo& round, const Party& party, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    std::vector<Evidence> evidence;
    Error err;
    if (!resolve_all(s, in.evidence, round.id, o.results, &evidence, &err)) return err;
    // A finding's impact (referee audit's) becomes referee's figure; a figure a member gives is weighed beside it.
    bool has_computed = false;
    double computed = 0;
    std::string basis;
    stored_computed(s, o.id, &has_computed, &computed, &basis);
    bool weigh_again = false;
    const ResultScore score = read_score(s, o.results.empty() ? 0 : o.results[0]);
    std::vector<std::string> digests;
    for (const auto& e : evidence) {
      if (!insert_evidence(s, who, o.id, e, &digests, &err)) return err;
      weigh_again = weigh_again || e.has_impact;
      // A finding added later moves referee's figure only further from the score; the accused's own
      // finding never gives one where there was none.
      if (e.kind == "finding" && e.has_impact && (has_computed || !party.standing.accused)) {
        if (!has_computed || impact_distance(score, e.impact) > impact_distance(score, computed)) {
          has_computed = true;
          computed = e.impact;
          basis = "the impact of finding " + std::to_string(e.finding_id);
        }
      }
    }
    Weighed weighed;
    if (weigh_again &&
        !store_impact(s, o.id, o.against_org, o.results.empty() ? 0 : o.results[0], has_computed, computed, basis,
                      &weighed, &err))
      return err;
    p.key("kinds").begin_array();
    for (const auto& e : evidence) p.value(e.kind);
    p.end_array().key("evidence_sha256").begin_array();
    for (const auto& d : digests) p.value(d);
    p.end_array();
    if (weigh_again) {
      p.key("impact_minutes");
      if (weighed.has) p.value(weighed.minutes); else p.null();
      p.key("impact_computed");
      if (has_computed) p.value(computed); else p.null();
      p.key("impact_basis").value(weighed.basis).key("impact_computed_basis").value(basis);
    }
    write_override(p, in.override_reason, overridden);
    return o.state;
  };
  return change_objection(s, who, in, spec);
}

namespace {

// Stores a response or a vote (`sql` inserts into its table) of `party` on
// objection `o`: who wrote it, what was said, the remedy and factor proposed
// (NULL when none), and when. False with *err on a store error.
bool store_opinion(Store& s, const char* sql, const Row& o, const Party& party, const Actor& who, const std::string& said,
                   const std::string& remedy, bool has_factor, double factor, const char* what, Error* err,
                   long long id = 0) {
  Stmt ins(s.db(), sql);
  ins.bind(1, o.id).bind(2, party.org_id);
  if (id) ins.bind(8, id);  // a response's number (votes have none)
  if (who.user_id) ins.bind(3, who.user_id); else ins.bind_null(3);
  ins.bind(4, said);
  if (remedy.empty()) ins.bind_null(5); else ins.bind(5, remedy);
  if (has_factor) ins.bind(6, factor); else ins.bind_null(6);
  ins.bind(7, now_utc());
  if (ins.run()) return true;
  *err = store_error(s, ins.rc(), what);
  return false;
}

}  // namespace

Result<Objection> respond(Store& s, const Actor& who, const Respond& in) {
  Error err;
  if (in.text.empty() || in.text.size() > 100000) return make_error(400, "bad-field", "text: 1 to 100000 bytes");
  if (base::blank(in.text)) return make_error(400, "bad-field", "text: the response shows nothing (only spaces or invisible characters)");
  if (!check_remedy(in.remedy, &err) || !check_factor(in.remedy, in.has_factor, in.factor, &err)) return err;
  Spec spec;
  spec.action = Action::Respond;
  spec.event = "response.add";
  spec.final_what = "responses";
  spec.refused = [](const Row& o, const RoundInfo&, const Party&) {
    return forbidden("only the accused organisation (" + o.against + ") responds to objection " + std::to_string(o.id));
  };
  spec.deadline = [](const Party&) { return "responses_due"; };
  spec.apply = [&](const Row& o, const RoundInfo&, const Party& party, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    Error e;
    const long long id = next_id(s, "responses", o.round_id, &e);
    if (!id) return e;
    if (!store_opinion(s,
                       "INSERT INTO responses (objection_id, organisation_id, user_id, text, remedy, factor, created_at, id) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                       o, party, who, in.text, in.remedy, in.has_factor, in.factor, "storing the response", &e, id))
      return e;
    p.key("response").value(id);
    p.key("text_sha256").value(text_digest(in.text));
    p.key("remedy").value(in.remedy.empty() ? "none" : in.remedy);
    if (in.has_factor) p.key("factor").value(in.factor);
    write_override(p, in.override_reason, overridden);
    return std::string("responded");
  };
  return change_objection(s, who, in, spec);
}

Result<Objection> comment(Store& s, const Actor& who, const Comment& in) {
  // A comment is a message, not a document (evidence and responses carry those): at most 10,000 bytes,
  // and at most kMaxComments of them on one objection, so that reading it stays bounded.
  if (in.text.empty() || in.text.size() > 10000)
    return make_error(400, "bad-field", "text: 1 to 10000 bytes",
                      "longer material goes in as evidence (referee objection evidence) or a response");
  if (base::blank(in.text)) return make_error(400, "bad-field", "text: the comment shows nothing (only spaces or invisible characters)");
  Spec spec;
  spec.action = Action::Comment;
  spec.event = "comment.add";
  spec.discussion = true;
  spec.refused = [](const Row& o, const RoundInfo&, const Party&) {
    return forbidden("the discussion of objection " + std::to_string(o.id) + " is for " + o.by + " (objecting), " +
                     o.against + " (accused) and the review chairs; others read it");
  };
  spec.deadline = [](const Party&) { return ""; };
  spec.apply = [&](const Row& o, const RoundInfo&, const Party& party, std::string&, JsonWriter& p) -> Result<std::string> {
    Error e;
    Stmt n(s.db(), "SELECT COUNT(*) FROM comments WHERE objection_id = ?1");
    n.bind(1, o.id);
    if (n.step() && n.col_int(0) >= kMaxComments)
      return make_error(422, "full", "the discussion of objection " + std::to_string(o.id) + " holds " +
                                         std::to_string(kMaxComments) + " comments, as many as one objection takes",
                        "take it to a meeting of the committee");
    const long long id = next_id(s, "comments", o.round_id, &e);
    if (!id) return e;
    Stmt ins(s.db(),
             "INSERT INTO comments (id, objection_id, organisation_id, user_id, text, created_at) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    ins.bind(1, id).bind(2, o.id);
    if (party.org_id) ins.bind(3, party.org_id); else ins.bind_null(3);
    if (who.user_id) ins.bind(4, who.user_id); else ins.bind_null(4);
    ins.bind(5, in.text).bind(6, now_utc());
    if (!ins.run()) return store_error(s, ins.rc(), "storing the comment");
    p.key("comment").value(id);
    p.key("text_sha256").value(text_digest(in.text));
    return o.state;
  };
  return change_objection(s, who, in, spec);
}

std::vector<CommentRecord> read_comments(Store& s, long long objection, std::string* error) {
  std::vector<CommentRecord> out;
  Stmt q(s.db(),
         "SELECT c.id, o.name, u.name, c.text, c.created_at FROM comments c LEFT JOIN organisations o ON o.id = "
         "c.organisation_id LEFT JOIN users u ON u.id = c.user_id WHERE c.objection_id = ?1 ORDER BY c.id");
  q.bind(1, objection);
  while (q.step()) {
    CommentRecord c;
    c.id = q.col_int(0);
    c.organisation = q.col_text(1);
    c.has_user = !q.col_null(2);
    c.user = q.col_text(2);
    c.text = q.col_text(3);
    c.at = q.col_text(4);
    out.push_back(std::move(c));
  }
  if (!q.ok() && error) *error = s.describe_error(q.rc(), "reading the comments");
  return out;
}

Result<Objection> vote(Store& s, const Actor& who, const CastVote& in) {
  Error err;
  const std::string& v = in.vote;
  if (v != "uphold" && v != "reject" && v != "abstain")
    return make_error(400, "bad-field", "vote '" + v + "' is not uphold, reject or abstain");
  if (!check_remedy(in.remedy, &err)) return err;
  if (v != "uphold" && (!in.remedy.empty() || in.has_factor))
    return make_error(400, "bad-field", std::string(v == "abstain" ? "an " : "a ") + v + " vote proposes no remedy or factor",
                      "leave out --remedy and --factor (API fields `remedy`, `factor`), or vote uphold");
  if (!check_factor(in.remedy, in.has_factor, in.factor, &err)) return err;
  Spec spec;
  spec.action = Action::Vote;
  spec.event = "vote.cast";
  spec.final_what = "votes";
  // A decision records the remedy the votes carry; a chair amending it to another needs a vote on that.
  spec.after_decision = true;
  spec.refused = [&who](const Row&, const RoundInfo& round, const Party&) {
    return forbidden("one vote per submitting organisation of " + round.name + "; " + who.user +
                     (who.organisation.empty() ? " acts for none" : " acts for " + who.organisation + ", which did not submit"));
  };
  spec.deadline = [](const Party&) { return "decisions_due"; };
  spec.apply = [&](const Row& o, const RoundInfo&, const Party& party, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    Error e;
    if (!store_opinion(s,
                       "INSERT OR REPLACE INTO votes (objection_id, organisation_id, user_id, vote, remedy, factor, "
                       "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                       o, party, who, v, in.remedy, in.has_factor, in.factor, "storing the vote", &e))
      return e;
    p.key("organisation").value(party.org_name).key("vote").value(v);
    if (!in.remedy.empty()) p.key("remedy").value(in.remedy);
    if (in.has_factor) p.key("factor").value(in.factor);
    write_override(p, in.override_reason, overridden);
    return o.state;
  };
  return change_objection(s, who, in, spec);
}

Result<Objection> decide(Store& s, const Actor& who, const Decide& in) {
  Error err;
  if (in.amend && in.reason.empty())
    return make_error(400, "missing-field", "amending a decision needs a reason", "send one (--reason TEXT, API field `reason`)");
  if (!in.amend && !in.reason.empty())
    return make_error(400, "bad-field", "a reason goes with amending a decision only", "add --amend (API: `amend`)");
  if (!check_remedy(in.remedy, &err)) return err;
  if (!in.tie_break.empty() && in.tie_break != "uphold" && in.tie_break != "reject")
    return make_error(400, "bad-field", "tie_break '" + in.tie_break + "' is not uphold or reject");
  // A factor alone asks for a normalisation: the one remedy that takes one (`--amend --factor 1.1`).
  const std::string asked = in.remedy.empty() && in.has_factor ? "normalise" : in.remedy;
  if (!check_factor(asked, in.has_factor, in.factor, &err)) return err;
  std::string fix_due;
  if (!in.fix_due.empty()) {
    std::string perr;
    if (!parse_instant(in.fix_due, &fix_due, &perr)) return make_error(400, "bad-date", "fix_due: " + perr);
    if (deadline_instant(fix_due) < now_utc())
      return make_error(422, "past", "fix_due " + fix_due + " has passed: a corrected package is due later than now",
                        "give a date to come (--fix-due, API field `fix_due`)");
  }
  Spec spec;
  spec.action = Action::Decide;
  spec.event = in.amend ? "decision.amend" : "decision.record";
  spec.amend = in.amend;
  spec.refused = [&who](const Row&, const RoundInfo&, const Party& party) {
    if (who.role != Role::Chair) return forbidden("only a review chair records a decision");
    return forbidden("a chair of " + party.org_name + " cannot decide a case " + party.org_name +
                         " is party to; another chair must",
                     "ask a review chair of another organisation, or one without an organisation");
  };
  spec.deadline = [](const Party&) { return "decisions_due"; };
  spec.apply = [&](const Row& o, const RoundInfo& round, const Party&, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    std::string remedy = asked;
    bool has_factor = in.has_factor;
    double factor = in.factor;
    if (!in.amend) {
      // The accused is heard first: its response, or responses_due passed.
      Stmt q(s.db(), "SELECT COUNT(*) FROM responses WHERE objection_id = ?1 AND organisation_id = ?2");
      q.bind(1, o.id).bind(2, o.against_org);
      bool responded = q.step() && q.col_int(0) > 0;
      // An extension the accused was given for its response moves that deadline for this objection.
      const std::string due_at =
          extended_deadline(round.schedule.responses_due, extended_until(s, o.id, o.against_org, "responses_due"));
      bool due_passed = !due_at.empty() && now_utc() > deadline_instant(due_at);
      if (!responded && !due_passed) {
        std::string due = due_at.empty() ? "responses_due is not set" : "responses_due (" + due_at + ") has not passed";
        if (in.override_reason.empty())
          return make_error(422, "not-heard",
                            "objection " + std::to_string(o.id) + " has no response from " + o.against + " and " + due,
                            "wait for " + o.against + "'s response or the deadline; a review chair may decide "
                            "earlier with a reason (--override REASON, API field `override`)");
        std::string before = "responses_due (" + (due_at.empty() ? "not set" : due_at) + "): decided before " +
                             o.against + "'s response";
        overridden = overridden.empty() ? before : overridden + "; " + before;
      }
    }
    int up = 0, rej = 0, abst = 0;
    {
      Stmt q(s.db(), "SELECT vote, COUNT(*) FROM votes WHERE objection_id = ?1 GROUP BY vote");
      q.bind(1, o.id);
      while (q.step()) {
        std::string v = q.col_text(0);
        int n = static_cast<int>(q.col_int(1));
        if (v == "uphold") up = n; else if (v == "reject") rej = n; else abst = n;
      }
    }
    Outcome out;
    if (in.waive) {
      ResultScore rs = o.results.empty() ? ResultScore{} : read_score(s, o.results[0]);
      if (!o.has_impact || !rs.has_score || rs.score <= 0)
        return make_error(422, "waiver",
                          "the score impact of objection " + std::to_string(o.id) +
                              " is unknown: it cannot be waived as under 2%",
                          "add evidence that gives the impact, or decide on the votes");
      double pct = impact_percent(rs.has_score, rs.score, o.impact);
      if (!waivable(pct))
        return make_error(422, "waiver", "the score impact is " + mllog::json_number(pct) +
                                             "%: only problems under 2% may be waived");
      if (!remedy.empty() && remedy != "none") return make_error(400, "bad-field", "a waived objection has no remedy");
      out.ok = true;
      out.outcome = "waived";
      out.majority = "waiver";
      remedy = "none";
    } else {
      if (up + rej == 0)
        return make_error(422, "no-votes",
                          "objection " + std::to_string(o.id) + " has no uphold or reject vote (" + std::to_string(abst) +
                              " abstaining): a decision needs at least one",
                          "the submitting organisations vote (referee objection vote " + std::to_string(o.id) +
                              " --vote uphold|reject); an impact under 2% may be waived (--waive)");
      // Upheld or rejected on the votes cast; when upheld, the remedy and factor are those the votes carry.
      out = decide_outcome(up, rej, "none", in.tie_break);
      if (!out.ok) return make_error(422, "no-majority", out.error);
      if (out.outcome == "rejected") {
        if (!remedy.empty() && remedy != "none")
          return make_error(422, "rejected", "the votes reject objection " + std::to_string(o.id) +
                                                 ": there is no remedy (" + remedy + ")");
        remedy = "none";
        has_factor = false;
      } else {
        std::vector<Proposal> proposals;
        Stmt q(s.db(), "SELECT COALESCE(remedy, ''), factor FROM votes WHERE objection_id = ?1 AND vote = 'uphold'");
        q.bind(1, o.id);
        while (q.step()) proposals.push_back({q.col_text(0), !q.col_null(1), q.col_double(1)});
        if (!q.ok()) return store_error(s, q.rc(), "reading the votes");
        Carried c = carried_remedy(proposals, rej, remedy, has_factor, factor, in.tie_break);
        if (!c.ok) return make_error(422, c.code, c.error, c.hint);
        remedy = c.remedy;
        has_factor = c.has_factor;
        factor = c.factor;
        out.majority = c.majority;
      }
    }
    // A fix names when the corrected package is due: the date given, else the round's scores_final.
    std::string due;
    if (remedy == "fix" && out.outcome == "upheld") {
      due = fix_due.empty() ? round.schedule.scores_final : fix_due;
    } else if (!fix_due.empty()) {
      return make_error(400, "bad-field", "fix_due goes with the remedy fix only (this decision's remedy is " +
                                              (remedy.empty() ? std::string("none") : remedy) + ")",
                        "leave fix_due out");
    }
    // Amending: the decision as it was goes into the event (the history); the row holds the current one.
    long long decision_id = 0;
    std::string before;
    if (in.amend) {
      Stmt q(s.db(),
             "SELECT d.id, d.outcome, d.remedy, d.factor, d.majority, COALESCE(u.name, 'local-admin'), d.text, "
             "d.created_at, d.fix_due FROM decisions d LEFT JOIN users u ON u.id = d.decided_by "
             "WHERE d.objection_id = ?1 ORDER BY d.id DESC LIMIT 1");
      q.bind(1, o.id);
      if (!q.step())
        return q.ok() ? make_error(500, "store", "objection " + std::to_string(o.id) + " is decided but has no decision row")
                      : store_error(s, q.rc(), "reading the decision");
      decision_id = q.col_int(0);
      JsonWriter b(0);
      b.begin_object().key("outcome").value(q.col_text(1)).key("remedy").value(q.col_text(2));
      b.key("factor");
      if (q.col_null(3)) b.null(); else b.value(q.col_double(3));
      b.key("majority").value(q.col_text(4)).key("decided_by").value(q.col_text(5)).key("text");
      if (q.col_null(6)) b.null(); else b.value(q.col_text(6));
      b.key("created_at").value(q.col_text(7));
      if (!q.col_null(8)) b.key("fix_due").value(q.col_text(8));
      b.end_object();
      before = b.str();
    }
    Stmt ins(s.db(), in.amend ? "UPDATE decisions SET objection_id = ?1, outcome = ?2, remedy = ?3, factor = ?4, "
                                "votes_uphold = ?5, votes_reject = ?6, votes_abstain = ?7, majority = ?8, decided_by = ?9, "
                                "text = ?10, created_at = ?11, fix_due = ?13 WHERE id = ?12"
                              : "INSERT INTO decisions (objection_id, outcome, remedy, factor, votes_uphold, votes_reject, "
                                "votes_abstain, majority, decided_by, text, created_at, id, fix_due) VALUES (?1, ?2, ?3, ?4, "
                                "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    if (!in.amend) {
      Error e;
      decision_id = next_id(s, "decisions", o.round_id, &e);
      if (!decision_id) return e;
    }
    ins.bind(12, decision_id);
    ins.bind(1, o.id).bind(2, out.outcome).bind(3, remedy);
    if (has_factor) ins.bind(4, factor); else ins.bind_null(4);
    ins.bind(5, up).bind(6, rej).bind(7, abst).bind(8, out.majority);
    if (who.user_id) ins.bind(9, who.user_id); else ins.bind_null(9);
    if (in.text.empty()) ins.bind_null(10); else ins.bind(10, in.text);
    ins.bind(11, now_utc());
    if (due.empty()) ins.bind_null(13); else ins.bind(13, due);
    if (!ins.run()) return store_error(s, ins.rc(), "storing the decision");
    // The status this decision sets (the results' statuses follow in change_objection: the newest decision wins).
    const std::string status = out.outcome == "upheld" ? status_of_remedy(remedy) : "";
    p.key("decision").value(decision_id).key("outcome").value(out.outcome).key("remedy").value(remedy);
    if (has_factor) p.key("factor").value(factor);
    if (!due.empty()) p.key("fix_due").value(due);
    p.key("votes").begin_object().key("uphold").value(up).key("reject").value(rej).key("abstain").value(abst).end_object();
    p.key("majority").value(out.majority);
    p.key("text_sha256");
    if (in.text.empty()) p.null(); else p.value(text_digest(in.text));
    if (!status.empty()) p.key("result_status").value(status);
    write_override(p, in.override_reason, overridden);
    if (in.amend) p.key("reason").value(in.reason).key("before").raw(before);
    return std::string("decided");
  };
  return change_objection(s, who, in, spec);
}

Result<Objection> withdraw(Store& s, const Actor& who, const Withdraw& in) {
  Spec spec;
  spec.action = Action::Withdraw;
  spec.event = "objection.withdraw";
  spec.refused = [](const Row& o, const RoundInfo&, const Party&) {
    return forbidden("only the objecting organisation (" + o.by + ") withdraws objection " + std::to_string(o.id));
  };
  spec.deadline = [](const Party&) { return ""; };
  spec.apply = [&](const Row&, const RoundInfo&, const Party&, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    if (!in.text.empty()) p.key("text").value(in.text);
    write_override(p, in.override_reason, overridden);
    return std::string("withdrawn");
  };
  return change_objection(s, who, in, spec);
}

Result<Objection> extend(Store& s, const Actor& who, const Extend& in) {
  const char* const names[] = {"objections_due", "responses_due", "decisions_due"};
  if (std::find(std::begin(names), std::end(names), in.deadline) == std::end(names))
    return make_error(400, "bad-field", "deadline '" + in.deadline + "' is not objections_due, responses_due or decisions_due",
                      "objections_due: the objecting organisation's evidence; responses_due: the accused's response "
                      "and evidence; decisions_due: votes");
  if (in.organisation.empty()) return make_error(400, "bad-field", "organisation: required (the organisation given more time)");
  if (base::blank(in.reason)) return make_error(400, "bad-field", "reason: required (why the organisation is given more time)");
  std::string until, perr;
  if (!parse_instant(in.until, &until, &perr)) return make_error(400, "bad-date", "until: " + perr);
  Spec spec;
  spec.action = Action::OverrideDeadline;
  spec.event = "objection.extend";
  spec.refused = [&who](const Row& o, const RoundInfo&, const Party& party) {
    if (who.role != Role::Chair) return forbidden("only a review chair grants an extension");
    return forbidden("a chair of " + party.org_name + " does not extend a deadline in a case " +
                         (party.standing.partner ? "of its partner (" + o.by + " against " + o.against + ")"
                                                 : party.org_name + " is party to") +
                         " (objection " + std::to_string(o.id) + ")",
                     "ask a review chair of another organisation, or one without an organisation");
  };
  spec.deadline = [](const Party&) { return ""; };
  spec.apply = [&](const Row& o, const RoundInfo& round, const Party&, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    // A final round takes no evidence, response or vote: more time there would not be used.
    if (round.state == "final")
      return make_error(422, "final", "round " + round.name + " is final: no evidence, response or vote is added, so "
                                      "an extension would not be used",
                        "move the round back to review first (referee round state " + round.name + " review --reason ...)");
    long long org_id = 0;
    std::string org;
    if (!find_organisation(s, in.organisation, &org_id, &org)) return unknown_organisation_error(in.organisation);
    // Each deadline is one party's: objections_due the objecting organisation's evidence, responses_due the
    // accused's response and evidence, decisions_due the votes of every organisation of the round.
    if (in.deadline == "objections_due" && org_id != o.by_org)
      return make_error(422, "not-its-deadline",
                        "objections_due is the objecting organisation's deadline on objection " + std::to_string(o.id) +
                            " (" + o.by + "'s evidence); " + org + " has nothing to meet there",
                        "extend responses_due for the accused (" + o.against + "), decisions_due for a voter");
    if (in.deadline == "responses_due" && org_id != o.against_org)
      return make_error(422, "not-its-deadline",
                        "responses_due is the accused organisation's deadline on objection " + std::to_string(o.id) +
                            " (" + o.against + "'s response); " + org + " has nothing to meet there",
                        "extend objections_due for the objecting organisation (" + o.by + "), decisions_due for a voter");
    if (!submitted(s, o.round_id, org_id))
      return make_error(422, "not-in-round",
                        "organisation " + org + " has no package in round " + round.name + ": it does not vote there",
                        "name an organisation that submitted to " + round.name);
    const std::string current = deadline_of(round.schedule, in.deadline);
    if (current.empty())
      return make_error(422, "no-deadline", "round " + round.name + " has no " + in.deadline + ": there is nothing to extend",
                        "set the round's schedule (referee round schedule)");
    if (deadline_instant(until) <= deadline_instant(current))
      return make_error(422, "not-later",
                        "until " + until + " is not after the round's " + in.deadline + " (" + current +
                            "): an extension gives more time");
    if (!round.schedule.scores_final.empty() && deadline_instant(until) > deadline_instant(round.schedule.scores_final))
      return make_error(422, "after-scores-final",
                        "until " + until + " is after the round's scores_final (" + round.schedule.scores_final +
                            "): after it nothing changes",
                        "give a time before scores_final, or move the round's schedule (referee round schedule)");
    std::string before = extended_until(s, o.id, org_id, in.deadline);
    long long user = 0;
    std::string uerr;
    if (!actor_user_id(s, who, &user, &uerr)) return make_error(500, "store", uerr);
    Error numbering;
    const long long id = next_id(s, "extensions", o.round_id, &numbering);
    if (!id) return numbering;
    Stmt up(s.db(),
            "INSERT INTO extensions (objection_id, organisation_id, deadline, until, reason, granted_by, created_at, id) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (objection_id, organisation_id, deadline) DO UPDATE SET "
            "until = excluded.until, reason = excluded.reason, granted_by = excluded.granted_by, "
            "created_at = excluded.created_at");
    up.bind(1, o.id).bind(2, org_id).bind(3, in.deadline).bind(4, until).bind(5, in.reason).bind(6, user).bind(7, now_utc());
    up.bind(8, id);
    if (!up.run()) return store_error(s, up.rc(), "recording the extension");
    p.key("organisation").value(org).key("deadline").value(in.deadline).key("until").value(until);
    p.key("round_deadline").value(current).key("reason").value(in.reason);
    if (!before.empty()) p.key("replaces").value(before);
    write_override(p, in.override_reason, overridden);
    return o.state;
  };
  return change_objection(s, who, in, spec);
}

Result<Objection> set_vote_deadline(Store& s, const Actor& who, const SetVoteDeadline& in) {
  if (base::blank(in.reason)) return make_error(400, "bad-field", "reason: required (why the votes are due then)");
  std::string until, perr;
  if (!parse_instant(in.until, &until, &perr)) return make_error(400, "bad-date", "until: " + perr);
  Spec spec;
  spec.action = Action::OverrideDeadline;
  spec.event = "objection.vote_deadline";
  spec.refused = [&who](const Row& o, const RoundInfo&, const Party& party) {
    if (who.role != Role::Chair) return forbidden("only a review chair sets an objection's vote deadline");
    return forbidden("a chair of " + party.org_name + " does not set the vote deadline of a case " +
                         (party.standing.partner ? "of its partner (" + o.by + " against " + o.against + ")"
                                                 : party.org_name + " is party to") +
                         " (objection " + std::to_string(o.id) + ")",
                     "ask a review chair of another organisation, or one without an organisation");
  };
  spec.deadline = [](const Party&) { return ""; };
  spec.apply = [&](const Row& o, const RoundInfo& round, const Party&, std::string& overridden,
                   JsonWriter& p) -> Result<std::string> {
    if (round.state == "final")
      return make_error(422, "final", "round " + round.name + " is final: no vote is added, so a vote deadline would not be used",
                        "move the round back to review first (referee round state " + round.name + " review --reason ...)");
    if (deadline_instant(until) <= now_utc())
      return make_error(422, "past", "until " + until + " has passed: a vote deadline is a time to come");
    if (!round.schedule.scores_final.empty() && deadline_instant(until) > deadline_instant(round.schedule.scores_final))
      return make_error(422, "after-scores-final",
                        "until " + until + " is after the round's scores_final (" + round.schedule.scores_final +
                            "): after it nothing changes",
                        "give a time before scores_final, or move the round's schedule (referee round schedule)");
    Stmt up(s.db(), "UPDATE objections SET votes_due = ?2 WHERE id = ?1");
    up.bind(1, o.id).bind(2, until);
    if (!up.run()) return store_error(s, up.rc(), "recording the vote deadline");
    p.key("deadline").value("votes_due").key("until").value(until).key("reason").value(in.reason);
    p.key("replaces").value(o.votes_due.empty() ? "decisions_due " + round.schedule.decisions_due : o.votes_due);
    write_override(p, in.override_reason, overridden);
    return o.state;
  };
  return change_objection(s, who, in, spec);
}

std::vector<ExtensionRecord> read_extensions(Store& s, long long objection, std::string* error) {
  if (s.opened_version() < 8) return {};  // a store opened read-only before schema 8 has none
  Stmt q(s.db(),
         "SELECT o.name, x.deadline, x.until, x.reason, COALESCE(u.name, 'local-admin'), x.created_at FROM extensions x "
         "JOIN organisations o ON o.id = x.organisation_id LEFT JOIN users u ON u.id = x.granted_by "
         "WHERE x.objection_id = ?1 ORDER BY o.name, x.deadline");
  q.bind(1, objection);
  std::vector<ExtensionRecord> out;
  while (q.step()) out.push_back({q.col_text(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_text(5)});
  if (!q.ok() && error) *error = s.describe_error(q.rc(), "reading extensions");
  return out;
}

std::string extended_until(Store& s, long long objection, long long org_id, const std::string& deadline) {
  if (s.opened_version() < 8) return "";
  Stmt q(s.db(), "SELECT until FROM extensions WHERE objection_id = ?1 AND organisation_id = ?2 AND deadline = ?3");
  q.bind(1, objection).bind(2, org_id).bind(3, deadline);
  return q.step() ? q.col_text(0) : "";
}

std::vector<Opinion> read_opinions(Store& s, long long objection, bool votes, std::string* error) {
  Stmt q(s.db(), votes ? "SELECT 0, o.name, u.name, v.vote, v.remedy, v.factor, v.created_at FROM votes v "
                         "JOIN organisations o ON o.id = v.organisation_id LEFT JOIN users u ON u.id = v.user_id "
                         "WHERE v.objection_id = ?1 ORDER BY o.name"
                       : "SELECT r.id, o.name, u.name, r.text, r.remedy, r.factor, r.created_at FROM responses r "
                         "JOIN organisations o ON o.id = r.organisation_id LEFT JOIN users u ON u.id = r.user_id "
                         "WHERE r.objection_id = ?1 ORDER BY r.id");
  q.bind(1, objection);
  std::vector<Opinion> out;
  while (q.step())
    out.push_back({q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_text(6),
                   !q.col_null(2), !q.col_null(4), !q.col_null(5), q.col_double(5)});
  if (!q.ok() && error) *error = s.describe_error(q.rc(), votes ? "reading votes" : "reading responses");
  return out;
}

bool read_decision(Store& s, long long objection, DecisionRecord* out, std::string* error) {
  // A store opened read-only before schema 14 has no fix dates.
  const bool fix_due = s.opened_version() >= 14;
  Stmt q(s.db(), fix_due ? "SELECT d.id, d.outcome, d.remedy, d.factor, d.votes_uphold, d.votes_reject, d.votes_abstain, "
                           "d.majority, u.name, d.text, d.created_at, COALESCE(d.fix_due, '') FROM decisions d LEFT JOIN "
                           "users u ON u.id = d.decided_by WHERE d.objection_id = ?1"
                         : "SELECT d.id, d.outcome, d.remedy, d.factor, d.votes_uphold, d.votes_reject, d.votes_abstain, "
                           "d.majority, u.name, d.text, d.created_at, '' FROM decisions d LEFT JOIN "
                           "users u ON u.id = d.decided_by WHERE d.objection_id = ?1");
  q.bind(1, objection);
  if (q.step()) {
    *out = {q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(7), q.col_text(8), q.col_text(9), q.col_text(10),
            !q.col_null(8), !q.col_null(9), !q.col_null(3), q.col_double(3), q.col_int(4), q.col_int(5), q.col_int(6),
            q.col_text(11)};
    return true;
  }
  if (!q.ok() && error) *error = s.describe_error(q.rc(), "reading decisions");
  return false;
}

}  // namespace referee::review
