// The routes of a round's review (docs/review.md, "Rounds, pairings and the
// report"): each decodes its request (path, body, If-Match) into the typed
// value of review/round_ops.h, calls the operation and encodes its result
// (the codec of review/round_codec.h, also defined here).
#include "mllog/json_writer.h"
#include "review/round_codec.h"
#include "review/round_ops.h"
#include "review/router.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;

Response list_rounds(Context& c) { return rounds_answer(visible_rounds(c.store, c.who)); }

Response get_round(Context& c) { return round_answer(show_round(c.store, c.who, c.params[0])); }

// The 403 of an actor whose role may not make the request, before its body is read.
bool refused(Context& c, Action action, Response* err) {
  Error e;
  if (role_may(c.who, action, &e)) return false;
  *err = error_response(e);
  return true;
}

Response put_schedule(Context& c) {
  Json body;
  Response err;
  if (refused(c, Action::SetSchedule, &err)) return err;
  if (!parse_body(c.req,
                  {"submission_deadline", "objections_due", "responses_due", "decisions_due", "scores_final",
                   "publication", "first_meeting", "version"},
                  &body, &err))
    return err;
  SetSchedule in;
  in.round = c.params[0];
  if (!read_expected(c.req, body, &in.version, &err)) return err;
  for (auto& [name, field] : schedule_fields()) {
    std::string text;
    if (!body_string(body, name, false, &text, &err)) return err;
    if (body.find(name)) in.dates[name] = text;  // null clears it, as ""
  }
  return round_answer(set_schedule(c.store, c.who, in));
}

Response post_state(Context& c) {
  Json body;
  Response err;
  ChangeRoundState in;
  in.round = c.params[0];
  if (refused(c, Action::ChangeRoundState, &err) ||
      !parse_body(c.req, {"state", "version", "reason", "override"}, &body, &err) ||
      !body_string(body, "state", true, &in.state, &err) || !body_string(body, "reason", false, &in.reason, &err) ||
      !body_string(body, "override", false, &in.override_reason, &err) || !read_expected(c.req, body, &in.version, &err))
    return err;
  return round_answer(change_round_state(c.store, c.who, in));
}

Response post_pairings(Context& c) {
  Json body;
  Response err;
  if (refused(c, Action::AssignPairings, &err) || !parse_body(c.req, {}, &body, &err)) return err;
  return assignment_answer(assign_pairings(c.store, c.who, AssignPairings{c.params[0]}));
}

Response get_pairings(Context& c) { return pairings_answer(round_pairings(c.store, c.who, c.params[0])); }

Response patch_pairing(Context& c) {
  Json body;
  Response err;
  UpdatePairing in;
  if (!parse_body(c.req, {"status", "version"}, &body, &err) || !body_string(body, "status", true, &in.status, &err) ||
      !read_expected(c.req, body, &in.version, &err))
    return err;
  if (!path_id(c.params[0], &in.pairing))
    return error_response(400, "bad-request", "pairing id '" + c.params[0] + "' is not a number");
  return pairing_answer(update_pairing(c.store, c.who, in));
}

Response post_announcement(Context& c) {
  Json body;
  Response err;
  AnnounceResubmission in;
  in.round = c.params[0];
  if (!parse_body(c.req, {"results", "text", "override"}, &body, &err) ||
      !body_strings(body, "results", true, &in.results, &err) || !body_string(body, "text", true, &in.text, &err) ||
      !body_string(body, "override", false, &in.override_reason, &err))
    return err;
  return announced_answer(announce_resubmission(c.store, c.who, in));
}

Response get_announcements(Context& c) {
  return announcements_answer(round_announcements(c.store, c.who, c.params[0]));
}

Response post_meeting(Context& c) {
  Json body;
  Response err;
  RecordMeeting in;
  in.round = c.params[0];
  if (!parse_body(c.req, {"held_at", "attendees", "objections", "notes"}, &body, &err) ||
      !body_string(body, "held_at", true, &in.held_at, &err) || !body_strings(body, "attendees", true, &in.attendees, &err) ||
      !body_string(body, "notes", false, &in.notes, &err))
    return err;
  if (const Json* os = body.find("objections")) {
    if (os->kind != Json::Kind::Array) return error_response(400, "bad-field", "objections: a list of objection numbers");
    for (const auto& x : os->items) {
      if (x.kind != Json::Kind::Int || x.i < 1) return error_response(400, "bad-field", "objections: a list of objection numbers");
      in.objections.push_back(x.i);
    }
  }
  return meeting_answer(record_meeting(c.store, c.who, in));
}

