// referee demo --review: the peer review of one real result, told through the
// review service. NVIDIA's round-3.1 RetinaNet result at 256 nodes failed
// its RCP check; the committee normalised it with a factor of 1.0758. The
// demo imports that result as submitted (without the committee's
// scaling.json) beside two other submitters of the round, starts
// `referee serve` on 127.0.0.1 and plays the review as its members would:
// the failing check found, an objection filed, the response asking for
// normalisation, the votes, the chair's decision, and the leaderboard after.
#include "cli/demo_review.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "base/subprocess.h"
#include "base/utc_time.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"

extern char** environ;

namespace fs = std::filesystem;

namespace referee::cli {

namespace {

// The published results and the consortium's rule files: --reference, else
// $REFEREE_REFERENCE_DATA, else ../shared beside the source tree.
std::string find_reference(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* d = std::getenv("REFEREE_REFERENCE_DATA"); d && *d) return d;
  return std::string(REFEREE_SOURCE_DIR) + "/../shared";
}

// Runs this referee binary with `args`, stdout and stderr together into
// *out; `env` entries (NAME=VALUE) are added to the environment. Returns the
// exit status (-1 when it could not start or was killed).
int run_self(const std::vector<std::string>& args, const std::vector<std::string>& env, std::string* out) {
  std::vector<std::string> argv = {fs::read_symlink("/proc/self/exe").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  base::CommandOptions o;
  for (const auto& x : env) o.env[x.substr(0, x.find('='))] = x.substr(x.find('=') + 1);
  o.stderr_to = base::StderrTo::Stdout;
  o.own_process_group = false;
  o.max_output = out->max_size();
  base::CommandResult r = base::run_command(argv, o);
  *out = std::move(r.out);
  return r.exit_code;
}

// A child `referee serve`, stopped (SIGTERM, then waited for) when destroyed.
class ServerProcess {
 public:
  ~ServerProcess() { stop(); }
  bool start(const std::string& db, std::string* url, std::string* error) {
    int fds[2];
    if (pipe(fds) != 0) {
      *error = "cannot make a pipe for the server";
      return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) posix_spawn_file_actions_adddup2(&fa, devnull, 2);
    std::string exe = server_program(error);
    if (exe.empty()) {
      ::close(fds[0]);
      ::close(fds[1]);
      if (devnull >= 0) ::close(devnull);
      posix_spawn_file_actions_destroy(&fa);
      *error = "cannot start referee serve: " + *error;
      return false;
    }
    std::vector<std::string> args = {exe, "serve", "--db", db, "--listen", "127.0.0.1:0", "--exit-with-parent",
                                     std::to_string(::getpid())};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (devnull >= 0) ::close(devnull);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = 0;
      *error = "cannot start referee serve";
      return false;
    }
    // The server prints "listening on http://127.0.0.1:PORT" once it accepts.
    std::string line;
    char c;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::read(fds[0], &c, 1);
      if (n <= 0) break;
      if (c == '\n') {
        auto at = line.find("http://");
        if (at != std::string::npos) {
          *url = line.substr(at);
          break;
        }
        line.clear();
      } else {
        line += c;
      }
    }
    ::close(fds[0]);
    if (url->empty()) {
      *error = "referee serve did not say where it listens";
      stop();
      return false;
    }
    return true;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
};

}  // namespace

namespace {

std::string token_in(const std::string& text) {
  auto at = text.find("rft_");
  if (at == std::string::npos || at + 4 + 64 > text.size()) return "";
  return text.substr(at, 4 + 64);
}

long long first_id(const std::string& json) {
  auto at = json.find("\"id\":");
  if (at == std::string::npos) return 0;
  return std::atoll(json.c_str() + at + 5);
}

// Prints "$ referee ARGS" (as USER) and the command's output, indented.
struct Teller {
  std::string server;
  bool failed = false;
  std::string last;
  // Shows at most `max_lines` lines of the output (0: all).
  int run(const std::string& user, const std::string& token, const std::vector<std::string>& args, bool show = true,
          int expect = 0, int max_lines = 0) {
    std::string line = "$ ";
    if (!user.empty()) line += "[" + user + "] ";
    line += "referee";
    for (const auto& a : args) {
      if (a.find_first_of(" '") == std::string::npos) line += " " + a;
      else if (a.find('\'') == std::string::npos) line += " '" + a + "'";
      else line += " \"" + a + "\"";
    }
    std::cout << line << "\n";
    std::vector<std::string> env;
    if (!server.empty()) env.push_back("REFEREE_SERVER=" + server);
    env.push_back("REFEREE_TOKEN=" + token);
    int rc = run_self(args, env, &last);
    if (show || rc != expect) {
      size_t i = 0;
      int shown = 0;
      while (i < last.size() && (max_lines == 0 || rc != expect || shown++ < max_lines)) {
        size_t j = last.find('\n', i);
        if (j == std::string::npos) j = last.size();
        std::cout << "    " << last.substr(i, j - i) << "\n";
        i = j + 1;
      }
    }
    if (rc != expect) {
      std::cout << "referee demo --review: that command exited " << rc << " (expected " << expect << ")\n";
      failed = true;
    }
    std::cout << std::flush;
    return rc;
  }
};

std::string date_from_now(int days) {
  return base::utc_string(std::chrono::system_clock::now() + std::chrono::hours(24 * days), base::UtcFormat::Date);
}

}  // namespace

