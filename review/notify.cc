#include "review/notify.h"

#include <sodium.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "base/digest.h"
#include "base/text.h"
#include "base/url.h"
#include "base/utc_time.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/fixes.h"
#include "review/objections.h"
#include "review/policy.h"
#include "review/rounds.h"

namespace referee::review {

using mllog::Json;
using mllog::JsonWriter;
using submissions::Stmt;
using submissions::Store;

const std::vector<std::string>& notification_kinds() {
  static const std::vector<std::string> kinds = {
      "objection.filed",     // an objection against the organisation (neutral chairs: every one)
      "objection.response",  // the accused answered the organisation's objection
      "objection.withdrawn", // an objection against the organisation was withdrawn
      "vote.needed",         // the accused answered: the organisation's vote is asked for
      "comment",             // a comment on an objection the organisation is party to
      "decision",            // a decision (or its amendment) on an objection it is party to
      "deadline.extended",   // a chair gave the organisation more time
      "deadline.soon",       // a deadline it still has to meet is within 24 hours
      "ping",                // a test delivery
      "fix.delivered",       // a corrected package delivered the fix the organisation's objection won
      "user.token",          // a new member's token (referee user import --tokens-by-webhook)
  };
  return kinds;
}

namespace {

constexpr int kMaxHooksPerOwner = 20;

std::string after_seconds(const std::string& now, double seconds) {
  std::time_t t = 0;
  if (!base::parse_utc(now, &t)) t = std::time(nullptr);
  // Milliseconds kept from `now`, so that a back-off of a fraction of a second is one.
  double ms = 0;
  if (size_t dot = now.find('.'); dot != std::string::npos) ms = std::atof(("0" + now.substr(dot, 4)).c_str()) * 1000;
  auto tp = std::chrono::system_clock::from_time_t(t) + std::chrono::milliseconds(static_cast<long long>(ms + seconds * 1000));
  return base::utc_string(std::chrono::time_point_cast<std::chrono::system_clock::duration>(tp), base::UtcFormat::Millis);
}

bool check_url(const std::string& url, Error* err) {
  auto bad = [&](const std::string& why) {
    *err = make_error(400, "bad-url", "url: " + why, "an http:// or https:// URL the server can reach, without credentials");
    return false;
  };
  if (url.size() > 2048) return bad("longer than 2048 bytes");
  for (unsigned char c : url)
    if (c <= 0x20 || c == 0x7f) return bad("it holds a space or a control character");
  const std::string head = base::lower(url.substr(0, 8));
  const bool https = head.rfind("https://", 0) == 0, http = head.rfind("http://", 0) == 0;
  if (!https && !http) return bad("'" + base::excerpt(url) + "' is not an http:// or https:// URL");
  const std::string rest = url.substr(https ? 8 : 7);
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos) return bad("credentials in a URL would be shown in every list of hooks");
  if (base::url_host((https ? "https://" : "http://") + rest).empty()) return bad("it names no host");
  // A port, when given: 1 to 65535.
  const size_t close = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
    const std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::atoi(port.c_str()) < 1 || std::atoi(port.c_str()) > 65535)
      return bad("port '" + base::excerpt(port) + "' is not a number from 1 to 65535");
  }
  return true;
}

// The kinds a hook takes, each once in the order of notification_kinds(); ["*"] for all.
std::string events_json(const std::vector<std::string>& events) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_array();
  if (events.empty() || std::find(events.begin(), events.end(), "*") != events.end()) {
    w.value("*");
  } else {
    for (const auto& k : notification_kinds())
      if (std::find(events.begin(), events.end(), k) != events.end()) w.value(k);
  }
  w.end_array();
  return w.str();
}

std::vector<std::string> events_of(const std::string& json) {
  std::vector<std::string> out;
  Json j;
  std::string err;
  if (mllog::parse_json_permissive(json, &j, &err))
    for (const auto& x : j.items)
      if (x.kind == Json::Kind::String) out.push_back(x.s);
  return out;
}

const char* kHookColumns =
    "w.id, CASE WHEN w.user_id IS NULL THEN 'organisation' ELSE 'user' END, COALESCE(o.name, uo.name, ''), "
    "COALESCE(u.name, ''), w.url, w.created_by, w.created_at, COALESCE(w.removed_at, ''), w.events_json, "
    "COALESCE(w.organisation_id, u.organisation_id, 0), COALESCE(w.user_id, 0) FROM webhooks w "
    "LEFT JOIN organisations o ON o.id = w.organisation_id LEFT JOIN users u ON u.id = w.user_id "
    "LEFT JOIN organisations uo ON uo.id = u.organisation_id";

struct HookRow {
  Webhook hook;
  long long org_id = 0, user_id = 0;
};

