#include "harness/backend.h"

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

}  // namespace referee::harness
