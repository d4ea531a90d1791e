// serve: the review service over HTTP(S), the store's questions and the
// report pages (docs/review.md "Serving the review", docs/reports.md). The
// command only reads its flags; the server is server/.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/subprocess.h"
#include "cli/commands.h"
#include "server/server.h"

namespace referee::cli {

std::string server_program(std::string* error) {
  std::string self = base::self_binary();
  if (self.empty()) {
    *error = "cannot tell where this program is (/proc/self/exe cannot be read), so not where referee-server is";
    return "";
  }
#ifdef REFEREE_WITH_SERVER
  return self;
#else
  std::string server = (std::filesystem::path(self).parent_path() / "referee-server").string();
  if (::access(server.c_str(), X_OK) != 0) {
    *error = "no server program at " + server + " (referee-server is built and installed beside referee: "
             "cmake --build builds both, cmake --install installs both; copy the two together)";
    return "";
  }
  return server;
#endif
}

Command serve_command() {
  return {"serve", "Serve the store and the peer review over HTTP(S): a JSON API and the report pages (/reports/)", [](CLI::App& sub) -> std::function<int()> {
            auto o = std::make_shared<server::Options>();
            sub.add_option("--db", o->db, "the store (default $REFEREE_DB or the user's data directory)");
            sub.add_option("--listen", o->listen, "HOST:PORT to listen on (default 127.0.0.1:8080; port 0 picks a free one)");
            sub.add_option("--allow-host", o->allow_hosts,
                           "a host name this server answers to (repeatable); addresses and localhost always are, any other name: 421")
                ->type_name("NAME");
            sub.add_option("--tls-cert", o->tls_cert, "PEM certificate (chain): serve https")->check(CLI::ExistingFile);
            sub.add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert")->check(CLI::ExistingFile);
            sub.add_flag("--read-only", o->read_only, "take no changes: every write is refused with 503");
            sub.add_flag("--insecure-http", o->insecure_http,
                         "serve plain HTTP on an address other than the loopback (behind a TLS proxy); refused otherwise");
            sub.add_flag("--public", o->anonymous_public,
                         "answer questions and report pages without a token, about published rounds only");
            sub.add_option("--threads", o->threads, "worker threads: requests served at once (default 16)")->check(CLI::Range(1, 256));
            sub.add_option("--max-connections-per-address", o->per_address,
                           "connections open at once from one address (default 8); one more is answered 503")
                ->check(CLI::Range(1, 256));
            sub.add_option("--head-timeout", o->head_timeout_s,
                           "seconds a request's line and headers may take from its first byte (default 10); then 408")
                ->check(CLI::Range(1, 600));
            sub.add_option("--max-body", o->max_body, "largest request body in bytes (default 1048576); larger: 413")
                ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
            sub.add_option("--read-timeout", o->read_timeout_s, "seconds to wait for a request's bytes (default 5)")->check(CLI::Range(1, 600));
            sub.add_option("--write-timeout", o->write_timeout_s, "seconds to wait while sending an answer (default 10)")->check(CLI::Range(1, 600));
            sub.add_flag("--no-webhooks", [o](int64_t) { o->webhooks = false; }, "send no notifications to webhooks");
            sub.add_flag("--webhooks-to-private", o->webhooks_to_private,
                         "deliver webhooks to loopback and private addresses too (refused by default)");
            sub.add_option("--webhook-retry", o->webhook_retry_s,
                           "seconds before a failed delivery's first retry; each next waits twice as long, at most 1 h "
                           "(default 30)")
                ->check(CLI::Range(0.01, 3600.0));
            sub.add_option("--exit-with-parent", o->parent_pid, "PID of the process that started this one: stop when it ends")
                ->group("");  // for referee's own use (the demo)
            // server::serve returns 0 (stopped by a signal) or 2 (could not start): kPass, kCannotCheck.
#ifdef REFEREE_WITH_SERVER
            return [o]() -> int { return server::serve(*o); };
#else
            // `referee serve` runs referee-server before it gets here (cli/main.cc).
            return []() -> int { return kCannotCheck; };
#endif
          }};
}

}  // namespace referee::cli
