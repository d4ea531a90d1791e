// The MLLOG reader against the consortium's parser (mlp_parser), and the JSON
// reader and writer it relies on.
#include <doctest/doctest.h>

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "mllog/reader.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee::mllog;

namespace {

// A well-formed MLLOG payload for `key`.
std::string line(const std::string& key, const std::string& value = "1", const std::string& time = "100") {
  return R"({"namespace": "", "time_ms": )" + time + R"(, "event_type": "POINT_IN_TIME", "key": ")" + key +
         R"(", "value": )" + value + R"(, "metadata": {"file": "x.py", "lineno": 1}})";
}

// `text` must outlive the result: events view into it.
ParsedLog parse(const std::string& text) {
  LogReader reader;
  ParsedLog out;
  reader.parse(text, &out);
  return out;
}

std::string key_of(const ParsedLog& log, size_t i) { return log.keys.at(log.events.at(i).key_id); }

using referee::testing::TempDir;

}  // namespace

TEST_SUITE("mllog") {

TEST_CASE("text before the token is ignored") {
  std::string text = "[1,0]<stdout>: 2024-01-01 12:00:00 INFO :::MLLOG " + line("run_start") + "\n";
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 1);
  CHECK(log.errors.empty());
  CHECK(key_of(log, 0) == "run_start");
  CHECK(log.events[0].json == line("run_start"));
  CHECK(log.events[0].time_ms == 100.0);
}

TEST_CASE("the last token on a line wins") {
  // Python: re.sub(".*:::MLLOG ", ...) is greedy.
  std::string text = ":::MLLOG {\"broken\": :::MLLOG " + line("second") + "\n";
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 1);
  CHECK(log.errors.empty());
  CHECK(key_of(log, 0) == "second");
  CHECK(log.events[0].json == line("second"));

  // An interleaved line from two ranks: only the second payload is read, and it is cut.
  std::string cut = ":::MLLOG " + line("a") + ":::MLLOG {\"key\": \"b\"\n";
  ParsedLog log2 = parse(cut);
  CHECK(log2.events.empty());
  REQUIRE(log2.errors.size() == 1);
  CHECK(log2.errors[0].text == "{\"key\": \"b\"");
}

TEST_CASE("non-MLLOG lines are skipped; lineno counts MLLOG lines, file_line counts file lines") {
  std::string text = "hello\n:::MLLOG " + line("a") + "\nsome output\n\n:::MLLOG {bad json}\n:::MLLOG " +
                     line("b") + "\n:::MLLOG" + line("no_space") + "\n";
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 2);
  REQUIRE(log.errors.size() == 1);
  CHECK(log.mllog_lines == 3);
  CHECK(key_of(log, 0) == "a");
  CHECK(log.events[0].lineno == 0);
  CHECK(log.events[0].file_line == 2);
  CHECK(log.errors[0].lineno == 1);
  CHECK(log.errors[0].file_line == 5);
  CHECK(key_of(log, 1) == "b");
  CHECK(log.events[1].lineno == 2);
  CHECK(log.events[1].file_line == 6);
  CHECK(log.find_key("no_space") == -1);  // ":::MLLOG" without the space is not the token
  CHECK(log.find_key("b") == 1);
  CHECK(log.bytes == text.size());
}

TEST_CASE("\\r\\n and a lone \\r end lines (universal newlines)") {
  std::string text = "x\r\n:::MLLOG " + line("a") + "\r:::MLLOG " + line("b") + "\rjunk\r\n:::MLLOG " + line("c") +
                     "\r\n\r\n:::MLLOG " + line("d");
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 4);
  CHECK(log.errors.empty());
  CHECK(log.events[0].file_line == 2);
  CHECK(log.events[1].file_line == 3);
  CHECK(log.events[2].file_line == 5);
  CHECK(log.events[3].file_line == 7);
  CHECK(log.events[0].json == line("a"));  // no '\r' left in the payload
  CHECK(log.events[3].lineno == 3);

  // Other characters str.splitlines() would split on do not end a line in a file.
  std::string vt = ":::MLLOG " + line("first") + "\v junk \f :::MLLOG " + line("second") + "\n";
  ParsedLog log2 = parse(vt);
  CHECK(log2.mllog_lines == 1);
  REQUIRE(log2.events.size() == 1);
  CHECK(key_of(log2, 0) == "second");
}

