// libFuzzer target: the request path of `referee serve` after the HTTP
// library: what is refused on the headers (server/limits.h), the router
// (server::dispatch: the route table, who the caller is, the questions, the
// report pages) and every review route's body reader, on a real review
// store (tests/review_store.h) in a temporary folder, built afresh every
// 2,000 inputs.
//
// An input is lines: the caller (a user name of the store, "forged",
// "revoked", "cookie:USER" or "" for nobody), "public" or not, the method,
// the request target (path and query, as sent), header lines up to an
// empty line, then the body.
//
// Besides "does not crash": every answer has a status from 200 to 599 and
// never 500 (an error the server did not foresee), a JSON answer parses, a
// refusal on the headers is a 4xx, and nothing a caller without a token
// sends changes the store.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/url.h"
#include "mllog/json.h"
#include "server/limits.h"
#include "server/routes.h"
#include "tests/review_store.h"

namespace {

using referee::testing::review_fixture::ReviewStore;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "request_fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

struct World {
  std::string dir;
  std::unique_ptr<ReviewStore> store;
  std::unique_ptr<referee::server::Context> members, open;  // without and with --public
};

World* world = nullptr;

long long events(ReviewStore& s) {
  referee::submissions::Stmt q(s.s->db(), "SELECT COUNT(*) FROM events");
  return q.step() ? q.col_int(0) : -1;
}

std::vector<std::string_view> split_lines(std::string_view text, size_t most, std::string_view* rest) {
  std::vector<std::string_view> out;
  while (out.size() < most) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      out.push_back(text);
      text = {};
      break;
    }
    out.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  *rest = text;
  return out;
}

// A fresh store in a fresh folder (the previous one removed): writes that
// succeed make the store grow, and every answer slower with it.
void build_world() {
  if (world) {
    world->members.reset();
    world->open.reset();
    world->store.reset();
    std::error_code ec;
    std::filesystem::remove_all(world->dir, ec);
  } else {
    world = new World;
  }
  char tmpl[] = "/tmp/referee-request-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) fail("mkdtemp");
  world->dir = tmpl;
  try {
    world->store = std::make_unique<ReviewStore>(world->dir);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  auto& api = *world->store->api;
  world->members = std::make_unique<referee::server::Context>(api, world->store->path, false, false, false, 1 << 20);
  world->open = std::make_unique<referee::server::Context>(api, world->store->path, false, true, false, 1 << 20);
}

// Inputs run against one store before it is built afresh.
constexpr int kInputsPerStore = 2000;
int inputs_on_store = 0;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  build_world();
  // The folder goes when the process does.
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(world->dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  if (++inputs_on_store > kInputsPerStore) {
    build_world();
    inputs_on_store = 1;
  }
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view rest;
  auto head = split_lines(text, 4, &rest);
  if (head.size() < 4) return 0;
  std::string who(head[0]);
  bool is_public = head[1] == "public";

  referee::server::Call call;
  call.method = std::string(head[2]);
  std::string target(head[3]);
  size_t q = target.find('?');
  call.raw_path = target.substr(0, q);
  call.path = referee::base::percent_decode_lenient(call.raw_path);
  if (q != std::string::npos) {
    std::string_view query = std::string_view(target).substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view kv = query.substr(0, amp);
      size_t eq = kv.find('=');
      call.query.emplace_back(referee::base::percent_decode_lenient(kv.substr(0, eq), referee::base::Plus::Space),
                              eq == std::string_view::npos
                                  ? std::string()
                                  : referee::base::percent_decode_lenient(kv.substr(eq + 1), referee::base::Plus::Space));
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  // Header lines up to an empty one; the rest is the body.
  std::multimap<std::string, std::string> headers;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    headers.emplace(std::string(line.substr(0, colon)), std::string(value));
  }
  call.body = std::string(rest);

  ReviewStore& store = *world->store;
  if (who == "forged") call.authorization = "Bearer rft_" + std::string(64, 'a');
  else if (who == "revoked") call.authorization = "Bearer " + store.token.at("gone");
  else if (who.rfind("cookie:", 0) == 0 && store.token.count(who.substr(7))) call.cookie = "referee_session=" + (is_public ? *world->open : *world->members).sessions.open(store.token.at(who.substr(7)));
  else if (store.token.count(who)) call.authorization = "Bearer " + store.token.at(who);
  for (const auto& [k, v] : headers) {
    if (referee::base::iequals(k, "If-Match")) {
      call.if_match = v;
      call.if_match_given = true;
    }
    if (referee::base::iequals(k, "Authorization") && call.authorization.empty()) call.authorization = v;
  }

  referee::server::Refusal no = referee::server::refuse_before_body(headers, 1 << 20);
  if (no.status != 0 && (no.status < 400 || no.status > 499)) fail("a refusal on the headers that is not a 4xx");

  const bool nobody = call.authorization.empty() && call.cookie.empty();
  const long long before = nobody ? events(store) : 0;
  std::string user;
  referee::server::Reply reply = referee::server::dispatch(is_public ? *world->open : *world->members, call, &user);
  if (reply.status < 200 || reply.status > 599) fail("status " + std::to_string(reply.status));
  if (reply.status == 500) fail("500 for " + call.method + " " + target + ": " + reply.body);
  if (reply.content_type.rfind("application/json", 0) == 0 && !reply.body.empty()) {
    referee::mllog::Json j;
    std::string err;
    if (!referee::mllog::parse_json_permissive(reply.body, &j, &err)) fail("an answer that is not JSON: " + reply.body);
  }
  if (nobody && events(store) != before) fail("a caller without a token changed the store: " + call.method + " " + target);
  return 0;
}
