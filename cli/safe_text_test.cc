#include "cli/safe_text.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/invisible.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace referee::cli {

TEST_SUITE("review") {
  TEST_CASE("control characters that others wrote are shown in caret notation, never sent to the terminal") {
    CHECK(caret_escape("a\x1b[2Jb\x07\x7f\tc\nd") == "a^[[2Jb^G^?\tc\nd");
    CHECK(caret_escape("Größe 日本") == "Größe 日本");  // UTF-8 passes as it is
    std::ostringstream os;
    {
      SafeTextFilter f(os);
      os << "title: \x1b[31mred" << '\r' << "over\n";
    }
    os << "\x1b";  // the filter is gone with its scope
    CHECK(os.str() == "title: ^[[31mred^Mover\n\x1b");
    // CR LF (CSV's record end) passes as a pair, also split across writes; a
    // CR that no LF follows, even the last byte, does not.
    std::ostringstream csv;
    {
      SafeTextFilter f(csv);
      csv << "a,b\r\n" << "c\r" << '\n' << "d\r\r\n" << "e\r";
    }
    CHECK(csv.str() == "a,b\r\nc\r\nd^M\r\ne^M");
    CHECK(prints_others_text("objection"));
    CHECK(prints_others_text("leaderboard"));
    CHECK_FALSE(prints_others_text("serve"));
  }

  TEST_CASE("the checks' filter lets referee's own colours through, and nothing else") {
    std::ostringstream os;
    {
      SafeTextFilter f(os, true);
      os << "\x1b[32mPASS\x1b[0m result_\x1b[31mred.txt \x1b[2J\x1b[8mhidden\x1b[33m!\x1b]0;title\x07\n";
    }
    CHECK(os.str() == "\x1b[32mPASS\x1b[0m result_\x1b[31mred.txt ^[[2J^[[8mhidden\x1b[33m!^[]0;title^G\n");
    CHECK(prints_others_text("check-package"));
    bool colours = false;
    CHECK(prints_others_text("check", &colours));
    CHECK(colours);
    CHECK(prints_others_text("objection", &colours));
    CHECK_FALSE(colours);
  }

  TEST_CASE("output that programs read is asked for by --json, --csv, --csv-detailed, --format json") {
    auto machine = [](std::vector<const char*> args) {
      return machine_readable_output(static_cast<int>(args.size()), args.data());
    };
    CHECK(machine({"referee", "score", "--csv", "pkg"}));
    CHECK(machine({"referee", "score", "pkg", "--csv-detailed"}));
    CHECK(machine({"referee", "leaderboard", "--json"}));
    CHECK(machine({"referee", "review", "report", "--format", "json"}));
    CHECK(machine({"referee", "review", "report", "--format=json"}));
    CHECK_FALSE(machine({"referee", "review", "report", "--format", "md"}));
    CHECK_FALSE(machine({"referee", "score", "pkg"}));
    CHECK_FALSE(machine({"referee", "score", "--", "--json"}));  // a package named --json
    CHECK_FALSE(machine({"--json"}));
  }

  TEST_CASE("check-package shows a result file named with an escape sequence, never sends it to the terminal") {
    testing::TempDir t;
    const std::filesystem::path dir = t.path / "Org" / "results" / "sys" / "minilm";
    std::filesystem::create_directories(dir);
    std::filesystem::create_directories(t.path / "Org" / "systems");
    { std::ofstream(dir / "result_\x1b[2Jx.txt") << "no log\n"; }
    std::string out;
    testing::run_referee("check-package " + (t.path / "Org").string() + " --ruleset mini-1.0.0 -v", &out);
    CHECK_MESSAGE(out.find("result_^[[2Jx.txt") != std::string::npos, out);
    CHECK(out.find('\x1b') == std::string::npos);
  }

  TEST_CASE("characters that reorder or hide text are shown as [U+XXXX] in the terminal, also when a write cuts them") {
    const std::string rlo = "\xE2\x80\xAE", zwsp = "\xE2\x80\x8B", bom = "\xEF\xBB\xBF", dash = "\xE2\x80\x93";
    std::ostringstream os;
    {
      SafeTextFilter f(os);
      os << "NVIDIA " << rlo << "gpj.exe" << zwsp << " " << bom << "x " << dash << " ok\n";
      // One character written a byte at a time, and one cut between two writes.
      for (char c : rlo) os << c;
      os << "a" << rlo.substr(0, 1);
      os << rlo.substr(1) << "b " << dash.substr(0, 2);
      os << dash.substr(2) << "\n";
      os << "end " << rlo.substr(0, 2);  // the output ends inside one: kept as it was
    }
    CHECK(os.str() == "NVIDIA [U+202E]gpj.exe[U+200B] [U+FEFF]x " + dash + " ok\n[U+202E]a[U+202E]b " + dash + "\nend " +
                          rlo.substr(0, 2));
  }

  TEST_CASE("C1 controls (the 8-bit CSI), bidi marks, tags and other invisible characters are shown too, whatever their length") {
    const std::string csi = "\xC2\x9B", nel = "\xC2\x85", shy = "\xC2\xAD", alm = "\xD8\x9C", wj = "\xE2\x81\xA0",
                      ls = "\xE2\x80\xA8", filler = "\xE3\x85\xA4", anchor = "\xEF\xBF\xB9",
                      tag = "\xF3\xA0\x81\x81", e_acute = "\xC3\xA9", emoji = "\xF0\x9F\x98\x80";
    std::ostringstream os;
    {
      SafeTextFilter f(os);
      os << csi << "31m " << nel << shy << alm << wj << ls << filler << anchor << " " << e_acute << emoji;
      for (char c : tag) os << c;  // a four-byte character written a byte at a time
      os << "\n";
    }
    CHECK(os.str() == "[U+009B]31m [U+0085][U+00AD][U+061C][U+2060][U+2028][U+3164][U+FFF9] " + e_acute + emoji +
                          "[U+E0041]\n");
    CHECK(referee::base::blank(" \t" + wj + "\xE2\x80\x8B"));
    CHECK_FALSE(referee::base::blank(" x "));
    CHECK_FALSE(referee::base::blank(e_acute));
  }

  TEST_CASE("a review command refuses an argument that is not UTF-8, on a local store as through a server") {
    const char* ok[] = {"referee", "objection", "file", "--title", "caf\xc3\xa9"};
    CHECK(non_utf8_argument(5, ok).empty());
    const char* latin1[] = {"referee", "round", "state", "3.1", "--reason", "caf\xe9"};
    std::string m = non_utf8_argument(6, latin1);
    CHECK(m.find("round: argument 4") == 0);
    CHECK(m.find("byte 4") != std::string::npos);
    CHECK(m.find("(caf\\xE9)") != std::string::npos);
    CHECK(m.find("iconv") != std::string::npos);
    const char* other[] = {"referee", "check", "log\xe9.txt"};  // a file name: not the review's text
    CHECK(non_utf8_argument(3, other).empty());
  }

  TEST_CASE("a review command prints a name with an escape sequence harmlessly") {
    testing::TempDir t;
    std::string db = (t.path / "s.db").string(), out;
    REQUIRE(testing::run_referee("import " + std::string(REFEREE_SOURCE_DIR) +
                                     "/submissions/examples/ExampleOrg --round mini-1.0.0 --db '" + db + "'",
                                 &out) == 0);
    int rc = testing::run_referee("user add \"$(printf 'ev\\033[31mil')\" --org ExampleOrg --role member --db '" + db + "'", &out);
    CHECK(rc != 0);
    CHECK(out.find("ev^[[31mil") != std::string::npos);
    CHECK(out.find('\x1b') == std::string::npos);
  }
}

}  // namespace referee::cli
