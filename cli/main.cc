#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"referee: checks MLPerf Training result logs and submission packages against the rules"};
  app.set_version_flag("--version", std::string("referee ") + REFEREE_VERSION);
  app.require_subcommand(1);
  std::function<int()> handler;
  for (auto& cmd : referee::cli::all_commands()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
    auto run = cmd.setup(*sub);
    sub->callback([&handler, run] { handler = run; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : referee::cli::kCannotCheck;
  }
  return handler ? handler() : referee::cli::kCannotCheck;
}
