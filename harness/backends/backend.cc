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

}  // namespace referee::harness
