#include "review/fixes.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "base/digest.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/notify.h"
#include "review/policy.h"

namespace referee::review {

using submissions::Stmt;
using submissions::Store;

namespace {

// A failed_checks value as JSON: the array it holds, or the text as a string
// where a store edited by hand holds something else.
void write_checks(mllog::JsonWriter& w, const std::string& checks) {
  mllog::Json j;
  std::string err;
  if (mllog::parse_json_permissive(checks, &j, &err) && j.kind == mllog::Json::Kind::Array) w.raw(checks);
  else w.value(checks);
}

void write_files(mllog::JsonWriter& w, const char* key, const std::vector<std::string>& files) {
  w.key(key).begin_array();
  for (const auto& f : files) w.value(f);
  w.end_array();
}

}  // namespace

std::string result_changes_json(const std::vector<submissions::ResultChange>& changes) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_array();
  for (const auto& c : changes) {
    w.begin_object().key("result").value(c.result).key("change").value(c.change);
    w.key("verdict").begin_object().key("before").value(c.verdict_before).key("after").value(c.verdict_after).end_object();
    w.key("score_minutes").begin_object().key("before");
    if (c.has_score_before) w.value(c.score_before); else w.null();
    w.key("after");
    if (c.has_score_after) w.value(c.score_after); else w.null();
    w.end_object();
    w.key("checks_failed").begin_object().key("before");
    write_checks(w, c.checks_before);
    w.key("after");
    write_checks(w, c.checks_after);
    w.end_object();
    w.key("runs").begin_object().key("before").value(c.runs_before).key("after").value(c.runs_after).end_object();
    w.key("files").begin_object();
    write_files(w, "added", c.files_added);
    write_files(w, "removed", c.files_removed);
    write_files(w, "changed", c.files_changed);
    w.end_object().end_object();
  }
  w.end_array();
  return w.str();
}

namespace {

std::string join_items(const mllog::Json* list) {
  std::string out;
  if (list)
    for (const auto& x : list->items) out += (out.empty() ? "" : ", ") + (x.kind == mllog::Json::Kind::String ? x.s : std::string("?"));
  return out;
}

std::string before_after_text(const mllog::Json* pair, const char* which) {
  const mllog::Json* v = pair ? pair->find(which) : nullptr;
  if (!v || v->kind == mllog::Json::Kind::Null) return "none";
  if (v->kind == mllog::Json::Kind::String) return v->s.empty() ? "none" : v->s;
  if (v->kind == mllog::Json::Kind::Int) return std::to_string(v->i);
  if (v->kind == mllog::Json::Kind::Float) {  // minutes, to 4 decimals as the review prints scores
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v->f);
    return buf;
  }
  if (v->kind == mllog::Json::Kind::Array) return v->items.empty() ? "none" : join_items(v);
  return "?";
}

}  // namespace

std::string result_change_text(const mllog::Json& change) {
  const mllog::Json* r = change.find("result");
  std::string out = (r && r->kind == mllog::Json::Kind::String ? r->s : std::string("?")) + ":";
  std::vector<std::string> parts;
  if (const mllog::Json* f = change.find("files")) {
    std::string files;
    for (const char* k : {"changed", "added", "removed"})
      if (std::string list = join_items(f->find(k)); !list.empty())
        files += (files.empty() ? "files " : "; files ") + std::string(k) + " " + list;
    parts.push_back(files.empty() ? "no log file changed" : files);
  }
  auto pair = [&](const char* key, const std::string& label, const std::string& unit) {
    const mllog::Json* p = change.find(key);
    const std::string b = before_after_text(p, "before"), a = before_after_text(p, "after");
    if (b != a) parts.push_back(label + " " + b + " to " + a + unit);
    else if (std::string(key) == "score_minutes") parts.push_back(label + " " + a + unit + " (unchanged)");
  };
  pair("runs", "runs", "");
  pair("score_minutes", "score", std::string(" minutes"));
  pair("verdict", "verdict", "");
  pair("checks_failed", "failed checks", "");
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : " ") + parts[i];
  return out;
}

