// Rounds, pairings, announcements and the report (review/rounds.h).
#include "review/rounds.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "base/text.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/report.h"
#include "review/router.h"
#include "submissions/queries.h"

namespace referee::review {

using submissions::Stmt;
using submissions::Store;

// ------------------------------------------------------------ dates

namespace {

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  long long era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

void civil_from_days(long long z, int* y, unsigned* m, unsigned* d) {
  z += 719468;
  long long era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long yy = static_cast<long long>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(yy + (*m <= 2));
}

bool digits(const std::string& s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string format_instant(long long days, int hh, int mm, int ss) {
  int y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y, m, d, hh, mm, ss);
  return buf;
}

// Splits a normalised instant into days since the epoch and the time of day.
void split_instant(const std::string& norm, long long* days, int* hh, int* mm, int* ss) {
  int y = 0, mo = 0, d = 0;
  digits(norm, 0, 4, &y);
  digits(norm, 5, 2, &mo);
  digits(norm, 8, 2, &d);
  digits(norm, 11, 2, hh);
  digits(norm, 14, 2, mm);
  digits(norm, 17, 2, ss);
  *days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
}

}  // namespace

std::vector<std::pair<const char*, std::string Schedule::*>> schedule_fields() {
  return {{"submission_deadline", &Schedule::submission_deadline}, {"objections_due", &Schedule::objections_due},
          {"responses_due", &Schedule::responses_due},             {"decisions_due", &Schedule::decisions_due},
          {"scores_final", &Schedule::scores_final},               {"publication", &Schedule::publication},
          {"first_meeting", &Schedule::first_meeting}};
}

bool parse_instant(const std::string& text, std::string* out, std::string* error) {
  auto bad = [&](const std::string& why) {
    *error = "'" + text + "' is not a date (" + why +
             "); expected an ISO-8601 date or date-time in UTC: 2026-05-02, 2026-05-02T17:00 or 2026-05-02T17:00:00Z";
    return false;
  };
  int y, mo, d;
  if (text.size() < 10 || !digits(text, 0, 4, &y) || text[4] != '-' || !digits(text, 5, 2, &mo) || text[7] != '-' ||
      !digits(text, 8, 2, &d))
    return bad("the date must be YYYY-MM-DD");
  if (mo < 1 || mo > 12) return bad("month " + std::to_string(mo));
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d < 1 || d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap)) return bad("no day " + std::to_string(d) + " in that month");
  long long days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  if (text.size() == 10) {
    *out = format_instant(days, 23, 59, 59);
    return true;
  }
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return bad("a time follows the date after a T");
  int hh, mm, ss = 0;
  if (!digits(text, 11, 2, &hh) || text.size() < 16 || text[13] != ':' || !digits(text, 14, 2, &mm))
    return bad("the time must be HH:MM or HH:MM:SS");
  size_t at = 16;
  if (at < text.size() && text[at] == ':') {
    if (!digits(text, 17, 2, &ss)) return bad("the time must be HH:MM or HH:MM:SS");
    at = 19;
    if (at < text.size() && text[at] == '.') {  // fractions of a second are dropped
      ++at;
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    }
  }
  if (hh > 23 || mm > 59 || ss > 59) return bad("no such time of day");
  std::string zone = text.substr(at);
  if (!zone.empty() && zone != "Z" && zone != "z" && zone != "+00:00" && zone != "+0000")
    return bad("times are in UTC: end with Z or nothing");
  *out = format_instant(days, hh, mm, ss);
  return true;
}

bool schedule_in_order(const Schedule& s, std::string* error) {
  auto fields = schedule_fields();
  const char* prev_name = nullptr;
  std::string prev;
  for (size_t i = 0; i + 1 < fields.size(); ++i) {  // first_meeting is outside the chain
    const std::string& v = s.*(fields[i].second);
    if (v.empty()) continue;
    if (!prev.empty() && v < prev) {
      *error = std::string(fields[i].first) + " (" + v + ") is before " + prev_name + " (" + prev +
               "); the schedule runs submission_deadline <= objections_due <= responses_due <= decisions_due <= "
               "scores_final <= publication";
      return false;
    }
    prev = v;
    prev_name = fields[i].first;
  }
  if (!s.first_meeting.empty() && !s.submission_deadline.empty() && s.first_meeting < s.submission_deadline) {
    *error = "first_meeting (" + s.first_meeting + ") is before submission_deadline (" + s.submission_deadline + ")";
    return false;
  }
  return true;
}

