// Sending the review's notifications (review/notify.h) to webhooks: each
// delivery a POST of its JSON body, signed with the hook's secret:
//
//   X-Referee-Event: objection.filed        (the kind)
//   X-Referee-Delivery: d_3f0c...           (random, the same on every retry: receivers drop repeats)
//   X-Referee-Timestamp: 1765012345         (Unix seconds, when this attempt was signed)
//   X-Referee-Signature: sha256=HEX         (HMAC-SHA256 of "<timestamp>.<delivery>.<body>" under the secret)
//
// A 2xx answer delivers it; anything else (an error status, no answer in
// the timeout, a refused address) is retried with back-off and logged.
// Redirects are not followed; proxies from the environment are not used;
// a URL whose host resolves to a loopback, private, link-local or
// multicast address is refused unless allowed (the check is made on the
// address connected to, so a name that resolves elsewhere later gains
// nothing).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "review/notify.h"
#include "submissions/store.h"

namespace referee::server {

struct WebhookOptions {
  bool allow_private = false;   // deliver to loopback and private addresses too
  double timeout_seconds = 10;  // one attempt, connection included
  review::Backoff backoff;
  int batch = 32;               // deliveries claimed at a time
};

// Whether an IPv4 or IPv6 address (text) is one a webhook may not reach
// unless allowed: loopback, private (RFC 1918, fc00::/7), carrier-grade NAT,
// link-local, unspecified, multicast or reserved.
bool restricted_address(const std::string& ip);

// The signature header's value: HMAC-SHA256 of "<timestamp>.<delivery>.<body>".
std::string webhook_signature(const std::string& secret, const std::string& timestamp, const std::string& delivery,
                              const std::string& body);

// Sends what is due now, each delivery once; returns how many were
// attempted (-1 with *error when the store cannot be read or libcurl
// cannot be loaded).
int deliver_due(submissions::Store& s, const WebhookOptions& o, std::string* error);

// `referee serve`'s sender: a thread that sends what is due every second
// (sooner when woken) and queues deadline reminders every minute, on its
// own connection to the store.
class WebhookSender {
 public:
  WebhookSender(std::string db, WebhookOptions o);
  ~WebhookSender();
  bool start(std::string* error);
  void stop();

 private:
  void loop();
  std::string db_;
  WebhookOptions o_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace referee::server
