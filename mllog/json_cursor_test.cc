// mllog/json_cursor.h against two other readers of the same texts: Python's
// json.loads (Debian's /usr/bin/python3, run on a generated corpus) and
// simdjson (a strict parser: what it accepts, Python accepts, with the same
// values); and the MLLOG reader's fast path against its slow one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <simdjson.h>

#include "mllog/json.h"
#include "mllog/json_cursor.h"
#include "mllog/reader.h"
#include "rules/interp.h"
#include "tests/temp_dir.h"

using referee::mllog::Json;
using referee::mllog::JsonCursor;
using referee::rules::Value;

namespace {

// Random JSON-like texts: mostly valid JSON in Python's sense, with every
// form of number, escape and white space, then some of them broken.
struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); }

  std::string ws() {
    static const char* w[] = {"", "", "", " ", "\t", "\n", "\r\n ", "  "};
    return w[pick(8)];
  }
  std::string number() {
    static const char* fixed[] = {"0", "-0", "0.0", "-0.0", "1e308", "1e400", "-1e400", "1e-320", "1e-400",
                                  "123456789012345678", "-123456789012345678", "9223372036854775807",
                                  "-9223372036854775808", "2.5E+3", "1E2", "0.1", "1.7976931348623157e308",
                                  "4.9e-324", "NaN", "Infinity", "-Infinity", "1698432000123", "1698432000123.25"};
    if (pick(3) == 0) return fixed[pick(static_cast<int>(sizeof fixed / sizeof *fixed))];
    std::string s = pick(4) == 0 ? "-" : "";
    int digits = 1 + pick(17);
    s += static_cast<char>('1' + pick(9));
    for (int i = 1; i < digits; ++i) s += static_cast<char>('0' + pick(10));
    if (pick(2)) {
      s += '.';
      for (int i = 0, n = 1 + pick(8); i < n; ++i) s += static_cast<char>('0' + pick(10));
    }
    if (pick(3) == 0) {
      s += pick(2) ? 'e' : 'E';
      if (pick(2)) s += pick(2) ? '+' : '-';
      s += std::to_string(pick(330));
    }
    return s;
  }
  std::string string() {
    static const char* pieces[] = {"a", "key", "epoch_num", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n",
                                   "\\r", "\\t", "\\u0041", "\\u007f", "\\u0000", "\\u001F", "x y", "0", ":", ",",
                                   "{", "]", "'", "MLLOG"};
    std::string s = "\"";
    for (int i = 0, n = pick(6); i < n; ++i) s += pieces[pick(static_cast<int>(sizeof pieces / sizeof *pieces))];
    return s + "\"";
  }
  std::string value(int depth) {
    int k = depth > 3 ? pick(5) : pick(8);
    switch (k) {
      case 0: return number();
      case 1: return string();
      case 2: return pick(3) == 0 ? "null" : pick(2) ? "true" : "false";
      case 3: return number();
      case 4: return string();
      case 5: {
        std::string s = "[" + ws();
        for (int i = 0, n = pick(4); i < n; ++i) s += (i ? "," + ws() : "") + value(depth + 1) + ws();
        return s + "]";
      }
      default: {
        std::string s = "{" + ws();
        for (int i = 0, n = pick(5); i < n; ++i) {
          static const char* names[] = {"\"a\"", "\"b\"", "\"value\"", "\"metadata\"", "\"key\"", "\"a\"", "\"\\u0061\""};
          s += (i ? "," + ws() : "") + names[pick(7)] + ws() + ":" + ws() + value(depth + 1) + ws();
        }
        return s + "}";
      }
    }
  }
  // Breaks a text now and then: a byte dropped, doubled or replaced.
  std::string maybe_break(std::string s) {
    if (s.empty() || pick(3) != 0) return s;
    static const char bytes[] = {'"', ',', ':', '}', ']', '\\', '\x01', 'x', '0', '-', '.', 'e', ' ', '\t'};
    size_t at = static_cast<size_t>(pick(static_cast<int>(s.size())));
    switch (pick(3)) {
      case 0: s.erase(at, 1); break;
      case 1: s.insert(at, 1, s[at]); break;
      default: s[at] = bytes[pick(sizeof bytes)]; break;
    }
    return s;
  }
};

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