HookRow hook_row(Stmt& q) {
  HookRow r;
  r.hook.id = q.col_int(0);
  r.hook.scope = q.col_text(1);
  r.hook.organisation = q.col_text(2);
  r.hook.user = q.col_text(3);
  r.hook.url = q.col_text(4);
  r.hook.created_by = q.col_text(5);
  r.hook.created_at = q.col_text(6);
  r.hook.removed_at = q.col_text(7);
  r.hook.events = events_of(q.col_text(8));
  r.org_id = q.col_int(9);
  r.user_id = q.col_int(10);
  return r;
}

// Whether `who` manages hook `h`: an administrator every hook; a user their own hooks and their
// organisation's.
bool manages(const Actor& who, const HookRow& h) {
  if (who.local_admin || who.role == Role::Admin) return true;
  if (h.hook.scope == "user") return h.user_id == who.user_id && who.user_id != 0;
  return !who.organisation.empty() && base::lower(h.hook.organisation) == base::lower(who.organisation);
}

Error no_hook(long long id) {
  return make_error(404, "not-found", "webhook " + std::to_string(id) + " does not exist or is not yours",
                    "referee webhook list shows yours");
}

Result<HookRow> find_hook(Store& s, const Actor& who, long long id) {
  std::string sql = std::string("SELECT ") + kHookColumns + " WHERE w.id = ?1";
  Stmt q(s.db(), sql.c_str());
  q.bind(1, id);
  if (!q.step()) return q.ok() ? no_hook(id) : make_error(500, "store", s.describe_error(q.rc(), "reading webhooks"));
  HookRow h = hook_row(q);
  if (!manages(who, h)) return no_hook(id);
  return h;
}

std::string new_secret() {
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  return "whsec_" + base::hex(raw, sizeof raw);
}

// What an objection is, for its notifications.
struct ObjectionInfo {
  long long id = 0, round_id = 0, by_org = 0, against_org = 0;
  std::string round, by, against, title, state;
};

bool objection_info(Store& s, long long id, ObjectionInfo* out) {
  Stmt q(s.db(),
         "SELECT j.id, j.round_id, r.name, j.by_org, j.against_org, b.name, a.name, j.title, j.state FROM objections j "
         "JOIN rounds r ON r.id = j.round_id JOIN organisations b ON b.id = j.by_org JOIN organisations a ON "
         "a.id = j.against_org WHERE j.id = ?1");
  q.bind(1, id);
  if (!q.step()) return false;
  *out = {q.col_int(0), q.col_int(1), q.col_int(3), q.col_int(4), q.col_text(2), q.col_text(5), q.col_text(6),
          q.col_text(7), q.col_text(8)};
  return true;
}

// A hook that takes notifications for an organisation (its own hook, and its live users' hooks), or the
// neutral chairs' hooks (org_id 0).
struct Target {
  long long hook = 0;
  std::vector<std::string> events;
};

#define LIVE_USER                                                                                              \
  "u.disabled_at IS NULL AND EXISTS (SELECT 1 FROM tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL)"

std::vector<Target> targets_of(Store& s, long long org_id) {
  std::vector<Target> out;
  // A user's own hook is told only while the user has a live token: revoking a user's tokens ends it.
  Stmt q(s.db(), org_id ? "SELECT w.id, w.events_json FROM webhooks w WHERE w.removed_at IS NULL AND (w.organisation_id = ?1 "
                          "OR w.user_id IN (SELECT u.id FROM users u WHERE u.organisation_id = ?1 AND " LIVE_USER ")) "
                          "ORDER BY w.id"
                        : "SELECT w.id, w.events_json FROM webhooks w JOIN users u ON u.id = w.user_id WHERE "
                          "w.removed_at IS NULL AND u.role = 'chair' AND u.organisation_id IS NULL AND " LIVE_USER
                          " AND ?1 = 0 ORDER BY w.id");
  q.bind(1, org_id);
  while (q.step()) out.push_back({q.col_int(0), events_of(q.col_text(1))});
  return out;
}

bool takes(const Target& t, const std::string& kind) {
  return std::find(t.events.begin(), t.events.end(), "*") != t.events.end() ||
         std::find(t.events.begin(), t.events.end(), kind) != t.events.end();
}

// Queues `body` of `kind` to each of `targets` that takes it, once per hook and `dedupe`.
bool queue(Store& s, const std::vector<Target>& targets, const std::string& kind, const std::string& dedupe,
           const std::string& body, std::string* error) {
  const std::string now = now_utc();
  for (const auto& t : targets) {
    if (!takes(t, kind)) continue;
    // A ping waits for the one before it: a member cannot fill the queue with them.
    if (kind == "ping") {
      Stmt p(s.db(), "SELECT 1 FROM webhook_deliveries WHERE webhook_id = ?1 AND kind = 'ping' AND state IN ('pending', 'sending')");
      p.bind(1, t.hook);
      if (p.step()) continue;
    }
    unsigned char raw[12];
    randombytes_buf(raw, sizeof raw);
    Stmt ins(s.db(),
             "INSERT OR IGNORE INTO webhook_deliveries (webhook_id, kind, dedupe, payload, state, next_attempt_at, "
             "created_at, key) VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5, ?6)");
    ins.bind(1, t.hook).bind(2, kind).bind(3, dedupe).bind(4, body).bind(5, now).bind(6, "d_" + base::hex(raw, sizeof raw));
    if (!ins.run()) {
      *error = s.describe_error(ins.rc(), "queueing a notification");
      return false;
    }
  }
  return true;
}

