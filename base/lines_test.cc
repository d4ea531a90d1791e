#include "base/lines.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

namespace referee::base {

namespace {

using Lines = std::vector<std::pair<std::string, size_t>>;

Lines split_in_pieces(const std::string& text, size_t piece, size_t max_line) {
  LineSplitter s(max_line);
  Lines out;
  auto sink = [&](std::string_view l, size_t cut) { out.emplace_back(std::string(l), cut); };
  for (size_t i = 0; i < text.size(); i += piece) s.feed(std::string_view(text).substr(i, piece), sink);
  s.finish(sink);
  return out;
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("LineSplitter: lines as they end, in pieces of any size, CRLF too") {
    const std::string text = "one\ntwo\r\n\nthree without end";
    const Lines want = {{"one", 0}, {"two", 0}, {"", 0}, {"three without end", 0}};
    for (size_t piece : {1, 2, 3, 5, 64}) {
      INFO("pieces of " << piece);
      CHECK(split_in_pieces(text, piece, 100) == want);
    }
    CHECK(split_in_pieces("a\n", 1, 100) == Lines{{"a", 0}});  // no empty last line after the final end
    CHECK(split_in_pieces("", 1, 100).empty());
  }

  TEST_CASE("LineSplitter: a line longer than the limit is cut there and the rest counted") {
    std::string longline(1000, 'x');
    for (size_t piece : {1, 7, 4096}) {
      INFO("pieces of " << piece);
      Lines got = split_in_pieces("a\n" + longline + "\r\nb\n" + longline, piece, 10);
      REQUIRE(got.size() == 4);
      CHECK(got[0] == std::pair<std::string, size_t>{"a", 0});
      CHECK(got[1] == std::pair<std::string, size_t>{std::string(10, 'x'), 990});
      CHECK(got[2] == std::pair<std::string, size_t>{"b", 0});
      CHECK(got[3] == std::pair<std::string, size_t>{std::string(10, 'x'), 990});
    }
  }

  TEST_CASE("LineSplitter: an endless line holds at most the limit") {
    LineSplitter s(64);
    size_t lines = 0;
    auto sink = [&](std::string_view, size_t) { ++lines; };
    std::string chunk(4096, 'y');
    for (int i = 0; i < 1000; ++i) s.feed(chunk, sink);
    CHECK(lines == 0);
    CHECK(s.pending() == 64);
    size_t cut = 0;
    s.feed("\n", [&](std::string_view l, size_t c) {
      CHECK(l.size() == 64);
      cut = c;
    });
    CHECK(cut == 4096 * 1000 - 64);
  }
}

}  // namespace referee::base