bool default_schedule(const std::string& deadline, Schedule* out, std::string* error) {
  std::string d;
  if (!parse_instant(deadline, &d, error)) return false;
  *out = Schedule{};
  out->submission_deadline = d;
  long long days = 0;
  int hh = 0, mm = 0, ss = 0;
  split_instant(d, &days, &hh, &mm, &ss);
  out->objections_due = format_instant(days + 7, hh, mm, ss);
  // The Monday of review week 2 (days + 8 .. days + 14): 1970-01-01 was a Thursday.
  long long monday = days + 8;
  while (((monday % 7) + 7 + 3) % 7 != 0) ++monday;  // (days + 3) % 7 == 0 on a Monday
  out->responses_due = format_instant(monday, 23, 59, 59);
  out->decisions_due = format_instant(days + 14, hh, mm, ss);
  out->scores_final = format_instant(days + 21, hh, mm, ss);
  out->publication = format_instant(days + 28, hh, mm, ss);
  return true;
}

// ------------------------------------------------------------ pairings

namespace {

// The partners of a joint submission's folder name (Azure+NVIDIA -> azure, nvidia).
std::set<std::string> partners(const std::string& org) {
  std::set<std::string> out;
  for (const auto& p : base::split(org, '+'))
    if (!p.empty()) out.insert(base::lower(p));
  return out;
}

}  // namespace

bool same_party(const std::string& a, const std::string& b) {
  auto pa = partners(a), pb = partners(b);
  for (const auto& x : pa)
    if (pb.count(x)) return true;
  return false;
}

std::vector<PairingPlan> plan_pairings(std::vector<SubmitterCount> subs) {
  std::sort(subs.begin(), subs.end(), [](const SubmitterCount& a, const SubmitterCount& b) {
    if (a.results != b.results) return a.results > b.results;
    return a.organisation < b.organisation;
  });
  std::vector<PairingPlan> out;
  std::set<std::pair<std::string, std::string>> have;
  auto add = [&](const std::string& a, const std::string& b, const char* reason) {
    if (a == b || same_party(a, b) || !have.insert({a, b}).second) return;
    out.push_back({a, b, reason});
  };
  size_t n = subs.size();
  for (size_t i = 0; i + 1 < n; i += 2) {
    bool three = n % 2 == 1 && i + 3 == n;  // the odd one out joins the last pair
    size_t end = three ? i + 3 : i + 2;
    // A joint submission is not paired with one of its partners: the next
    // submitter down the ranking that shares no partner with the group moves up.
    for (size_t k = i + 1; k < end; ++k) {
      auto clashes = [&](size_t j) {
        for (size_t g = i; g < k; ++g)
          if (same_party(subs[g].organisation, subs[j].organisation)) return true;
        return false;
      };
      if (!clashes(k)) continue;
      for (size_t j = k + 1; j < n; ++j)
        if (!clashes(j)) {
          std::rotate(subs.begin() + static_cast<long>(k), subs.begin() + static_cast<long>(j),
                      subs.begin() + static_cast<long>(j) + 1);
          break;
        }
    }
    for (size_t a = i; a < end; ++a)
      for (size_t b = i; b < end; ++b) add(subs[a].organisation, subs[b].organisation, "rank");
    if (three) break;
  }
  std::vector<std::string> big;
  for (const auto& s : subs)
    if (s.max_accelerators >= 512) big.push_back(s.organisation);
  for (const auto& a : big)
    for (const auto& b : big) add(a, b, "scale-512");
  return out;
}

bool announced(Store& s, long long result_id) {
  Stmt q(s.db(), "SELECT 1 FROM announcements WHERE result_id = ?1 LIMIT 1");
  q.bind(1, result_id);
  return q.step();
}

// ------------------------------------------------------------ routes

