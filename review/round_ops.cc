// A round's review as typed operations (review/round_ops.h).
#include "review/round_ops.h"

#include <algorithm>
#include <set>

#include "base/invisible.h"
#include "base/text.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/report.h"
#include "review/verify.h"
#include "submissions/queries.h"

namespace referee::review {

using submissions::Stmt;
using submissions::Store;

namespace {

// 403 unless authorize() lets the actor do `action` (with `standing`) in `round_state`.
bool allowed(const Actor& who, Action action, const std::string& message, Error* err, const Standing& standing = {},
             const std::string& round_state = "review",
             const std::string& hint = "ask a review chair or an administrator") {
  if (authorize(who, action, standing, round_state) != Access::Forbidden) return true;
  *err = forbidden(message, hint);
  return false;
}

// The round's review record as it is after a write (read again, the embargo first).
Result<RoundInfo> round_now(Store& s, const Actor& who, const Result<long long>& written, const std::string& name) {
  if (!written.ok()) return written.error();
  return show_round(s, who, name);
}

std::vector<Pairing> read_pairings(Store& s, long long round_id, std::string* error) {
  std::vector<Pairing> out;
  Stmt q(s.db(),
         "SELECT p.id, a.name, b.name, p.reason, p.status, p.version FROM pairings p JOIN organisations a ON "
         "a.id = p.reviewer_org JOIN organisations b ON b.id = p.reviewed_org WHERE p.round_id = ?1 ORDER BY p.id");
  q.bind(1, round_id);
  while (q.step()) out.push_back({q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_int(5)});
  if (!q.ok()) *error = s.describe_error(q.rc(), "reading pairings");
  return out;
}

std::vector<Announcement> read_announcements(Store& s, long long round_id, std::string* error) {
  std::vector<Announcement> out;
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

int status_rank(const std::string& s) { return s == "assigned" ? 0 : s == "in-progress" ? 1 : s == "done" ? 2 : -1; }

std::vector<Meeting> read_meetings(Store& s, long long round_id, std::string* error) {
  std::vector<Meeting> out;
  if (s.opened_version() < 13) return out;  // a store opened read-only before schema 13 has none
  Stmt q(s.db(),
         "SELECT m.id, m.held_at, m.attendees_json, m.objections_json, m.notes, COALESCE(u.name, 'local-admin'), m.created_at "
         "FROM meetings m LEFT JOIN users u ON u.id = m.user_id WHERE m.round_id = ?1 ORDER BY m.held_at, m.id");
  q.bind(1, round_id);
  while (q.step()) {
    Meeting m;
    m.id = q.col_int(0);
    m.held_at = q.col_text(1);
    mllog::Json j;
    std::string perr;
    if (mllog::parse_json_permissive(q.col_text(2), &j, &perr))
      for (const auto& a : j.items)
        if (a.kind == mllog::Json::Kind::String) m.attendees.push_back(a.s);
    if (mllog::parse_json_permissive(q.col_text(3), &j, &perr))
      for (const auto& a : j.items)
        if (a.kind == mllog::Json::Kind::Int) m.objections.push_back(a.i);
    m.notes = q.col_text(4);
    m.recorded_by = q.col_text(5);
    m.created_at = q.col_text(6);
    out.push_back(std::move(m));
  }
  if (!q.ok()) *error = s.describe_error(q.rc(), "reading meetings");
  return out;
}

}  // namespace

bool role_may(const Actor& who, Action action, Error* err) {
  const char* what = action == Action::SetSchedule        ? "sets a round's schedule"
                     : action == Action::ChangeRoundState ? "changes a round's state"
                                                          : "assigns the required reviews";
  return allowed(who, action, std::string("only a review chair or an administrator ") + what, err);
}

// ------------------------------------------------------------ the schedule

Result<RoundInfo> set_schedule(Store& s, const Actor& who, const SetSchedule& in) {
  Error e;
  if (!role_may(who, Action::SetSchedule, &e)) return e;
  auto fields = schedule_fields();
  for (const auto& date : in.dates) {
    const std::string& name = date.first;
    if (std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return name == f.first; }))
      return make_error(400, "unknown-field", "unknown field '" + base::excerpt(name) + "' in the schedule");
  }
  RoundInfo r;
  if (!find_round(s, who, in.round, &r, &e)) return e;
  Schedule next = r.schedule;
  std::vector<std::string> changed;
  for (auto& [name, field] : fields) {
    auto given = in.dates.find(name);
    if (given == in.dates.end()) continue;
    const std::string& text = given->second;
    std::string norm, error;
    if (!text.empty() && !parse_instant(text, &norm, &error))
      return make_error(400, "bad-date", std::string(name) + ": " + error);
    if (next.*field != norm) changed.push_back(name);
    next.*field = norm;
  }
  std::string error;
  if (!schedule_in_order(next, &error)) return make_error(400, "schedule-order", error);
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    RoundInfo cur;
    Error e;
    if (!find_round(s, who, r.name, &cur, &e)) return e;  // read again inside the transaction
    // A round without a review record counts as published but gets one here.
    if (cur.reviewed && cur.state == "published")
      return make_error(422, "published", cur.name + " is published; its schedule no longer changes");
    if (!check_version(in.version, cur.version, "the review record of " + cur.name, "referee round show " + cur.name, &e))
      return e;
    // Nobody moves the deadlines of a round where their own organisation's case is open.
    if (who.role == Role::Chair && !changed.empty())
      if (std::string own = open_cases_of(s, cur.id, who.organisation); !own.empty())
        return forbidden("a chair whose organisation (" + who.organisation + ") is a party to open objections " + own +
                             " in " + cur.name + " does not move its schedule",
                         "ask a chair of another organisation or an administrator; one organisation's time on one "
                         "objection is an extension (referee objection extend)");
    Stmt up(s.db(),
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
    if (!up.run()) return store_error(s, up.rc(), "writing the schedule");
    RoundInfo after;
    if (!find_round(s, who, r.name, &after, &e)) return e;
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
  return round_now(s, who, w, r.name);
}

// ------------------------------------------------------------ the state

Result<RoundInfo> change_round_state(Store& s, const Actor& who, const ChangeRoundState& in) {
  Error e;
  if (!role_may(who, Action::ChangeRoundState, &e)) return e;
  if (!check_override_reason(in.override_reason, &e)) return e;
  if (!in.override_reason.empty() &&
      !allowed(who, Action::OverrideDeadline, "only a review chair may override open objections", &e, {}, "review",
               "leave out --override (API field `override`)"))
    return e;
  std::string state = base::lower(in.state);
  if (state != "review" && state != "final" && state != "published")
    return make_error(400, "bad-field", "state '" + state + "' is none of review, final, published");
  RoundInfo r;
  if (!find_round(s, who, in.round, &r, &e)) return e;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    RoundInfo cur;
    Error e;
    if (!find_round(s, who, r.name, &cur, &e)) return e;
    if (!cur.reviewed)
      return make_error(422, "no-review", cur.name + " has no review record: it counts as published",
                        "set its schedule first: referee round schedule " + cur.name + " ...");
    if (!check_version(in.version, cur.version, "the review record of " + cur.name, "referee round show " + cur.name, &e))
      return e;
    const std::string& from = cur.state;
    bool ok = (from == "review" && state == "final") || (from == "final" && state == "published") ||
              (from == "final" && state == "review");
    if (!ok)
      return make_error(422, "bad-transition", "a round goes review -> final -> published (or back final -> review); " +
                                                   cur.name + " is in state " + from + " and cannot go to " + state);
    if (from == "final" && state == "review" && base::blank(in.reason))
      return make_error(400, "missing-field", "going back from final to review needs a reason",
                        "send \"reason\": \"...\" (--reason)");
    // Final and published close the review: every objection decided or withdrawn first.
    std::string still_open;
    if (state == "final" || state == "published") {
      Stmt q(s.db(),
             "SELECT j.id, j.state, a.name, b.name FROM objections j JOIN organisations a ON a.id = j.by_org "
             "JOIN organisations b ON b.id = j.against_org WHERE j.round_id = ?1 AND j.state IN ('open', 'responded') "
             "ORDER BY j.id");
      q.bind(1, cur.id);
      while (q.step()) {
        std::string tag("#");
        tag += std::to_string(q.col_int(0));
        still_open += std::string(still_open.empty() ? "" : ", ") + tag + " (" + q.col_text(1) + ")";
      }
      if (!q.ok()) return store_error(s, q.rc(), "reading the round's objections");
      // Open objections the acting chair's organisation (or its partner) is a party to.
      const std::string own = open_cases_of(s, cur.id, who.organisation);
      // Nobody closes the review over their own organisation's open case.
      if (!own.empty() && !in.override_reason.empty())
        return forbidden("a chair whose organisation (" + who.organisation + ") is a party to open objections " + own +
                             " does not override them to close the round",
                         "ask a chair of another organisation, or decide or withdraw them first");
      if (!still_open.empty() && in.override_reason.empty())
        return make_error(422, "objections-open",
                          cur.name + " cannot go to " + state + ": objections not decided or withdrawn: " + still_open,
                          "decide or withdraw them first; a review chair may override with a reason "
                          "(--override REASON, API field `override`)");
    }
    Stmt up(s.db(), "UPDATE round_reviews SET state = ?2, version = version + 1 WHERE round_id = ?1");
    up.bind(1, cur.id).bind(2, state);
    if (!up.run()) return store_error(s, up.rc(), "changing the round's state");
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(cur.name).key("from").value(from).key("to").value(state);
    if (!in.reason.empty()) p.key("reason").value(in.reason);
    if (!still_open.empty()) p.key("override").value(in.override_reason).key("open_objections").value(still_open);
    p.key("version").value(cur.version + 1).end_object();
    *event = Change{"round.state", "round/" + cur.name, p.str()};
    return cur.id;
  });
  return round_now(s, who, w, r.name);
}

