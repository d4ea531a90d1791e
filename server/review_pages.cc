#include "server/review_pages.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "base/invisible.h"
#include "base/text.h"
#include "base/url.h"
#include "base/utc_time.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "reports/model.h"
#include "reports/site.h"
#include "review/actor.h"
#include "review/fixes.h"
#include "review/objection_codec.h"
#include "review/round_codec.h"
#include "server/pages.h"

namespace referee::server {

namespace {

using mllog::Json;
using reports::html_escape;

// ------------------------------------------------------------ the API, asked for the caller

struct Answer {
  int status = 0;
  Json body;  // null when the answer was not JSON
};

Answer ask(Context& ctx, const Caller& caller, const std::string& method, const std::string& path,
           const std::vector<std::pair<std::string, std::string>>& query = {}, const std::string& body = "",
           long long if_match = 0) {
  review::Request r;
  r.method = method;
  r.path = path;
  r.query = query;
  r.body = body;
  r.token = caller.token;
  if (if_match > 0) {
    r.if_match = std::to_string(if_match);
    r.if_match_given = true;
  }
  review::Response got = ctx.api.handle(r);
  Answer a;
  a.status = got.status;
  std::string error;
  if (!mllog::parse_json_permissive(got.body, &a.body, &error)) a.body = Json();
  return a;
}

const Json* field(const Json* j, std::string_view name) { return j ? j->find(name) : nullptr; }

// A field as text: strings as they are, numbers as JSON writes them, "" for null or missing.
std::string text(const Json* j) {
  if (!j) return "";
  switch (j->kind) {
    case Json::Kind::String: return j->s;
    case Json::Kind::Int: return std::to_string(j->i);
    case Json::Kind::Float: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.10g", j->f);
      return buf;
    }
    case Json::Kind::Bool: return j->b ? "yes" : "no";
    default: return "";
  }
}
std::string text(const Json* j, std::string_view name) { return text(field(j, name)); }
long long number(const Json* j, std::string_view name) {
  const Json* f = field(j, name);
  if (!f) return 0;
  if (f->kind == Json::Kind::Int) return f->i;
  if (f->kind == Json::Kind::Float) return static_cast<long long>(f->f);
  return 0;
}
const std::vector<Json>& items(const Json* j, std::string_view name) {
  static const std::vector<Json> none;
  const Json* f = field(j, name);
  return f && f->kind == Json::Kind::Array ? f->items : none;
}
bool names(const Json* j, std::string_view list, const std::string& value) {
  for (const auto& x : items(j, list))
    if (x.kind == Json::Kind::String && x.s == value) return true;
  return false;
}

}  // namespace

// The API's words for a field in a message or hint, as the page's forms say
// them: "(--override REASON, API field `override`)" -> "(the form's
// \"Override reason\" field)". The API's messages name the CLI flag and the
// API field, neither of which a member on a page has.
std::string form_words(const std::string& text) {
  static const std::map<std::string, std::string> labels = {
      {"override", "Override reason"}, {"factor", "Factor"},         {"tie_break", "On a tie"},
      {"remedy", "Remedy"},            {"reason", "Why the decision is amended"},
      {"results", "Results"},          {"title", "Title"},           {"rule", "Rule"},
      {"organisation", "Organisation"}, {"round", "Round"},          {"against", "Against"},
      {"amend", "Amend"},              {"fix_due", "Fix due"},       {"text", "Text"}};
  auto label = [&](const std::string& f) {
    auto it = labels.find(f);
    return "\"" + (it == labels.end() ? f : it->second) + "\"";
  };
  static const std::regex one(R"(\((?:--[^(),]*, )?API field `([a-z_]+)`\))");
  static const std::regex two(R"(\((?:--[^()]*, )?API fields `([a-z_]+)`, `([a-z_]+)`\))");
  static const std::regex bare(R"(API field `([a-z_]+)`)");
  std::string out, rest = text;
  std::smatch m;
  while (std::regex_search(rest, m, two)) {
    out += m.prefix().str() + "(the form's " + label(m[1]) + " and " + label(m[2]) + " fields)";
    rest = m.suffix().str();
  }
  rest = out + rest;
  out.clear();
  while (std::regex_search(rest, m, one)) {
    out += m.prefix().str() + "(the form's " + label(m[1]) + " field)";
    rest = m.suffix().str();
  }
  rest = out + rest;
  out.clear();
  while (std::regex_search(rest, m, bare)) {
    out += m.prefix().str() + "the form's " + label(m[1]) + " field";
    rest = m.suffix().str();
  }
  return out + rest;
}

namespace {

// The API's error, as one line: its message and its hint, in the forms' words.
std::string error_text(const Answer& a) {
  const Json* e = field(&a.body, "error");
  std::string m = text(e, "message");
  if (m.empty()) m = "the request failed (HTTP " + std::to_string(a.status) + ")";
  std::string hint = text(e, "hint");
  return form_words(hint.empty() ? m : m + " (" + hint + ")");
}

// ------------------------------------------------------------ text

// What members wrote, as HTML text: escaped, and the characters that reorder or hide text (bidi controls,
// zero-width characters) and the C0 controls but line breaks and tabs shown as [U+XXXX], never obeyed.
std::string esc(const std::string& s) {
  std::string shown;
  shown.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      shown += base::shown_code_point(c);
    } else if (unsigned cp = base::invisible_at(s, i, &len)) {
      shown += base::shown_code_point(cp);
      i += len - 1;
    } else {
      shown += static_cast<char>(c);
    }
  }
  return html_escape(shown);
}

// "in 2 d 3 h" / "passed 5 h ago" for an ISO time; "" when it is not one.
std::string time_left(const std::string& iso) {
  std::time_t t = 0;
  if (!base::parse_utc(iso, &t)) return "";
  long long d = static_cast<long long>(t) - static_cast<long long>(std::time(nullptr));
  long long a = d < 0 ? -d : d;
  std::string span;
  if (a >= 86400) span = std::to_string(a / 86400) + " d " + std::to_string(a % 86400 / 3600) + " h";
  else if (a >= 3600) span = std::to_string(a / 3600) + " h " + std::to_string(a % 3600 / 60) + " min";
  else span = std::to_string(a / 60) + " min";
  return d >= 0 ? "in " + span : "passed " + span + " ago";
}

std::string when(const std::string& iso) {
  if (iso.empty()) return "<span class=\"muted\">not set</span>";
  std::string left = time_left(iso);
  bool passed = left.rfind("passed", 0) == 0;
  return "<time datetime=\"" + esc(iso) + "\">" + esc(iso) + "</time>" +
         (left.empty() ? "" : " <span class=\"" + std::string(passed ? "late" : "left") + "\">(" + esc(left) + ")</span>");
}

std::string round_short(const std::string& round) {
  return round.rfind("training-", 0) == 0 ? round.substr(9) : round;
}

std::string round_link(const std::string& round) {
  return "/review/" + base::percent_encode(round_short(round)) + "/";
}

std::string objection_link(long long id) { return "/review/objections/" + std::to_string(id); }

