// Notifications to webhooks, on a real local HTTP receiver (cpp-httplib on
// 127.0.0.1): who may register which hook, what each review write queues for
// whom, HMAC signatures a receiver can check, retries with back-off and their
// log, the refusal of private addresses, deadline reminders sent once, removal,
// `review log --verify` over the hooks, and `referee serve` sending on its own.
#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/digest.h"
#include "base/utc_time.h"
#include "review/events.h"
#include "review/notify.h"
#include "server/webhooks.h"
#include "tests/review_fixture.h"
#include "tests/run_referee.h"
#include "tests/serve_process.h"

namespace {

using namespace referee::testing::review_fixture;
using referee::testing::run_referee;

// A receiver: answers each POST /hook with the next status of `statuses` (then 200), keeping what came.
struct Receiver {
  struct Got {
    std::string event, delivery, timestamp, signature, body;
  };
  httplib::Server srv;
  int port = 0;
  std::thread thread;
  std::mutex mu;
  std::vector<Got> got;
  std::vector<int> statuses;
  Receiver() {
    srv.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu);
      got.push_back({req.get_header_value("X-Referee-Event"), req.get_header_value("X-Referee-Delivery"),
                     req.get_header_value("X-Referee-Timestamp"), req.get_header_value("X-Referee-Signature"), req.body});
      res.status = got.size() <= statuses.size() ? statuses[got.size() - 1] : 200;
      res.set_content("thanks", "text/plain");
    });
    port = srv.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { srv.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~Receiver() {
    srv.stop();
    if (thread.joinable()) thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/hook"; }
  std::vector<Got> all() {
    std::lock_guard<std::mutex> l(mu);
    return got;
  }
};

std::string hook_secret(const Response& r) { return parse(r.body).find("secret")->s; }

}  // namespace

