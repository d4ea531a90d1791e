#include "cli/commands.h"

namespace referee::cli {

std::vector<Command> all_commands() {
  return {check_command(),   check_package_command(), score_command(),       rules_command(),
          import_command(),  compare_command(),       speedup_command(),     scaling_command(),
          leaderboard_command(), run_command(), demo_command(), system_command(), workload_command(), fetch_command()};
}

}  // namespace referee::cli
