#include "server/server.h"
#include "server/webhooks.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include "base/text.h"
#include "base/url.h"
#include "base/utc_time.h"
#include "review/api.h"
#include "server/guard.h"
#include "server/limits.h"
#include "server/pages.h"
#include "server/routes.h"
#include "submissions/store.h"

namespace referee::server {

namespace {

constexpr int kStopped = 0;      // stopped by SIGINT or SIGTERM
constexpr int kCannotStart = 2;  // the CLI's kCannotCheck

// Per request, on the worker thread that serves it: when it began and who
// asked (for the log line).
thread_local std::chrono::steady_clock::time_point t_start;
thread_local bool t_started = false;
thread_local std::string t_user;
thread_local bool t_refused = false;  // refused on its headers: close after the answer
// The earliest a 404 is sent after its request arrived (see the handler).
constexpr std::chrono::milliseconds kNotFoundFloor{4};
thread_local bool t_close = false;    // answered while every worker may be taken: close after the answer

void send(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  for (const auto& [k, v] : security_headers()) res.set_header(k, v);
  for (const auto& [k, v] : r.headers) res.set_header(k, v);
  // A 304 has no body. (cpp-httplib 0.11 still writes "Content-Length: 0" on it, which RFC 9110 8.6
  // would have be the full answer's length; clients ignore a 304's length.)
  if (r.status != 304) res.set_content(r.body, r.content_type.c_str());
}

// Whether `method` is in an Allow list ("GET, HEAD, POST").
bool listed(const std::string& allowed, const std::string& method) {
  size_t pos = 0;
  while (pos < allowed.size()) {
    size_t end = allowed.find(", ", pos);
    if (end == std::string::npos) end = allowed.size();
    if (allowed.compare(pos, end - pos, method) == 0 && end - pos == method.size()) return true;
    pos = end + 2;
  }
  return false;
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

}  // namespace

namespace {

// Reads and drops what the client still sends on `fd` (the refused body),
// for at most a second and 64 MiB, as a lingering close does: a client that
// sends its whole body before it reads then gets the answer, not a reset.
void drain(int fd) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  size_t total = 0;
  char buf[16384];
  while (total < (size_t{64} << 20)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
}

// The connection of `req` takes no more requests (called once its answer is
// sent): what the client still sends is drained, then the reading side is
// shut, so that httplib finds the end of the stream and closes instead of
// waiting (keep-alive) on a worker for a body it did not read. httplib 0.11
// gives a hook no socket; the connection guard knows it by its peer.
void stop_reading(const httplib::Request& req) {
  int fd = guard::descriptor_of(req.remote_addr, req.remote_port);
  if (fd < 0) return;
  drain(fd);
  ::shutdown(fd, SHUT_RD);
}

}  // namespace

int serve(const Options& o) {
  std::string host;
  int port = 0;
  if (!parse_listen(o.listen, &host, &port)) {
    std::cerr << "referee serve: --listen " << o.listen << " is not HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one)\n";
    return kCannotStart;
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    std::cerr << "referee serve: --tls-cert and --tls-key go together\n";
    return kCannotStart;
  }
  // Tokens, sign-ins and embargoed results cross the network in clear text
  // on plain HTTP: only on the loopback, unless asked for by name.
  const bool loopback = base::is_loopback_host(host);
  if (o.tls_cert.empty() && !loopback && !o.insecure_http) {
    std::cerr << "referee serve: --listen " << o.listen
              << " is not a loopback address and no --tls-cert is given: tokens and embargoed results would cross the "
                 "network in clear text; give --tls-cert and --tls-key, or --insecure-http when a TLS proxy on this "
                 "machine is in front\n";
    return kCannotStart;
  }
  std::string db = o.db.empty() ? submissions::default_db_path() : o.db;
  // A store is made by import; serving a path with none would create an
  // empty one that answers "unknown round" to everyone.
  std::error_code exists_error;
  if (!std::filesystem::exists(db, exists_error)) {
    std::cerr << "referee serve: no store at " << db << " (nothing has been imported there; referee import DIR --round R --db "
              << db << " creates it); nothing was created\n";
    return kCannotStart;
  }
  // An empty file is not a store either (the questions say so too); opening
  // it for writing would turn it into an empty one.
  if (std::filesystem::is_regular_file(db, exists_error) && std::filesystem::file_size(db, exists_error) == 0) {
    std::cerr << "referee serve: " << db << " is empty: not a referee store (referee import DIR --round R --db " << db
              << " makes one); nothing was changed\n";
    return kCannotStart;
  }
  // Checked once here (PRAGMA quick_check); held open for the server's life.
  std::string error;
  auto checked = submissions::Store::open(
      db, &error, o.read_only ? submissions::OpenMode::ReadOnly : submissions::OpenMode::ReadWrite);
  if (!checked) {
    std::cerr << "referee serve: " << error << "\n";
    return kCannotStart;
  }
  review::Api api(db, o.read_only);
  std::vector<std::string> hosts;
  for (const auto& h : o.allow_hosts) {
    std::string name = base::host_header_name(h);
    if (name.empty() || name.find_first_of(" /\t") != std::string::npos) {
      std::cerr << "referee serve: --allow-host " << base::one_line(h) << ": not a host name (example: --allow-host review.example.org)\n";
      return kCannotStart;
    }
    hosts.push_back(name);
  }
  Context ctx(api, db, o.read_only, o.anonymous_public, !o.tls_cert.empty(), o.max_body, hosts);

  // SIGINT and SIGTERM are taken by one thread (sigwait), blocked in all others.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);  // the server stopped by itself: wake the signal thread
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Started by another referee (the demo): end with it, even when it was
  // killed, instead of holding the port and the store as an orphan.
  if (o.parent_pid > 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != o.parent_pid) return 0;  // it died before this line
  }

