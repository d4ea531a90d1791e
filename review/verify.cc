#include "review/verify.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "base/digest.h"
#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/policy.h"
#include "submissions/import.h"

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

std::string factor_text(bool has, double v) { return has ? mllog::json_number(v) : "none"; }

struct Decided {
  std::string outcome, remedy;
  bool has_factor = false;
  double factor = 0;
  long long seq = 0;
  long long objection = 0;
  std::string majority, actor;
  long long votes[3] = {-1, -1, -1};       // uphold, reject, abstain as the event counted them (-1: not given)
  bool text_sha = false;                   // the event keeps the decision's text digest (schema 7 on)
  std::string text_sha256;                // "" for no text
  std::string fix_due;                    // "" for none
};

// The SHA-256 of the first `columns` columns of the statement's one row,
// each length-prefixed (no two rows give one text); "" when there is none.
std::string row_digest(Stmt& q, int columns) {
  if (!q.step()) return "";
  std::string all;
  for (int i = 0; i < columns; ++i) {
    std::string field = q.col_text(i);
    all += std::to_string(field.size()) + ":" + field;
  }
  return base::sha256_hex(all);
}

}  // namespace

std::string evidence_row_digest(submissions::Store& s, long long evidence_id) {
  Stmt q(s.db(),
         "SELECT kind, COALESCE(finding_id, ''), COALESCE((SELECT file FROM runs WHERE id = run_id), ''), "
         "COALESCE(first_line, ''), "
         "COALESCE(last_line, ''), COALESCE(quoted, ''), COALESCE(figure_name, ''), COALESCE(figure_value, ''), "
         "COALESCE(figure_unit, ''), COALESCE(impact_minutes, ''), COALESCE(note, ''), COALESCE(user_id, '') FROM "
         "evidence WHERE id = ?1");
  q.bind(1, evidence_id);
  return row_digest(q, 12);
}

std::string text_digest(const std::string& text) { return base::sha256_hex(text); }

std::string finding_row_digest(submissions::Store& s, long long finding_id) {
  Stmt q(s.db(),
         "SELECT round_id, organisation_id, kind, rule, summary, evidence_json, COALESCE(impact_minutes, ''), fingerprint "
         "FROM findings WHERE id = ?1");
  q.bind(1, finding_id);
  return row_digest(q, 8);
}

std::string member_hash(const std::string& chain_hash) { return base::sha256_hex("referee member view of " + chain_hash); }

std::string token_digest(const std::string& stored_hash) { return base::sha256_hex("token:" + stored_hash); }