TEST_SUITE("review_e2e") {
  TEST_CASE("webhooks: registered by whom they may be, told what concerns them, signed, retried and logged") {
    Review f;
    Receiver rx;
    rx.statuses = {503};
    // Who registers what.
    CHECK(f.call("", "POST", "/api/v1/webhooks", "{\"url\":\"" + rx.url() + "\"}").status == 401);
    CHECK(f.call("nv", "POST", "/api/v1/webhooks", R"({"url":"ftp://example.org/x"})").status == 400);
    CHECK(f.call("nv", "POST", "/api/v1/webhooks", R"({"url":"http://user:pw@example.org/x"})").status == 400);
    CHECK(f.call("nv", "POST", "/api/v1/webhooks", R"({"url":"http://example.org/x","events":["everything"]})").status == 400);
    CHECK(f.call("nv", "POST", "/api/v1/webhooks", R"({"url":"http://example.org/x","organisation":"Google"})").status == 403);
    CHECK(f.call("chair1", "POST", "/api/v1/webhooks", R"({"url":"http://example.org/x"})").status == 403);
    CHECK(f.call("admin1", "POST", "/api/v1/webhooks", R"({"url":"http://example.org/x"})").status == 400);
    Response nv = f.call("nv", "POST", "/api/v1/webhooks", "{\"url\":\"" + rx.url() + "\"}");
    REQUIRE_MESSAGE(nv.status == 201, nv.body);
    const std::string nv_secret = hook_secret(nv);
    CHECK(nv_secret.rfind("whsec_", 0) == 0);
    Response goog = f.call("goog", "POST", "/api/v1/webhooks",
                           "{\"url\":\"" + rx.url() + "\",\"scope\":\"user\",\"events\":[\"objection.response\"]}");
    REQUIRE_MESSAGE(goog.status == 201, goog.body);
    // Another organisation neither sees nor removes NVIDIA's hook; the secret is never listed.
    CHECK(f.call("dell", "DELETE", "/api/v1/webhooks/1", "").status == 404);
    CHECK(f.call("dell", "GET", "/api/v1/webhooks/1/deliveries", "").status == 404);
    CHECK(f.call("dell", "GET", "/api/v1/webhooks", "").body == R"({"webhooks":[]})");
    Response listed = f.call("nv2", "GET", "/api/v1/webhooks", "");
    CHECK(contains(listed.body, rx.url()));
    CHECK_FALSE(contains(listed.body, nv_secret));

    // Google objects to NVIDIA's result: NVIDIA's hook is told; Google's (responses only) is not.
    const long long id = f.file_rcp();
    referee::server::WebhookOptions o;
    o.backoff.base_seconds = 0.05;
    std::string error;
    // A loopback address is refused unless allowed, and the refusal is logged.
    REQUIRE(referee::server::deliver_due(*f.s, o, &error) == 1);
    Response log = f.call("nv", "GET", "/api/v1/webhooks/1/deliveries", "");
    CHECK_MESSAGE(contains(log.body, "a loopback or private address"), log.body);
    CHECK(contains(log.body, R"("state":"pending")"));
    CHECK(rx.all().empty());
    o.allow_private = true;
    // The next attempts: 503 (retried after the back-off), then 200.
    for (int i = 0; i < 100 && rx.all().size() < 2; ++i) {
      REQUIRE(referee::server::deliver_due(*f.s, o, &error) >= 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto got = rx.all();
    REQUIRE(got.size() == 2);
    CHECK(got[0].event == "objection.filed");
    CHECK(got[0].delivery == got[1].delivery);  // the same delivery, retried
    // The same URL again for the same owner: refused (each notification would come twice).
    CHECK(f.call("nv2", "POST", "/api/v1/webhooks", "{\"url\":\"" + rx.url() + "\"}").status == 409);
    CHECK(f.call("nv2", "POST", "/api/v1/webhooks", R"({"url":"http://example.org:99999/x"})").status == 400);
    CHECK(f.call("nv2", "POST", "/api/v1/webhooks", R"({"url":"http://example.org/x","events":[]})").status == 400);
    CHECK(contains(got[1].body, "\"against\":\"NVIDIA\""));
    CHECK(contains(got[1].body, "\"page\":\"/review/objections/" + std::to_string(id) + "\""));
    // The signature a receiver checks: HMAC-SHA256 of "<timestamp>.<body>" under the hook's secret.
    CHECK(got[1].signature ==
          "sha256=" + referee::base::hmac_sha256_hex(nv_secret, got[1].timestamp + "." + got[1].delivery + "." + got[1].body));
    CHECK(got[1].signature !=
          "sha256=" + referee::base::hmac_sha256_hex(nv_secret, got[1].timestamp + ".d_other." + got[1].body));
    // The delivery's name is random and the body names no event of the log: neither counts what a member may not see.
    CHECK(got[1].delivery.rfind("d_", 0) == 0);
    CHECK(got[1].delivery.size() == 26);
    CHECK_FALSE(contains(got[1].body, "\"event\""));
    log = f.call("nv", "GET", "/api/v1/webhooks/1/deliveries", "");
    Json lj = parse(log.body);
    const Json& d = lj.find("deliveries")->items.at(0);
    CHECK(d.find("state")->s == "delivered");
    CHECK(d.find("attempts")->i == 3);
    REQUIRE(d.find("log")->items.size() == 3);
    CHECK(d.find("log")->items[1].find("status")->i == 503);
    CHECK(d.find("log")->items[2].find("status")->i == 200);

    // NVIDIA answers: Google's user hook hears of the response; NVIDIA's hook is asked for its vote.
    REQUIRE(f.call("nv", "POST", "/api/v1/objections/" + std::to_string(id) + "/responses", R"({"text":"we disagree"})").status == 201);
    for (int i = 0; i < 100 && rx.all().size() < 4; ++i) {
      REQUIRE(referee::server::deliver_due(*f.s, o, &error) >= 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    got = rx.all();
    REQUIRE(got.size() == 4);
    std::vector<std::string> kinds{got[2].event, got[3].event};
    std::sort(kinds.begin(), kinds.end());
    CHECK(kinds == std::vector<std::string>{"objection.response", "vote.needed"});
    // A deadline within 24 hours that NVIDIA still has to meet (its vote), reminded once.
    f.set_deadline("decisions_due", referee::base::utc_string(std::time(nullptr) + 6 * 3600));
    CHECK(referee::review::queue_deadline_reminders(*f.s, referee::review::now_utc(), &error) >= 1);
    CHECK(referee::review::queue_deadline_reminders(*f.s, referee::review::now_utc(), &error) == 0);
    // Removed: nothing more is queued for it; a ping is refused.
    REQUIRE(f.call("nv2", "DELETE", "/api/v1/webhooks/1", "").status == 200);
    CHECK(f.call("nv", "POST", "/api/v1/webhooks/1/ping", "").status == 422);
    const long long before = f.count("webhook_deliveries");
    f.file_rcp();
    CHECK(f.count("webhook_deliveries") == before);
    // A user whose tokens are revoked is told nothing more through their own hook.
    REQUIRE(f.local("POST", "/api/v1/users/goog/revoke", "").status == 200);
    const long long queued = f.count("webhook_deliveries");
    REQUIRE(f.call("nv", "POST", "/api/v1/objections/" + std::to_string(id) + "/responses", R"({"text":"more"})").status == 201);
    CHECK(f.count("webhook_deliveries") == queued);

    // The log holds each hook to its events: a URL or secret edited in the store is found.
    f.s.reset();
    f.api.reset();
    std::string out;
    REQUIRE_MESSAGE(run_referee("review log --verify --db '" + f.path + "'", &out) == 0, out);
    auto tampered = [&](const std::string& sql, const std::string& expect) {
      CAPTURE(sql);
      std::string o2;
      CHECK(run_referee("review log --verify --db '" + f.edited_copy(sql) + "'", &o2) == 1);
      CHECK_MESSAGE(contains(o2, expect), o2);
    };
    tampered("UPDATE webhooks SET url = 'http://attacker.example/' WHERE id = 2", "it sends to http://attacker.example/");
    tampered("UPDATE webhooks SET secret = 'whsec_known' WHERE id = 2", "its secret is not the one event");
    tampered("UPDATE webhooks SET removed_at = NULL WHERE id = 1", "live, but a webhook.remove event removed it");
  }

  TEST_CASE("webhooks: referee serve sends on its own; the CLI registers and lists") {
    Review f;
    Receiver rx;
    referee::testing::TempDir t;
    std::string out;
    // The CLI on the local store, as the administrator for NVIDIA.
    REQUIRE_MESSAGE(run_referee("webhook add --url " + rx.url() + " --organisation NVIDIA --event objection.filed --db '" +
                                    f.path + "'",
                                &out) == 0,
                    out);
    CHECK(contains(out, "secret: whsec_"));
    REQUIRE(run_referee("webhook list --db '" + f.path + "'", &out) == 0);
    CHECK(contains(out, rx.url()));
    referee::testing::Serve srv(f.path, {"--webhooks-to-private", "--webhook-retry", "0.05"}, (t.path / "serve.err").string());
    f.file_rcp();
    for (int i = 0; i < 500 && rx.all().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto got = rx.all();
    REQUIRE(got.size() == 1);
    CHECK(got[0].event == "objection.filed");
    CHECK(srv.stop(SIGTERM) == 0);
  }

  TEST_CASE("webhooks: user import sends each member's token to its organisation's hook, kept nowhere once delivered") {
    Review f;
    Receiver rx;
    referee::testing::TempDir t;
    const std::string csv = (t.path / "users.csv").string();
    referee::testing::write_file(csv, "name,organisation,role\nnv7,NVIDIA,member\ndell7,Dell,member\n");
    std::string out;
    const std::string db = " --db '" + f.path + "'";
    // Dell has no hook: nobody is added.
    REQUIRE(run_referee("webhook add --url " + rx.url() + " --organisation NVIDIA" + db, &out) == 0);
    CHECK(run_referee("user import " + csv + " --tokens-by-webhook" + db, &out) != 0);
    CHECK_MESSAGE(contains(out, "users.csv:3: Dell has no webhook that takes its members' tokens"), out);
    CHECK(contains(out, "nothing was added"));
    // A hook that does not take user.token does not count.
    REQUIRE(run_referee("webhook add --url " + rx.url() + " --organisation Dell --event decision" + db, &out) == 0);
    CHECK(run_referee("user import " + csv + " --tokens-by-webhook" + db, &out) != 0);
    REQUIRE(run_referee("webhook add --url '" + rx.url() + "?dell' --organisation Dell --event user.token" + db, &out) == 0);
    REQUIRE_MESSAGE(run_referee("user import " + csv + " --tokens-by-webhook" + db, &out) == 0, out);
    CHECK(contains(out, "added nv7 (member of NVIDIA): token queued to webhook 1"));
    CHECK(contains(out, "added dell7 (member of Dell): token queued to webhook 3"));
    CHECK_FALSE(contains(out, "rft_"));
    REQUIRE(run_referee("webhook deliver --to-private" + db, &out) == 0);
    auto got = rx.all();
    REQUIRE(got.size() == 2);
    std::string token;
    for (const auto& g : got) {
      CHECK(g.event == "user.token");
      if (contains(g.body, "\"user\":\"nv7\"")) token = parse(g.body).find("token")->s;
    }
    REQUIRE(token.rfind("rft_", 0) == 0);
    // The token works; the store no longer holds it, and the log never showed it.
    Request me;
    me.method = "GET";
    me.path = "/api/v1/me";
    me.token = token;
    CHECK(f.api->handle(me).status == 200);
    CHECK(f.count("webhook_deliveries") == 2);
    referee::submissions::Stmt q(f.s->db(), "SELECT payload FROM webhook_deliveries");
    while (q.step()) {
      CHECK_FALSE(contains(q.col_text(0), "rft_"));
      CHECK(contains(q.col_text(0), "(delivered; not kept)"));
    }
    REQUIRE(run_referee("webhook deliveries 1 --json" + db, &out) == 0);
    CHECK_FALSE(contains(out, token));
  }
}
