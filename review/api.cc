#include "review/api.h"

#include <sodium.h>

#include <map>
#include <mutex>
#include <thread>

#include "mllog/json_writer.h"
#include "submissions/store.h"

namespace referee::review {

Response error_response(int status, const std::string& code, const std::string& message, const std::string& hint) {
  mllog::JsonWriter w(0);
  w.begin_object().key("error").begin_object();
  w.key("status").value(status).key("code").value(code).key("message").value(message);
  if (!hint.empty()) w.key("hint").value(hint);
  w.end_object().end_object();
  Response r;
  r.status = status;
  r.body = w.str();
  return r;
}

struct Api::Impl {
  std::string db_path;
  bool read_only = false;
  std::mutex mu;
  std::map<std::thread::id, std::unique_ptr<submissions::Store>> stores;

  // This thread's connection (opened on first use). Null with *error.
  submissions::Store* store(std::string* error) {
    std::lock_guard<std::mutex> lock(mu);
    auto& s = stores[std::this_thread::get_id()];
    if (!s) s = submissions::Store::open(db_path, error, read_only ? submissions::OpenMode::ReadOnly
                                                                    : submissions::OpenMode::ReadWrite);
    return s.get();
  }
};

Api::Api(std::string db_path, bool read_only) : impl_(std::make_unique<Impl>()) {
  impl_->db_path = std::move(db_path);
  impl_->read_only = read_only;
  if (sodium_init() < 0) {
    // libsodium could not initialise (no entropy source): tokens cannot be
    // made; authentication below still hashes with it, which works without.
  }
}

Api::~Api() = default;

const std::string& Api::db_path() const { return impl_->db_path; }

namespace {

std::string token_hash(const std::string& token) {
  unsigned char out[32];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(token.data()), token.size(), nullptr, 0);
  static const char* hex = "0123456789abcdef";
  std::string h;
  for (unsigned char c : out) {
    h += hex[c >> 4];
    h += hex[c & 15];
  }
  return h;
}

}  // namespace

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
                      "SELECT rr.state FROM round_reviews rr JOIN rounds r ON r.id = rr.round_id WHERE r.name = ?1");
  q.bind(1, round);
  if (!q.step()) return q.ok();  // no review record: published results
  if (q.col_text(0) == "published") return true;
  submissions::Stmt sub(s->db(),
                        "SELECT 1 FROM packages p JOIN rounds r ON r.id = p.round_id JOIN organisations o "
                        "ON o.id = p.organisation_id WHERE r.name = ?1 AND o.name = ?2");
  sub.bind(1, round).bind(2, who.organisation);
  return sub.step();
}

Response Api::handle(const Request& r) {
  try {
    Actor who;
    Response err;
    if (!authenticate(r, &who, &err)) return err;
    return error_response(404, "not-found", "no route " + r.method + " " + r.path, "see docs/openapi.yaml");
  } catch (const std::exception& e) {
    return error_response(500, "internal", e.what());
  }
}

}  // namespace referee::review