bool same_value(const Value& a, const Value& b) {
  using referee::rules::VKind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case VKind::Float:
      return (std::isnan(a.f) && std::isnan(b.f)) || (a.f == b.f && std::signbit(a.f) == std::signbit(b.f));
    case VKind::List: {
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i)
        if (!same_value(a.items()[i], b.items()[i])) return false;
      return true;
    }
    case VKind::Dict: {
      auto& x = a.d().entries;
      auto& y = b.d().entries;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!same_value(x[i].first, y[i].first) || !same_value(x[i].second, y[i].second)) return false;
      return true;
    }
    default: return referee::rules::py_repr(a) == referee::rules::py_repr(b);
  }
}

Value from_simdjson(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::NULL_VALUE: return Value();
    case T::BOOL: return Value::boolean(e.get_bool().value_unsafe());
    case T::INT64: return Value::integer(e.get_int64().value_unsafe());
    case T::UINT64: return Value::number(static_cast<double>(e.get_uint64().value_unsafe()));
    case T::DOUBLE: return Value::number(e.get_double().value_unsafe());
    case T::STRING: return Value::str(std::string(e.get_string().value_unsafe()));
    case T::ARRAY: {
      std::vector<Value> items;
      simdjson::dom::array arr;
      if (e.get_array().get(arr)) return Value();
      for (auto x : arr) items.push_back(from_simdjson(x));
      return Value::list(std::move(items));
    }
    case T::OBJECT: {
      Value d = Value::dict();
      simdjson::dom::object obj;
      if (e.get_object().get(obj)) return d;
      for (auto f : obj) {
        Value v = from_simdjson(f.value);
        if (Value* old = d.d().find_str(f.key)) *old = std::move(v);
        else d.d().entries.emplace_back(Value::str(std::string(f.key)), std::move(v));
      }
      return d;
    }
  }
  return Value();
}

// A \u escape of a code point beyond ASCII.
bool escapes_beyond_ascii(const std::string& t) {
  for (size_t i = 0; i + 5 < t.size(); ++i) {
    if (t[i] == '\\') {
      if (t[i + 1] == 'u' && (t.compare(i + 2, 2, "00") != 0 || (t[i + 4] != '0' && t[i + 4] != '1' &&
                                                                    t[i + 4] != '2' && t[i + 4] != '3' &&
                                                                    t[i + 4] != '4' && t[i + 4] != '5' &&
                                                                    t[i + 4] != '6' && t[i + 4] != '7')))
        return true;
      ++i;  // the escaped character
    }
  }
  return false;
}

