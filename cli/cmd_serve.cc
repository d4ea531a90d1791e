// serve: the review service over HTTP(S). Every request under /api/v1 goes
// to one review::Api (its routes, authorisation and errors); the server adds
// GET /api/v1/health, GET /api/v1/openapi.yaml and the store questions
// (GET /api/v1/query/NAME, cli/queries.h), limits, logging and a graceful
// stop on SIGINT/SIGTERM. docs/review.md "Serving the review". Under
// /reports it serves the dashboards' pages, rendered per request from the
// store by reports::render with the caller's visibility (docs/reports.md).
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ctime>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "cli/queries.h"
#include "mllog/json_writer.h"
#include "reports/model.h"
#include "reports/site.h"
#include "review/api.h"
#include "submissions/queries.h"
#include "submissions/store.h"

extern const char referee_openapi_yaml[];
extern const unsigned long referee_openapi_yaml_size;

namespace referee::cli {

namespace {

struct ServeOptions {
  std::string db, listen = "127.0.0.1:8080", tls_cert, tls_key;
  bool read_only = false, anonymous_public = false;
  int threads = 8;
  size_t max_body = 1 << 20;
  int read_timeout_s = 5, write_timeout_s = 10, keep_alive_s = 5;
};

// Per request, on the worker thread that serves it: when it began and who
// asked (for the log line).
thread_local std::chrono::steady_clock::time_point t_start;
thread_local bool t_started = false;
thread_local std::string t_user;

void send(httplib::Response& res, const review::Response& r) {
  res.status = r.status;
  std::string type = r.content_type;
  if (type.rfind("text/", 0) == 0 && type.find("charset") == std::string::npos) type += "; charset=utf-8";
  res.set_content(r.body, type.c_str());
  if (r.status == 503) res.set_header("Retry-After", "1");
}

std::string bearer(const httplib::Request& req) {
  std::string h = req.get_header_value("Authorization");
  if (h.size() > 7 && (h.compare(0, 7, "Bearer ") == 0 || h.compare(0, 7, "bearer ") == 0)) return h.substr(7);
  return "";
}

// The request as the Api takes it. The path is the raw target (the Api
// decodes each segment itself, so "%2F" stays inside one).
review::Request to_api(const httplib::Request& req) {
  review::Request r;
  r.method = req.method;
  r.path = req.target.substr(0, req.target.find('?'));
  for (const auto& [k, v] : req.params) r.query.emplace_back(k, v);
  r.body = req.body;
  r.token = bearer(req);
  r.if_match = req.get_header_value("If-Match");
  if (r.if_match.size() >= 2 && r.if_match.front() == '"' && r.if_match.back() == '"')
    r.if_match = r.if_match.substr(1, r.if_match.size() - 2);
  return r;
}

// Read-only connections for the questions, one per worker thread.
struct QueryStores {
  std::string path;
  std::mutex mu;
  std::map<std::thread::id, std::unique_ptr<submissions::Store>> stores;
  submissions::Store* get(std::string* error) {
    std::lock_guard<std::mutex> lock(mu);
    auto& s = stores[std::this_thread::get_id()];
    // The store was checked (quick_check) when the server started.
    if (!s) s = submissions::Store::open(path, error, submissions::OpenMode::ReadOnly, false);
    return s.get();
  }
};

std::string strip_prefix(std::string err, const std::string& name) {
  std::string prefix = "referee " + name + ": ";
  if (err.rfind(prefix, 0) == 0) err = err.substr(prefix.size());
  while (!err.empty() && err.back() == '\n') err.pop_back();
  return err;
}

using reports::html_escape;
using review::unknown_round;

// GET /api/v1/query/NAME: the question run on the server's store for the
// caller, with the embargo applied.
review::Response answer_query(const std::string& name, const review::Request& r, review::Api& api,
                              QueryStores& stores, bool anonymous_public) {
  if (!is_query(name))
    return review::error_response(404, "not-found", "no question '" + name + "'",
                                  "ask one of: leaderboard, compare, speedup, scaling, list");
  review::Actor who;
  review::Response err;
  if (anonymous_public && r.token.empty()) {
    who.user = "anonymous";  // a member of no organisation: published rounds only
  } else if (!api.authenticate(r, &who, &err)) {
    return err;
  }
  t_user = who.user;
  std::string serr;
  submissions::Store* store = stores.get(&serr);
  if (!store) return review::error_response(500, "store", serr);
  std::function<bool(const std::string&)> visible = [&](const std::string& round) { return api.can_see_round(who, round); };
  // A round the caller may not see is answered exactly like one the store
  // does not hold.
  std::string what;
  bool has_round = false;
  for (const auto& [k, v] : r.query) {
    if (k == "what") what = v;
    if (k != "round" && k != "from" && k != "to") continue;
    has_round = has_round || k == "round";
    std::string round, ignored;
    if (!submissions::resolve_round(*store, v, &round, &ignored) || !visible(round)) return unknown_round(v);
  }
  if (name == "list" && !has_round && what != "rounds" && what != "systems") {
    // Totals across rounds (benchmarks, submitters) cannot leave a round out.
    for (const auto& round : submissions::rounds(*store))
      if (!visible(round))
        return review::error_response(403, "embargo",
                                      "list " + what + " across all rounds is not offered while rounds you cannot see are under embargo",
                                      "name a round (--round R; API query `round=R`)");
  }
  QueryAnswer a = run_query(name, r.query, *store, visible);
  if (a.bad_request) return review::error_response(400, "bad-parameter", strip_prefix(a.err, name));
  if (a.exit == kPass) {
    review::Response ok;
    ok.body = std::move(a.out);
    ok.content_type = a.json ? "application/json" : a.csv ? "text/csv; charset=utf-8" : "text/plain";
    return ok;
  }
  // The command's text goes back as UTF-8 text (a byte that is not UTF-8 as its latin-1 character).
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("error").begin_object();
  w.key("status").value(404).key("code").value("no-answer").key("message").value(strip_prefix(a.err, name));
  w.key("output").value(a.out).key("exit").value(a.exit);
  w.end_object().end_object();
  review::Response res;
  res.status = 404;
  res.body = w.str();
  return res;
}

// A 500 from a store that stayed locked past the busy timeout is an
// overloaded server, not a broken one: 503 with Retry-After, nothing written.
void busy_is_503(review::Response* r) {
  if (r->status == 500 && (r->body.find("database is locked") != std::string::npos ||
                           r->body.find("database is busy") != std::string::npos))
    *r = review::error_response(503, "busy", "the store is busy with other writes; nothing was changed",
                                "retry after a second");
}

// ------------------------------------------------------------ /reports

// The token of a /reports request: `Authorization: Bearer`, else the
// `referee_token` cookie that POST /reports/login sets.
std::string reports_token(const httplib::Request& req) {
  std::string t = bearer(req);
  if (!t.empty()) return t;
  std::string cookies = req.get_header_value("Cookie");
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string item = cookies.substr(pos, end - pos);
    pos = end + 1;
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    item = item.substr(a);
    const std::string name = "referee_token=";
    if (item.rfind(name, 0) == 0) {
      std::string v = item.substr(name.size());
      while (!v.empty() && v.back() == ' ') v.pop_back();
      return v;
    }
  }
  return "";
}

// A small page of the server's own (login, errors), in the site's style.
std::string server_page(const std::string& title, const std::string& body_html) {
  std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + html_escape(title) + "</title>";
  out += "<link rel=\"stylesheet\" href=\"/reports/assets/referee.css\"></head>\n<body data-kind=\"server\">";
  out += "<header><nav><a href=\"/reports/index.html\">Rounds</a> <a href=\"/reports/login\">Sign in</a></nav></header>\n";
  out += "<main><h1>" + html_escape(title) + "</h1>\n" + body_html + "</main></body></html>\n";
  return out;
}

const char* kLoginForm =
    "<form method=\"post\" action=\"/reports/login\">"
    "<label>Token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label> "
    "<button type=\"submit\">Sign in</button></form>\n"
    "<p>A token shows the rounds under review that its organisation may see; an administrator creates one with "
    "<code>referee user add</code>.</p>\n";

void send_page(httplib::Response& res, int status, const std::string& title, const std::string& body_html) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(server_page(title, body_html), "text/html; charset=utf-8");
}

