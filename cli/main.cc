#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "base/memory.h"
#include "base/subprocess.h"
#include "cli/commands.h"
#include "cli/safe_text.h"
#include "review/events.h"
#include "submissions/store.h"

#ifndef REFEREE_WITH_SERVER
namespace {

// `referee serve` is `referee-server serve`: the program beside this one that
// has the HTTP server (CMakeLists.txt says why it is apart). Returns only when
// it cannot be started.
int run_server_program(char** argv) {
  // Set for the program started: a "referee-server" that is a copy of this
  // program would otherwise start itself again, for ever.
  constexpr const char* kMark = "REFEREE_SERVE_STARTED_BY";
  if (const char* by = std::getenv(kMark); by && *by) {
    std::cerr << "referee serve: " << referee::base::self_binary() << " was started as the server program by " << by
              << ", but it is not one (it has no server: a copy of referee, not of referee-server). "
                 "Install or copy referee-server itself beside referee.\n";
    return referee::cli::kCannotCheck;
  }
  std::string error;
  std::string server = referee::cli::server_program(&error);
  if (server.empty()) {
    std::cerr << "referee serve: " << error << "\n";
    return referee::cli::kCannotCheck;
  }
  std::string self = referee::base::self_binary();
  ::setenv(kMark, self.c_str(), 1);
  ::execv(server.c_str(), argv);  // argv[0] kept: usage lines name the command as it was typed
  int err = errno;
  std::cerr << "referee serve: cannot start the server program " << server << ": " << std::strerror(err)
            << ". referee-server is built and installed beside referee; copy the two together.\n";
  return referee::cli::kCannotCheck;
}

}  // namespace
#endif

namespace {

int run(int argc, char** argv) {
#ifndef REFEREE_WITH_SERVER
  if (argc > 1 && std::string_view(argv[1]) == "serve") return run_server_program(argv);
#endif
  referee::base::tune_allocator();
  // A store taken to schema 9 has its packages recorded in the review log (review/events.h).
  referee::submissions::Store::set_upgrade_hook(referee::review::adopt_packages);
  CLI::App app{"referee: checks MLPerf Training result logs and submission packages against the rules"};
  app.set_version_flag("--version", std::string("referee ") + REFEREE_VERSION);
  app.require_subcommand(1);
  std::function<int()> handler;
  // A command named first is the only one set up (each brings its options and
  // their storage: work, memory and page faults a start need not pay for);
  // `referee --help` and anything else get every one.
  auto commands = referee::cli::all_commands();
  if (argc > 1)
    for (const auto& cmd : commands)
      if (std::string(argv[1]) == cmd.name) {
        commands = {cmd};
        break;
      }
  for (auto& cmd : commands) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.description);
    auto run = cmd.setup(*sub);
    sub->callback([&handler, run] { handler = run; });
  }
  // The first word that is not an option names the command: a mistyped one is
  // answered with the closest name, not with CLI11's "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string msg = referee::cli::unknown_command_message(argv[1]);
    if (!msg.empty()) {
      std::cerr << "referee: " << msg << "\nrun 'referee --help' for the options\n";
      return referee::cli::kCannotCheck;
    }
  }
  if (std::string bad = referee::cli::non_utf8_argument(argc, argv); !bad.empty()) {
    std::cerr << "referee " << bad << "\n";
    return referee::cli::kCannotCheck;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // "--benchmark is required" for a mistyped --benchmrk: name the flag that was not understood first.
    if ((dynamic_cast<const CLI::RequiredError*>(&e) || dynamic_cast<const CLI::ExtrasError*>(&e)) && argc > 1) {
      std::string unknown = referee::cli::unknown_flag_message(app, argc, argv);
      if (!unknown.empty()) {
        std::cerr << "referee " << argv[1] << ": " << unknown << "\n";
        return referee::cli::kCannotCheck;
      }
    }
    if (e.get_exit_code() != 0 && argc == 1) {
      std::cerr << "referee: give a command; run 'referee --help' for the commands\n";
      return referee::cli::kCannotCheck;
    }
    if (e.get_exit_code() != 0 && argc > 1 && argv[1][0] != '-') {
      // As every other message of a command: prefixed with its name, and where to look.
      std::cerr << "referee " << argv[1] << ": " << e.what() << "\nrun 'referee " << argv[1] << " --help' for the options\n";
      return referee::cli::kCannotCheck;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : referee::cli::kCannotCheck;
  }
  if (!handler) return referee::cli::kCannotCheck;
  // Last resort: commands report bad input as messages; anything that still
  // escapes (a library's exception, a bug) ends with a message and exit code 2,
  // never with an abort.
  // Titles, texts, quoted log lines and names that others wrote are shown,
  // never obeyed by the terminal (cli/safe_text.h).
  std::unique_ptr<referee::cli::SafeTextFilter> out_filter, err_filter;
  if (bool colours = false; argc > 1 && referee::cli::prints_others_text(argv[1], &colours)) {
    // `system describe` prints a description to be kept as systems/<system>.json,
    // and --json/--csv print what programs read: into a file or a pipe these go
    // byte for byte, to a terminal they are shown safely.
    const bool byte_exact = std::string_view(argv[1]) == "system" || referee::cli::machine_readable_output(argc, argv);
    if (!byte_exact || ::isatty(STDOUT_FILENO))
      out_filter = std::make_unique<referee::cli::SafeTextFilter>(std::cout, colours);
    err_filter = std::make_unique<referee::cli::SafeTextFilter>(std::cerr, colours);
  }
  int rc = referee::cli::kCannotCheck;
  try {
    rc = handler();
  } catch (const std::exception& e) {
    std::cerr << "referee: could not finish '" << (argc > 1 ? argv[1] : "") << "': " << e.what()
              << " (an unexpected error; exit code 2)\n";
  } catch (...) {
    std::cerr << "referee: could not finish '" << (argc > 1 ? argv[1] : "")
              << "': an unexpected error of unknown type (exit code 2)\n";
  }
  // What the command printed reached its destination, or the exit status says
  // it did not: a CSV cut short by a full disk or a file size limit (ulimit -f)
  // must not pass for a whole one.
  out_filter.reset();
  errno = 0;
  std::cout.flush();
  const bool stdout_failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good();
  if (stdout_failed) {
    const int err = errno;
    std::cerr << "referee " << (argc > 1 ? argv[1] : "") << ": could not write the output"
              << (err ? std::string(" (") + std::strerror(err) + ")" : std::string())
              << "; what was written is incomplete (exit code 2)\n";
    return referee::cli::kCannotCheck;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // A write past a file size limit (ulimit -f) fails with EFBIG, which every
  // write reports and cleans up after, instead of killing the process
  // mid-way without a word.
  ::signal(SIGXFSZ, SIG_IGN);
  // Out of memory while the commands are set up (an address-space limit, say)
  // ends with a message and exit code 2 like any other failure, not an abort.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "referee: out of memory (exit code 2)\n";
  } catch (const std::exception& e) {
    std::cerr << "referee: " << e.what() << " (an unexpected error; exit code 2)\n";
  }
  return referee::cli::kCannotCheck;
}
