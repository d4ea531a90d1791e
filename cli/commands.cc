#include "cli/commands.h"

#include <algorithm>

#include "base/text.h"

namespace referee::cli {

std::vector<Command> all_commands() {
  return {check_command(),   check_package_command(), score_command(),       rules_command(),
          import_command(),  compare_command(),       speedup_command(),     scaling_command(),
          leaderboard_command(), list_command(), run_command(), demo_command(), system_command(), workload_command(),
          fetch_command(), round_command(), review_command(), resubmission_command(), audit_command(), serve_command(),
          user_command(), objection_command(), report_command()};
}

std::string unknown_command_message(const std::string& word) {
  std::string best, names;
  size_t best_d = ~size_t{0};
  for (const auto& c : all_commands()) {
    if (word == c.name) return "";
    size_t d = base::edit_distance(word, c.name);
    if (d < best_d) {
      best_d = d;
      best = c.name;
    }
    names += std::string("\n  ") + c.name + std::string(std::max<size_t>(16, std::string(c.name).size() + 2) - std::string(c.name).size(), ' ') + c.description;
  }
  std::string msg = "unknown command '" + word + "'";
  // Close enough to be a typo: at most a third of the letters wrong (at least one).
  if (best_d <= std::max<size_t>(1, std::max(word.size(), best.size()) / 3) ||
      (!word.empty() && best.rfind(word, 0) == 0))
    msg += "; did you mean '" + best + "'?";
  return msg + "\ncommands:" + names;
}

}  // namespace referee::cli
