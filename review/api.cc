#include "review/api.h"

#include <sodium.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "base/digest.h"
#include "base/text.h"
#include "base/url.h"
#include "mllog/json_writer.h"
#include "review/policy.h"
#include "review/router.h"
#include "submissions/store.h"

namespace referee::review {

Response error_response(const Error& e) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("error").begin_object();
  w.key("status").value(e.status).key("code").value(e.code).key("message").value(e.message);
  if (!e.hint.empty()) w.key("hint").value(e.hint);
  if (e.version >= 0) w.key("version").value(e.version);
  w.end_object().end_object();
  Response r;
  r.status = e.status;
  r.body = w.str();
  return r;
}

Response error_response(int status, const std::string& code, const std::string& message, const std::string& hint) {
  return error_response(make_error(status, code, message, hint));
}

Response unknown_round(const std::string& text) { return error_response(unknown_round_error(text)); }

struct Api::Impl {
  std::string db_path;
  bool read_only = false;
  std::string rules_dir;
  std::mutex mu;  // guards stores, checked and checking; never held while a store opens
  std::condition_variable checked_cv;
  std::map<std::thread::id, std::unique_ptr<submissions::Store>> stores;
  bool checked = false;   // a connection opened with PRAGMA quick_check
  bool checking = false;  // one is opening with it now
  std::vector<Route> routes;

  // This thread's connection (opened on first use). Null with *error.
  submissions::Store* store(std::string* error) {
    const auto id = std::this_thread::get_id();
    bool check = false;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (auto it = stores.find(id); it != stores.end()) return it->second.get();
      // PRAGMA quick_check reads every page: the first connection checks the
      // store, the other threads' connections trust that check, so they wait
      // for it (once per Api); a thread that has its connection never waits.
      checked_cv.wait(lock, [this] { return checked || !checking; });
      if (!checked) check = checking = true;
    }
    // Opened outside the lock: a slow open (a big store's check, a busy
    // lock) holds up no other thread's request.
    std::unique_ptr<submissions::Store> s = submissions::Store::open(
        db_path, error, read_only ? submissions::OpenMode::ReadOnly : submissions::OpenMode::ReadWrite, check);
    std::lock_guard<std::mutex> lock(mu);
    if (check) {
      checking = false;
      checked = s != nullptr;  // failed: the next thread to open checks again
      checked_cv.notify_all();
    }
    if (!s) return nullptr;
    return (stores[id] = std::move(s)).get();
  }
};

std::vector<Route> all_routes() {
  std::vector<Route> out;
  for (auto part : {identity_routes, round_routes, objection_routes, audit_routes, notify_routes})
    for (auto& route : part()) out.push_back(std::move(route));
  return out;
}

Api::Api(std::string db_path, bool read_only) : impl_(std::make_unique<Impl>()) {
  impl_->db_path = std::move(db_path);
  impl_->read_only = read_only;
  impl_->routes = all_routes();
  if (sodium_init() < 0) {
    // libsodium could not initialise (no entropy source): tokens cannot be
    // made; authentication below still hashes with it, which works without.
  }
}

Api::~Api() = default;

const std::string& Api::db_path() const { return impl_->db_path; }

void Api::set_rules_dir(std::string dir) { impl_->rules_dir = std::move(dir); }

const std::string& Api::rules_dir() const { return impl_->rules_dir; }

std::string token_hash(const std::string& token) { return base::blake2b_hex(token); }

bool Api::authenticate(const Request& r, Actor* out, Response* error) {
  if (r.local_admin) {
    *out = Actor{};
    out->user = "local-admin";
    out->role = Role::Admin;
    out->local_admin = true;
    return true;
  }
  if (r.token.empty()) {
    *error = error_response(401, "unauthenticated", "this request needs a token",
                            "pass --token or set REFEREE_TOKEN (an administrator creates one with referee user add)");
    return false;
  }
  std::string err;
  auto* s = impl_->store(&err);
  if (!s) {
    *error = error_response(500, "store", err);
    return false;
  }
  submissions::Stmt q(s->db(),
                      "SELECT u.id, u.name, COALESCE(o.name, ''), u.role, t.revoked_at IS NOT NULL, "
                      "u.disabled_at IS NOT NULL FROM tokens t JOIN users u ON u.id = t.user_id "
                      "LEFT JOIN organisations o ON o.id = u.organisation_id WHERE t.hash = ?1");
  q.bind(1, token_hash(r.token));
  if (!q.step()) {
    if (!q.ok()) *error = error_response(500, "store", s->describe_error(q.rc(), "reading tokens"));
    else *error = error_response(401, "unauthenticated", "the token is not known to this store",
                                 "check REFEREE_TOKEN; an administrator creates tokens with referee user add");
    return false;
  }
  if (q.col_int(4) || q.col_int(5)) {
    *error = error_response(401, "revoked", "the token was revoked", "ask an administrator for a new one");
    return false;
  }
  out->user_id = q.col_int(0);
  out->user = q.col_text(1);
  out->organisation = q.col_text(2);
  parse_role(q.col_text(3), &out->role);
  out->local_admin = false;
  return true;
}

