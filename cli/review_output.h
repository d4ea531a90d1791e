// What the review commands share: turning an API response into output and
// an exit code, the same for a local store and a server (docs/review.md).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cli/client.h"
#include "mllog/json.h"
#include "review/api.h"

namespace referee::cli::review_cli {

// Exit code of a response: 0 for 2xx; 1 refused by policy (403, 404, 409,
// 422, other 4xx but 400/401); 2 could not do the job (400, 401, 5xx, no
// answer). An error prints "referee <cmd>: <message>" and its hint on stderr.
int review_exit(const char* cmd, const review::Response& r);

// Prints a successful response: its body with `json`, else the text that
// `render` makes from the parsed body. Returns review_exit().
int review_print(const char* cmd, const review::Response& r, bool json,
                 const std::function<void(const mllog::Json&)>& render);

// A review request with a path made of percent-escaped segments.
std::string path_segment(const std::string& s);

// --json ("print the JSON answer") and the client options: what a
// subcommand that sends one review request takes.
void add_answer_options(CLI::App& sub, bool* json, ClientOptions* client);

// A command group: `setups` register each subcommand on its own CLI::App;
// the returned handler runs the one chosen.
using SubSetup = std::function<std::function<int()>(CLI::App&)>;
std::function<int()> command_group(CLI::App& group,
                                   const std::vector<std::tuple<const char*, const char*, SubSetup>>& subs);

// A subcommand on a round's resource: the round from --round (or the
// positional ROUND when `positional`), --json and the client options. On the
// local store it runs `local` (a typed operation of review/round_ops.h and
// its answer); with a server it sends `method` to
// /api/v1/rounds/{round}`suffix`. Prints the answer with `render` as
// review_print does.
using RoundCall =
    std::function<review::Response(submissions::Store& store, const review::Actor& who, const std::string& round)>;
SubSetup round_request(const char* cmd, const char* method, const char* suffix, bool positional, RoundCall local,
                       std::function<void(const mllog::Json&)> render);

// JSON field readers for rendering (empty / 0 when absent).
std::string jstr(const mllog::Json& j, const char* key);
long long jint(const mllog::Json& j, const char* key);

}  // namespace referee::cli::review_cli
