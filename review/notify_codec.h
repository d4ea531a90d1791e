// The API's JSON for webhooks, both ways, written once: the request body
// the CLI sends with --server, and the answers a route gives and the CLI
// prints on a local store. The routes are in notify_routes.cc.
#pragma once

#include <string>
#include <vector>

#include "review/api.h"
#include "review/notify.h"

namespace referee::review {

std::string request_body(const AddWebhook& in);
// 201 with {"webhook": {...}, "secret"}, or the error.
Response new_webhook_answer(const Result<NewWebhook>& r);
// 200 with {"webhook": {...}}, or the error.
Response webhook_answer(const Result<Webhook>& r);
// 200 with {"webhooks": [...]}, or the error.
Response webhooks_answer(const Result<std::vector<Webhook>>& r);
// 200 with {"webhook": ID, "deliveries": [...]}, or the error.
Response deliveries_answer(long long webhook, const Result<std::vector<Delivery>>& r);
// 202 with {"delivery": {...}}, or the error.
Response ping_answer(const Result<Delivery>& r);

}  // namespace referee::review
