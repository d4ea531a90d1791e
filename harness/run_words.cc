#include "harness/run_words.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace referee::harness {

std::string state_word(const RunReport& r) {
  if (!r.launched && (r.status.state == RunState::Pending || r.status.state == RunState::Running)) return "not started";
  if (r.aborted) return "stopped";
  return to_string(r.status.state);
}

std::string verdict_word(const RunReport& r) {
  if (!r.launched) return "not started";
  if (r.aborted) return "not compliant";
  if (!r.checked) return "not checked";
  if (!r.log_complete && r.status.state != RunState::Succeeded) return "incomplete";
  return r.verdict.compliant ? "compliant" : "not compliant";
}

std::string eval_text(const std::string& logged) {
  if (logged.empty()) return "-";
  char* end = nullptr;
  double v = std::strtod(logged.c_str(), &end);
  if (end == logged.c_str() || *end != '\0' || !std::isfinite(v)) return logged;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

namespace {

constexpr const char* kRowFormat = "    %-16s %-10s %5s %-12s %-13s %-8s %9s  ";

std::string cut(std::string row, size_t width) {
  if (width && row.size() > width) row.resize(width);
  while (!row.empty() && row.back() == ' ') row.pop_back();
  return row;
}

}  // namespace

std::string progress_header(size_t width) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kRowFormat, "run", "state", "done", "left", "time to train", "eval", "wall");
  return cut(std::string(buf) + "progress", width);
}

std::string progress_row(const RunProgress& r, const ProgressModel& m, size_t width) {
  const Progress& p = r.progress;
  bool going = r.state == "running";
  char pct[16] = "-";
  if (p.has_fraction) std::snprintf(pct, sizeof pct, "%.0f%%", p.fraction * 100);
  std::string left = "-";
  if (going && p.has_eta && !p.stopped) left = std::string(1, '~').append(format_duration(p.eta_s));
  std::string ttt = p.has_time_to_train ? format_duration(p.time_to_train_s) : "-";
  char eval[32] = "-";
  if (p.has_eval) std::snprintf(eval, sizeof eval, "%.4f", p.eval);
  std::string wall = format_duration(r.wall_s);
  char buf[512];
  std::snprintf(buf, sizeof buf, kRowFormat, r.id.c_str(), r.state.c_str(), pct, left.c_str(), ttt.c_str(), eval,
                wall.c_str());
  return cut(std::string(buf) + (r.state == "waiting" ? "" : progress_text(p, m)), width);
}

}  // namespace referee::harness
