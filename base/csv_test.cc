#include "base/csv.h"

#include <doctest/doctest.h>

using referee::base::CsvRecord;
using referee::base::parse_csv;

TEST_SUITE("base") {
  TEST_CASE("csv: fields, quotes, line ends, the line each record starts on, and malformed input") {
    std::vector<CsvRecord> r;
    std::string error;
    REQUIRE(parse_csv("\xEF\xBB\xBFname,organisation\r\nalice,\"NVIDIA, Inc.\"\n\nbob,\"say \"\"hi\"\"\nthere\",\n", &r, &error));
    REQUIRE(r.size() == 3);
    CHECK(r[0].line == 1);
    CHECK(r[0].fields == std::vector<std::string>{"name", "organisation"});
    CHECK(r[1].line == 2);
    CHECK(r[1].fields == std::vector<std::string>{"alice", "NVIDIA, Inc."});
    CHECK(r[2].line == 4);  // the empty line 3 is no record
    CHECK(r[2].fields == std::vector<std::string>{"bob", "say \"hi\"\nthere", ""});
    REQUIRE(parse_csv("a,b", &r, &error));  // no line end at the end
    CHECK(r.size() == 1);
    CHECK_FALSE(parse_csv("a,\"b\nc", &r, &error));
    CHECK(error == "line 1: a quoted field is not closed");
    CHECK_FALSE(parse_csv("x\n\"a\"b,c\n", &r, &error));
    CHECK(error.rfind("line 2: text after a closing quote", 0) == 0);
    REQUIRE(parse_csv("", &r, &error));
    CHECK(r.empty());
  }
}
