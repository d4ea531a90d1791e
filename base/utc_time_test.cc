#include "base/utc_time.h"

#include <doctest/doctest.h>

#include <regex>

namespace referee::base {

TEST_SUITE("base") {
  TEST_CASE("UTC forms of one moment") {
    std::time_t t = 1714566896;  // 2024-05-01 12:34:56 UTC
    CHECK(utc_string(t) == "2024-05-01T12:34:56Z");
    CHECK(utc_string(t, UtcFormat::Compact) == "20240501T123456Z");
    CHECK(utc_string(t, UtcFormat::Date) == "2024-05-01");
    auto tp = std::chrono::system_clock::from_time_t(t) + std::chrono::milliseconds(789);
    CHECK(utc_string(tp, UtcFormat::Millis) == "2024-05-01T12:34:56.789Z");
    CHECK(utc_string(tp) == "2024-05-01T12:34:56Z");  // truncated, not rounded
    CHECK(utc_string(std::time_t{0}, UtcFormat::Millis) == "1970-01-01T00:00:00.000Z");
  }

  TEST_CASE("parse_utc reads the forms it writes, and nothing else") {
    std::time_t t = 0;
    REQUIRE(parse_utc("2024-05-01T12:34:56Z", &t));
    CHECK(t == 1714566896);
    REQUIRE(parse_utc("2024-05-01T12:34:56.789Z", &t));
    CHECK(t == 1714566896);
    REQUIRE(parse_utc("2024-05-01", &t));
    CHECK(t == 1714566896 - (12 * 3600 + 34 * 60 + 56));
    for (const char* bad : {"", "2024-05-01T12:34:56", "2024-05-01T12:34:56+01:00", "2024-13-01", "2024-05-01T25:00:00Z",
                            "2024-05-01T12:34:56.Z", "2024-05-01T12:34:56Zx", "yesterday", "2024-5-1"}) {
      INFO(bad);
      CHECK_FALSE(parse_utc(bad, &t));
    }
  }

  TEST_CASE("now, in each form") {
    CHECK(std::regex_match(utc_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
    CHECK(std::regex_match(utc_now(UtcFormat::Millis), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
    CHECK(std::regex_match(utc_now(UtcFormat::Compact), std::regex(R"(\d{8}T\d{6}Z)")));
    CHECK(std::regex_match(utc_now(UtcFormat::Date), std::regex(R"(\d{4}-\d\d-\d\d)")));
  }
}

}  // namespace referee::base