// The result named ORG/SYSTEM/BENCHMARK on the round's leaderboard of its benchmark.
std::string result_link(const std::string& round, const std::string& result) {
  size_t slash = result.rfind('/');
  if (slash == std::string::npos) return esc(result);
  std::string bench = result.substr(slash + 1);
  return "<a href=\"/reports/rounds/" + esc(base::percent_encode(round)) + "/" + esc(base::percent_encode(bench)) +
         ".html\">" + esc(result) + "</a>";
}

// ------------------------------------------------------------ the page

std::string shell(const std::string& title, const std::string& body, const Caller& caller) {
  std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + esc(title) + " · referee review</title>";
  out += "<link rel=\"stylesheet\" href=\"/reports/" + reports::asset_url("assets/referee.css") +
         "\"></head>\n<body data-kind=\"review\">";
  out += "<header><nav aria-label=\"site\"><a href=\"/review/\">Review</a> <a href=\"/reports/index.html\">Results</a> ";
  out += "<span class=\"who\">" + esc(caller.who.user) + " (" +
         esc(caller.who.organisation.empty() ? std::string(review::role_name(caller.who.role)) : caller.who.organisation) +
         ")</span> <a href=\"/reports/logout\">Sign out</a></nav></header>\n";
  out += "<main><h1>" + esc(title) + "</h1>\n" + body + "</main></body></html>\n";
  return out;
}

Reply html(int status, const std::string& page) {
  Reply r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = page;
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Vary", "Authorization, Cookie");
  return r;
}