// The body of a notification about objection `o`.
std::string body_of(const std::string& kind, const ObjectionInfo& o, long long seq, const std::string& summary,
                    const std::string& deadline = "", const std::string& due = "") {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("kind").value(kind).key("round").value(o.round);
  if (o.id) {
    w.key("objection").begin_object().key("id").value(o.id).key("title").value(o.title).key("by").value(o.by);
    w.key("against").value(o.against).key("state").value(o.state);
    w.key("page").value("/review/objections/" + std::to_string(o.id));
    w.key("api").value("/api/v1/objections/" + std::to_string(o.id)).end_object();
  }
  (void)seq;  // not sent: a member counting the log's events would count those of rounds hidden from them
  if (!deadline.empty()) w.key("deadline").begin_object().key("name").value(deadline).key("due").value(due).end_object();
  w.key("summary").value(summary).key("at").value(now_utc()).end_object();
  return w.str();
}

long long objection_id_of(const std::string& subject) {
  if (subject.rfind("objection/", 0) != 0) return 0;
  return std::atoll(subject.c_str() + 10);
}

std::string quoted_title(const ObjectionInfo& o) { return "objection " + std::to_string(o.id) + " (\"" + base::excerpt(o.title) + "\")"; }

}  // namespace

// ------------------------------------------------------------ hooks

Result<NewWebhook> add_webhook(Store& s, const Actor& who, const AddWebhook& in) {
  Error err;
  if (!check_url(in.url, &err)) return err;
  // The scheme as curl and every list write it.
  const size_t sep = in.url.find("://");
  const std::string url = base::lower(in.url.substr(0, sep)) + in.url.substr(sep);
  if (in.has_events && in.events.empty())
    return make_error(400, "bad-field", "events: an empty list would take nothing", "leave it out to take every kind");
  for (const auto& e : in.events) {
    const auto& kinds = notification_kinds();
    if (e != "*" && std::find(kinds.begin(), kinds.end(), e) == kinds.end()) {
      std::string list;
      for (const auto& k : kinds) list += (list.empty() ? "" : ", ") + k;
      return make_error(400, "bad-field", "events: '" + base::excerpt(e) + "' is not a kind of notification",
                        "the kinds: " + list + " (or * for all)");
    }
  }
  const std::string scope = in.scope.empty() ? "organisation" : in.scope;
  if (scope != "organisation" && scope != "user")
    return make_error(400, "bad-field", "scope '" + base::excerpt(in.scope) + "' is not organisation or user");
  long long org_id = 0, user_id = 0;
  std::string org_name;
  if (scope == "user") {
    if (!in.organisation.empty()) return make_error(400, "bad-field", "a user's hook names no organisation");
    if (!who.user_id)
      return make_error(422, "no-user", "the local administrator is no user: it has no hook of its own",
                        "register an organisation's hook (--organisation ORG), or use a user's token");
    user_id = who.user_id;
  } else if (who.local_admin || who.role == Role::Admin) {
    if (in.organisation.empty())
      return make_error(400, "missing-field", "an administrator names the organisation whose hook this is",
                        "--organisation ORG (API field `organisation`)");
    if (!find_organisation(s, in.organisation, &org_id, &org_name)) return unknown_organisation_error(in.organisation);
  } else {
    if (who.organisation.empty())
      return forbidden("a chair of no organisation has no organisation's hook", "register your own (scope user)");
    if (!in.organisation.empty() && base::lower(in.organisation) != base::lower(who.organisation))
      return forbidden("a member of " + who.organisation + " registers hooks for " + who.organisation + " only");
    if (!find_organisation(s, who.organisation, &org_id, &org_name)) return unknown_organisation_error(who.organisation);
  }
  NewWebhook out;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    Stmt n(s.db(), user_id ? "SELECT COUNT(*) FROM webhooks WHERE user_id = ?1 AND removed_at IS NULL"
                           : "SELECT COUNT(*) FROM webhooks WHERE organisation_id = ?1 AND removed_at IS NULL");
    n.bind(1, user_id ? user_id : org_id);
    if (n.step() && n.col_int(0) >= kMaxHooksPerOwner)
      return make_error(422, "too-many", "at most " + std::to_string(kMaxHooksPerOwner) + " live hooks per " + scope,
                        "remove one first (referee webhook remove ID)");
    Stmt dup(s.db(), user_id ? "SELECT id FROM webhooks WHERE user_id = ?1 AND url = ?2 AND removed_at IS NULL"
                             : "SELECT id FROM webhooks WHERE organisation_id = ?1 AND url = ?2 AND removed_at IS NULL");
    dup.bind(1, user_id ? user_id : org_id).bind(2, url);
    if (dup.step())
      return make_error(409, "exists", "webhook " + std::to_string(dup.col_int(0)) + " sends to " + url + " already",
                        "each notification would come twice: remove it first to change its kinds");
    const std::string now = now_utc(), secret = new_secret(), evs = events_json(in.events);
    const std::string by = who.local_admin ? "local-admin" : who.user;
    Stmt ins(s.db(),
             "INSERT INTO webhooks (organisation_id, user_id, url, secret, events_json, created_by, created_at) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (org_id) ins.bind(1, org_id); else ins.bind_null(1);
    if (user_id) ins.bind(2, user_id); else ins.bind_null(2);
    ins.bind(3, url).bind(4, secret).bind(5, evs).bind(6, by).bind(7, now);
    if (!ins.run()) return make_error(500, "store", s.describe_error(ins.rc(), "adding a webhook"));
    const long long id = sqlite3_last_insert_rowid(s.db());
    out.secret = secret;
    out.hook = {id, scope, user_id ? who.organisation : org_name, user_id ? who.user : "", url, by, now, "", events_of(evs)};
    JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("webhook").value(id).key("scope").value(scope).key("organisation").value(out.hook.organisation);
    p.key("user").value(out.hook.user).key("url").value(url).key("events").raw(evs);
    p.key("secret_sha256").value(base::sha256_hex(secret)).key("created_at").value(now).end_object();
    *event = Change{"webhook.add", "webhook/" + std::to_string(id), p.str()};
    return id;
  });
  if (!w.ok()) return w.error();
  return out;
}