namespace {

// {round} of a request, the embargo first (policy's find_round): false with the 404.
bool round_of(Context& c, const std::string& text, RoundInfo* out, Response* err) {
  Error e;
  if (find_round(c.store, c.who, text, out, &e)) return true;
  *err = error_response(e);
  return false;
}

// 403 unless authorize() lets the actor do `action` (with `standing`) in `round_state`.
bool allowed(Context& c, Action action, const std::string& message, Response* err, const Standing& standing = {},
             const std::string& round_state = "review",
             const std::string& hint = "ask a review chair or an administrator") {
  if (authorize(c.who, action, standing, round_state) != Access::Forbidden) return true;
  *err = error_response(forbidden(message, hint));
  return false;
}

// The response of a write: the error, or `body` (made after the commit).
template <typename F>
Response after_write(const Result<long long>& r, F&& body) {
  return r.ok() ? body() : error_response(r.error());
}

void round_json(mllog::JsonWriter& w, const RoundInfo& r) {
  w.begin_object().key("round").value(r.name).key("state").value(r.state).key("review").value(r.reviewed);
  w.key("schedule").begin_object();
  for (auto& [name, field] : schedule_fields()) {
    const std::string& v = r.schedule.*field;
    if (v.empty()) w.key(name).null(); else w.key(name).value(v);
  }
  w.end_object().key("version").value(r.version).end_object();
}

// ---- GET /rounds, GET /rounds/{round}

Response list_rounds(Context& c) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("rounds").begin_array();
  for (const auto& name : submissions::rounds(c.store)) {
    RoundInfo r;
    Error e;
    if (find_round(c.store, c.who, name, &r, &e)) round_json(w, r);
    else if (e.status != 404) return error_response(e);  // 404: embargoed
  }
  w.end_array().end_object();
  return json_response(w.str());
}

Response show_round(Context& c) {
  RoundInfo r;
  Response err;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  round_json(w, r);
  return json_response(w.str());
}

// The answer of a write to a round's review record: the record as it is now.
Response round_now(Context& c, const std::string& name) {
  RoundInfo after;
  Response err;
  if (!round_of(c, name, &after, &err)) return err;
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  round_json(w, after);
  return json_response(w.str());
}

// ---- PUT /rounds/{round}/schedule

Response put_schedule(Context& c) {
  Response err;
  if (!allowed(c, Action::SetSchedule, "only a review chair or an administrator sets a round's schedule", &err)) return err;
  mllog::Json body;
  if (!parse_body(c.req,
                  {"submission_deadline", "objections_due", "responses_due", "decisions_due", "scores_final",
                   "publication", "first_meeting", "version"},
                  &body, &err))
    return err;
  RoundInfo r;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  Expected expected;
  if (!read_expected(c.req, body, &expected, &err)) return err;
  Schedule next = r.schedule;
  std::vector<std::string> changed;
  for (auto& [name, field] : schedule_fields()) {
    std::string text;
    if (!body_string(body, name, false, &text, &err)) return err;
    if (!body.find(name)) continue;
    std::string norm, error;
    if (!text.empty() && !parse_instant(text, &norm, &error))
      return error_response(400, "bad-date", std::string(name) + ": " + error);
    if (next.*field != norm) changed.push_back(name);
    next.*field = norm;
  }
  std::string error;
  if (!schedule_in_order(next, &error)) return error_response(400, "schedule-order", error);
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    RoundInfo cur;
    Error e;
    if (!find_round(c.store, c.who, r.name, &cur, &e)) return e;  // read again inside the transaction
    // A round without a review record counts as published but gets one here.
    if (cur.reviewed && cur.state == "published")
      return make_error(422, "published", cur.name + " is published; its schedule no longer changes");
    if (!check_version(expected, cur.version, "the review record of " + cur.name, "referee round show " + cur.name, &e))
      return e;
    Stmt up(c.store.db(),
            cur.reviewed
                ? "UPDATE round_reviews SET submission_deadline = ?2, objections_due = ?3, responses_due = ?4, "
                  "decisions_due = ?5, scores_final = ?6, publication = ?7, first_meeting = ?8, version = version + 1 "
                  "WHERE round_id = ?1"
                : "INSERT INTO round_reviews (round_id, state, submission_deadline, objections_due, responses_due, "
                  "decisions_due, scores_final, publication, first_meeting) VALUES (?1, 'review', ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    up.bind(1, cur.id);
    int i = 2;
    for (auto& [name, field] : schedule_fields()) {
      if ((next.*field).empty()) up.bind_null(i++); else up.bind(i++, next.*field);
    }
    if (!up.run()) return store_error(c.store, up.rc(), "writing the schedule");
    RoundInfo after;
    if (!find_round(c.store, c.who, r.name, &after, &e)) return e;
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(after.name).key("created").value(!cur.reviewed).key("changed").begin_array();
    for (const auto& f : changed) p.value(f);
    p.end_array().key("schedule").begin_object();
    for (auto& [name, field] : schedule_fields())
      if (!(after.schedule.*field).empty()) p.key(name).value(after.schedule.*field);
    p.end_object().key("version").value(after.version).end_object();
    *event = Change{"round.schedule", "round/" + after.name, p.str()};
    return after.id;
  });
  return after_write(w, [&] { return round_now(c, r.name); });
}

