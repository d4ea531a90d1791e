// docs/openapi.yaml documents every route the server serves (its route
// table: its own routes and the review API's), and no route that it does
// not.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "server/routes.h"

namespace referee::server {

TEST_SUITE("serve") {
  TEST_CASE("docs/openapi.yaml documents every route of the route table with its method") {
    YAML::Node doc = YAML::LoadFile(std::string(REFEREE_SOURCE_DIR) + "/docs/openapi.yaml");
    REQUIRE(doc["openapi"]);
    REQUIRE(doc["paths"].IsMap());
    std::set<std::string> documented;  // "POST /api/v1/objections"
    for (const auto& p : doc["paths"]) {
      std::string path = p.first.as<std::string>();
      for (const auto& m : p.second) {
        std::string method = m.first.as<std::string>();
        if (method == "parameters" || method == "summary" || method == "description") continue;
        std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return std::toupper(c); });
        documented.insert(method + " " + path);
      }
    }
    std::set<std::string> served;
    size_t review = 0;
    for (const auto& r : routes()) {
      served.insert(r.method + " " + r.pattern);
      review += !r.handler;  // served by review::Api::handle
    }
    REQUIRE(review > 20);
    for (const auto& s : served) CHECK_MESSAGE(documented.count(s) == 1, s << " is served but not in docs/openapi.yaml");
    for (const auto& d : documented) CHECK_MESSAGE(served.count(d) == 1, d << " is documented but not served");
  }

  TEST_CASE("the route table: anonymous routes are only the health, the description, the sign-in, its style and the home") {
    std::set<std::string> anyone;
    for (const auto& r : routes())
      if (r.access == Access::Anyone) anyone.insert(r.method + " " + r.pattern);
    CHECK(anyone == std::set<std::string>{"GET /api/v1/health", "GET /api/v1/openapi.yaml", "GET /reports",
                                          "GET /reports/login", "POST /reports/login", "GET /reports/logout",
                                          "POST /reports/logout", "GET /reports/assets/referee.css"});
    CHECK(allowed_methods("/reports/login") == "GET, HEAD, POST");
    CHECK(allowed_methods("/reports/rounds/x/index.html") == "GET, HEAD");
    CHECK(allowed_methods("/api/v1/health") == "GET");
  }
}

}  // namespace referee::server