Result<std::vector<Webhook>> list_webhooks(Store& s, const Actor& who) {
  std::vector<Webhook> out;
  std::string sql = std::string("SELECT ") + kHookColumns + " ORDER BY w.id";
  Stmt q(s.db(), sql.c_str());
  while (q.step()) {
    HookRow h = hook_row(q);
    if (manages(who, h)) out.push_back(h.hook);
  }
  if (!q.ok()) return make_error(500, "store", s.describe_error(q.rc(), "reading webhooks"));
  return out;
}

Result<Webhook> remove_webhook(Store& s, const Actor& who, long long id) {
  Webhook out;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    auto h = find_hook(s, who, id);
    if (!h.ok()) return h.error();
    out = h.value().hook;
    if (!out.removed_at.empty())
      return make_error(422, "removed", "webhook " + std::to_string(id) + " was removed at " + out.removed_at);
    out.removed_at = now_utc();
    Stmt up(s.db(), "UPDATE webhooks SET removed_at = ?1 WHERE id = ?2");
    up.bind(1, out.removed_at).bind(2, id);
    if (!up.run()) return make_error(500, "store", s.describe_error(up.rc(), "removing a webhook"));
    // What was still to be sent to it is not sent.
    Stmt drop(s.db(), "UPDATE webhook_deliveries SET state = 'failed', last_error = 'the hook was removed', payload = "
                      "CASE WHEN kind = 'user.token' AND json_valid(payload) THEN json_set(payload, '$.token', "
                      "'(not delivered; not kept: make a new token with referee user token)') ELSE payload END "
                      "WHERE webhook_id = ?1 AND state IN ('pending', 'sending')");
    drop.bind(1, id);
    if (!drop.run()) return make_error(500, "store", s.describe_error(drop.rc(), "removing a webhook"));
    JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("webhook").value(id).key("removed_at").value(out.removed_at).end_object();
    *event = Change{"webhook.remove", "webhook/" + std::to_string(id), p.str()};
    return id;
  });
  if (!w.ok()) return w.error();
  return out;
}

Result<std::vector<Delivery>> webhook_deliveries(Store& s, const Actor& who, long long id, int limit) {
  auto h = find_hook(s, who, id);
  if (!h.ok()) return h.error();
  std::vector<Delivery> out;
  Stmt q(s.db(),
         "SELECT id, webhook_id, attempts, COALESCE(last_status, 0), kind, state, created_at, next_attempt_at, "
         "COALESCE(delivered_at, ''), COALESCE(last_error, ''), log_json, CASE WHEN kind = 'user.token' AND "
         "json_valid(payload) THEN json_set(payload, '$.token', '(not shown)') ELSE payload END, key FROM webhook_deliveries "
         "WHERE webhook_id = ?1 ORDER BY id DESC LIMIT ?2");
  q.bind(1, id).bind(2, static_cast<long long>(limit));
  while (q.step())
    out.push_back({q.col_int(0), q.col_int(1), q.col_int(2), q.col_int(3), q.col_text(4), q.col_text(5), q.col_text(6),
                   q.col_text(7), q.col_text(8), q.col_text(9), q.col_text(10), q.col_text(11), q.col_text(12)});
  if (!q.ok()) return make_error(500, "store", s.describe_error(q.rc(), "reading deliveries"));
  return out;
}

