// Users, their tokens and /me. A token is "rft_" and 64 hex digits of
// libsodium randomness, returned once; the store keeps only its BLAKE2b-256
// hash (as Api::authenticate computes it) and its first 12 characters.
#include <sodium.h>

#include <functional>

#include "base/digest.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/router.h"

namespace referee::review {

namespace {

std::string hash_of(const std::string& token) { return token_hash(token); }

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char ch : n)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
          ch == '-' || ch == '@'))
      return false;
  return true;
}

// 403 unless the actor is an administrator.
bool admin_only(const Context& c, Response* err) {
  if (authorize(c.who, Action::ManageUsers, {}, "") != Access::Forbidden) return true;
  *err = error_response(forbidden("only an administrator manages users and tokens (you are " + c.who.user + ", " +
                                  role_name(c.who.role) + ")"));
  return false;
}

// Makes a token for `user_id` inside the caller's transaction.
bool new_token(submissions::Store& s, long long user_id, std::string* token, std::string* prefix, Error* err) {
  if (sodium_init() < 0) {
    *err = make_error(500, "entropy", "libsodium could not initialise: no token can be made");
    return false;
  }
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  *token = "rft_" + base::hex(raw, sizeof raw);
  *prefix = token->substr(0, 12);
  submissions::Stmt ins(s.db(), "INSERT INTO tokens (user_id, hash, prefix, created_at) VALUES (?1, ?2, ?3, ?4)");
  ins.bind(1, user_id).bind(2, hash_of(*token)).bind(3, *prefix).bind(4, now_utc());
  if (!ins.run()) {
    *err = store_error(s, ins.rc(), "storing the token");
    return false;
  }
  return true;
}

struct UserRow {
  long long id = 0;
  std::string name, organisation, role, created_at, disabled_at;
};

bool find_user(submissions::Store& s, const std::string& name, UserRow* out) {
  submissions::Stmt q(s.db(),
                      "SELECT u.id, u.name, COALESCE(o.name, ''), u.role, u.created_at, COALESCE(u.disabled_at, '') "
                      "FROM users u LEFT JOIN organisations o ON o.id = u.organisation_id WHERE u.name = ?1");
  q.bind(1, name);
  if (!q.step()) return false;
  *out = {q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_text(5)};
  return true;
}

void write_user(mllog::JsonWriter& w, const UserRow& u) {
  w.begin_object().key("name").value(u.name);
  w.key("organisation");
  if (u.organisation.empty()) w.null(); else w.value(u.organisation);
  w.key("role").value(u.role).key("created_at").value(u.created_at);
  w.end_object();
}

Response add_user(Context& c) {
  mllog::Json body;
  Response err;
  if (!admin_only(c, &err) || !parse_body(c.req, {"name", "organisation", "role", "create_organisation"}, &body, &err)) return err;
  std::string name, org, role_text;
  bool create_org = false;
  if (!body_string(body, "name", true, &name, &err) || !body_string(body, "organisation", false, &org, &err) ||
      !body_string(body, "role", true, &role_text, &err) || !body_bool(body, "create_organisation", &create_org, &err))
    return err;
  if (!valid_name(name))
    return error_response(400, "bad-field", "user name '" + name + "' is not 1 to 64 of A-Z a-z 0-9 . _ - @");
  Role role;
  if (!parse_role(role_text, &role))
    return error_response(400, "bad-field", "role '" + role_text + "' is not member, chair or admin");
  if (org.empty() && role == Role::Member)
    return error_response(400, "missing-field", "a member belongs to an organisation: --org ORG (API field `organisation`) is required");
  if (!org.empty() && (org.size() > 128 || org.find('/') != std::string::npos || !valid_utf8(org)))
    return error_response(400, "bad-field", "organisation '" + org + "' is not a folder name");
  std::string token, prefix, org_name = org;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    UserRow existing;
    if (find_user(c.store, name, &existing))
      return make_error(409, "exists", "user " + name + " already exists", "make a new token with referee user token " + name);
    long long org_id = 0;
    bool created = false;
    if (!org.empty() && !find_organisation(c.store, org, &org_id, &org_name)) {
      if (!create_org)
        return make_error(422, "unknown-organisation", "organisation " + org + " is not in the store",
                          "import its package first, or create it with --create-org (create_organisation: true)");
      submissions::Stmt ins(c.store.db(), "INSERT INTO organisations (name) VALUES (?1)");
      ins.bind(1, org);
      if (!ins.run()) return store_error(c.store, ins.rc(), "creating the organisation");
      org_id = sqlite3_last_insert_rowid(c.store.db());
      created = true;
    }
    submissions::Stmt ins(c.store.db(), "INSERT INTO users (name, organisation_id, role, created_at) VALUES (?1, ?2, ?3, ?4)");
    ins.bind(1, name);
    if (org_id) ins.bind(2, org_id); else ins.bind_null(2);
    ins.bind(3, std::string(role_name(role))).bind(4, now_utc());
    if (!ins.run()) return store_error(c.store, ins.rc(), "adding the user");
    long long uid = sqlite3_last_insert_rowid(c.store.db());
    Error e;
    if (!new_token(c.store, uid, &token, &prefix, &e)) return e;
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(name).key("organisation").value(org_name).key("role").value(role_name(role));
    p.key("organisation_created").value(created).key("token_prefix").value(prefix).end_object();
    *event = Change{"user.add", "user/" + name, p.str()};
    return uid;
  });
  if (!w.ok()) return error_response(w.error());
  UserRow u;
  find_user(c.store, name, &u);
  mllog::JsonWriter out(0, mllog::JsonText::kUtf8);
  out.begin_object().key("user");
  write_user(out, u);
  out.key("token").value(token).key("token_prefix").value(prefix).end_object();
  return json_response(out.str(), 201);
}