// ------------------------------------------------------------ pairings

Result<Assignment> assign_pairings(Store& s, const Actor& who, const AssignPairings& in) {
  Error e;
  if (!role_may(who, Action::AssignPairings, &e)) return e;
  RoundInfo r;
  if (!find_round(s, who, in.round, &r, &e)) return e;
  std::vector<SubmitterCount> subs;
  std::vector<PairingPlan> plan, added;
  std::vector<Pairing> before, after;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    if (r.state == "published") return make_error(422, "published", r.name + " is published; its reviews are over");
    Stmt q(s.db(),
           "SELECT o.name, COUNT(x.id), COALESCE(MAX(s.accelerators_count), 0) FROM packages p "
           "JOIN organisations o ON o.id = p.organisation_id LEFT JOIN systems s ON s.package_id = p.id "
           "LEFT JOIN results x ON x.system_id = s.id WHERE p.round_id = ?1 GROUP BY o.name");
    q.bind(1, r.id);
    while (q.step()) subs.push_back({q.col_text(0), q.col_int(1), q.col_int(2)});
    if (!q.ok()) return store_error(s, q.rc(), "counting results");
    plan = plan_pairings(subs);
    std::string error;
    before = read_pairings(s, r.id, &error);
    if (!error.empty()) return make_error(500, "store", error);
    for (const auto& p : plan) {
      Error numbering;
      const long long id = next_id(s, "pairings", r.id, &numbering);
      if (!id) return numbering;
      Stmt ins(s.db(),
               "INSERT OR IGNORE INTO pairings (round_id, reviewer_org, reviewed_org, reason, id) VALUES (?1, "
               "(SELECT id FROM organisations WHERE name = ?2), (SELECT id FROM organisations WHERE name = ?3), ?4, ?5)");
      ins.bind(1, r.id).bind(2, p.reviewer).bind(3, p.reviewed).bind(4, p.reason).bind(5, id);
      if (!ins.run()) return store_error(s, ins.rc(), "writing pairings");
      if (sqlite3_changes(s.db()) > 0) added.push_back(p);
    }
    after = read_pairings(s, r.id, &error);
    if (!error.empty()) return make_error(500, "store", error);
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(r.name).key("added").begin_array();
    for (const auto& a : added) p.begin_object().key("reviewer").value(a.reviewer).key("reviewed").value(a.reviewed).key("reason").value(a.reason).end_object();
    p.end_array().key("kept").value(static_cast<long long>(before.size())).end_object();
    *event = Change{"pairings.assign", "round/" + r.name, p.str(), !added.empty()};  // nothing added: no event
    return r.id;
  });
  if (!w.ok()) return w.error();
  Assignment out;
  out.round = r.name;
  out.ranking = subs;
  std::sort(out.ranking.begin(), out.ranking.end(), [](const SubmitterCount& a, const SubmitterCount& b) {
    return a.results != b.results ? a.results > b.results : a.organisation < b.organisation;
  });
  out.added = added;
  out.kept = static_cast<long long>(before.size());
  for (const auto& x : out.ranking) {  // submitters the plan gives nobody to review
    bool reviews = false;
    for (const auto& p : plan) reviews = reviews || p.reviewer == x.organisation;
    if (!reviews) out.unpaired.push_back(x.organisation);
  }
  std::set<std::pair<std::string, std::string>> planned;
  for (const auto& p : plan) planned.insert({p.reviewer, p.reviewed});
  for (const auto& x : after)
    if (!planned.count({x.reviewer, x.reviewed})) out.not_required.push_back(x);
  out.pairings = after;
  return out;
}