// ---- POST /rounds/{round}/state

Response post_state(Context& c) {
  Response err;
  if (!allowed(c, Action::ChangeRoundState, "only a review chair or an administrator changes a round's state", &err))
    return err;
  mllog::Json body;
  if (!parse_body(c.req, {"state", "version", "reason", "override"}, &body, &err)) return err;
  std::string state, reason, override_reason;
  if (!body_string(body, "state", true, &state, &err) || !body_string(body, "reason", false, &reason, &err) ||
      !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (!override_reason.empty() &&
      !allowed(c, Action::OverrideDeadline, "only a review chair may override open objections", &err, {}, "review",
               "leave out --override (API field `override`)"))
    return err;
  state = base::lower(state);
  if (state != "review" && state != "final" && state != "published")
    return error_response(400, "bad-field", "state '" + state + "' is none of review, final, published");
  Expected expected;
  if (!read_expected(c.req, body, &expected, &err)) return err;
  RoundInfo r;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    RoundInfo cur;
    Error e;
    if (!find_round(c.store, c.who, r.name, &cur, &e)) return e;
    if (!cur.reviewed)
      return make_error(422, "no-review", cur.name + " has no review record: it counts as published",
                        "set its schedule first: referee round schedule " + cur.name + " ...");
    if (!check_version(expected, cur.version, "the review record of " + cur.name, "referee round show " + cur.name, &e))
      return e;
    const std::string& from = cur.state;
    bool ok = (from == "review" && state == "final") || (from == "final" && state == "published") ||
              (from == "final" && state == "review");
    if (!ok)
      return make_error(422, "bad-transition", "a round goes review -> final -> published (or back final -> review); " +
                                                   cur.name + " is in state " + from + " and cannot go to " + state);
    if (from == "final" && state == "review" && reason.empty())
      return make_error(400, "missing-field", "going back from final to review needs a reason",
                        "send \"reason\": \"...\" (--reason)");
    // Final and published close the review: every objection decided or withdrawn first.
    std::string still_open;
    if (state == "final" || state == "published") {
      Stmt q(c.store.db(), "SELECT id, state FROM objections WHERE round_id = ?1 AND state IN ('open', 'responded') ORDER BY id");
      q.bind(1, cur.id);
      while (q.step())
        still_open += std::string(still_open.empty() ? "" : ", ") + "#" + std::to_string(q.col_int(0)) + " (" +
                      q.col_text(1) + ")";
      if (!q.ok()) return store_error(c.store, q.rc(), "reading the round's objections");
      if (!still_open.empty() && override_reason.empty())
        return make_error(422, "objections-open",
                          cur.name + " cannot go to " + state + ": objections not decided or withdrawn: " + still_open,
                          "decide or withdraw them first; a review chair may override with a reason "
                          "(--override REASON, API field `override`)");
    }
    Stmt up(c.store.db(), "UPDATE round_reviews SET state = ?2, version = version + 1 WHERE round_id = ?1");
    up.bind(1, cur.id).bind(2, state);
    if (!up.run()) return store_error(c.store, up.rc(), "changing the round's state");
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(cur.name).key("from").value(from).key("to").value(state);
    if (!reason.empty()) p.key("reason").value(reason);
    if (!still_open.empty()) p.key("override").value(override_reason).key("open_objections").value(still_open);
    p.key("version").value(cur.version + 1).end_object();
    *event = Change{"round.state", "round/" + cur.name, p.str()};
    return cur.id;
  });
  return after_write(w, [&] { return round_now(c, r.name); });
}

// ---- pairings