int run_review_demo(const ReviewDemoOptions& o) {
  std::string ref = find_reference(o.reference);
  std::error_code ec;
  ref = fs::weakly_canonical(ref, ec).string();
  std::string round_dir = ref + "/mlperf/training_results_v3.1";
  std::string rules_dir = ref + "/mlperf/logging/mlperf_logging";
  const std::string kSystem = "eos_n256_ngc23.09_pytorch";
  if (!fs::exists(round_dir + "/NVIDIA/results/" + kSystem + "/ssd", ec) || !fs::exists(rules_dir, ec)) {
    std::cerr << "referee demo --review: the published round-3.1 results are not in " << ref
              << " (it needs mlperf/training_results_v3.1/{NVIDIA,Azure,Azure+NVIDIA} and mlperf/logging)\n"
              << "  hint: pass --reference DIR or set REFEREE_REFERENCE_DATA to the folder that holds them\n";
    return kCannotCheck;
  }
  // The server is needed at step 3: said before anything is written.
  if (std::string why; server_program(&why).empty()) {
    std::cerr << "referee demo --review: cannot start referee serve: " << why << "\n";
    return kCannotCheck;
  }
  // NVIDIA's RetinaNet results as submitted: the committee's scaling.json left out.
  fs::path out = fs::absolute(o.out);
  fs::path pkg = out / "review-package" / "NVIDIA";
  std::string db = (out / "review.db").string();
  fs::remove_all(out / "review-package", ec);
  for (const char* f : {"", "-wal", "-shm"}) fs::remove(db + f, ec);
  fs::create_directories(pkg / "systems", ec);
  fs::create_directories(pkg / "results", ec);
  for (const auto& e : fs::directory_iterator(round_dir + "/NVIDIA/results", ec)) {
    fs::path src = e.path() / "ssd";
    if (!fs::is_directory(src, ec)) continue;
    std::string sys = e.path().filename().string();
    fs::create_directories(pkg / "results" / sys / "ssd", ec);
    for (const auto& f : fs::directory_iterator(src, ec))
      if (f.path().filename() != "scaling.json") fs::copy_file(f.path(), pkg / "results" / sys / "ssd" / f.path().filename(), ec);
    fs::copy_file(round_dir + "/NVIDIA/systems/" + sys + ".json", pkg / "systems" / (sys + ".json"), ec);
  }
  if (ec) {
    std::cerr << "referee demo --review: cannot copy the results into " << pkg.string() << ": " << ec.message() << "\n";
    return kCannotCheck;
  }

  Teller t;
  std::cout << "referee demo --review: the review of NVIDIA's round-3.1 RetinaNet at 256 nodes, on the published logs\n\n"
            << "1. The round's store: NVIDIA's RetinaNet results as submitted (the committee's scaling.json left out),\n"
            << "   and two other submitters of the round, Azure and Azure+NVIDIA.\n";
  t.run("", "", {"import", pkg.string(), round_dir + "/Azure", round_dir + "/Azure+NVIDIA", "--round", "3.1.0", "--rules",
                 rules_dir, "--db", db});
  std::cout << "\n2. The review opens: a schedule from a submission deadline two days ago, a chair and one member of\n"
            << "   each submitter, each with a token (shown once, stored as a hash).\n";
  t.run("", "", {"round", "schedule", "3.1.0", "--from-deadline", date_from_now(-2), "--db", db});
  struct Member {
    const char* name;
    const char* org;
    const char* role;
    std::string token;
  };
  std::vector<Member> people = {{"chair", "", "chair", ""}, {"alice", "Azure", "member", ""},
                                {"bob", "NVIDIA", "member", ""}, {"carol", "Azure+NVIDIA", "member", ""}};
  for (auto& m : people) {
    std::vector<std::string> args = {"user", "add", m.name, "--role", m.role, "--db", db};
    if (*m.org) {
      args.push_back("--org");
      args.push_back(m.org);
    }
    t.run("", "", args, false);
    m.token = token_in(t.last);
    std::cout << "    " << m.name << (*m.org ? std::string(" (") + m.org + ")" : std::string(" (review chair)")) << ": "
              << (m.token.empty() ? "no token" : m.token.substr(0, 12) + "...") << "\n";
    if (m.token.empty()) t.failed = true;
  }
  if (t.failed) return kCannotCheck;
  const std::string &chair = people[0].token, &alice = people[1].token, &bob = people[2].token,
                    &carol = people[3].token;

  // The server's audit re-derives RCP margins from the round's rule set.
  ::setenv("REFEREE_RULES", rules_dir.c_str(), 1);
  ServerProcess server;
  std::string error;
  if (!server.start(db, &t.server, &error)) {
    std::cerr << "referee demo --review: " << error << "\n";
    return kCannotCheck;
  }
  std::cout << "\n3. The store is served: referee serve --db " << db << " --listen 127.0.0.1:0 -> " << t.server
            << "\n   Every command below is a client of that server (REFEREE_SERVER and each member's REFEREE_TOKEN).\n";
  t.run("chair", chair, {"review", "assign", "--round", "3.1.0"});

  std::cout << "\n4. Azure reviews NVIDIA: the 256-node RetinaNet result converged in fewer epochs than the reference\n"
            << "   convergence points allow (the RCP check fails).\n";
  t.run("alice", alice, {"leaderboard", "--round", "3.1.0", "--benchmark", "ssd"});
  t.run("alice", alice, {"audit", "NVIDIA", "--round", "3.1.0"});
  t.run("alice", alice, {"audit", "NVIDIA", "--round", "3.1.0", "--json"}, false);
  long long finding = 0;
  {
    auto at = t.last.find("\"kind\":\"check-failure\"");
    auto id_at = at == std::string::npos ? std::string::npos : t.last.rfind("{\"id\":", at);
    if (id_at != std::string::npos) finding = std::atoll(t.last.c_str() + id_at + 6);
  }
  if (finding <= 0) {
    std::cout << "referee demo --review: the audit did not find the failing RCP check\n";
    return kFail;
  }
  t.run("alice", alice,
        {"objection", "file", "--from-finding", std::to_string(finding), "--title",
         "RetinaNet at 256 nodes converges faster than the reference convergence points allow", "--text",
         "The mean epochs to converge of the 256-node runs is below what the RCPs allow at this batch size.", "--json"},
        false);
  long long id = first_id(t.last);
  if (t.failed || id <= 0) return kCannotCheck;
  std::string sid = std::to_string(id);
  t.run("alice", alice, {"objection", "show", sid});

  std::cout << "\n5. NVIDIA responds, asking the committee to normalise the score as the RCP checker would.\n";
  t.run("bob", bob,
        {"objection", "respond", sid, "--text",
         "The runs are compliant; we ask for the score to be normalised by the RCP checker's factor.", "--remedy",
         "normalise", "--factor", "1.07575758"},
        true, 0, 1);
  std::cout << "\n6. The committee votes, one vote per submitting organisation.\n";
  t.run("alice", alice, {"objection", "vote", sid, "--vote", "uphold", "--remedy", "normalise", "--factor", "1.07575758"}, true, 0, 1);
  t.run("bob", bob, {"objection", "vote", sid, "--vote", "uphold", "--remedy", "normalise", "--factor", "1.07575758"}, true, 0, 1);
  t.run("carol", carol, {"objection", "vote", sid, "--vote", "uphold", "--remedy", "normalise", "--factor", "1.07575758"}, true, 0, 1);
  std::cout << "   A member cannot decide; the chair does:\n";
  t.run("bob", bob, {"objection", "decide", sid, "--remedy", "normalise", "--factor", "1.07575758"}, true, 1);
  t.run("chair", chair,
        {"objection", "decide", sid, "--remedy", "normalise", "--factor", "1.07575758", "--text",
         "Normalised by the RCP checker's factor, as published."});

  std::cout << "\n7. Every question now shows the decision: the result is ranked at its normalised score, its failed RCP check accepted.\n";
  t.run("alice", alice, {"leaderboard", "--round", "3.1.0", "--benchmark", "ssd"});
  std::cout << "\n8. The audit trail: every action an event, chained by hash.\n";
  t.run("chair", chair, {"review", "log", "--verify"});
  server.stop();
  std::cout << "\nnext: referee review report --round 3.1.0 --format md --db " << db << "\n";
  return t.failed ? kFail : kPass;
}

}  // namespace referee::cli