bool Api::can_see_round(const Actor& who, const std::string& round) {
  if (who.role != Role::Member) return true;
  std::string err;
  auto* s = impl_->store(&err);
  if (!s) return false;
  submissions::Stmt q(s->db(),
                      "SELECT r.id, COALESCE(rr.state, 'published') FROM rounds r LEFT JOIN round_reviews rr ON "
                      "rr.round_id = r.id WHERE r.name = ?1");
  q.bind(1, round);
  if (!q.step()) return q.ok();  // not in the store: nothing of it to hide
  return may_see_round(*s, who, q.col_int(0), q.col_text(1));
}

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  for (auto& seg : base::split(path, '/'))
    if (!seg.empty()) out.push_back(std::move(seg));
  return out;
}

// Matches `path` against `pattern`; *params gets the decoded captures.
bool match(const std::string& pattern, const std::vector<std::string>& segs, std::vector<std::string>* params,
           bool* bad_escape) {
  auto pat = split_path(pattern);
  if (pat.size() != segs.size()) return false;
  std::vector<std::string> got;
  for (size_t i = 0; i < pat.size(); ++i) {
    if (pat[i].size() > 2 && pat[i].front() == '{' && pat[i].back() == '}') {
      std::optional<std::string> v = base::percent_decode(segs[i]);  // '+' is a '+' in a path
      if (!v) {
        *bad_escape = true;
        return false;
      }
      got.push_back(std::move(*v));
    } else if (pat[i] != segs[i]) {
      return false;
    }
  }
  *params = std::move(got);
  return true;
}

}  // namespace

Response Api::handle(const Request& r) {
  try {
    auto segs = split_path(r.path);
    const Route* found = nullptr;
    std::vector<std::string> params;
    std::vector<std::string> methods;
    bool bad_escape = false;
    for (const auto& route : impl_->routes) {
      std::vector<std::string> p;
      if (!match(route.pattern, segs, &p, &bad_escape)) continue;
      if (route.method != r.method) {
        methods.push_back(route.method);
        continue;
      }
      found = &route;
      params = std::move(p);
      break;
    }
    if (bad_escape && !found) return error_response(400, "bad-request", "a bad %-escape in the path " + r.path);
    if (!found) {
      if (!methods.empty()) {
        std::string list;
        for (const auto& m : methods) list += (list.empty() ? "" : ", ") + m;
        return error_response(405, "method-not-allowed", r.method + " is not allowed on " + r.path,
                              "allowed: " + list);
      }
      return error_response(404, "not-found", "no route " + r.method + " " + r.path, "see docs/openapi.yaml");
    }
    if (found->writes && impl_->read_only)
      return error_response(503, "read-only", "this server serves the store read-only; it takes no changes");
    Actor who;
    Response err;
    if (!found->anonymous && !authenticate(r, &who, &err)) return err;
    std::string serr;
    auto* s = impl_->store(&serr);
    if (!s) return error_response(500, "store", serr);
    Context ctx{*s, who, r, *this, std::move(params)};
    if (found->writes) return found->handler(ctx);
    // A question reads one snapshot of the store, in one read transaction: the rows it joins agree with
    // each other while writers commit, and its hundreds of statements take the file's lock once.
    struct Snapshot {
      submissions::Store& s;
      bool open = false;
      ~Snapshot() {
        std::string ignored;
        if (open) s.exec("COMMIT", &ignored);
      }
    } snapshot{*s};
    std::string ignored;
    snapshot.open = s->exec("BEGIN", &ignored);
    return found->handler(ctx);
  } catch (const std::exception& e) {
    return error_response(500, "internal", e.what());
  }
}

}  // namespace referee::review