Result<Delivery> ping_webhook(Store& s, const Actor& who, long long id) {
  auto h = find_hook(s, who, id);
  if (!h.ok()) return h.error();
  if (!h.value().hook.removed_at.empty())
    return make_error(422, "removed", "webhook " + std::to_string(id) + " was removed at " + h.value().hook.removed_at);
  std::string e;
  if (!s.begin(&e)) return make_error(503, "busy", e, "try again");
  ObjectionInfo none;
  const std::string now = now_utc();
  const std::string body = body_of("ping", none, 0, "a test delivery asked for by " + (who.local_admin ? std::string("local-admin") : who.user));
  if (!queue(s, {{id, {"*"}}}, "ping", "ping:" + now, body, &e) || !s.commit(&e)) {
    s.rollback();
    return make_error(500, "store", e);
  }
  auto list = webhook_deliveries(s, who, id, 1);
  if (!list.ok()) return list.error();
  if (list.value().empty() || list.value()[0].kind != "ping" || list.value()[0].created_at != now)
    return make_error(422, "pending", "webhook " + std::to_string(id) + " has a ping not sent yet",
                      "wait for it: referee webhook deliveries " + std::to_string(id));
  return list.value()[0];
}

// ------------------------------------------------------------ what the review tells

long long queue_token_delivery(Store& s, long long org_id, const std::string& user, const std::string& role,
                               const std::string& token, Error* err) {
  std::string org;
  {
    Stmt n(s.db(), "SELECT name FROM organisations WHERE id = ?1");
    n.bind(1, org_id);
    if (n.step()) org = n.col_text(0);
  }
  // Only a hook an administrator made takes tokens: a member could otherwise swap in their own and receive
  // the tokens of the colleagues (and chairs) onboarded next.
  Stmt q(s.db(),
         "SELECT w.id, w.url, w.events_json FROM webhooks w WHERE w.organisation_id = ?1 AND w.removed_at IS NULL AND "
         "(w.created_by = 'local-admin' OR EXISTS (SELECT 1 FROM users u WHERE u.name = w.created_by AND u.role = "
         "'admin')) ORDER BY w.id");
  q.bind(1, org_id);
  long long hook = 0;
  while (q.step() && !hook) {
    const std::string url = q.col_text(1);
    const bool safe = url.rfind("https://", 0) == 0 || base::is_loopback_host(base::url_host(url));
    if (safe && takes({q.col_int(0), events_of(q.col_text(2))}, "user.token")) hook = q.col_int(0);
  }
  if (!hook) {
    *err = make_error(422, "no-webhook",
                      org + " has no webhook to take its members' tokens: a live organisation hook an administrator "
                            "registered, whose URL is https:// (or http:// to this machine) and that takes user.token",
                      "referee webhook add --url https://... --organisation " + org + " (every kind, or --event user.token)");
    return 0;
  }
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("kind").value("user.token").key("organisation").value(org).key("user").value(user);
  w.key("role").value(role).key("token").value(token);
  w.key("summary").value("a token for " + user + " (" + role + " of " + org + "): give it to them alone, as REFEREE_TOKEN");
  w.key("at").value(now_utc()).end_object();
  std::string e;
  if (!queue(s, {{hook, {"*"}}}, "user.token", "user.token:" + user + ":" + token.substr(0, 12), w.str(), &e)) {
    *err = make_error(500, "store", e);
    return 0;
  }
  return hook;
}

bool queue_fix_delivered(Store& s, long long objection, long long seq, std::string* error) {
  ObjectionInfo o;
  if (!objection_info(s, objection, &o)) return true;
  const std::string body =
      body_of("fix.delivered", o, seq, o.against + " delivered the corrected package that " + quoted_title(o) + " asked for");
  const std::string dedupe = "fix.delivered:" + std::to_string(seq);
  return queue(s, targets_of(s, o.by_org), "fix.delivered", dedupe, body, error) &&
         queue(s, targets_of(s, 0), "fix.delivered", dedupe, body, error);
}