Result<Pairing> update_pairing(Store& s, const Actor& who, const UpdatePairing& in) {
  std::string status = base::lower(in.status);
  if (status_rank(status) < 0)
    return make_error(400, "bad-field", "status '" + status + "' is none of assigned, in-progress, done");
  long long id = in.pairing;
  if (id <= 0) return make_error(400, "bad-request", "pairing id '" + std::to_string(id) + "' is not a number");
  Pairing done;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    // A pairing of a round the actor may not see is not known: the embargo before anything else of it is read.
    Error unknown = make_error(404, "not-found", "no pairing " + std::to_string(id));
    Stmt q(s.db(), "SELECT round_id FROM pairings WHERE id = ?1");
    q.bind(1, id);
    if (!q.step()) return q.ok() ? unknown : store_error(s, q.rc(), "reading a pairing");
    RoundInfo r;
    Error e;
    if (!find_round_by_id(s, who, q.col_int(0), unknown, &r, &e)) return e;
    Stmt p(s.db(),
           "SELECT a.name, b.name, p.status, p.version, p.reason FROM pairings p JOIN organisations a ON "
           "a.id = p.reviewer_org JOIN organisations b ON b.id = p.reviewed_org WHERE p.id = ?1");
    p.bind(1, id);
    if (!p.step()) return p.ok() ? unknown : store_error(s, p.rc(), "reading a pairing");
    std::string reviewer, reviewed, from, reason;
    long long cur = 0;
    p.row(reviewer, reviewed, from, cur, reason);
    Standing standing;
    standing.reviewer = base::lower(who.organisation) == base::lower(reviewer);
    Access access = authorize(who, Action::SetPairingStatus, standing, r.state);
    if (access == Access::Forbidden)
      return forbidden("only a member of " + reviewer + " (the reviewer) or a chair changes this pairing's status",
                       "ask a member of " + reviewer + " or a review chair");
    if (access == Access::Closed) return make_error(422, "published", r.name + " is published; its reviews are over");
    if (!check_version(in.version, cur, "pairing " + std::to_string(id), "referee review pairings --round " + r.name, &e))
      return e;
    bool member_of_reviewer = who.role == Role::Member && standing.reviewer;
    if (member_of_reviewer && status_rank(status) < status_rank(from))
      return make_error(422, "bad-transition", "a pairing goes assigned -> in-progress -> done; only a chair moves it back",
                        "it is " + from);
    Stmt up(s.db(), "UPDATE pairings SET status = ?2, version = version + 1 WHERE id = ?1");
    up.bind(1, id).bind(2, status);
    if (!up.run()) return store_error(s, up.rc(), "changing a pairing");
    mllog::JsonWriter pl(0, mllog::JsonText::kUtf8);
    pl.begin_object().key("round").value(r.name).key("reviewer").value(reviewer).key("reviewed").value(reviewed);
    pl.key("from").value(from).key("to").value(status).key("version").value(cur + 1).end_object();
    *event = Change{"pairing.status", "pairing/" + std::to_string(id), pl.str()};
    done = {id, reviewer, reviewed, reason, status, cur + 1};
    return id;
  });
  if (!w.ok()) return w.error();
  return done;
}

