// The review store of tests/review_store.h as a doctest fixture. Used
// in-process by the review suite and behind `referee serve` by the
// review_e2e suite.
#pragma once

#include <doctest/doctest.h>
#include <string>

#include "mllog/json.h"
#include "tests/review_store.h"
#include "tests/temp_dir.h"

namespace referee::testing::review_fixture {

using referee::mllog::Json;
using referee::testing::TempDir;

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline Json parse(const std::string& body) {
  Json j;
  std::string err;
  REQUIRE_MESSAGE(referee::mllog::parse_json_permissive(body, &j, &err), body);
  return j;
}

// The review store of tests/review_store.h in a temporary folder, with what
// the tests ask of it besides.
struct ReviewDir {
  TempDir dir{"referee-review-"};
};
struct Review : ReviewDir, ReviewStore {
  Review() : ReviewStore(dir.path) {}

  // Google objects to NVIDIA's RetinaNet (the RCP failure); returns its id.
  long long file_rcp(const std::string& extra = "") {
    Response r = call("goog", "POST", "/api/v1/objections",
                      R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"RCP check fails",)"
                      R"("rule":"training_3.1.0/rcps: retinanet","text":"converges faster than the reference")" +
                          extra + "}");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    return parse(r.body).find("objection")->find("id")->i;
  }
};

}  // namespace referee::testing::review_fixture