TEST_CASE("the token is found at every offset, after extra colons and at the very end") {
  // The reader tests sixteen bytes at a time; a token may start anywhere in
  // a block, straddle two, or end the text.
  for (size_t pad = 0; pad < 40; ++pad) {
    std::string prefix(pad, 'x');
    for (size_t i = 0; i < pad; i += 7) prefix[i] = ':';
    std::string key = std::to_string(pad);
    key.insert(0, 1, 'k');
    for (const char* colons : {"", ":", "::", "::::"}) {
      std::string text = "chatter ::\n";
      text.append(prefix).append(colons).append(":::MLLOG ").append(line(key));
      ParsedLog log = parse(text);
      INFO("pad " << pad << " extra colons " << colons);
      REQUIRE(log.events.size() == 1);
      CHECK(log.errors.empty());
      CHECK(key_of(log, 0) == key);
      CHECK(log.events[0].file_line == 2);
      // A second token later on the line wins, wherever it falls.
      std::string twice = prefix;
      twice.append(":::MLLOG {\"x\": ").append(prefix).append(":::MLLOG ").append(line("late")).append("\n");
      ParsedLog log2 = parse(twice);
      REQUIRE(log2.events.size() == 1);
      CHECK(key_of(log2, 0) == "late");
    }
  }
  // A line that ends in a token and nothing more is an MLLOG line with an empty payload.
  ParsedLog tail = parse("a\nb :::MLLOG ");
  CHECK(tail.mllog_lines == 1);
  REQUIRE(tail.errors.size() == 1);
  CHECK(tail.errors[0].file_line == 2);
  // The token cut by the end of the text is not a token.
  CHECK(parse("x :::MLLO").mllog_lines == 0);
}

TEST_CASE("bytes that are not UTF-8 never fail a file (latin-1)") {
  std::string text = "\xff\xfe garbage \x80\n:::MLLOG " + line("caf\xe9", "\"na\xefve \xff\"") + "\n:::MLLOG " +
                     line("plain", "\"\xc3\x28\"") + "\n";
  ParsedLog log = parse(text);
  CHECK(log.errors.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(key_of(log, 0) == "caf\xe9");
  CHECK(key_of(log, 1) == "plain");
}

TEST_CASE("NaN, Infinity and -Infinity are accepted") {
  std::string text = ":::MLLOG " + line("a", "NaN") + "\n:::MLLOG " + line("b", "Infinity") + "\n:::MLLOG " +
                     line("c", "[-Infinity, 1]") + "\n:::MLLOG " + line("d", "1", "Infinity") + "\n";
  ParsedLog log = parse(text);
  CHECK(log.errors.empty());
  REQUIRE(log.events.size() == 4);
  CHECK(key_of(log, 2) == "c");
  CHECK(std::isinf(log.events[3].time_ms));
}

TEST_CASE("a repeated JSON key keeps the last value") {
  SUBCASE("fast path") {
    std::string text = R"(:::MLLOG {"key": "first", "time_ms": 1, "value": 1, "metadata": {}, "key": "last", "time_ms": 2})";
    ParsedLog log = parse(text);
    REQUIRE(log.events.size() == 1);
    CHECK(key_of(log, 0) == "last");
    CHECK(log.events[0].time_ms == 2.0);
  }
  SUBCASE("slow path (NaN forces it)") {
    std::string text = R"(:::MLLOG {"key": "first", "time_ms": 1, "value": NaN, "metadata": {}, "key": "last", "time_ms": 2})";
    ParsedLog log = parse(text);
    REQUIRE(log.events.size() == 1);
    CHECK(key_of(log, 0) == "last");
    CHECK(log.events[0].time_ms == 2.0);
  }
}

TEST_CASE("time_ms: a numeric string is accepted, anything else is a parse error") {
  std::string text = ":::MLLOG " + line("a", "1", "\"1234.5\"") + "\n:::MLLOG " + line("b", "1", "\" 12 \"") +
                     "\n:::MLLOG " + line("c", "NaN", "\"1_000\"") + "\n:::MLLOG " + line("d", "1", "\"abc\"") +
                     "\n:::MLLOG " + line("e", "NaN", "\"1.2.3\"") + "\n:::MLLOG " + line("f", "1", "null") +
                     "\n:::MLLOG " + line("g", "1", "[1]") + "\n";
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 3);
  CHECK(log.events[0].time_ms == 1234.5);
  CHECK(log.events[1].time_ms == 12.0);
  CHECK(log.events[2].time_ms == 1000.0);
  REQUIRE(log.errors.size() == 4);
  for (const auto& e : log.errors) CHECK(e.message.find("time_ms") != std::string::npos);
  CHECK(log.errors[0].file_line == 4);
  CHECK(log.errors[1].file_line == 5);
}