struct PairingRow {
  long long id = 0;
  std::string reviewer, reviewed, reason, status;
  long long version = 0;
};

std::vector<PairingRow> read_pairings(Store& s, long long round_id, std::string* error) {
  std::vector<PairingRow> out;
  Stmt q(s.db(),
         "SELECT p.id, a.name, b.name, p.reason, p.status, p.version FROM pairings p JOIN organisations a ON "
         "a.id = p.reviewer_org JOIN organisations b ON b.id = p.reviewed_org WHERE p.round_id = ?1 ORDER BY p.id");
  q.bind(1, round_id);
  while (q.step()) out.push_back({q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_int(5)});
  if (!q.ok()) *error = s.describe_error(q.rc(), "reading pairings");
  return out;
}

void pairing_json(mllog::JsonWriter& w, const PairingRow& p) {
  w.begin_object().key("id").value(p.id).key("reviewer").value(p.reviewer).key("reviewed").value(p.reviewed);
  w.key("reason").value(p.reason).key("status").value(p.status).key("version").value(p.version).end_object();
}

Response assign_pairings(Context& c) {
  Response err;
  if (!allowed(c, Action::AssignPairings, "only a review chair or an administrator assigns the required reviews", &err))
    return err;
  mllog::Json body;
  if (!parse_body(c.req, {}, &body, &err)) return err;
  RoundInfo r;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  std::vector<SubmitterCount> subs;
  std::vector<PairingPlan> plan, added;
  std::vector<PairingRow> before, after;
  std::set<std::pair<std::string, std::string>> planned;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    if (r.state == "published") return make_error(422, "published", r.name + " is published; its reviews are over");
    Stmt q(c.store.db(),
           "SELECT o.name, COUNT(x.id), COALESCE(MAX(s.accelerators_count), 0) FROM packages p "
           "JOIN organisations o ON o.id = p.organisation_id LEFT JOIN systems s ON s.package_id = p.id "
           "LEFT JOIN results x ON x.system_id = s.id WHERE p.round_id = ?1 GROUP BY o.name");
    q.bind(1, r.id);
    while (q.step()) subs.push_back({q.col_text(0), q.col_int(1), q.col_int(2)});
    if (!q.ok()) return store_error(c.store, q.rc(), "counting results");
    plan = plan_pairings(subs);
    std::string error;
    before = read_pairings(c.store, r.id, &error);
    if (!error.empty()) return make_error(500, "store", error);
    for (const auto& p : plan) {
      planned.insert({p.reviewer, p.reviewed});
      Stmt ins(c.store.db(),
               "INSERT OR IGNORE INTO pairings (round_id, reviewer_org, reviewed_org, reason) VALUES (?1, "
               "(SELECT id FROM organisations WHERE name = ?2), (SELECT id FROM organisations WHERE name = ?3), ?4)");
      ins.bind(1, r.id).bind(2, p.reviewer).bind(3, p.reviewed).bind(4, p.reason);
      if (!ins.run()) return store_error(c.store, ins.rc(), "writing pairings");
      if (sqlite3_changes(c.store.db()) > 0) added.push_back(p);
    }
    after = read_pairings(c.store, r.id, &error);
    if (!error.empty()) return make_error(500, "store", error);
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(r.name).key("added").begin_array();
    for (const auto& a : added) p.begin_object().key("reviewer").value(a.reviewer).key("reviewed").value(a.reviewed).key("reason").value(a.reason).end_object();
    p.end_array().key("kept").value(static_cast<long long>(before.size())).end_object();
    *event = Change{"pairings.assign", "round/" + r.name, p.str(), !added.empty()};  // nothing added: no event
    return r.id;
  });
  return after_write(w, [&] {
    mllog::JsonWriter out(0, mllog::JsonText::kUtf8);
    out.begin_object().key("round").value(r.name).key("ranking").begin_array();
    std::sort(subs.begin(), subs.end(), [](const SubmitterCount& a, const SubmitterCount& b) {
      return a.results != b.results ? a.results > b.results : a.organisation < b.organisation;
    });
    for (const auto& s : subs)
      out.begin_object().key("organisation").value(s.organisation).key("results").value(s.results)
          .key("max_accelerators").value(s.max_accelerators).end_object();
    out.end_array().key("added").begin_array();
    for (const auto& a : added)
      out.begin_object().key("reviewer").value(a.reviewer).key("reviewed").value(a.reviewed).key("reason").value(a.reason).end_object();
    out.end_array().key("kept").value(static_cast<long long>(before.size()));
    out.key("unpaired").begin_array();  // submitters the plan gives nobody to review
    for (const auto& s : subs) {
      bool reviews = false;
      for (const auto& p : plan) reviews = reviews || p.reviewer == s.organisation;
      if (!reviews) out.value(s.organisation);
    }
    out.end_array().key("not_required").begin_array();
    for (const auto& x : after)
      if (!planned.count({x.reviewer, x.reviewed})) pairing_json(out, x);
    out.end_array().key("pairings").begin_array();
    for (const auto& x : after) pairing_json(out, x);
    out.end_array().end_object();
    return json_response(out.str(), added.empty() ? 200 : 201);
  });
}