Reply redirect_to(const std::string& where) {
  Reply r;
  r.status = 303;
  r.content_type = "text/plain";
  r.headers.emplace_back("Location", where);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// A page that needs a member: the sign-in form for an anonymous caller.
bool signed_in(const Caller& caller) { return !caller.token.empty() && !caller.who.user.empty() && caller.who.user != "anonymous"; }

Reply sign_in_first(const Call& call) {
  return error_page(401, "Sign in",
                    "<p>The review pages are for members of the round's organisations and its chairs.</p>\n" +
                        login_form(page_of(call)));
}

// ------------------------------------------------------------ forms

// What a posted form asked for, kept to show it again beside the answer.
struct Posted {
  std::string action;  // which form
  std::string error;   // the API's message ("" = none)
  int status = 0;
  bool stale = false;  // 409: the objection changed since the page was made
  std::map<std::string, std::string> values;
  std::string value(const std::string& k) const {
    auto it = values.find(k);
    return it == values.end() ? "" : it->second;
  }
};

// The session id of a caller signed in by the cookie ("" when a bearer token signed them in).
std::string session_of(const Call& call, const Caller& caller) {
  return caller.by_cookie ? cookie_session(call.cookie) : "";
}

std::string csrf_field(Context& ctx, const Call& call, const Caller& caller) {
  std::string id = session_of(call, caller);
  if (id.empty()) return "";
  return "<input type=\"hidden\" name=\"csrf\" value=\"" + esc(ctx.sessions.csrf_of(id)) + "\">";
}

// A form with the sign-in cookie must come from this site and carry the session's anti-forgery value.
bool form_accepted(Context& ctx, const Call& call, const Caller& caller, std::string* why) {
  std::string id = session_of(call, caller);
  if (id.empty()) return true;  // signed in by a bearer token: no browser sends one by itself
  if (!same_site(ctx, call)) {
    *why = "this form was sent from another site";
    return false;
  }
  std::string want = ctx.sessions.csrf_of(id);
  if (want.empty() || base::form_field(call.body, "csrf") != want) {
    *why = "this form is out of date or was not made by this site (reload the page and send it again)";
    return false;
  }
  return true;
}

Reply refused_form(const std::string& why) {
  return error_page(403, "Form refused", "<p>" + esc(why) + ".</p>\n<p><a href=\"/review/\">Back to the review</a></p>\n");
}

std::string input(const std::string& name, const std::string& label, const std::string& value, const std::string& extra = "",
                  const std::string& type = "text") {
  return "<label>" + esc(label) + " <input type=\"" + type + "\" name=\"" + name + "\" value=\"" + esc(value) + "\"" + extra +
         "></label>";
}

std::string textarea(const std::string& name, const std::string& label, const std::string& value, bool required) {
  return "<label>" + esc(label) + "<textarea name=\"" + name + "\" rows=\"4\" cols=\"60\"" + (required ? " required" : "") +
         ">" + esc(value) + "</textarea></label>";
}

std::string select(const std::string& name, const std::string& label, const std::vector<std::pair<std::string, std::string>>& options,
                   const std::string& chosen) {
  std::string out = "<label>" + esc(label) + " <select name=\"" + name + "\">";
  for (const auto& [v, shown] : options)
    out += "<option value=\"" + esc(v) + "\"" + (v == chosen ? " selected" : "") + ">" + esc(shown) + "</option>";
  return out + "</select></label>";
}

const std::vector<std::pair<std::string, std::string>>& remedies() {
  static const std::vector<std::pair<std::string, std::string>> r = {
      {"", "none named"},           {"none", "none (the result stands)"}, {"normalise", "normalise by a factor"},
      {"fix", "fix (a corrected package)"}, {"open", "move to the open division"}, {"withdraw", "withdraw the result"}};
  return r;
}

// A form: its error (the API's words) beside its fields, announced to screen readers.
std::string form(Context& ctx, const Call& call, const Caller& caller, const std::string& action_url, const std::string& name,
                 const std::string& legend, const std::string& fields, const Posted* posted, const std::string& button) {
  std::string id = "form-" + name;
  const bool failed = posted && posted->action == name && !posted->error.empty() && !posted->stale;
  std::string out = "<form method=\"post\" action=\"" + esc(action_url) + "\" id=\"" + id + "\" class=\"review-form\">";
  out += "<fieldset" + (failed ? " aria-describedby=\"" + id + "-error\" aria-invalid=\"true\"" : std::string()) + "><legend>" +
         esc(legend) + "</legend>" + csrf_field(ctx, call, caller);
  if (failed) out += "<p class=\"form-error\" role=\"alert\" id=\"" + id + "-error\">" + esc(posted->error) + "</p>";
  out += fields + " <button type=\"submit\">" + esc(button) + "</button></fieldset></form>\n";
  return out;
}

// At the top of a page answering a form: what the API said, with a link to the form, and (when the form
// is no longer offered: the objection changed, the caller may not) what was sent, so that nothing is lost.
std::string posted_banner(const Posted* posted, bool form_shown) {
  if (!posted || posted->error.empty()) return "";
  std::string out = "<div class=\"notice\" role=\"alert\"><p><strong>" +
                    std::string(posted->stale ? "Changed since you opened it." : "Not done.") + "</strong> " + esc(posted->error);
  if (form_shown) out += " <a href=\"#form-" + esc(posted->action) + "\">To the form</a>";
  out += "</p>";
  if (!form_shown) {
    std::string sent;
    for (const auto& [k, v] : posted->values)
      if (!v.empty()) sent += esc(k) + ": " + esc(v) + "\n";
    if (!sent.empty()) out += "<p>What you sent, kept here:</p><pre class=\"said\">" + sent + "</pre>";
  }
  return out + "</div>\n";
}

// ------------------------------------------------------------ bodies from forms

std::string f(const Call& call, const char* name) { return base::form_field(call.body, name); }

bool parse_factor(const std::string& typed, review::CastVote* v) {
  const std::string t = base::trim(typed);
  if (t.empty()) return true;
  // A decimal number as a person types one (1.0758, 1e0): no hexadecimal, no "inf".
  if (t.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
  char* end = nullptr;
  double x = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end) return false;
  v->has_factor = true;
  v->factor = x;
  return true;
}

std::vector<std::string> list_of(const std::string& t) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : t + "\n") {
    if (c == ',' || c == '\n' || c == '\r' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

// ------------------------------------------------------------ the objection page

std::string evidence_html(const Json& e, const std::string& round) {
  std::string kind = text(&e, "kind");
  std::string out = "<li><span class=\"tag\">" + esc(kind) + "</span> ";
  if (kind == "finding") out += "finding " + esc(text(&e, "finding")) + " ";
  if (!text(&e, "file").empty())
    out += esc(text(&e, "file")) + (text(&e, "first_line").empty() ? "" : " lines " + esc(text(&e, "first_line")) + "–" +
                                                                             esc(text(&e, "last_line"))) + " ";
  if (!text(&e, "figure").empty())
    out += esc(text(&e, "figure")) + " = " + esc(text(&e, "value")) + " " + esc(text(&e, "unit")) + " ";
  if (!text(&e, "quoted").empty()) out += "<pre class=\"quoted\">" + esc(text(&e, "quoted")) + "</pre>";
  if (!text(&e, "note").empty()) out += "<p>" + esc(text(&e, "note")) + "</p>";
  out += "<p class=\"muted\">by " + esc(text(&e, "by")) + ", " + esc(text(&e, "created_at")) + "</p></li>";
  (void)round;
  return out;
}

Reply objection_page(Context& ctx, const Call& call, const Caller& caller, const std::string& id_text, const Posted* posted) {
  Answer a = ask(ctx, caller, "GET", "/api/v1/objections/" + id_text);
  if (a.status == 404 || a.status == 400) return no_page(call, error_text(a));
  if (a.status == 401) return sign_in_first(call);
  if (a.status != 200) return error_page(a.status, "Objection", "<p>" + esc(error_text(a)) + "</p>\n");
  const Json* o = field(&a.body, "objection");
  const std::string round = text(o, "round"), state = text(o, "state");
  const long long id = number(o, "id"), version = number(o, "version");
  const std::string base_url = objection_link(id);
  std::set<std::string> may;
  for (const auto& x : items(&a.body, "you_may")) may.insert(x.s);
  std::string b;
  b += "<p><a href=\"" + esc(round_link(round)) + "\">" + esc(round) + "</a> · objection " + std::to_string(id) +
       " · <strong class=\"state state-" + esc(state) + "\">" + esc(state) + "</strong> · version " + std::to_string(version) + "</p>\n";
  b += "<dl class=\"facts\"><dt>By</dt><dd>" + esc(text(o, "by")) + " (" + esc(text(o, "filed_by")) + ")</dd><dt>Against</dt><dd>" +
       esc(text(o, "against")) + "</dd><dt>Rule</dt><dd>" + esc(text(o, "rule")) + "</dd><dt>Results</dt><dd>";
  for (const auto& r : items(o, "results")) b += result_link(round, r.s) + " ";
  b += "</dd><dt>Filed</dt><dd>" + esc(text(o, "created_at")) + "</dd></dl>\n";
  if (!text(o, "text").empty()) b += "<p class=\"objection-text said\">" + esc(text(o, "text")) + "</p>\n";
  // The score impact against the waiver threshold.
  if (const Json* im = field(o, "impact"); im && im->kind == Json::Kind::Object) {
    auto minutes = [&](const char* k) {
      const Json* m = field(im, k);
      if (!m || (m->kind != Json::Kind::Float && m->kind != Json::Kind::Int)) return std::string();
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", m->kind == Json::Kind::Float ? m->f : static_cast<double>(m->i));
      return std::string(buf);
    };
    const std::string known = minutes("minutes");
    b += "<h2>Score impact</h2><p>" + esc(text(im, "result")) + ": " + minutes("score_minutes") + " min as scored; " +
         (known.empty() ? std::string("unknown if it holds") : known + " min if it holds") +
         (text(im, "change_percent").empty() ? "" : " (" + esc(text(im, "change_percent")) + "%)") + ". ";
    if (!known.empty())
      b += text(im, "under_waiver_threshold") == "yes" ? "Under the 2% waiver threshold: the chair may waive it."
                                                        : "Above the 2% waiver threshold.";
    b += " <span class=\"muted\">" + esc(text(im, "basis")) + "</span></p>\n";
  }
  // Deadlines, with this objection's extensions.
  b += "<h2>Deadlines</h2><ul class=\"deadlines\">";
  if (const Json* d = field(o, "deadlines"); d && d->kind == Json::Kind::Object)
    for (const auto& [k, v] : d->fields) b += "<li>" + esc(k) + ": " + when(text(&v)) + "</li>";
  for (const auto& x : items(o, "extensions"))
    b += "<li>extended for " + esc(text(&x, "organisation")) + ": " + esc(text(&x, "deadline")) + " until " +
         when(text(&x, "until")) + " — " + esc(text(&x, "reason")) + "</li>";
  b += "</ul>\n<h2>Evidence</h2><ul class=\"evidence\">";
  for (const auto& e : items(o, "evidence")) b += evidence_html(e, round);
  b += "</ul>\n";
  // The thread: responses and comments, in time order.
  struct Post {
    std::string at, html;
  };
  std::vector<Post> thread;
  for (const auto& r : items(o, "responses"))
    thread.push_back({text(&r, "created_at"),
                      "<li class=\"response\"><p><strong>Response</strong> from " + esc(text(&r, "organisation")) + " (" +
                          esc(text(&r, "by")) + ")" +
                          (text(&r, "remedy").empty() ? "" : ", asks for " + esc(text(&r, "remedy")) + " " + esc(text(&r, "factor"))) +
                          "</p><p class=\"said\">" + esc(text(&r, "text")) + "</p><p class=\"muted\">" + esc(text(&r, "created_at")) + "</p></li>"});
  for (const auto& c : items(o, "comments"))
    thread.push_back({text(&c, "created_at"), "<li class=\"comment\"><p><strong>" + esc(text(&c, "user")) + "</strong> (" +
                                                  esc(text(&c, "organisation").empty() ? std::string("chair") : text(&c, "organisation")) +
                                                  ")</p><p class=\"said\">" + esc(text(&c, "text")) + "</p><p class=\"muted\">" +
                                                  esc(text(&c, "created_at")) + "</p></li>"});
  std::stable_sort(thread.begin(), thread.end(), [](const Post& x, const Post& y) { return x.at < y.at; });
  b += "<h2>Discussion</h2>";
  if (thread.empty()) {
    b += "<p class=\"muted\">Nothing said yet.</p>\n";
  } else {
    b += "<ol class=\"thread\">";
    for (const auto& p : thread) b += p.html;
    b += "</ol>\n";
  }
  // The ballot.
  const Json* ballot = field(o, "ballot");
  b += "<h2>Votes</h2><p class=\"standing\">" + esc(text(ballot, "standing")) + "</p><table><caption>Votes cast</caption>"
       "<thead><tr><th scope=\"col\">Organisation</th><th scope=\"col\">Vote</th><th scope=\"col\">Remedy</th><th scope=\"col\">By</th></tr></thead><tbody>";
  for (const auto& v : items(o, "votes"))
    b += "<tr><td>" + esc(text(&v, "organisation")) + "</td><td>" + esc(text(&v, "vote")) + "</td><td>" + esc(text(&v, "remedy")) +
         " " + esc(text(&v, "factor")) + "</td><td>" + esc(text(&v, "by")) + "</td></tr>";
  b += "</tbody></table><p>Not voted yet: ";
  std::string nv;
  for (const auto& x : items(ballot, "not_voted")) nv += (nv.empty() ? "" : ", ") + x.s;
  b += (nv.empty() ? std::string("nobody") : esc(nv)) + ".";
  if (!text(ballot, "votes_due").empty())
    b += " Votes due " + when(text(ballot, "votes_due")) +
         (text(ballot, "votes_due_set_here") == "yes" ? " (set on this objection)" : " (the round's decisions_due)") + ".";
  b += "</p>\n";
  // The decision and what it replaced.
  if (const Json* d = field(o, "decision"); d && d->kind == Json::Kind::Object) {
    b += "<h2>Decision</h2><p class=\"decision\"><strong>" + esc(text(d, "outcome")) + "</strong>" +
         (text(d, "remedy").empty() ? "" : ", remedy " + esc(text(d, "remedy")) + " " + esc(text(d, "factor"))) + " (decision " +
         esc(text(d, "id")) + " by " + esc(text(d, "decided_by")) + ", " + esc(text(d, "majority")) + " majority)</p><p>" +
         esc(text(d, "text")) + "</p>\n";
    // A fix: due by when, or the corrected packages that delivered it and what each changed.
    if (const Json* fx = field(d, "fix"); fx && fx->kind == Json::Kind::Object) {
      const std::string state = text(fx, "state"), due = text(fx, "due");
      b += "<p class=\"fix fix-" + esc(state) + "\"><strong>" +
           (state == "delivered" ? "Fix delivered" + (due.empty() ? std::string() : " (it was due by " + when(due) + ")")
            : state == "overdue" ? "Fix overdue: it was due " + when(due)
            : due.empty()        ? std::string("Fix due (no date set)")
                                 : "Fix due by " + when(due)) +
           "</strong></p>\n";
      for (const auto& x : items(fx, "deliveries")) {
        b += "<p>Corrected package <code>" + esc(text(&x, "new_sha256").substr(0, 12)) + "</code> (replacing <code>" +
             esc(text(&x, "old_sha256").substr(0, 12)) + "</code>), imported " + esc(text(&x, "at")) + ":</p><ul class=\"changes\">";
        for (const auto& c : items(&x, "changes")) b += "<li>" + esc(review::result_change_text(c)) + "</li>";
        b += "</ul>\n";
      }
    }
  }
  for (const auto& d : items(o, "superseded")) {
    const Json* was = field(&d, "decision");
    b += "<p class=\"muted\">Replaced decision: " + esc(text(was, "outcome")) + " " + esc(text(was, "remedy")) + " " +
         esc(text(was, "factor")) + " (by " + esc(text(was, "decided_by")) + ", " + esc(text(was, "created_at")) + "), amended by " +
         esc(text(&d, "amended_by")) + " at " + esc(text(&d, "amended_at")) + ": " + esc(text(&d, "reason")) + "</p>\n";
  }
  if (const Json* w = field(o, "withdrawal"); w && w->kind == Json::Kind::Object)
    b += "<h2>Withdrawn</h2><p>by " + esc(text(w, "by")) + " at " + esc(text(w, "at")) + "</p><p class=\"said\">" +
         esc(text(w, "text")) + "</p>\n";

  // The forms the caller may use.
  auto keep = [&](const std::string& action, const std::string& k) {
    return posted && posted->action == action ? posted->value(k) : std::string();
  };
  const std::string ver = "<input type=\"hidden\" name=\"version\" value=\"" + std::to_string(version) + "\">";
  std::vector<std::pair<std::string, std::string>> submitters;
  for (const auto& x : items(ballot, "eligible")) submitters.emplace_back(x.s, x.s);
  std::string forms;
  if (may.count("comment"))
    forms += form(ctx, call, caller, base_url + "/comment", "comment", "Add to the discussion",
                  textarea("text", "Comment", keep("comment", "text"), true), posted, "Post comment");
  if (may.count("respond"))
    forms += form(ctx, call, caller, base_url + "/respond", "respond", "Respond for " + text(o, "against"),
                  ver + textarea("text", "Response", keep("respond", "text"), true) +
                      select("remedy", "Remedy you propose", remedies(), keep("respond", "remedy")) +
                      input("factor", "Factor (for normalise)", keep("respond", "factor"), " inputmode=\"decimal\""),
                  posted, "Send response");
  if (may.count("evidence"))
    forms += form(ctx, call, caller, base_url + "/evidence", "evidence", "Add evidence",
                  ver + textarea("check", "What a check or a log shows", keep("evidence", "check"), false) +
                      input("result", "Result (ORG/SYSTEM/BENCHMARK)", keep("evidence", "result")) +
                      input("file", "Log file", keep("evidence", "file")) + input("lines", "Lines (N or N-M)", keep("evidence", "lines")) +
                      input("note", "Note", keep("evidence", "note")),
                  posted, "Add evidence");
  if (may.count("vote"))
    forms += form(ctx, call, caller, base_url + "/vote", "vote", "Vote for " + caller.who.organisation,
                  ver + select("vote", "Vote", {{"uphold", "uphold"}, {"reject", "reject"}, {"abstain", "abstain"}}, keep("vote", "vote")) +
                      select("remedy", "Remedy (when upholding)", remedies(), keep("vote", "remedy")) +
                      input("factor", "Factor (for normalise)", keep("vote", "factor"), " inputmode=\"decimal\""),
                  posted, "Cast vote");
  if (may.count("decide"))
    forms += form(ctx, call, caller, base_url + "/decide", "decide", state == "decided" ? "Amend the decision" : "Decide",
                  ver + select("remedy", "Remedy", remedies(), keep("decide", "remedy")) +
                      input("factor", "Factor (for normalise)", keep("decide", "factor"), " inputmode=\"decimal\"") +
                      select("tie_break", "On a tie", {{"", "no tie"}, {"uphold", "uphold"}, {"reject", "reject"}}, keep("decide", "tie_break")) +
                      input("fix_due", "Fix due (for fix; default: scores final)", keep("decide", "fix_due"), " placeholder=\"2026-12-31\"") +
                      "<label><input type=\"checkbox\" name=\"waive\" value=\"yes\"" +
                      (keep("decide", "waive") == "yes" ? " checked" : "") + "> Waive it (the score impact is under 2%)</label>" +
                      textarea("text", "Reasons", keep("decide", "text"), false) +
                      (state == "decided" ? "<input type=\"hidden\" name=\"amend\" value=\"yes\">" +
                                                input("reason", "Why the decision is amended", keep("decide", "reason"), " required")
                                          : std::string()) +
                      input("override", "Override reason (after a deadline)", keep("decide", "override")),
                  posted, state == "decided" ? "Amend decision" : "Record decision");
  if (may.count("extend"))
    forms += form(ctx, call, caller, base_url + "/extend", "extend", "Grant more time",
                  ver + select("organisation", "Organisation", submitters, keep("extend", "organisation")) +
                      select("deadline", "Deadline", {{"objections_due", "objections due"}, {"responses_due", "responses due"}, {"decisions_due", "decisions due"}},
                             keep("extend", "deadline")) +
                      input("until", "Until (2026-12-20T17:00Z)", keep("extend", "until"), " required") +
                      input("reason", "Reason", keep("extend", "reason"), " required"),
                  posted, "Grant extension");
  if (may.count("vote-deadline"))
    forms += form(ctx, call, caller, base_url + "/vote-deadline", "vote-deadline", "Set when the votes are due",
                  ver + input("until", "Votes due (2026-12-20T17:00Z)", keep("vote-deadline", "until"), " required") +
                      input("reason", "Reason", keep("vote-deadline", "reason"), " required"),
                  posted, "Set vote deadline");
  if (may.count("withdraw"))
    forms += form(ctx, call, caller, base_url + "/withdraw", "withdraw", "Withdraw the objection",
                  ver + textarea("text", "Why", keep("withdraw", "text"), false), posted, "Withdraw");
  if (!forms.empty()) b += "<h2>Act</h2>\n" + forms;
  // What a form answered, at the top.
  b = posted_banner(posted, posted && may.count(posted->action) > 0) + b;
  return html(posted ? (posted->status ? posted->status : 200) : 200, shell(text(o, "title"), b, caller));
}

// ------------------------------------------------------------ the round page

struct RoundView {
  Answer round, pairings, objections, findings;
};

Reply round_page(Context& ctx, const Call& call, const Caller& caller, const std::string& round_text, const Posted* posted) {
  Answer r = ask(ctx, caller, "GET", "/api/v1/rounds/" + base::percent_encode(round_text));
  if (r.status == 404 || r.status == 400) return no_page(call, error_text(r));
  if (r.status == 401) return sign_in_first(call);
  if (r.status != 200) return error_page(r.status, "Round", "<p>" + esc(error_text(r)) + "</p>\n");
  const std::string round = text(&r.body, "round"), short_name = round_short(round), state = text(&r.body, "state");
  const std::string enc = base::percent_encode(short_name);
  Answer pairings = ask(ctx, caller, "GET", "/api/v1/rounds/" + enc + "/pairings");
  Answer objections = ask(ctx, caller, "GET", "/api/v1/objections", {{"round", short_name}});
  Answer findings = ask(ctx, caller, "GET", "/api/v1/findings", {{"round", short_name}});
  Answer announced = ask(ctx, caller, "GET", "/api/v1/rounds/" + enc + "/announcements");
  // A part that could not be read is an error, never an empty table.
  for (const Answer* part : {&pairings, &objections, &findings, &announced})
    if (part->status != 200) return error_page(part->status == 401 ? 401 : 500, "Round " + short_name, "<p>" + esc(error_text(*part)) + "</p>\n");
  const std::string& org = caller.who.organisation;
  const bool chair = caller.who.role != review::Role::Member;
  std::string b = "<p>State: <strong>" + esc(state) + "</strong> · <a href=\"/reports/rounds/" + esc(base::percent_encode(round)) +
                  "/index.html\">results of the round</a></p>\n";
  b += "<h2>Deadlines</h2><ul class=\"deadlines\">";
  if (const Json* s = field(&r.body, "schedule"); s && s->kind == Json::Kind::Object)
    for (const auto& [k, v] : s->fields) b += "<li>" + esc(k) + ": " + when(text(&v)) + "</li>";
  b += "</ul>\n";
  // Required reviews.
  std::set<std::string> mine;  // the organisations the caller's organisation reviews
  b += "<h2>Required reviews</h2><table><thead><tr><th scope=\"col\">Reviewer</th><th scope=\"col\">Reviews</th><th scope=\"col\">Why</th><th scope=\"col\">Status</th></tr></thead><tbody>";
  for (const auto& p : items(&pairings.body, "pairings")) {
    const bool ours = text(&p, "reviewer") == org;
    if (ours) mine.insert(text(&p, "reviewed"));
    const bool may_set = ours || caller.who.role == review::Role::Chair;  // a chair sets any review's status
    b += "<tr><td>" + esc(text(&p, "reviewer")) + "</td><td>" + esc(text(&p, "reviewed")) + "</td><td>" + esc(text(&p, "reason")) + "</td><td>";
    if (may_set && state == "review") {
      const std::string name = "pairing-" + text(&p, "id");
      b += "<form method=\"post\" action=\"/review/pairings/" + esc(text(&p, "id")) + "\" class=\"inline\">" + csrf_field(ctx, call, caller) +
           "<input type=\"hidden\" name=\"version\" value=\"" + esc(text(&p, "version")) + "\"><input type=\"hidden\" name=\"round\" value=\"" +
           esc(short_name) + "\">" +
           select("status", "Status of the review of " + text(&p, "reviewed"),
                  {{"assigned", "assigned"}, {"in-progress", "in progress"}, {"done", "done"}},
                  posted && posted->action == name ? posted->value("status") : text(&p, "status")) +
           " <button type=\"submit\">Save</button>";
      if (posted && posted->action == name && !posted->error.empty())
        b += "<p class=\"form-error\" role=\"alert\">" + esc(posted->error) + "</p>";
      b += "</form>";
      // The audit of the organisation reviewed: its findings appear below, each one form away from an objection.
      const std::string audit = "audit-" + text(&p, "reviewed");
      b += "<form method=\"post\" action=\"/review/" + esc(enc) + "/audit\" class=\"inline\">" + csrf_field(ctx, call, caller) +
           "<input type=\"hidden\" name=\"organisation\" value=\"" + esc(text(&p, "reviewed")) +
           "\"><button type=\"submit\">Audit " + esc(text(&p, "reviewed")) + "'s results</button>";
      if (posted && posted->action == audit && !posted->error.empty())
        b += "<p class=\"form-error\" role=\"alert\">" + esc(posted->error) + "</p>";
      b += "</form>";
    } else {
      b += esc(text(&p, "status"));
    }
    b += "</td></tr>";
  }
  b += "</tbody></table>\n";
  // The objections filed from a finding: the finding links to them instead of offering another.
  std::map<std::string, long long> filed_from;
  for (const auto& o : items(&objections.body, "objections"))
    if (!text(&o, "finding").empty() && text(&o, "state") != "withdrawn") filed_from.emplace(text(&o, "finding"), number(&o, "id"));
  // Findings on the results the caller's organisation reviews (a chair: all), each one form away from an objection.
  b += "<h2 id=\"findings\">Findings of the audit</h2>";
  std::string rows;
  for (const auto& fnd : items(&findings.body, "findings")) {
    const std::string fo = text(&fnd, "organisation");
    if (!chair && !mine.count(fo) && fo != org) continue;  // theirs, and those of the organisations they review
    rows += "<tr><td>" + esc(text(&fnd, "id")) + "</td><td>" + result_link(round, text(&fnd, "result")) + "</td><td>" +
            esc(text(&fnd, "rule")) + "</td><td>" + esc(text(&fnd, "summary")) + "</td><td>" + esc(text(&fnd, "state")) + "</td><td>";
    if (auto filed = filed_from.find(text(&fnd, "id")); filed != filed_from.end()) {
      rows += "filed as <a href=\"" + esc(objection_link(filed->second)) + "\">objection " + std::to_string(filed->second) + "</a>";
    } else if (text(&fnd, "state") == "open" && !org.empty() && fo != org) {
      const std::string name = "finding-" + text(&fnd, "id");
      rows += "<form method=\"post\" action=\"/review/" + esc(enc) + "/objections\" class=\"inline\">" + csrf_field(ctx, call, caller) +
              "<input type=\"hidden\" name=\"finding\" value=\"" + esc(text(&fnd, "id")) + "\">" +
              input("title", "Title (optional)", posted && posted->action == name ? posted->value("title") : "") +
              " <button type=\"submit\">File as objection</button>";
      if (posted && posted->action == name && !posted->error.empty())
        rows += "<p class=\"form-error\" role=\"alert\">" + esc(posted->error) + "</p>";
      rows += "</form>";
    }
    rows += "</td></tr>";
  }
  b += rows.empty() ? "<p class=\"muted\">No findings on the results you review.</p>\n"
                    : "<table><thead><tr><th scope=\"col\">Finding</th><th scope=\"col\">Result</th><th scope=\"col\">Rule</th><th scope=\"col\">What</th><th scope=\"col\">State</th><th scope=\"col\">Act</th></tr></thead><tbody>" +
                          rows + "</tbody></table>\n";
  // Objections.
  b += "<h2>Objections</h2>";
  rows.clear();
  for (const auto& o : items(&objections.body, "objections")) {
    const bool by_us = text(&o, "by") == org, against_us = text(&o, "against") == org;
    rows += "<tr" + std::string(by_us ? " class=\"ours\"" : against_us ? " class=\"against-us\"" : "") + "><td><a href=\"" +
            esc(objection_link(number(&o, "id"))) + "\">" + esc(text(&o, "id")) + "</a></td><td><a href=\"" +
            esc(objection_link(number(&o, "id"))) + "\">" + esc(text(&o, "title")) + "</a></td><td>" + esc(text(&o, "by")) + "</td><td>" +
            esc(text(&o, "against")) + "</td><td>" + esc(text(&o, "state")) + "</td></tr>";
  }
  b += rows.empty() ? "<p class=\"muted\">No objections.</p>\n"
                    : "<table><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Title</th><th scope=\"col\">By</th><th scope=\"col\">Against</th><th scope=\"col\">State</th></tr></thead><tbody>" +
                          rows + "</tbody></table>\n";
  // Resubmitted results announced.
  b += "<h2>Announced resubmissions</h2>";
  rows.clear();
  for (const auto& a : items(&announced.body, "announcements"))
    rows += "<tr><td>" + esc(text(&a, "id")) + "</td><td>" + esc(text(&a, "result")) + "</td><td>" + esc(text(&a, "by")) + "</td><td>" +
            esc(text(&a, "at")) + "</td><td class=\"said\">" + esc(text(&a, "text")) + "</td></tr>";
  b += rows.empty() ? "<p class=\"muted\">None.</p>\n"
                    : "<table><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Result</th><th scope=\"col\">By</th><th scope=\"col\">At</th><th scope=\"col\">Which logs</th></tr></thead><tbody>" +
                          rows + "</tbody></table>\n";
  // Filing by hand, and announcing resubmissions.
  if ((!org.empty() || caller.who.role == review::Role::Chair) && state != "published") {
    auto keep = [&](const std::string& action, const std::string& k) {
      return posted && posted->action == action ? posted->value(k) : std::string();
    };
    b += form(ctx, call, caller, "/review/" + enc + "/objections", "file", "File an objection",
              input("against", "Against (organisation)", keep("file", "against"), " required") +
                  textarea("results", "Results (ORG/SYSTEM/BENCHMARK, one per line)", keep("file", "results"), true) +
                  input("title", "Title", keep("file", "title"), " required") + input("rule", "Rule", keep("file", "rule"), " required") +
                  textarea("text", "What is wrong", keep("file", "text"), false),
              posted, "File objection");
    b += form(ctx, call, caller, "/review/" + enc + "/announcements", "announce", "Announce resubmitted results",
              textarea("results", "Your results resubmitted (ORG/SYSTEM/BENCHMARK, one per line)", keep("announce", "results"), true) +
                  textarea("text", "Which earlier logs they replace", keep("announce", "text"), true),
              posted, "Announce");
  }
  b = posted_banner(posted, posted && (posted->action == "file" || posted->action == "announce" ||
                                       b.find("id=\"form-" + posted->action) != std::string::npos ||
                                       b.find("name=\"finding\" value=\"" + posted->action.substr(posted->action.find('-') + 1)) != std::string::npos)) +
      b;
  return html(posted ? posted->status : 200, shell("Round " + short_name, b, caller));
}

}  // namespace

// ------------------------------------------------------------ routes

Reply review_home_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>&) {
  if (!signed_in(caller)) return sign_in_first(call);
  Answer rounds = ask(ctx, caller, "GET", "/api/v1/rounds");
  if (rounds.status != 200) return error_page(rounds.status, "Review", "<p>" + esc(error_text(rounds)) + "</p>\n");
  const std::string& org = caller.who.organisation;
  std::string b;
  int shown = 0;
  for (const auto& r : items(&rounds.body, "rounds")) {
    if (text(&r, "review") != "yes") continue;
    ++shown;
    const std::string round = text(&r, "round"), short_name = round_short(round);
    b += "<section class=\"round\"><h2><a href=\"" + esc(round_link(round)) + "\">" + esc(round) + "</a> <span class=\"state\">" +
         esc(text(&r, "state")) + "</span></h2>";
    // The next deadline.
    std::string next_name, next_at;
    if (const Json* s = field(&r, "schedule"); s && s->kind == Json::Kind::Object)
      for (const auto& [k, v] : s->fields) {
        std::time_t t = 0;
        if (base::parse_utc(text(&v), &t) && t > std::time(nullptr) && (next_at.empty() || text(&v) < next_at)) {
          next_name = k;
          next_at = text(&v);
        }
      }
    b += "<p>Next deadline: " + (next_at.empty() ? std::string("none ahead") : esc(next_name) + " " + when(next_at)) + "</p><ul>";
    Answer pairings = ask(ctx, caller, "GET", "/api/v1/rounds/" + base::percent_encode(short_name) + "/pairings");
    int owed_reviews = 0;
    for (const auto& p : items(&pairings.body, "pairings"))
      if (text(&p, "reviewer") == org && text(&p, "status") != "done") ++owed_reviews;
    Answer objections = ask(ctx, caller, "GET", "/api/v1/objections", {{"round", short_name}});
    int by_us = 0, against_us = 0;
    std::string votes;
    for (const auto& o : items(&objections.body, "objections")) {
      const std::string st = text(&o, "state");
      const bool live = st == "open" || st == "responded";
      if (live && text(&o, "by") == org) ++by_us;
      if (live && text(&o, "against") == org) ++against_us;
      // A vote is owed by an organisation of the round (every member's is: the dashboard lists only the
      // rounds they may see, which for a member are those their organisation submitted to).
      if (live && !org.empty() && !names(&o, "voted", org))
        votes += "<li><a href=\"" + esc(objection_link(number(&o, "id"))) + "\">" + esc(text(&o, "title")) + "</a></li>";
    }
    if (!org.empty()) {
      b += "<li>Required reviews not done: " + std::to_string(owed_reviews) + "</li>";
      b += "<li>Open objections by " + esc(org) + ": " + std::to_string(by_us) + "; against " + esc(org) + ": " +
           std::to_string(against_us) + "</li>";
    }
    b += "</ul>";
    if (!votes.empty()) b += "<h3>Votes " + esc(org) + " still owes</h3><ul class=\"owed\">" + votes + "</ul>";
    b += "</section>\n";
  }
  if (!shown) b += "<p>No round you may see is under review.</p>\n";
  return html(200, shell("Review", b, caller));
}

