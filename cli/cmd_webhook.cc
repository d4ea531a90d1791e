// referee webhook add|list|remove|deliveries|ping|deliver (docs/review.md,
// "Notifications"). The flags fill the typed operations of review/notify.h:
// run on the local store, or sent to --server as the request made from the
// same value. `deliver` sends what is due from a local store once (for a
// store no server serves; `referee serve` sends on its own).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/review_cli.h"
#include "cli/review_output.h"
#include "cli/table.h"
#include "review/events.h"
#include "review/notify_codec.h"
#include "server/webhooks.h"
#include "submissions/store.h"

namespace referee::cli {

using namespace review_cli;

namespace {

std::string events_text(const mllog::Json& h) {
  std::string out;
  if (const auto* es = h.find("events"))
    for (const auto& e : es->items) out += (out.empty() ? "" : ",") + e.s;
  return out;
}

void print_hooks(const mllog::Json& b) {
  Table t({"id", "scope", "for", "url", "events", "created by", "removed"});
  if (const auto* hs = b.find("webhooks"))
    for (const auto& h : hs->items)
      t.add({std::to_string(jint(h, "id")), jstr(h, "scope"),
             jstr(h, "scope") != "user"        ? jstr(h, "organisation")
             : jstr(h, "organisation").empty() ? jstr(h, "user")
                                               : jstr(h, "user") + " (" + jstr(h, "organisation") + ")",
             jstr(h, "url"), events_text(h), jstr(h, "created_by"), jstr(h, "removed_at")});
  t.print(std::cout);
}

// Each delivery, then each of its attempts.
void print_deliveries(const mllog::Json& b) {
  if (const auto* ds = b.find("deliveries"))
    for (const auto& d : ds->items) {
      std::cout << jstr(d, "id") << "  " << jstr(d, "kind") << "  " << jstr(d, "state") << ", " << jint(d, "attempts")
                << " attempt(s); made " << jstr(d, "created_at")
                << (jstr(d, "state") == "delivered" ? ", delivered " + jstr(d, "delivered_at")
                    : jstr(d, "state") == "pending" ? ", next try " + jstr(d, "next_attempt_at")
                                                    : std::string())
                << "\n";
      if (const auto* log = d.find("log"))
        for (const auto& a : log->items)
          std::cout << "    " << jstr(a, "at") << "  " << (jint(a, "status") ? "HTTP " + std::to_string(jint(a, "status")) : "no answer")
                    << "  " << text_of(a.find("ms")) << " ms" << (jstr(a, "error").empty() ? "" : "  " + jstr(a, "error")) << "\n";
    }
}

SubSetup add_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      review::AddWebhook in;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--url", o->in.url, "where to POST: an http:// or https:// URL")->required();
    sub.add_option("--scope", o->in.scope, "organisation (default: your organisation's hook) or user (your own)")
        ->check(CLI::IsMember({"organisation", "user"}));
    sub.add_option("--organisation", o->in.organisation, "an administrator: the organisation whose hook this is");
    sub.add_option("--event", o->in.events, "a kind of notification to send (repeatable; default: every kind)");
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::Request r{"POST", "/api/v1/webhooks", {}, review::request_body(o->in), "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) {
        return review::new_webhook_answer(review::add_webhook(s, who, o->in));
      };
      return send_and_print("webhook add", o->client, r, local, o->json, [](const mllog::Json& b) {
        const mllog::Json* h = b.find("webhook");
        if (!h) return;
        std::cout << "webhook " << jint(*h, "id") << " (" << jstr(*h, "scope") << " " << jstr(*h, "organisation")
                  << (jstr(*h, "user").empty() ? "" : "/" + jstr(*h, "user")) << ") -> " << jstr(*h, "url") << "\n"
                  << "secret: " << jstr(b, "secret") << "\n"
                  << "  (shown once: each delivery's X-Referee-Signature is sha256=HMAC-SHA256 of "
                     "\"<X-Referee-Timestamp>.<body>\" under it)\n";
      });
    };
  };
}

// A subcommand on one hook: `suffix` after /api/v1/webhooks/ID.
SubSetup hook_setup(const char* cmd, const char* method, const char* suffix,
                    std::function<review::Response(submissions::Store&, const review::Actor&, long long)> local_call,
                    std::function<void(const mllog::Json&)> render) {
  return [=](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      long long id = 0;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("ID", o->id, "the webhook's number (referee webhook list)")->required()->check(count_at_least(1));
    add_answer_options(sub, &o->json, &o->client);
    return [=]() -> int {
      review::Request r{method, "/api/v1/webhooks/" + std::to_string(o->id) + suffix, {}, "", "", "", false};
      auto local = [&](submissions::Store& s, const review::Actor& who) { return local_call(s, who, o->id); };
      return send_and_print(cmd, o->client, r, local, o->json, render);
    };
  };
}

