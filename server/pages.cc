#include "server/pages.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>

#include "base/digest.h"
#include "base/text.h"
#include "base/url.h"
#include "base/utc_time.h"
#include "reports/assets.h"
#include "reports/model.h"
#include "reports/site.h"

namespace referee::server {

namespace {

// The entity tag of a report asset: the SHA-256 of its bytes, computed once
// per asset (the assets are the binary's own and never change while it runs).
std::string asset_tag(const std::string& path, const std::string& body) {
  static std::mutex mu;
  static std::map<std::string, std::string> tags;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, added] = tags.try_emplace(path);
  if (added) {
    std::string& tag = it->second;
    tag.reserve(34);
    tag.push_back('"');
    tag.append(base::sha256_hex(body), 0, 32);
    tag.push_back('"');
  }
  return it->second;
}

// The weight an Accept-Encoding header gives `coding` (RFC 9110 12.5.3): its
// q (1 without one), else that of "*", else -1 (not listed). A weight that is
// not a number from 0 to 1 (q=-1, q=abc, q=) counts as 0: refused.
double coding_weight(const std::string& header, const std::string& coding) {
  double named = -1, any = -1;
  size_t pos = 0;
  while (pos <= header.size()) {
    size_t end = header.find(',', pos);
    if (end == std::string::npos) end = header.size();
    const std::string item = header.substr(pos, end - pos);
    pos = end + 1;
    const size_t semi = item.find(';');
    const std::string name = base::lower(base::trim(item.substr(0, semi)));
    if (name.empty()) continue;
    double q = 1;
    if (semi != std::string::npos) {
      // Parameters: q=... among them (others ignored).
      size_t p = semi;
      while (p < item.size()) {
        size_t next = item.find(';', p + 1);
        if (next == std::string::npos) next = item.size();
        std::string param = base::lower(base::trim(item.substr(p + 1, next - p - 1)));
        param.erase(std::remove_if(param.begin(), param.end(), [](unsigned char c) { return std::isspace(c); }), param.end());
        if (param.rfind("q=", 0) == 0) {
          const std::string v = param.substr(2);
          // 0, 0.5, 1, 1.000: at most three decimals, as the grammar has it.
          static const std::regex weight("^(0(\\.[0-9]{0,3})?|1(\\.0{0,3})?)$");
          q = std::regex_match(v, weight) ? std::strtod(v.c_str(), nullptr) : 0;
        }
        p = next;
      }
    }
    if (name == coding) named = std::max(named, q);
    else if (name == "*") any = std::max(any, q);
  }
  return named >= 0 ? named : any;
}

}  // namespace

std::string answer_coding(const std::string& accept_encoding) {
  // The heavier of the two; brotli (the smaller) on a tie.
  const double br = coding_weight(accept_encoding, "br"), gz = coding_weight(accept_encoding, "gzip");
  if (br > 0 && br >= gz) return "br";
  if (gz > 0) return "gzip";
  return "";
}

bool none_match_hits(const std::string& if_none_match, const std::string& tag) {
  auto opaque = [](std::string t) {
    t = base::trim(t);
    if (t.rfind("W/", 0) == 0) t = t.substr(2);
    return t;
  };
  const std::string want = opaque(tag);
  size_t pos = 0;
  while (pos <= if_none_match.size()) {
    size_t end = if_none_match.find(',', pos);
    if (end == std::string::npos) end = if_none_match.size();
    const std::string item = opaque(if_none_match.substr(pos, end - pos));
    if (item == "*" || (!item.empty() && item == want)) return true;
    pos = end + 1;
  }
  return false;
}

std::string login_form(const std::string& next) {
  return "<form method=\"post\" action=\"/reports/login\">"
         "<label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label> " +
         (next.empty() ? std::string() : "<input type=\"hidden\" name=\"next\" value=\"" + reports::html_escape(next) + "\">") +
         "<button type=\"submit\">Sign in</button></form>\n"
         "<p>A token shows the rounds under review that its organisation may see; an administrator creates one with "
         "<code>referee user add</code>.</p>\n";
}