bool queue_event_notifications(Store& s, const Actor& who, const std::string& action, const std::string& subject,
                               const std::string& payload, long long seq, std::string* error) {
  const long long oid = objection_id_of(subject);
  if (!oid) return true;
  ObjectionInfo o;
  if (!objection_info(s, oid, &o)) return true;
  const std::string dedupe = "event:" + std::to_string(seq);
  const std::string actor = who.local_admin ? "local-admin" : who.user;
  if (action == "objection.file") {
    const std::string body = body_of("objection.filed", o, seq, o.by + " filed " + quoted_title(o) + " against " + o.against);
    return queue(s, targets_of(s, o.against_org), "objection.filed", dedupe, body, error) &&
           queue(s, targets_of(s, 0), "objection.filed", dedupe, body, error);
  }
  if (action == "response.add") {
    if (!queue(s, targets_of(s, o.by_org), "objection.response", dedupe,
               body_of("objection.response", o, seq, o.against + " responded to " + quoted_title(o)), error))
      return false;
    // The case is heard: each submitter of the round that has not voted is asked for its vote, once.
    for (const auto& name : round_submitters(s, o.round_id)) {
      long long org = 0;
      if (!find_organisation(s, name, &org, nullptr)) continue;
      Stmt v(s.db(), "SELECT 1 FROM votes WHERE objection_id = ?1 AND organisation_id = ?2");
      v.bind(1, o.id).bind(2, org);
      if (v.step()) continue;
      if (!queue(s, targets_of(s, org), "vote.needed", "vote.needed:" + std::to_string(o.id),
                 body_of("vote.needed", o, seq, o.against + " has answered " + quoted_title(o) + ": " + name + "'s vote is asked for"),
                 error))
        return false;
    }
    return true;
  }
  if (action == "comment.add") {
    const std::string body = body_of("comment", o, seq, actor + " commented on " + quoted_title(o));
    for (long long org : {o.by_org, o.against_org}) {
      if (org == o.by_org ? base::lower(o.by) == base::lower(who.organisation) : base::lower(o.against) == base::lower(who.organisation))
        continue;  // not to the commenter's own organisation
      if (!queue(s, targets_of(s, org), "comment", dedupe, body, error)) return false;
    }
    return true;
  }
  if (action == "decision.record" || action == "decision.amend") {
    Json p;
    std::string perr, outcome, remedy;
    if (mllog::parse_json_permissive(payload, &p, &perr)) {
      if (const Json* x = p.find("outcome"); x && x->kind == Json::Kind::String) outcome = x->s;
      if (const Json* x = p.find("remedy"); x && x->kind == Json::Kind::String) remedy = x->s;
    }
    const std::string body = body_of("decision", o, seq,
                                     std::string(action == "decision.amend" ? "the decision on " : "decided: ") + quoted_title(o) +
                                         (action == "decision.amend" ? " was amended: " : " ") + outcome +
                                         (remedy.empty() || remedy == "none" ? "" : ", remedy " + remedy));
    return queue(s, targets_of(s, o.by_org), "decision", dedupe, body, error) &&
           queue(s, targets_of(s, o.against_org), "decision", dedupe, body, error) &&
           queue(s, targets_of(s, 0), "decision", dedupe, body, error);
  }
  if (action == "objection.withdraw")
    return queue(s, targets_of(s, o.against_org), "objection.withdrawn", dedupe,
                 body_of("objection.withdrawn", o, seq, o.by + " withdrew " + quoted_title(o)), error);
  if (action == "objection.extend") {
    Json p;
    std::string perr, org, deadline, until;
    if (mllog::parse_json_permissive(payload, &p, &perr)) {
      if (const Json* x = p.find("organisation"); x && x->kind == Json::Kind::String) org = x->s;
      if (const Json* x = p.find("deadline"); x && x->kind == Json::Kind::String) deadline = x->s;
      if (const Json* x = p.find("until"); x && x->kind == Json::Kind::String) until = x->s;
    }
    long long org_id = 0;
    if (org.empty() || !find_organisation(s, org, &org_id, nullptr)) return true;
    return queue(s, targets_of(s, org_id), "deadline.extended", dedupe,
                 body_of("deadline.extended", o, seq, org + " has until " + until + " for " + deadline + " on " + quoted_title(o),
                         deadline, until),
                 error);
  }
  return true;
}

