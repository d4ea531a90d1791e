// Times as referee writes them: UTC, in one of a few fixed forms. Stored
// values (the store's imported_at, the audit chain's event times, manifests)
// depend on these forms byte for byte.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace referee::base {

enum class UtcFormat {
  Seconds,  // ISO 8601 to the second: "2024-05-01T12:34:56Z"
  Millis,   // ISO 8601 to the millisecond: "2024-05-01T12:34:56.789Z" (the audit chain's events)
  Compact,  // ISO 8601 basic, for names of folders: "20240501T123456Z"
  Date,     // the day: "2024-05-01"
};

// `t` in UTC in the form `f` (milliseconds are truncated, not rounded).
std::string utc_string(std::chrono::system_clock::time_point t, UtcFormat f = UtcFormat::Seconds);
std::string utc_string(std::time_t t, UtcFormat f = UtcFormat::Seconds);

// The current time: utc_string(system_clock::now(), f).
std::string utc_now(UtcFormat f = UtcFormat::Seconds);

// Reads a time written in the form Seconds or Millis (milliseconds
// dropped), or Date (its first second). False for any other text.
bool parse_utc(const std::string& text, std::time_t* out);

}  // namespace referee::base
