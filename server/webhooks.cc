#include "server/webhooks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <set>

#include "base/digest.h"
#include "base/dynlib.h"
#include "review/events.h"

namespace referee::server {

bool restricted_address(const std::string& ip) {
  in_addr v4{};
  in6_addr v6{};
  auto v4_restricted = [](uint32_t a) {
    const unsigned b0 = a >> 24, b1 = (a >> 16) & 0xff;
    return b0 == 0 || b0 == 10 || b0 == 127 || (b0 == 169 && b1 == 254) || (b0 == 172 && (b1 & 0xf0) == 16) ||
           (b0 == 192 && b1 == 168) || (b0 == 100 && (b1 & 0xc0) == 64) || b0 >= 224 || (b0 == 192 && b1 == 0) ||
           (b0 == 198 && (b1 & 0xfe) == 18) || (b0 == 198 && b1 == 51 && ((a >> 8) & 0xff) == 100) ||
           (b0 == 203 && b1 == 0 && ((a >> 8) & 0xff) == 113);
  };
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) return v4_restricted(ntohl(v4.s_addr));
  if (inet_pton(AF_INET6, ip.c_str(), &v6) != 1) return true;  // not an address: refused
  const unsigned char* b = v6.s6_addr;
  bool zero_prefix = true;
  for (int i = 0; i < 10; ++i) zero_prefix = zero_prefix && b[i] == 0;
  if (zero_prefix && b[10] == 0xff && b[11] == 0xff)  // ::ffff:a.b.c.d
    return v4_restricted((uint32_t(b[12]) << 24) | (uint32_t(b[13]) << 16) | (uint32_t(b[14]) << 8) | b[15]);
  if (zero_prefix && b[10] == 0 && b[11] == 0) return true;  // ::, ::1, IPv4-compatible
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) return true;  // 64:ff9b::/96 and /48 NAT64
  if ((b[0] & 0xfe) == 0xfc) return true;                    // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;    // fe80::/10 link-local
  if (b[0] == 0xff) return true;                             // multicast
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return true;  // documentation
  return false;
}

std::string webhook_signature(const std::string& secret, const std::string& timestamp, const std::string& delivery,
                              const std::string& body) {
  return "sha256=" + base::hmac_sha256_hex(secret, timestamp + "." + delivery + "." + body);
}

namespace {

struct SocketGate {
  bool allow_private = false;
  std::string refused;  // the address refused, if one was
};

curl_socket_t open_socket(void* clientp, curlsocktype, struct curl_sockaddr* a) {
  auto* gate = static_cast<SocketGate*>(clientp);
  char text[INET6_ADDRSTRLEN] = {0};
  if (a->family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&a->addr)->sin_addr, text, sizeof text);
  else if (a->family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&a->addr)->sin6_addr, text, sizeof text);
  else
    return CURL_SOCKET_BAD;
  if (!gate->allow_private && restricted_address(text)) {
    gate->refused = text;
    return CURL_SOCKET_BAD;
  }
  return ::socket(a->family, a->socktype, a->protocol);
}

size_t keep_some(char* data, size_t size, size_t n, void* userp) {
  auto* out = static_cast<std::string*>(userp);
  if (out->size() < 512) out->append(data, std::min(size * n, 512 - out->size()));
  return size * n;
}

