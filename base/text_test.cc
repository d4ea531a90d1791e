#include "base/text.h"

#include <doctest/doctest.h>

#include "base/status.h"

namespace referee::base {

TEST_SUITE("base") {
  TEST_CASE("lower, upper and iequals fold ASCII letters only") {
    CHECK(lower("MiXeD-Case_09") == "mixed-case_09");
    CHECK(lower("ÄÖ") == "ÄÖ");  // UTF-8 bytes are left as they are
    CHECK(upper("gpt3 v1.0") == "GPT3 V1.0");
    CHECK(iequals("NVIDIA", "nvidia"));
    CHECK_FALSE(iequals("nvidia", "nvidia2"));
    CHECK(lower("") == "");
  }

  TEST_CASE("names people type match whatever the case, in the Latin, Greek and Cyrillic alphabets") {
    CHECK(fold_case("M\xc3\x9cLLER GmbH") == "m\xc3\xbcller gmbh");           // MÜLLER -> müller
    CHECK(fold_case("\xc5\x81\xc3\x93" "D\xc5\xb9") == "\xc5\x82\xc3\xb3" "d\xc5\xba");  // ŁÓDŹ -> łódź
    CHECK(fold_case("\xce\x91\xce\xa9") == "\xce\xb1\xcf\x89");                 // ΑΩ -> αω
    CHECK(fold_case("\xd0\xaf\xd0\x81") == "\xd1\x8f\xd1\x91");                 // ЯЁ -> яё
    CHECK(fold_case("\xc3\x97\xc3\x9f") == "\xc3\x97\xc3\x9f");                 // × and ß stay
    CHECK(fold_case("\xc5\xb8") == "\xc3\xbf");                                 // Ÿ -> ÿ
    CHECK(fold_case("a\xc3") == "a\xc3");                                         // a cut sequence stays
    CHECK(same_name("m\xc3\xbcller", "M\xc3\x9cLLER"));
    CHECK(same_name("NVIDIA", "nvidia"));
    CHECK_FALSE(same_name("m\xc3\xbcller", "muller"));
  }

  TEST_CASE("trim drops ASCII white space at both ends, nothing inside") {
    CHECK(trim("  a b\t\r\n") == "a b");
    CHECK(trim("\v\fx\f") == "x");
    CHECK(trim(" \t\n ") == "");
    CHECK(trim("") == "");
    CHECK(trim("none") == "none");
  }

  TEST_CASE("split keeps every piece, empty ones included") {
    using V = std::vector<std::string>;
    CHECK(split("a,,b", ',') == V{"a", "", "b"});
    CHECK(split(",a,", ',') == V{"", "a", ""});
    CHECK(split("", ',') == V{""});
    CHECK(split("a/b", ',') == V{"a/b"});
    CHECK(split("Azure+NVIDIA", '+') == V{"Azure", "NVIDIA"});
  }

  TEST_CASE("excerpt: what a caller sent, quoted at most so long, never cut inside a character") {
    CHECK(excerpt("short") == "short");
    CHECK(excerpt(std::string(100, 'k'), 10) == "kkkkkkkkkk... (100 bytes)");
    CHECK(excerpt("aaaaaaaaa\xc3\xa9zzz", 10) == "aaaaaaaaa... (14 bytes)");  // é starts at 9: not split
    CHECK(excerpt(std::string(1000000, 'x')).size() < 120);
  }

  TEST_CASE("caret notation: control characters other than newline and tab, DEL as ^?") {
    CHECK(caret_escape("a\x1b[2Jb\x07\x7f\tc\nd") == "a^[[2Jb^G^?\tc\nd");
    CHECK(caret_escape(std::string("\0\r", 2)) == "^@^M");
    CHECK(one_line("a\nb\tc\x1b[0m") == "a^Jb^Ic^[[0m");  // a log line stays one line
    CHECK(one_line("NVIDIA\xe2\x80\xae" "AIDIVN") == "NVIDIA[U+202E]AIDIVN");  // nothing reorders it
    CHECK(one_line("M\xc3\xbcller \xc2\x9b") == "M\xc3\xbcller [U+009B]");
    CHECK(caret_escape("Größe 日本") == "Größe 日本");
    std::string out;
    append_caret(&out, 0x1f);
    append_caret(&out, 'x');
    CHECK(out == "^_x");
  }

  TEST_CASE("edit distance and the nearest name") {
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("abc", "") == 3);
    CHECK(edit_distance("", "ab") == 2);
    CHECK(edit_distance("flaw", "lawn") == 2);
    std::vector<std::string> known = {"max_epochs", "batch_size", "nodes"};
    CHECK(nearest_name("max_epoch", known) == "max_epochs");
    CHECK(nearest_name("batchsize", known) == "batch_size");
    CHECK(nearest_name("completely_else", known) == "");
    CHECK(nearest_name("x", {}) == "");
    CHECK(nearest_name("ab", {"ab", "abc"}) == "ab");  // the exact name, the first of equals
  }

  TEST_CASE("display width: columns on a terminal, not bytes") {
    CHECK(display_width("") == 0);
    CHECK(display_width("NVIDIA") == 6);
    CHECK(display_width("M\xc3\xbcller") == 6);               // ü: two bytes, one column
    CHECK(display_width("\xe6\x97\xa5\xe6\x9c\xac") == 4);      // 日本: two wide characters
    CHECK(display_width("e\xcc\x81") == 1);                    // e and a combining acute accent
    CHECK(display_width("\xf0\x9f\x9a\x80") == 2);               // an emoji
    CHECK(display_width("a\xff" "b") == 3);                      // a byte that is not UTF-8: one column
    CHECK(display_width("\xe6\x97") == 2);                       // a character cut short: its bytes, one each
  }

  TEST_CASE("Status: a value with a code, a message and a hint") {
    Status ok = Status::Ok();
    CHECK(ok.ok());
    CHECK(ok.code == StatusCode::Ok);
    Status nf = Status::NotFound("no round training-9.9.9", "list them: referee round list");
    CHECK_FALSE(nf.ok());
    CHECK(nf.code == StatusCode::NotFound);
    CHECK(nf.text() == "no round training-9.9.9\nfix: list them: referee round list");
    CHECK(Status::Error("broken").text() == "broken");
    CHECK(Status::BadRequest("bad").code == StatusCode::BadRequest);
  }
}

}  // namespace referee::base
