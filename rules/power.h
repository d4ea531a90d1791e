// Power results: the consortium's power checker (package checker) and energy
// to train (result summarizer), for a benchmark directory's power/ folder:
//
//   <benchmark>/power/result_<n>/node_<k>.txt   power readings of node k during run n
//   <benchmark>/power/result_<n>/sw_<k>.txt     estimated power of interconnect switch k
//
// Node logs are MLLOG lines: power_measurement_start, power_reading (watts,
// one per time_ms), power_measurement_stop and an optional conversion_eff.
// Switch logs hold interconnect_power_est (watts) and an optional
// conversion_eff. The consortium's code stops with a traceback on several
// inputs; here each becomes a finding that says so.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "rules/compliance.h"

namespace referee::rules {

struct PowerCheck {
  bool present = false;               // the benchmark directory has a "power" entry
  std::set<std::string> failing;      // result names ("result_0") the checker counts as non-complying
  std::vector<Finding> errors;        // why each of them fails
  std::vector<Finding> warnings;      // stray files in a run's power folder
  std::string consortium_stops;       // non-empty: the consortium's package checker raises here (what)
};

// The package checker's power pass over `bench_dir`/power for the result
// files `result_files` (file names, sorted as the checker sorts them).
PowerCheck check_power(const std::string& bench_dir, const std::vector<std::string>& result_files);

struct RunEnergy {
  bool ok = false;
  double joules = 0;                  // the summarizer's figure (watts x seconds)
  int nodes = 0, switches = 0;        // log files read
  std::string error;                  // why there is no figure (the summarizer raises there)
  std::vector<std::string> warnings;  // "power_measurement_stop missing in ..."
};

// The summarizer's _compute_total_power for one run: the sum over node logs of
// conversion_eff x sum(reading x interval) x time_to_train / measured window,
// plus over switch logs conversion_eff x estimate x time_to_train, in joules.
RunEnergy run_energy(const std::string& bench_dir, const std::string& result_file, double time_to_train_ms);

// The summarizer's test for a power result: a sub-folder named "power".
bool has_power_folder(const std::string& bench_dir);

}  // namespace referee::rules