// ------------------------------------------------------------ announcements

Result<Announced> announce_resubmission(Store& s, const Actor& who, const AnnounceResubmission& in) {
  if (in.results.empty())
    return make_error(400, "bad-field", "no result named (--result ORG/SYSTEM/BENCHMARK, API field `results`)");
  if (in.text.empty()) return make_error(400, "bad-field", "field 'text' is empty", "say which earlier logs are resubmitted");
  Error e;
  if (!check_override_reason(in.override_reason, &e)) return e;
  if (!in.override_reason.empty() &&
      !allowed(who, Action::OverrideDeadline, "only a review chair overrides a deadline", &e, {}, "review", ""))
    return e;
  RoundInfo r;
  if (!find_round(s, who, in.round, &r, &e)) return e;
  std::vector<long long> ids;
  bool late = false;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    if (r.state == "published") return make_error(422, "published", r.name + " is published; nothing changes any more");
    std::string now = now_utc();
    late = !r.schedule.first_meeting.empty() && now.substr(0, 19) + "Z" > r.schedule.first_meeting;
    if (late && in.override_reason.empty())
      return make_error(422, "late", "resubmitted logs must be announced before the first review meeting (" +
                                         r.schedule.first_meeting + ")",
                        "a review chair may accept it late with a reason (--override REASON, API field `override`)");
    std::string error;
    long long uid = 0;
    if (!actor_user_id(s, who, &uid, &error)) return make_error(500, "store", error);
    std::vector<std::string> named;  // each result once, as the request named it first
    std::vector<long long> result_ids;
    for (const auto& name : in.results) {
      long long rid = 0, org_id = 0;
      std::string org;
      Error e;
      if (!find_result(s, r.id, name, &rid, &org_id, &e, &org)) return e;
      // One result named twice in a request (in any case) is announced once.
      if (std::find(result_ids.begin(), result_ids.end(), rid) != result_ids.end()) continue;
      result_ids.push_back(rid);
      named.push_back(name);
      Standing standing;
      standing.owns_result = base::lower(org) == base::lower(who.organisation);
      if (!in.override_reason.empty() && who.role == Role::Chair && same_party(org, who.organisation))
        return forbidden("a chair of " + who.organisation + " does not override the deadline for " + org +
                             "'s own announcement",
                         "ask a chair of another organisation");
      if (authorize(who, Action::Announce, standing, r.state) == Access::Forbidden)
        return who.role == Role::Member
                   ? forbidden("a member announces only their own organisation's results; " + name + " is " + org + "'s",
                               "ask a member of " + org + " or a review chair")
                   : forbidden("announcements are made by a member of the result's organisation (or a chair)",
                               "ask a member of the result's organisation or a review chair");
      const long long id = next_id(s, "announcements", r.id, &e);
      if (!id) return e;
      Stmt ins(s.db(),
               "INSERT INTO announcements (round_id, organisation_id, result_id, text, user_id, created_at, id) VALUES "
               "(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      ins.bind(1, r.id).bind(2, org_id).bind(3, rid).bind(4, in.text).bind(5, uid).bind(6, now).bind(7, id);
      if (!ins.run()) return store_error(s, ins.rc(), "writing an announcement");
      ids.push_back(id);
    }
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(r.name).key("announcements").begin_array();
    for (auto id : ids) p.value(id);
    p.end_array().key("results").begin_array();
    for (const auto& n : named) p.value(n);
    p.end_array().key("late").value(late).key("text_sha256").value(text_digest(in.text)).key("created_at").value(now);
    if (!in.override_reason.empty()) p.key("override").value(in.override_reason);
    p.end_object();
    *event = Change{"announcement.add", "round/" + r.name, p.str()};
    return r.id;
  });
  if (!w.ok()) return w.error();
  Announced out;
  out.round = r.name;
  out.late = late;
  std::string error;  // the announcements were written; a failure to read them back leaves the list short
  for (auto& a : read_announcements(s, r.id, &error))
    if (std::find(ids.begin(), ids.end(), a.id) != ids.end()) out.announcements.push_back(std::move(a));
  return out;
}

