// The CLI as a client of the review service: a command builds an API
// request (review/api.h) and sends it to a server (--server URL, else
// $REFEREE_SERVER) with the token from --token or $REFEREE_TOKEN, or, with
// no server, hands it to a review::Api on the local store (--db). The answer
// is the same either way, so the command prints the same output.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "review/api.h"
#include "submissions/store.h"

namespace referee::cli {

struct ClientOptions {
  std::string server;  // --server, else $REFEREE_SERVER; "" = local store
  std::string token;   // --token, else $REFEREE_TOKEN
  std::string db;      // --db, else the default store (local only)
  std::string cacert;  // --cacert, else $REFEREE_CACERT: PEM file of the CA (or self-signed certificate) to trust
  long timeout_s = 0;  // --timeout, else $REFEREE_TIMEOUT, else 60: the whole request's limit
  std::string rules;   // referee audit --rules: where the local store's audit finds rule sets (local only)
};

// Registers --server, --token, --cacert, --timeout and (when `with_db`) --db on `sub`.
void add_client_options(CLI::App& sub, ClientOptions* o, bool with_db = true);

// Fills server, token, cacert and timeout from the environment where the
// flags were not given; $REFEREE_SERVER not when --db names a local store.
void resolve_client_options(ClientOptions* o);

// Sends `r` (its token is filled from `o`). With no server and no token the
// request is made as the local store's administrator. A transport failure
// (server unreachable, TLS error, timeout), and with no server a store file
// that does not exist (nothing is created), is a Response with status 0 and
// the reason in body as {"error": {...}}.
review::Response call_api(const ClientOptions& o, review::Request r);

// A review operation, where the options say: with a server, `remote` is
// sent over HTTP (as call_api); else `local` runs the typed operation
// (review/objections.h, review/round_ops.h, review/identity.h) on the local
// store as the actor the token names (no token: the local administrator)
// and answers what the API would. The errors of a missing store, a bad token
// and a store that does not open are call_api's.
using LocalCall = std::function<review::Response(submissions::Store& store, const review::Actor& who)>;
review::Response call_review(const ClientOptions& o, const review::Request& remote, const LocalCall& local);

// The local store's path (--db, $REFEREE_DB, the default); false with
// *missing (status 0, "no store at PATH" and how to make one) when there is
// none: opening a store that is not there would create an empty one, so it
// is refused, creating nothing.
bool local_store(const ClientOptions& o, std::string* db, review::Response* missing);

}  // namespace referee::cli
