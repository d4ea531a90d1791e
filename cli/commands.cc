#include "cli/commands.h"

#include <algorithm>

namespace referee::cli {

std::vector<Command> all_commands() {
  return {check_command(),   check_package_command(), score_command(),       rules_command(),
          import_command(),  compare_command(),       speedup_command(),     scaling_command(),
          leaderboard_command(), list_command(), run_command(), demo_command(), system_command(), workload_command(),
          fetch_command(), round_command(), review_command(), resubmission_command(), audit_command(), serve_command(),
          user_command(), objection_command(), report_command()};
}

namespace {

// Levenshtein distance (names are short).
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string unknown_command_message(const std::string& word) {
  std::string best, names;
  size_t best_d = ~size_t{0};
  for (const auto& c : all_commands()) {
    if (word == c.name) return "";
    size_t d = distance(word, c.name);
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
