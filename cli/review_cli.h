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

// Sends `r` (call_api) and prints the answer as review_cli::review_print
// does: the body (json) or render(parsed body) and 0 on success; else
// "referee <cmd>: <message>" and the hint on stderr and the exit code of
// review_cli::review_exit.
int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, bool json,
                   const std::function<void(const mllog::Json&)>& render);
// The same for a typed operation (call_review): `local` on the local store,
// `r` to a server.
int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, const LocalCall& local, bool json,
                   const std::function<void(const mllog::Json&)>& render);

// Text of a JSON scalar ("" for null), numbers as Python prints them.
std::string text_of(const mllog::Json* v);

// The non-empty array `key` of an answer `b`; else null after printing
// `none` and a newline ("no users"): a list's rendering starts with it.
const mllog::Json* listed(const mllog::Json& b, const char* key, const char* none);

// `referee review log [--round R] [--subject S] [--verify] [--json]`: the
// review group's "log" subcommand (cmd_objection.cc).
review_cli::SubSetup review_log_setup();

}  // namespace referee::cli