TEST_CASE("py_float_from_string follows Python's float()") {
  double d = 0;
  CHECK(py_float_from_string("1.5", &d));
  CHECK(d == 1.5);
  CHECK(py_float_from_string("  -2e3\n", &d));
  CHECK(d == -2000.0);
  CHECK(py_float_from_string("1_000.000_1", &d));
  CHECK(d == 1000.0001);
  CHECK(py_float_from_string("inf", &d));
  CHECK(std::isinf(d));
  CHECK(py_float_from_string("-Infinity", &d));
  CHECK((std::isinf(d) && d < 0));
  CHECK(py_float_from_string("NaN", &d));
  CHECK(std::isnan(d));
  CHECK(py_float_from_string(".5", &d));
  CHECK(d == 0.5);
  CHECK(py_float_from_string("5.", &d));
  CHECK(d == 5.0);
  CHECK_FALSE(py_float_from_string("", &d));
  CHECK_FALSE(py_float_from_string("abc", &d));
  CHECK_FALSE(py_float_from_string("1.2.3", &d));
  CHECK_FALSE(py_float_from_string("_1", &d));
  CHECK_FALSE(py_float_from_string("1__0", &d));
  CHECK_FALSE(py_float_from_string("0x10", &d));
  CHECK_FALSE(py_float_from_string("1e", &d));
}

TEST_CASE("a truncated last line is a parse error with its file line") {
  std::string text = "start\n:::MLLOG " + line("a") + "\n:::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"key\": \"b\", \"val";
  ParsedLog log = parse(text);
  REQUIRE(log.events.size() == 1);
  REQUIRE(log.errors.size() == 1);
  CHECK(log.errors[0].file_line == 3);
  CHECK(log.errors[0].lineno == 1);
  CHECK(log.errors[0].text.rfind("{\"namespace\"", 0) == 0);
  CHECK_FALSE(log.errors[0].message.empty());
  CHECK(log.mllog_lines == 2);
}