namespace {

// A report asset's answer with its tag: the scripts and styles are the binary's own, the same for every
// caller, so a browser keeps them and asks again with the tag (a 304 without the bytes, not 1.5 MB of
// charting library on every page). Where the caller takes brotli or gzip, the form compressed at build
// time is sent (never compressed per request), with a tag of its own.
Reply tagged(const Call& call, const std::string& path, Reply r) {
  // Asked for by its version (the pages name it so): the bytes at that URL never change, kept for good.
  const std::string version = reports::asset_version(path);
  std::string asked;
  for (const auto& [k, v] : call.query)
    if (k == "v") asked = v;
  if (!version.empty() && asked == version) {
    for (auto& [name, value] : r.headers)
      if (name == "Cache-Control") value = "public, max-age=31536000, immutable";
  }
  std::string tag = asset_tag(path, r.body);
  for (const auto& a : reports::assets()) {
    if (a.path != path || a.bytes != r.body) continue;
    const char* coding = nullptr;
    std::string_view packed;
    const std::string chosen = answer_coding(call.accept_encoding);
    if (chosen == "br" && !a.brotli.empty()) {
      coding = "br";
      packed = a.brotli;
    } else if (!chosen.empty() && !a.gzip.empty() && coding_weight(call.accept_encoding, "gzip") > 0) {
      coding = "gzip";  // chosen, or brotli chosen where the build made no smaller brotli form
      packed = a.gzip;
    }
    r.headers.emplace_back("Vary", "Accept-Encoding");
    // Sent as chosen here, compressed or not: the transport's own compression would read the header
    // without its weights (gzip;q=0 taken for gzip) and spend seconds on each request.
    r.precompressed = true;
    if (coding) {
      r.body = std::string(packed);
      r.headers.emplace_back("Content-Encoding", coding);
      tag.insert(tag.size() - 1, std::string("-") + coding);
    }
    break;
  }
  r.headers.emplace_back("ETag", tag);
  if (none_match_hits(call.if_none_match, tag)) {
    r.status = 304;
    r.body.clear();
  }
  return r;
}

using reports::html_escape;

// A small page of the server's own (sign-in, errors), in the site's style.
std::string server_page(const std::string& title, const std::string& body_html) {
  std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + html_escape(title) + "</title>";
  out += "<link rel=\"stylesheet\" href=\"/reports/" + reports::asset_url("assets/referee.css") +
         "\"></head>\n<body data-kind=\"server\">";
  out += "<header><nav><a href=\"/reports/index.html\">Rounds</a> <a href=\"/reports/login\">Sign in</a> "
         "<a href=\"/reports/logout\">Sign out</a></nav></header>\n";
  out += "<main><h1>" + html_escape(title) + "</h1>\n" + body_html + "</main></body></html>\n";
  return out;
}



Reply redirect(int status, const std::string& location) {
  Reply r;
  r.status = status;
  r.content_type = "text/plain";
  r.headers.emplace_back("Location", location);
  return r;
}

const char* kLogoutForm =
    "<form method=\"post\" action=\"/reports/logout\"><button type=\"submit\">Sign out</button></form>\n";

// The session cookie counts for the report pages and the review pages, never for the API (/api/v1 takes
// bearer tokens only): one cookie for each of the two paths.
void set_session_cookies(const Context& ctx, Reply* r, const std::string& value, long long max_age) {
  for (const char* path : {"/reports", "/review"})
    r->headers.emplace_back("Set-Cookie", "referee_session=" + value + "; HttpOnly; SameSite=Strict; Path=" + path +
                                              "; Max-Age=" + std::to_string(max_age) + (ctx.tls ? "; Secure" : ""));
}

// Where a sign-in sends the browser: `next` when it is a page of this site
// (/reports/... or /review/...: segments of printable ASCII, none "." or
// ".."), else the report's home.
std::string after_sign_in(const std::string& next) {
  bool ours = (next == "/review" || next.rfind("/review/", 0) == 0 || next.rfind("/reports/", 0) == 0) &&
              next.find("//") == std::string::npos && next.size() <= 512;
  for (char c : next)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f || c == '\\' || c == '%') ours = false;
  for (size_t at = 0; ours && at < next.size();) {
    size_t end = next.find('/', at + 1);
    if (end == std::string::npos) end = next.size();
    std::string seg = next.substr(at + 1, end - at - 1);
    if (seg == "." || seg == "..") ours = false;
    at = end;
  }
  return ours ? next : "/reports/index.html";
}

}  // namespace

// Whether a form was posted from this site: its Origin (when sent) is this
// server's, and the browser does not call it cross-site. A page of another
// site cannot sign a member in with the attacker's token or sign them out.
bool same_site(const Context& ctx, const Call& call) {
  if (!call.fetch_site.empty() && call.fetch_site != "same-origin" && call.fetch_site != "none") return false;
  if (call.origin.empty()) return true;
  // Under this site's Referrer-Policy (no-referrer) a browser sends "Origin: null" with a form: then its
  // Sec-Fetch-Site, checked above, says where the form came from; without one, it cannot be told.
  if (call.origin == "null") return !call.fetch_site.empty();
  return call.origin == std::string(ctx.tls ? "https://" : "http://") + call.host;
}

