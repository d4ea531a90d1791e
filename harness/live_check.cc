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

std::optional<rules::Finding> second_run_start(const mllog::ParsedLog& log) {
  int key = log.find_key("run_start");
  if (key < 0) return std::nullopt;
  const mllog::Event* first = nullptr;
  for (const auto& e : log.events) {
    if (e.key_id != static_cast<uint32_t>(key)) continue;
    if (!first) {
      first = &e;
      continue;
    }
    rules::Finding f;
    f.line = e.file_line;
    f.key = "run_start";
    f.rule = "harness: second run_start";
    f.message = "a second run_start: the run started again inside its log, and time to train would count from "
                "the last run_start (the consortium only warns)";
    f.expected = "one run_start per log";
    f.found = "run_start at lines " + std::to_string(first->file_line) + " and " + std::to_string(e.file_line);
    f.hint = "give each attempt its own log (a new run); a relaunched run cannot be a result";
    f.log_text = std::string(e.json.substr(0, 300));
    return f;
  }
  return std::nullopt;
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
  if (auto f = second_run_start(log)) {
    reported_ = true;
    return f;
  }
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