TableCheck verify_tables(submissions::Store& s, std::string* error) {
  TableCheck c;
  auto fail = [&](const std::string& p) {
    c.ok = false;
    c.problem = p;
    return c;
  };
  auto events = read_events(s, "objection/", error);
  if (!error->empty()) return fail(*error);
  // When each event was written, for the times the rows keep.
  std::map<long long, std::string> event_at;
  {
    Stmt t(s.db(), "SELECT seq, at FROM events ORDER BY seq");
    while (t.step()) event_at[t.col_int(0)] = t.col_text(1);
    if (!t.ok()) return fail(*error = s.describe_error(t.rc(), "reading the review log"));
  }
  // "" when a row's time `at` (its created_at, a token's revoked_at) is that of event `seq`, which wrote
  // the row: a row is written first and its event last, in one transaction, so the time is not after
  // the event's nor before the event before it (unless the clock went back between them); else what is
  // wrong. A backdated filing (before a deadline) is found so.
  auto stamp = [&](const std::string& field, const std::string& at, long long seq) -> std::string {
    auto it = event_at.find(seq);
    if (it == event_at.end()) return "";
    const std::string ev = "event " + std::to_string(seq);
    if (at > it->second) return field + " " + at + ", after " + ev + " that wrote it (" + it->second + ")";
    if (it != event_at.begin()) {
      auto before = std::prev(it);
      if (before->second <= it->second && at < before->second)
        return field + " " + at + ", before event " + std::to_string(before->first) + " (" + before->second +
               ") that came before " + ev + " that wrote it (" + it->second + ")";
    }
    return "";
  };
  // What the events say: per decision id, the latest decision.record (or
  // decision.amend); per objection, whether decided or withdrawn; per vote, the latest.
  std::map<long long, Decided> decided;
  // Who recorded each decision event (seq, actor): held to the users' roles below.
  std::vector<std::pair<long long, std::string>> decision_actors;
  std::map<long long, std::string> objection_state;  // from the events: decided | withdrawn
  std::map<long long, std::pair<long long, std::string>> votes_due;  // objection -> the latest objection.vote_deadline (seq, until)
  std::map<std::pair<long long, std::string>, Decided> votes;  // (objection, organisation) -> vote (in outcome)
  struct Filed {
    std::string round;
    std::vector<std::string> results;  // ORG/SYSTEM/BENCHMARK
    long long seq = 0;
    std::string by, against, title, rule, text_sha256;  // text_sha256 "" in events before schema 7
    std::string actor;                                  // who filed it
    bool finding_known = false;                         // the event names the finding it was filed from (schema 7 on)
    std::string finding;                                // its id, "" for none
    bool impact_known = false;                          // the events give the impact (schema 7 on)
    bool has_impact = false, has_computed = false;
    double impact = 0, computed = 0;
    bool responded = false;
    long long events = 0;                               // events about it that bump its version (all but comments)
    bool basis_known = false;                           // the events give how referee's impact was found
    std::string computed_basis;
    std::multiset<std::string> evidence;                // the evidence rows' digests, from every event that adds some
    std::vector<std::pair<long long, std::vector<std::string>>> evidence_by_event;  // (event, digests it added)
    bool evidence_known = true;                         // false when an event added evidence without digests
  };
  struct Responded {
    long long seq = 0, objection = 0;
    std::string text_sha256, organisation, remedy;
    bool has_factor = false;
    double factor = 0;
    std::string actor;  // who responded
    std::string at;     // the event's time
  };
  std::map<long long, Responded> responded;  // response id -> what its response.add event recorded
  std::map<long long, Responded> commented;  // comment id -> what its comment.add event recorded
  std::map<long long, Filed> filed;  // objection -> what objection.file named
  struct Extended {
    long long seq = 0;
    std::string until, reason, actor;
  };
  // (objection, organisation, deadline) -> the latest objection.extend
  std::map<std::tuple<long long, std::string, std::string>, Extended> extended;
  for (const auto& e : events) {
    long long oid = std::atoll(e.subject.c_str() + 10);
    if (e.subject.find('/', 10) != std::string::npos) continue;  // something under an objection
    if (e.action != "comment.add") ++filed[oid].events;  // a comment leaves the version as it is
    mllog::Json p;
    std::string perr;
    if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
    if (e.action == "decision.record" || e.action == "decision.amend") {
      // referee writes an amendment with what it replaced and why: one without is not referee's.
      if (e.action == "decision.amend" && (!p.find("before") || !p.find("reason")))
        return fail("event " + std::to_string(e.seq) + " (decision.amend of objection " + std::to_string(oid) +
                    ") has no " + (!p.find("before") ? "\"before\"" : "\"reason\"") +
                    ": referee writes both with every amendment, so it was added to the log by hand");
      decision_actors.emplace_back(e.seq, e.actor);
      Decided d;
      d.outcome = text(p.find("outcome"));
      d.remedy = text(p.find("remedy"));
      d.has_factor = number(p.find("factor"), &d.factor);
      d.seq = e.seq;
      d.objection = oid;
      d.majority = text(p.find("majority"));
      d.actor = e.actor;
      d.fix_due = text(p.find("fix_due"));
      if (const auto* vs = p.find("votes")) {
        const char* const keys[] = {"uphold", "reject", "abstain"};
        for (int i = 0; i < 3; ++i)
          if (const auto* n = vs->find(keys[i]); n && n->kind == mllog::Json::Kind::Int) d.votes[i] = n->i;
      }
      if (const auto* ts = p.find("text_sha256")) {
        d.text_sha = true;
        d.text_sha256 = text(ts);
      }
      const auto* id = p.find("decision");
      if (id && id->kind == mllog::Json::Kind::Int) decided[id->i] = d;
      objection_state[oid] = "decided";
    } else if (e.action == "objection.file") {
      Filed& f = filed[oid];
      f.round = text(p.find("round"));
      f.seq = e.seq;
      f.by = text(p.find("by"));
      f.against = text(p.find("against"));
      f.title = text(p.find("title"));
      f.rule = text(p.find("rule"));
      f.text_sha256 = text(p.find("text_sha256"));
      f.actor = e.actor;
      f.finding_known = p.find("finding") != nullptr;
      f.finding = text(p.find("finding"));
      if (p.find("impact_computed")) {
        f.impact_known = true;
        f.has_impact = number(p.find("impact_minutes"), &f.impact);
        f.has_computed = number(p.find("impact_computed"), &f.computed);
        f.basis_known = p.find("impact_computed_basis") != nullptr;
        f.computed_basis = text(p.find("impact_computed_basis"));
      }
      if (const auto* rs = p.find("results"))
        for (const auto& r : rs->items) f.results.push_back(text(&r));
      if (const auto* ev = p.find("evidence_sha256")) {
        f.evidence_by_event.push_back({e.seq, {}});
        for (const auto& d : ev->items) {
          f.evidence.insert(text(&d));
          f.evidence_by_event.back().second.push_back(text(&d));
        }
      } else if (const auto* n = p.find("evidence"); n && n->kind == mllog::Json::Kind::Int && n->i > 0)
        f.evidence_known = false;
    } else if (e.action == "evidence.add") {
      Filed& f = filed[oid];
      if (p.find("impact_computed")) {
        f.impact_known = true;
        f.has_impact = number(p.find("impact_minutes"), &f.impact);
        f.has_computed = number(p.find("impact_computed"), &f.computed);
        f.basis_known = p.find("impact_computed_basis") != nullptr;
        f.computed_basis = text(p.find("impact_computed_basis"));
      }
      if (const auto* ev = p.find("evidence_sha256")) {
        f.evidence_by_event.push_back({e.seq, {}});
        for (const auto& d : ev->items) {
          f.evidence.insert(text(&d));
          f.evidence_by_event.back().second.push_back(text(&d));
        }
      } else {
        f.evidence_known = false;
      }
    } else if (e.action == "response.add") {
      filed[oid].responded = true;
      if (const auto* id = p.find("response"); id && id->kind == mllog::Json::Kind::Int) {
        Responded r;
        r.seq = e.seq;
        r.objection = oid;
        r.text_sha256 = text(p.find("text_sha256"));
        r.organisation = e.organisation;
        r.remedy = text(p.find("remedy"));
        r.has_factor = number(p.find("factor"), &r.factor);
        r.actor = e.actor;
        responded[id->i] = r;
      }
    } else if (e.action == "comment.add") {
      if (const auto* id = p.find("comment"); id && id->kind == mllog::Json::Kind::Int) {
        Responded c;
        c.seq = e.seq;
        c.objection = oid;
        c.text_sha256 = text(p.find("text_sha256"));
        c.organisation = e.organisation;
        c.actor = e.actor;
        commented[id->i] = c;
      }
    } else if (e.action == "objection.withdraw") {
      objection_state[oid] = "withdrawn";
    } else if (e.action == "objection.vote_deadline") {
      votes_due[oid] = {e.seq, text(p.find("until"))};
    } else if (e.action == "objection.extend") {
      extended[{oid, text(p.find("organisation")), text(p.find("deadline"))}] =
          Extended{e.seq, text(p.find("until")), text(p.find("reason")), e.actor};
    } else if (e.action == "vote.cast") {
      Decided v;
      v.outcome = text(p.find("vote"));
      v.remedy = text(p.find("remedy"));
      v.has_factor = number(p.find("factor"), &v.factor);
      v.seq = e.seq;
      v.actor = e.actor;
      votes[{oid, text(p.find("organisation"))}] = v;
    }
  }
  std::map<long long, Decided> decision_rows;
  {
    const std::string sql =
        "SELECT d.id, d.objection_id, d.outcome, d.remedy, d.factor, d.text, d.votes_uphold, d.votes_reject, "
        "d.votes_abstain, d.majority, COALESCE(u.name, 'local-admin'), d.created_at, " +
        std::string(s.opened_version() >= 14 ? "COALESCE(d.fix_due, '')" : "''") +
        " FROM decisions d LEFT JOIN users u ON u.id = d.decided_by ORDER BY d.id";
    Stmt q(s.db(), sql.c_str());
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
      if (q.col_int(1) != d.objection)
        return fail(row + ": event " + std::to_string(d.seq) + " recorded it for objection " + std::to_string(d.objection));
      if (!d.majority.empty() && q.col_text(9) != d.majority)
        return fail(row + ": majority '" + q.col_text(9) + "', event " + std::to_string(d.seq) + " says '" + d.majority + "'");
      if (q.col_text(10) != d.actor)
        return fail(row + ": decided by " + q.col_text(10) + ", event " + std::to_string(d.seq) + " says " + d.actor);
      if (std::string when = stamp("created_at", q.col_text(11), d.seq); !when.empty()) return fail(row + ": " + when);
      if (q.col_text(12) != d.fix_due)
        return fail(row + ": the fix is due " + (q.col_text(12).empty() ? "at no date" : q.col_text(12)) + ", event " +
                    std::to_string(d.seq) + " says " + (d.fix_due.empty() ? "at no date" : d.fix_due));
      const char* const counted[] = {"uphold", "reject", "abstain"};
      for (int i = 0; i < 3; ++i)
        if (d.votes[i] >= 0 && q.col_int(6 + i) != d.votes[i])
          return fail(row + ": " + std::to_string(q.col_int(6 + i)) + " " + counted[i] + " vote(s), event " +
                      std::to_string(d.seq) + " counted " + std::to_string(d.votes[i]));
      if (d.text_sha) {
        std::string have = q.col_null(5) ? "" : text_digest(q.col_text(5));
        if (have != d.text_sha256)
          return fail(row + ": its text is not the one event " + std::to_string(d.seq) + " recorded (SHA-256 " +
                      (have.empty() ? "of no text" : have.substr(0, 16)) + ", the event says " +
                      (d.text_sha256.empty() ? "no text" : d.text_sha256.substr(0, 16)) + ")");
      }
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading decisions"));
  }
  for (const auto& [id, d] : decided)
    if (!decision_rows.count(id))
      return fail("decisions: row " + std::to_string(id) + " recorded by event " + std::to_string(d.seq) + " is missing");
  // The results each objection names, as its objection.file event named them; objection_results must agree.
  std::map<long long, std::vector<ObjectionOnResult>> on_result;  // result id -> the objections naming it, per the log
  std::map<long long, std::string> result_names;
  std::map<long long, long long> decision_of;  // objection -> its decision, per the log
  for (const auto& [did, d] : decided) decision_of[d.objection] = did;
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
      if (auto dec = decision_of.find(oid); dec != decision_of.end()) {
        const Decided& d = decided.at(dec->second);
        o.decision = dec->second;
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
      if (!filed.count(q.col_int(0)) || filed[q.col_int(0)].seq == 0)
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
           "SELECT v.objection_id, o.name, v.vote, COALESCE(v.remedy, ''), v.factor, COALESCE(u.name, 'local-admin'), "
           "v.created_at FROM votes v JOIN organisations o ON o.id = v.organisation_id LEFT JOIN users u ON u.id = v.user_id "
           "ORDER BY v.objection_id, o.name");
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
      if (q.col_text(5) != v.actor)
        return fail(row + ": cast by " + q.col_text(5) + ", event " + std::to_string(v.seq) + " says " + v.actor);
      if (std::string when = stamp("created_at", q.col_text(6), v.seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading votes"));
    for (const auto& [key, v] : votes)
      if (!rows.count(key))
        return fail("votes: the vote of " + key.second + " on objection " + std::to_string(key.first) + " (event " +
                    std::to_string(v.seq) + ") is missing");
  }
  {
    const std::string objections_sql =
           "SELECT j.id, j.state, b.name, a.name, j.title, j.rule, j.text, r.name, COALESCE(u.name, 'local-admin'), "
           "j.finding_id, j.impact_minutes, j.impact_computed, j.created_at, j.version, COALESCE(j.impact_basis, ''), " +
               std::string(s.opened_version() >= 12 ? "COALESCE(j.votes_due, '') " : "'' ") +
               "FROM objections j LEFT JOIN organisations b ON b.id = "
           "j.by_org LEFT JOIN organisations a ON a.id = j.against_org LEFT JOIN rounds r ON r.id = j.round_id LEFT "
           "JOIN users u ON u.id = j.filed_by ORDER BY j.id";
    Stmt q(s.db(), objections_sql.c_str());
    while (q.step()) {
      long long id = q.col_int(0);
      std::string state = q.col_text(1);
      auto fi = filed.find(id);
      if (fi == filed.end() || fi->second.seq == 0)
        return fail("objections row " + std::to_string(id) + " has no objection.file event in the review log");
      const Filed& f = fi->second;
      std::string row = "objections row " + std::to_string(id);
      const std::string ev = "event " + std::to_string(f.seq);
      if (q.col_text(2) != f.by) return fail(row + ": by '" + q.col_text(2) + "', " + ev + " says '" + f.by + "'");
      if (q.col_text(3) != f.against)
        return fail(row + ": against '" + q.col_text(3) + "', " + ev + " says '" + f.against + "'");
      if (q.col_text(4) != f.title) return fail(row + ": the title is not the one " + ev + " recorded");
      if (q.col_text(5) != f.rule) return fail(row + ": the rule is not the one " + ev + " recorded");
      if (!f.text_sha256.empty() && text_digest(q.col_text(6)) != f.text_sha256)
        return fail(row + ": the text is not the one " + ev + " recorded (its SHA-256 differs)");
      if (q.col_text(7) != f.round) return fail(row + ": round " + q.col_text(7) + ", " + ev + " says " + f.round);
      if (q.col_text(8) != f.actor) return fail(row + ": filed by " + q.col_text(8) + ", " + ev + " says " + f.actor);
      if (f.finding_known) {
        std::string want = f.finding, have = q.col_null(9) ? "" : std::to_string(q.col_int(9));
        if (have != want)
          return fail(row + ": finding " + (have.empty() ? "none" : have) + ", " + ev + " says " + (want.empty() ? "none" : want));
      }
      if (f.impact_known) {
        if (!same_factor(!q.col_null(10), q.col_double(10), f.has_impact, f.impact))
          return fail(row + ": impact_minutes " + factor_text(!q.col_null(10), q.col_double(10)) +
                      ", the review log says " + factor_text(f.has_impact, f.impact));
        if (!same_factor(!q.col_null(11), q.col_double(11), f.has_computed, f.computed))
          return fail(row + ": impact_computed " + factor_text(!q.col_null(11), q.col_double(11)) +
                      ", the review log says " + factor_text(f.has_computed, f.computed));
        if (f.basis_known && q.col_text(14) != f.computed_basis)
          return fail(row + ": impact_basis '" + q.col_text(14) + "', the review log says '" + f.computed_basis + "'");
      }
      if (std::string when = stamp("created_at", q.col_text(12), f.seq); !when.empty()) return fail(row + ": " + when);
      if (q.col_int(13) != f.events)
        return fail(row + ": version " + std::to_string(q.col_int(13)) + ", but the review log has " +
                    std::to_string(f.events) + " event(s) about it (each change adds one)");
      // The vote deadline as the latest objection.vote_deadline set it (none: none).
      auto vd = votes_due.find(id);
      const std::string due_want = vd == votes_due.end() ? "" : vd->second.second;
      if (q.col_text(15) != due_want)
        return fail(row + ": votes_due '" + q.col_text(15) + "', the review log says '" + due_want + "'" +
                    (vd == votes_due.end() ? " (no objection.vote_deadline event)" : " (event " + std::to_string(vd->second.first) + ")"));
      auto it = objection_state.find(id);
      std::string want = it == objection_state.end() ? "" : it->second;
      bool agrees = want.empty() ? state == (f.responded ? "responded" : "open") : state == want;
      if (!agrees)
        return fail("objections row " + std::to_string(id) + ": state is '" + state + "', the review log says '" +
                    (want.empty() ? (f.responded ? "responded" : "open") : want) + "'");
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading objections"));
  }
  // Evidence: the digests of each objection's rows against those its events recorded.
  {
    std::map<long long, std::multiset<std::string>> rows;
    Stmt q(s.db(), "SELECT id, objection_id, created_at FROM evidence ORDER BY id");
    while (q.step()) {
      const std::string digest = evidence_row_digest(s, q.col_int(0));
      rows[q.col_int(1)].insert(digest);
      // Its time is that of an event that added a row saying this.
      auto fi = filed.find(q.col_int(1));
      if (fi == filed.end() || !fi->second.evidence_known) continue;
      std::string when;
      for (const auto& [seq, digests] : fi->second.evidence_by_event)
        if (std::find(digests.begin(), digests.end(), digest) != digests.end()) {
          when = stamp("created_at", q.col_text(2), seq);
          if (when.empty()) break;
        }
      if (!when.empty())
        return fail("evidence row " + std::to_string(q.col_int(0)) + " (objection " + std::to_string(q.col_int(1)) + "): " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading evidence"));
    for (auto& [oid, f] : filed)
      if (f.evidence_known && f.seq) rows.try_emplace(oid);
    for (const auto& [oid, have] : rows) {
      auto fi = filed.find(oid);
      std::string what = "evidence of objection " + std::to_string(oid);
      if (fi == filed.end() || fi->second.seq == 0) return fail(what + ": no objection.file event in the review log filed it");
      if (!fi->second.evidence_known) continue;  // added by events written before schema 7, which kept no digests
      const auto& want = fi->second.evidence;
      if (have != want) {
        size_t changed = 0;
        for (const auto& d : have)
          if (!want.count(d)) ++changed;
        return fail(what + ": " + std::to_string(have.size()) + " row(s), the review log recorded " +
                    std::to_string(want.size()) + (changed ? "; " + std::to_string(changed) + " of them not as recorded (edited or added)" : ""));
      }
    }
  }
  // Responses: each row was added by a response.add event, its text as that event recorded it.
  {
    Stmt q(s.db(),
           "SELECT x.id, x.objection_id, x.text, o.name, COALESCE(x.remedy, 'none'), x.factor, COALESCE(u.name, "
           "'local-admin'), x.created_at FROM responses x LEFT JOIN organisations o ON o.id = x.organisation_id LEFT JOIN users u ON "
           "u.id = x.user_id ORDER BY x.id");
    std::set<long long> rows;
    while (q.step()) {
      rows.insert(q.col_int(0));
      std::string row = "responses row " + std::to_string(q.col_int(0)) + " (objection " + std::to_string(q.col_int(1)) + ")";
      auto it = responded.find(q.col_int(0));
      if (it == responded.end()) return fail(row + " has no response.add event in the review log");
      const Responded& r = it->second;
      const std::string ev = "event " + std::to_string(r.seq);
      if (q.col_int(1) != r.objection) return fail(row + ": " + ev + " added it to objection " + std::to_string(r.objection));
      if (!r.text_sha256.empty() && text_digest(q.col_text(2)) != r.text_sha256)
        return fail(row + ": the text is not the one " + ev + " recorded (its SHA-256 differs)");
      if (q.col_text(3) != r.organisation) return fail(row + ": by " + q.col_text(3) + ", " + ev + " says " + r.organisation);
      if (q.col_text(4) != r.remedy || !same_factor(!q.col_null(5), q.col_double(5), r.has_factor, r.factor))
        return fail(row + ": remedy " + q.col_text(4) + " " + factor_text(!q.col_null(5), q.col_double(5)) + ", " + ev +
                    " says " + r.remedy + " " + factor_text(r.has_factor, r.factor));
      if (q.col_text(6) != r.actor) return fail(row + ": written by " + q.col_text(6) + ", " + ev + " says " + r.actor);
      if (std::string when = stamp("created_at", q.col_text(7), r.seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading responses"));
    for (const auto& [id, r] : responded)
      if (!rows.count(id))
        return fail("responses: row " + std::to_string(id) + " added by event " + std::to_string(r.seq) + " is missing");
  }
  // Comments: each row was added by a comment.add event, its text as that event recorded it.
  if (s.opened_version() >= 11) {
    Stmt q(s.db(),
           "SELECT x.id, x.objection_id, x.text, COALESCE(o.name, ''), COALESCE(u.name, 'local-admin'), x.created_at "
           "FROM comments x LEFT JOIN organisations o ON o.id = x.organisation_id LEFT JOIN users u ON u.id = x.user_id "
           "ORDER BY x.id");
    std::set<long long> rows;
    while (q.step()) {
      rows.insert(q.col_int(0));
      std::string row = "comments row " + std::to_string(q.col_int(0)) + " (objection " + std::to_string(q.col_int(1)) + ")";
      auto it = commented.find(q.col_int(0));
      if (it == commented.end()) return fail(row + " has no comment.add event in the review log");
      const Responded& c = it->second;
      const std::string ev = "event " + std::to_string(c.seq);
      if (q.col_int(1) != c.objection) return fail(row + ": " + ev + " added it to objection " + std::to_string(c.objection));
      if (!c.text_sha256.empty() && text_digest(q.col_text(2)) != c.text_sha256)
        return fail(row + ": the text is not the one " + ev + " recorded (its SHA-256 differs)");
      if (q.col_text(3) != c.organisation) return fail(row + ": by " + q.col_text(3) + ", " + ev + " says " + c.organisation);
      if (q.col_text(4) != c.actor) return fail(row + ": written by " + q.col_text(4) + ", " + ev + " says " + c.actor);
      if (std::string when = stamp("created_at", q.col_text(5), c.seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading comments"));
    for (const auto& [id, c] : commented)
      if (!rows.count(id))
        return fail("comments: row " + std::to_string(id) + " added by event " + std::to_string(c.seq) + " is missing");
  }
  // Extensions: each row as the latest objection.extend for its objection, organisation and deadline left it.
  if (s.opened_version() >= 8) {
    Stmt q(s.db(),
           "SELECT x.id, x.objection_id, o.name, x.deadline, x.until, x.reason, COALESCE(u.name, 'local-admin'), "
           "x.created_at FROM extensions x LEFT JOIN organisations o ON o.id = x.organisation_id LEFT JOIN users u ON u.id = x.granted_by "
           "ORDER BY x.id");
    std::set<std::tuple<long long, std::string, std::string>> rows;
    while (q.step()) {
      std::tuple<long long, std::string, std::string> key{q.col_int(1), q.col_text(2), q.col_text(3)};
      rows.insert(key);
      std::string row = "extensions row " + std::to_string(q.col_int(0)) + " (objection " + std::to_string(q.col_int(1)) +
                        ", " + q.col_text(2) + " " + q.col_text(3) + ")";
      auto it = extended.find(key);
      if (it == extended.end()) return fail(row + " has no objection.extend event in the review log");
      const Extended& x = it->second;
      const std::string ev = "event " + std::to_string(x.seq);
      if (q.col_text(4) != x.until) return fail(row + ": until " + q.col_text(4) + ", " + ev + " says " + x.until);
      if (q.col_text(5) != x.reason) return fail(row + ": the reason is not the one " + ev + " recorded");
      if (q.col_text(6) != x.actor) return fail(row + ": granted by " + q.col_text(6) + ", " + ev + " says " + x.actor);
      if (std::string when = stamp("created_at", q.col_text(7), x.seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading extensions"));
    for (const auto& [key, x] : extended)
      if (!rows.count(key))
        return fail("extensions: the row of objection " + std::to_string(std::get<0>(key)) + ", " + std::get<1>(key) + " " +
                    std::get<2>(key) + " granted by event " + std::to_string(x.seq) + " is missing");
  }
  // The rounds' events, read once for the round records, pairings, announcements and findings below.
  std::vector<Event> revents;
  {
    std::string rerr;
    revents = read_events(s, "round/", &rerr);
    if (!rerr.empty()) return fail(*error = rerr);
  }
  // Round records: state and schedule as the latest round.state and round.schedule events left them.
  {
    struct RoundLog {
      bool created = false;
      std::string state = "review";
      std::map<std::string, std::string> schedule;
      long long state_seq = 0, schedule_seq = 0;
      long long changes = 0;  // round.schedule and round.state events: each sets the version
    };
    std::map<std::string, RoundLog> rounds;
    for (const auto& e : revents) {
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      RoundLog& r = rounds[e.subject.substr(6)];
      if (e.action == "round.schedule") {
        r.created = true;
        r.schedule.clear();
        if (const auto* sc = p.find("schedule"))
          for (const auto& [k, v] : sc->fields) r.schedule[k] = text(&v);
        r.schedule_seq = e.seq;
        ++r.changes;
      } else if (e.action == "round.state") {
        ++r.changes;
        r.created = true;
        r.state = text(p.find("to"));
        r.state_seq = e.seq;
      }
    }
    // Each record read as every lookup of a round reads it (find_round_by_id, as the local administrator,
    // who sees every round), its deadlines by their API names (schedule_fields).
    Actor admin;
    admin.user = "local-admin";
    admin.role = Role::Admin;
    admin.local_admin = true;
    std::set<std::string> round_rows;
    Stmt q(s.db(), "SELECT round_id, version FROM round_reviews ORDER BY round_id");
    while (q.step()) {
      RoundInfo info;
      Error why;
      if (!find_round_by_id(s, admin, q.col_int(0), why, &info, &why))
        return fail(*error = "reading the review record of round " + std::to_string(q.col_int(0)) + ": " + why.message);
      const std::string& name = info.name;
      std::string row = "round_reviews row of " + name;
      round_rows.insert(name);
      auto it = rounds.find(name);
      if (it == rounds.end() || !it->second.created)
        return fail(row + " has no round.schedule or round.state event in the review log");
      const RoundLog& r = it->second;
      if (info.state != r.state)
        return fail(row + ": state is '" + info.state + "', the review log says '" + r.state + "'" +
                    (r.state_seq ? " (event " + std::to_string(r.state_seq) + ")" : ""));
      for (const auto& [field, member] : schedule_fields()) {
        auto f = r.schedule.find(field);
        std::string want = f == r.schedule.end() ? "" : f->second, have = info.schedule.*member;
        if (have != want)
          return fail(row + ": " + field + " is " + (have.empty() ? "not set" : have) + ", the review log says " +
                      (want.empty() ? "not set" : want) +
                      (r.schedule_seq ? " (event " + std::to_string(r.schedule_seq) + ")" : ""));
      }
      if (q.col_int(1) != r.changes)
        return fail(row + ": version " + std::to_string(q.col_int(1)) + ", but the review log has " + std::to_string(r.changes) +
                    " round.schedule and round.state event(s) for it (each change adds one)");
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading round_reviews"));
    for (const auto& [name, r] : rounds)
      if (r.created && !round_rows.count(name))
        return fail("round_reviews: the review record of " + name + " (event " +
                    std::to_string(std::max(r.state_seq, r.schedule_seq)) + ") is missing: the round would read as published");
  }
  // Pairings, as pairings.assign events added them with the status their latest pairing.status left; and
  // announcements, as announcement.add events made them (result, author, text digest).
  {
    std::string rerr;
    auto pevents = read_events(s, "pairing/", &rerr);
    if (!rerr.empty()) return fail(*error = rerr);
    struct PairLog {
      std::string reason, status = "assigned";
      long long seq = 0, status_seq = 0;
      long long changes = 0;  // pairing.status events: each bumps the version
    };
    using PairKey = std::tuple<std::string, std::string, std::string>;  // round, reviewer, reviewed
    std::map<PairKey, PairLog> pairs;
    struct AnnLog {
      std::string round, result, text_sha256, actor;
      long long seq = 0;
      std::string created_at;  // "" in events before it was recorded
    };
    std::map<long long, AnnLog> announced;
    struct MeetLog {
      std::string round, held_at, attendees, objections, notes_sha256, actor, created_at;
      long long seq = 0;
    };
    std::map<long long, MeetLog> met;  // meeting -> the meeting.record event that recorded it
    std::map<long long, long long> finding_added;                          // finding -> the event that added it
    std::map<long long, std::pair<long long, std::string>> finding_digest;  // finding -> (event, digest) latest
    for (const auto& e : revents) {
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      const std::string round = e.subject.substr(6);
      if (e.action == "audit.run") {
        if (const auto* added = p.find("added"))
          for (const auto& a : added->items)
            if (a.kind == mllog::Json::Kind::Int && a.i > 0) finding_added.emplace(a.i, e.seq);
        if (const auto* ds = p.find("findings_sha256"))
          for (const auto& [k, v] : ds->fields) finding_digest[std::atoll(k.c_str())] = {e.seq, text(&v)};
        continue;
      }
      if (e.action == "pairings.assign") {
        if (const auto* added = p.find("added"))
          for (const auto& a : added->items) {
            PairLog& x = pairs[{round, text(a.find("reviewer")), text(a.find("reviewed"))}];
            x.reason = text(a.find("reason"));
            x.seq = e.seq;
          }
      } else if (e.action == "meeting.record") {
        const auto* id = p.find("meeting");
        if (!id || id->kind != mllog::Json::Kind::Int) continue;
        auto list = [&](const char* k) {
          std::string out;
          if (const auto* l = p.find(k))
            for (const auto& x : l->items) out += (out.empty() ? "" : ",") + (x.kind == mllog::Json::Kind::Int ? std::to_string(x.i) : x.s);
          return out;
        };
        met[id->i] = {round, text(p.find("held_at")), list("attendees"), list("objections"), text(p.find("notes_sha256")), e.actor,
                      text(p.find("created_at")), e.seq};
      } else if (e.action == "announcement.add") {
        const auto* ids = p.find("announcements");
        const auto* results = p.find("results");
        if (!ids || !results) continue;
        for (size_t i = 0; i < ids->items.size(); ++i)
          if (ids->items[i].kind == mllog::Json::Kind::Int)
            announced[ids->items[i].i] = {round, i < results->items.size() ? text(&results->items[i]) : "",
                                          text(p.find("text_sha256")), e.actor, e.seq, text(p.find("created_at"))};
      }
    }
    for (const auto& e : pevents) {
      if (e.action != "pairing.status") continue;
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      PairLog& x = pairs[{text(p.find("round")), text(p.find("reviewer")), text(p.find("reviewed"))}];
      x.status = text(p.find("to"));
      x.status_seq = e.seq;
      ++x.changes;
    }
    std::set<PairKey> rows;
    Stmt q(s.db(),
           "SELECT p.id, d.name, a.name, b.name, p.reason, p.status, p.version FROM pairings p JOIN rounds d ON d.id = p.round_id "
           "JOIN organisations a ON a.id = p.reviewer_org JOIN organisations b ON b.id = p.reviewed_org ORDER BY p.id");
    while (q.step()) {
      PairKey key{q.col_text(1), q.col_text(2), q.col_text(3)};
      rows.insert(key);
      std::string row = "pairings row " + std::to_string(q.col_int(0)) + " (" + q.col_text(2) + " reviews " +
                        q.col_text(3) + " in " + q.col_text(1) + ")";
      auto it = pairs.find(key);
      if (it == pairs.end() || !it->second.seq) return fail(row + " has no pairings.assign event in the review log");
      const PairLog& x = it->second;
      if (q.col_text(4) != x.reason)
        return fail(row + ": reason " + q.col_text(4) + ", event " + std::to_string(x.seq) + " says " + x.reason);
      if (q.col_text(5) != x.status)
        return fail(row + ": status " + q.col_text(5) + ", the review log says " + x.status +
                    (x.status_seq ? " (event " + std::to_string(x.status_seq) + ")" : " (as assigned)"));
      if (q.col_int(6) != 1 + x.changes)
        return fail(row + ": version " + std::to_string(q.col_int(6)) + ", but the review log changed it " +
                    std::to_string(x.changes) + " time(s) since it was assigned (version " + std::to_string(1 + x.changes) + ")");
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading pairings"));
    for (const auto& [key, x] : pairs)
      if (x.seq && !rows.count(key))
        return fail("pairings: " + std::get<1>(key) + " reviews " + std::get<2>(key) + " in " + std::get<0>(key) +
                    " (event " + std::to_string(x.seq) + ") is missing");
    std::set<long long> ann_rows;
    Stmt a(s.db(),
           "SELECT n.id, d.name, n.result_id, n.text, COALESCE(u.name, 'local-admin'), n.created_at FROM announcements n JOIN rounds d "
           "ON d.id = n.round_id LEFT JOIN users u ON u.id = n.user_id ORDER BY n.id");
    while (a.step()) {
      long long id = a.col_int(0);
      ann_rows.insert(id);
      std::string row = "announcements row " + std::to_string(id) + " (" + a.col_text(1) + ")";
      auto it = announced.find(id);
      if (it == announced.end()) return fail(row + " has no announcement.add event in the review log");
      const AnnLog& x = it->second;
      const std::string ev = "event " + std::to_string(x.seq);
      if (a.col_text(1) != x.round) return fail(row + ": " + ev + " made it in " + x.round);
      std::string result = a.col_null(2) ? "" : result_name(s, a.col_int(2));
      if (!a.col_null(2) && base::lower(result) != base::lower(x.result))
        return fail(row + ": about " + result + ", " + ev + " says " + x.result);
      if (!x.text_sha256.empty() && text_digest(a.col_text(3)) != x.text_sha256)
        return fail(row + ": the text is not the one " + ev + " recorded (its SHA-256 differs)");
      if (a.col_text(4) != x.actor) return fail(row + ": by " + a.col_text(4) + ", " + ev + " says " + x.actor);
      // When it was announced decides whether it was late (after the first meeting).
      if (!x.created_at.empty() && a.col_text(5) != x.created_at)
        return fail(row + ": announced at " + a.col_text(5) + ", " + ev + " says " + x.created_at);
    }
    if (!a.ok()) return fail(*error = s.describe_error(a.rc(), "reading announcements"));
    for (const auto& [id, x] : announced)
      if (!ann_rows.count(id))
        return fail("announcements: row " + std::to_string(id) + " made by event " + std::to_string(x.seq) + " is missing");
    // Meetings: each as its meeting.record event recorded it.
    if (s.opened_version() >= 13) {
      std::set<long long> meeting_rows;
      Stmt m(s.db(),
             "SELECT g.id, d.name, g.held_at, g.attendees_json, g.objections_json, g.notes, COALESCE(u.name, 'local-admin'), "
             "g.created_at FROM meetings g JOIN rounds d ON d.id = g.round_id LEFT JOIN users u ON u.id = g.user_id ORDER BY g.id");
      while (m.step()) {
        const long long id = m.col_int(0);
        meeting_rows.insert(id);
        const std::string row = "meetings row " + std::to_string(id) + " (" + m.col_text(1) + ")";
        auto it = met.find(id);
        if (it == met.end()) return fail(row + " has no meeting.record event in the review log");
        const MeetLog& x = it->second;
        const std::string ev = "event " + std::to_string(x.seq);
        auto list = [](const std::string& json) {
          mllog::Json j;
          std::string perr, out;
          if (mllog::parse_json_permissive(json, &j, &perr))
            for (const auto& v : j.items) out += (out.empty() ? "" : ",") + (v.kind == mllog::Json::Kind::Int ? std::to_string(v.i) : v.s);
          return out;
        };
        if (m.col_text(1) != x.round) return fail(row + ": " + ev + " recorded it in " + x.round);
        if (m.col_text(2) != x.held_at) return fail(row + ": held at " + m.col_text(2) + ", " + ev + " says " + x.held_at);
        if (list(m.col_text(3)) != x.attendees) return fail(row + ": the attendees are not those " + ev + " recorded");
        if (list(m.col_text(4)) != x.objections) return fail(row + ": the objections discussed are not those " + ev + " recorded");
        if (text_digest(m.col_text(5)) != x.notes_sha256) return fail(row + ": the notes are not those " + ev + " recorded (their SHA-256 differs)");
        if (m.col_text(6) != x.actor) return fail(row + ": recorded by " + m.col_text(6) + ", " + ev + " says " + x.actor);
        if (m.col_text(7) != x.created_at) return fail(row + ": recorded at " + m.col_text(7) + ", " + ev + " says " + x.created_at);
      }
      if (!m.ok()) return fail(*error = s.describe_error(m.rc(), "reading meetings"));
      for (const auto& [id, x] : met)
        if (!meeting_rows.count(id))
          return fail("meetings: row " + std::to_string(id) + " recorded by event " + std::to_string(x.seq) + " is missing");
    }
    // Findings: each added by an audit.run event, saying what the latest event that recorded its digest says.
    std::set<long long> finding_rows;
    Stmt fq(s.db(), "SELECT id, created_at FROM findings ORDER BY id");
    while (fq.step()) {
      long long id = fq.col_int(0);
      finding_rows.insert(id);
      const std::string row = "findings row " + std::to_string(id);
      if (!finding_added.count(id)) return fail(row + " has no audit.run event in the review log");
      if (std::string when = stamp("created_at", fq.col_text(1), finding_added.at(id)); !when.empty()) return fail(row + ": " + when);
      auto d = finding_digest.find(id);
      if (d != finding_digest.end() && finding_row_digest(s, id) != d->second.second)
        return fail(row + ": what it says is not what event " + std::to_string(d->second.first) +
                    " recorded (its SHA-256 differs)");
    }
    if (!fq.ok()) return fail(*error = s.describe_error(fq.rc(), "reading findings"));
    for (const auto& [id, seq] : finding_added)
      if (!finding_rows.count(id))
        return fail("findings: row " + std::to_string(id) + " added by event " + std::to_string(seq) + " is missing");
  }
  // Packages: what the store holds of each (systems, results, scores, runs) as the latest package.import or
  // package.replace left it (the digest of its rows that event keeps; events before it kept none).
  {
    struct PackageLog {
      long long seq = 0;
      std::string rows_sha256;
    };
    std::map<std::pair<std::string, std::string>, PackageLog> imported;  // (round, organisation)
    // The packages a store held when it was taken to schema 9 (package.adopt), then every import.
    {
      std::string aerr;
      for (const auto& e : read_events(s, "store", &aerr)) {
        if (e.action != "package.adopt") continue;
        mllog::Json p;
        std::string perr;
        if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
        if (const auto* ps = p.find("packages"))
          for (const auto& x : ps->items)
            imported[{text(x.find("round")), text(x.find("organisation"))}] = {e.seq, text(x.find("rows_sha256"))};
      }
      if (!aerr.empty()) return fail(*error = aerr);
    }
    for (const auto& e : revents) {
      if (e.action != "package.import" && e.action != "package.replace") continue;
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      imported[{e.subject.substr(6), text(p.find("organisation"))}] = {e.seq, text(p.find("rows_sha256"))};
    }
    std::set<std::pair<std::string, std::string>> rows;
    Stmt q(s.db(),
           "SELECT p.id, d.name, o.name FROM packages p JOIN rounds d ON d.id = p.round_id JOIN organisations o ON "
           "o.id = p.organisation_id ORDER BY p.id");
    while (q.step()) {
      std::pair<std::string, std::string> key{q.col_text(1), q.col_text(2)};
      rows.insert(key);
      auto it = imported.find(key);
      // From schema 9 every package came in by an import (or was there at the upgrade): one without
      // either was added in the store, and would make its organisation a submitter of the round.
      if (it == imported.end() && s.opened_version() >= 9)
        return fail("package " + key.second + " (" + key.first + ") has no package.import event in the review log: "
                    "it was added in the store, not imported (it would make " + key.second + " a submitter of " +
                    key.first + ")");
      if (it == imported.end() || it->second.rows_sha256.empty()) continue;  // imported before digests were kept
      std::string perr;
      std::string have = package_rows_sha256(s, q.col_int(0), &perr);
      if (have.empty()) return fail(*error = perr);
      if (have != it->second.rows_sha256)
        return fail("package " + key.second + " (" + key.first + "): its systems, results, scores or runs are not what event " +
                    std::to_string(it->second.seq) + " recorded when it was imported (edited in the store since; `referee import` of its folder writes "
                    "the same files over them again, except in a round whose scores are final or published: restore "
                    "the store from a copy)");
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading packages"));
    // What the packages' rows decide between rounds (not in any package's digest: a later round's import
    // sets them): the resubmission links and marks, and each round's order.
    std::string lerr;
    std::string links = submissions::check_resubmission_links(s, &lerr);
    if (!lerr.empty()) return fail(*error = lerr);
    if (!links.empty()) return fail(links + "; `referee import` of the package's folder makes them again");
    for (const auto& [key, x] : imported)
      if (!x.rows_sha256.empty() && !rows.count(key))
        return fail("packages: " + key.second + " (" + key.first + "), imported by event " + std::to_string(x.seq) + ", is missing");
  }
  // Fixes delivered: each as the package.replace event that delivered it names it (objection, decision, the
  // digest of what it changed, the packages before and after), and none of those events' fixes missing.
  if (s.opened_version() >= 14) {
    struct FixLog {
      std::string changes_sha256, old_sha256, new_sha256, at;
      long long objection = 0, decision = 0;
      bool row = false;
    };
    std::map<std::pair<long long, long long>, FixLog> fixes;  // (event, objection)
    for (const auto& e : revents) {
      if (e.action != "package.replace") continue;
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      const auto* list = p.find("fixes");
      if (!list) continue;
      for (const auto& f : list->items) {
        const auto* o = f.find("objection");
        const auto* d = f.find("decision");
        if (!o || !d || o->kind != mllog::Json::Kind::Int || d->kind != mllog::Json::Kind::Int) continue;
        fixes[{e.seq, o->i}] = {text(f.find("changes_sha256")), text(p.find("old_sha256")), text(p.find("new_sha256")),
                                e.at, o->i, d->i};
      }
    }
    Stmt q(s.db(),
           "SELECT id, event_seq, objection_id, decision_id, changes_json, old_sha256, new_sha256, created_at FROM "
           "fix_deliveries ORDER BY id");
    while (q.step()) {
      const std::string row = "fix_deliveries row " + std::to_string(q.col_int(0));
      auto it = fixes.find({q.col_int(1), q.col_int(2)});
      if (it == fixes.end())
        return fail(row + " (objection " + std::to_string(q.col_int(2)) + ") has no package.replace event in the review "
                    "log that delivered it (event " + std::to_string(q.col_int(1)) + " names no such fix)");
      const FixLog& x = it->second;
      const std::string ev = "event " + std::to_string(q.col_int(1));
      if (q.col_int(3) != x.decision)
        return fail(row + ": decision " + std::to_string(q.col_int(3)) + ", " + ev + " says " + std::to_string(x.decision));
      if (base::sha256_hex(q.col_text(4)) != x.changes_sha256)
        return fail(row + ": what it says the replacement changed is not what " + ev + " recorded (its SHA-256 differs)");
      if (q.col_text(5) != x.old_sha256 || q.col_text(6) != x.new_sha256)
        return fail(row + ": the packages it names are not those " + ev + " replaced");
      if (q.col_text(7) != x.at) return fail(row + ": delivered at " + q.col_text(7) + ", " + ev + " was made at " + x.at);
      it->second.row = true;
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading fix_deliveries"));
    for (const auto& [key, x] : fixes)
      if (!x.row)
        return fail("fix_deliveries: the fix of objection " + std::to_string(x.objection) + " delivered by event " +
                    std::to_string(key.first) + " is missing");
  }
  // Webhooks: each as its webhook.add event made it (where it sends, for whom, which kinds, the digest of its
  // secret) and removed when a webhook.remove event removed it: a URL or secret edited in the store would send
  // an organisation's notifications elsewhere.
  if (s.opened_version() >= 15) {
    std::string werr;
    struct HookLog {
      std::string scope, organisation, user, url, events, secret_sha256, removed_at, actor, at;
      long long seq = 0;
      bool row = false;
    };
    std::map<long long, HookLog> hooks;
    for (const auto& e : read_events(s, "webhook/", &werr)) {
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      const auto* id = p.find("webhook");
      if (!id || id->kind != mllog::Json::Kind::Int) continue;
      if (e.action == "webhook.add") {
        HookLog& h = hooks[id->i];
        h.seq = e.seq;
        h.actor = e.actor;
        h.at = text(p.find("created_at"));
        h.scope = text(p.find("scope"));
        h.organisation = text(p.find("organisation"));
        h.user = text(p.find("user"));
        h.url = text(p.find("url"));
        h.secret_sha256 = text(p.find("secret_sha256"));
        if (const auto* evs = p.find("events"))
          for (const auto& x : evs->items) h.events += (h.events.empty() ? "" : ",") + text(&x);
      } else if (e.action == "webhook.remove") {
        hooks[id->i].removed_at = text(p.find("removed_at"));
      }
    }
    if (!werr.empty()) return fail(*error = werr);
    Stmt q(s.db(),
           "SELECT w.id, CASE WHEN w.user_id IS NULL THEN 'organisation' ELSE 'user' END, COALESCE(o.name, uo.name, ''), "
           "COALESCE(u.name, ''), w.url, w.events_json, w.secret, COALESCE(w.removed_at, ''), w.created_by, w.created_at "
           "FROM webhooks w "
           "LEFT JOIN organisations o ON o.id = w.organisation_id LEFT JOIN users u ON u.id = w.user_id "
           "LEFT JOIN organisations uo ON uo.id = u.organisation_id ORDER BY w.id");
    while (q.step()) {
      const std::string row = "webhooks row " + std::to_string(q.col_int(0));
      auto it = hooks.find(q.col_int(0));
      if (it == hooks.end() || !it->second.seq) return fail(row + " has no webhook.add event in the review log");
      HookLog& h = it->second;
      h.row = true;
      const std::string ev = "event " + std::to_string(h.seq);
      std::string events;
      {
        mllog::Json j;
        std::string perr;
        if (mllog::parse_json_permissive(q.col_text(5), &j, &perr))
          for (const auto& x : j.items) events += (events.empty() ? "" : ",") + text(&x);
      }
      if (q.col_text(4) != h.url) return fail(row + ": it sends to " + q.col_text(4) + ", but " + ev + " registered " + h.url);
      if (q.col_text(1) != h.scope || q.col_text(2) != h.organisation || q.col_text(3) != h.user)
        return fail(row + ": it is not the hook of " + (h.user.empty() ? h.organisation : h.user) + " that " + ev + " registered");
      if (events != h.events) return fail(row + ": it takes " + events + ", " + ev + " registered " + h.events);
      if (q.col_text(8) != h.actor) return fail(row + ": made by " + q.col_text(8) + ", " + ev + " says " + h.actor);
      if (q.col_text(9) != h.at) return fail(row + ": made at " + q.col_text(9) + ", " + ev + " says " + h.at);
      if (base::sha256_hex(q.col_text(6)) != h.secret_sha256)
        return fail(row + ": its secret is not the one " + ev + " made (its SHA-256 differs)");
      if (q.col_text(7) != h.removed_at)
        return fail(row + (q.col_text(7).empty() ? ": live, but a webhook.remove event removed it at " + h.removed_at
                                                 : ": removed at " + q.col_text(7) + " with no webhook.remove event saying so"));
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading webhooks"));
    for (const auto& [id, h] : hooks)
      if (h.seq && !h.row)
        return fail("webhooks: row " + std::to_string(id) + " registered by event " + std::to_string(h.seq) + " is missing");
  }
  // Users and tokens: who exists, for which organisation and role, and which tokens live, as the log made them.
  // A decision is a chair's or an administrator's: one whose event names a member was not made by referee.
  {
    struct UserLog {
      std::string organisation, role;
      long long seq = 0;
    };
    struct TokenLog {
      std::string user, sha256;  // sha256 "" in events before schema 7
      long long seq = 0;
      bool revoked = false;
      long long revoked_seq = 0;
    };
    std::map<std::string, UserLog> users;
    std::map<std::string, TokenLog> tokens;  // by prefix
    std::string uerr;
    auto uevents = read_events(s, "user/", &uerr);
    if (!uerr.empty()) return fail(*error = uerr);
    for (const auto& e : uevents) {
      mllog::Json p;
      std::string perr;
      if (!mllog::parse_json_permissive(e.payload_json, &p, &perr)) continue;
      std::string user = text(p.find("user"));
      if (e.action == "user.add") {
        users[user] = {text(p.find("organisation")), text(p.find("role")), e.seq};
        tokens[text(p.find("token_prefix"))] = {user, text(p.find("token_sha256")), e.seq, false};
      } else if (e.action == "token.create") {
        tokens[text(p.find("token_prefix"))] = {user, text(p.find("token_sha256")), e.seq, false};
      } else if (e.action == "token.revoke") {
        if (auto it = tokens.find(text(p.find("token_prefix"))); it != tokens.end() && !it->second.revoked) {
          it->second.revoked = true;
          it->second.revoked_seq = e.seq;
        }
      } else if (e.action == "user.revoke") {
        for (auto& [prefix, tk] : tokens)
          if (tk.user == user && !tk.revoked) {
            tk.revoked = true;
            tk.revoked_seq = e.seq;
          }
      }
    }
    for (const auto& [seq, actor] : decision_actors)
      if (auto it = users.find(actor); it != users.end() && it->second.role != "chair" && it->second.role != "admin")
        return fail("event " + std::to_string(seq) + " records a decision by " + actor + ", a " + it->second.role +
                    " (event " + std::to_string(it->second.seq) + "): only a chair or an administrator decides, so "
                    "referee did not write it");
    Stmt q(s.db(),
           "SELECT u.name, COALESCE(o.name, ''), u.role, u.disabled_at IS NOT NULL, u.created_at FROM users u LEFT JOIN "
           "organisations o ON o.id = u.organisation_id ORDER BY u.name");
    std::set<std::string> user_rows;
    while (q.step()) {
      std::string name = q.col_text(0), row = "users row " + q.col_text(0);
      user_rows.insert(name);
      if (q.col_int(3)) return fail(row + ": disabled, but nothing in the review disables a user (revoke its tokens)");
      auto it = users.find(name);
      if (it == users.end()) {
        // The local administrator's row is made on first use, without an event: no organisation, role admin.
        if (name == "local-admin" && q.col_text(1).empty() && q.col_text(2) == "admin") continue;
        return fail(row + " has no user.add event in the review log");
      }
      if (q.col_text(1) != it->second.organisation)
        return fail(row + ": organisation '" + q.col_text(1) + "', event " + std::to_string(it->second.seq) + " says '" +
                    it->second.organisation + "'");
      if (q.col_text(2) != it->second.role)
        return fail(row + ": role '" + q.col_text(2) + "', event " + std::to_string(it->second.seq) + " says '" +
                    it->second.role + "'");
      if (std::string when = stamp("created_at", q.col_text(4), it->second.seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!q.ok()) return fail(*error = s.describe_error(q.rc(), "reading users"));
    for (const auto& [name, u] : users)
      if (!user_rows.count(name))
        return fail("users: " + name + ", added by event " + std::to_string(u.seq) + ", is missing");
    Stmt tq(s.db(), "SELECT t.prefix, u.name, t.hash, t.revoked_at IS NOT NULL, t.created_at, COALESCE(t.revoked_at, '') "
                    "FROM tokens t LEFT JOIN users u ON u.id = t.user_id ORDER BY t.id");
    std::set<std::string> token_rows;
    while (tq.step()) {
      std::string prefix = tq.col_text(0), row = "tokens row " + tq.col_text(0) + " (user " + tq.col_text(1) + ")";
      token_rows.insert(prefix);
      auto it = tokens.find(prefix);
      if (it == tokens.end()) return fail(row + " has no token.create or user.add event in the review log");
      const TokenLog& tk = it->second;
      const std::string ev = "event " + std::to_string(tk.seq);
      if (tq.col_text(1) != tk.user) return fail(row + ": " + ev + " made it for user " + tk.user);
      if (!tk.sha256.empty() && token_digest(tq.col_text(2)) != tk.sha256)
        return fail(row + ": its hash is not the one " + ev + " recorded (a token changed outside the review)");
      if ((tq.col_int(3) != 0) != tk.revoked)
        return fail(row + ": " + (tk.revoked ? "live, but the review log revoked it" : "revoked, but the review log did not"));
      if (std::string when = stamp("created_at", tq.col_text(4), tk.seq); !when.empty()) return fail(row + ": " + when);
      if (tk.revoked_seq)
        if (std::string when = stamp("revoked_at", tq.col_text(5), tk.revoked_seq); !when.empty()) return fail(row + ": " + when);
    }
    if (!tq.ok()) return fail(*error = s.describe_error(tq.rc(), "reading tokens"));
    for (const auto& [prefix, tk] : tokens)
      if (!prefix.empty() && !token_rows.count(prefix))
        return fail("tokens: " + prefix + " of " + tk.user + ", made by event " + std::to_string(tk.seq) + ", is missing");
  }
  // The log's own guards: the triggers that refuse to change or delete an event.
  // Each as the schema made it (its text, white space aside): one recreated with a WHEN that never holds, or
  // as an AFTER trigger, guards nothing; and no other trigger on the log.
  {
    auto squeeze = [](const std::string& sql) {
      std::string out;
      for (char ch : sql) {
        bool space = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
        if (space && (out.empty() || out.back() == ' ')) continue;
        out += space ? ' ' : ch;
      }
      while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
      return out;
    };
    std::map<std::string, std::string> expected = {
        {"events_append_only_update",
         "CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'the review log is "
         "append-only: an event cannot be changed'); END"},
        {"events_append_only_delete",
         "CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'the review log is "
         "append-only: an event cannot be deleted'); END"}};
    if (s.opened_version() >= 9)
      expected["events_append_only_replace"] =
          "CREATE TRIGGER events_append_only_replace BEFORE INSERT ON events WHEN EXISTS (SELECT 1 FROM events WHERE seq "
          "= NEW.seq) BEGIN SELECT RAISE(ABORT, 'the review log is append-only: an event cannot be replaced'); END";
    std::set<std::string> seen;
    Stmt q(s.db(), "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'events'");
    while (q.step()) {
      auto it = expected.find(q.col_text(0));
      if (it == expected.end())
        return fail("events: trigger " + q.col_text(0) + " on the review log is not one the schema makes");
      if (squeeze(q.col_text(1)) != it->second)
        return fail("events: trigger " + q.col_text(0) + " is not the one the schema makes: it may no longer keep the "
                    "review log append-only");
      seen.insert(q.col_text(0));
    }
    if (seen.size() != expected.size())
      return fail("events: the triggers that keep the review log append-only (events_append_only_update, "
                  "events_append_only_delete" + std::string(s.opened_version() >= 9 ? ", events_append_only_replace" : "") +
                  ") are missing");
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
  if (hash.size() < kMinHeadDigits || hash.size() > 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    return "--head " + anchor + ": the hash must be " + std::to_string(kMinHeadDigits) +
           " to 64 lower-case hex digits of an event's hash";
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
  if (q.col_text(1).compare(0, hash.size(), hash) != 0) {
    // The hash of another event: a mistyped sequence number, not a rewritten log.
    Stmt other(s.db(), "SELECT seq FROM events WHERE substr(hash, 1, length(?1)) = ?1 ORDER BY seq LIMIT 1");
    other.bind(1, hash);
    if (other.step())
      return "--head " + anchor + ": that hash is event " + std::to_string(other.col_int(0)) + "'s, not event " +
             std::to_string(seq) + "'s (check the number before the colon: --head " + std::to_string(other.col_int(0)) +
             ":" + hash + ")";
    return "event " + std::to_string(seq) + " has hash " + q.col_text(1).substr(0, 16) + "..., the recorded head says " +
           hash.substr(0, 16) + "...: the log was rewritten";
  }
  return "";
}

}  // namespace referee::review
