// The assets compiled into the binary are the files they come from, byte for
// byte, and the licence texts of the bundled libraries travel with them.
#include "reports/assets.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace referee::reports {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string web(const std::string& rel) { return std::string(REFEREE_SOURCE_DIR) + "/reports/web/" + rel; }

}  // namespace

TEST_SUITE("reports") {
  TEST_CASE("the assets are the files of reports/web and its npm packages, byte for byte, in the documented order") {
    const auto& all = assets();
    REQUIRE(all.size() == 6);
    const char* paths[] = {"assets/vega.min.js", "assets/vega-lite.min.js", "assets/vega-embed.min.js",
                           "assets/referee.js",  "assets/referee.css",      "assets/LICENSES.txt"};
    const std::string sources[] = {web("node_modules/vega/build/vega.min.js"),
                                   web("node_modules/vega-lite/build/vega-lite.min.js"),
                                   web("node_modules/vega-embed/build/vega-embed.min.js"), web("referee.js"),
                                   web("referee.css")};
    for (std::size_t i = 0; i < all.size(); ++i) {
      CAPTURE(i);
      CHECK(all[i].path == paths[i]);
      if (i < 5) {
        const std::string want = slurp(sources[i]);
        REQUIRE(!want.empty());
        CHECK(all[i].bytes.size() == want.size());
        CHECK(all[i].bytes == want);
      }
    }
    CHECK(all[0].content_type == "text/javascript; charset=utf-8");
    CHECK(all[3].content_type == "text/javascript; charset=utf-8");
    CHECK(all[4].content_type == "text/css; charset=utf-8");
    CHECK(all[5].content_type == "text/plain; charset=utf-8");
    // The libraries define what the page script calls.
    CHECK(all[0].bytes.find("vega") != std::string_view::npos);
    CHECK(all[2].bytes.find("vegaEmbed") != std::string_view::npos);
  }

  TEST_CASE("LICENSES.txt carries each bundled library's licence text, with its name and version") {
    const std::string_view text = assets().back().bytes;
    for (const char* pkg : {"vega", "vega-lite", "vega-embed"}) {
      CAPTURE(pkg);
      const std::string license = slurp(web(std::string("node_modules/") + pkg + "/LICENSE"));
      REQUIRE(!license.empty());
      CHECK(text.find(license) != std::string_view::npos);
      const std::string manifest = slurp(web(std::string("node_modules/") + pkg + "/package.json"));
      const auto at = manifest.find("\"version\"");
      REQUIRE(at != std::string::npos);
      const auto q1 = manifest.find('"', manifest.find(':', at) + 1);
      const auto q2 = manifest.find('"', q1 + 1);
      const std::string version = manifest.substr(q1 + 1, q2 - q1 - 1);
      CHECK(text.find(std::string(pkg) + " " + version + " (npm package " + pkg + ")") != std::string_view::npos);
    }
  }
}

}  // namespace referee::reports
