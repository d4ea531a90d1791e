#include "server/routes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <filesystem>

#include <sodium.h>

#include "mllog/json_writer.h"
#include "base/digest.h"
#include "base/text.h"
#include "base/url.h"
#include "reports/model.h"
#include "review/router.h"
#include "rules/source.h"
#include "server/pages.h"
#include "server/questions.h"
#include "server/review_pages.h"
#include "submissions/store_errors.h"

extern const char referee_openapi_yaml[];
extern const unsigned long referee_openapi_yaml_size;

namespace referee::server {

namespace {

Reply health_route(Context& ctx, const Call&, const Caller&, const std::vector<std::string>&) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("status").value("ok").key("version").value(REFEREE_VERSION);
  w.key("read_only").value(ctx.read_only).key("schema_version").value(submissions::kSchemaVersion).end_object();
  Reply r;
  r.body = w.str();
  return r;
}

Reply openapi_route(Context&, const Call&, const Caller&, const std::vector<std::string>&) {
  Reply r;
  r.body.assign(referee_openapi_yaml, referee_openapi_yaml_size);
  r.content_type = "application/yaml";
  return r;
}

std::vector<Route> make_routes() {
  auto json = [](const char* method, const char* pattern, Access access, Handler h) {
    return Route{method, pattern, access, Credentials::Bearer, Errors::Json, false, std::move(h)};
  };
  auto page = [](const char* method, const char* pattern, Access access, Handler h) {
    return Route{method, pattern, access, Credentials::BearerOrCookie, Errors::Page, method == std::string("GET"), std::move(h)};
  };
  std::vector<Route> out = {
      json("GET", "/api/v1/health", Access::Anyone, health_route),
      json("GET", "/api/v1/openapi.yaml", Access::Anyone, openapi_route),
      json("GET", "/api/v1/query/{name}", Access::Reader, question_route),
      page("GET", "/reports", Access::Anyone, home_route),
      page("GET", "/reports/login", Access::Anyone, login_form_route),
      page("POST", "/reports/login", Access::Anyone, login_route),
      page("GET", "/reports/logout", Access::Anyone, logout_form_route),
      page("POST", "/reports/logout", Access::Anyone, logout_route),
      page("GET", "/reports/assets/referee.css", Access::Anyone, style_route),
      page("GET", "/reports/{path}", Access::Reader, page_route),
      page("GET", "/review", Access::Reader, review_home_route),
      page("GET", "/review/objections/{id}", Access::Reader, review_objection_route),
      page("POST", "/review/objections/{id}/{action}", Access::Reader, review_objection_form_route),
      page("POST", "/review/pairings/{id}", Access::Reader, review_pairing_route),
      page("GET", "/review/{round}", Access::Reader, review_round_route),
      page("POST", "/review/{round}/objections", Access::Reader, review_file_route),
      page("POST", "/review/{round}/announcements", Access::Reader, review_announce_route),
      page("POST", "/review/{round}/audit", Access::Reader, review_audit_route),
  };
  // The review API's routes, each served by review::Api::handle, which
  // authorises it.
  for (const auto& r : review::all_routes())
    out.push_back(Route{r.method, r.pattern, Access::Review, Credentials::Bearer, Errors::Json, false, nullptr});
  return out;
}

// A site path as the page generator writes them (reports::safe_name):
// segments of [A-Za-z0-9._~-], none of them "." or "..".
bool site_path(const std::string& p) {
  if (p.empty()) return true;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t end = p.find('/', pos);
    if (end == std::string::npos) end = p.size();
    std::string seg = p.substr(pos, end - pos);
    if (seg.empty() ? end != p.size() : (seg == "." || seg == "..")) return false;
    for (char c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '~')) return false;
    pos = end + 1;
  }
  return true;
}