// application/x-www-form-urlencoded: one field's value, decoded.
std::string form_field(const std::string& body, const std::string& name) {
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t end = body.find('&', pos);
    if (end == std::string::npos) end = body.size();
    std::string item = body.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    if (key != name) continue;
    std::string raw = eq == std::string::npos ? "" : item.substr(eq + 1), out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        out += ' ';
      } else if (raw[i] == '%' && i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
                 std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
        out += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += raw[i];
      }
    }
    return out;
  }
  return "";
}

// A site path as the page generator writes them: segments of
// [A-Za-z0-9._-], none of them "." or "..". Anything else is no page.
bool site_path(const std::string& p) {
  if (p.empty()) return true;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t end = p.find('/', pos);
    if (end == std::string::npos) end = p.size();
    std::string seg = p.substr(pos, end - pos);
    if (seg.empty() ? end != p.size() : (seg == "." || seg == "..")) return false;
    for (char c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
    pos = end + 1;
  }
  return true;
}

struct ReportsContext {
  review::Api& api;
  QueryStores& stores;
  bool anonymous_public;
  bool tls;
};

// A method /reports does not take: a 405 page (errors there are pages, not the API's JSON).
void method_not_allowed(const httplib::Request& req, httplib::Response& res, const std::string& allowed) {
  send_page(res, 405, "Method not allowed",
            "<p>" + html_escape(req.method) + " is not allowed on " + html_escape(req.path) + "; allowed: " + allowed + ".</p>\n");
  res.set_header("Allow", allowed);
}

