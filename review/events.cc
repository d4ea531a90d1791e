#include "review/events.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "base/digest.h"
#include "base/text.h"
#include "base/utc_time.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/fixes.h"

namespace referee::review {

const char* role_name(Role r) {
  switch (r) {
    case Role::Member: return "member";
    case Role::Chair: return "chair";
    case Role::Admin: return "admin";
  }
  return "member";
}

bool parse_role(const std::string& text, Role* out) {
  std::string t = base::lower(text);
  if (t == "member") *out = Role::Member;
  else if (t == "chair") *out = Role::Chair;
  else if (t == "admin" || t == "administrator") *out = Role::Admin;
  else return false;
  return true;
}

std::string now_utc() { return base::utc_now(base::UtcFormat::Millis); }

namespace {

// Each field as "<length>:<bytes>\n", so no two different events hash the same text.
void field(std::string* out, const std::string& v) {
  *out += std::to_string(v.size());
  *out += ':';
  *out += v;
  *out += '\n';
}

const std::string kZeroHash(64, '0');

}  // namespace

std::string event_hash(const Event& e) {
  std::string text;
  field(&text, e.prev_hash);
  field(&text, std::to_string(e.seq));
  field(&text, e.at);
  field(&text, e.actor);
  field(&text, e.organisation);
  field(&text, e.role);
  field(&text, e.action);
  field(&text, e.subject);
  field(&text, e.payload_json);
  return base::sha256_hex(text);
}

bool append_event(submissions::Store& s, const Actor& who, const std::string& action, const std::string& subject,
                  const std::string& payload_json, std::string* error, long long* seq) {
  Event e;
  {
    submissions::Stmt last(s.db(), "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1");
    if (last.step()) {
      e.seq = last.col_int(0) + 1;
      e.prev_hash = last.col_text(1);
    } else if (!last.ok()) {
      *error = s.describe_error(last.rc(), "reading the review log");
      return false;
    } else {
      e.seq = 1;
      e.prev_hash = kZeroHash;
    }
  }
  e.at = now_utc();
  e.actor = who.user;
  e.organisation = who.organisation;
  e.role = role_name(who.role);
  e.action = action;
  e.subject = subject;
  e.payload_json = payload_json.empty() ? "{}" : payload_json;
  e.hash = event_hash(e);
  submissions::Stmt ins(s.db(),
                        "INSERT INTO events (seq, at, actor, organisation, role, action, subject, payload_json, "
                        "prev_hash, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  ins.bind(1, e.seq).bind(2, e.at).bind(3, e.actor);
  if (e.organisation.empty()) ins.bind_null(4); else ins.bind(4, e.organisation);
  ins.bind(5, e.role).bind(6, e.action).bind(7, e.subject).bind(8, e.payload_json).bind(9, e.prev_hash).bind(10, e.hash);
  if (!ins.run()) {
    *error = s.describe_error(ins.rc(), "appending to the review log");
    return false;
  }
  if (seq) *seq = e.seq;
  return true;
}

std::vector<Event> read_events(submissions::Store& s, const std::string& subject_prefix, std::string* error) {
  std::vector<Event> out;
  submissions::Stmt q(s.db(),
                      "SELECT seq, at, actor, COALESCE(organisation, ''), role, action, subject, payload_json, "
                      "prev_hash, hash FROM events WHERE substr(subject, 1, length(?1)) = ?1 ORDER BY seq");
  q.bind(1, subject_prefix);
  while (q.step()) {
    Event e;
    q.row(e.seq, e.at, e.actor, e.organisation, e.role, e.action, e.subject, e.payload_json, e.prev_hash, e.hash);
    out.push_back(std::move(e));
  }
  if (!q.ok()) *error = s.describe_error(q.rc(), "reading the review log");
  return out;
}

std::string recorded_package_rows(submissions::Store& s, const std::string& round, const std::string& organisation) {
  submissions::Stmt q(s.db(),
                      "SELECT payload_json FROM events WHERE subject = ?1 AND action IN ('package.import', 'package.replace') "
                      "ORDER BY seq DESC");
  q.bind(1, "round/" + round);
  while (q.step()) {
    mllog::Json p;
    std::string perr;
    if (!mllog::parse_json_permissive(q.col_text(0), &p, &perr)) continue;
    const auto* org = p.find("organisation");
    if (!org || org->kind != mllog::Json::Kind::String || org->s != organisation) continue;
    const auto* rows = p.find("rows_sha256");
    return rows && rows->kind == mllog::Json::Kind::String ? rows->s : "";
  }
  return "";
}

bool adopt_packages(submissions::Store& s, int from_version, std::string* error) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("from_schema").value(static_cast<long long>(from_version)).key("packages").begin_array();
  size_t n = 0;
  {
    submissions::Stmt q(s.db(),
                        "SELECT p.id, d.name, o.name FROM packages p JOIN rounds d ON d.id = p.round_id JOIN organisations o "
                        "ON o.id = p.organisation_id ORDER BY p.id");
    while (q.step()) {
      std::string digest = submissions::package_rows_sha256(s, q.col_int(0), error);
      if (digest.empty()) return false;
      w.begin_object().key("round").value(q.col_text(1)).key("organisation").value(q.col_text(2));
      w.key("rows_sha256").value(digest).end_object();
      ++n;
    }
    if (!q.ok()) {
      *error = s.describe_error(q.rc(), "reading packages");
      return false;
    }
  }
  if (n == 0) return true;
  w.end_array().end_object();
  Actor admin;
  admin.user = "local-admin";
  admin.role = Role::Admin;
  admin.local_admin = true;
  return append_event(s, admin, "package.adopt", "store", w.str(), error);
}

bool record_package_change(submissions::Store& s, const submissions::PackageChange& c, std::string* error) {
  Actor admin;
  admin.user = "local-admin";
  admin.role = Role::Admin;
  admin.local_admin = true;
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("organisation").value(c.organisation).key("old_sha256");
  if (c.old_sha256.empty()) w.null(); else w.value(c.old_sha256);
  w.key("new_sha256").value(c.new_sha256).key("results_changed").begin_array();
  for (const auto& r : c.results_changed) w.value(r);
  w.end_array();
  if (!c.rows_sha256.empty()) w.key("rows_sha256").value(c.rows_sha256);
  // The fix decisions this replacement delivers, each with the digest of what it changed in their results.
  std::string ferr;
  std::vector<FixDelivered> fixes = fixes_delivered(s, c, &ferr);
  if (!ferr.empty()) {
    *error = ferr;
    return false;
  }
  if (!fixes.empty()) {
    w.key("fixes").begin_array();
    for (const auto& f : fixes)
      w.begin_object().key("objection").value(f.objection).key("decision").value(f.decision).key("changes_sha256")
          .value(base::sha256_hex(f.changes_json)).end_object();
    w.end_array();
  }
  w.end_object();
  // A repair (the same files written again over rows edited in the store) replaces the package's rows.
  long long seq = 0;
  if (!append_event(s, admin, c.status == "imported" ? "package.import" : "package.replace", "round/" + c.round,
                    w.str(), error, &seq))
    return false;
  return store_fix_deliveries(s, c, fixes, seq, error);
}

ChainCheck verify_events(submissions::Store& s, std::string* error) {
  ChainCheck c;
  std::string err;
  auto events = read_events(s, "", &err);
  if (!err.empty()) {
    *error = err;
    c.ok = false;
    c.problem = err;
    return c;
  }
  std::string prev = kZeroHash;
  long long expect = 1;
  for (const auto& e : events) {
    ++c.events;
    std::string bad;
    if (e.seq != expect)
      bad = "event " + std::to_string(expect) + " is missing (the next one is " + std::to_string(e.seq) + ")";
    else if (e.prev_hash != prev)
      bad = "its link to the previous event (" + e.prev_hash.substr(0, 12) + "...) does not match that event's hash (" +
            prev.substr(0, 12) + "...): an event before it was changed or removed";
    else if (event_hash(e) != e.hash)
      bad = "its hash does not match its contents: the event was changed after it was written";
    if (!bad.empty()) {
      c.ok = false;
      c.first_bad = e.seq;
      c.problem = bad;
      return c;
    }
    prev = e.hash;
    ++expect;
  }
  return c;
}

}  // namespace referee::review
