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

std::string make_run_token(const std::string& run_id) {
  static std::atomic<unsigned> count{0};
  std::random_device rd;
  return run_id + "-" + std::to_string(::getpid()) + "-" + std::to_string(count++) + "-" + std::to_string(rd());
}

namespace {

struct Found {
  pid_t pid;
  std::string name;
};

std::vector<Found> with_token(const std::string& token, int skip_group) {
  std::vector<Found> out;
  const std::string needle = std::string(kRunTokenVar) + "=" + token;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t p = static_cast<pid_t>(std::stol(pid));
    if (p == ::getpid()) continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    bool has = false;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\0', at);
      if (end == std::string::npos) end = text.size();
      if (text.compare(at, end - at, needle) == 0) has = true;
      at = end + 1;
    }
    if (!has) continue;
    std::ifstream st(e.path() / "stat");
    std::string stat;
    std::getline(st, stat);
    size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp)) continue;
    if (state == "Z" || state == "X" || (skip_group > 0 && pgrp == skip_group)) continue;
    out.push_back({p, stat.substr(open + 1, close - open - 1)});
  }
  return out;
}

std::string listed(const std::vector<Found>& found) {
  std::string out;
  for (size_t i = 0; i < found.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::string("pid ") + std::to_string(found[i].pid) + " " + found[i].name;
  if (found.size() > 8) out += ", and " + std::to_string(found.size() - 8) + " more";
  return out;
}

}  // namespace

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

}  // namespace referee::harness