// ------------------------------------------------------------ reads

Result<Meeting> record_meeting(Store& s, const Actor& who, const RecordMeeting& in) {
  Error e;
  if (!allowed(who, Action::RecordMeeting, "only a review chair records the committee's meetings", &e, {}, "review",
               "ask a review chair"))
    return e;
  std::string held, perr;
  if (!parse_instant(in.held_at, &held, &perr)) return make_error(400, "bad-date", "held_at: " + perr);
  // A bare date means that day; today's is a meeting held before it is recorded, so it is dated now (the end
  // of the day would place it after what was done since, and its minutes would take that in).
  if (in.held_at.size() == 10 && held.substr(0, 10) == now_utc().substr(0, 10)) held = now_utc();
  if (in.attendees.empty())
    return make_error(400, "bad-field", "no organisation attended (--attendee ORG, API field `attendees`)");
  if (in.notes.size() > 100000) return make_error(400, "bad-field", "notes: at most 100000 bytes");
  RoundInfo r;
  if (!find_round(s, who, in.round, &r, &e)) return e;
  Meeting out;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    if (r.state == "published") return make_error(422, "published", r.name + " is published; nothing changes any more");
    const std::string now = now_utc();
    // A meeting is recorded once held: a later day, or a later time today, is refused (a bare date, which
    // reads as the end of that day, is today's meeting).
    const bool later_day = held.substr(0, 10) > now.substr(0, 10);
    const bool later_today = held.substr(0, 10) == now.substr(0, 10) && in.held_at.size() > 10 && held > now;
    if (later_day || later_today)
      return make_error(422, "future", "held_at " + held + " is in the future: a meeting is recorded once it was held");
    const std::vector<std::string> submitters = round_submitters(s, r.id);
    std::vector<std::string> attendees;
    for (const auto& a : in.attendees) {
      std::string spelled;
      for (const auto& n : submitters)
        if (base::lower(n) == base::lower(a)) spelled = n;
      if (spelled.empty()) {
        std::string list;
        for (const auto& n : submitters) list += (list.empty() ? "" : ", ") + n;
        return make_error(422, "not-in-round", "organisation " + base::excerpt(a) + " did not submit to " + r.name,
                          "the round's submitters: " + list);
      }
      if (std::find(attendees.begin(), attendees.end(), spelled) == attendees.end()) attendees.push_back(spelled);
    }
    std::vector<long long> discussed;
    for (long long id : in.objections) {
      Stmt q(s.db(), "SELECT 1 FROM objections WHERE id = ?1 AND round_id = ?2");
      q.bind(1, id).bind(2, r.id);
      if (!q.step()) return make_error(404, "unknown-objection", "objection " + std::to_string(id) + " is not one of " + r.name + "'s");
      if (std::find(discussed.begin(), discussed.end(), id) == discussed.end()) discussed.push_back(id);
    }
    long long uid = 0;
    std::string error;
    if (!actor_user_id(s, who, &uid, &error)) return make_error(500, "store", error);
    const long long id = next_id(s, "meetings", r.id, &e);
    if (!id) return e;
    mllog::JsonWriter aj(0, mllog::JsonText::kUtf8), oj(0, mllog::JsonText::kUtf8);
    aj.begin_array();
    for (const auto& a : attendees) aj.value(a);
    aj.end_array();
    oj.begin_array();
    for (long long o : discussed) oj.value(o);
    oj.end_array();
    Stmt ins(s.db(),
             "INSERT INTO meetings (round_id, held_at, attendees_json, objections_json, notes, user_id, created_at, id) VALUES "
             "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    ins.bind(1, r.id).bind(2, held).bind(3, aj.str()).bind(4, oj.str()).bind(5, in.notes);
    if (uid) ins.bind(6, uid); else ins.bind_null(6);
    ins.bind(7, now).bind(8, id);
    if (!ins.run()) return store_error(s, ins.rc(), "recording the meeting");
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("round").value(r.name).key("meeting").value(id).key("held_at").value(held);
    p.key("attendees").raw(aj.str()).key("objections").raw(oj.str());
    p.key("notes_sha256").value(text_digest(in.notes)).key("created_at").value(now).end_object();
    *event = Change{"meeting.record", "round/" + r.name, p.str()};
    out.id = id;
    out.held_at = held;
    out.attendees = attendees;
    out.objections = discussed;
    out.notes = in.notes;
    out.recorded_by = who.local_admin ? "local-admin" : who.user;
    out.created_at = now;
    return r.id;
  });
  if (!w.ok()) return w.error();
  return out;
}