Reply review_round_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (!signed_in(caller)) return sign_in_first(call);
  return round_page(ctx, call, caller, params.at(0), nullptr);
}

Reply review_objection_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (!signed_in(caller)) return sign_in_first(call);
  return objection_page(ctx, call, caller, params.at(0), nullptr);
}

namespace {

// The form's fields kept (all but the anti-forgery value), to show it again.
Posted posted_from(const Call& call, const std::string& action, std::initializer_list<const char*> keys) {
  Posted p;
  p.action = action;
  for (const char* k : keys) p.values[k] = base::form_field(call.body, k);
  return p;
}

// The version the page showed: a whole number from 1 (the form's hidden field). False when it is not one.
bool expected(const Call& call, review::Expected* out) {
  const std::string t = base::form_field(call.body, "version");
  if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return false;
  long long v = std::atoll(t.c_str());
  if (v < 1) return false;
  *out = review::Expected{true, v};
  return true;
}

// Every field of a form is UTF-8 text (as the API takes only UTF-8): else the field that is not.
std::string not_utf8(const Call& call) {
  size_t pos = 0;
  const std::string& body = call.body;
  while (pos <= body.size()) {
    size_t amp = body.find('&', pos);
    if (amp == std::string::npos) amp = body.size();
    std::string pair = body.substr(pos, amp - pos);
    size_t eq = pair.find('=');
    std::string name = base::percent_decode_lenient(pair.substr(0, eq), base::Plus::Space);
    std::string value = eq == std::string::npos ? "" : base::percent_decode_lenient(pair.substr(eq + 1), base::Plus::Space);
    if (!base::valid_utf8(name) || !base::valid_utf8(value)) return base::valid_utf8(name) ? name : "a field";
    pos = amp + 1;
  }
  return "";
}

// What every form of a round's page checks first: a signed-in caller, a form
// from this site with the session's value, UTF-8 text. Empty: go on.
std::optional<Reply> round_form_refused(Context& ctx, const Call& call, const Caller& caller) {
  if (!signed_in(caller)) return sign_in_first(call);
  std::string why;
  if (!form_accepted(ctx, call, caller, &why)) return refused_form(why);
  if (std::string bad = not_utf8(call); !bad.empty())
    return error_page(400, "Form refused", "<p>" + esc(bad) + ": the text is not UTF-8.</p>\n");
  return std::nullopt;
}

}  // namespace

