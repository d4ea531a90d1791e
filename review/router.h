// How the API's routes are declared and what a handler gets. Each part of
// the review registers its routes in its own file; api.cc matches a request
// to a route, authenticates it, opens this thread's store connection and
// calls the handler. A handler decodes the request into typed values, calls
// the domain (review/objections.h, review/round_ops.h, review/identity.h,
// review/policy.h) and encodes the result;
// every write goes through policy's write(): one transaction that also
// appends its event (review/events.h).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "base/text.h"
#include "mllog/json.h"
#include "review/actor.h"
#include "review/api.h"
#include "review/policy.h"
#include "submissions/store.h"

namespace referee::review {

struct Context {
  submissions::Store& store;
  const Actor& who;
  const Request& req;
  Api& api;
  std::vector<std::string> params;  // the {captures} of the route's pattern, in order, percent-decoded

  // The last value of query parameter `name`, or `fallback`.
  std::string query(const std::string& name, const std::string& fallback = "") const;
};

using Handler = std::function<Response(Context&)>;

struct Route {
  std::string method;   // GET, POST, PUT, PATCH, DELETE
  std::string pattern;  // /api/v1/objections/{id}: a {name} matches one path segment
  bool writes = false;  // refused (503) on a read-only Api
  Handler handler;
  // Whether the route is served without a token (GET /api/v1/health).
  bool anonymous = false;
};

// The routes of each part, each defined in its own file.
std::vector<Route> identity_routes();   // review/identity_routes.cc: users, tokens, /me
std::vector<Route> round_routes();      // review/round_routes.cc: rounds, schedule, state, pairings, announcements, report
std::vector<Route> objection_routes();  // review/objection_routes.cc: objections, evidence, responses, votes, decisions, log
std::vector<Route> audit_routes();      // review/audit.cc: audit, findings
std::vector<Route> notify_routes();     // review/notify_routes.cc: webhooks and their deliveries
// Every part's routes, in the order above: what Api::handle serves.
std::vector<Route> all_routes();

// Parses r.body as one JSON object whose field names are all in `allowed`
// and whose text is valid UTF-8, nested at most 32 deep. Post: true with
// *out; else false with *err a 400 naming the problem (unknown field and the
// allowed ones, invalid UTF-8 at byte N, not JSON at column N, not an object).
// An empty body is an empty object.
bool parse_body(const Request& r, std::initializer_list<const char*> allowed, mllog::Json* out, Response* err);

// Field readers for a parsed body. Each returns false with *err a 400 when
// the field is present with the wrong type (or absent when required).
bool body_string(const mllog::Json& body, const char* name, bool required, std::string* out, Response* err);
bool body_number(const mllog::Json& body, const char* name, bool required, double* out, bool* present, Response* err);
bool body_int(const mllog::Json& body, const char* name, bool required, long long* out, bool* present, Response* err);
bool body_strings(const mllog::Json& body, const char* name, bool required, std::vector<std::string>* out, Response* err);
// A bool field; 400 when present and not a bool (absent: *out unchanged).
bool body_bool(const mllog::Json& body, const char* name, bool* out, Response* err);

// The version a write was based on: the body's "version", else the
// If-Match header (if_match_version()); neither = not given. False with
// *err a 400 when either is not a version number.
bool read_expected(const Request& r, const mllog::Json& body, Expected* out, Response* err);

using base::valid_utf8;  // base/text.h

// An If-Match header's version: 1 to 18 decimal digits (quotes around it
// removed); false for anything else (a sign, a list, `*`, a number that
// does not fit), which the caller answers with a 400.
bool if_match_version(std::string text, long long* out);

// An id in a path (`/objections/12`): 1 to 18 decimal digits, no leading
// zero. Spaces, signs, trailing bytes (a %00 included) are not an id, so one
// thing has one name.
bool path_id(const std::string& text, long long* out);

// A 200 (or `status`) response with a JSON body.
Response json_response(std::string body, int status = 200);

}  // namespace referee::review
