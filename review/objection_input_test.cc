// What an objection refuses or shows for input at the edges: names given
// twice, figures that would give no finite percentage.
#include <doctest/doctest.h>

#include "tests/review_fixture.h"

namespace referee::testing {
namespace {
using namespace review_fixture;
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_SUITE("review") {
  TEST_CASE("an objection naming a result or a run twice is refused, naming which") {
    Review f;
    Response twice = f.call("goog", "POST", "/api/v1/objections",
                            R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet","NVIDIA/eos/retinanet"],)"
                            R"("title":"t","rule":"r"})");
    CHECK(twice.status == 400);
    CHECK(has(twice.body, "results: NVIDIA/eos/retinanet is named twice"));
    Response runs = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"t","rule":"r",)"
                           R"("drop_runs":["result_0.txt","result_0.txt"]})");
    CHECK(runs.status == 400);
    CHECK(has(runs.body, "drop_runs: result_0.txt is named twice"));
    CHECK(f.count("objections") == 0);
  }

  TEST_CASE("a figure near the largest double gives a null change, never Infinity, in every listing") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    Response add = f.call("nv", "POST", path + "/evidence",
                          R"({"evidence":[{"figure":"f","value":1e308,"impact_minutes":1e308}]})");
    REQUIRE_MESSAGE(add.status == 201, add.body);
    for (const std::string& p : {path, std::string("/api/v1/objections?round=3.1.0")}) {
      Response r = f.call("goog", "GET", p, "");
      CHECK(r.status == 200);
      CHECK_FALSE(has(r.body, "Infinity"));
      CHECK_FALSE(has(r.body, "NaN"));
    }
    CHECK(has(f.call("goog", "GET", path, "").body, "\"change_percent\":null"));
  }
}

}  // namespace referee::testing