// GET /rounds/{round}/KEY: {"round": NAME, KEY: [rows read by `read`, each written by `write`]}.
template <typename Read, typename Write>
Response round_rows(Context& c, const char* key, Read read, Write write) {
  RoundInfo r;
  Response err;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  std::string error;
  auto rows = read(c.store, r.id, &error);
  if (!error.empty()) return error_response(500, "store", error);
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("round").value(r.name).key(key).begin_array();
  for (const auto& x : rows) write(w, x);
  w.end_array().end_object();
  return json_response(w.str());
}

Response get_pairings(Context& c) { return round_rows(c, "pairings", read_pairings, pairing_json); }

int status_rank(const std::string& s) { return s == "assigned" ? 0 : s == "in-progress" ? 1 : s == "done" ? 2 : -1; }

Response patch_pairing(Context& c) {
  mllog::Json body;
  Response err;
  if (!parse_body(c.req, {"status", "version"}, &body, &err)) return err;
  std::string status;
  if (!body_string(body, "status", true, &status, &err)) return err;
  status = base::lower(status);
  if (status_rank(status) < 0) return error_response(400, "bad-field", "status '" + status + "' is none of assigned, in-progress, done");
  Expected expected;
  if (!read_expected(c.req, body, &expected, &err)) return err;
  long long id = 0;
  if (!path_id(c.params[0], &id)) return error_response(400, "bad-request", "pairing id '" + c.params[0] + "' is not a number");
  PairingRow done;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    // A pairing of a round the actor may not see is not known: the embargo before anything else of it is read.
    Error unknown = make_error(404, "not-found", "no pairing " + std::to_string(id));
    Stmt q(c.store.db(), "SELECT round_id FROM pairings WHERE id = ?1");
    q.bind(1, id);
    if (!q.step()) return q.ok() ? unknown : store_error(c.store, q.rc(), "reading a pairing");
    RoundInfo r;
    Error e;
    if (!find_round_by_id(c.store, c.who, q.col_int(0), unknown, &r, &e)) return e;
    Stmt p(c.store.db(),
           "SELECT a.name, b.name, p.status, p.version FROM pairings p JOIN organisations a ON a.id = p.reviewer_org "
           "JOIN organisations b ON b.id = p.reviewed_org WHERE p.id = ?1");
    p.bind(1, id);
    if (!p.step()) return p.ok() ? unknown : store_error(c.store, p.rc(), "reading a pairing");
    std::string reviewer = p.col_text(0), reviewed = p.col_text(1), from = p.col_text(2);
    long long cur = p.col_int(3);
    Standing standing;
    standing.reviewer = base::lower(c.who.organisation) == base::lower(reviewer);
    Access access = authorize(c.who, Action::SetPairingStatus, standing, r.state);
    if (access == Access::Forbidden)
      return forbidden("only a member of " + reviewer + " (the reviewer) or a chair changes this pairing's status",
                       "ask a member of " + reviewer + " or a review chair");
    if (access == Access::Closed) return make_error(422, "published", r.name + " is published; its reviews are over");
    if (!check_version(expected, cur, "pairing " + std::to_string(id), "referee review pairings --round " + r.name, &e))
      return e;
    bool member_of_reviewer = c.who.role == Role::Member && standing.reviewer;
    if (member_of_reviewer && status_rank(status) < status_rank(from))
      return make_error(422, "bad-transition", "a pairing goes assigned -> in-progress -> done; only a chair moves it back",
                        "it is " + from);
    Stmt up(c.store.db(), "UPDATE pairings SET status = ?2, version = version + 1 WHERE id = ?1");
    up.bind(1, id).bind(2, status);
    if (!up.run()) return store_error(c.store, up.rc(), "changing a pairing");
    mllog::JsonWriter pl(0, mllog::JsonText::kUtf8);
    pl.begin_object().key("round").value(r.name).key("reviewer").value(reviewer).key("reviewed").value(reviewed);
    pl.key("from").value(from).key("to").value(status).key("version").value(cur + 1).end_object();
    *event = Change{"pairing.status", "pairing/" + std::to_string(id), pl.str()};
    done = {id, reviewer, reviewed, "", status, cur + 1};
    return id;
  });
  return after_write(w, [&] {
    mllog::JsonWriter out(0, mllog::JsonText::kUtf8);
    pairing_json(out, done);
    return json_response(out.str());
  });
}

