// The objection routes: each decodes its request (path, body, If-Match)
// into the typed value of review/objections.h, calls the operation and
// encodes its result, so that no HTTP or JSON parsing reaches the domain.
// Also the review log and its verification.
#include <map>

#include "base/text.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/objection_codec.h"
#include "review/objections.h"
#include "review/router.h"
#include "review/verify.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;

// {id} of /objections/{id}: out of range is 400, anything else not an id 404.
bool objection_id(const std::string& text, long long* id, Response* err) {
  if (text.size() > 18 && text.find_first_not_of("0123456789") == std::string::npos) {
    *err = error_response(400, "bad-id", "objection id " + text + " is out of range",
                          "objections are numbered per round: `referee objection list --round R` lists those you may see");
    return false;
  }
  if (!path_id(text, id)) {
    *err = error_response(no_objection(text));
    return false;
  }
  return true;
}

// One item of an evidence array, decoded.
bool decode_evidence_item(const Json& item, EvidenceItem* out, Response* err) {
  static const char* const kFields[] = {"finding", "result", "file", "lines", "figure", "value", "unit",
                                        "impact_minutes", "check", "note"};
  if (item.kind != Json::Kind::Object) {
    *err = error_response(400, "bad-field", "each evidence item must be an object");
    return false;
  }
  for (const auto& field : item.fields) {
    const std::string& k = field.first;
    if (std::find_if(std::begin(kFields), std::end(kFields), [&](const char* f) { return k == f; }) == std::end(kFields)) {
      *err = error_response(400, "unknown-field", "unknown field '" + base::excerpt(k) + "' in an evidence item",
                            "evidence is {finding}, {result, file, lines}, {figure, value, unit, impact_minutes} or "
                            "{check}, each with an optional note");
      return false;
    }
  }
  if (!body_string(item, "note", false, &out->note, err)) return false;
  // One kind per item: a finding and a check in one item would keep one and drop the other unseen.
  int kinds = (item.find("finding") ? 1 : 0) + (item.find("file") || item.find("lines") || item.find("result") ? 1 : 0) +
              (item.find("figure") ? 1 : 0) + (item.find("check") ? 1 : 0);
  if (kinds > 1) {
    *err = error_response(400, "bad-field", "an evidence item is one of a finding, lines, a figure or a check, not several",
                          "send each as its own item of the evidence array");
    return false;
  }
  if (item.find("finding")) {
    out->kind = EvidenceItem::Kind::Finding;
    return body_int(item, "finding", true, &out->finding, nullptr, err);
  }
  if (item.find("file") || item.find("lines") || item.find("result")) {
    out->kind = EvidenceItem::Kind::Lines;
    return body_string(item, "result", true, &out->result, err) && body_string(item, "file", true, &out->file, err) &&
           body_string(item, "lines", true, &out->lines, err);
  }
  if (item.find("figure")) {
    out->kind = EvidenceItem::Kind::Figure;
    bool has_value = false;
    return body_string(item, "figure", true, &out->figure, err) &&
           body_number(item, "value", true, &out->value, &has_value, err) &&
           body_string(item, "unit", false, &out->unit, err) &&
           body_number(item, "impact_minutes", false, &out->impact_minutes, &out->has_impact, err);
  }
  if (item.find("check")) {
    out->kind = EvidenceItem::Kind::Check;
    return body_string(item, "check", true, &out->check, err);
  }
  *err = error_response(400, "bad-field", "an evidence item names no finding, lines, figure or check");
  return false;
}

bool decode_evidence(const Json& body, std::vector<EvidenceItem>* out, Response* err) {
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
    EvidenceItem e;
    if (!decode_evidence_item(item, &e, err)) return false;
    out->push_back(std::move(e));
  }
  return true;
}

// The parts every change to an objection decodes: {id}, version or If-Match, override.
bool decode_change(Context& c, const Json& body, ObjectionChange* out, Response* err) {
  return objection_id(c.params[0], &out->objection, err) && read_expected(c.req, body, &out->version, err) &&
         body_string(body, "override", false, &out->override_reason, err);
}

