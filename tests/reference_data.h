// Locating the reference data (published MLPerf results, the consortium's
// rule files and its tools' verdicts) that some tests compare against.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace referee::testing {

// $REFEREE_REFERENCE_DATA, else ../shared beside the repository.
inline std::string reference_dir() {
  if (const char* d = std::getenv("REFEREE_REFERENCE_DATA"); d && *d) return d;
  return std::string(REFEREE_SOURCE_DIR) + "/../shared";
}

inline std::string reference_rules() { return reference_dir() + "/mlperf/logging/mlperf_logging"; }

// True in the sanitizer build (scripts/test.sh, build-asan/). There a test
// that walks every reference log takes a sample, and a comparison whose time
// goes to the consortium's Python tools compares with the figures recorded
// from them: the release build's run of the same test does both in full.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// Exit status of referee_tests when every test case it ran skipped for want
// of the reference data (tests/suites.cmake gives it to CTest as
// SKIP_RETURN_CODE, so the summary says "Skipped" instead of "Passed").
inline constexpr int kSkipExitCode = 77;

// Test cases of this run that skipped, and why (read by tests/test_main.cc).
struct SkipLog {
  bool current = false;  // the running test case skipped
  int cases = 0;         // test cases that skipped
  std::string reason;
};
inline SkipLog& skip_log() {
  static SkipLog log;
  return log;
}

// True when the reference data is there. When it is not: under CI this is a
// test failure; elsewhere the test says plainly that it skips.
inline bool have_reference_data() {
  if (std::filesystem::exists(reference_dir() + "/mlperf/expected")) return true;
  const std::string reason = "reference data not found at " + reference_dir() + " (set REFEREE_REFERENCE_DATA)";
  if (std::getenv("CI")) {
    FAIL(reason << "; CI must have it, so this fails");
  } else {
    MESSAGE("SKIPPED: " << reason);
    skip_log().current = true;
    skip_log().reason = reason;
  }
  return false;
}

}  // namespace referee::testing
