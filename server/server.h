// `referee serve`: the review API, the store's questions and the report
// pages over HTTP(S) (docs/review.md, "Serving the review"). This is the
// HTTP adapter only: the listener, its limits, TLS, the request log and a
// graceful stop; what each route answers is in routes.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace referee::server {

struct Options {
  std::string db;                       // the store; "" = submissions::default_db_path()
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0 picks a free one
  std::vector<std::string> allow_hosts;  // names a request's Host may give besides addresses and localhost
  std::string tls_cert, tls_key;        // PEM files: serve https (both or neither)
  bool read_only = false;               // refuse every write (503)
  bool anonymous_public = false;        // answer callers without a token about published rounds
  bool insecure_http = false;           // serve plain HTTP on an address other than the loopback
  int threads = 16;                     // worker threads: requests served at once
  int per_address = 8;                  // connections open at once from one address (server/guard.h)
  int head_timeout_s = 10;              // seconds for a request's head, from its first byte (server/guard.h)
  size_t max_body = 1 << 20;            // largest request body in bytes; larger: 413
  int read_timeout_s = 5;               // seconds to wait for a request's bytes
  int write_timeout_s = 10;             // seconds to wait while sending an answer
  int keep_alive_s = 5;                 // seconds an idle connection is kept
  int parent_pid = 0;                   // > 0: stop when that process (the starter) ends
  bool webhooks = true;                 // send the review's notifications (not with read_only)
  bool webhooks_to_private = false;     // to loopback and private addresses too (server/webhooks.h)
  double webhook_retry_s = 30;          // the first retry's wait; each next one doubles it (at most 1 h)
};

// Serves until SIGINT or SIGTERM, then lets the requests in flight finish.
// Prints "listening on URL" on stdout once it listens, one log line per
// request on stderr. Returns 0 when stopped by a signal; 2 (after saying why
// on stderr) when it could not start: a bad --listen, a missing or damaged
// store, an unusable TLS certificate, an address in use.
int serve(const Options& o);

}  // namespace referee::server
