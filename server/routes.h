// What `referee serve` answers, as one table: each route's method, path
// pattern, who may call it and how its errors look. The table feeds the
// router (dispatch) and the test that docs/openapi.yaml documents every
// route and no other (server/openapi_test.cc). Requests and replies here are
// plain values; server.cc puts them on HTTP.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "review/api.h"
#include "submissions/store.h"

namespace referee::server {

// One request, independent of the HTTP library.
struct Call {
  std::string method;    // GET, HEAD, POST, ...
  std::string raw_path;  // the target's path as sent: the review API decodes each segment itself ("%2F" stays in one)
  std::string path;      // percent-decoded: the report pages
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::string body;
  std::string authorization;  // the headers a route may read
  std::string cookie;
  std::string if_match;
  bool if_match_given = false;  // the request has an If-Match header, empty or not
  std::string if_none_match;    // a cache's copy of a report asset: answered 304 when it is current
  std::string host, origin, fetch_site;  // Host, Origin, Sec-Fetch-Site: a form's POST must come from this site
  std::string accept_encoding;           // a report asset is sent compressed at build time where the caller takes it
};

// One answer.
struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string user;  // for the log line: who the handler found the caller to be when resolve_actor did not (the sign-in)
  // The body is sent as it is: compressed at build time (its Content-Encoding
  // header says how) or deliberately not; the transport must not compress it.
  bool precompressed = false;
};

// Sign-in sessions of the report pages. The cookie holds a random session
// id, never the API token; the id maps to the token here (in this process's
// memory: a restart signs everybody out), for at most kLifetime from sign-in,
// and the token is checked again on every request (a revoked one ends the
// session at once). At most kMax sessions: the oldest goes first. Thread-safe.
class Sessions {
 public:
  static constexpr long long kLifetimeS = 12 * 3600;
  static constexpr size_t kMax = 10000;
  // A new session for `token`: its id (64 hex digits from libsodium's
  // randombytes_buf); "" when no entropy could be had.
  std::string open(const std::string& token);
  // The token of a live session ("" for an unknown or expired id).
  std::string token_of(const std::string& id);
  void close(const std::string& id);
  // The anti-forgery value of session `id`, which the review pages' forms
  // carry ("" for an unknown or expired session): a keyed hash of the id
  // (BLAKE2b, a key drawn when the first is asked for), so a page of another
  // site, which cannot read the cookie, cannot know it.
  std::string csrf_of(const std::string& id);

 private:
  struct Entry {
    std::string token;
    long long opened_s = 0;
  };
  std::mutex mu_;
  std::map<std::string, Entry> by_id_;
  unsigned char key_[32] = {};
  bool keyed_ = false;
};

// The session id of the referee_session cookie in a Cookie header ("" when none).
std::string cookie_session(const std::string& cookies);

// The server's state that routes share. Thread-safe.
class Context {
 public:
  Context(review::Api& api, std::string db, bool read_only, bool anonymous_public, bool tls, size_t max_body,
          std::vector<std::string> allowed_hosts = {})
      : api(api), db(std::move(db)), read_only(read_only), anonymous_public(anonymous_public), tls(tls), max_body(max_body),
        allowed_hosts(std::move(allowed_hosts)), server_paths(server_paths_of(this->db)) {}

  review::Api& api;
  const std::string db;
  const bool read_only;
  const bool anonymous_public;  // --public: callers without a token see published rounds
  const bool tls;
  const size_t max_body;
  // Names (lower-case) a request's Host may give besides an address literal
  // and "localhost" (--allow-host); see host_allowed.
  const std::vector<std::string> allowed_hosts;
  // Folders of this machine that no answer names (longest first): the
  // store's folder, the rule cache, the built-in rule sets and the sources
  // they are in, $REFEREE_RULES, the home folder. See scrub_paths.
  const std::vector<std::string> server_paths;
  static std::vector<std::string> server_paths_of(const std::string& db);

  Sessions sessions;

  // This thread's read-only connection for questions and pages (opened on
  // first use, without quick_check: the store was checked at start). Null
  // with *error when it cannot be opened.
  submissions::Store* reader(std::string* error);

