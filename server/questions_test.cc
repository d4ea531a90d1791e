// The question routes' parameters: the command's flags without their dashes.
#include <doctest/doctest.h>

#include "server/questions.h"

namespace referee::server {

TEST_SUITE("serve") {
  TEST_CASE("query parameters become a typed question; bad ones are named") {
    submissions::Question q;
    std::string error;
    REQUIRE(decode_question("compare",
                            {{"round", "3.1.0"}, {"benchmark", "ssd"}, {"result", "NVIDIA/eos"}, {"result", "Dell/xe"},
                             {"format", "csv"}, {"rescale", "true"}, {"price-per-node-month", "37000"}},
                            &q, &error));
    CHECK(q.kind == submissions::QuestionKind::Compare);
    CHECK(q.round == "3.1.0");
    CHECK(q.results == std::vector<std::string>{"NVIDIA/eos", "Dell/xe"});
    CHECK(q.format == submissions::Format::Csv);
    CHECK(q.rescale);
    CHECK(q.price.per == submissions::Price::Per::NodeMonth);
    CHECK(q.price.amount == 37000);
    REQUIRE(decode_question("leaderboard", {{"round", "3.1.0"}, {"benchmark", "ssd"}, {"division", "Closed"}}, &q, &error));
    CHECK(q.division == "closed");
    REQUIRE(decode_question("list", {{"what", "ROUNDS"}}, &q, &error));
    CHECK(q.what == "rounds");
    REQUIRE(decode_question("speedup", {{"all-rounds", ""}, {"overall", "1"}}, &q, &error));
    CHECK(q.all_rounds);
    CHECK(q.overall);

    struct Bad {
      const char* name;
      std::vector<std::pair<std::string, std::string>> params;
      const char* says;
    };
    for (const Bad& b : std::vector<Bad>{
             {"leaderboard", {{"round", "3.1.0"}, {"benchmark", "b"}, {"colour", "red"}},
              "unknown parameter 'colour' for leaderboard; it takes: round, benchmark, rescale, price-per-accelerator-hour, "
              "price-per-node-month, division, format"},
             {"leaderboard", {{"round", "3.1.0"}}, "parameter 'benchmark' is required"},
             {"leaderboard", {{"round", "3.1.0"}, {"benchmark", "b"}, {"division", "both"}}, "division: 'both' is not one of closed, open"},
             {"leaderboard", {{"round", "3.1.0"}, {"round", "3.0.0"}, {"benchmark", "b"}}, "parameter 'round' is given more than once"},
             {"leaderboard", {{"round", "3.1.0"}, {"benchmark", "b"}, {"rescale", "yes"}}, "parameter 'rescale' is true or false, not 'yes'"},
             {"list", {{"what", "rounds"}, {"format", "xml"}}, "format=xml is not offered; choose text, json or csv"},
             {"compare", {{"round", "3.1.0"}, {"benchmark", "b"}, {"result", "x"}}, "result: two or more are needed"},
             {"speedup", {{"benchmark", "b"}}, "or ask for --all-rounds"},
             {"speedup", {{"all-rounds", "true"}, {"from", "3.0.0"}}, "parameter 'all-rounds' excludes 'from'"},
             {"speedup", {{"overall", "true"}, {"submitter", "x"}, {"all-rounds", "true"}}, "parameter 'overall' excludes 'submitter'"},
             {"speedup", {{"all-rounds", "true"}, {"price-per-accelerator-hour", "-3"}}, "is not a number greater than 0"},
             {"ranking", {}, "no question 'ranking'"},
         }) {
      CAPTURE(b.name);
      error.clear();
      CHECK_FALSE(decode_question(b.name, b.params, &q, &error));
      CHECK_MESSAGE(error.find(b.says) != std::string::npos, error);
    }
  }
}

}  // namespace referee::server
