// Subcommands of the referee binary. main() builds the table; each command
// lives in its own cmd_*.cc file and only parses flags, calls a library and
// prints.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace referee::cli {

// Exit codes (README "Exit codes").
enum Exit : int {
  kPass = 0,         // everything checked and compliant
  kFail = 1,         // the input breaks the rules
  kCannotCheck = 2,  // bad flags, unreadable input, missing rule set
};

struct Command {
  const char* name;
  const char* description;
  // Registers flags on `sub`; returns the handler run when `sub` was chosen.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command> all_commands();

// When `word` is not a command's name: "unknown command 'word'; did you mean
// 'X'?" (the closest name, when one is close) and the list of commands.
// Empty when `word` names a command.
std::string unknown_command_message(const std::string& word);

// The first flag of `argv` that the command argv[1] does not have, with the
// nearest one it has ("--benchmrk is not an option of leaderboard; did you
// mean --benchmark?"); "" when every flag is known.
std::string unknown_flag_message(CLI::App& app, int argc, char** argv);

// Commands, one per file.
Command check_command();
Command check_package_command();
Command package_command();       // cmd_package.cc
Command rules_command();
Command score_command();
Command run_command();
Command demo_command();
Command system_command();
Command workload_command();
Command import_command();
Command compare_command();
Command speedup_command();
Command scaling_command();
Command leaderboard_command();
Command list_command();
Command fetch_command();
Command round_command();         // cmd_round.cc
Command review_command();        // cmd_review.cc
Command resubmission_command();  // cmd_review.cc
Command webhook_command();       // cmd_webhook.cc
Command audit_command();
Command serve_command();         // cmd_serve.cc

// The program that serves (`referee serve`): this one where it has the server
// (referee-server), otherwise the referee-server in this program's folder.
// "" with *error saying why when there is none to run (cmd_serve.cc).
std::string server_program(std::string* error);
Command user_command();       // cmd_user.cc
Command objection_command();  // cmd_objection.cc
Command report_command();     // cmd_report.cc

}  // namespace referee::cli