 private:
  std::mutex mu_;
  std::map<std::thread::id, std::unique_ptr<submissions::Store>> readers_;
};

// Whether this server answers a request sent with this Host header: an
// address literal (any port), "localhost", or a name of ctx.allowed_hosts.
// Any other name is refused (421) before routing: a page of another site
// whose name the attacker points at this machine (DNS rebinding) is then
// never answered as if it were this server. An empty Host (HTTP/1.0, no
// browser) is answered.
bool host_allowed(const Context& ctx, const std::string& host_header);

// Who may call a route.
enum class Access {
  Anyone,  // nobody is asked for credentials: health, the API's description, the sign-in
  Reader,  // a valid token; without one, on a server started with --public, an anonymous
           // caller who sees published rounds only (questions, report pages)
  Review,  // the review API: review::Api authenticates and authorises each of its routes by
           // role, organisation and round state (docs/review.md); anonymous ones need no token
};

// Where the caller's token is read.
enum class Credentials {
  Bearer,          // `Authorization: Bearer TOKEN`
  BearerOrCookie,  // that, else the session of the referee_session cookie that POST /reports/login sets
};

// How a route's errors look.
enum class Errors {
  Json,  // {"error": {"status", "code", "message", "hint"}} (the API)
  Page,  // an HTML page in the report's style (/reports)
};

// The caller, as resolve_actor found them.
struct Caller {
  review::Actor who;  // who.user "" when nobody was identified
  std::string token;  // as presented ("" = none)
  bool by_cookie = false;  // the token is the sign-in session's (a browser sends the cookie by itself)
};

// Pre: `params` holds the route's {captures}, in order.
using Handler = std::function<Reply(Context&, const Call&, const Caller&, const std::vector<std::string>& params)>;

struct Route {
  std::string method;   // GET, POST, PUT, PATCH, DELETE
  std::string pattern;  // /api/v1/query/{name}: {x} is one path segment; a last {path} takes the rest,
                        // slashes included, as long as it is a site path (segments of [A-Za-z0-9._-], none . or ..)
  Access access = Access::Reader;
  Credentials credentials = Credentials::Bearer;
  Errors errors = Errors::Json;
  bool head = false;  // HEAD is answered as GET (without the body)
  Handler handler;    // null: review::Api::handle serves the route
};

// Whether `path` (decoded) is one of the pages (/reports..., /review...),
// whose errors are HTML pages.
bool is_page_path(const std::string& path);

// Every route, in matching order (a path takes the first pattern it
// matches): the server's own, then the review API's (review/router.h).
const std::vector<Route>& routes();

// The methods the first pattern that matches `path` takes, as an Allow
// header lists them ("GET, HEAD, POST"); "" when no pattern matches.
std::string allowed_methods(const std::string& path);

// One resolve_actor for every route: the caller of `call` for `route`. The
// token comes from the route's Credentials. Access::Anyone: nobody.
// Access::Review: the token's user when it is valid (for the log; the review
// API decides). Access::Reader: the token's user; no token on a --public
// server: "anonymous", a member of no organisation. Post: true with *out;
// else false with *refusal (401: no, unknown or revoked token; 500: the
// store could not be read).
bool resolve_actor(Context& ctx, const Route& route, const Call& call, Caller* out, review::Response* refusal);

// The user of `token`, as resolve_actor checks it (the sign-in form uses it
// too). False with *refusal as there.
bool actor_for_token(Context& ctx, const std::string& token, review::Actor* out, review::Response* refusal);

// Answers `call`: its route's handler, or review::Api::handle for the
// review API. *user: who asked, for the log line ("" = nobody).
Reply dispatch(Context& ctx, const Call& call, std::string* user);

// `text` with every server path of ctx (Context::server_paths) written as
// "[server]": an answer names files by what the caller gave (a result, a
// run's file name), never by where they lie on the server. dispatch applies
// it to every answer.
std::string scrub_paths(const Context& ctx, std::string text);

// A review::Response as a reply: text types in UTF-8, Retry-After on a 503.
Reply json_reply(const review::Response& r);

}  // namespace referee::server