// GET /reports, /reports/<site path>; GET and POST /reports/login.
void serve_reports(const httplib::Request& req, httplib::Response& res, ReportsContext& ctx) {
  const std::string& path = req.path;  // decoded by the server
  if (path == "/reports/login") {
    if (req.method == "GET") {
      send_page(res, 200, "Sign in", kLoginForm);
      return;
    }
    if (req.method == "HEAD") {
      send_page(res, 200, "Sign in", kLoginForm);
      return;
    }
    if (req.method != "POST") {
      method_not_allowed(req, res, "GET, HEAD, POST");
      return;
    }
    std::string token = form_field(req.body, "token");
    review::Request r;
    r.token = token;
    review::Actor who;
    review::Response err;
    // A token goes into a cookie only as the characters tokens are made of.
    bool plain = !token.empty() && token.size() <= 512;
    for (char c : token)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' ||
            c == '/' || c == '='))
        plain = false;
    if (!plain || !ctx.api.authenticate(r, &who, &err)) {
      if (err.status == 500) {
        std::fprintf(stderr, "referee serve: /reports/login: %s\n", err.body.c_str());
        send_page(res, 500, "Sign-in failed", "<p>The server could not read its store; its log says why.</p>\n");
        return;
      }
      send_page(res, 401, "Sign-in failed",
                std::string("<p>That token is not valid here (unknown or revoked).</p>\n") + kLoginForm);
      return;
    }
    t_user = who.user;
    res.status = 303;
    res.set_header("Location", "/reports/index.html");
    res.set_header("Cache-Control", "no-store");
    res.set_header("Set-Cookie", "referee_token=" + token + "; HttpOnly; SameSite=Strict; Path=/reports" +
                                     (ctx.tls ? "; Secure" : ""));
    res.set_content("", "text/plain");
    return;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    method_not_allowed(req, res, "GET, HEAD");
    return;
  }
  if (path == "/reports" || path == "/reports/") {
    res.status = 302;
    res.set_header("Location", "/reports/index.html");
    res.set_content("", "text/plain");
    return;
  }
  std::string site = path.substr(std::string("/reports/").size());
  auto not_found = [&](const std::string& detail = "") {
    send_page(res, 404, "Not found",
              "<p>There is no page at " + html_escape(path) + ".</p>\n" +
                  (detail.empty() ? std::string() : "<p>" + html_escape(detail) + "</p>\n"));
  };
  if (!site_path(site)) {
    not_found();
    return;
  }
  // Who asks: a token (Bearer or the cookie), or with --public nobody (published rounds).
  review::Actor who;
  review::Request r;
  r.token = reports_token(req);
  review::Response err;
  if (r.token.empty() && ctx.anonymous_public) {
    who.user = "anonymous";  // a member of no organisation: published rounds only
  } else if (!ctx.api.authenticate(r, &who, &err)) {
    if (err.status == 500) {
      std::fprintf(stderr, "referee serve: %s: %s\n", path.c_str(), err.body.c_str());
      send_page(res, 500, "Server error", "<p>The server could not read its store; its log says why.</p>\n");
      return;
    }
    send_page(res, 401, "Sign in",
              std::string(r.token.empty() ? "<p>These pages need a token.</p>\n"
                                          : "<p>The token is not valid here (unknown or revoked).</p>\n") +
                  kLoginForm);
    return;
  }
  t_user = who.user;
  std::string serr;
  submissions::Store* store = ctx.stores.get(&serr);
  if (!store) {
    std::fprintf(stderr, "referee serve: %s: %s\n", path.c_str(), serr.c_str());
    send_page(res, 500, "Server error", "<p>The server could not read its store; its log says why.</p>\n");
    return;
  }
  // What the caller may see, as for the API's questions; a page that shows
  // a round not yet published is not kept by any cache.
  review::Actor anonymous;
  anonymous.user = "anonymous";
  bool unpublished = false;
  reports::Visible visible = [&](const std::string& round) {
    if (!ctx.api.can_see_round(who, round)) return false;
    if (!ctx.api.can_see_round(anonymous, round)) unpublished = true;
    return true;
  };
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : req.params) query.emplace_back(k, v);
  reports::Options options;
  reports::File file;
  std::string error;
  reports::Status st = reports::render(*store, site, query, options, visible, &file, &error);
  switch (st) {
    case reports::Status::Ok: {
      res.status = 200;
      std::string type = file.content_type;
      if (type.rfind("text/", 0) == 0 && type.find("charset") == std::string::npos) type += "; charset=utf-8";
      res.set_header("Cache-Control", unpublished ? "no-store" : "no-cache");
      if (!r.token.empty()) res.set_header("Vary", "Authorization, Cookie");
      res.set_content(std::move(file.body), type.c_str());
      return;
    }
    case reports::Status::NotFound:
      // The same answer for a round the caller may not see as for one the store does not hold;
      // a head-to-head by query in a round the caller sees says which result is not there.
      not_found(error.rfind("compare.html: ", 0) == 0 ? error.substr(14) : "");
      return;
    case reports::Status::BadRequest: {
      std::string msg = error;
      if (msg.find(ctx.stores.path) != std::string::npos) msg = "the request does not name a page";
      send_page(res, 400, "Bad request", "<p>" + html_escape(msg) + "</p>\n");
      return;
    }
    case reports::Status::Error:
      std::fprintf(stderr, "referee serve: %s: %s\n", path.c_str(), error.c_str());
      send_page(res, 500, "Server error", "<p>The page could not be made; the server's log says why.</p>\n");
      return;
  }
}

