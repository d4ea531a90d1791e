// The routes of users, their tokens and /me: each decodes its request into
// the typed value of review/identity.h, calls the operation and encodes its
// result (the codec of review/identity_codec.h, also defined here).
#include "mllog/json_writer.h"
#include "review/identity.h"
#include "review/identity_codec.h"
#include "review/router.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;

// The 403 of an actor who is not an administrator, before the body is read.
bool refused(Context& c, Response* err) {
  Error e;
  if (may_manage_users(c.who, &e)) return false;
  *err = error_response(e);
  return true;
}

Response post_user(Context& c) {
  Json body;
  Response err;
  AddUser in;
  if (refused(c, &err) || !parse_body(c.req, {"name", "organisation", "role", "create_organisation", "deliver_token"}, &body, &err) ||
      !body_string(body, "name", true, &in.name, &err) || !body_string(body, "organisation", false, &in.organisation, &err) ||
      !body_string(body, "role", true, &in.role, &err) || !body_bool(body, "create_organisation", &in.create_organisation, &err) ||
      !body_bool(body, "deliver_token", &in.deliver_token, &err))
    return err;
  return added_user_answer(add_user(c.store, c.who, in));
}

Response get_users(Context& c) { return users_answer(list_users(c.store, c.who)); }

Response post_token(Context& c) {
  Json body;
  Response err;
  if (refused(c, &err) || !parse_body(c.req, {}, &body, &err)) return err;
  return token_answer(issue_token(c.store, c.who, IssueToken{c.params[0]}));
}

Response post_revoke_user(Context& c) {
  Json body;
  Response err;
  if (refused(c, &err) || !parse_body(c.req, {}, &body, &err)) return err;
  return revoked_answer(revoke_user(c.store, c.who, RevokeUser{c.params[0]}));
}

Response post_revoke_token(Context& c) {
  Json body;
  Response err;
  RevokeToken in;
  if (refused(c, &err) || !parse_body(c.req, {"prefix"}, &body, &err) || !body_string(body, "prefix", true, &in.prefix, &err)) return err;
  return revoked_answer(revoke_token(c.store, c.who, in));
}

Response me(Context& c) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("user").value(c.who.user).key("organisation");
  if (c.who.organisation.empty()) w.null(); else w.value(c.who.organisation);
  w.key("role").value(role_name(c.who.role)).key("local_admin").value(c.who.local_admin).end_object();
  return json_response(w.str());
}

// A user's name, organisation (null for none), role and creation time.
void user_fields(JsonWriter& w, const User& u) {
  w.key("name").value(u.name).key("organisation");
  if (u.organisation.empty()) w.null(); else w.value(u.organisation);
  w.key("role").value(u.role).key("created_at").value(u.created_at);
}

}  // namespace

std::string request_body(const AddUser& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("name").value(in.name).key("role").value(in.role);
  if (!in.organisation.empty()) w.key("organisation").value(in.organisation);
  if (in.create_organisation) w.key("create_organisation").value(true);
  if (in.deliver_token) w.key("deliver_token").value(true);
  return w.end_object().str();
}

std::string request_body(const RevokeToken& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  return w.begin_object().key("prefix").value(in.prefix).end_object().str();
}

Response added_user_answer(const Result<NewToken>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter out(0, mllog::JsonText::kUtf8);
  out.begin_object().key("user").begin_object();
  user_fields(out, r.value().user);
  out.end_object().key("token");
  if (r.value().webhook) out.null(); else out.value(r.value().token);
  out.key("token_prefix").value(r.value().prefix);
  if (r.value().webhook) out.key("token_to_webhook").value(r.value().webhook);
  out.end_object();
  return json_response(out.str(), 201);
}

Response users_answer(const Result<std::vector<User>>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("users").begin_array();
  for (const auto& u : r.value()) {
    w.begin_object();
    user_fields(w, u);
    w.key("tokens").begin_array();
    for (const auto& t : u.tokens) {
      w.begin_object().key("prefix").value(t.prefix).key("created_at").value(t.created_at).key("revoked_at");
      if (t.revoked) w.value(t.revoked_at); else w.null();
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return json_response(w.str());
}

Response token_answer(const Result<NewToken>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("user").value(r.value().user.name).key("token").value(r.value().token);
  w.key("token_prefix").value(r.value().prefix).end_object();
  return json_response(w.str(), 201);
}

Response revoked_answer(const Result<Revoked>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("user").value(r.value().user);
  if (!r.value().token_prefix.empty()) w.key("token_prefix").value(r.value().token_prefix);
  w.key("revoked").value(r.value().revoked).end_object();
  return json_response(w.str());
}

std::vector<Route> identity_routes() {
  return {
      {"POST", "/api/v1/users", true, post_user},
      {"GET", "/api/v1/users", false, get_users},
      {"POST", "/api/v1/users/{name}/tokens", true, post_token},
      {"POST", "/api/v1/users/{name}/revoke", true, post_revoke_user},
      {"POST", "/api/v1/tokens/revoke", true, post_revoke_token},
      {"GET", "/api/v1/me", false, me},
  };
}

}  // namespace referee::review