TEST_CASE("missing key, value, metadata or time_ms are parse errors") {
  std::string text =
      ":::MLLOG {\"time_ms\": 1, \"value\": 1, \"metadata\": {}}\n"
      ":::MLLOG {\"key\": \"a\", \"time_ms\": 1, \"metadata\": {}}\n"
      ":::MLLOG {\"key\": \"a\", \"time_ms\": 1, \"value\": 1}\n"
      ":::MLLOG {\"key\": \"a\", \"value\": 1, \"metadata\": {}}\n"
      ":::MLLOG {\"key\": \"a\", \"value\": NaN, \"metadata\": {}}\n"
      ":::MLLOG {\"key\": \"a\", \"time_ms\": 1, \"value\": NaN}\n"
      ":::MLLOG [1, 2]\n"
      ":::MLLOG \"just a string\"\n";
  ParsedLog log = parse(text);
  CHECK(log.events.empty());
  REQUIRE(log.errors.size() == 8);
  CHECK(log.errors[0].message.find("key") != std::string::npos);
  CHECK(log.errors[1].message.find("value") != std::string::npos);
  CHECK(log.errors[2].message.find("metadata") != std::string::npos);
  CHECK(log.errors[3].message.find("time_ms") != std::string::npos);
  CHECK(log.errors[4].message.find("time_ms") != std::string::npos);
  CHECK(log.errors[5].message.find("metadata") != std::string::npos);
  CHECK(log.errors[6].message.find("object") != std::string::npos);
  for (size_t i = 0; i < log.errors.size(); ++i) {
    CHECK(log.errors[i].file_line == i + 1);
    CHECK(log.errors[i].lineno == i);
  }
}

TEST_CASE("trailing white space is stripped from the payload") {
  std::string text = ":::MLLOG " + line("a") + "   \t \f\v\x1c\xa0\x85\n:::MLLOG " + line("b") + "  ";
  ParsedLog log = parse(text);
  CHECK(log.errors.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].json == line("a"));
  CHECK(log.events[1].json == line("b"));
}

TEST_CASE("an empty file or one without MLLOG lines yields no events") {
  ParsedLog log = parse("");
  CHECK(log.events.empty());
  CHECK(log.errors.empty());
  CHECK(log.keys.empty());
  CHECK(log.mllog_lines == 0);
  ParsedLog log2 = parse("just\nsome\ntext :::MLLOG\n");
  CHECK(log2.events.empty());
  CHECK(log2.errors.empty());
  CHECK(log2.mllog_lines == 0);
}

TEST_CASE("a reader can be reused; keys are interned in order of first appearance") {
  LogReader reader;
  std::string t1 = ":::MLLOG " + line("x") + "\n:::MLLOG " + line("y") + "\n:::MLLOG " + line("x") + "\n";
  std::string t2 = ":::MLLOG " + line("z") + "\n";
  ParsedLog log;
  reader.parse(t1, &log);
  REQUIRE(log.keys.size() == 2);
  CHECK(log.keys[0] == "x");
  CHECK(log.keys[1] == "y");
  CHECK(log.events[2].key_id == 0);
  reader.parse(t2, &log);
  REQUIRE(log.keys.size() == 1);
  CHECK(log.keys[0] == "z");
  CHECK(log.events.size() == 1);
}

TEST_CASE("is_py_space is str.strip()'s white space for latin-1") {
  for (unsigned char c : {' ', '\t', '\n', '\v', '\f', '\r'}) CHECK(is_py_space(c));
  for (unsigned c = 0x1c; c <= 0x1f; ++c) CHECK(is_py_space(static_cast<unsigned char>(c)));
  CHECK(is_py_space(0x85));
  CHECK(is_py_space(0xa0));
  CHECK_FALSE(is_py_space('a'));
  CHECK_FALSE(is_py_space(0));
  CHECK_FALSE(is_py_space(0x1b));
  CHECK_FALSE(is_py_space(0xff));
}

