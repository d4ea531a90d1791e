// Notifications: webhooks an organisation or a user registers, and what the
// review tells them. Each review write that concerns an organisation
// (an objection filed against it, a response to its objection, a vote it
// owes, a decision, a comment, a withdrawal, an extension) queues one
// delivery per matching hook in the write's own transaction, so a change
// and its notifications are stored together or not at all; a sweep queues
// reminders of deadlines within 24 hours once each. Sending is the server's
// (server/webhooks.h): HMAC-signed JSON, retried with back-off, each attempt
// logged here. No HTTP in this file.
#pragma once

#include <string>
#include <vector>

#include "review/actor.h"
#include "review/result.h"
#include "submissions/store.h"

namespace referee::review {

// The kinds of notification, as hooks name them ("*": every kind).
const std::vector<std::string>& notification_kinds();

// POST /webhooks: `scope` "organisation" (the actor's organisation's hook;
// an administrator names `organisation`) or "user" (the actor's own).
struct AddWebhook {
  std::string url, scope, organisation;
  std::vector<std::string> events;  // kinds; empty = every kind
  bool has_events = false;          // `events` was sent (an empty list is refused)
};

struct Webhook {
  long long id = 0;
  std::string scope, organisation, user, url, created_by, created_at, removed_at;
  std::vector<std::string> events;
};

struct NewWebhook {
  Webhook hook;
  std::string secret;  // the HMAC-SHA256 key, shown once
};

Result<NewWebhook> add_webhook(submissions::Store& s, const Actor& who, const AddWebhook& in);
// The hooks the actor may manage (their organisation's and their own; an
// administrator's: all), removed ones included.
Result<std::vector<Webhook>> list_webhooks(submissions::Store& s, const Actor& who);
Result<Webhook> remove_webhook(submissions::Store& s, const Actor& who, long long id);

// One delivery and its log.
struct Delivery {
  long long id = 0, webhook = 0, attempts = 0, last_status = 0;
  std::string kind, state, created_at, next_attempt_at, delivered_at, last_error, log_json, payload;
  std::string key;  // its name for the receiver (random; the store's row number is never shown)
};
// The deliveries of hook `id` (newest first, at most `limit`).
Result<std::vector<Delivery>> webhook_deliveries(submissions::Store& s, const Actor& who, long long id, int limit = 100);
// Queues a `ping` to hook `id`.
Result<Delivery> ping_webhook(submissions::Store& s, const Actor& who, long long id);

// Queues a new user's token to their organisation `org_id`'s webhook (inside
// add_user's transaction): the first live organisation hook that takes
// `user.token` and whose URL is https:// (or http:// to this machine).
// Returns its id; 0 with *err a 422 when there is none. The store keeps the
// token in the delivery only until it is delivered or failed, and never
// shows it in a delivery's log.
long long queue_token_delivery(submissions::Store& s, long long org_id, const std::string& user, const std::string& role,
                               const std::string& token, Error* err);

// Queues `fix.delivered` for objection `objection` (a corrected package
// delivered its fix, recorded by event `seq`) to the objecting organisation
// and neutral chairs.
bool queue_fix_delivered(submissions::Store& s, long long objection, long long seq, std::string* error);

// Called by write() inside its transaction, after event `seq` was appended:
// queues the notifications the event gives. False with *error on a store
// error (the write is then rolled back).
bool queue_event_notifications(submissions::Store& s, const Actor& who, const std::string& action,
                               const std::string& subject, const std::string& payload, long long seq, std::string* error);

// Queues a reminder, once per hook and deadline, of each deadline due
// within 24 hours of `now` that an organisation still has to meet: its
// response (responses_due), its vote (the objection's vote deadline or
// decisions_due), a fix it owes (fix_due), and the round's objections_due
// for every submitter. Returns how many were queued (-1 with *error).
int queue_deadline_reminders(submissions::Store& s, const std::string& now, std::string* error);

// How deliveries are retried: after attempt n fails, the next waits
// base_seconds x 2^(n-1), at most max_seconds; after `attempts` the delivery
// is failed.
struct Backoff {
  double base_seconds = 30;
  double max_seconds = 3600;
  int attempts = 8;
};

// A delivery claimed for sending.
struct Outgoing {
  long long id = 0, webhook = 0, attempts = 0;
  std::string url, secret, kind, body, key;
};
// Claims up to `limit` deliveries due at `now` (pending, or sending whose
// lease ran out: a sender killed mid-way), leasing each for lease_seconds.
std::vector<Outgoing> claim_deliveries(submissions::Store& s, const std::string& now, int limit, double lease_seconds,
                                       std::string* error);
// Records one attempt: `status` the HTTP status (0: none), `error` what went
// wrong ("" for a 2xx), `ms` how long it took.
// `counted` false: the delivery was not tried (its hook gave no answer just
// before); it goes back to pending at the next try, no attempt spent.
bool record_attempt(submissions::Store& s, const Outgoing& d, int status, const std::string& error, double ms,
                    const Backoff& backoff, std::string* err, bool counted = true);

}  // namespace referee::review