bool has_digit_run(const std::string& s, size_t n) {
  size_t run = 0;
  for (char c : s) {
    run = (c >= '0' && c <= '9') ? run + 1 : 0;
    if (run >= n) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("mllog") {

TEST_CASE("JSON: what Python's json.loads accepts, and the values it gives, on generated texts") {
  const char* python = "/usr/bin/python3";
  if (std::getenv("CI") == nullptr && !std::ifstream(python)) {
    MESSAGE("SKIPPED: /usr/bin/python3 is missing (Debian: python3); it reads the same texts as the oracle");
    return;
  }
  REQUIRE_MESSAGE(std::ifstream(python).good(), "/usr/bin/python3 is missing; CI must have it");
  Gen g(20261207);
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(g.maybe_break(g.ws() + g.value(0) + g.ws()));
  // Texts Python's reading decides alone: nesting, extra data, bare words.
  for (const char* t : {"[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "[1 2]", "nul", "NaNx", "-Inf",
                        "\"\\ud800\\u12\"", "\"\\x41\"", "{\"a\" 1}", "{1:2}", "[]]", " ", ""})
    texts.push_back(t);
  referee::testing::TempDir dir("referee-json-oracle-");
  {
    std::ofstream in(dir.path / "in.txt");
    for (const auto& t : texts) in << hex(t) << "\n";
  }
  std::string script =
      "import json,sys\n"
      "for line in open(sys.argv[1]):\n"
      "    t = bytes.fromhex(line.strip()).decode('latin-1')\n"
      "    try:\n"
      "        print('ok ' + repr(json.loads(t)).encode('unicode_escape').decode('ascii'))\n"
      "    except ValueError:\n"
      "        print('error')\n";
  {
    std::ofstream py(dir.path / "oracle.py");
    py << script;
  }
  std::string cmd = std::string(python) + " " + (dir.path / "oracle.py").string() + " " + (dir.path / "in.txt").string() +
                    " > " + (dir.path / "out.txt").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream out(dir.path / "out.txt");
  std::string line;
  size_t i = 0, accepted = 0;
  while (std::getline(out, line) && i < texts.size()) {
    const std::string& t = texts[i++];
    bool ok = false;
    std::string err;
    Value v = referee::rules::value_from_json(t, &ok, &err);
    Json tree;
    std::string terr;
    bool tok = referee::mllog::parse_json_permissive(t, &tree, &terr);
    CHECK_MESSAGE(tok == ok, t);
    if (!ok) CHECK_MESSAGE(err == terr, t);
    if (line == "error") {
      CHECK_MESSAGE(!ok, "referee accepts what Python refuses: " << t);
      continue;
    }
    REQUIRE_MESSAGE(line.rfind("ok ", 0) == 0, line);
    CHECK_MESSAGE(ok, "referee refuses what Python accepts: " << t << " (" << err << ")");
    if (!ok) continue;
    ++accepted;
    // Two differences by design: a \u escape beyond ASCII is kept as UTF-8
    // bytes (the text itself is read as latin-1, byte by byte), and an
    // integer beyond 64 bits is the nearest double.
    std::string want = line.substr(3), got;
    if (escapes_beyond_ascii(t) || has_digit_run(want, 19)) continue;
    for (unsigned char c : referee::rules::py_repr(v)) {
      if (c == '\\') got += "\\\\";
      else if (c < 0x20 || c >= 0x7f) {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02x", c);
        got += b;
      } else got += static_cast<char>(c);
    }
    CHECK_MESSAGE(got == want, t);
  }
  CHECK(i == texts.size());
  CHECK(accepted > 1000);  // the corpus is mostly valid
}

TEST_CASE("JSON: what simdjson accepts is accepted, with the same values") {
  Gen g(77);
  simdjson::dom::parser parser;
  int both = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string t = g.maybe_break(g.ws() + g.value(0) + g.ws());
    std::string padded = t + std::string(simdjson::SIMDJSON_PADDING, '\0');
    simdjson::dom::element doc;
    if (parser.parse(padded.data(), t.size(), false).get(doc) != simdjson::SUCCESS) continue;
    bool ok = false;
    std::string err;
    Value v = referee::rules::value_from_json(t, &ok, &err);
    CHECK_MESSAGE(ok, t << " (" << err << ")");
    if (!ok) continue;
    ++both;
    CHECK_MESSAGE(same_value(v, from_simdjson(doc)), t);
  }
  CHECK(both > 1500);
}

TEST_CASE("JSON: errors name what is wrong and the column (and the line, in a text of several)") {
  struct Row {
    const char* text;
    const char* error;
  };
  const Row rows[] = {
      {"{\"a\": 1,}", "expected a property name in double quotes at column 9"},
      {"[1 2]", "expected ',' or ']' at column 4"},
      {"{\"a\" 1}", "expected ':' at column 6"},
      {"\"abc", "unterminated string at column 5"},
      {"\"a\x01\"", "invalid control character in string at column 3"},
      {"\"\\x\"", "invalid escape at column 4"},
      {"\"\\u12g4\"", "bad \\u escape at column 7"},
      {"-x", "bad number at column 2"},
      {"1.e5", "bad number at column 3"},
      {"1 2", "extra data after the JSON value at column 3"},
      {"@", "unexpected character '@' at column 1"},
      {"", "unexpected end of text at column 1"},
      {"[", "unexpected end of text at column 2"},
      {"[1", "unterminated array at column 3"},
      {"{\"a\":1", "unterminated object at column 7"},
      // A file of several lines: the line, and the column in it (as Python's json names them).
      {"{\n  \"a\": 1\n}\ngarbage\n", "extra data after the JSON value at line 4, column 1"},
      {"{\n  \"a\": 1,\n  \"b\": x\n}", "unexpected character 'x' at line 3, column 8"},
  };
  for (const auto& r : rows) {
    Json j;
    std::string err;
    CHECK_FALSE(referee::mllog::parse_json_permissive(r.text, &j, &err));
    CHECK_MESSAGE(err == r.error, r.text);
  }
  // As deep as Python reads (its recursion limit is 1000), and no deeper.
  Json j;
  std::string err;
  CHECK(referee::mllog::parse_json_permissive(std::string(900, '[') + std::string(900, ']'), &j, &err));
  CHECK_FALSE(referee::mllog::parse_json_permissive(std::string(1100, '[') + std::string(1100, ']'), &j, &err));
  CHECK(err.find("nesting too deep") == 0);
  // A NUL byte where a value should be is named whole.
  CHECK_FALSE(referee::mllog::parse_json_permissive(std::string("[\0]", 3), &j, &err));
  CHECK(err == std::string("unexpected character '\0' at column 2", 36));
}

TEST_CASE("JSON: a string's escapes decoded as Python does") {
  auto decoded = [](const std::string& text) {
    JsonCursor c(text);
    std::string_view raw;
    bool esc = false;
    REQUIRE(c.string(&raw, &esc));
    std::string out;
    if (esc) referee::mllog::decode_json_string(raw, &out);
    else out.assign(raw);
    return out;
  };
  CHECK(decoded(R"("plain")") == "plain");
  CHECK(decoded(R"("q\" b\\ s\/ \b\f\n\r\t")") == "q\" b\\ s/ \b\f\n\r\t");
  CHECK(decoded(R"("\u0041\u00e9")") == "A\xc3\xa9");
  CHECK(decoded(R"("\ud83d\ude00!")") == "\xf0\x9f\x98\x80!");
  CHECK(decoded(R"("\ud800x")") == "\xed\xa0\x80x");             // a lone surrogate stays itself
  CHECK(decoded(R"("\ud800\u0041")") == "\xed\xa0\x80" "A");      // not a pair
  CHECK(decoded("\"caf\xe9 \x7f\"") == "caf\xe9 \x7f");             // bytes as they are
  CHECK(decoded("\"0123456789abcdef\\n0123456789abcdef\"") == "0123456789abcdef\n0123456789abcdef");
}

TEST_CASE("reader: the fast path gives what the slow path gives, line by line") {
  Gen g(4242);
  int fast_cases = 0;
  for (int i = 0; i < 3000; ++i) {
    // An MLLOG payload, now and then with its members reordered, repeated, missing or broken.
    std::string time = g.pick(5) == 0 ? g.value(1) : g.number();
    std::string key = g.pick(6) == 0 ? g.value(1) : g.string();
    std::vector<std::string> members = {"\"key\": " + key, "\"time_ms\": " + time, "\"value\": " + g.value(1),
                                        "\"metadata\": " + g.value(1), "\"namespace\": \"\"",
                                        "\"event_type\": \"POINT_IN_TIME\""};
    std::shuffle(members.begin(), members.end(), g.rng);
    if (g.pick(8) == 0) members.pop_back();
    if (g.pick(8) == 0) members.push_back("\"key\": " + g.value(1));
    if (g.pick(8) == 0) members.push_back("\"time_ms\": " + g.value(1));
    std::string payload = "{";
    for (size_t m = 0; m < members.size(); ++m) payload += (m ? ", " : "") + members[m];
    payload = g.maybe_break(payload + "}");
    std::replace(payload.begin(), payload.end(), '\n', ' ');  // one line
    std::replace(payload.begin(), payload.end(), '\r', ' ');
    referee::mllog::LogReader reader;
    referee::mllog::ParsedLog log;
    std::string text = ":::MLLOG " + payload + "\n";
    reader.parse(text, &log);
    REQUIRE(log.mllog_lines == 1);
    // What the slow path's tree says of the same payload.
    Json j;
    std::string err;
    bool ok = referee::mllog::parse_json_permissive(payload, &j, &err) && j.kind == Json::Kind::Object;
    const Json* k = ok ? j.find("key") : nullptr;
    const Json* t = ok ? j.find("time_ms") : nullptr;
    ok = ok && k && k->kind == Json::Kind::String && t && j.find("value") && j.find("metadata");
    double want_time = 0;
    if (ok) {
      if (t->kind == Json::Kind::Int) want_time = static_cast<double>(t->i);
      else if (t->kind == Json::Kind::Float) want_time = t->f;
      else if (t->kind == Json::Kind::Bool) want_time = t->b ? 1.0 : 0.0;
      else if (t->kind == Json::Kind::String) ok = referee::mllog::py_float_from_string(t->s, &want_time);
      else ok = false;
    }
    CHECK_MESSAGE(log.events.size() == (ok ? 1u : 0u), payload);
    if (ok && log.events.size() == 1) {
      ++fast_cases;
      CHECK_MESSAGE(log.keys[log.events[0].key_id] == k->s, payload);
      double got = log.events[0].time_ms;
      CHECK_MESSAGE(((std::isnan(got) && std::isnan(want_time)) || got == want_time), payload);
    }
    if (!ok && !log.errors.empty()) CHECK_FALSE(log.errors[0].message.empty());
  }
  CHECK(fast_cases > 1000);
}

}  // TEST_SUITE("mllog")