TEST_CASE("FileBuffer reads files and explains failures") {
  TempDir dir;
  std::string error;
  FileBuffer buf;

  SUBCASE("missing file") {
    std::string p = (dir.path / "nope.txt").string();
    CHECK_FALSE(buf.open(p, &error));
    CHECK(error.find("cannot open") != std::string::npos);
    CHECK(error.find(p) != std::string::npos);
  }
  SUBCASE("a directory") {
    CHECK_FALSE(buf.open(dir.path.string(), &error));
    CHECK(error.find("directory") != std::string::npos);
    CHECK(error.find(dir.path.string()) != std::string::npos);
  }
  SUBCASE("a regular file, then an empty one") {
    std::string content = "a\n:::MLLOG " + line("k") + "\n";
    {
      std::ofstream(dir.path / "r.txt", std::ios::binary) << content;
      std::ofstream(dir.path / "empty.txt", std::ios::binary);
    }
    REQUIRE(buf.open((dir.path / "r.txt").string(), &error));
    CHECK(buf.view() == content);
    std::string copy(buf.view());
    ParsedLog log = parse(copy);
    CHECK(log.events.size() == 1);
    FileBuffer moved(std::move(buf));
    CHECK(moved.view() == content);
    REQUIRE(moved.open((dir.path / "empty.txt").string(), &error));
    CHECK(moved.view().empty());
  }
  SUBCASE("a device that does not end is refused at once; an empty one reads as empty") {
    CHECK_FALSE(buf.open("/dev/zero", &error));
    CHECK(error.find("/dev/zero is a character device that does not end") != std::string::npos);
    REQUIRE(buf.open("/dev/null", &error));
    CHECK(buf.view().empty());
  }
  SUBCASE("assign") {
    buf.assign("hello");
    CHECK(buf.view() == "hello");
    FileBuffer other;
    other = std::move(buf);
    CHECK(other.view() == "hello");
  }
}

// ------------------------------------------------------------- JSON reader

TEST_CASE("parse_json_permissive: nested structures") {
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive(R"( {"a": [1, -2.5, {"b": null}], "c": true, "d": false, "e": "x", "f": {}, "g": []} )", &j, &err));
  REQUIRE(j.kind == Json::Kind::Object);
  REQUIRE(j.fields.size() == 6);
  const Json* a = j.find("a");
  REQUIRE(a);
  REQUIRE(a->kind == Json::Kind::Array);
  REQUIRE(a->items.size() == 3);
  CHECK(a->items[0].kind == Json::Kind::Int);
  CHECK(a->items[0].i == 1);
  CHECK(a->items[1].kind == Json::Kind::Float);
  CHECK(a->items[1].f == -2.5);
  REQUIRE(a->items[2].kind == Json::Kind::Object);
  REQUIRE(a->items[2].find("b"));
  CHECK(a->items[2].find("b")->kind == Json::Kind::Null);
  CHECK(j.find("c")->b == true);
  CHECK(j.find("d")->kind == Json::Kind::Bool);
  CHECK(j.find("d")->b == false);
  CHECK(j.find("e")->s == "x");
  CHECK(j.find("f")->kind == Json::Kind::Object);
  CHECK(j.find("g")->kind == Json::Kind::Array);
  CHECK(j.find("zz") == nullptr);
}

TEST_CASE("parse_json_permissive: numbers") {
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive("[0, -0, 1e3, 1E-2, -0.5, 9223372036854775807, 12345678901234567890, NaN, Infinity, -Infinity]", &j, &err));
  REQUIRE(j.items.size() == 10);
  CHECK(j.items[0].kind == Json::Kind::Int);
  CHECK(j.items[2].kind == Json::Kind::Float);
  CHECK(j.items[2].f == 1000.0);
  CHECK(j.items[3].f == 0.01);
  CHECK(j.items[4].f == -0.5);
  CHECK(j.items[5].kind == Json::Kind::Int);
  CHECK(j.items[5].i == std::numeric_limits<int64_t>::max());
  CHECK(j.items[6].kind == Json::Kind::Float);  // Python keeps a big int; referee a double
  CHECK(j.items[6].f == 12345678901234567890.0);
  CHECK(std::isnan(j.items[7].f));
  CHECK(j.items[8].f == std::numeric_limits<double>::infinity());
  CHECK(j.items[9].f == -std::numeric_limits<double>::infinity());
  for (const char* bad : {"01", "1.", ".5", "-", "+1", "1e", "nan", "-NaN", "infinity", "0x10", "[1,]", "{\"a\":1,}", ""})
    CHECK_MESSAGE(!parse_json_permissive(bad, &j, &err), std::string(bad));
}