Reply review_objection_form_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (!signed_in(caller)) return sign_in_first(call);
  std::string why;
  if (!form_accepted(ctx, call, caller, &why)) return refused_form(why);
  const std::string& id_text = params.at(0);
  const std::string& action = params.at(1);
  char* end = nullptr;
  long long id = std::strtoll(id_text.c_str(), &end, 10);
  if (id_text.empty() || *end || id <= 0) return no_page(call);
  const std::string path = "/api/v1/objections/" + id_text;
  std::string api_path, body;
  Posted p;
  review::Expected version;
  const bool has_version = expected(call, &version);
  // What the form sent that the API would not take: said beside the form, what was typed kept.
  auto refuse = [&](int status, const std::string& why) {
    p.status = status;
    p.error = why;
    return objection_page(ctx, call, caller, id_text, &p);
  };
  if (action == "comment") {
    p = posted_from(call, action, {"text"});
    review::Comment in;
    in.objection = id;
    in.text = f(call, "text");
    api_path = path + "/comments";
    body = review::request_body(in);
  } else if (action == "respond") {
    p = posted_from(call, action, {"text", "remedy", "factor"});
    review::CastVote factor;
    if (!parse_factor(f(call, "factor"), &factor)) {
      p.error = "factor: '" + f(call, "factor") + "' is not a number";
      p.status = 400;
      return objection_page(ctx, call, caller, id_text, &p);
    }
    review::Respond in;
    in.objection = id;
    in.version = version;
    in.text = f(call, "text");
    in.remedy = f(call, "remedy");
    in.has_factor = factor.has_factor;
    in.factor = factor.factor;
    api_path = path + "/responses";
    body = review::request_body(in);
  } else if (action == "vote") {
    p = posted_from(call, action, {"vote", "remedy", "factor"});
    review::CastVote in;
    in.objection = id;
    in.version = version;
    in.vote = f(call, "vote");
    in.remedy = f(call, "remedy");
    if (!parse_factor(f(call, "factor"), &in)) {
      p.error = "factor: '" + f(call, "factor") + "' is not a number";
      p.status = 400;
      return objection_page(ctx, call, caller, id_text, &p);
    }
    api_path = path + "/votes";
    body = review::request_body(in);
  } else if (action == "decide") {
    p = posted_from(call, action, {"remedy", "factor", "tie_break", "fix_due", "waive", "text", "reason", "override"});
    review::CastVote factor;
    if (!parse_factor(f(call, "factor"), &factor)) {
      p.error = "factor: '" + f(call, "factor") + "' is not a number";
      p.status = 400;
      return objection_page(ctx, call, caller, id_text, &p);
    }
    review::Decide in;
    in.objection = id;
    in.version = version;
    in.remedy = f(call, "remedy");
    in.has_factor = factor.has_factor;
    in.factor = factor.factor;
    in.tie_break = f(call, "tie_break");
    in.fix_due = f(call, "fix_due");
    in.waive = f(call, "waive") == "yes";
    in.text = f(call, "text");
    in.reason = f(call, "reason");
    in.amend = f(call, "amend") == "yes";
    in.override_reason = f(call, "override");
    api_path = path + "/decision";
    body = review::request_body(in);
  } else if (action == "withdraw") {
    p = posted_from(call, action, {"text"});
    review::Withdraw in;
    in.objection = id;
    in.version = version;
    in.text = f(call, "text");
    api_path = path + "/withdraw";
    body = review::request_body(in);
  } else if (action == "extend") {
    p = posted_from(call, action, {"organisation", "deadline", "until", "reason"});
    review::Extend in;
    in.objection = id;
    in.version = version;
    in.organisation = f(call, "organisation");
    in.deadline = f(call, "deadline");
    in.until = f(call, "until");
    in.reason = f(call, "reason");
    api_path = path + "/extensions";
    body = review::request_body(in);
  } else if (action == "vote-deadline") {
    p = posted_from(call, action, {"until", "reason"});
    review::SetVoteDeadline in;
    in.objection = id;
    in.version = version;
    in.until = f(call, "until");
    in.reason = f(call, "reason");
    api_path = path + "/vote-deadline";
    body = review::request_body(in);
  } else if (action == "evidence") {
    p = posted_from(call, action, {"check", "result", "file", "lines", "note"});
    review::AddEvidence in;
    in.objection = id;
    in.version = version;
    if (!f(call, "file").empty() || !f(call, "lines").empty()) {
      review::EvidenceItem e;
      e.kind = review::EvidenceItem::Kind::Lines;
      e.result = f(call, "result");
      e.file = f(call, "file");
      e.lines = f(call, "lines");
      e.note = f(call, "note");
      in.evidence.push_back(e);
    }
    if (!f(call, "check").empty() || in.evidence.empty()) {
      review::EvidenceItem e;
      e.kind = review::EvidenceItem::Kind::Check;
      e.check = f(call, "check");
      if (in.evidence.empty()) e.note = f(call, "note");
      in.evidence.push_back(e);
    }
    api_path = path + "/evidence";
    body = review::request_body(in);
  } else {
    return no_page(call, "no form '" + action + "' on an objection");
  }
  if (std::string bad = not_utf8(call); !bad.empty()) return refuse(400, bad + ": the text is not UTF-8");
  // Every form but a comment carries the version the page showed (a comment is never stale).
  if (action != "comment" && !has_version)
    return refuse(400, "version: the form's version is not a whole number from 1 (reload the page and send it again)");
  Answer a = ask(ctx, caller, "POST", api_path, {}, body);
  if (a.status / 100 == 2) return redirect_to(objection_link(id) + "#form-" + action);
  p.status = a.status;
  p.stale = a.status == 409;
  // A stale form: the API's message says what changed (its hint is for the CLI; the page shows the new state).
  p.error = p.stale ? text(field(&a.body, "error"), "message") + "." : error_text(a);
  return objection_page(ctx, call, caller, id_text, &p);
}