// ---- announcements

struct AnnouncementRow {
  long long id = 0;
  std::string organisation, result, text, user, at;
  bool resubmission = false;
};

std::vector<AnnouncementRow> read_announcements(Store& s, long long round_id, std::string* error) {
  std::vector<AnnouncementRow> out;
  Stmt q(s.db(),
         "SELECT a.id, o.name, COALESCE(o2.name || '/' || sy.name || '/' || x.benchmark, ''), a.text, u.name, a.created_at, "
         "COALESCE(x.resubmission, 0) FROM announcements a JOIN organisations o ON o.id = a.organisation_id "
         "JOIN users u ON u.id = a.user_id LEFT JOIN results x ON x.id = a.result_id LEFT JOIN systems sy ON sy.id = x.system_id "
         "LEFT JOIN packages p ON p.id = sy.package_id LEFT JOIN organisations o2 ON o2.id = p.organisation_id "
         "WHERE a.round_id = ?1 ORDER BY a.id");
  q.bind(1, round_id);
  while (q.step())
    out.push_back({q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_text(5), q.col_int(6) != 0});
  if (!q.ok()) *error = s.describe_error(q.rc(), "reading announcements");
  return out;
}

void announcement_json(mllog::JsonWriter& w, const AnnouncementRow& a) {
  w.begin_object().key("id").value(a.id).key("organisation").value(a.organisation).key("result").value(a.result);
  w.key("text").value(a.text).key("by").value(a.user).key("at").value(a.at).key("resubmission").value(a.resubmission).end_object();
}

