#include "review/verify.h"

#include <cmath>
#include <map>
#include <set>

#include "mllog/json.h"
#include "review/events.h"
#include "review/policy.h"

namespace referee::review {

using submissions::Stmt;

namespace {

std::string text(const mllog::Json* j) {
  if (!j || j->kind == mllog::Json::Kind::Null) return "";
  if (j->kind == mllog::Json::Kind::String) return j->s;
  if (j->kind == mllog::Json::Kind::Int) return std::to_string(j->i);
  return "";
}

bool number(const mllog::Json* j, double* out) {
  if (!j) return false;
  if (j->kind == mllog::Json::Kind::Int) *out = static_cast<double>(j->i);
  else if (j->kind == mllog::Json::Kind::Float) *out = j->f;
  else return false;
  return true;
}

bool same_factor(bool has_a, double a, bool has_b, double b) {
  if (has_a != has_b) return false;
  return !has_a || std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(a));
}

std::string factor_text(bool has, double v) { return has ? std::to_string(v) : "none"; }

struct Decided {
  std::string outcome, remedy;
  bool has_factor = false;
  double factor = 0;
  long long seq = 0;
  long long objection = 0;
};

}  // namespace

TableCheck verify_tables(submissions::Store& s, std::string* error) {
  TableCheck c;
  auto fail = [&](const std::string& p) {
    c.ok = false;
    c.problem = p;
    return c;
  };
  auto events = read_events(s, "objection/", error);
  if (!error->empty()) return fail(*error);
  // What the events say: per decision id, the latest decision.record (or
  // decision.amend); per objection, whether decided or withdrawn; per vote, the latest.
  std::map<long long, Decided> decided;
  std::map<long long, std::string> objection_state;  // from the events: decided | withdrawn
  std::map<std::pair<long long, std::string>, Decided> votes;  // (objection, organisation) -> vote (in outcome)
  struct Filed {
    std::string round;
    std::vector<std::string> results;  // ORG/SYSTEM/BENCHMARK
    long long seq = 0;
  };
  std::map<long long, Filed> filed;  // objection -> what objection.file named
  for (const auto& e : events) {
    long long oid = std::atoll(e.subject.c_str() + 10);
    if (e.subject.find('/', 10) != std::string::npos) continue;  // something under an objection
    mllog::Json p;
    std::string perr;
    if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
    if (e.action == "decision.record" || e.action == "decision.amend") {
      Decided d;
      d.outcome = text(p.find("outcome"));
      d.remedy = text(p.find("remedy"));
      d.has_factor = number(p.find("factor"), &d.factor);
      d.seq = e.seq;
      d.objection = oid;
      const auto* id = p.find("decision");
      if (id && id->kind == mllog::Json::Kind::Int) decided[id->i] = d;
      objection_state[oid] = "decided";
    } else if (e.action == "objection.file") {
      filed[oid] = {text(p.find("round")), {}, e.seq};
      if (const auto* rs = p.find("results"))
        for (const auto& r : rs->items) filed[oid].results.push_back(text(&r));
    } else if (e.action == "objection.withdraw") {
      objection_state[oid] = "withdrawn";
    } else if (e.action == "vote.cast") {
      Decided v;
      v.outcome = text(p.find("vote"));
      v.remedy = text(p.find("remedy"));
      v.has_factor = number(p.find("factor"), &v.factor);
      v.seq = e.seq;
      votes[{oid, text(p.find("organisation"))}] = v;
    }
  }
  std::map<long long, Decided> decision_rows;
  {
    Stmt q(s.db(), "SELECT id, objection_id, outcome, remedy, factor FROM decisions ORDER BY id");
    while (q.step()) {
      long long id = q.col_int(0);
      std::string row = "decisions row " + std::to_string(id) + " (objection " + std::to_string(q.col_int(1)) + ")";
      auto it = decided.find(id);
      if (it == decided.end()) return fail(row + " has no decision.record event in the review log");
      const Decided& d = it->second;
      Decided r;
      r.outcome = q.col_text(2);
      r.remedy = q.col_text(3);
      r.has_factor = !q.col_null(4);
      r.factor = q.col_double(4);
      decision_rows[id] = r;
      if (r.outcome != d.outcome)
        return fail(row + ": outcome is '" + r.outcome + "', event " + std::to_string(d.seq) + " says '" + d.outcome + "'");
      if (r.remedy != d.remedy)
        return fail(row + ": remedy is '" + r.remedy + "', event " + std::to_string(d.seq) + " says '" + d.remedy + "'");
      if (!same_factor(r.has_factor, r.factor, d.has_factor, d.factor))
        return fail(row + ": factor is " + factor_text(r.has_factor, r.factor) + ", event " + std::to_string(d.seq) +
                    " says " + factor_text(d.has_factor, d.factor));
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading decisions"));
  }
  for (const auto& [id, d] : decided)
    if (!decision_rows.count(id))
      return fail("decisions: row " + std::to_string(id) + " recorded by event " + std::to_string(d.seq) + " is missing");
  // The results each objection names, as its objection.file event named them; objection_results must agree.
  std::map<long long, std::vector<ObjectionOnResult>> on_result;  // result id -> the objections naming it, per the log
  std::map<long long, std::string> result_names;
  for (const auto& [oid, f] : filed) {
    long long round_id = 0;
    {
      Stmt r(s.db(), "SELECT id FROM rounds WHERE name = ?1");
      r.bind(1, f.round);
      if (r.step()) round_id = r.col_int(0);
    }
    std::set<long long> named;
    for (const auto& name : f.results) {
      long long rid = 0, org = 0;
      Error ignored;
      if (!find_result(s, round_id, name, &rid, &org, &ignored))
        return fail("objection " + std::to_string(oid) + ": result " + name + " named by event " + std::to_string(f.seq) +
                    " is not in the store");
      named.insert(rid);
      result_names[rid] = name;
      ObjectionOnResult o;
      o.objection = oid;
      auto st = objection_state.find(oid);
      o.state = st == objection_state.end() ? "open" : st->second;
      for (const auto& [did, d] : decided)
        if (d.objection == oid) {
          o.decision = did;
          o.outcome = d.outcome;
          o.remedy = d.remedy;
          o.has_factor = d.has_factor;
          o.factor = d.factor;
        }
      on_result[rid].push_back(o);
    }
    std::set<long long> linked;
    Stmt q(s.db(), "SELECT result_id FROM objection_results WHERE objection_id = ?1");
    q.bind(1, oid);
    while (q.step()) linked.insert(q.col_int(0));
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading objection_results"));
    if (linked != named)
      return fail("objection_results of objection " + std::to_string(oid) + ": " + std::to_string(linked.size()) +
                  " result(s) linked, event " + std::to_string(f.seq) + " names " + std::to_string(named.size()));
  }
  {
    Stmt q(s.db(), "SELECT DISTINCT objection_id FROM objection_results ORDER BY 1");
    while (q.step())
      if (!filed.count(q.col_int(0)))
        return fail("objection_results: rows of objection " + std::to_string(q.col_int(0)) +
                    ", which no objection.file event in the review log filed");
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading objection_results"));
  }
  // Every result's status as the log makes it (status_of_result), against result_status, both ways.
  std::map<long long, StatusOfResult> want;
  for (const auto& [rid, on] : on_result) {
    StatusOfResult w = status_of_result(on);
    if (!w.status.empty()) want[rid] = w;
  }
  {
    Stmt q(s.db(), "SELECT result_id, status, factor, COALESCE(decision_id, 0), COALESCE(objection_id, 0) FROM "
                   "result_status ORDER BY result_id");
    std::set<long long> seen;
    while (q.step()) {
      long long rid = q.col_int(0);
      seen.insert(rid);
      std::string name = result_names.count(rid) ? " (" + result_names[rid] + ")" : "";
      std::string row = "result_status row for result " + std::to_string(rid) + name;
      std::string status = q.col_text(1);
      auto it = want.find(rid);
      if (it == want.end())
        return fail(row + ": status '" + status + "', but no decision or open objection in the review log gives it one");
      const StatusOfResult& w = it->second;
      std::string because = w.decision ? "decision " + std::to_string(w.decision) + " of objection " + std::to_string(w.objection)
                                       : "objection " + std::to_string(w.objection) + ", open";
      if (status != w.status)
        return fail(row + ": status is '" + status + "', the review log makes it '" + w.status + "' (" + because + ")");
      if (q.col_int(3) != w.decision || q.col_int(4) != w.objection)
        return fail(row + ": names decision " + std::to_string(q.col_int(3)) + " and objection " +
                    std::to_string(q.col_int(4)) + ", the review log says " + because);
      if (!same_factor(!q.col_null(2), q.col_double(2), w.has_factor, w.factor))
        return fail(row + ": factor is " + factor_text(!q.col_null(2), q.col_double(2)) + ", " + because + " says " +
                    factor_text(w.has_factor, w.factor));
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading result_status"));
    for (const auto& [rid, w] : want)
      if (!seen.count(rid))
        return fail("result_status: result " + std::to_string(rid) + " (" + result_names[rid] + ") has no row; the review log makes it '" +
                    w.status + "' (" + (w.decision ? "decision " + std::to_string(w.decision) : "objection " + std::to_string(w.objection) + ", open") + ")");
  }
  {
    std::set<std::pair<long long, std::string>> rows;
    Stmt q(s.db(),
           "SELECT v.objection_id, o.name, v.vote, COALESCE(v.remedy, ''), v.factor FROM votes v JOIN organisations o "
           "ON o.id = v.organisation_id ORDER BY v.objection_id, o.name");
    while (q.step()) {
      std::pair<long long, std::string> key{q.col_int(0), q.col_text(1)};
      rows.insert(key);
      std::string row = "votes row of " + key.second + " on objection " + std::to_string(key.first);
      auto it = votes.find(key);
      if (it == votes.end()) return fail(row + " has no vote.cast event in the review log");
      const Decided& v = it->second;
      if (q.col_text(2) != v.outcome || q.col_text(3) != v.remedy)
        return fail(row + ": '" + q.col_text(2) + "' remedy '" + q.col_text(3) + "', the latest vote.cast (event " +
                    std::to_string(v.seq) + ") says '" + v.outcome + "' remedy '" + v.remedy + "'");
      if (!same_factor(!q.col_null(4), q.col_double(4), v.has_factor, v.factor))
        return fail(row + ": factor " + factor_text(!q.col_null(4), q.col_double(4)) + ", event " +
                    std::to_string(v.seq) + " says " + factor_text(v.has_factor, v.factor));
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading votes"));
    for (const auto& [key, v] : votes)
      if (!rows.count(key))
        return fail("votes: the vote of " + key.second + " on objection " + std::to_string(key.first) + " (event " +
                    std::to_string(v.seq) + ") is missing");
  }
  {
    Stmt q(s.db(), "SELECT id, state FROM objections ORDER BY id");
    while (q.step()) {
      long long id = q.col_int(0);
      std::string state = q.col_text(1);
      if (!filed.count(id)) return fail("objections row " + std::to_string(id) + " has no objection.file event in the review log");
      auto it = objection_state.find(id);
      std::string want = it == objection_state.end() ? "" : it->second;
      bool agrees = want.empty() ? (state == "open" || state == "responded") : state == want;
      if (!agrees)
        return fail("objections row " + std::to_string(id) + ": state is '" + state + "', the review log says " +
                    (want.empty() ? "it is neither decided nor withdrawn" : "'" + want + "'"));
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading objections"));
  }
  return c;
}

LogHead log_head(submissions::Store& s, std::string* error) {
  LogHead h;
  Stmt q(s.db(), "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1");
  if (q.step()) {
    h.seq = q.col_int(0);
    h.hash = q.col_text(1);
  } else if (!q.ok()) {
    *error = s.describe_error(q.rc(), "reading the review log");
  }
  return h;
}

std::string check_anchor(submissions::Store& s, const std::string& anchor, std::string* error) {
  std::string hash = anchor;
  long long seq = 0;
  size_t colon = anchor.find(':');
  if (colon != std::string::npos) {
    std::string n = anchor.substr(0, colon);
    if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos)
      return "--head " + anchor + " is not SEQ:HASH (e.g. 42:3f5a...)";
    seq = std::atoll(n.c_str());
    hash = anchor.substr(colon + 1);
  }
  if (hash.size() < 8 || hash.size() > 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    return "--head " + anchor + ": the hash must be 8 to 64 lower-case hex digits of an event's hash";
  Stmt q(s.db(), seq ? "SELECT seq, hash FROM events WHERE seq = ?1"
                     : "SELECT seq, hash FROM events WHERE substr(hash, 1, length(?2)) = ?2 ORDER BY seq LIMIT 1");
  if (seq) q.bind(1, seq);
  else q.bind(2, hash);
  if (!q.step()) {
    if (!q.ok()) {
      *error = s.describe_error(q.rc(), "reading the review log");
      return *error;
    }
    return seq ? "the recorded head, event " + std::to_string(seq) +
                     ", is not in the review log any more: events were deleted from its end or the log was rewritten"
               : "no event of the review log has the recorded hash " + hash +
                     ": events were deleted from its end or the log was rewritten";
  }
  if (q.col_text(1).compare(0, hash.size(), hash) != 0)
    return "event " + std::to_string(seq) + " has hash " + q.col_text(1).substr(0, 16) + "..., the recorded head says " +
           hash.substr(0, 16) + "...: the log was rewritten";
  return "";
}

}  // namespace referee::review
