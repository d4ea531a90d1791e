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

// True when the reference data is there. When it is not: under CI this is a
// test failure; elsewhere the test says plainly that it skips.
inline bool have_reference_data() {
  if (std::filesystem::exists(reference_dir() + "/mlperf/expected")) return true;
  if (std::getenv("CI")) {
    FAIL("reference data not found at " << reference_dir()
                                        << " (set REFEREE_REFERENCE_DATA); CI must have it, so this fails");
  } else {
    MESSAGE("SKIPPED: reference data not found at " << reference_dir() << " (set REFEREE_REFERENCE_DATA)");
  }
  return false;
}

}  // namespace referee::testing