bool parse_listen(const std::string& text, std::string* host, int* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = text.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  std::string p = text.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  *port = std::stoi(p);
  return *port <= 65535;
}

// After a failed bind: whether HOST:PORT failed because something listens there.
bool address_in_use(const std::string& host, int port) {
  if (port == 0) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool in_use = false;
  for (addrinfo* a = found; a && !in_use; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE) in_use = true;
    ::close(fd);
  }
  freeaddrinfo(found);
  return in_use;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int serve(const ServeOptions& o) {
  std::string host;
  int port = 0;
  if (!parse_listen(o.listen, &host, &port)) {
    std::cerr << "referee serve: --listen " << o.listen << " is not HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one)\n";
    return kCannotCheck;
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    std::cerr << "referee serve: --tls-cert and --tls-key go together\n";
    return kCannotCheck;
  }
  std::string db = o.db.empty() ? submissions::default_db_path() : o.db;
  // A store is made by import; serving a path with none would create an
  // empty one that answers "unknown round" to everyone.
  std::error_code exists_error;
  if (!std::filesystem::exists(db, exists_error)) {
    std::cerr << "referee serve: no store at " << db << " (nothing has been imported there; referee import DIR --round R --db "
              << db << " creates it); nothing was created\n";
    return kCannotCheck;
  }
  // Checked once here (PRAGMA quick_check); held open for the server's life.
  std::string error;
  auto checked = submissions::Store::open(
      db, &error, o.read_only ? submissions::OpenMode::ReadOnly : submissions::OpenMode::ReadWrite);
  if (!checked) {
    std::cerr << "referee serve: " << error << "\n";
    return kCannotCheck;
  }
  review::Api api(db, o.read_only);
  QueryStores query_stores;
  query_stores.path = db;

  // SIGINT and SIGTERM are taken by one thread (sigwait), blocked in all others.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);  // the server stopped by itself: wake the signal thread
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<httplib::Server> srv;
  if (!o.tls_cert.empty()) {
    auto tls = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
    if (!tls->is_valid()) {
      std::cerr << "referee serve: cannot use the TLS certificate " << o.tls_cert << " with the key " << o.tls_key
                << " (unreadable, not PEM, or they do not match)\n";
      return kCannotCheck;
    }
    srv = std::move(tls);
  } else {
    srv = std::make_unique<httplib::Server>();
  }
  const int threads = o.threads;
  srv->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  srv->set_payload_max_length(o.max_body);
  srv->set_read_timeout(o.read_timeout_s, 0);
  srv->set_write_timeout(o.write_timeout_s, 0);
  srv->set_keep_alive_timeout(o.keep_alive_s);
  // A worker serves one connection at a time: closing a keep-alive connection
  // after 100 requests lets connections waiting for a worker have their turn.
  srv->set_keep_alive_max_count(100);
  srv->set_tcp_nodelay(true);

  srv->set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_start = std::chrono::steady_clock::now();
    t_started = true;
    t_user = "-";
    return httplib::Server::HandlerResponse::Unhandled;
  });
  const size_t max_body = o.max_body;
  // httplib's own refusals (413, 414, 400 for a bad request line) and any
  // other error without a body get the API's JSON error.
  srv->set_error_handler(httplib::Server::HandlerWithResponse([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (req.path == "/reports" || req.path.rfind("/reports/", 0) == 0) {
      // Under /reports errors are pages; a method the pages do not take (a POST
      // without a body, which the server refuses before routing) is a 405.
      bool login = req.path == "/reports/login";
      if (req.method != "GET" && req.method != "HEAD" && !(login && req.method == "POST")) {
        method_not_allowed(req, res, login ? "GET, HEAD, POST" : "GET, HEAD");
      } else if (res.status == 413) {
        send_page(res, 413, "Too large", "<p>The request body is larger than " + std::to_string(max_body) + " bytes.</p>\n");
      } else if (res.status == 414) {
        send_page(res, 414, "Address too long", "<p>The request's address is too long.</p>\n");
      } else {
        int status = res.status;
        send_page(res, status, "Refused", "<p>The request was refused (HTTP " + std::to_string(status) + ").</p>\n");
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    review::Response r;
    switch (res.status) {
      case 413:
        r = review::error_response(413, "too-large", "the request body is larger than " + std::to_string(max_body) + " bytes",
                                   "send less; the server's limit is --max-body");
        break;
      case 414:
        r = review::error_response(414, "uri-too-long", "the request's URI is too long");
        break;
      case 404:
        r = review::error_response(404, "not-found", "no route " + req.method + " " + req.path, "see /api/v1/openapi.yaml");
        break;
      default:
        r = review::error_response(res.status, "bad-request", "the request was refused (HTTP " + std::to_string(res.status) + ")");
    }
    send(res, r);
    return httplib::Server::HandlerResponse::Handled;
  }));
  srv->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send(res, review::error_response(500, "internal", what));
  });
  srv->set_logger([](const httplib::Request& req, const httplib::Response& res) {
    double ms = t_started ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count() : 0;
    t_started = false;
    // One line (one write) per request; never the token or the body.
    std::fprintf(stderr, "%s %s %s %d %.1fms %s\n", now_utc().c_str(), req.method.c_str(), req.path.c_str(), res.status, ms,
                 t_user.empty() ? "-" : t_user.c_str());
  });

  const bool read_only = o.read_only;
  const bool anonymous_public = o.anonymous_public;
  ReportsContext reports_ctx{api, query_stores, anonymous_public, !o.tls_cert.empty()};
  auto dispatch = [&api, &query_stores, &reports_ctx, read_only, anonymous_public](const httplib::Request& req,
                                                                                   httplib::Response& res) {
    if (req.path == "/reports" || req.path.rfind("/reports/", 0) == 0) {
      serve_reports(req, res, reports_ctx);
      return;
    }
    review::Request r = to_api(req);
    if (r.path == "/api/v1/health" || r.path == "/api/v1/openapi.yaml") {
      if (req.method != "GET") {
        send(res, review::error_response(405, "method-not-allowed", req.method + " is not allowed on " + r.path, "allowed: GET"));
        return;
      }
      review::Response out;
      if (r.path == "/api/v1/health") {
        mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
        w.begin_object().key("status").value("ok").key("version").value(REFEREE_VERSION);
        w.key("read_only").value(read_only).key("schema_version").value(submissions::kSchemaVersion).end_object();
        out.body = w.str();
      } else {
        out.body.assign(referee_openapi_yaml, referee_openapi_yaml_size);
        out.content_type = "application/yaml";
      }
      send(res, out);
      return;
    }
    const std::string query_prefix = "/api/v1/query/";
    if (r.path.rfind(query_prefix, 0) == 0) {
      if (req.method != "GET") {
        send(res, review::error_response(405, "method-not-allowed", req.method + " is not allowed on " + r.path, "allowed: GET"));
        return;
      }
      send(res, answer_query(r.path.substr(query_prefix.size()), r, api, query_stores, anonymous_public));
      return;
    }
    if (r.path.rfind("/api/v1/", 0) != 0) {
      send(res, review::error_response(404, "not-found", "no route " + r.method + " " + r.path,
                                       "the API is under /api/v1, the report pages under /reports/"));
      return;
    }
    if (!r.token.empty()) {
      review::Actor who;
      review::Response ignored;
      if (api.authenticate(r, &who, &ignored)) t_user = who.user;
    }
    review::Response out = api.handle(r);
    busy_is_503(&out);
    send(res, out);
  };
  srv->Get(".*", dispatch);
  srv->Post(".*", dispatch);
  srv->Put(".*", dispatch);
  srv->Patch(".*", dispatch);
  srv->Delete(".*", dispatch);
  srv->Options(".*", dispatch);

  // httplib listens with a backlog of 5: more clients connecting at once
  // lose their SYN and retry a second later. The listening socket is the
  // last one its options callback saw; listen() again raises the backlog.
  int listen_fd = -1;
  // httplib's default options set SO_REUSEPORT, which lets a second server
  // bind the same port and split the requests with the first. Only
  // SO_REUSEADDR (a restart may reuse a port in TIME_WAIT): a port in use fails.
  srv->set_socket_options([&listen_fd](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = sock;
  });
  int bound = port == 0 ? srv->bind_to_any_port(host) : (srv->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    if (address_in_use(host, port))
      std::cerr << "referee serve: address " << o.listen << " is already in use (another server listens there; "
                << "stop it or choose another --listen)\n";
    else
      std::cerr << "referee serve: cannot listen on " << o.listen << " (not an address of this machine)\n";
    return kCannotCheck;
  }
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::cout << "listening on " << (o.tls_cert.empty() ? "http" : "https") << "://" << shown_host << ":" << bound
            << std::endl;
  std::cerr << "referee serve: store " << db << (o.read_only ? " (read-only)" : "") << ", " << threads
            << " threads; stop with Ctrl-C or SIGTERM\n";

  httplib::Server* raw = srv.get();
  int stopped_by = 0;
  std::thread waiter([raw, &signals, &stopped_by] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig != SIGUSR1) {
      stopped_by = sig;
      raw->stop();  // no new connections; requests in flight finish
    }
  });
  bool ok = srv->listen_after_bind();
  if (!stopped_by) pthread_kill(waiter.native_handle(), SIGUSR1);
  waiter.join();
  if (stopped_by) {
    std::cerr << "referee serve: stopped (" << (stopped_by == SIGINT ? "SIGINT" : "SIGTERM") << ")\n";
    return kPass;
  }
  if (!ok) {
    std::cerr << "referee serve: the server stopped with an error\n";
    return kCannotCheck;
  }
  return kPass;
}

}  // namespace