Result<std::vector<RoundInfo>> visible_rounds(Store& s, const Actor& who) {
  std::vector<RoundInfo> out;
  for (const auto& name : submissions::rounds(s)) {
    RoundInfo r;
    Error e;
    if (find_round(s, who, name, &r, &e)) out.push_back(std::move(r));
    else if (e.status != 404) return e;  // 404: embargoed
  }
  return out;
}

Result<RoundInfo> show_round(Store& s, const Actor& who, const std::string& round) {
  RoundInfo r;
  Error e;
  if (!find_round(s, who, round, &r, &e)) return e;
  return r;
}

namespace {

// A round's rows read by `read`, the embargo first.
template <typename Row>
Result<RoundRows<Row>> rows_of(Store& s, const Actor& who, const std::string& round,
                               std::vector<Row> (*read)(Store&, long long, std::string*)) {
  RoundInfo r;
  Error e;
  if (!find_round(s, who, round, &r, &e)) return e;
  std::string error;
  RoundRows<Row> out;
  out.round = r.name;
  out.rows = read(s, r.id, &error);
  if (!error.empty()) return make_error(500, "store", error);
  return out;
}

}  // namespace

Result<RoundRows<Pairing>> round_pairings(Store& s, const Actor& who, const std::string& round) {
  return rows_of<Pairing>(s, who, round, read_pairings);
}