// Whether `path` matches `pattern`; *caps gets the {captures}.
bool matches(const std::string& pattern, const std::string& path, std::vector<std::string>* caps) {
  caps->clear();
  size_t i = 0, j = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '{') {
      size_t close = pattern.find('}', i);
      std::string name = pattern.substr(i + 1, close - i - 1);
      i = close + 1;
      if (name == "path" && i == pattern.size()) {
        std::string rest = path.substr(j);
        if (!site_path(rest)) return false;
        caps->push_back(rest);
        return true;
      }
      size_t end = path.find('/', j);
      if (end == std::string::npos) end = path.size();
      if (end == j) return false;
      caps->push_back(path.substr(j, end - j));
      j = end;
      continue;
    }
    if (j >= path.size() || path[j] != pattern[i]) return false;
    ++i;
    ++j;
  }
  return j == path.size();
}

bool method_matches(const Route& r, const std::string& method) {
  return r.method == method || (r.head && method == "HEAD");
}

// A page path as the routes name it: "/reports/" is "/reports", and a review
// page's path is the same with or without its last slash (/review/3.1.0/).
std::string page_route_path(const std::string& path) {
  if (path == "/reports/") return "/reports";
  if (path.rfind("/review/", 0) == 0 && path.size() > 1 && path.back() == '/') return path.substr(0, path.size() - 1);
  return path;
}

// The path a call is routed by: the decoded one of a page, else the raw one.
std::string route_path(const Call& call) {
  if (!is_page_path(call.path)) return call.raw_path;
  return page_route_path(call.path);
}

// The first route whose pattern matches `path`.
const Route* resource(const std::string& path, std::vector<std::string>* caps) {
  for (const auto& r : routes())
    if (matches(r.pattern, path, caps)) return &r;
  return nullptr;
}

std::string allowed_for(const std::string& pattern) {
  std::string out;
  for (const auto& r : routes()) {
    if (r.pattern != pattern) continue;
    out += (out.empty() ? "" : ", ") + r.method;
    if (r.head) out += ", HEAD";
  }
  return out;
}

std::string bearer(const std::string& header) {
  if (header.size() > 7 && (header.compare(0, 7, "Bearer ") == 0 || header.compare(0, 7, "bearer ") == 0))
    return header.substr(7);
  return "";
}

Reply method_not_allowed(const Call& call, const Route& r, const std::string& path) {
  std::string allowed = allowed_for(r.pattern);
  if (r.errors == Errors::Page) return method_not_allowed_page(call, allowed);
  return json_reply(review::error_response(405, "method-not-allowed", call.method + " is not allowed on " + path,
                                           "allowed: " + allowed));
}

// Any path under /api/v1 that no route of the table takes: the review API
// answers it (its 404 or 405).
const Route kReviewFallback{"", "/api/v1/", Access::Review, Credentials::Bearer, Errors::Json, false, nullptr};

// The review API's answer. A write that found the store locked past the
// busy timeout (SQLITE_BUSY, SQLITE_LOCKED) is an overloaded server, not a
// broken one: 503 with Retry-After, nothing written.
Reply review_api(Context& ctx, const Call& call) {
  review::Request r;
  r.method = call.method;
  r.path = call.raw_path;
  r.query = call.query;
  r.body = call.body;
  r.token = bearer(call.authorization);
  r.if_match = call.if_match;
  r.if_match_given = call.if_match_given || !call.if_match.empty();
  if (r.if_match.size() >= 2 && r.if_match.front() == '"' && r.if_match.back() == '"')
    r.if_match = r.if_match.substr(1, r.if_match.size() - 2);
  submissions::clear_thread_failures();
  review::Response out = ctx.api.handle(r);
  if (out.status == 500 && submissions::thread_failed_busy())
    out = review::error_response(503, "busy", "the store is busy with other writes; nothing was changed", "retry after a second");
  return json_reply(out);
}

}  // namespace

bool is_page_path(const std::string& path) {
  return path == "/reports" || path.rfind("/reports/", 0) == 0 || path == "/review" || path.rfind("/review/", 0) == 0;
}

// The referee_session cookie of a Cookie header ("" when none).
std::string cookie_session(const std::string& cookies) {
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string item = cookies.substr(pos, end - pos);
    pos = end + 1;
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    item = item.substr(a);
    const std::string name = "referee_session=";
    if (item.rfind(name, 0) == 0) {
      std::string v = item.substr(name.size());
      while (!v.empty() && v.back() == ' ') v.pop_back();
      return v;
    }
  }
  return "";
}