// The optional remedy and factor of a response, a vote and a decision.
bool decode_remedy(const Json& body, std::string* remedy, double* factor, bool* has_factor, Response* err) {
  return body_string(body, "remedy", false, remedy, err) && body_number(body, "factor", false, factor, has_factor, err);
}

Response reply(Context& c, const Result<Objection>& r, int status) { return objection_answer(c.store, c.who, r, status); }

Response post_objection(Context& c) {
  Json body;
  Response err;
  if (!parse_body(c.req, {"round", "against", "results", "title", "rule", "text", "finding", "evidence", "drop_runs",
                          "override"},
                  &body, &err))
    return err;
  FileObjection in;
  if (!body_string(body, "round", false, &in.round, &err) || !body_string(body, "against", false, &in.against, &err) ||
      !body_strings(body, "results", false, &in.results, &err) || !body_string(body, "title", false, &in.title, &err) ||
      !body_string(body, "rule", false, &in.rule, &err) || !body_string(body, "text", false, &in.text, &err) ||
      !body_int(body, "finding", false, &in.finding, &in.has_finding, &err) ||
      !body_strings(body, "drop_runs", false, &in.drop_runs, &err) ||
      !body_string(body, "override", false, &in.override_reason, &err) || !decode_evidence(body, &in.evidence, &err))
    return err;
  return reply(c, file_objection(c.store, c.who, in), 201);
}

Response list_objections(Context& c) {
  ObjectionFilter f{c.query("round"), c.query("state"), c.query("by"), c.query("against")};
  return read_answer(objections_json(c.store, c.who, f));
}

Response show_objection(Context& c) {
  long long id = 0;
  Response err;
  if (!objection_id(c.params[0], &id, &err)) return err;
  return read_answer(objection_json(c.store, c.who, id));
}

Response post_evidence(Context& c) {
  Json body;
  Response err;
  AddEvidence in;
  if (!parse_body(c.req, {"evidence", "version", "override"}, &body, &err) || !decode_change(c, body, &in, &err) ||
      !decode_evidence(body, &in.evidence, &err))
    return err;
  return reply(c, add_evidence(c.store, c.who, in), 201);
}

// A response or a vote: a change with one required field (`text` | `vote`)
// and the optional remedy and factor.
template <typename In>
Response post_opinion(Context& c, const char* field, std::string In::*said,
                      Result<Objection> (*op)(submissions::Store&, const Actor&, const In&)) {
  Json body;
  Response err;
  In in;
  if (!parse_body(c.req, {field, "remedy", "factor", "version", "override"}, &body, &err) ||
      !decode_change(c, body, &in, &err) || !body_string(body, field, true, &(in.*said), &err) ||
      !decode_remedy(body, &in.remedy, &in.factor, &in.has_factor, &err))
    return err;
  return reply(c, op(c.store, c.who, in), 201);
}

Response post_response(Context& c) { return post_opinion<Respond>(c, "text", &Respond::text, respond); }

Response post_vote(Context& c) { return post_opinion<CastVote>(c, "vote", &CastVote::vote, vote); }

Response post_decision(Context& c) {
  Json body;
  Response err;
  Decide in;
  if (!parse_body(c.req, {"remedy", "factor", "tie_break", "waive", "text", "override", "version", "amend", "reason",
                   "fix_due"},
                  &body, &err) ||
      !decode_change(c, body, &in, &err) || !body_bool(body, "amend", &in.amend, &err) ||
      !body_string(body, "reason", false, &in.reason, &err) ||
      !decode_remedy(body, &in.remedy, &in.factor, &in.has_factor, &err) ||
      !body_string(body, "tie_break", false, &in.tie_break, &err) || !body_bool(body, "waive", &in.waive, &err) ||
      !body_string(body, "text", false, &in.text, &err) || !body_string(body, "fix_due", false, &in.fix_due, &err))
    return err;
  return reply(c, decide(c.store, c.who, in), 201);
}

Response post_withdraw(Context& c) {
  Json body;
  Response err;
  Withdraw in;
  if (!parse_body(c.req, {"version", "text", "override"}, &body, &err) || !decode_change(c, body, &in, &err) ||
      !body_string(body, "text", false, &in.text, &err))
    return err;
  return reply(c, withdraw(c.store, c.who, in), 200);
}