Result<RoundRows<Announcement>> round_announcements(Store& s, const Actor& who, const std::string& round) {
  return rows_of<Announcement>(s, who, round, read_announcements);
}

Result<RoundRows<Meeting>> round_meetings(Store& s, const Actor& who, const std::string& round) {
  return rows_of<Meeting>(s, who, round, read_meetings);
}

Result<ReportText> round_report(Store& s, const Actor& who, const std::string& round, const std::string& format_text) {
  RoundInfo r;
  Error e;
  if (!find_round(s, who, round, &r, &e)) return e;
  std::string format = base::lower(format_text);
  if (format != "json" && format != "md" && format != "github")
    return make_error(400, "bad-format", "format '" + format + "' is none of json, md, github");
  ReportRound rr;
  rr.name = r.name;
  rr.state = r.state;
  rr.has_review = r.reviewed;
  rr.version = r.version;
  for (auto& [name, field] : schedule_fields()) rr.schedule.emplace_back(name, r.schedule.*field);
  std::string error;
  for (const auto& p : read_pairings(s, r.id, &error))
    rr.pairings.push_back({p.id, p.reviewer, p.reviewed, p.reason, p.status});
  for (const auto& a : read_announcements(s, r.id, &error))
    rr.announcements.push_back({a.id, a.organisation, a.result, a.text, a.user, a.at});
  if (!error.empty()) return make_error(500, "store", error);
  if (!load_report(s, r.id, &rr, &error)) return make_error(500, "store", error);
  // A member reads no event numbers: they count the events of every round, hidden ones too.
  if (who.role == Role::Member)
    for (auto& o : rr.objections) {
      for (auto& x : o.overrides) x.seq = 0;
      for (auto& x : o.extensions) x.seq = 0;
    }
  ReportText out;
  if (format == "json") {
    out.text = report_json(rr);
  } else {
    out.text = format == "md" ? report_markdown(rr) : report_github(rr);
    out.markdown = true;
  }
  return out;
}