TEST_CASE("parse_json_permissive: escapes and surrogate pairs") {
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive(R"("q\" b\\ s\/ \b\f\n\r\t")", &j, &err));
  CHECK(j.kind == Json::Kind::String);
  CHECK(j.s == "q\" b\\ s/ \b\f\n\r\t");
  REQUIRE(parse_json_permissive(R"("\u0041\u00e9")", &j, &err));
  CHECK(j.s == "A\xc3\xa9");
  REQUIRE(parse_json_permissive(R"("\ud83d\ude00!")", &j, &err));
  CHECK(j.s == "\xf0\x9f\x98\x80!");
  REQUIRE(parse_json_permissive(R"("\uD834\uDD1E")", &j, &err));
  CHECK(j.s == "\xf0\x9d\x84\x9e");
  // Raw bytes pass through unchanged (latin-1 view).
  REQUIRE(parse_json_permissive("\"caf\xe9\"", &j, &err));
  CHECK(j.s == "caf\xe9");
  CHECK_FALSE(parse_json_permissive(R"("\x41")", &j, &err));
  CHECK_FALSE(parse_json_permissive(R"("\u12G4")", &j, &err));
  CHECK_FALSE(parse_json_permissive(R"("\u12")", &j, &err));
  CHECK_FALSE(parse_json_permissive(R"("unterminated)", &j, &err));
}

TEST_CASE("parse_json_permissive: control characters in strings are rejected (strict)") {
  Json j;
  std::string err;
  CHECK_FALSE(parse_json_permissive(std::string("\"a\nb\""), &j, &err));
  CHECK(err.find("control") != std::string::npos);
  CHECK_FALSE(parse_json_permissive(std::string("\"a\tb\""), &j, &err));
  CHECK_FALSE(parse_json_permissive(std::string("\"a\x01") + "b\"", &j, &err));
  CHECK_FALSE(parse_json_permissive(std::string("\"a\0b\"", 5), &j, &err));
  CHECK(parse_json_permissive(std::string("\"a\x7f") + "b\"", &j, &err));  // DEL is allowed
}

TEST_CASE("parse_json_permissive: extra data is rejected") {
  Json j;
  std::string err;
  CHECK_FALSE(parse_json_permissive("{} {}", &j, &err));
  CHECK(err.find("extra data") != std::string::npos);
  CHECK_FALSE(parse_json_permissive("1 2", &j, &err));
  CHECK_FALSE(parse_json_permissive("[1]]", &j, &err));
  CHECK_FALSE(parse_json_permissive("{\"a\": 1} x", &j, &err));
  CHECK(parse_json_permissive(" \t{\"a\": 1}\r\n ", &j, &err));
  CHECK_FALSE(parse_json_permissive("{\"a\": 1}\f", &j, &err));  // not JSON white space
}

TEST_CASE("parse_json_permissive: duplicate keys keep both, find() returns the last") {
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive(R"({"a": 1, "b": 2, "a": 3})", &j, &err));
  CHECK(j.fields.size() == 3);
  CHECK(j.find("a")->i == 3);
}

TEST_CASE("parse_json_permissive: deep nesting is limited, not a crash") {
  Json j;
  std::string err;
  std::string ok = std::string(100, '[') + std::string(100, ']');
  CHECK(parse_json_permissive(ok, &j, &err));
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  CHECK_FALSE(parse_json_permissive(deep, &j, &err));
  CHECK(err.find("deep") != std::string::npos);
  std::string deep_obj;
  for (int i = 0; i < 100000; ++i) deep_obj += "{\"a\":";
  deep_obj += "1";
  deep_obj += std::string(100000, '}');
  CHECK_FALSE(parse_json_permissive(deep_obj, &j, &err));
  // And through the reader: one bad line, no crash.
  std::string text = ":::MLLOG {\"key\": \"a\", \"time_ms\": 1, \"metadata\": {}, \"value\": " + deep + "}\n";
  ParsedLog log = parse(text);
  CHECK(log.events.empty());
  CHECK(log.errors.size() == 1);
}

// ------------------------------------------------------------- JSON writer