Command serve_command() {
  return {"serve", "Serve the store and the peer review over HTTP(S): a JSON API and the report pages (/reports/)", [](CLI::App& sub) -> std::function<int()> {
            auto o = std::make_shared<ServeOptions>();
            sub.add_option("--db", o->db, "the store (default $REFEREE_DB or the user's data directory)");
            sub.add_option("--listen", o->listen, "HOST:PORT to listen on (default 127.0.0.1:8080; port 0 picks a free one)");
            sub.add_option("--tls-cert", o->tls_cert, "PEM certificate (chain): serve https")->check(CLI::ExistingFile);
            sub.add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert")->check(CLI::ExistingFile);
            sub.add_flag("--read-only", o->read_only, "take no changes: every write is refused with 503");
            sub.add_flag("--public", o->anonymous_public,
                         "answer questions and report pages without a token, about published rounds only");
            sub.add_option("--threads", o->threads, "worker threads: requests served at once (default 8)")->check(CLI::Range(1, 256));
            sub.add_option("--max-body", o->max_body, "largest request body in bytes (default 1048576); larger: 413")
                ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
            sub.add_option("--read-timeout", o->read_timeout_s, "seconds to wait for a request's bytes (default 5)")->check(CLI::Range(1, 600));
            sub.add_option("--write-timeout", o->write_timeout_s, "seconds to wait while sending an answer (default 10)")->check(CLI::Range(1, 600));
            return [o]() -> int { return serve(*o); };
          }};
}

}  // namespace referee::cli