Response list_users(Context& c) {
  if (authorize(c.who, Action::ListUsers, {}, "") == Access::Forbidden)
    return error_response(forbidden("only administrators and review chairs list users"));
  submissions::Stmt q(c.store.db(),
                      "SELECT u.id, u.name, COALESCE(o.name, ''), u.role, u.created_at, COALESCE(u.disabled_at, '') "
                      "FROM users u LEFT JOIN organisations o ON o.id = u.organisation_id ORDER BY u.name");
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("users").begin_array();
  while (q.step()) {
    UserRow u{q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), q.col_text(5)};
    w.begin_object().key("name").value(u.name).key("organisation");
    if (u.organisation.empty()) w.null(); else w.value(u.organisation);
    w.key("role").value(u.role).key("created_at").value(u.created_at).key("tokens").begin_array();
    submissions::Stmt t(c.store.db(),
                        "SELECT prefix, created_at, revoked_at FROM tokens WHERE user_id = ?1 ORDER BY id");
    t.bind(1, u.id);
    while (t.step()) {
      w.begin_object().key("prefix").value(t.col_text(0)).key("created_at").value(t.col_text(1)).key("revoked_at");
      if (t.col_null(2)) w.null(); else w.value(t.col_text(2));
      w.end_object();
    }
    w.end_array().end_object();
  }
  if (!q.ok()) return error_response(store_error(c.store, q.rc(), "reading users"));
  w.end_array().end_object();
  return json_response(w.str());
}

// A write by an administrator to user {name}: `change` makes it and returns
// the answer's body, sent with `status` after the commit.
Response user_write(Context& c, int status, const std::function<Result<std::string>(const UserRow&, Change*)>& change) {
  mllog::Json body;
  Response err;
  if (!admin_only(c, &err) || !parse_body(c.req, {}, &body, &err)) return err;
  std::string answer;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    UserRow u;
    if (!find_user(c.store, c.params[0], &u)) return make_error(404, "not-found", "no user " + c.params[0]);
    Result<std::string> r = change(u, event);
    if (!r.ok()) return r.error();
    answer = r.value();
    return u.id;
  });
  return w.ok() ? json_response(answer, status) : error_response(w.error());
}

Response user_token(Context& c) {
  return user_write(c, 201, [&](const UserRow& u, Change* event) -> Result<std::string> {
    std::string token, prefix;
    Error e;
    if (!new_token(c.store, u.id, &token, &prefix, &e)) return e;
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(u.name).key("token_prefix").value(prefix).end_object();
    *event = Change{"token.create", "user/" + u.name, p.str()};
    mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
    w.begin_object().key("user").value(u.name).key("token").value(token).key("token_prefix").value(prefix).end_object();
    return w.str();
  });
}

Response revoke_user(Context& c) {
  return user_write(c, 200, [&](const UserRow& u, Change* event) -> Result<std::string> {
    submissions::Stmt up(c.store.db(), "UPDATE tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL");
    up.bind(1, u.id).bind(2, now_utc());
    if (!up.run()) return store_error(c.store, up.rc(), "revoking tokens");
    long long n = sqlite3_changes(c.store.db());
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(u.name).key("revoked").value(n).end_object();
    *event = Change{"user.revoke", "user/" + u.name, p.str()};
    return p.str();
  });
}

Response revoke_token(Context& c) {
  mllog::Json body;
  Response err;
  if (!admin_only(c, &err) || !parse_body(c.req, {"prefix"}, &body, &err)) return err;
  std::string prefix;
  if (!body_string(body, "prefix", true, &prefix, &err)) return err;
  std::string answer;
  auto w = write(c.store, c.who, [&](Change* event) -> Result<long long> {
    submissions::Stmt q(c.store.db(),
                        "SELECT t.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.prefix = ?1 AND "
                        "t.revoked_at IS NULL");
    q.bind(1, prefix);
    std::vector<std::pair<long long, std::string>> hits;
    while (q.step()) hits.emplace_back(q.col_int(0), q.col_text(1));
    if (hits.empty()) return make_error(404, "not-found", "no live token starts with " + prefix);
    if (hits.size() > 1)
      return make_error(409, "ambiguous", "more than one live token has prefix " + prefix,
                        "revoke every token of the user with referee user revoke NAME");
    submissions::Stmt up(c.store.db(), "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1");
    up.bind(1, hits[0].first).bind(2, now_utc());
    if (!up.run()) return store_error(c.store, up.rc(), "revoking the token");
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(hits[0].second).key("token_prefix").value(prefix).key("revoked").value(1).end_object();
    answer = p.str();
    *event = Change{"token.revoke", "user/" + hits[0].second, answer};
    return hits[0].first;
  });
  return w.ok() ? json_response(answer) : error_response(w.error());
}

Response me(Context& c) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("user").value(c.who.user).key("organisation");
  if (c.who.organisation.empty()) w.null(); else w.value(c.who.organisation);
  w.key("role").value(role_name(c.who.role)).key("local_admin").value(c.who.local_admin).end_object();
  return json_response(w.str());
}

}  // namespace

std::vector<Route> identity_routes() {
  return {
      {"POST", "/api/v1/users", true, add_user},
      {"GET", "/api/v1/users", false, list_users},
      {"POST", "/api/v1/users/{name}/tokens", true, user_token},
      {"POST", "/api/v1/users/{name}/revoke", true, revoke_user},
      {"POST", "/api/v1/tokens/revoke", true, revoke_token},
      {"GET", "/api/v1/me", false, me},
  };
}

}  // namespace referee::review
