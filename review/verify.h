// What the hash chain alone cannot see. The chain (verify_events) proves the
// events were not edited, but the review's tables (decisions, result_status,
// votes, objections) are what every question reads, and a copy edited around
// the triggers can change them without touching an event; and a chain whose
// tail was deleted still links. So: the tables are cross-checked against the
// events that produced them, and a head (seq and hash) recorded elsewhere can
// be checked against the chain. A store's owner can rewrite anything, events
// included; only an anchor kept outside the store detects that.
#pragma once

#include <string>

#include "submissions/store.h"

namespace referee::review {

struct TableCheck {
  bool ok = true;
  std::string problem;  // the first disagreement: table, row, what differs
};

// Every decision against its decision.record event (outcome, remedy, factor),
// every result_status row set by a decision against that decision, every vote
// against the latest vote.cast of its organisation, every objection's state
// against its events. Post: ok, or the first disagreement; a statement that
// fails sets *error.
TableCheck verify_tables(submissions::Store& s, std::string* error);

struct LogHead {
  long long seq = 0;  // 0: no events
  std::string hash;
};
LogHead log_head(submissions::Store& s, std::string* error);

// `anchor` is "SEQ:HASH" or "HASH" (a head printed by an earlier verify).
// Post: "" when the log still has that event with that hash; else why not
// (a malformed anchor included).
std::string check_anchor(submissions::Store& s, const std::string& anchor, std::string* error);

}  // namespace referee::review