namespace {
long long now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::string Sessions::open(const std::string& token) {
  if (sodium_init() < 0) return "";
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  std::string id = base::hex(raw, sizeof raw);
  std::lock_guard<std::mutex> lock(mu_);
  const long long now = now_s();
  for (auto it = by_id_.begin(); it != by_id_.end();)
    it = now - it->second.opened_s >= kLifetimeS ? by_id_.erase(it) : std::next(it);
  while (by_id_.size() >= kMax) {
    auto oldest = std::min_element(by_id_.begin(), by_id_.end(),
                                   [](const auto& a, const auto& b) { return a.second.opened_s < b.second.opened_s; });
    by_id_.erase(oldest);
  }
  by_id_[id] = {token, now};
  return id;
}

std::string Sessions::token_of(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return "";
  if (now_s() - it->second.opened_s >= kLifetimeS) {
    by_id_.erase(it);
    return "";
  }
  return it->second.token;
}

std::string Sessions::csrf_of(const std::string& id) {
  if (id.empty() || token_of(id).empty()) return "";
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyed_) {
    if (sodium_init() < 0) return "";
    randombytes_buf(key_, sizeof key_);
    keyed_ = true;
  }
  unsigned char out[32];
  crypto_generichash(out, sizeof out, reinterpret_cast<const unsigned char*>(id.data()), id.size(), key_, sizeof key_);
  return base::hex(out, sizeof out);
}

void Sessions::close(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  by_id_.erase(id);
}

submissions::Store* Context::reader(std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& s = readers_[std::this_thread::get_id()];
  if (!s) s = submissions::Store::open(db, error, submissions::OpenMode::ReadOnly, false);
  return s.get();
}

const std::vector<Route>& routes() {
  static const std::vector<Route> table = make_routes();
  return table;
}

std::string allowed_methods(const std::string& path) {
  std::vector<std::string> caps;
  const Route* r = resource(is_page_path(path) ? page_route_path(path) : path, &caps);
  if (r) return allowed_for(r->pattern);
  return is_page_path(path) ? "GET, HEAD" : "";
}

bool actor_for_token(Context& ctx, const std::string& token, review::Actor* out, review::Response* refusal) {
  review::Request r;
  r.token = token;
  return ctx.api.authenticate(r, out, refusal);
}

bool resolve_actor(Context& ctx, const Route& route, const Call& call, Caller* out, review::Response* refusal) {
  *out = Caller{};
  if (route.access == Access::Anyone) return true;
  out->token = bearer(call.authorization);
  if (out->token.empty() && route.credentials == Credentials::BearerOrCookie) {
    std::string id = cookie_session(call.cookie);
    if (!id.empty()) out->token = ctx.sessions.token_of(id);
    out->by_cookie = !out->token.empty();
  }
  if (route.access == Access::Review) {
    review::Response ignored;
    if (!out->token.empty() && !actor_for_token(ctx, out->token, &out->who, &ignored)) out->who = review::Actor{};
    return true;
  }
  if (out->token.empty() && ctx.anonymous_public) {
    out->who.user = "anonymous";  // a member of no organisation: published rounds only
    return true;
  }
  return actor_for_token(ctx, out->token, &out->who, refusal);
}