Reply review_file_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (auto refused = round_form_refused(ctx, call, caller)) return *refused;
  const std::string& round = params.at(0);
  review::FileObjection in;
  in.round = round;
  Posted p;
  std::string finding = f(call, "finding");
  if (!finding.empty()) {
    p = posted_from(call, "finding-" + finding, {"title"});
    char* end = nullptr;
    in.finding = std::strtoll(finding.c_str(), &end, 10);
    in.has_finding = *end == 0 && in.finding > 0;
    in.title = f(call, "title");
    if (!in.has_finding) return no_page(call, "no finding " + finding);
  } else {
    p = posted_from(call, "file", {"against", "results", "title", "rule", "text"});
    in.against = f(call, "against");
    in.results = list_of(f(call, "results"));
    in.title = f(call, "title");
    in.rule = f(call, "rule");
    in.text = f(call, "text");
  }
  Answer a = ask(ctx, caller, "POST", "/api/v1/objections", {}, review::request_body(in));
  if (a.status == 201) return redirect_to(objection_link(number(field(&a.body, "objection"), "id")));
  p.status = a.status;
  p.error = error_text(a);
  return round_page(ctx, call, caller, round, &p);
}

Reply review_announce_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (auto refused = round_form_refused(ctx, call, caller)) return *refused;
  const std::string& round = params.at(0);
  Posted p = posted_from(call, "announce", {"results", "text"});
  review::AnnounceResubmission in;
  in.round = round;
  in.results = list_of(f(call, "results"));
  in.text = f(call, "text");
  Answer a = ask(ctx, caller, "POST", "/api/v1/rounds/" + base::percent_encode(round) + "/announcements", {}, review::request_body(in));
  if (a.status / 100 == 2) return redirect_to("/review/" + base::percent_encode(round) + "/#form-announce");
  p.status = a.status;
  p.error = error_text(a);
  return round_page(ctx, call, caller, round, &p);
}

