#include "base/lines.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
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

  TEST_CASE("read_in_line_pieces: pieces end at line ends, a long line makes its piece longer, all bytes once") {
    char path[] = "/tmp/referee-lines-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    unlink(path);
    std::string text;
    for (int i = 0; i < 300; ++i) text += std::string(static_cast<size_t>(i % 37), 'a' + static_cast<char>(i % 26)) + "\n";
    text += std::string(1000, 'L') + "\n" + "no end";
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    for (size_t piece : {size_t{1}, size_t{7}, size_t{64}, size_t{4096}}) {
      INFO("piece " << piece);
      std::string got;
      int pieces = 0;
      bool ends = true;
      REQUIRE(read_in_line_pieces(fd, text.size(), [&](std::string_view p) {
        got += p;
        ++pieces;
        if (got.size() < text.size()) ends = ends && !p.empty() && p.back() == '\n';
      }, piece));
      CHECK(got == text);
      CHECK(ends);
      CHECK(pieces > (piece >= 4096 ? 0 : 1));
      // Up to a point: what comes before it, the same way.
      std::string upto;
      REQUIRE(read_in_line_pieces(fd, 100, [&](std::string_view p) { upto += p; }, piece));
      CHECK(upto == text.substr(0, 100));
    }
    // Past the end of the file: what there is. A bad descriptor: false.
    std::string all;
    CHECK(read_in_line_pieces(fd, text.size() + 50, [&](std::string_view p) { all += p; }));
    CHECK(all == text);
    ::close(fd);
    CHECK_FALSE(read_in_line_pieces(fd, 10, [](std::string_view) {}));
  }

}  // namespace referee::base
