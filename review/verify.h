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

// The digests events keep of what the tables hold, so that --verify finds a
// text or evidence row edited after it was written. SHA-256 (hex) of an
// evidence row's content (kind, finding, run and lines, what was quoted, the
// figure, its impact, the note) read from the store; "" when there is no such row.
std::string evidence_row_digest(submissions::Store& s, long long evidence_id);
// SHA-256 (hex) of a text as stored (an objection's, a response's, a decision's).
std::string text_digest(const std::string& text);

// The SHA-256 of what a stored finding says (round, organisation, kind, rule,
// summary, evidence, impact, fingerprint; not its result link, which a
// replaced package moves): the audit.run event that adds or changes it keeps
// it, and --verify compares. "" when there is no such finding.
std::string finding_row_digest(submissions::Store& s, long long finding_id);
// Of a token's stored hash (the token.create and user.add events keep it, so
// that a token row added or changed outside the review is found).
std::string token_digest(const std::string& stored_hash);

struct LogHead {
  long long seq = 0;  // 0: no events
  std::string hash;
};
LogHead log_head(submissions::Store& s, std::string* error);

// What a member is given for an event's hash: the SHA-256 of it (with a
// label), never the chain's hash itself. The chain's hash covers the event's
// global sequence number, which counts every round's events: from two chain
// hashes in a row (one the next's prev_hash) a member could try numbers until
// one fits and learn how many events their hidden rounds hold. The member's
// hash is as good a head to record and check, and gives that away to no one.
std::string member_hash(const std::string& chain_hash);

// The fewest hex digits of an event's hash a recorded head may give: 64 bits,
// which no one forges by trying hashes (8 digits, 32 bits, could be).
inline constexpr size_t kMinHeadDigits = 16;

// `anchor` is "SEQ:HASH" or "HASH" (a head printed by an earlier verify).
// Post: "" when the log still has that event with that hash; else why not
// (a malformed anchor included).
std::string check_anchor(submissions::Store& s, const std::string& anchor, std::string* error);

}  // namespace referee::review