Reply review_audit_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (auto refused = round_form_refused(ctx, call, caller)) return *refused;
  const std::string& round = params.at(0);
  const std::string org = f(call, "organisation");
  Posted p = posted_from(call, "audit-" + org, {"organisation"});
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("round").value(round).key("organisation").value(org).end_object();
  Answer a = ask(ctx, caller, "POST", "/api/v1/audit", {}, w.str());
  if (a.status / 100 == 2) return redirect_to("/review/" + base::percent_encode(round) + "/#findings");
  p.status = a.status;
  p.error = error_text(a);
  return round_page(ctx, call, caller, round, &p);
}

Reply review_pairing_route(Context& ctx, const Call& call, const Caller& caller, const std::vector<std::string>& params) {
  if (!signed_in(caller)) return sign_in_first(call);
  std::string why;
  if (!form_accepted(ctx, call, caller, &why)) return refused_form(why);
  const std::string& id_text = params.at(0);
  char* end = nullptr;
  long long id = std::strtoll(id_text.c_str(), &end, 10);
  if (id_text.empty() || *end || id <= 0) return no_page(call);
  std::string round = f(call, "round");
  Posted p = posted_from(call, "pairing-" + id_text, {"status"});
  review::UpdatePairing in;
  in.pairing = id;
  in.status = f(call, "status");
  if (!expected(call, &in.version)) {
    if (round.empty()) return error_page(400, "Required review", "<p>The form's version is not a whole number from 1.</p>\n");
    p.status = 400;
    p.error = "version: the form's version is not a whole number from 1 (reload the page and send it again)";
    return round_page(ctx, call, caller, round, &p);
  }
  Answer a = ask(ctx, caller, "PATCH", "/api/v1/pairings/" + id_text, {}, review::request_body(in));
  const std::string back = round.empty() ? "/review/" : "/review/" + base::percent_encode(round) + "/";
  if (a.status / 100 == 2) return redirect_to(back);
  if (round.empty()) return error_page(a.status, "Required review", "<p>" + esc(error_text(a)) + "</p>\n");
  p.status = a.status;
  p.error = error_text(a);
  p.stale = a.status == 409;
  return round_page(ctx, call, caller, round, &p);
}

}  // namespace referee::server
