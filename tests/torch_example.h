// What the PyTorch example's tests need (harness/workloads/torch_example_test.cc, and the
// slurm suite's case): python3-torch, the reference data (the consortium's mllog
// and package checker), and the check of a package by both package checkers.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/reference_data.h"
#include "tests/run_referee.h"

namespace referee::testing {

// True when /usr/bin/python3 has torch and the consortium's tools can be
// imported from the reference data. When not: under CI a failure, elsewhere
// a skip that says why.
inline bool have_torch_example() {
  if (!have_reference_data()) return false;
  std::string out;
  int rc = run_shell_capture("PYTHONPATH='" + reference_dir() +
                                 "/mlperf/logging' /usr/bin/python3 -c 'import torch, numpy, scipy, pandas, yaml; "
                                 "from mlperf_logging import mllog; from mlperf_logging.package_checker import package_checker'",
                             &out);
  if (rc == 0) return true;
  const std::string reason = "/usr/bin/python3 cannot import torch or the consortium's mlperf_logging (Debian: python3-torch "
                             "python3-numpy python3-scipy python3-pandas python3-yaml): " + out;
  if (std::getenv("CI")) {
    FAIL(reason << "; CI must have them, so this fails");
  } else {
    MESSAGE("SKIPPED: " << reason);
    skip_log().current = true;
    skip_log().reason = reason;
  }
  return false;
}

// referee's check-package and the consortium's package checker both pass the package.
inline void check_torch_package(const std::filesystem::path& pkg) {
  std::string out;
  int rc = run_referee("check-package '" + pkg.string() + "' --ruleset mini-1.0.0", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("verdict: PASS") != std::string::npos, out);
  rc = run_shell_capture("/usr/bin/python3 '" + std::string(REFEREE_SOURCE_DIR) +
                             "/tests/oracle/ruleset_package_checker.py' '" + pkg.string() + "'",
                         &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("PASS: the consortium's package checker (usage mini, ruleset 1.0.0) found no errors") !=
                    std::string::npos,
                out);
  CHECK_MESSAGE(out.find("RCP Test Passed") != std::string::npos, out);
  CHECK_MESSAGE(out.find("Running Seed Checker") != std::string::npos, out);
}

}  // namespace referee::testing
