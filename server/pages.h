// The report pages under /reports (docs/reports.md, "Served"): each page
// rendered per request by reports::render with the caller's visibility, the
// sign-in that sets the referee_token cookie, and the server's own pages
// for errors there (HTML, never the API's JSON).
#pragma once

#include <string>
#include <vector>

#include "server/routes.h"

namespace referee::server {

// GET /reports: to /reports/index.html.
Reply home_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /reports/{path}: one file of the site; "" is the home.
Reply page_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /reports/assets/referee.css to anyone: the sign-in page's look (the style sheet holds no data).
Reply style_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /reports/login: the sign-in form.
Reply login_form_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// POST /reports/login: a valid token from the form becomes a cookie for /reports.
Reply login_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// GET /reports/logout: a form to sign out; POST: ends the session (from this site only) and clears the cookie.
Reply logout_form_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
Reply logout_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params);
// The sign-in form; a sign-in sends the browser on to `next` when it is a
// page of this site (/reports/..., /review/...), else to the report's home.
std::string login_form(const std::string& next);
// The page a request was made from, for a sign-in to come back to: the path
// of a GET; for a form posted to /review/... the page that holds the form.
std::string page_of(const Call& call);
// Whether a form was posted from this site: its Origin (when sent) is this
// server's, and the browser does not call it cross-site.
bool same_site(const Context& ctx, const Call& call);
// The headers every answer of the server carries: no framing, no sniffing, no referrer, and a content
// security policy that lets a page load only the site's own assets.
const std::vector<std::pair<std::string, std::string>>& security_headers();

// The coding an answer the transport compresses goes out in, by the request's
// Accept-Encoding with its weights: "br", "gzip" or "" (as it is). The server
// hands cpp-httplib only this choice (it reads the header without weights).
std::string answer_coding(const std::string& accept_encoding);
// Whether an If-None-Match header (a list of entity tags, or "*") names `tag`,
// compared weakly (W/ prefixes ignored), as RFC 9110 has it for GET.
bool none_match_hits(const std::string& if_none_match, const std::string& tag);

// A page of the server's own with `status`, in the site's style, never cached.
Reply error_page(int status, const std::string& title, const std::string& body_html);
// resolve_actor's refusal as a page: 401 with the sign-in form, or 500.
Reply refusal_page(const Call& call, const std::string& token, const review::Response& refusal);
// 405 with Allow: `allowed`.
Reply method_not_allowed_page(const Call& call, const std::string& allowed);
// 404: no page at call.path.
Reply no_page(const Call& call, const std::string& detail = "");

}  // namespace referee::server
