// What the review commands share: sending a request through the client
// (local store or --server) and printing the answer the same way for both:
// the JSON body with --json, else a text rendering made from the body only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/review_output.h"
#include "mllog/json.h"
#include "review/api.h"

namespace referee::cli {

// Sends `r` and prints the result. On success (2xx) prints the body (json)
// or render(parsed body) and returns 0; on an error prints
// "referee <cmd>: <message>" and the hint on stderr and returns 1 for a
// refusal by policy (403, 404, 405, 409, 413, 422) or 2 for bad input,
// a missing or bad token, a transport failure or a server error.
int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, bool json,
                   const std::function<void(const mllog::Json&)>& render);

// The exit code for an API status (as above; 0 for 2xx).
int exit_code_for(int status);

// A JSON string (escaped, quoted) for building request bodies.
std::string json_str(const std::string& s);

// Text of a JSON scalar ("" for null), numbers as Python prints them.
std::string text_of(const mllog::Json* v);

// Percent-escapes one path segment or query value.
std::string url_escape(const std::string& s);

// `referee review log [--round R] [--subject S] [--verify] [--json]`: the
// review group's "log" subcommand (cmd_objection.cc).
review_cli::SubSetup review_log_setup();

}  // namespace referee::cli