const std::vector<std::pair<std::string, std::string>>& security_headers() {
  static const std::vector<std::pair<std::string, std::string>> h = {
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      // 'unsafe-eval': the charts' library (Vega) compiles its expressions with Function; inline and
      // other sites' scripts stay refused.
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
  };
  return h;
}

Reply error_page(int status, const std::string& title, const std::string& body_html) {
  Reply r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = server_page(title, body_html);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

Reply method_not_allowed_page(const Call& call, const std::string& allowed) {
  Reply r = error_page(405, "Method not allowed",
                       "<p>" + html_escape(call.method) + " is not allowed on " + html_escape(call.path) +
                           "; allowed: " + allowed + ".</p>\n");
  r.headers.emplace_back("Allow", allowed);
  return r;
}

Reply no_page(const Call& call, const std::string& detail) {
  return error_page(404, "Not found",
                    "<p>There is no page at " + html_escape(call.path) + ".</p>\n" +
                        (detail.empty() ? std::string() : "<p>" + html_escape(detail) + "</p>\n"));
}

// The page a request was made from, for the sign-in to come back to: the path itself for a GET; for a
// form (POST /review/objections/7/vote, /review/3.1.0/objections) the page that holds it.
std::string page_of(const Call& call) {
  if (call.method == "GET" || call.method == "HEAD") return call.path;
  if (call.path.rfind("/review/pairings/", 0) == 0) return "/review/";
  size_t slash = call.path.rfind('/');
  std::string page = slash == std::string::npos || slash == 0 ? "/review/" : call.path.substr(0, slash);
  // /review/ROUND (a round's forms) is its page with the slash.
  if (page.rfind("/review/", 0) == 0 && page.find('/', 8) == std::string::npos) page += "/";
  return page;
}

Reply refusal_page(const Call& call, const std::string& token, const review::Response& refusal) {
  if (refusal.status == 500) {
    std::fprintf(stderr, "referee serve: %s: %s\n", call.path.c_str(), refusal.body.c_str());
    return error_page(500, "Server error", "<p>The server could not read its store; its log says why.</p>\n");
  }
  return error_page(401, "Sign in",
                    std::string(token.empty() ? "<p>These pages need a token.</p>\n"
                                              : "<p>The token is not valid here (unknown or revoked).</p>\n") +
                        login_form(page_of(call)));
}

Reply home_route(Context&, const Call&, const Caller&, const std::vector<std::string>&) {
  return redirect(302, "/reports/index.html");
}

Reply login_form_route(Context&, const Call&, const Caller&, const std::vector<std::string>&) {
  return error_page(200, "Sign in", login_form(""));
}

Reply login_route(Context& ctx, const Call& call, const Caller&, const std::vector<std::string>&) {
  if (!same_site(ctx, call))
    return error_page(403, "Sign-in refused", "<p>A sign-in is taken only from this site's own form.</p>\n" + login_form(""));
  std::string token = base::form_field(call.body, "token");
  // A token goes into a cookie only as the characters tokens are made of.
  bool plain = !token.empty() && token.size() <= 512;
  for (char c : token)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' ||
          c == '/' || c == '='))
      plain = false;
  review::Actor who;
  review::Response refusal;
  if (!plain || !actor_for_token(ctx, token, &who, &refusal)) {
    if (refusal.status == 500) {
      std::fprintf(stderr, "referee serve: /reports/login: %s\n", refusal.body.c_str());
      return error_page(500, "Sign-in failed", "<p>The server could not read its store; its log says why.</p>\n");
    }
    return error_page(401, "Sign-in failed", std::string("<p>That token is not valid here (unknown or revoked).</p>\n") +
                                                 login_form(base::form_field(call.body, "next")));
  }
  Reply r = redirect(303, after_sign_in(base::form_field(call.body, "next")));
  r.user = who.user;
  r.headers.emplace_back("Cache-Control", "no-store");
  std::string id = ctx.sessions.open(token);
  if (id.empty()) return error_page(500, "Sign-in failed", "<p>The server could not make a session; its log says why.</p>\n");
  set_session_cookies(ctx, &r, id, Sessions::kLifetimeS);
  return r;
}

Reply logout_form_route(Context&, const Call&, const Caller&, const std::vector<std::string>&) {
  return error_page(200, "Sign out", kLogoutForm);
}

