// The review API as transcripts: every file tests/data/review/*.txt is a
// sequence of requests with the answers expected, run against a fresh
// temporary store (tests/review_fixture.h: round training-3.1.0 under review
// with NVIDIA, Google and Dell; training-3.0.0 published; users of every
// role). A new case is a new file, not new code. The format, one directive a
// line ('#' starts a comment):
//
//   state final                          the round's state (review | final | published)
//   deadline objections_due 2020-01-01   a schedule column of training-3.1.0
//   POST /api/v1/objections as goog      a request (as USER: with USER's token; none: no token)
//   If-Match: 2                          a header of that request
//   body {"round": "3.1.0"}              its body (one line)
//   => 201                               send it; the status must be this
//   contains now 2                       the body contains this text
//   lacks NVIDIA                         ... does not
//   json objection.version = 2           a field (dotted path, [N] for an item) as text
//   keep id objection.id                 remember a field: {id} is replaced in later lines
//   save missing                         remember the whole answer (status and body)
//   same-as missing                      the answer is the remembered one, byte for byte
//   same-as missing with 999=1           ... after replacing 999 by 1 in the remembered body
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mllog/json_writer.h"
#include "tests/review_fixture.h"

namespace {

namespace fs = std::filesystem;
using namespace referee::testing::review_fixture;

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// A scalar as text (strings without quotes); "" when absent.
std::string scalar(const Json* v) {
  if (!v) return "<absent>";
  switch (v->kind) {
    case Json::Kind::String: return v->s;
    case Json::Kind::Int: return std::to_string(v->i);
    case Json::Kind::Float: return referee::mllog::py_float_repr(v->f);
    case Json::Kind::Bool: return v->b ? "true" : "false";
    case Json::Kind::Null: return "null";
    default: return "<not a scalar>";
  }
}

// objection.results[0] in `j`.
const Json* at(const Json& j, const std::string& path) {
  const Json* cur = &j;
  std::stringstream ss(path);
  std::string part;
  while (cur && std::getline(ss, part, '.')) {
    size_t br = part.find('[');
    std::string name = part.substr(0, br);
    if (!name.empty()) cur = cur->find(name.c_str());
    while (cur && br != std::string::npos) {
      size_t end = part.find(']', br);
      size_t k = std::stoul(part.substr(br + 1, end - br - 1));
      cur = k < cur->items.size() ? &cur->items[k] : nullptr;
      br = part.find('[', end);
    }
  }
  return cur;
}

void run_transcript(const fs::path& file) {
  Review f;
  std::ifstream in(file);
  REQUIRE(in);
  std::map<std::string, std::string> vars;
  std::map<std::string, Response> saved;
  Request req;
  std::string user;
  bool pending = false;
  Response got;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    for (const auto& [k, v] : vars) {
      std::string key = "{" + k + "}";
      for (size_t p = line.find(key); p != std::string::npos; p = line.find(key, p + v.size())) line.replace(p, key.size(), v);
    }
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    INFO(file.filename().string() << ":" << n << ": " << line);
    size_t sp = line.find(' ');
    std::string word = line.substr(0, sp), rest = sp == std::string::npos ? "" : trim(line.substr(sp + 1));
    if (word == "GET" || word == "POST" || word == "PUT" || word == "PATCH" || word == "DELETE") {
      req = Request{};
      req.method = word;
      size_t as = rest.find(" as ");
      std::string target = as == std::string::npos ? rest : rest.substr(0, as);
      user = as == std::string::npos ? "" : trim(rest.substr(as + 4));
      size_t q = target.find('?');
      req.path = target.substr(0, q);
      if (q != std::string::npos) {
        std::stringstream qs(target.substr(q + 1));
        std::string kv;
        while (std::getline(qs, kv, '&')) {
          size_t eq = kv.find('=');
          req.query.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
        }
      }
      pending = true;
    } else if (word == "If-Match:") {
      REQUIRE(pending);
      req.if_match = rest;
    } else if (word == "body") {
      REQUIRE(pending);
      req.body = rest;
    } else if (word == "=>") {
      REQUIRE(pending);
      if (user == "local-admin") req.local_admin = true;
      else if (!user.empty()) req.token = f.token.at(user);
      got = f.api->handle(req);
      pending = false;
      CHECK_MESSAGE(std::to_string(got.status) == rest, got.body);
    } else if (word == "contains") {
      CHECK_MESSAGE(contains(got.body, rest), got.body);
    } else if (word == "lacks") {
      CHECK_MESSAGE(!contains(got.body, rest), got.body);
    } else if (word == "json" || word == "keep") {
      Json j = parse(got.body);
      if (word == "json") {
        size_t eq = rest.find(" = ");
        REQUIRE(eq != std::string::npos);
        CHECK_MESSAGE(scalar(at(j, rest.substr(0, eq))) == rest.substr(eq + 3), got.body);
      } else {
        size_t s2 = rest.find(' ');
        REQUIRE(s2 != std::string::npos);
        const Json* v = at(j, rest.substr(s2 + 1));
        REQUIRE_MESSAGE(v, got.body);
        vars[rest.substr(0, s2)] = scalar(v);
      }
    } else if (word == "save") {
      saved[rest] = got;
    } else if (word == "same-as") {
      std::string name = rest, from, to;
      if (size_t w = rest.find(" with "); w != std::string::npos) {
        name = rest.substr(0, w);
        std::string sub = trim(rest.substr(w + 6));
        size_t eq = sub.find('=');
        REQUIRE(eq != std::string::npos);
        from = sub.substr(0, eq);
        to = sub.substr(eq + 1);
      }
      REQUIRE(saved.count(name));
      std::string want = saved[name].body;
      if (!from.empty())
        for (size_t p = want.find(from); p != std::string::npos; p = want.find(from, p + to.size())) want.replace(p, from.size(), to);
      CHECK(got.status == saved[name].status);
      CHECK(got.body == want);
    } else if (word == "state") {
      f.set_state(rest);
    } else if (word == "deadline") {
      size_t s2 = rest.find(' ');
      REQUIRE(s2 != std::string::npos);
      f.set_deadline(rest.substr(0, s2), rest.substr(s2 + 1));
    } else {
      FAIL("unknown directive " << word);
    }
  }
  CHECK_MESSAGE(!pending, "a request without => at the end of " << file.filename().string());
}

}  // namespace

TEST_SUITE("review") {
  TEST_CASE("review API transcripts in tests/data/review") {
    fs::path root = fs::path(REFEREE_TEST_DATA) / "review";
    REQUIRE(fs::is_directory(root));
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root))
      if (e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 5);
    for (const auto& file : files) {
      std::string name = file.filename().string();
      CAPTURE(name);
      run_transcript(file);
    }
  }
}
