// The review's audit trail: every action is one row of `events`, appended in
// the same transaction as the change it records, and chained by hash: each
// event's hash covers the previous event's hash and its own fields, so a
// changed, removed or reordered event breaks the chain from there on. The
// store's triggers refuse UPDATE and DELETE on the table; verify_events()
// finds tampering done around them (a copy edited with another tool).
#pragma once

#include <string>
#include <vector>

#include "review/actor.h"
#include "submissions/import.h"
#include "submissions/store.h"

namespace referee::review {

struct Event {
  long long seq = 0;
  std::string at, actor, organisation, role, action, subject, payload_json, prev_hash, hash;
};

// The current time, UTC, ISO-8601 with milliseconds: 2026-11-30T16:23:32.123Z.
std::string now_utc();

// The hash of an event from its fields and prev_hash (hex SHA-256).
std::string event_hash(const Event& e);

// Appends one event inside the caller's transaction (the caller has called
// Store::begin). `payload_json` must be a JSON object. Post: true with
// *seq (when not null) the new event's number; else false with *error.
bool append_event(submissions::Store& s, const Actor& who, const std::string& action, const std::string& subject,
                  const std::string& payload_json, std::string* error, long long* seq = nullptr);

// Events in order; `subject_prefix` "" = all, else those whose subject starts with it.
std::vector<Event> read_events(submissions::Store& s, const std::string& subject_prefix, std::string* error);

// Records a package added to (`package.import`) or replaced in
// (`package.replace`) a round under review, as the local administrator, on
// `round/<name>`, with the organisation, both content hashes and the results
// that changed. Inside the import's transaction (ImportOptions::record_change).
// The digest of a package's rows (submissions::package_rows_sha256) as the
// latest package.import or package.replace of that round and organisation
// recorded it; "" when none did.
std::string recorded_package_rows(submissions::Store& s, const std::string& round, const std::string& organisation);

bool record_package_change(submissions::Store& s, const submissions::PackageChange& c, std::string* error);

// The store's upgrade to schema 9 (submissions::Store::set_upgrade_hook):
// one event `package.adopt` on subject `store` that lists every package the
// store holds then (round, organisation, the digest of its rows), so that
// from then on a package with neither that nor an import event was added in
// the store, not imported (review log --verify names it).
bool adopt_packages(submissions::Store& s, int from_version, std::string* error);

struct ChainCheck {
  bool ok = true;
  long long events = 0;
  long long first_bad = 0;  // seq of the first event that does not verify
  std::string problem;      // what is wrong with it
};

// Recomputes every hash and link. Pre: none. Post: the check's result; a
// statement that fails sets *error and returns ok = false.
ChainCheck verify_events(submissions::Store& s, std::string* error);

}  // namespace referee::review