  std::unique_ptr<httplib::Server> srv;
  if (!o.tls_cert.empty()) {
    auto tls = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
    if (!tls->is_valid()) {
      std::cerr << "referee serve: cannot use the TLS certificate " << o.tls_cert << " with the key " << o.tls_key
                << " (unreadable, not PEM, or they do not match)\n";
      return kCannotStart;
    }
    // TLS 1.2 at least; in 1.2 only forward-secret key exchange with an
    // AEAD cipher (TLS 1.3's suites are all of that kind).
    SSL_CTX* ctx = tls->ssl_context();
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL") != 1) {
      std::cerr << "referee serve: this OpenSSL cannot be limited to TLS 1.2 and up with ECDHE and AEAD ciphers\n";
      return kCannotStart;
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

  const size_t max_body = o.max_body;
  srv->set_pre_routing_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    t_start = std::chrono::steady_clock::now();
    t_started = true;
    t_user.clear();  // nobody yet: "-" in the log
    // The head is in; the body (by its Content-Length, at most --max-body
    // when it is read at all) is due next.
    const size_t length = std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10);
    guard::head_done(req.remote_addr, req.remote_port, std::min(length, max_body));
    // Refused on its headers, before httplib reads (or skips, or inflates) a
    // body: server/limits.h.
    Refusal no = refuse_before_body(req.headers, max_body);
    if (no.status == 0) {
      // A page's form is read by the pages themselves (base::form_field), up to --max-body: httplib's own
      // parsing of a form body stops at 8 KiB (its build's limit) with a 413 that would lose what a member
      // typed (a comment may be 10,000 bytes, three times that percent-encoded). Its Content-Type is
      // renamed so that httplib leaves the body as it is.
      if (is_page_path(req.path) && req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0) {
        auto& headers = const_cast<httplib::Headers&>(req.headers);  // the server's own request, not const
        auto it = headers.find("Content-Type");
        if (it != headers.end()) it->second = "application/x-referee-form";
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    // The body was not read, so the connection cannot carry another request:
    // closed once the answer is sent (the logger runs after the write).
    t_refused = true;
    send(res, json_reply(review::error_response(no.status, no.code, no.message, no.hint)));
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (413, 414, 400 for a bad request line) and any
  // other error without a body get the API's JSON error.
  srv->set_error_handler(httplib::Server::HandlerWithResponse([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (is_page_path(req.path)) {
      // Under /reports and /review errors are pages; a method the pages do not take (a POST
      // without a body, which the server refuses before routing) is a 405.
      Call call;
      call.method = req.method;
      call.path = req.path;
      std::string allowed = allowed_methods(req.path);
      Reply page;
      if (!listed(allowed, req.method))
        page = method_not_allowed_page(call, allowed);
      else if (res.status == 413)
        page = error_page(413, "Too large", "<p>The request body is larger than " + std::to_string(max_body) + " bytes.</p>\n");
      else if (res.status == 414)
        page = error_page(414, "Address too long", "<p>The request's address is too long.</p>\n");
      else
        page = error_page(res.status, "Refused", "<p>The request was refused (HTTP " + std::to_string(res.status) + ").</p>\n");
      send(res, page);
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
    send(res, json_reply(r));
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
    send(res, json_reply(review::error_response(500, "internal", what)));
  });
  srv->set_logger([](const httplib::Request& req, const httplib::Response& res) {
    double ms = t_started ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count() : 0;
    t_started = false;
    // One line (one write) per request; never the token or the body.
    // What the caller sent is shown, never obeyed: one line, control
    // characters (a %0a or %1b in the path) in caret notation.
    std::fprintf(stderr, "%s %s %s %d %.1fms %s\n", base::utc_now().c_str(), base::one_line(req.method).c_str(),
                 base::one_line(req.path).c_str(), res.status, ms, t_user.empty() ? "-" : t_user.c_str());
    t_user.clear();  // a refusal httplib makes before the hook is nobody's
    if (t_refused || t_close) {
      t_refused = false;
      t_close = false;
      stop_reading(req);
    }
    guard::answered(req.remote_addr, req.remote_port);  // the connection waits for its next request
  });

  const int workers = o.threads;
  auto handler = [&ctx, workers](const httplib::Request& req, httplib::Response& res) {
    guard::answering(req.remote_addr, req.remote_port);  // the body is in
    // One Host, always in HTTP/1.1, and a target that is a path: a request that names its server twice or
    // by an absolute URL could reach a route under a name the server does not answer to.
    if (req.get_header_value_count("Host") > 1 || (req.version == "HTTP/1.1" && !req.has_header("Host")) ||
        req.target.empty() || req.target[0] != '/') {
      send(res, json_reply(review::error_response(400, "bad-request",
                                                  "a request names its server once, in one Host header, and its target "
                                                  "as a path (/api/v1/...)")));
      return;
    }
    Call call;
    call.method = req.method;
    call.raw_path = req.target.substr(0, req.target.find('?'));
    call.path = req.path;
    for (const auto& [k, v] : req.params) call.query.emplace_back(k, v);
    call.body = req.body;
    call.authorization = req.get_header_value("Authorization");
    call.cookie = req.get_header_value("Cookie");
    call.if_match = req.get_header_value("If-Match");
    call.if_match_given = req.has_header("If-Match");
    // Headers that may be sent several times are read as one list, as RFC 9110 reads them.
    auto all_of = [&req](const char* name) {
      std::string v;
      for (size_t i = 0, n = req.get_header_value_count(name); i < n; ++i)
        v += (v.empty() ? "" : ", ") + req.get_header_value(name, i);
      return v;
    };
    call.if_none_match = all_of("If-None-Match");
    call.host = req.get_header_value("Host");
    call.origin = req.get_header_value("Origin");
    call.fetch_site = req.get_header_value("Sec-Fetch-Site");
    call.accept_encoding = all_of("Accept-Encoding");
    std::string user;
    Reply reply = dispatch(ctx, call, &user);
    // cpp-httplib compresses an answer after the handler by the request's Accept-Encoding, read without
    // its weights (gzip;q=0 taken for gzip), and answers a Range header of any answer with a slice under
    // 200. The request is this connection's own: an answer compressed at build time goes as it is;
    // any other in the coding answer_coding chose (the answer says it varies by that header); and
    // no answer is sliced (a cache could keep a slice of an immutable asset as the whole).
    auto& own = const_cast<httplib::Request&>(req);
    own.ranges.clear();
    own.headers.erase("Accept-Encoding");
    if (!reply.precompressed) {
      if (const std::string coding = answer_coding(call.accept_encoding); !coding.empty())
        own.headers.emplace("Accept-Encoding", coding);
      reply.headers.emplace_back("Vary", "Accept-Encoding");
    }
    send(res, reply);
    // Something the caller may not see is answered as something that does not exist, and no sooner:
    // a hidden round, objection or finding takes a lookup more than a missing one (a tenth of a
    // millisecond), so every 404 is sent no earlier than kNotFoundFloor after its request arrived.
    // The log's answers too: a member's read of a hidden objection's events is an empty list, as for a
    // missing one, but it reads (and drops) those events first.
    if ((res.status == 404 || call.path.rfind("/api/v1/log", 0) == 0) && t_started)
      std::this_thread::sleep_until(t_start + kNotFoundFloor);
    // Keep-alive only while a worker is free for others: a connection that would wait for its next
    // request on a worker another caller needs is closed after this answer (the caller connects again
    // and takes its turn), so callers that keep connections alive cannot hold every worker.
    if (guard::crowded(workers)) {
      res.set_header("Connection", "close");
      t_close = true;
    }
    if (!user.empty()) t_user = user;
  };
  srv->Get(".*", handler);
  srv->Post(".*", handler);
  srv->Put(".*", handler);
  srv->Patch(".*", handler);
  srv->Delete(".*", handler);
  srv->Options(".*", handler);

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
    return kCannotStart;
  }
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  guard::Limits limits;
  limits.per_address = o.per_address;
  limits.head_timeout_s = o.head_timeout_s;
  limits.tls = !o.tls_cert.empty();
  guard::start(limits);
  std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::cout << "listening on " << (o.tls_cert.empty() ? "http" : "https") << "://" << shown_host << ":" << bound
            << std::endl;
  if (o.tls_cert.empty() && !loopback)
    std::cerr << "referee serve: WARNING: plain HTTP on " << o.listen
              << " (--insecure-http): tokens and embargoed results cross the network in clear text unless a TLS proxy "
                 "on this machine is the only way in\n";
  std::cerr << "referee serve: store " << db << (o.read_only ? " (read-only)" : "") << ", " << threads << " threads, "
            << o.per_address << " connections per address, " << o.head_timeout_s
            << " s for a request's head; stop with Ctrl-C or SIGTERM\n";

  // The review's notifications, sent on a thread of their own.
  std::unique_ptr<WebhookSender> sender;
  if (o.webhooks && !o.read_only) {
    WebhookOptions wo;
    wo.allow_private = o.webhooks_to_private;
    wo.backoff.base_seconds = o.webhook_retry_s;
    sender = std::make_unique<WebhookSender>(db, wo);
    std::string werr;
    if (!sender->start(&werr)) {
      std::cerr << "referee serve: webhooks are not sent: " << werr << "\n";
      sender.reset();
    }
  }

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
  if (sender) sender->stop();
  if (stopped_by) {
    std::cerr << "referee serve: stopped (" << (stopped_by == SIGINT ? "SIGINT" : "SIGTERM") << ")\n";
    return kStopped;
  }
  if (!ok) {
    std::cerr << "referee serve: the server stopped with an error\n";
    return kCannotStart;
  }
  return kStopped;
}

}  // namespace referee::server
