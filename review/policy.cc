#include "review/policy.h"

#include "review/events.h"
#include "submissions/queries.h"

namespace referee::review {

namespace {

bool read_review(Context& c, RoundInfo* out, Response* err) {
  out->reviewed = false;
  submissions::Stmt q(c.store.db(),
                      "SELECT state, COALESCE(objections_due, ''), COALESCE(responses_due, ''), "
                      "COALESCE(decisions_due, ''), COALESCE(scores_final, '') FROM round_reviews WHERE round_id = ?1");
  q.bind(1, out->id);
  if (q.step()) {
    out->reviewed = true;
    out->state = q.col_text(0);
    out->objections_due = q.col_text(1);
    out->responses_due = q.col_text(2);
    out->decisions_due = q.col_text(3);
    out->scores_final = q.col_text(4);
  } else if (!q.ok()) {
    *err = store_error(c.store, q.rc(), "reading the round's review record");
    return false;
  } else {
    out->reviewed = false;
    out->state = "published";
  }
  // The embargo, as Api::can_see_round says it, asked on this request's own
  // connection: a handler inside a transaction never waits for another.
  bool visible = c.who.role != Role::Member || out->state == "published";
  if (!visible) {
    submissions::Stmt sub(c.store.db(),
                          "SELECT 1 FROM packages p JOIN organisations o ON o.id = p.organisation_id WHERE p.round_id = "
                          "?1 AND o.name = ?2");
    sub.bind(1, out->id).bind(2, c.who.organisation);
    visible = sub.step();
  }
  if (!visible) {
    *err = unknown_round(out->name);
    return false;
  }
  return true;
}

}  // namespace

bool load_round(Context& c, const std::string& text, RoundInfo* out, Response* err) {
  std::string name, error;
  if (!submissions::resolve_round(c.store, text, &name, &error)) {
    // Said the same way for an unknown round and an embargoed one.
    *err = unknown_round(text);
    return false;
  }
  submissions::Stmt q(c.store.db(), "SELECT id FROM rounds WHERE name = ?1");
  q.bind(1, name);
  if (!q.step()) {
    *err = q.ok() ? unknown_round(text) : store_error(c.store, q.rc(), "reading rounds");
    return false;
  }
  out->id = q.col_int(0);
  out->name = name;
  if (read_review(c, out, err)) return true;
  if (err->status == 404) *err = unknown_round(text);  // the round as asked, as for one that does not exist
  return false;
}

bool load_round_by_id(Context& c, long long id, RoundInfo* out, Response* err) {
  submissions::Stmt q(c.store.db(), "SELECT name FROM rounds WHERE id = ?1");
  q.bind(1, id);
  if (!q.step()) {
    *err = q.ok() ? error_response(404, "not-found", "round " + std::to_string(id) + " is not known")
                  : store_error(c.store, q.rc(), "reading rounds");
    return false;
  }
  out->id = id;
  out->name = q.col_text(0);
  return read_review(c, out, err);
}

std::string deadline_instant(const std::string& text) {
  if (text.size() == 10) return text + "T23:59:59.999Z";
  return text;
}

bool check_deadline(const Context& c, const RoundInfo& round, const std::string& deadline_name,
                    const std::string& override_reason, std::string* overridden, Response* err) {
  overridden->clear();
  if (!override_reason.empty() && c.who.role != Role::Chair) {
    *err = forbidden("only a review chair may override a deadline", "leave out --override (API field `override`)");
    return false;
  }
  if (round.state == "published") {
    *err = error_response(422, "published", "round " + round.name + " is published: the review is closed",
                          "nothing in a published round changes");
    return false;
  }
  std::string now = now_utc();
  auto late = [&](const std::string& name, const std::string& when) {
    return !when.empty() && now > deadline_instant(when) ? name : std::string();
  };
  std::string which;
  std::string when;
  if (deadline_name == "objections_due") when = round.objections_due;
  else if (deadline_name == "responses_due") when = round.responses_due;
  else if (deadline_name == "decisions_due") when = round.decisions_due;
  which = late(deadline_name, when);
  if (which.empty()) {
    which = late("scores_final", round.scores_final);
    if (!which.empty()) when = round.scores_final;
  }
  if (which.empty()) return true;
  if (!override_reason.empty()) {
    *overridden = which + " (" + when + ")";
    return true;
  }
  *err = error_response(422, "late", "the deadline " + which + " of round " + round.name + " (" + when + ") has passed",
                        "a review chair may override it: send an override reason (--override REASON, API field "
                        "`override`)");
  return false;
}

bool check_not_final(const RoundInfo& round, const std::string& what, const std::string& override_reason,
                     std::string* overridden, Response* err) {
  if (round.state != "final") return true;
  if (!override_reason.empty()) {
    *overridden = overridden->empty() ? "round state final" : *overridden + "; round state final";
    return true;
  }
  *err = error_response(422, "final", "round " + round.name + " is final: no " + what + " any more",
                        "a review chair may allow it with a reason (--override REASON, API field `override`)");
  return false;
}

bool find_organisation(submissions::Store& s, const std::string& name, long long* id, std::string* spelled) {
  submissions::Stmt q(s.db(), "SELECT id, name FROM organisations WHERE name = ?1 COLLATE NOCASE ORDER BY id LIMIT 1");
  q.bind(1, name);
  if (!q.step()) return false;
  *id = q.col_int(0);
  if (spelled) *spelled = q.col_text(1);
  return true;
}

bool submitted(submissions::Store& s, long long round_id, long long org_id) {
  submissions::Stmt q(s.db(), "SELECT 1 FROM packages WHERE round_id = ?1 AND organisation_id = ?2");
  q.bind(1, round_id).bind(2, org_id);
  return q.step();
}

bool find_result(submissions::Store& s, long long round_id, const std::string& name, long long* id, long long* org_id,
                 Response* err) {
  size_t a = name.find('/'), b = name.rfind('/');
  if (a == std::string::npos || a == b) {
    *err = error_response(400, "bad-field", "result '" + name + "' is not ORG/SYSTEM/BENCHMARK",
                          "e.g. NVIDIA/eos_n256_ngc23.09_pytorch/ssd");
    return false;
  }
  submissions::Stmt q(s.db(),
                      "SELECT x.id, o.id FROM results x JOIN systems y ON y.id = x.system_id JOIN packages p ON "
                      "p.id = y.package_id JOIN organisations o ON o.id = p.organisation_id WHERE p.round_id = ?1 AND "
                      "o.name = ?2 COLLATE NOCASE AND y.name = ?3 COLLATE NOCASE AND x.benchmark = ?4 COLLATE NOCASE "
                      "ORDER BY x.id LIMIT 1");
  q.bind(1, round_id).bind(2, name.substr(0, a)).bind(3, name.substr(a + 1, b - a - 1)).bind(4, name.substr(b + 1));
  if (!q.step()) {
    // An unknown name (exit 2 from the CLI): list what the organisation has in this round.
    submissions::Stmt v(s.db(),
                        "SELECT o.name || '/' || y.name || '/' || x.benchmark FROM results x JOIN systems y ON y.id = "
                        "x.system_id JOIN packages p ON p.id = y.package_id JOIN organisations o ON o.id = "
                        "p.organisation_id WHERE p.round_id = ?1 AND o.name = ?2 COLLATE NOCASE ORDER BY 1 LIMIT 21");
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
    *err = error_response(404, "unknown-result", "result " + name + " is not in this round", hint);
    return false;
  }
  *id = q.col_int(0);
  *org_id = q.col_int(1);
  return true;
}

std::string result_name(submissions::Store& s, long long result_id) {
  submissions::Stmt q(s.db(),
                      "SELECT o.name || '/' || y.name || '/' || x.benchmark FROM results x JOIN systems y ON y.id = "
                      "x.system_id JOIN packages p ON p.id = y.package_id JOIN organisations o ON o.id = "
                      "p.organisation_id WHERE x.id = ?1");
  q.bind(1, result_id);
  return q.step() ? q.col_text(0) : "result " + std::to_string(result_id);
}

bool body_bool(const mllog::Json& body, const char* name, bool* out, Response* err) {
  const mllog::Json* v = body.find(name);
  if (!v || v->kind == mllog::Json::Kind::Null) return true;
  if (v->kind != mllog::Json::Kind::Bool) {
    *err = error_response(400, "bad-field", std::string("field '") + name + "' must be true or false");
    return false;
  }
  *out = v->b;
  return true;
}

Response forbidden(const std::string& message, const std::string& hint) {
  return error_response(403, "forbidden", message, hint);
}

bool commit_or_fail(submissions::Store& s, Response* err) {
  std::string e;
  if (s.commit(&e)) return true;
  s.rollback();
  *err = error_response(500, "store", e);
  return false;
}

bool Transaction::begin(Response* err) {
  std::string e;
  if (!s_.begin(&e)) {
    *err = error_response(503, "busy", e, "try again");
    return false;
  }
  open_ = true;
  return true;
}

bool Transaction::commit(const Actor& who, const std::string& action, const std::string& subject,
                         const std::string& payload, Response* err) {
  std::string e;
  if (!append_event(s_, who, action, subject, payload, &e)) {
    *err = error_response(500, "store", e);
    return false;
  }
  if (!s_.commit(&e)) {
    *err = error_response(500, "store", e);
    return false;
  }
  open_ = false;
  return true;
}

}  // namespace referee::review