Response get_meetings(Context& c) { return meetings_answer(round_meetings(c.store, c.who, c.params[0])); }

Response get_minutes(Context& c) {
  char* end = nullptr;
  long long id = std::strtoll(c.params[1].c_str(), &end, 10);
  if (c.params[1].empty() || *end || id < 1) return error_response(404, "unknown-meeting", "no meeting '" + c.params[1] + "'");
  return report_answer(meeting_minutes(c.store, c.who, c.params[0], id, c.query("format", "md")));
}

Response get_report(Context& c) {
  return report_answer(round_report(c.store, c.who, c.params[0], c.query("format", "json")));
}

// ---------------------------------------------------------------- encoding

void round_json(JsonWriter& w, const RoundInfo& r) {
  w.begin_object().key("round").value(r.name).key("state").value(r.state).key("review").value(r.reviewed);
  w.key("schedule").begin_object();
  for (auto& [name, field] : schedule_fields()) {
    const std::string& v = r.schedule.*field;
    if (v.empty()) w.key(name).null(); else w.key(name).value(v);
  }
  w.end_object().key("version").value(r.version).end_object();
}

void pairing_json(JsonWriter& w, const Pairing& p) {
  w.begin_object().key("id").value(p.id).key("reviewer").value(p.reviewer).key("reviewed").value(p.reviewed);
  w.key("reason").value(p.reason).key("status").value(p.status).key("version").value(p.version).end_object();
}

void announcement_json(JsonWriter& w, const Announcement& a) {
  w.begin_object().key("id").value(a.id).key("organisation").value(a.organisation).key("result").value(a.result);
  w.key("text").value(a.text).key("by").value(a.user).key("at").value(a.at).key("resubmission").value(a.resubmission).end_object();
}

void opt(JsonWriter& w, const char* key, const std::string& v) {
  if (!v.empty()) w.key(key).value(v);
}

void version_field(JsonWriter& w, const Expected& v) {
  if (v.given) w.key("version").value(v.version);
}

// {"round": NAME, KEY: [rows, each written by `write`]}.
template <typename Row>
Response rows_answer(const Result<RoundRows<Row>>& r, const char* key, void (*write)(JsonWriter&, const Row&)) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("round").value(r.value().round).key(key).begin_array();
  for (const auto& x : r.value().rows) write(w, x);
  w.end_array().end_object();
  return json_response(w.str());
}

}  // namespace

std::string request_body(const SetSchedule& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  for (auto& [name, field] : schedule_fields())
    if (auto it = in.dates.find(name); it != in.dates.end()) w.key(name).value(it->second);
  version_field(w, in.version);
  w.end_object();
  return w.str();
}

std::string request_body(const ChangeRoundState& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("state").value(in.state);
  opt(w, "reason", in.reason);
  opt(w, "override", in.override_reason);
  version_field(w, in.version);
  w.end_object();
  return w.str();
}

std::string request_body(const UpdatePairing& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("status").value(in.status);
  version_field(w, in.version);
  w.end_object();
  return w.str();
}

std::string request_body(const AnnounceResubmission& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("results").begin_array();
  for (const auto& x : in.results) w.value(x);
  w.end_array().key("text").value(in.text);
  opt(w, "override", in.override_reason);
  w.end_object();
  return w.str();
}

Response round_answer(const Result<RoundInfo>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  round_json(w, r.value());
  return json_response(w.str());
}

Response rounds_answer(const Result<std::vector<RoundInfo>>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("rounds").begin_array();
  for (const auto& x : r.value()) round_json(w, x);
  w.end_array().end_object();
  return json_response(w.str());
}