// One attempt: the HTTP status (0 when none came) and what went wrong ("" for a 2xx).
std::pair<int, std::string> post(const base::dyn::Curl* api, const review::Outgoing& d, const WebhookOptions& o) {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api->easy_init(), api->easy_cleanup);
  if (!curl) return {0, "cannot start libcurl"};
  const std::string ts = std::to_string(static_cast<long long>(std::time(nullptr)));
  struct curl_slist* headers = nullptr;
  auto add = [&](const std::string& h) {
    if (auto* n = api->slist_append(headers, h.c_str())) headers = n;
  };
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> free_headers(nullptr, api->slist_free_all);
  add("Content-Type: application/json");
  add("X-Referee-Event: " + d.kind);
  add("X-Referee-Delivery: " + d.key);
  add("X-Referee-Timestamp: " + ts);
  add("X-Referee-Signature: " + webhook_signature(d.secret, ts, d.key, d.body));
  add("Expect:");
  free_headers.reset(headers);
  SocketGate gate;
  gate.allow_private = o.allow_private;
  std::string answer;
  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* h = curl.get();
  api->easy_setopt(h, CURLOPT_URL, d.url.c_str());
  api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  api->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  api->easy_setopt(h, CURLOPT_PROXY, "");
  api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(h, CURLOPT_USERAGENT, "referee-webhooks/" REFEREE_VERSION);
  api->easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_seconds * 1000));
  api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.timeout_seconds * 1000));
  api->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  api->easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  api->easy_setopt(h, CURLOPT_OPENSOCKETDATA, &gate);
  api->easy_setopt(h, CURLOPT_WRITEFUNCTION, keep_some);
  api->easy_setopt(h, CURLOPT_WRITEDATA, &answer);
  api->easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  api->easy_setopt(h, CURLOPT_POST, 1L);
  api->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(d.body.size()));
  api->easy_setopt(h, CURLOPT_POSTFIELDS, d.body.c_str());
  CURLcode rc = api->easy_perform(h);
  if (!gate.refused.empty())
    return {0, "refused: the hook's host is " + gate.refused +
                   ", a loopback or private address (allowed by referee serve --webhooks-to-private, or webhook deliver --to-private)"};
  if (rc != CURLE_OK) return {0, errbuf[0] ? std::string(errbuf) : std::string(api->easy_strerror(rc))};
  long status = 0;
  api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return {static_cast<int>(status), ""};
  std::string said;
  for (char c : answer) said += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return {static_cast<int>(status), "HTTP " + std::to_string(status) + (said.empty() ? "" : ": " + said.substr(0, 200))};
}

}  // namespace

int deliver_due(submissions::Store& s, const WebhookOptions& o, std::string* error) {
  std::string load_error;
  const base::dyn::Curl* api = base::dyn::curl(&load_error);
  if (!api) {
    *error = load_error;
    return -1;
  }
  int sent = 0;
  // The lease covers every attempt of the batch, so another sender does not take them meanwhile.
  const double lease = (o.timeout_seconds + 5) * o.batch;
  auto batch = review::claim_deliveries(s, review::now_utc(), o.batch, lease, error);
  if (!error->empty()) return -1;
  std::set<long long> unreachable;  // hooks that gave no answer in this batch: their next deliveries wait
  for (const auto& d : batch) {
    if (unreachable.count(d.webhook)) {
      std::string err;
      if (!review::record_attempt(s, d, 0, "not tried: the attempt before it to this hook got no answer", 0, o.backoff, &err,
                                  /*counted=*/false)) {
        *error = err;
        return -1;
      }
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    auto [status, what] = post(api, d, o);
    if (status == 0) unreachable.insert(d.webhook);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string err;
    if (!review::record_attempt(s, d, status, what, ms, o.backoff, &err)) {
      *error = err;
      return -1;
    }
    ++sent;
  }
  return sent;
}

WebhookSender::WebhookSender(std::string db, WebhookOptions o) : db_(std::move(db)), o_(std::move(o)) {}

WebhookSender::~WebhookSender() { stop(); }

bool WebhookSender::start(std::string* error) {
  auto s = submissions::Store::open(db_, error);
  if (!s) return false;
  thread_ = std::thread([this] { loop(); });
  return true;
}

void WebhookSender::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::loop() {
  std::string error;
  auto s = submissions::Store::open(db_, &error);
  if (!s) {
    std::cerr << "referee serve: webhooks: " << error << "\n";
    return;
  }
  auto last_sweep = std::chrono::steady_clock::now() - std::chrono::minutes(2);
  std::string last_error;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return;
    }
    error.clear();
    if (std::chrono::steady_clock::now() - last_sweep > std::chrono::minutes(1)) {
      last_sweep = std::chrono::steady_clock::now();
      if (review::queue_deadline_reminders(*s, review::now_utc(), &error) < 0 && error != last_error)
        std::cerr << "referee serve: webhooks: deadline reminders: " << (last_error = error) << "\n";
      error.clear();
    }
    int n = deliver_due(*s, o_, &error);
    if (n < 0 && error != last_error) std::cerr << "referee serve: webhooks: " << (last_error = error) << "\n";
    std::unique_lock<std::mutex> lock(mu_);
    if (n > 0) continue;  // more may be due
    cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; });
  }
}

}  // namespace referee::server