Reply logout_route(Context& ctx, const Call& call, const Caller&, const std::vector<std::string>&) {
  if (!same_site(ctx, call))
    return error_page(403, "Sign-out refused", "<p>A sign-out is taken only from this site's own form.</p>\n" + std::string(kLogoutForm));
  if (std::string id = cookie_session(call.cookie); !id.empty()) ctx.sessions.close(id);
  Reply r = redirect(303, "/reports/login");
  r.headers.emplace_back("Cache-Control", "no-store");
  set_session_cookies(ctx, &r, "", 0);
  return r;
}

Reply style_route(Context&, const Call& call, const Caller&, const std::vector<std::string>&) {
  // The built-in style sheet holds no data of any round: the sign-in page, shown before any sign-in, uses it.
  for (const auto& a : reports::assets())
    if (a.path == "assets/referee.css") {
      Reply r;
      r.content_type = std::string(a.content_type);
      r.body = std::string(a.bytes);
      r.headers.emplace_back("Cache-Control", "no-cache");
      return tagged(call, std::string(a.path), std::move(r));
    }
  return error_page(404, "Not found", "<p>This build carries no style sheet.</p>\n");
}

Reply page_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  const std::string& site = params.at(0);
  if (site.empty()) return home_route(ctx, call, caller, params);
  std::string serr;
  submissions::Store* store = ctx.reader(&serr);
  if (!store) {
    std::fprintf(stderr, "referee serve: %s: %s\n", call.path.c_str(), serr.c_str());
    return error_page(500, "Server error", "<p>The server could not read its store; its log says why.</p>\n");
  }
  // What the caller may see, as for the API's questions; a page that shows
  // a round not yet published is not kept by any cache.
  review::Actor anonymous;
  anonymous.user = "anonymous";
  bool unpublished = false;
  reports::Visible visible = [&](const std::string& round) {
    if (!ctx.api.can_see_round(caller.who, round)) return false;
    if (!ctx.api.can_see_round(anonymous, round)) unpublished = true;
    return true;
  };
  reports::Options options;
  options.data_files = true;  // served on request: the pages link them
  // To the millisecond: the page's tag leaves this text out, and no other figure of a page has this form.
  options.generated_at = base::utc_now(base::UtcFormat::Millis);
  reports::File file;
  std::string error;
  switch (reports::render(*store, site, call.query, options, visible, &file, &error)) {
    case reports::Status::Ok: {
      Reply r;
      r.content_type = file.content_type;
      if (r.content_type.rfind("text/", 0) == 0 && r.content_type.find("charset") == std::string::npos)
        r.content_type += "; charset=utf-8";
      r.headers.emplace_back("Cache-Control", unpublished ? "no-store" : "no-cache");
      if (!caller.token.empty()) r.headers.emplace_back("Vary", "Authorization, Cookie");
      r.body = std::move(file.body);
      if (site.rfind("assets/", 0) == 0) return tagged(call, site, std::move(r));
      // A page or data file a cache may keep carries a tag of what it shows (its bytes but the time it
      // was made, which differs on every request: a weak tag) and of the coding the transport sends it
      // in (answer_coding): asked again with it while nothing changed, the answer is a 304 without
      // the page.
      if (!unpublished) {
        std::string shown = r.body;
        for (size_t at = shown.find(options.generated_at); at != std::string::npos; at = shown.find(options.generated_at, at))
          shown.erase(at, options.generated_at.size());
        const std::string coding = answer_coding(call.accept_encoding);
        const std::string tag = "W/\"" + base::sha256_hex(shown).substr(0, 32) + (coding.empty() ? "" : "-" + coding) + "\"";
        r.headers.emplace_back("ETag", tag);
        if (none_match_hits(call.if_none_match, tag)) {
          r.status = 304;
          r.body.clear();
        }
      }
      return r;
    }
    case reports::Status::NotFound:
      // The same answer for a round the caller may not see as for one the store does not hold;
      // a head-to-head by query in a round the caller sees says which result is not there.
      return no_page(call, error.rfind("compare.html: ", 0) == 0 ? error.substr(14) : "");
    case reports::Status::BadRequest: {
      std::string msg = error;
      if (msg.find(ctx.db) != std::string::npos) msg = "the request does not name a page";
      return error_page(400, "Bad request", "<p>" + html_escape(msg) + "</p>\n");
    }
    case reports::Status::Error:
      break;
  }
  std::fprintf(stderr, "referee serve: %s: %s\n", call.path.c_str(), error.c_str());
  return error_page(500, "Server error", "<p>The page could not be made; the server's log says why.</p>\n");
}

}  // namespace referee::server
