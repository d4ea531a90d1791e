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

  TEST_CASE("a chair of a party neither gives its side more time nor closes the round over its open case") {
    Review f;
    f.add_user("nvchair", "NVIDIA", "chair");
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    f.set_deadline("responses_due", "2020-01-01");
    // NVIDIA's chair, NVIDIA accused: no late response on its own override.
    Response late = f.call("nvchair", "POST", path + "/responses", R"({"text":"late","override":"granted"})");
    CHECK(late.status == 403);
    CHECK(has(late.body, "a chair whose organisation (NVIDIA) is a party to this objection does not override its deadlines"));
    CHECK(f.count("responses") == 0);
    // Nor final or published over the open objection against NVIDIA; a neutral chair may, with a reason.
    Response close = f.call("nvchair", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"x"})");
    CHECK(close.status == 403);
    CHECK(has(close.body, "is a party to open objections #" + std::to_string(id)));
    Response neutral = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"x"})");
    CHECK(neutral.status == 200);
  }
}

}  // namespace referee::testing