Response assignment_answer(const Result<Assignment>& r) {
  if (!r.ok()) return error_response(r.error());
  const Assignment& a = r.value();
  JsonWriter out(0, mllog::JsonText::kUtf8);
  out.begin_object().key("round").value(a.round).key("ranking").begin_array();
  for (const auto& s : a.ranking)
    out.begin_object().key("organisation").value(s.organisation).key("results").value(s.results)
        .key("max_accelerators").value(s.max_accelerators).end_object();
  out.end_array().key("added").begin_array();
  for (const auto& x : a.added)
    out.begin_object().key("reviewer").value(x.reviewer).key("reviewed").value(x.reviewed).key("reason").value(x.reason).end_object();
  out.end_array().key("kept").value(a.kept);
  out.key("unpaired").begin_array();  // submitters the plan gives nobody to review
  for (const auto& u : a.unpaired) out.value(u);
  out.end_array().key("not_required").begin_array();
  for (const auto& x : a.not_required) pairing_json(out, x);
  out.end_array().key("pairings").begin_array();
  for (const auto& x : a.pairings) pairing_json(out, x);
  out.end_array().end_object();
  return json_response(out.str(), a.added.empty() ? 200 : 201);
}

Response pairing_answer(const Result<Pairing>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter out(0, mllog::JsonText::kUtf8);
  pairing_json(out, r.value());
  return json_response(out.str());
}

Response announced_answer(const Result<Announced>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter out(0, mllog::JsonText::kUtf8);
  out.begin_object().key("round").value(r.value().round).key("late").value(r.value().late).key("announcements").begin_array();
  for (const auto& a : r.value().announcements) announcement_json(out, a);
  out.end_array().end_object();
  return json_response(out.str(), 201);
}

void meeting_json(JsonWriter& w, const Meeting& m) {
  w.begin_object().key("id").value(m.id).key("held_at").value(m.held_at).key("attendees").begin_array();
  for (const auto& a : m.attendees) w.value(a);
  w.end_array().key("objections").begin_array();
  for (long long o : m.objections) w.value(o);
  w.end_array().key("notes").value(m.notes).key("recorded_by").value(m.recorded_by).key("created_at").value(m.created_at);
  w.end_object();
}

Response meeting_answer(const Result<Meeting>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter out(0, mllog::JsonText::kUtf8);
  meeting_json(out, r.value());
  return json_response(out.str(), 201);
}

Response meetings_answer(const Result<RoundRows<Meeting>>& r) { return rows_answer(r, "meetings", meeting_json); }

std::string request_body(const RecordMeeting& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("held_at").value(in.held_at).key("attendees").begin_array();
  for (const auto& a : in.attendees) w.value(a);
  w.end_array().key("objections").begin_array();
  for (long long o : in.objections) w.value(o);
  w.end_array();
  if (!in.notes.empty()) w.key("notes").value(in.notes);
  w.end_object();
  return w.str();
}

Response pairings_answer(const Result<RoundRows<Pairing>>& r) { return rows_answer(r, "pairings", pairing_json); }

Response announcements_answer(const Result<RoundRows<Announcement>>& r) {
  return rows_answer(r, "announcements", announcement_json);
}

Response report_answer(const Result<ReportText>& r) {
  if (!r.ok()) return error_response(r.error());
  Response out;
  out.body = r.value().text;
  if (r.value().markdown) out.content_type = "text/markdown; charset=utf-8";
  return out;
}

std::vector<Route> round_routes() {
  return {
      {"GET", "/api/v1/rounds", false, list_rounds},
      {"GET", "/api/v1/rounds/{round}", false, get_round},
      {"PUT", "/api/v1/rounds/{round}/schedule", true, put_schedule},
      {"POST", "/api/v1/rounds/{round}/state", true, post_state},
      {"POST", "/api/v1/rounds/{round}/pairings", true, post_pairings},
      {"GET", "/api/v1/rounds/{round}/pairings", false, get_pairings},
      {"PATCH", "/api/v1/pairings/{id}", true, patch_pairing},
      {"POST", "/api/v1/rounds/{round}/announcements", true, post_announcement},
      {"GET", "/api/v1/rounds/{round}/announcements", false, get_announcements},
      {"GET", "/api/v1/rounds/{round}/report", false, get_report},
      {"POST", "/api/v1/rounds/{round}/meetings", true, post_meeting},
      {"GET", "/api/v1/rounds/{round}/meetings", false, get_meetings},
      {"GET", "/api/v1/rounds/{round}/meetings/{id}/minutes", false, get_minutes},
  };
}

}  // namespace referee::review
