// referee demo --review (cli/demo_review.cc).
#pragma once

#include <string>

namespace referee::cli {

struct ReviewDemoOptions {
  std::string out = "referee-demo";  // the store and the package copy go here
  std::string reference;             // folder with mlperf/training_results_v3.1 and mlperf/logging
};

// Returns the exit code.
int run_review_demo(const ReviewDemoOptions& o);

}  // namespace referee::cli
