#include "cli/commands.h"

#include <algorithm>

#include "base/text.h"

namespace referee::cli {

std::vector<Command> all_commands() {
  return {check_command(),   check_package_command(), score_command(),       rules_command(),
          import_command(),  compare_command(),       speedup_command(),     scaling_command(),
          leaderboard_command(), list_command(), run_command(), demo_command(), system_command(), workload_command(),
          fetch_command(), round_command(), review_command(), resubmission_command(), webhook_command(), audit_command(), serve_command(),
          user_command(), objection_command(), report_command(), package_command()};
}

std::string unknown_flag_message(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = nullptr;
  try {
    sub = app.get_subcommand(argv[1]);
  } catch (const CLI::Error&) {
    return "";
  }
  // The options of the command and of each sub-command named after it (objection file ...).
  std::vector<std::string> known;
  std::string command = argv[1];
  auto add = [&known](const CLI::App* a) {
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : o->get_lnames()) known.push_back("--" + n);
  };
  add(sub);
  for (int i = 2; i < argc && argv[i][0] != '-'; ++i) {
    CLI::App* next = nullptr;
    for (CLI::App* c : sub->get_subcommands([](CLI::App*) { return true; }))
      if (c->get_name() == argv[i]) next = c;
    if (!next) break;
    sub = next;
    command += std::string(" ") + argv[i];
    add(sub);
  }
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0 || a.size() < 3) continue;
    std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string near = base::nearest_name(name, known);
    return name + " is not an option of " + command + (near.empty() ? "" : "; did you mean " + near + "?") +
           " (referee " + command + " --help lists them)";
  }
  return "";
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
