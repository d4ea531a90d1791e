// The review service's API, independent of HTTP: one Request in, one
// Response out, JSON bodies. `referee serve` puts it behind HTTP; the CLI's
// review commands call it in-process on a local store or over HTTP with
// --server (cli/client.h), so both answer with the same bytes.
//
// Routes, authorisation and error bodies are documented in docs/review.md
// and docs/openapi.yaml. An error is {"error": {"status": N, "code": "...",
// "message": "...", "hint": "..."}} with status 400 (bad input), 401 (no or
// bad token), 403 (not allowed for this role, organisation or round state),
// 404, 409 (stale version: the object changed since it was read), 413, 422
// (well-formed but breaks a review rule, e.g. a deadline passed), 500.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "review/actor.h"
#include "review/result.h"

namespace referee::review {

struct Request {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;    // /api/v1/objections/12
  std::vector<std::pair<std::string, std::string>> query;
  std::string body;      // JSON text; "" when none
  std::string token;     // the bearer token; "" when none
  std::string if_match;  // the version the client read ("" = none): a stale one gets 409
  bool if_match_given = false;  // the header was sent (an empty one is not a version: 400)
  // Set only by a CLI command on a local store with no token: the caller can
  // write the file, so acts as its administrator ("local-admin").
  bool local_admin = false;
};

struct Response {
  int status = 200;
  std::string body;  // JSON (or text/markdown when content_type says so)
  std::string content_type = "application/json";
};

class Api {
 public:
  // `db_path`: the store. Connections are opened per calling thread, so one
  // Api serves many threads at once. `read_only`: refuse every write (503).
  explicit Api(std::string db_path, bool read_only = false);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Never throws; an unexpected failure is a 500 with the reason.
  Response handle(const Request& r);

  // The actor a token names (a local_admin request: the local
  // administrator). Post: true with *out; else false with *error set to the
  // 401 response (no token, unknown token, revoked token, disabled user).
  bool authenticate(const Request& r, Actor* out, Response* error);

  // Whether `who` may see `round` (training-3.1.0): every published round;
  // a round in review or final only for chairs, administrators and members
  // of an organisation that submitted to it (the embargo). A round with no
  // review record is published (imported from published results).
  bool can_see_round(const Actor& who, const std::string& round);

  const std::string& db_path() const;

  // Where `referee audit` looks for the round's rule set (as --rules: the
  // only place looked); "" (the default) = the search path (REFEREE_RULES,
  // the cache, the built-in sets). Set before the first request.
  void set_rules_dir(std::string dir);
  const std::string& rules_dir() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The hash under which the store keeps a token: hex BLAKE2b-256
// (libsodium's crypto_generichash) of the whole token text.
std::string token_hash(const std::string& token);

// A JSON error response.
Response error_response(int status, const std::string& code, const std::string& message, const std::string& hint = "");
// The response for a domain Error: its status, and a 409 names the current version.
Response error_response(const Error& e);
// The answer for a round `text` (as asked) that does not exist or that the
// actor may not see (the embargo): the same 404, word for word, for both,
// naming neither the store nor the rounds it holds.
Response unknown_round(const std::string& text);

}  // namespace referee::review
