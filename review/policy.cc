#include "review/policy.h"

#include <algorithm>
#include <cmath>

#include "base/invisible.h"
#include "base/text.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/notify.h"
#include "review/rounds.h"
#include "submissions/queries.h"

namespace referee::review {

// ------------------------------------------------------------ authorisation

Access authorize(const Actor& who, Action action, const Standing& st, const std::string& round_state) {
  const bool chair = who.role == Role::Chair, admin = who.role == Role::Admin, member = who.role == Role::Member;
  const bool has_org = !who.organisation.empty();
  bool ok = false;
  bool writes_round = true;  // an action on a round's review, closed once it is published
  switch (action) {
    case Action::FileObjection: ok = has_org && !st.accused; break;
    case Action::AddEvidence: ok = st.objecting || st.accused || chair; break;
    case Action::Respond: ok = st.accused; break;
    // The discussion: the two sides and the chairs (others read it where they may see the objection).
    case Action::Comment: ok = st.objecting || st.accused || chair; break;
    case Action::Vote: ok = st.submitted; break;
    // A chair does not judge their own organisation's case, either side of it.
    case Action::Decide: ok = chair && !st.objecting && !st.accused && !st.partner; break;
    case Action::Withdraw: ok = st.objecting; break;
    // Nor grants their own organisation's side of a case more time.
    case Action::OverrideDeadline: ok = chair && !st.objecting && !st.accused && !st.partner; break;
    case Action::SetSchedule:
    case Action::ChangeRoundState:
    case Action::AssignPairings: ok = chair || admin; writes_round = false; break;
    // The reviewer's members and the chairs; an administrator manages users
    // and rounds, not reviews (the local administrator, who owns the file, may).
    case Action::SetPairingStatus: ok = chair || who.local_admin || (member && st.reviewer); break;
    case Action::Announce: ok = chair || who.local_admin || (member && st.owns_result); break;
    case Action::ManageUsers: ok = admin; writes_round = false; break;
    case Action::ListUsers: ok = !member; writes_round = false; break;
    // The publication is written again from the decisions whenever asked, a published round's too.
    case Action::Publish: ok = chair || admin; writes_round = false; break;
    // The committee's meetings: its chairs keep the minutes (the local administrator may).
    case Action::RecordMeeting: ok = chair || who.local_admin; break;
  }
  if (!ok) return Access::Forbidden;
  if (writes_round && round_state == "published") return Access::Closed;
  return Access::Allowed;
}

Error forbidden(const std::string& message, const std::string& hint) { return make_error(403, "forbidden", message, hint); }

// ------------------------------------------------------------ the embargo

bool may_see_round(submissions::Store& s, const Actor& who, long long round_id, const std::string& state) {
  if (who.role != Role::Member || state == "published") return true;
  submissions::Stmt q(s.db(),
                      "SELECT 1 FROM packages p JOIN organisations o ON o.id = p.organisation_id WHERE p.round_id = ?1 "
                      "AND o.name = ?2");
  q.bind(1, round_id).bind(2, who.organisation);
  return q.step();
}

Error unknown_round_error(const std::string& text) {
  return make_error(404, "unknown-round", "unknown round " + text,
                    "referee list rounds shows the rounds you can see; name one as it shows it, with or without its "
                    "training- prefix");
}

namespace {

// Reads round `id` and its review record into *out (name, state, schedule, version).
bool read_round(submissions::Store& s, long long id, RoundInfo* out, bool* found, Error* err) {
  submissions::Stmt q(s.db(),
                      "SELECT r.name, rr.state, rr.submission_deadline, rr.objections_due, rr.responses_due, "
                      "rr.decisions_due, rr.scores_final, rr.publication, rr.first_meeting, rr.version, "
                      "rr.round_id IS NOT NULL FROM rounds r LEFT JOIN round_reviews rr ON rr.round_id = r.id "
                      "WHERE r.id = ?1");
  q.bind(1, id);
  *found = q.step();
  if (!*found) {
    if (!q.ok()) *err = store_error(s, q.rc(), "reading rounds");
    return q.ok();
  }
  out->id = id;
  out->name = q.col_text(0);
  out->reviewed = q.col_int(10) != 0;
  out->state = "published";
  out->schedule = Schedule{};
  out->version = 0;
  if (out->reviewed) {
    out->state = q.col_text(1);
    int i = 2;
    for (auto& [name, field] : schedule_fields()) out->schedule.*field = q.col_text(i++);
    out->version = q.col_int(9);
  }
  return true;
}

}  // namespace

bool find_round(submissions::Store& s, const Actor& who, const std::string& text, RoundInfo* out, Error* err) {
  std::string name, error;
  if (!submissions::resolve_round(s, text, &name, &error)) {
    // The store's own message lists every round it holds, embargoed ones
    // included: only for the local administrator, who sees them all.
    *err = who.local_admin ? make_error(404, "unknown-round", error) : unknown_round_error(text);
    return false;
  }
  submissions::Stmt q(s.db(), "SELECT id FROM rounds WHERE name = ?1");
  q.bind(1, name);
  if (!q.step()) {
    *err = q.ok() ? unknown_round_error(text) : store_error(s, q.rc(), "reading rounds");
    return false;
  }
  bool found = false;
  if (!read_round(s, q.col_int(0), out, &found, err)) return false;
  if (!found || !may_see_round(s, who, out->id, out->state)) {
    *err = unknown_round_error(text);
    return false;
  }
  out->asked = text;
  return true;
}

bool find_round_by_id(submissions::Store& s, const Actor& who, long long id, const Error& not_found, RoundInfo* out,
                      Error* err) {
  bool found = false;
  if (!read_round(s, id, out, &found, err)) return false;
  if (!found || !may_see_round(s, who, out->id, out->state)) {
    *err = not_found;
    return false;
  }
  out->asked.clear();
  return true;
}

// ------------------------------------------------------------ deadlines

std::string deadline_instant(const std::string& text) {
  if (text.size() == 10) return text + "T23:59:59.999Z";
  return text;
}

std::string deadline_of(const Schedule& schedule, const std::string& name) {
  for (const auto& [field, member] : schedule_fields())
    if (name == field) return schedule.*member;
  return "";
}

std::string extended_deadline(const std::string& round_deadline, const std::string& extended_until) {
  if (round_deadline.empty() || extended_until.empty()) return round_deadline;
  return deadline_instant(extended_until) > deadline_instant(round_deadline) ? extended_until : round_deadline;
}

bool check_override_reason(const std::string& reason, Error* err) {
  if (reason.empty() || !base::blank(reason)) return true;
  *err = make_error(400, "bad-field", "override: the reason shows nothing (white space or invisible characters only)",
                    "say why the deadline is overridden; it is recorded in the review log");
  return false;
}

namespace {
// A schedule field as its flag: objections_due -> objections-due.
std::string flag_name(std::string field) {
  std::replace(field.begin(), field.end(), '_', '-');
  return field;
}
}  // namespace

bool check_not_published(const RoundInfo& round, Error* err) {
  if (round.state != "published") return true;
  *err = make_error(422, "published", "round " + round.name + " is published: the review is closed",
                    "nothing in a published round changes");
  return false;
}

bool check_deadline(const Actor& who, const RoundInfo& round, const std::string& deadline_name,
                    const std::string& override_reason, std::string* overridden, Error* err, const Standing& standing,
                    const std::string& extended_until, const std::string& set_on_objection) {
  overridden->clear();
  if (!check_override_reason(override_reason, err)) return false;
  // A published round first: whoever asks, and with whatever override, the answer is that it is published.
  if (!check_not_published(round, err)) return false;
  if (!override_reason.empty() && authorize(who, Action::OverrideDeadline, standing, round.state) == Access::Forbidden) {
    *err = who.role == Role::Chair
               ? forbidden("a chair whose organisation (" + who.organisation +
                               ") is a party to this objection does not override its deadlines",
                           "ask a chair of another organisation")
               : forbidden("only a review chair may override a deadline", "leave out --override (API field `override`)");
    return false;
  }
  std::string now = now_utc();
  auto late = [&](const std::string& when) { return !when.empty() && now > deadline_instant(when); };
  std::string which;
  const std::string base = set_on_objection.empty() ? deadline_of(round.schedule, deadline_name) : set_on_objection;
  std::string when = deadline_name.empty() ? "" : extended_deadline(base, extended_until);
  if (late(when)) {
    which = deadline_name;
  } else if (late(round.schedule.scores_final)) {
    which = "scores_final";
    when = round.schedule.scores_final;
  }
  if (which.empty()) return true;
  if (!override_reason.empty()) {
    *overridden = which + " (" + when + ")";
    return true;
  }
  // A party's own chair cannot override its side's deadline: the way on is a chair of neither party.
  const bool party = standing.objecting || standing.accused || standing.partner;
  if (!set_on_objection.empty() && which == deadline_name) {
    *err = make_error(422, "late", "the vote deadline of this objection (" + when + ") has passed",
                      "a review chair of neither party may set a later one (referee objection vote-deadline ID --until "
                      "TIME --reason TEXT) or override it (--override REASON, API field `override`)");
    return false;
  }
  *err = make_error(422, "late", "the deadline " + which + " of round " + round.name + " (" + when + ") has passed",
                    party ? "a chair of neither party may move the round's deadline (referee round schedule " + round.name +
                                " --" + flag_name(which) +
                                " DATE) or, on a filed objection, give an organisation more time (referee objection extend)"
                          : "a review chair may override it: send an override reason (--override REASON, API field "
                            "`override`)");
  return false;
}

bool check_not_final(const RoundInfo& round, const std::string& what, const std::string& override_reason,
                     std::string* overridden, Error* err) {
  if (round.state != "final") return true;
  if (!override_reason.empty()) {
    *overridden = overridden->empty() ? "round state final" : *overridden + "; round state final";
    return true;
  }
  *err = make_error(422, "final", "round " + round.name + " is final: no " + what + " any more",
                    "a review chair may allow it with a reason (--override REASON, API field `override`)");
  return false;
}

// ------------------------------------------------------------ versions

Error stale(const std::string& what, long long expected, long long current, const std::string& read_again) {
  // A version the object never reached was not read from it (a typo, another store): say so.
  Error e = make_error(409, "stale",
                       expected > current
                           ? what + " is at version " + std::to_string(current) + ": version " + std::to_string(expected) +
                                 " was never one of it"
                           : what + " changed since you read it (version " + std::to_string(expected) + ", now " +
                                 std::to_string(current) + ")",
                       "read it again (" + read_again + ") and retry with --version " + std::to_string(current) +
                           " (API: `version`)");
  e.version = current;
  return e;
}

double impact_percent(bool has_score, double score, double impact_minutes) {
  if (!has_score || !(score > 0)) return NAN;
  double p = std::round((impact_minutes - score) / score * 100.0 * 1000.0) / 1000.0;
  if (!std::isfinite(p)) return NAN;
  return p == 0 ? 0.0 : p;
}

bool waivable(double percent) { return std::isfinite(percent) && std::fabs(percent) < kWaiverPercent; }

bool check_version(const Expected& expected, long long current, const std::string& what, const std::string& read_again,
                   Error* err) {
  if (!expected.given || expected.version == current) return true;
  *err = stale(what, expected.version, current, read_again);
  return false;
}

// ------------------------------------------------------------ writes

Result<long long> write(submissions::Store& s, const Actor& who,
                        const std::function<Result<long long>(Change* event)>& change) {
  std::string e;
  if (!s.begin(&e)) return make_error(503, "busy", e, "try again");
  Change event;
  Result<long long> r = change(&event);
  if (!r.ok()) {
    s.rollback();
    return r;
  }
  long long seq = 0;
  if (event.record && !append_event(s, who, event.action, event.subject, event.payload, &e, &seq)) {
    s.rollback();
    return make_error(500, "store", e);
  }
  // Who is told of it: queued with it, in the same transaction.
  if (event.record && !queue_event_notifications(s, who, event.action, event.subject, event.payload, seq, &e)) {
    s.rollback();
    return make_error(500, "store", e);
  }
  if (!s.commit(&e)) {
    s.rollback();
    return make_error(500, "store", e);
  }
  return r;
}

// ------------------------------------------------------------ names

bool find_organisation(submissions::Store& s, const std::string& name, long long* id, std::string* spelled) {
  submissions::Stmt q(s.db(), "SELECT id, name FROM organisations WHERE name = ?1 COLLATE NOCASE ORDER BY id LIMIT 1");
  q.bind(1, name);
  if (!q.step()) return false;
  *id = q.col_int(0);
  if (spelled) *spelled = q.col_text(1);
  return true;
}

bool find_visible_organisation(submissions::Store& s, const Actor& who, const std::string& name, std::string* spelled) {
  long long id = 0;
  if (!find_organisation(s, name, &id, spelled)) return false;
  if (who.role != Role::Member || base::lower(*spelled) == base::lower(who.organisation)) return true;
  submissions::Stmt q(s.db(),
                      "SELECT p.round_id, COALESCE(rr.state, 'published') FROM packages p LEFT JOIN round_reviews rr "
                      "ON rr.round_id = p.round_id WHERE p.organisation_id = ?1");
  q.bind(1, id);
  while (q.step())
    if (may_see_round(s, who, q.col_int(0), q.col_text(1))) return true;
  return false;
}

Error unknown_organisation_error(const std::string& name) {
  return make_error(404, "unknown-organisation", "no organisation '" + name + "' in the rounds you can see",
                    "referee list submitters shows them");
}

long long next_id(submissions::Store& s, const char* table, long long round_id, Error* err) {
  std::string error;
  long long id = submissions::next_round_id(s, table, round_id, &error);
  if (!id) *err = make_error(500, "store", error);
  return id;
}

std::string open_cases_of(submissions::Store& s, long long round_id, const std::string& org) {
  if (org.empty()) return "";
  submissions::Stmt q(s.db(),
                      "SELECT j.id, a.name, b.name FROM objections j JOIN organisations a ON a.id = j.by_org "
                      "JOIN organisations b ON b.id = j.against_org WHERE j.round_id = ?1 AND j.state IN ('open', "
                      "'responded') ORDER BY j.id");
  q.bind(1, round_id);
  std::string out;
  while (q.step())
    if (same_party(q.col_text(1), org) || same_party(q.col_text(2), org))
      out += (out.empty() ? "#" : ", #") + std::to_string(q.col_int(0));
  return out;
}

long long round_of_objection(submissions::Store& s, long long objection) {
  submissions::Stmt q(s.db(), "SELECT round_id FROM objections WHERE id = ?1");
  q.bind(1, objection);
  return q.step() ? q.col_int(0) : 0;
}

std::vector<std::string> round_submitters(submissions::Store& s, long long round_id) {
  std::vector<std::string> names;
  submissions::Stmt q(s.db(),
                      "SELECT DISTINCT o.name FROM packages p JOIN organisations o ON o.id = p.organisation_id "
                      "WHERE p.round_id = ?1 ORDER BY o.name");
  q.bind(1, round_id);
  while (q.step()) names.push_back(q.col_text(0));
  return names;
}

bool submitted(submissions::Store& s, long long round_id, long long org_id) {
  submissions::Stmt q(s.db(), "SELECT 1 FROM packages WHERE round_id = ?1 AND organisation_id = ?2");
  q.bind(1, round_id).bind(2, org_id);
  return q.step();
}

namespace {

constexpr const char* kResultName =
    "SELECT o.name || '/' || y.name || '/' || x.benchmark FROM results x JOIN systems y ON y.id = x.system_id JOIN "
    "packages p ON p.id = y.package_id JOIN organisations o ON o.id = p.organisation_id ";

}  // namespace

bool find_result(submissions::Store& s, long long round_id, const std::string& name, long long* id, long long* org_id,
                 Error* err, std::string* org) {
  size_t a = name.find('/'), b = name.rfind('/');
  if (a == std::string::npos || a == b) {
    *err = make_error(400, "bad-field", "result '" + name + "' is not ORG/SYSTEM/BENCHMARK",
                      "e.g. NVIDIA/eos_n256_ngc23.09_pytorch/ssd");
    return false;
  }
  submissions::Stmt q(s.db(),
                      "SELECT x.id, o.id, o.name FROM results x JOIN systems y ON y.id = x.system_id JOIN packages p ON "
                      "p.id = y.package_id JOIN organisations o ON o.id = p.organisation_id WHERE p.round_id = ?1 AND "
                      "o.name = ?2 COLLATE NOCASE AND y.name = ?3 COLLATE NOCASE AND x.benchmark = ?4 COLLATE NOCASE "
                      "ORDER BY x.id LIMIT 1");
  q.bind(1, round_id).bind(2, name.substr(0, a)).bind(3, name.substr(a + 1, b - a - 1)).bind(4, name.substr(b + 1));
  if (!q.step()) {
    if (!q.ok()) {
      *err = store_error(s, q.rc(), "reading results");
      return false;
    }
    // An unknown name (exit 2 from the CLI): list what the organisation has in this round.
    submissions::Stmt v(s.db(), (std::string(kResultName) +
                                 "WHERE p.round_id = ?1 AND o.name = ?2 COLLATE NOCASE ORDER BY 1 LIMIT 21")
                                    .c_str());
    v.bind(1, round_id).bind(2, name.substr(0, a));
    std::vector<std::string> valid;
    while (v.step()) valid.push_back(v.col_text(0));
    std::string hint;
    if (valid.empty()) {
      hint = "organisation " + name.substr(0, a) + " has no results in this round";
    } else {
      hint = "its results in this round: ";
      for (size_t k = 0; k < valid.size() && k < 20; ++k) hint += (k ? ", " : "") + valid[k];
      if (valid.size() > 20) hint += ", ...";
    }
    *err = make_error(404, "unknown-result", "result " + name + " is not in this round", hint);
    return false;
  }
  *id = q.col_int(0);
  *org_id = q.col_int(1);
  if (org) *org = q.col_text(2);
  return true;
}

std::string result_name(submissions::Store& s, long long result_id) {
  submissions::Stmt q(s.db(), (std::string(kResultName) + "WHERE x.id = ?1").c_str());
  q.bind(1, result_id);
  return q.step() ? q.col_text(0) : "result " + std::to_string(result_id);
}

Error store_error(submissions::Store& s, int rc, const std::string& what) {
  return make_error(500, "store", s.describe_error(rc, what));
}

bool actor_user_id(submissions::Store& s, const Actor& who, long long* id, std::string* error) {
  if (who.user_id) {
    *id = who.user_id;
    return true;
  }
  submissions::Stmt ins(s.db(), "INSERT OR IGNORE INTO users (name, role, created_at) VALUES (?1, 'admin', ?2)");
  ins.bind(1, who.user).bind(2, now_utc());
  submissions::Stmt q(s.db(), "SELECT id FROM users WHERE name = ?1");
  if (!ins.run() || !(q.bind(1, who.user), q.step())) {
    *error = s.describe_error(q.ok() ? ins.rc() : q.rc(), "recording the local administrator");
    return false;
  }
  *id = q.col_int(0);
  return true;
}

// ------------------------------------------------------------ decisions

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

std::string proposal_text(const std::string& remedy, bool has_factor, double factor) {
  return remedy + (has_factor ? " x" + mllog::json_number(factor) : "");
}

}  // namespace

