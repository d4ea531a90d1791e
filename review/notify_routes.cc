// Webhooks over HTTP: POST/GET /api/v1/webhooks, DELETE /api/v1/webhooks/{id},
// GET /api/v1/webhooks/{id}/deliveries, POST /api/v1/webhooks/{id}/ping.
#include "mllog/json_writer.h"
#include "review/notify_codec.h"
#include "review/router.h"

namespace referee::review {

namespace {

using mllog::Json;
using mllog::JsonWriter;

void hook_json(JsonWriter& w, const Webhook& h) {
  w.begin_object().key("id").value(h.id).key("scope").value(h.scope).key("organisation").value(h.organisation);
  w.key("user");
  if (h.user.empty()) w.null(); else w.value(h.user);
  w.key("url").value(h.url).key("events").begin_array();
  for (const auto& e : h.events) w.value(e);
  w.end_array().key("created_by").value(h.created_by).key("created_at").value(h.created_at).key("removed_at");
  if (h.removed_at.empty()) w.null(); else w.value(h.removed_at);
  w.end_object();
}

void delivery_json(JsonWriter& w, const Delivery& d) {
  w.begin_object().key("id").value(d.key).key("webhook").value(d.webhook).key("kind").value(d.kind).key("state").value(d.state);
  w.key("attempts").value(d.attempts).key("last_status");
  if (d.last_status) w.value(d.last_status); else w.null();
  w.key("last_error");
  if (d.last_error.empty()) w.null(); else w.value(d.last_error);
  w.key("created_at").value(d.created_at).key("next_attempt_at");
  if (d.state == "pending") w.value(d.next_attempt_at); else w.null();
  w.key("delivered_at");
  if (d.delivered_at.empty()) w.null(); else w.value(d.delivered_at);
  // The log and the body as stored: JSON the store holds, shown as JSON when it is.
  Json j;
  std::string err;
  w.key("log");
  if (mllog::parse_json_permissive(d.log_json, &j, &err) && j.kind == Json::Kind::Array) w.raw(d.log_json); else w.begin_array().end_array();
  w.key("body");
  if (mllog::parse_json_permissive(d.payload, &j, &err) && j.kind == Json::Kind::Object) w.raw(d.payload); else w.null();
  w.end_object();
}

bool hook_id(Context& c, long long* id, Response* err) {
  if (path_id(c.params[0], id)) return true;
  *err = error_response(404, "not-found", "no webhook '" + c.params[0] + "'");
  return false;
}

Response post_webhook(Context& c) {
  Json body;
  Response err;
  AddWebhook in;
  if (!parse_body(c.req, {"url", "scope", "organisation", "events"}, &body, &err) ||
      !body_string(body, "url", true, &in.url, &err) || !body_string(body, "scope", false, &in.scope, &err) ||
      !body_string(body, "organisation", false, &in.organisation, &err) ||
      !body_strings(body, "events", false, &in.events, &err))
    return err;
  in.has_events = body.find("events") != nullptr;
  return new_webhook_answer(add_webhook(c.store, c.who, in));
}

Response get_webhooks(Context& c) { return webhooks_answer(list_webhooks(c.store, c.who)); }

Response delete_webhook(Context& c) {
  long long id = 0;
  Response err;
  if (!hook_id(c, &id, &err)) return err;
  return webhook_answer(remove_webhook(c.store, c.who, id));
}

Response get_deliveries(Context& c) {
  long long id = 0;
  Response err;
  if (!hook_id(c, &id, &err)) return err;
  return deliveries_answer(id, webhook_deliveries(c.store, c.who, id));
}

Response post_ping(Context& c) {
  long long id = 0;
  Response err;
  if (!hook_id(c, &id, &err)) return err;
  return ping_answer(ping_webhook(c.store, c.who, id));
}

}  // namespace

std::string request_body(const AddWebhook& in) {
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("url").value(in.url);
  if (!in.scope.empty()) w.key("scope").value(in.scope);
  if (!in.organisation.empty()) w.key("organisation").value(in.organisation);
  if (!in.events.empty()) {
    w.key("events").begin_array();
    for (const auto& e : in.events) w.value(e);
    w.end_array();
  }
  w.end_object();
  return w.str();
}

Response new_webhook_answer(const Result<NewWebhook>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("webhook");
  hook_json(w, r.value().hook);
  w.key("secret").value(r.value().secret).end_object();
  return json_response(w.str(), 201);
}

Response webhook_answer(const Result<Webhook>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("webhook");
  hook_json(w, r.value());
  w.end_object();
  return json_response(w.str());
}

Response webhooks_answer(const Result<std::vector<Webhook>>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("webhooks").begin_array();
  for (const auto& h : r.value()) hook_json(w, h);
  w.end_array().end_object();
  return json_response(w.str());
}

Response deliveries_answer(long long webhook, const Result<std::vector<Delivery>>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("webhook").value(webhook).key("deliveries").begin_array();
  for (const auto& d : r.value()) delivery_json(w, d);
  w.end_array().end_object();
  return json_response(w.str());
}

Response ping_answer(const Result<Delivery>& r) {
  if (!r.ok()) return error_response(r.error());
  JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("delivery");
  delivery_json(w, r.value());
  w.end_object();
  return json_response(w.str(), 202);
}

std::vector<Route> notify_routes() {
  return {
      {"POST", "/api/v1/webhooks", true, post_webhook},
      {"GET", "/api/v1/webhooks", false, get_webhooks},
      {"DELETE", "/api/v1/webhooks/{id}", true, delete_webhook},
      {"GET", "/api/v1/webhooks/{id}/deliveries", false, get_deliveries},
      {"POST", "/api/v1/webhooks/{id}/ping", true, post_ping},
  };
}

}  // namespace referee::review
