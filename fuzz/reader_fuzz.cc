// libFuzzer target: the MLLOG reader and the permissive JSON parser.
//
// Besides "does not crash", it checks the reader against a slow, obviously
// correct model of the consortium's line splitting: universal newlines, a
// line is an MLLOG line when it holds ":::MLLOG ", its JSON is the text after
// the last token, stripped. Every MLLOG line must become exactly one event or
// one error, in order, with the right line numbers and a JSON view that lies
// inside the input.
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mllog/json.h"
#include "mllog/reader.h"
#include "rules/interp.h"
#include "rules/value.h"

namespace {

using referee::mllog::Json;
using referee::mllog::kToken;
using referee::mllog::LogReader;
using referee::mllog::ParsedLog;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "reader_fuzz invariant broken: %s\n", what);
  std::abort();
}

#define CHECK(cond) \
  do {              \
    if (!(cond)) fail(#cond); \
  } while (0)

struct ModelLine {
  uint32_t file_line;
  std::string_view json;
};

// The reference model: split on \n, \r\n and a lone \r.
std::vector<ModelLine> model(std::string_view text) {
  std::vector<ModelLine> out;
  size_t pos = 0;
  uint32_t file_line = 1;
  while (pos <= text.size()) {
    size_t e = pos;
    while (e < text.size() && text[e] != '\n' && text[e] != '\r') ++e;
    std::string_view line = text.substr(pos, e - pos);
    size_t last = line.rfind(kToken);
    if (last != std::string_view::npos) {
      std::string_view j = line.substr(last + kToken.size());
      while (!j.empty() && referee::mllog::is_py_space(static_cast<unsigned char>(j.back())))
        j.remove_suffix(1);
      out.push_back({file_line, j});
    }
    if (e >= text.size()) break;
    pos = e + ((text[e] == '\r' && e + 1 < text.size() && text[e + 1] == '\n') ? 2 : 1);
    ++file_line;
  }
  return out;
}

void check_reader(std::string_view text) {
  static LogReader reader;  // reused across inputs, as in real use
  ParsedLog log;
  reader.parse(text, &log);

  CHECK(log.bytes == text.size());
  CHECK(log.events.size() + log.errors.size() == log.mllog_lines);

  const char* lo = text.data();
  const char* hi = text.data() + text.size();
  for (const auto& ev : log.events) {
    CHECK(ev.key_id < log.keys.size());
    CHECK(ev.lineno < log.mllog_lines);
    CHECK(ev.json.data() >= lo && ev.json.data() + ev.json.size() <= hi);
  }
  for (const auto& er : log.errors) {
    CHECK(er.lineno < log.mllog_lines);
    CHECK(!er.message.empty());
  }
  // keys are distinct
  for (size_t i = 0; i < log.keys.size(); ++i)
    for (size_t k = i + 1; k < log.keys.size(); ++k) CHECK(log.keys[i] != log.keys[k]);

  // Against the model: merge events and errors by lineno.
  std::vector<ModelLine> want = model(text);
  CHECK(want.size() == log.mllog_lines);
  std::vector<int> seen(want.size(), 0);
  for (const auto& ev : log.events) {
    ++seen[ev.lineno];
    CHECK(ev.file_line == want[ev.lineno].file_line);
    CHECK(ev.json.data() == want[ev.lineno].json.data());
    CHECK(ev.json.size() == want[ev.lineno].json.size());
    // An event's JSON parses with Python semantics and is an object with a key.
    Json j;
    std::string err;
    CHECK(referee::mllog::parse_json_permissive(ev.json, &j, &err));
    CHECK(j.kind == Json::Kind::Object);
    const Json* key = j.find("key");
    CHECK(key && key->kind == Json::Kind::String);
    CHECK(key->s == log.keys[ev.key_id]);
  }
  for (const auto& er : log.errors) {
    ++seen[er.lineno];
    CHECK(er.file_line == want[er.lineno].file_line);
  }
  for (int n : seen) CHECK(n == 1);
  // events in file order
  for (size_t i = 1; i < log.events.size(); ++i) {
    CHECK(log.events[i - 1].lineno < log.events[i].lineno);
    CHECK(log.events[i - 1].file_line < log.events[i].file_line);
  }
}

void check_json(std::string_view text) {
  Json j;
  std::string err;
  bool ok = referee::mllog::parse_json_permissive(text, &j, &err);
  if (!ok) CHECK(!err.empty());
  // The interpreter's view of the same text (the same reading, to Values).
  bool vok = false;
  std::string verr;
  referee::rules::Value v = referee::rules::value_from_json(text, &vok, &verr);
  if (ok) CHECK(vok);
  if (vok) (void)referee::rules::py_repr(v);
  // Differential: what a strict parser (simdjson) accepts, the Python-compatible reading accepts too.
  static simdjson::dom::parser parser;
  std::string padded(text);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element doc;
  bool strict_ok = parser.parse(padded.data(), text.size(), false).get(doc) == simdjson::SUCCESS;
  if (strict_ok && !ok && err.find("nesting too deep") == std::string::npos) {
    std::fprintf(stderr, "simdjson accepts, parse_json_permissive rejects: %s\n", err.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_reader(text);
  check_json(text);
  return 0;
}