Carried carried_remedy(const std::vector<Proposal>& uphold, int reject, const std::string& asked, bool has_factor,
                       double factor, const std::string& tie_break) {
  Carried c;
  // The remedies named, with how many uphold votes name each (in order of first naming).
  std::vector<std::pair<Proposal, int>> named;
  int unnamed = 0;
  for (const auto& p : uphold) {
    if (p.remedy.empty()) {
      ++unnamed;
      continue;
    }
    auto it = std::find_if(named.begin(), named.end(), [&](const std::pair<Proposal, int>& x) {
      return x.first.remedy == p.remedy && x.first.has_factor == p.has_factor && (!p.has_factor || x.first.factor == p.factor);
    });
    if (it == named.end()) named.push_back({p, 1});
    else ++it->second;
  }
  std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  auto label = [](const std::pair<Proposal, int>& x) {
    return proposal_text(x.first.remedy, x.first.has_factor, x.first.factor) + " (" + std::to_string(x.second) + ")";
  };
  const int cast = static_cast<int>(uphold.size()) + reject;
  if (asked.empty()) {
    if (named.size() >= 2 && named[0].second == named[1].second) {
      c.code = "no-remedy";
      c.error = "the uphold votes propose " + label(named[0]) + " and " + label(named[1]) + " equally: the chair names the remedy";
      c.hint = "send it (--remedy R [--factor F], API fields `remedy`, `factor`)";
      return c;
    }
    if (named.empty()) c.remedy = "none";
    else {
      c.remedy = named[0].first.remedy;
      c.has_factor = named[0].first.has_factor;
      c.factor = named[0].first.factor;
    }
  } else {
    c.remedy = asked;
    c.has_factor = has_factor;
    c.factor = factor;
  }
  int explicit_votes = 0;
  for (const auto& x : named)
    if (x.first.remedy == c.remedy && x.first.has_factor == c.has_factor && (!c.has_factor || x.first.factor == c.factor))
      explicit_votes = x.second;
  c.support = explicit_votes + unnamed;
  Outcome o = decide_outcome(c.support, cast - c.support, c.remedy, tie_break);
  if (o.ok && o.outcome == "upheld") {
    c.ok = true;
    c.majority = o.majority;
    return c;
  }
  const std::string what = proposal_text(c.remedy, c.has_factor, c.factor);
  const bool two_thirds = c.remedy == "withdraw" || c.remedy == "open";
  c.code = "not-carried";
  c.error = "the votes do not carry remedy " + what + ": " + std::to_string(c.support) + " of the " +
            std::to_string(cast) + " votes cast support it (uphold votes naming it, or naming no remedy); it needs " +
            (two_thirds ? "two thirds" : "more than half") + " of them";
  std::string carried;
  for (const auto& x : named) {
    int support = x.second + unnamed;
    Outcome ox = decide_outcome(support, cast - support, x.first.remedy, tie_break);
    if (ox.ok && ox.outcome == "upheld") carried = proposal_text(x.first.remedy, x.first.has_factor, x.first.factor);
    if (!carried.empty()) break;
  }
  c.hint = "a remedy or factor other than the votes' needs its own vote: the organisations vote again with --remedy " +
           c.remedy + (c.has_factor ? " --factor " + mllog::json_number(c.factor) : "") +
           " (a new vote replaces the organisation's earlier one)" +
           (carried.empty() ? std::string("") : "; the votes carry " + carried);
  return c;
}

const char* status_of_remedy(const std::string& remedy) {
  if (remedy == "fix") return "fixed";
  if (remedy == "open") return "moved-to-open";
  if (remedy == "withdraw") return "withdrawn";
  if (remedy == "normalise") return "normalised";
  return "";
}

StatusOfResult status_of_result(const std::vector<ObjectionOnResult>& on) {
  StatusOfResult out;
  for (const auto& o : on) {
    if (o.decision == 0 || o.outcome != "upheld" || !*status_of_remedy(o.remedy) || o.decision < out.decision) continue;
    out.status = status_of_remedy(o.remedy);
    out.has_factor = out.status == "normalised" && o.has_factor;
    out.factor = out.has_factor ? o.factor : 0;
    out.objection = o.objection;
    out.decision = o.decision;
  }
  if (!out.status.empty()) return out;
  for (const auto& o : on)
    if ((o.state == "open" || o.state == "responded") && (out.objection == 0 || o.objection < out.objection)) {
      out.status = "objection-open";
      out.objection = o.objection;
    }
  return out;
}

}  // namespace referee::review