Result<ReportText> meeting_minutes(Store& s, const Actor& who, const std::string& round, long long meeting,
                                   const std::string& format_text) {
  RoundInfo r;
  Error e;
  if (!find_round(s, who, round, &r, &e)) return e;
  const std::string format = base::lower(format_text);
  if (format != "json" && format != "md") return make_error(400, "bad-format", "format '" + format + "' is neither json nor md");
  std::string error;
  std::vector<Meeting> all = read_meetings(s, r.id, &error);
  if (!error.empty()) return make_error(500, "store", error);
  auto it = std::find_if(all.begin(), all.end(), [&](const Meeting& m) { return m.id == meeting; });
  if (it == all.end()) return make_error(404, "unknown-meeting", "no meeting " + std::to_string(meeting) + " of " + r.name,
                                         "referee review meetings --round " + r.name + " lists them");
  MeetingMinutes m;
  m.round = r.name;
  m.id = it->id;
  m.held_at = it->held_at;
  m.since = it == all.begin() ? "" : std::prev(it)->held_at;
  m.recorded_by = it->recorded_by;
  m.recorded_at = it->created_at;
  m.notes = it->notes;
  m.attendees = it->attendees;
  ReportRound rr;
  if (!load_report(s, r.id, &rr, &error)) return make_error(500, "store", error);
  for (long long id : it->objections)
    for (auto& o : rr.objections)
      if (o.id == id) {
        if (who.role == Role::Member) {
          for (auto& x : o.overrides) x.seq = 0;
          for (auto& x : o.extensions) x.seq = 0;
        }
        if (o.decided && o.decided_at <= m.held_at && (m.since.empty() || o.decided_at > m.since)) m.decided_here.push_back(o.id);
        m.discussed.push_back(o);
      }
  // The round's events between the previous meeting and this one; the chain's head at the meeting.
  std::vector<Event> events = read_events(s, "", &error);
  if (!error.empty()) return make_error(500, "store", error);
  for (const auto& ev : events) {
    if (ev.at > m.held_at) break;
    if (who.role != Role::Member) m.chain_head = std::to_string(ev.seq) + ":" + ev.hash;
    if (!m.since.empty() && ev.at <= m.since) continue;
    std::string of;
    if (ev.subject.rfind("round/", 0) == 0) {
      of = ev.subject.substr(6);
    } else {
      mllog::Json p;
      std::string perr;
      if (mllog::parse_json_permissive(ev.payload_json, &p, &perr))
        if (const auto* rd = p.find("round"); rd && rd->kind == mllog::Json::Kind::String) of = rd->s;
    }
    if (of != r.name) continue;
    m.happened.push_back({who.role == Role::Member ? 0 : ev.seq, ev.at, ev.actor, ev.organisation, ev.action, ev.subject});
  }
  ReportText out;
  if (format == "json") {
    out.text = minutes_json(m);
  } else {
    out.text = minutes_markdown(m);
    out.markdown = true;
  }
  return out;
}

}  // namespace referee::review