std::vector<FixDelivered> fixes_delivered(Store& s, const submissions::PackageChange& c, std::string* error) {
  std::vector<FixDelivered> out;
  if (c.status != "replaced" || c.changes.empty()) return out;
  // The upheld fix decisions on objections against this organisation in this round, and the results each
  // names (already linked to the replacement's rows, by system and benchmark).
  Stmt q(s.db(),
         "SELECT j.id, d.id, sy.name || '/' || x.benchmark FROM decisions d JOIN objections j ON j.id = d.objection_id "
         "JOIN rounds r ON r.id = j.round_id JOIN organisations g ON g.id = j.against_org "
         "JOIN objection_results oj ON oj.objection_id = j.id JOIN results x ON x.id = oj.result_id "
         "JOIN systems sy ON sy.id = x.system_id "
         "WHERE r.name = ?1 AND g.name = ?2 AND d.outcome = 'upheld' AND d.remedy = 'fix' ORDER BY j.id, 3");
  q.bind(1, c.round).bind(2, c.organisation);
  std::vector<std::tuple<long long, long long, std::string>> named;
  while (q.step()) named.emplace_back(q.col_int(0), q.col_int(1), q.col_text(2));
  if (!q.ok()) {
    *error = s.describe_error(q.rc(), "reading the fix decisions");
    return {};
  }
  for (size_t i = 0; i < named.size();) {
    const long long objection = std::get<0>(named[i]), decision = std::get<1>(named[i]);
    std::set<std::string> results;
    for (; i < named.size() && std::get<0>(named[i]) == objection; ++i) results.insert(std::get<2>(named[i]));
    // Putting back the package the fix replaced delivers nothing.
    {
      Stmt first(s.db(), "SELECT old_sha256 FROM fix_deliveries WHERE objection_id = ?1 ORDER BY id LIMIT 1");
      first.bind(1, objection);
      if (first.step() && first.col_text(0) == c.new_sha256) continue;
    }
    std::vector<submissions::ResultChange> mine;
    for (const auto& ch : c.changes)
      if (ch.change == "changed" && results.count(ch.result)) mine.push_back(ch);
    if (mine.empty()) continue;
    out.push_back({objection, decision, result_changes_json(mine)});
  }
  return out;
}

bool store_fix_deliveries(Store& s, const submissions::PackageChange& c, const std::vector<FixDelivered>& fixes,
                          long long seq, std::string* error) {
  // Recorded when the event was: the row says what its event says (review log --verify holds it to it).
  std::string at;
  {
    Stmt q(s.db(), "SELECT at FROM events WHERE seq = ?1");
    q.bind(1, seq);
    if (q.step()) at = q.col_text(0);
  }
  if (at.empty()) at = now_utc();
  for (const auto& f : fixes) {
    Stmt ins(s.db(),
             "INSERT INTO fix_deliveries (objection_id, decision_id, old_sha256, new_sha256, changes_json, event_seq, "
             "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    ins.bind(1, f.objection).bind(2, f.decision).bind(3, c.old_sha256).bind(4, c.new_sha256).bind(5, f.changes_json);
    ins.bind(6, seq).bind(7, at);
    if (!ins.run()) {
      *error = ins.error();
      return false;
    }
    if (!queue_fix_delivered(s, f.objection, seq, error)) return false;
  }
  return true;
}

std::vector<FixDelivery> read_fix_deliveries(Store& s, long long objection, std::string* error) {
  std::vector<FixDelivery> out;
  if (s.opened_version() < 14) return out;  // a store opened read-only before schema 14 has none
  Stmt q(s.db(),
         "SELECT id, decision_id, event_seq, old_sha256, new_sha256, changes_json, created_at FROM fix_deliveries "
         "WHERE objection_id = ?1 ORDER BY id");
  q.bind(1, objection);
  while (q.step())
    out.push_back({q.col_int(0), q.col_int(1), q.col_int(2), q.col_text(3), q.col_text(4), q.col_text(5), q.col_text(6)});
  if (!q.ok() && error) *error = s.describe_error(q.rc(), "reading the fixes delivered");
  return out;
}

std::string accused_package_sha256(Store& s, long long objection) {
  Stmt q(s.db(), "SELECT p.content_sha256 FROM objections j JOIN packages p ON p.round_id = j.round_id AND "
                 "p.organisation_id = j.against_org WHERE j.id = ?1");
  q.bind(1, objection);
  return q.step() ? q.col_text(0) : std::string();
}

std::string fix_state(const std::vector<FixDelivery>& deliveries, const std::string& fix_due, const std::string& now,
                      const std::string& current_sha256) {
  if (!deliveries.empty() && deliveries.back().new_sha256 == current_sha256) return "delivered";
  if (!fix_due.empty() && now > deadline_instant(fix_due)) return "overdue";
  return "due";
}

}  // namespace referee::review