TEST_CASE("append_json_string escapes") {
  std::string out;
  append_json_string(&out, std::string("a\"b\\c\nd\te\rf\x01g\x1fh/", 16));
  CHECK(out == "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u001fh/\"");
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive(out, &j, &err));
  CHECK(j.s == std::string("a\"b\\c\nd\te\rf\x01g\x1fh/", 16));

  // Latin-1 bytes become their code points in UTF-8.
  out.clear();
  append_json_string(&out, "caf\xe9 \xff");
  CHECK(out == "\"caf\xc3\xa9 \xc3\xbf\"");

  out.clear();
  append_json_string(&out, std::string("nul\0x", 5));
  CHECK(out == "\"nul\\u0000x\"");
}

TEST_CASE("json_number round-trips") {
  const double values[] = {0.0,
                           1.0,
                           -1.5,
                           0.1,
                           1.0 / 3.0,
                           100.0,
                           123456789.123,
                           1e16,
                           1e22,
                           1e-7,
                           2.675,
                           9007199254740993.0,
                           5e-324,
                           2.2250738585072014e-308,
                           1.7976931348623157e308,
                           -123.456e-30};
  for (double d : values) {
    std::string s = json_number(d);
    CHECK_MESSAGE(std::strtod(s.c_str(), nullptr) == d, s);
    Json j;
    std::string err;
    REQUIRE_MESSAGE(parse_json_permissive(s, &j, &err), s << ": " << err);
    CHECK_MESSAGE(j.kind == Json::Kind::Float, s);  // a float stays a float for Python readers
    CHECK_MESSAGE(j.f == d, s);
  }
  CHECK(json_number(0.1) == "0.1");
  CHECK(json_number(1.0) == "1.0");
  CHECK(json_number(-1.5) == "-1.5");
  CHECK(json_number(1.0 / 3.0) == "0.3333333333333333");
  CHECK(std::signbit(std::strtod(json_number(-0.0).c_str(), nullptr)));
  CHECK(json_number(std::nan("")) == "NaN");
  CHECK(json_number(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(json_number(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("py_float_repr prints what Python's repr prints") {
  const std::pair<double, const char*> known[] = {
      {0.1, "0.1"}, {1e16, "1e+16"}, {1e-5, "1e-05"}, {123456789012345678.0, "1.2345678901234568e+17"},
      {0.0001, "0.0001"}, {1.5, "1.5"}, {100.0, "100.0"}, {1e22, "1e+22"}, {5e-324, "5e-324"},
      {2.5e-05, "2.5e-05"}, {1.0 / 3, "0.3333333333333333"}, {2.0 / 3, "0.6666666666666666"},
      {9007199254740993.0, "9007199254740992.0"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
      {12345678.9, "12345678.9"}, {1e15, "1000000000000000.0"}, {0.1 + 0.2, "0.30000000000000004"},
      {-1.25e-7, "-1.25e-07"}, {0.00012345, "0.00012345"}, {0.0, "0.0"}, {-0.0, "-0.0"},
      {std::numeric_limits<double>::infinity(), "inf"}, {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::nan(""), "nan"}};
  for (const auto& [d, want] : known) CHECK(py_float_repr(d) == want);
  // The shortest digits that read back: every printed value reads back as itself.
  uint64_t bits = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 20000; ++i) {
    bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    std::string r = py_float_repr(d);
    INFO(r);
    CHECK(std::strtod(r.c_str(), nullptr) == d);
    // and no shorter mantissa would: one digit fewer (%.*e) does not read back.
    size_t e = r.find('e');
    std::string mant = r.substr(r[0] == '-' ? 1 : 0, e == std::string::npos ? std::string::npos : e - (r[0] == '-' ? 1 : 0));
    std::string digits;
    for (char c : mant)
      if (c != '.') digits.push_back(c);
    digits.erase(0, digits.find_first_not_of('0'));
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();  // "100.0": placeholders, not digits
    size_t sig = digits.size();
    if (sig > 1) {
      char shorter[64];
      std::snprintf(shorter, sizeof shorter, "%.*e", static_cast<int>(sig) - 2, d);
      CHECK(std::strtod(shorter, nullptr) != d);
    }
  }
}

TEST_CASE("std::to_chars with a precision prints as printf's %.17g (run fingerprints rely on it)") {
  uint64_t bits = 0x2545f4914f6cdd1dull;
  char a[64], b[64];
  auto same = [&](double d) {
    std::snprintf(a, sizeof a, "%.17g", d);
    auto r = std::to_chars(b, b + sizeof b, d, std::chars_format::general, 17);
    return std::string(a) == std::string(b, r.ptr);
  };
  for (double d : {0.0, -0.0, 1.0, 1696582743366.0, 1696582743366.5, 1e17, 1e-7, 123.456,
                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    CHECK_MESSAGE(same(d), d);
  for (int i = 0; i < 20000; ++i) {
    bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isnan(d)) continue;
    CHECK_MESSAGE(same(d), a);
    double t = static_cast<double>(bits % 4000000000000ull) + 0.25 * static_cast<double>(bits % 4);  // times in ms
    CHECK_MESSAGE(same(t), a);
  }
}

TEST_CASE("JsonWriter builds valid JSON") {
  JsonWriter w(0);
  w.begin_object()
      .key("a").value(1)
      .key("b").begin_array().value("x").value(true).null().value(2.5).end_array()
      .key("c").begin_object().end_object()
      .key("d\"").raw("[1]")
      .end_object();
  CHECK(w.str() == R"({"a":1,"b":["x",true,null,2.5],"c":{},"d\"":[1]})");

  JsonWriter pretty(2);
  pretty.begin_object().key("k").begin_array().value(1).value(2).end_array().key("e").begin_array().end_array().end_object();
  Json j;
  std::string err;
  REQUIRE_MESSAGE(parse_json_permissive(pretty.str(), &j, &err), pretty.str() << ": " << err);
  REQUIRE(j.find("k"));
  CHECK(j.find("k")->items.size() == 2);
  CHECK(j.find("e")->items.empty());
  CHECK(pretty.str().find('\n') != std::string::npos);
}

TEST_CASE("JsonWriter: latin-1 log text by default; UTF-8 text passes through, a stray byte as its latin-1 character") {
  const std::string utf8 = "\xc3\x9c" "ber \xc3\xa9 \xe2\x80\x94 \xf0\x9d\x9b\xbc";  // Über é — 𝛼
  // Log text: each byte is its latin-1 code point (Ã\u009c... as the consortium's tools read it).
  JsonWriter log(0);
  log.value("\xc3\x9c\xe9");
  CHECK(log.str() == "\"\xc3\x83\xc2\x9c\xc3\xa9\"");
  JsonWriter text(0, JsonText::kUtf8);
  text.begin_object().key("t\xc3\xa9").value(utf8).end_object();
  CHECK(text.str() == "{\"t\xc3\xa9\":\"" + utf8 + "\"}");
  // Bytes that are not valid UTF-8 (a lone continuation, a cut sequence, an overlong, a surrogate, 0xff):
  // each is its latin-1 character, so the output is valid UTF-8 and reads back.
  std::string out;
  append_json_string(&out, "a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xff" "\xe2\x9c", JsonText::kUtf8);
  CHECK(out == "\"a\xc2\x80" "b\xc3\x83" "c\xc3\x80\xc2\xaf" "d\xc3\xad\xc2\xa0\xc2\x80" "e\xc3\xbf" "\xc3\xa2\xc2\x9c\"");
  out.clear();
  append_json_string(&out, "q\"\\\n\x01", JsonText::kUtf8);
  CHECK(out == "\"q\\\"\\\\\\n\\u0001\"");
  Json j;
  std::string err;
  REQUIRE(parse_json_permissive(text.str(), &j, &err));
  CHECK(j.find("t\xc3\xa9")->s == utf8);
}

}  // TEST_SUITE("mllog")