namespace {

Reply answer(Context& ctx, const Call& call, std::string* user) {
  user->clear();
  const bool pages = is_page_path(call.path);
  if (!host_allowed(ctx, call.host)) {
    const std::string name = base::one_line(base::host_header_name(call.host).empty() ? call.host : base::host_header_name(call.host));
    const std::string why = "this server does not answer to the host name \"" + name + "\"";
    const std::string fix = "use its address (127.0.0.1:PORT), or start it with --allow-host " + name + " when that name is its own";
    if (pages) return error_page(421, "Wrong host name", "<p>" + reports::html_escape(why) + ".</p>\n<p>" + reports::html_escape(fix) + ".</p>\n");
    return json_reply(review::error_response(421, "misdirected", why, fix));
  }
  const std::string path = route_path(call);
  std::vector<std::string> caps;
  const Route* found = resource(path, &caps);
  if (!found) {
    if (pages) {
      if (call.method != "GET" && call.method != "HEAD") return method_not_allowed_page(call, "GET, HEAD");
      return no_page(call);
    }
    if (path.rfind("/api/v1/", 0) != 0)
      return json_reply(review::error_response(404, "not-found", "no route " + call.method + " " + path,
                                               "the API is under /api/v1, the report pages under /reports/"));
    found = &kReviewFallback;  // the API's own 404
  }
  if (!found->handler) {  // the review API, which authorises each of its routes itself (its 405 included)
    Caller caller;
    review::Response ignored;
    resolve_actor(ctx, *found, call, &caller, &ignored);
    *user = caller.who.user;
    return review_api(ctx, call);
  }
  const Route* route = nullptr;
  for (const auto& r : routes())
    if (r.pattern == found->pattern && method_matches(r, call.method)) {
      route = &r;
      break;
    }
  if (!route) return method_not_allowed(call, *found, path);
  Caller caller;
  review::Response refusal;
  if (!resolve_actor(ctx, *route, call, &caller, &refusal))
    return route->errors == Errors::Page ? refusal_page(call, caller.token, refusal) : json_reply(refusal);
  *user = caller.who.user;
  Reply reply = route->handler(ctx, call, caller, caps);
  if (!reply.user.empty()) *user = reply.user;
  return reply;
}

}  // namespace

std::vector<std::string> Context::server_paths_of(const std::string& db) {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (p.empty()) return;
    std::error_code ec;
    std::string abs = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec).string();
    for (const std::string& one : {p, abs}) {
      std::string t = one;
      while (t.size() > 1 && t.back() == '/') t.pop_back();
      if (t.size() > 1 && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  };
  add(db);
  add(std::filesystem::path(db).parent_path().string());
  add(std::filesystem::absolute(db).parent_path().string());
  add(rules::cache_dir());
  add(rules::builtin_sets_dir());
  add(std::filesystem::path(rules::builtin_sets_dir()).parent_path().parent_path().string());  // the sources it came from
  if (const char* r = std::getenv("REFEREE_RULES"); r && *r) add(r);
  if (const char* home = std::getenv("HOME"); home && std::string(home).size() > 1) add(home);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

std::string scrub_paths(const Context& ctx, std::string text) {
  for (const std::string& p : ctx.server_paths) {
    if (p.find('/') == std::string::npos) continue;  // a bare file name is what the caller gave
    for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at + 8)) text.replace(at, p.size(), "[server]");
  }
  return text;
}

bool host_allowed(const Context& ctx, const std::string& host_header) {
  if (host_header.empty()) return true;
  const std::string name = base::host_header_name(host_header);
  if (name.empty()) return false;
  if (name == "localhost" || base::is_ip_literal(name)) return true;
  for (const auto& allowed : ctx.allowed_hosts)
    if (allowed == name) return true;
  return false;
}

Reply dispatch(Context& ctx, const Call& call, std::string* user) {
  Reply reply = answer(ctx, call, user);
  std::string scrubbed = scrub_paths(ctx, reply.body);
  if (scrubbed != reply.body) {
    // The operator still sees the whole message.
    if (reply.status >= 500) std::fprintf(stderr, "referee serve: %d for %s: %s\n", reply.status, base::one_line(call.path).c_str(),
                                          base::one_line(reply.body).c_str());
    reply.body = std::move(scrubbed);
  }
  return reply;
}

Reply json_reply(const review::Response& r) {
  Reply out;
  out.status = r.status;
  out.body = r.body;
  out.content_type = r.content_type;
  if (out.content_type.rfind("text/", 0) == 0 && out.content_type.find("charset") == std::string::npos)
    out.content_type += "; charset=utf-8";
  if (r.status == 503) out.headers.emplace_back("Retry-After", "1");
  return out;
}

}  // namespace referee::server