Response post_announcement(Context& c) {
  mllog::Json body;
  Response err;
  if (!parse_body(c.req, {"results", "text", "override"}, &body, &err)) return err;
  std::vector<std::string> results;
  std::string text, override_reason;
  if (!body_strings(body, "results", true, &results, &err) || !body_string(body, "text", true, &text, &err) ||
      !body_string(body, "override", false, &override_reason, &err))
    return err;
  if (results.empty())
    return error_response(400, "bad-field", "no result named (--result ORG/SYSTEM/BENCHMARK, API field `results`)");
  if (text.empty()) return error_response(400, "bad-field", "field 'text' is empty", "say which earlier logs are resubmitted");
  if (!override_reason.empty() &&
      !allowed(c, Action::OverrideDeadline, "only a review chair overrides a deadline", &err, {}, "review", ""))
    return err;
  RoundInfo r;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  std::vector<long long> ids;
  bool late = false;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    if (r.state == "published") return make_error(422, "published", r.name + " is published; nothing changes any more");
    std::string now = now_utc();
    late = !r.schedule.first_meeting.empty() && now.substr(0, 19) + "Z" > r.schedule.first_meeting;
    if (late && override_reason.empty())
      return make_error(422, "late", "resubmitted logs must be announced before the first review meeting (" +
                                         r.schedule.first_meeting + ")",
                        "a review chair may accept it late with a reason (--override REASON, API field `override`)");
    std::string error;
    long long uid = 0;
    if (!actor_user_id(c.store, c.who, &uid, &error)) return make_error(500, "store", error);
    for (const auto& name : results) {
      long long rid = 0, org_id = 0;
      std::string org;
      Error e;
      if (!find_result(c.store, r.id, name, &rid, &org_id, &e, &org)) return e;
      Standing standing;
      standing.owns_result = base::lower(org) == base::lower(c.who.organisation);
      if (authorize(c.who, Action::Announce, standing, r.state) == Access::Forbidden)
        return c.who.role == Role::Member
                   ? forbidden("a member announces only their own organisation's results; " + name + " is " + org + "'s",
                               "ask a member of " + org + " or a review chair")
                   : forbidden("announcements are made by a member of the result's organisation (or a chair)",
                               "ask a member of the result's organisation or a review chair");
      Stmt ins(c.store.db(),
               "INSERT INTO announcements (round_id, organisation_id, result_id, text, user_id, created_at) VALUES "
               "(?1, ?2, ?3, ?4, ?5, ?6)");
      ins.bind(1, r.id).bind(2, org_id).bind(3, rid).bind(4, text).bind(5, uid).bind(6, now);
      if (!ins.run()) return store_error(c.store, ins.rc(), "writing an announcement");
      ids.push_back(sqlite3_last_insert_rowid(c.store.db()));
    }
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(r.name).key("announcements").begin_array();
    for (auto id : ids) p.value(id);
    p.end_array().key("results").begin_array();
    for (const auto& n : results) p.value(n);
    p.end_array().key("late").value(late);
    if (!override_reason.empty()) p.key("override").value(override_reason);
    p.end_object();
    *event = Change{"announcement.add", "round/" + r.name, p.str()};
    return r.id;
  });
  return after_write(w, [&] {
    std::string error;
    auto all = read_announcements(c.store, r.id, &error);
    mllog::JsonWriter out(0, mllog::JsonText::kUtf8);
    out.begin_object().key("round").value(r.name).key("late").value(late).key("announcements").begin_array();
    for (const auto& a : all)
      if (std::find(ids.begin(), ids.end(), a.id) != ids.end()) announcement_json(out, a);
    out.end_array().end_object();
    return json_response(out.str(), 201);
  });
}

Response get_announcements(Context& c) {
  return round_rows(c, "announcements", read_announcements, announcement_json);
}

// ---- report

Response get_report(Context& c) {
  RoundInfo r;
  Response err;
  if (!round_of(c, c.params[0], &r, &err)) return err;
  std::string format = base::lower(c.query("format", "json"));
  if (format != "json" && format != "md" && format != "github")
    return error_response(400, "bad-format", "format '" + format + "' is none of json, md, github");
  ReportRound rr;
  rr.name = r.name;
  rr.state = r.state;
  rr.has_review = r.reviewed;
  rr.version = r.version;
  for (auto& [name, field] : schedule_fields()) rr.schedule.emplace_back(name, r.schedule.*field);
  std::string error;
  for (const auto& p : read_pairings(c.store, r.id, &error))
    rr.pairings.push_back({p.id, p.reviewer, p.reviewed, p.reason, p.status});
  for (const auto& a : read_announcements(c.store, r.id, &error))
    rr.announcements.push_back({a.id, a.organisation, a.result, a.text, a.user, a.at});
  if (!error.empty()) return error_response(500, "store", error);
  if (!load_report(c.store, r.id, &rr, &error)) return error_response(500, "store", error);
  Response out;
  if (format == "json") {
    out.body = report_json(rr);
  } else {
    out.body = format == "md" ? report_markdown(rr) : report_github(rr);
    out.content_type = "text/markdown; charset=utf-8";
  }
  return out;
}

}  // namespace

std::vector<Route> round_routes() {
  return {
      {"GET", "/api/v1/rounds", false, list_rounds},
      {"GET", "/api/v1/rounds/{round}", false, show_round},
      {"PUT", "/api/v1/rounds/{round}/schedule", true, put_schedule},
      {"POST", "/api/v1/rounds/{round}/state", true, post_state},
      {"POST", "/api/v1/rounds/{round}/pairings", true, assign_pairings},
      {"GET", "/api/v1/rounds/{round}/pairings", false, get_pairings},
      {"PATCH", "/api/v1/pairings/{id}", true, patch_pairing},
      {"POST", "/api/v1/rounds/{round}/announcements", true, post_announcement},
      {"GET", "/api/v1/rounds/{round}/announcements", false, get_announcements},
      {"GET", "/api/v1/rounds/{round}/report", false, get_report},
  };
}

}  // namespace referee::review