int queue_deadline_reminders(Store& s, const std::string& now, std::string* error) {
  const std::string until = deadline_instant(after_seconds(now, 24 * 3600).substr(0, 19) + "Z");
  const std::string from = deadline_instant(now.substr(0, 19) + "Z");
  auto soon = [&](const std::string& due) {
    if (due.empty()) return false;
    const std::string at = deadline_instant(due);
    return at > from && at <= until;
  };
  int queued = 0;
  auto count_queue = [&](long long org, const std::string& dedupe, const std::string& body) {
    const long long before = sqlite3_total_changes(s.db());
    if (!queue(s, targets_of(s, org), "deadline.soon", dedupe, body, error)) return false;
    queued += static_cast<int>(sqlite3_total_changes(s.db()) - before);
    return true;
  };
  std::string e;
  if (!s.begin(&e)) {
    *error = e;
    return -1;
  }
  auto fail = [&]() {
    s.rollback();
    return -1;
  };
  Stmt rq(s.db(), "SELECT r.id, r.name FROM round_reviews v JOIN rounds r ON r.id = v.round_id WHERE v.state = 'review'");
  std::vector<std::pair<long long, std::string>> rounds;
  while (rq.step()) rounds.emplace_back(rq.col_int(0), rq.col_text(1));
  for (const auto& [rid, rname] : rounds) {
    Actor admin;
    admin.local_admin = true;
    admin.role = Role::Admin;
    RoundInfo r;
    Error err;
    if (!find_round(s, admin, rname, &r, &err)) continue;
    ObjectionInfo round_only;
    round_only.round = r.name;
    std::vector<long long> submitters;
    for (const auto& name : round_submitters(s, rid)) {
      long long org = 0;
      if (find_organisation(s, name, &org, nullptr)) submitters.push_back(org);
    }
    if (soon(r.schedule.objections_due))
      for (long long org : submitters)
        if (!count_queue(org, "deadline:objections_due:" + r.name + ":" + r.schedule.objections_due,
                         body_of("deadline.soon", round_only, 0, "objections to " + r.name + " are due " + r.schedule.objections_due,
                                 "objections_due", r.schedule.objections_due)))
          return fail();
    Stmt oq(s.db(), "SELECT id FROM objections WHERE round_id = ?1 AND state IN ('open', 'responded') ORDER BY id");
    oq.bind(1, rid);
    std::vector<long long> open;
    while (oq.step()) open.push_back(oq.col_int(0));
    for (long long oid : open) {
      ObjectionInfo o;
      if (!objection_info(s, oid, &o)) continue;
      // The accused's response.
      Stmt rs(s.db(), "SELECT 1 FROM responses WHERE objection_id = ?1 AND organisation_id = ?2");
      rs.bind(1, oid).bind(2, o.against_org);
      if (!rs.step()) {
        const std::string due = extended_deadline(r.schedule.responses_due, extended_until(s, oid, o.against_org, "responses_due"));
        if (soon(due) && !count_queue(o.against_org, "deadline:responses_due:" + std::to_string(oid) + ":" + due,
                                      body_of("deadline.soon", o, 0, o.against + "'s response to " + quoted_title(o) + " is due " + due,
                                              "responses_due", due)))
          return fail();
      }
      // Each vote still owed.
      std::string votes_due = r.schedule.decisions_due;
      Stmt vd(s.db(), "SELECT COALESCE(votes_due, '') FROM objections WHERE id = ?1");
      vd.bind(1, oid);
      if (vd.step() && !vd.col_text(0).empty()) votes_due = vd.col_text(0);
      for (long long org : submitters) {
        Stmt v(s.db(), "SELECT 1 FROM votes WHERE objection_id = ?1 AND organisation_id = ?2");
        v.bind(1, oid).bind(2, org);
        if (v.step()) continue;
        const std::string due = extended_deadline(votes_due, extended_until(s, oid, org, "decisions_due"));
        if (soon(due) && !count_queue(org, "deadline:votes_due:" + std::to_string(oid) + ":" + due,
                                      body_of("deadline.soon", o, 0, "the vote on " + quoted_title(o) + " is due " + due,
                                              "votes_due", due)))
          return fail();
      }
    }
    // Fixes owed.
    Stmt fq(s.db(),
            "SELECT j.id, d.fix_due FROM decisions d JOIN objections j ON j.id = d.objection_id WHERE j.round_id = ?1 AND "
            "d.outcome = 'upheld' AND d.remedy = 'fix' AND d.fix_due IS NOT NULL");
    fq.bind(1, rid);
    std::vector<std::pair<long long, std::string>> fixes;
    while (fq.step()) fixes.emplace_back(fq.col_int(0), fq.col_text(1));
    for (const auto& [oid, due] : fixes) {
      ObjectionInfo o;
      if (!objection_info(s, oid, &o) || !soon(due)) continue;
      if (fix_state(read_fix_deliveries(s, oid), due, now, accused_package_sha256(s, oid)) == "delivered") continue;
      if (!count_queue(o.against_org, "deadline:fix_due:" + std::to_string(oid) + ":" + due,
                       body_of("deadline.soon", o, 0, o.against + "'s corrected package for " + quoted_title(o) + " is due " + due,
                               "fix_due", due)))
        return fail();
    }
  }
  if (!rq.ok()) {
    *error = s.describe_error(rq.rc(), "reading the rounds under review");
    return fail();
  }
  if (!s.commit(&e)) {
    *error = e;
    return fail();
  }
  return queued;
}

// ------------------------------------------------------------ sending