SubSetup list_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    add_answer_options(sub, &o->json, &o->client);
    return [o]() -> int {
      review::Request r{"GET", "/api/v1/webhooks", {}, "", "", "", false};
      auto local = [](submissions::Store& s, const review::Actor& who) {
        return review::webhooks_answer(review::list_webhooks(s, who));
      };
      return send_and_print("webhook list", o->client, r, local, o->json, [](const mllog::Json& b) {
        if (listed(b, "webhooks", "no webhooks")) print_hooks(b);
      });
    };
  };
}

SubSetup deliver_setup() {
  return [](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      std::string db;
      bool to_private = false;
      double retry = 30;
    };
    auto o = std::make_shared<Opts>();
    sub.add_option("--db", o->db, "the store (default $REFEREE_DB or the user's data directory)");
    sub.add_flag("--to-private", o->to_private, "deliver to loopback and private addresses too (refused by default)");
    sub.add_option("--retry", o->retry, "seconds before a failed delivery's first retry (default 30)")->check(CLI::Range(0.01, 3600.0));
    return [o]() -> int {
      ClientOptions where;
      where.db = o->db;
      std::string db;
      review::Response missing;
      if (!local_store(where, &db, &missing)) return review_print("webhook deliver", missing, false, [](const mllog::Json&) {});
      std::string error;
      auto s = submissions::Store::open(db, &error);
      if (!s) {
        std::cerr << "referee webhook deliver: " << error << "\n";
        return kCannotCheck;
      }
      int reminders = review::queue_deadline_reminders(*s, review::now_utc(), &error);
      if (reminders < 0) {
        std::cerr << "referee webhook deliver: " << error << "\n";
        return kCannotCheck;
      }
      server::WebhookOptions wo;
      wo.allow_private = o->to_private;
      wo.backoff.base_seconds = o->retry;
      int sent = 0;
      for (;;) {  // batch after batch, each delivery attempted once
        int n = server::deliver_due(*s, wo, &error);
        if (n < 0) {
          std::cerr << "referee webhook deliver: " << error << "\n";
          return kCannotCheck;
        }
        if (n == 0) break;
        sent += n;
        if (n < wo.batch) break;
      }
      std::cout << "deadline reminders queued: " << reminders << "; deliveries attempted: " << sent
                << " (referee webhook deliveries ID shows each one's log)\n";
      return 0;
    };
  };
}

}  // namespace

Command webhook_command() {
  return {"webhook", "Notifications of the review to webhooks: HMAC-signed JSON, retried, each attempt logged",
          [](CLI::App& sub) -> std::function<int()> {
            return command_group(
                sub,
                {
                    {"add", "Register a webhook (your organisation's, or --scope user: your own); prints its secret once",
                     add_setup()},
                    {"list", "The webhooks you manage", list_setup()},
                    {"remove", "Remove a webhook",
                     hook_setup("webhook remove", "DELETE", "",
                                [](submissions::Store& s, const review::Actor& who, long long id) {
                                  return review::webhook_answer(review::remove_webhook(s, who, id));
                                },
                                [](const mllog::Json& b) {
                                  if (const auto* h = b.find("webhook"))
                                    std::cout << "webhook " << jint(*h, "id") << " removed at " << jstr(*h, "removed_at") << "\n";
                                })},
                    {"deliveries", "A webhook's deliveries and their attempts",
                     hook_setup("webhook deliveries", "GET", "/deliveries",
                                [](submissions::Store& s, const review::Actor& who, long long id) {
                                  return review::deliveries_answer(id, review::webhook_deliveries(s, who, id));
                                },
                                [](const mllog::Json& b) {
                                  if (listed(b, "deliveries", "no deliveries")) print_deliveries(b);
                                })},
                    {"ping", "Queue a test delivery to a webhook",
                     hook_setup("webhook ping", "POST", "/ping",
                                [](submissions::Store& s, const review::Actor& who, long long id) {
                                  return review::ping_answer(review::ping_webhook(s, who, id));
                                },
                                [](const mllog::Json& b) {
                                  if (const auto* d = b.find("delivery"))
                                    std::cout << "delivery " << jstr(*d, "id") << " queued (kind ping)\n";
                                })},
                    {"deliver", "Send what is due from a local store once, with deadline reminders (no server needed)",
                     deliver_setup()},
                });
          }};
}

}  // namespace referee::cli