Response post_comment(Context& c) {
  Json body;
  Response err;
  Comment in;
  if (!parse_body(c.req, {"text", "version"}, &body, &err) || !decode_change(c, body, &in, &err) ||
      !body_string(body, "text", true, &in.text, &err))
    return err;
  return reply(c, comment(c.store, c.who, in), 201);
}

Response post_extension(Context& c) {
  Json body;
  Response err;
  Extend in;
  if (!parse_body(c.req, {"organisation", "deadline", "until", "reason", "version", "override"}, &body, &err) ||
      !decode_change(c, body, &in, &err) || !body_string(body, "organisation", true, &in.organisation, &err) ||
      !body_string(body, "deadline", true, &in.deadline, &err) || !body_string(body, "until", true, &in.until, &err) ||
      !body_string(body, "reason", true, &in.reason, &err))
    return err;
  return reply(c, extend(c.store, c.who, in), 201);
}

Response post_vote_deadline(Context& c) {
  Json body;
  Response err;
  SetVoteDeadline in;
  if (!parse_body(c.req, {"until", "reason", "version", "override"}, &body, &err) || !decode_change(c, body, &in, &err) ||
      !body_string(body, "until", true, &in.until, &err) || !body_string(body, "reason", true, &in.reason, &err))
    return err;
  return reply(c, set_vote_deadline(c.store, c.who, in), 200);
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

// Whether a member sees event `e`: it is about a round they can see
// (`seen` caches the rounds looked up). Chairs and admins see every event.
bool sees_event(Context& c, const Event& e, std::map<std::string, bool>* seen) {
  if (c.who.role != Role::Member) return true;
  std::string r = event_round(e);
  if (r.empty()) return false;
  auto it = seen->find(r);
  if (it == seen->end()) {
    RoundInfo info;
    Error ignored;
    it = seen->emplace(r, find_round(c.store, c.who, r, &info, &ignored)).first;
  }
  return it->second;
}

Response read_log(Context& c) {
  std::string subject = c.query("subject"), round_text = c.query("round");
  // A subject is one of the kinds the log names (or a prefix of one): anything else is a typo, not "no events".
  if (!subject.empty()) {
    bool known = false;
    for (const char* kind : {"objection/", "round/", "user/", "pairing/", "webhook/"}) {
      const std::string k = kind;
      known = known || subject.rfind(k, 0) == 0 || k.rfind(subject, 0) == 0;
    }
    if (!known)
      return error_response(400, "bad-parameter", "subject '" + base::excerpt(subject) + "' names nothing the log records",
                            "name objection/ID, round/ROUND, user/NAME, pairing/ID or webhook/ID (or one of those words with its /)");
  }
  std::string round_name;
  if (!round_text.empty()) {
    RoundInfo r;
    Error err;
    if (!find_round(c.store, c.who, round_text, &r, &err)) return error_response(err);
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
    if (!round_name.empty() && event_round(e) != round_name) continue;
    if (!sees_event(c, e, &visible)) continue;  // a member sees the events of the rounds they can see
    // A member gets no sequence numbers: they count the events of every round, hidden ones too.
    w.begin_object().key("seq");
    if (c.who.role == Role::Member) w.null(); else w.value(e.seq);
    w.key("at").value(e.at).key("actor").value(e.actor);
    w.key("organisation");
    if (e.organisation.empty()) w.null(); else w.value(e.organisation);
    w.key("role").value(e.role).key("action").value(e.action).key("subject").value(e.subject);
    Json pj;
    std::string perr;
    w.key("payload");
    if (mllog::parse_json_permissive(e.payload_json, &pj, &perr)) w.raw(e.payload_json); else w.value(e.payload_json);
    // A member gets the member's hash (member_hash): the chain's would let them count hidden events.
    w.key("hash").value(c.who.role == Role::Member ? member_hash(e.hash) : e.hash).end_object();
  }
  w.end_array().end_object();
  return json_response(w.str());
}

// A head as `--verify` printed it: SEQ:HASH or HASH, the hash (or its first
// digits, at least kMinHeadDigits) in lower-case hex.
bool valid_head(const std::string& head) {
  std::string hash = head;
  if (size_t colon = head.find(':'); colon != std::string::npos) {
    std::string seq = head.substr(0, colon);
    if (seq.empty() || seq.size() > 18 || seq.find_first_not_of("0123456789") != std::string::npos) return false;
    hash = head.substr(colon + 1);
  }
  return hash.size() >= kMinHeadDigits && hash.size() <= 64 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Response verify_log(Context& c) {
  if (std::string head = c.query("head"); !head.empty() && !valid_head(head))
    return error_response(400, "bad-head", "head '" + head.substr(0, 80) + "' is not SEQ:HASH or HASH",
                          "give a head as review log --verify printed it: 42:9f86d081... or at least " +
                              std::to_string(kMinHeadDigits) + " hex digits of its hash");
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
  if (check.ok && !anchor.empty() && c.who.role != Role::Member) {  // a member's anchor: below, among their events
    std::string problem = check_anchor(c.store, anchor, &error);
    if (!error.empty()) return error_response(500, "store", error);
    if (!problem.empty()) check.ok = false, check.problem = problem;
  }
  LogHead head = log_head(c.store, &error);
  if (!error.empty()) return error_response(500, "store", error);
  if (c.who.role == Role::Member) {
    // A member learns whether the whole log verifies, and of the events
    // only those of the rounds they can see: their count and the newest of
    // them as the head to record. Activity in other rounds moves neither.
    auto events = read_events(c.store, "", &error);
    if (!error.empty()) return error_response(500, "store", error);
    std::map<std::string, bool> seen;
    long long count = 0;
    const Event* newest = nullptr;
    const Event* anchored = nullptr;
    // Their head is a hash (the global sequence number counts every round's events): a SEQ: before it is
    // ignored, so that no number can be probed.
    std::string hash = anchor;
    if (size_t colon = anchor.find(':'); colon != std::string::npos) hash = anchor.substr(colon + 1);
    for (const auto& e : events) {
      if (!sees_event(c, e, &seen)) continue;
      ++count;
      newest = &e;
      if (!anchor.empty() && !anchored && hash.size() >= kMinHeadDigits && member_hash(e.hash).rfind(hash, 0) == 0)
        anchored = &e;
    }
    std::string problem;
    if (!check.ok) problem = "the review log does not verify (a chair or an admin sees where)";
    else if (!anchor.empty() && !anchored)
      problem = "the recorded head " + anchor +
                " is not among the events of the rounds you can see: it was deleted, or the log was rewritten "
                "(a head is at least " + std::to_string(kMinHeadDigits) + " hex digits of an event's hash)";
    JsonWriter w(0, mllog::JsonText::kUtf8);
    w.begin_object().key("ok").value(problem.empty()).key("events").value(count);
    w.key("head_seq").null();
    w.key("head_hash");
    if (newest) w.value(member_hash(newest->hash)); else w.null();
    w.key("first_bad").null().key("problem");
    if (problem.empty()) w.null(); else w.value(problem);
    w.end_object();
    return json_response(w.str());
  }
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

// ---------------------------------------------------------------- the codec

Response objection_answer(submissions::Store& s, const Actor& who, const Result<Objection>& r, int status) {
  if (!r.ok()) return error_response(r.error());
  Result<std::string> body = objection_json(s, who, r.value().id, r.value().impact_basis);
  if (!body.ok()) return error_response(body.error());
  return json_response(body.value(), status);
}

Response read_answer(const Result<std::string>& r) { return r.ok() ? json_response(r.value()) : error_response(r.error()); }

namespace {

// The fields every change carries: version (when given) and override.
void change_fields(JsonWriter& w, const ObjectionChange& in) {
  if (in.version.given) w.key("version").value(in.version.version);
  if (!in.override_reason.empty()) w.key("override").value(in.override_reason);
}

void opt(JsonWriter& w, const char* key, const std::string& v) {
  if (!v.empty()) w.key(key).value(v);
}

void remedy_fields(JsonWriter& w, const std::string& remedy, bool has_factor, double factor) {
  opt(w, "remedy", remedy);
  if (has_factor) w.key("factor").value(factor);
}

void evidence_field(JsonWriter& w, const std::vector<EvidenceItem>& items) {
  if (items.empty()) return;
  w.key("evidence").begin_array();
  for (const auto& e : items) {
    w.begin_object();
    switch (e.kind) {
      case EvidenceItem::Kind::Finding: w.key("finding").value(e.finding); break;
      case EvidenceItem::Kind::Lines:
        w.key("result").value(e.result).key("file").value(e.file).key("lines").value(e.lines);
        break;
      case EvidenceItem::Kind::Figure:
        w.key("figure").value(e.figure).key("value").value(e.value);
        opt(w, "unit", e.unit);
        if (e.has_impact) w.key("impact_minutes").value(e.impact_minutes);
        break;
      case EvidenceItem::Kind::Check: w.key("check").value(e.check); break;
    }
    opt(w, "note", e.note);
    w.end_object();
  }
  w.end_array();
}

void strings_field(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  if (v.empty()) return;
  w.key(key).begin_array();
  for (const auto& x : v) w.value(x);
  w.end_array();
}

// A response's or a vote's body: its one required field, the remedy and factor, the change.
template <typename In>
std::string opinion_body(const In& in, const char* field, const std::string& said) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key(field).value(said);
  remedy_fields(w, in.remedy, in.has_factor, in.factor);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

}  // namespace

std::string request_body(const FileObjection& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  opt(w, "round", in.round);
  opt(w, "against", in.against);
  opt(w, "title", in.title);
  opt(w, "rule", in.rule);
  opt(w, "text", in.text);
  if (in.has_finding) w.key("finding").value(in.finding);
  strings_field(w, "results", in.results);
  strings_field(w, "drop_runs", in.drop_runs);
  evidence_field(w, in.evidence);
  opt(w, "override", in.override_reason);
  w.end_object();
  return w.str();
}

std::string request_body(const AddEvidence& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  evidence_field(w, in.evidence);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::string request_body(const Respond& in) { return opinion_body(in, "text", in.text); }

std::string request_body(const CastVote& in) { return opinion_body(in, "vote", in.vote); }

std::string request_body(const Decide& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  remedy_fields(w, in.remedy, in.has_factor, in.factor);
  opt(w, "tie_break", in.tie_break);
  opt(w, "fix_due", in.fix_due);
  if (in.waive) w.key("waive").value(true);
  if (in.amend) w.key("amend").value(true);
  opt(w, "reason", in.reason);
  opt(w, "text", in.text);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::string request_body(const Withdraw& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  opt(w, "text", in.text);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::string request_body(const Comment& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  w.key("text").value(in.text);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::string request_body(const Extend& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  opt(w, "organisation", in.organisation);
  opt(w, "deadline", in.deadline);
  opt(w, "until", in.until);
  opt(w, "reason", in.reason);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::string request_body(const SetVoteDeadline& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  opt(w, "until", in.until);
  opt(w, "reason", in.reason);
  change_fields(w, in);
  w.end_object();
  return w.str();
}

std::vector<Route> objection_routes() {
  return {
      {"POST", "/api/v1/objections", true, post_objection},
      {"GET", "/api/v1/objections", false, list_objections},
      {"GET", "/api/v1/objections/{id}", false, show_objection},
      {"POST", "/api/v1/objections/{id}/evidence", true, post_evidence},
      {"POST", "/api/v1/objections/{id}/responses", true, post_response},
      {"POST", "/api/v1/objections/{id}/comments", true, post_comment},
      {"POST", "/api/v1/objections/{id}/votes", true, post_vote},
      {"POST", "/api/v1/objections/{id}/decision", true, post_decision},
      {"POST", "/api/v1/objections/{id}/withdraw", true, post_withdraw},
      {"POST", "/api/v1/objections/{id}/extensions", true, post_extension},
      {"POST", "/api/v1/objections/{id}/vote-deadline", true, post_vote_deadline},
      {"GET", "/api/v1/log", false, read_log},
      {"GET", "/api/v1/log/verify", false, verify_log},
  };
}

}  // namespace referee::review
