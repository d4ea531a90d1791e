#include "cli/client.h"

#include <cstdlib>

#include "submissions/store.h"

namespace referee::cli {

void add_client_options(CLI::App& sub, ClientOptions* o) {
  sub.add_option("--server", o->server, "review server URL, e.g. http://127.0.0.1:8080 (default $REFEREE_SERVER; none: the local store)");
  sub.add_option("--token", o->token, "your token (default $REFEREE_TOKEN)");
  sub.add_option("--db", o->db, "local store (default $REFEREE_DB or the user's data directory); not used with --server");
}

void resolve_client_options(ClientOptions* o) {
  if (o->server.empty())
    if (const char* s = std::getenv("REFEREE_SERVER"); s && *s) o->server = s;
  if (o->token.empty())
    if (const char* t = std::getenv("REFEREE_TOKEN"); t && *t) o->token = t;
}

review::Response call_api(const ClientOptions& o, review::Request r) {
  r.token = o.token;
  if (!o.server.empty())
    return review::error_response(0, "no-client", "this referee cannot reach servers yet");
  r.local_admin = o.token.empty();
  review::Api api(o.db.empty() ? submissions::default_db_path() : o.db);
  return api.handle(r);
}

}  // namespace referee::cli