std::vector<Outgoing> claim_deliveries(Store& s, const std::string& now, int limit, double lease_seconds, std::string* error) {
  std::vector<Outgoing> out;
  {
    // Nothing due: no write lock taken (the sender asks every half second).
    Stmt any(s.db(), "SELECT 1 FROM webhook_deliveries WHERE state IN ('pending', 'sending') AND "
                     "COALESCE(lease_until, next_attempt_at) <= ?1 LIMIT 1");
    any.bind(1, now);
    if (!any.step()) {
      if (!any.ok()) *error = s.describe_error(any.rc(), "reading deliveries");
      return out;
    }
  }
  std::string e;
  if (!s.begin(&e)) {
    *error = e;
    return out;
  }
  // At most two of one hook in a batch, the oldest first: a hook that is slow or never answers delays the
  // others' by a few of its own timeouts at most.
  Stmt q(s.db(),
         "SELECT id, webhook_id, attempts, url, secret, kind, payload, key FROM (SELECT d.id, d.webhook_id, d.attempts, "
         "w.url, w.secret, d.kind, d.payload, d.key, d.next_attempt_at, ROW_NUMBER() OVER (PARTITION BY d.webhook_id "
         "ORDER BY d.next_attempt_at, d.id) AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
         "WHERE w.removed_at IS NULL AND ((d.state = 'pending' AND d.next_attempt_at <= ?1) OR (d.state = 'sending' "
         "AND d.lease_until <= ?1))) WHERE n <= 2 ORDER BY next_attempt_at, id LIMIT ?2");
  q.bind(1, now).bind(2, static_cast<long long>(limit));
  while (q.step())
    out.push_back({q.col_int(0), q.col_int(1), q.col_int(2), q.col_text(3), q.col_text(4), q.col_text(5), q.col_text(6),
                   q.col_text(7)});
  if (!q.ok()) {
    *error = s.describe_error(q.rc(), "reading deliveries");
    s.rollback();
    return {};
  }
  const std::string lease = after_seconds(now, lease_seconds);
  for (const auto& d : out) {
    Stmt up(s.db(), "UPDATE webhook_deliveries SET state = 'sending', lease_until = ?1 WHERE id = ?2");
    up.bind(1, lease).bind(2, d.id);
    if (!up.run()) {
      *error = s.describe_error(up.rc(), "claiming a delivery");
      s.rollback();
      return {};
    }
  }
  if (!s.commit(&e)) {
    *error = e;
    s.rollback();
    return {};
  }
  return out;
}

bool record_attempt(Store& s, const Outgoing& d, int status, const std::string& error, double ms, const Backoff& backoff,
                    std::string* err, bool counted) {
  const std::string now = now_utc();
  if (!counted) {
    Stmt up(s.db(), "UPDATE webhook_deliveries SET state = 'pending', lease_until = NULL, next_attempt_at = ?1 "
                    "WHERE id = ?2 AND state = 'sending'");
    up.bind(1, after_seconds(now, backoff.base_seconds)).bind(2, d.id);
    if (!up.run()) {
      *err = s.describe_error(up.rc(), "recording a delivery");
      return false;
    }
    return true;
  }
  const long long attempts = d.attempts + 1;
  const bool ok = error.empty() && status >= 200 && status < 300;
  std::string state = "delivered", next = now;
  if (!ok) {
    state = attempts >= backoff.attempts ? "failed" : "pending";
    next = after_seconds(now, std::min(backoff.max_seconds, backoff.base_seconds * std::pow(2.0, static_cast<double>(attempts - 1))));
  }
  JsonWriter a(0, mllog::JsonText::kUtf8);
  a.begin_object().key("at").value(now).key("status").value(static_cast<long long>(status)).key("error").value(error);
  a.key("ms").value(std::round(ms * 10) / 10).end_object();
  std::string e;
  if (!s.begin(&e)) {
    *err = e;
    return false;
  }
  Stmt up(s.db(),
          "UPDATE webhook_deliveries SET state = ?1, attempts = ?2, next_attempt_at = ?3, lease_until = NULL, "
          "last_status = ?4, last_error = ?5, delivered_at = ?6, log_json = json_insert(log_json, '$[#]', json(?7)), "
          // A token is kept only until it is delivered or given up.
          "payload = CASE WHEN kind = 'user.token' AND ?1 <> 'pending' AND json_valid(payload) THEN json_set(payload, "
          "'$.token', CASE WHEN ?1 = 'delivered' THEN '(delivered; not kept)' ELSE '(not delivered; not kept: make a new "
          "token with referee user token)' END) ELSE payload END WHERE id = ?8 AND state = 'sending'");
  up.bind(1, state).bind(2, attempts).bind(3, next).bind(4, static_cast<long long>(status));
  if (ok) up.bind_null(5); else up.bind(5, error);
  if (ok) up.bind(6, now); else up.bind_null(6);
  up.bind(7, a.str()).bind(8, d.id);
  if (!up.run() || !s.commit(&e)) {
    *err = e.empty() ? s.describe_error(up.rc(), "recording a delivery") : e;
    s.rollback();
    return false;
  }
  return true;
}

}  // namespace referee::review
