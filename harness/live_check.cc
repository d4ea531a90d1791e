#include "harness/live_check.h"

namespace referee::harness {

bool is_irreparable(const rules::Finding& f) {
  const std::string& r = f.rule;
  auto ends_with = [&](std::string_view s) { return r.size() >= s.size() && r.compare(r.size() - s.size(), s.size(), s) == 0; };
  if (r == "parse" && f.message != "No log lines detected") return true;
  if (r == "enqueue_config") return true;
  if (ends_with(" CHECK") && r.find("ATLEAST_ONE_CHECK") == std::string::npos && r.find("END CHECK") == std::string::npos)
    return true;
  if (ends_with(" FIRST_CHECK")) return true;
  if (ends_with("REQ EXACTLY_ONE") && f.found.find("different values") != std::string::npos) return true;
  return false;
}

LiveChecker::LiveChecker(const rules::RuleSet& rules, std::chrono::milliseconds min_interval)
    : rules_(rules), min_interval_(min_interval) {}

std::optional<rules::Finding> LiveChecker::add_line(std::string_view line) {
  text_.append(line);
  text_.push_back('\n');
  size_t tok = line.rfind(mllog::kToken);
  if (tok == std::string_view::npos) return std::nullopt;
  ++mllog_lines_;
  std::string_view json = line.substr(tok + mllog::kToken.size());
  if (json.find("\"eval_accuracy\"") != std::string_view::npos) {
    auto v = json.find("\"value\"");
    if (v != std::string_view::npos) {
      auto colon = json.find(':', v);
      auto end = json.find_first_of(",}", colon);
      if (colon != std::string_view::npos && end != std::string_view::npos) {
        std::string_view val = json.substr(colon + 1, end - colon - 1);
        while (!val.empty() && val.front() == ' ') val.remove_prefix(1);
        last_eval_ = std::string(val);
      }
    }
  }
  if (reported_) return std::nullopt;
  auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < min_interval_) return std::nullopt;
  return check_now();
}

std::optional<rules::Finding> LiveChecker::check_now() {
  last_check_ = std::chrono::steady_clock::now();
  if (reported_ || mllog_lines_ == checked_lines_) return std::nullopt;
  checked_lines_ = mllog_lines_;
  ++checks_;
  mllog::ParsedLog log;
  reader_.parse(text_, &log);
  rules::FileVerdict v = rules::check_log(rules_, log);
  for (const auto& f : v.errors) {
    if (is_irreparable(f)) {
      reported_ = true;
      return f;
    }
  }
  return std::nullopt;
}

rules::FileVerdict LiveChecker::final_verdict() {
  mllog::ParsedLog log;
  reader_.parse(text_, &log);
  return rules::check_log(rules_, log);
}

}  // namespace referee::harness
