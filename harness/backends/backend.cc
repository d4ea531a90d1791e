#include "harness/backends/backend.h"

#include <string.h>

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
