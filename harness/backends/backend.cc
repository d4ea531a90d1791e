#include "harness/backends/backend.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include "base/text.h"

namespace referee::harness {

const char* to_string(RunState s) {
  switch (s) {
    case RunState::Pending: return "pending";
    case RunState::Running: return "running";
    case RunState::Succeeded: return "succeeded";
    case RunState::Failed: return "failed";
    case RunState::Cancelled: return "cancelled";
    case RunState::TimedOut: return "timed out";
  }
  return "?";
}

std::string signal_name(int signal) {
  if (const char* abbrev = ::sigabbrev_np(signal)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

std::vector<ProcessInfo> running_processes() {
  std::vector<ProcessInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp) || state == "Z" || state == "X") continue;
    out.push_back({std::stoi(pid), stat.substr(open + 1, close - open - 1), pgrp});
  }
  return out;
}

std::string make_run_token(const std::string& run_id) {
  static std::atomic<unsigned> count{0};
  std::random_device rd;
  return run_id + "-" + std::to_string(::getpid()) + "-" + std::to_string(count++) + "-" + std::to_string(rd());
}

std::string run_token_of(const RunRequest& req) {
  auto token = req.env.find(kRunTokenVar);
  return token == req.env.end() ? std::string() : token->second;
}

namespace {

std::vector<ProcessInfo> with_token(const std::string& token, int skip_group) {
  std::vector<ProcessInfo> out;
  const std::string needle = std::string(kRunTokenVar) + "=" + token;
  for (const auto& p : running_processes()) {
    if (p.pid == ::getpid() || (skip_group > 0 && p.pgrp == skip_group)) continue;
    std::ifstream env("/proc/" + std::to_string(p.pid) + "/environ", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\0', at);
      if (end == std::string::npos) end = text.size();
      if (text.compare(at, end - at, needle) == 0) {
        out.push_back(p);
        break;
      }
      at = end + 1;
    }
  }
  return out;
}

std::string listed(const std::vector<ProcessInfo>& found) {
  std::string out;
  for (size_t i = 0; i < found.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::string("pid ") + std::to_string(found[i].pid) + " " + found[i].name;
  if (found.size() > 8) out += ", and " + std::to_string(found.size() - 8) + " more";
  return out;
}

}  // namespace

std::vector<ProcessInfo> processes_with_token(const std::string& token) {
  if (token.empty()) return {};
  return with_token(token, 0);
}

std::string end_processes_with_token(const std::string& token, int skip_group, std::chrono::milliseconds grace,
                                     bool at_once, const std::string& what) {
  if (token.empty()) return "";
  auto found = with_token(token, skip_group);
  if (found.empty()) return "";
  std::string said = std::to_string(found.size()) + (found.size() == 1 ? " process " : " processes ") + what +
                     " (" + listed(found) + ")";
  for (const auto& f : found) ::kill(f.pid, at_once ? SIGKILL : SIGTERM);
  if (at_once) return said + ": killed (SIGKILL)";
  auto until = std::chrono::steady_clock::now() + grace;
  auto left = with_token(token, skip_group);
  while (!left.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = with_token(token, skip_group);
  }
  if (left.empty()) return said + ": ended with SIGTERM";
  for (const auto& f : left) ::kill(f.pid, SIGKILL);
  return said + ": sent SIGTERM, and SIGKILL to " + listed(left) + " still running " + std::to_string(grace.count()) +
         " ms later";
}

void OutputLines::send(std::string_view line, size_t cut) {
  if (!sink_) return;
  std::string text(line);
  if (cut > 0)
    text.append(" [referee: this line is longer than ")
        .append(std::to_string(base::kMaxLineBytes))
        .append(" bytes; ")
        .append(std::to_string(cut))
        .append(" more bytes of it were not kept]");
  sink_(id_, text);
}

void OutputLines::feed(std::string_view bytes) {
  split_.feed(bytes, [this](std::string_view line, size_t cut) { send(line, cut); });
}

void OutputLines::finish() {
  split_.finish([this](std::string_view line, size_t cut) { send(line, cut); });
}

std::string cache_clear_lines(const RunRequest& req, const std::vector<std::string>& launcher,
                              const std::string& on_failure) {
  if (req.cache_clear.empty()) return "";
  std::vector<std::string> words = launcher;
  words.insert(words.end(), req.cache_clear.begin(), req.cache_clear.end());
  std::string quoted;
  for (const auto& w : words) quoted.append(quoted.empty() ? "" : " ").append(base::shell_quote(w));
  // The event as the consortium's mllog writes it; the time in ms where date
  // has %N (GNU), else whole seconds.
  std::string s;
  s.append("# cache_clear: ").append(base::shell_words(req.cache_clear)).append("\n");
  s.append(quoted).append(" </dev/null\n");
  s.append("cache_clear_status=$?\n");
  s.append("if [ \"$cache_clear_status\" -ne 0 ]; then\n");
  s.append("  echo \"referee: the cache_clear hook ended with exit $cache_clear_status; the run's command was not started\" >&2\n");
  s.append("  ").append(on_failure).append("\n");
  s.append("fi\n");
  s.append("cache_clear_ms=$(date +%s%3N 2>/dev/null)\n");
  s.append("case \"$cache_clear_ms\" in ''|*[!0-9]*) cache_clear_ms=$(($(date +%s) * 1000)) ;; esac\n");
  s.append("printf ':::MLLOG {\"namespace\": \"\", \"time_ms\": %s, \"event_type\": \"POINT_IN_TIME\", "
           "\"key\": \"cache_clear\", \"value\": true, \"metadata\": {\"file\": \"referee\", \"lineno\": 0}}\\n' "
           "\"$cache_clear_ms\"");
  if (req.log_is_file && !req.log_path.empty()) s.append(" >>").append(base::shell_quote(req.log_path));
  s.append("\n");
  return s;
}

std::vector<std::unique_ptr<RunHandle>> Backend::launch_group(const std::vector<RunRequest>& reqs,
                                                              const std::vector<LineSink>& sinks, std::string* error) {
  std::vector<std::unique_ptr<RunHandle>> out;
  if (reqs.size() != 1 || sinks.size() != 1) {
    *error = std::string("the ") + name() + " backend starts one run at a time";
    return out;
  }
  if (auto h = launch(reqs[0], sinks[0], error)) out.push_back(std::move(h));
  return out;
}

}  // namespace referee::harness
