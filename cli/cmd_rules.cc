#include "cli/commands.h"

namespace referee::cli {

Command rules_command() {
  return {"rules", "Install and list rule sets", [](CLI::App& sub) -> std::function<int()> {
            sub.require_subcommand(0);
            return [] { return static_cast<int>(kCannotCheck); };
          }};
}

}  // namespace referee::cli
