// Per-file compliance, as data: every folder of tests/data/compliance/ holds a
// rules tree (rules/compliance_checker/test_1.0.0/*.yaml), a log (log.txt) and
// the expected verdict (expected.txt):
//
//   # comment
//   compliant: false
//   error line=4 rule=common.yaml KEY run_start CHECK
//     message: KeyError        <- optional: the finding's message contains this
//   warning line=3 rule=common.yaml KEY x REQ EXACTLY_ONE
//
// Findings are listed errors first, then warnings, in the order check_log
// returns them. A new quirk to pin down is a new folder, not new code.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/ruleset.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee::rules;
namespace mllog = referee::mllog;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

struct Expected {
  bool compliant = true;
  std::vector<std::string> findings;                        // "error line=N rule=R"
  std::vector<std::pair<size_t, std::string>> message_has;  // finding index, substring
};

Expected read_expected(const fs::path& p) {
  Expected out;
  bool have_verdict = false;
  std::istringstream in(read_text(p));
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("compliant:", 0) == 0) {
      std::string v = trim(line.substr(10));
      REQUIRE_MESSAGE((v == "true" || v == "false"), p.string() << ": bad verdict line: " << line);
      out.compliant = v == "true";
      have_verdict = true;
    } else if (line.rfind("error ", 0) == 0 || line.rfind("warning ", 0) == 0) {
      out.findings.push_back(line);
    } else if (line.rfind("message:", 0) == 0) {
      REQUIRE_MESSAGE(!out.findings.empty(), p.string() << ": 'message:' before any finding");
      out.message_has.emplace_back(out.findings.size() - 1, trim(line.substr(8)));
    } else {
      FAIL(p.string() << ": cannot read line: " << line);
    }
  }
  REQUIRE_MESSAGE(have_verdict, p.string() << ": no 'compliant:' line");
  return out;
}

std::string describe(const char* kind, const Finding& f) {
  return std::string(kind) + " line=" + std::to_string(f.line) + " rule=" + f.rule;
}

// Every word of a verdict's findings, in order.
std::vector<std::string> full_text(const FileVerdict& v) {
  std::vector<std::string> out;
  auto add = [&](const char* kind, const Finding& f) {
    out.push_back(describe(kind, f) + " key=" + f.key + "\n message: " + f.message + "\n expected: " + f.expected +
                  "\n found: " + f.found + "\n log: " + f.log_text + "\n hint: " + f.hint);
  };
  for (const auto& f : v.errors) add("error", f);
  for (const auto& f : v.warnings) add("warning", f);
  return out;
}

// The log fed to a LogStream a line at a time, as a live run reads it. Each
// piece, and each earlier line sent again to a rule file enqueued late, is a
// copy that is overwritten as soon as it has been handed over: whatever the
// checker keeps of a line past that is its own.
FileVerdict streamed_verdict(const RuleSet& rules, std::string_view text, bool* whole) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(at, end - at));
    at = end;
  }
  LogStream stream(rules);
  for (size_t k = 0; k < lines.size(); ++k) {
    TextPieces prefix = [&](const std::function<void(std::string_view)>& sink) {
      for (size_t i = 0; i < k; ++i) {
        std::string piece(lines[i]);
        sink(piece);
        std::fill(piece.begin(), piece.end(), '#');
      }
    };
    std::string piece(lines[k]);
    stream.add(piece, prefix);
    std::fill(piece.begin(), piece.end(), '#');
  }
  *whole = stream.whole_log();
  return *whole ? FileVerdict{} : stream.final_verdict();
}

using referee::testing::TempDir;

}  // namespace

TEST_SUITE("compliance") {

TEST_CASE("golden cases in tests/data/compliance") {
  fs::path root = fs::path(REFEREE_TEST_DATA) / "compliance";
  REQUIRE(fs::is_directory(root));
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 19);

  mllog::LogReader reader;
  for (const auto& dir : cases) {
    std::string name = dir.filename().string();
    INFO("case " << name);
    std::string error;
    auto rules = RuleSet::load((dir / "rules").string(), RulesetId{"test", "1.0.0"}, &error);
    REQUIRE_MESSAGE(rules, error);
    mllog::FileBuffer buf;
    REQUIRE_MESSAGE(buf.open((dir / "log.txt").string(), &error), error);
    mllog::ParsedLog log;
    reader.parse(buf.view(), &log);
    FileVerdict verdict = check_log(*rules, log);
    Expected want = read_expected(dir / "expected.txt");

    std::vector<std::string> got;
    std::vector<const Finding*> found;
    for (const auto& f : verdict.errors) {
      got.push_back(describe("error", f));
      found.push_back(&f);
    }
    for (const auto& f : verdict.warnings) {
      got.push_back(describe("warning", f));
      found.push_back(&f);
    }
    std::string all;
    for (size_t i = 0; i < got.size(); ++i) all += "\n  " + got[i] + "  (" + found[i]->message + ")";
    CHECK_MESSAGE(verdict.compliant == want.compliant, name << ": findings:" << all);
    CHECK_MESSAGE(verdict.compliant == verdict.errors.empty(), name);
    CHECK_MESSAGE(got == want.findings, name << ": findings:" << all);
    for (const auto& has : want.message_has) {
      const size_t i = has.first;
      const auto& text = has.second;
      if (i >= found.size()) continue;  // reported above
      CHECK_MESSAGE(found[i]->message.find(text) != std::string::npos,
                    name << ": finding " << got[i] << " has message '" << found[i]->message << "', expected it to contain '"
                         << text << "'");
    }
    CHECK(verdict.mllog_lines == log.mllog_lines);

    // Read live, line by line: the same findings, word for word (a rule set
    // that reads the whole log is only checked whole).
    bool whole = false;
    FileVerdict live = streamed_verdict(*rules, buf.view(), &whole);
    if (!whole) {
      CHECK_MESSAGE(live.compliant == verdict.compliant, name);
      std::vector<std::string> a = full_text(verdict), b = full_text(live);
      std::string diff;
      for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
        if (i >= a.size() || i >= b.size() || a[i] != b[i])
          diff += "\n  batch: " + (i < a.size() ? a[i] : "-") + "\n  live:  " + (i < b.size() ? b[i] : "-");
      CHECK_MESSAGE(diff.empty(), name << ": batch and live findings differ:" << diff);
    }
  }
}

TEST_CASE("a rule file with a construct outside the subset fails to load, naming file, KEY and construct") {
  struct Row {
    const char* yaml;
    const char* names;      // the record
    const char* construct;  // the construct
  };
  static const Row rows[] = {
      {"- KEY:\n    NAME: opt_name\n    REQ: EXACTLY_ONE\n    CHECK: \" [x for x in v['value']] \"\n", "opt_name",
       "comprehension"},
      {"- KEY:\n    NAME: seed\n    PRE: \" f = lambda x: x \"\n", "seed", "lambda"},
      {"- KEY:\n    NAME: eval_accuracy\n    ATLEAST_ONE_CHECK: \" sorted(v['value'], key=abs) \"\n", "eval_accuracy",
       "keyword argument"},
      {"- KEY:\n    NAME: run_stop\n    CHECK:\n      - \" True \"\n      - \" f'{v}' \"\n", "run_stop", "f-string"},
      {"- BEGIN:\n    CODE: |\n        x = 0\n        while x < 3:\n            x += 1\n", "BEGIN", "while"},
      {"- END:\n    PRE: \" import os \"\n", "END", "os"},
  };
  for (const auto& r : rows) {
    TempDir tmp;
    fs::path dir = tmp.path / "compliance_checker" / "test_1.0.0";
    fs::create_directories(dir);
    std::ofstream(dir / "common.yaml") << r.yaml;
    std::ofstream(dir / "fine.yaml") << "- KEY:\n    NAME: run_start\n    REQ: EXACTLY_ONE\n";
    std::string error;
    auto rules = RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error);
    CHECK(rules == nullptr);
    CHECK_MESSAGE(error.find("common.yaml") != std::string::npos, error);
    CHECK_MESSAGE(error.find(r.names) != std::string::npos, error);
    CHECK_MESSAGE(error.find(r.construct) != std::string::npos, error);
  }
}

TEST_CASE("RuleSet::load reports a missing rule set and bad records") {
  TempDir tmp;
  std::string error;
  CHECK(RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error) == nullptr);
  CHECK(error.find("test-1.0.0") != std::string::npos);

  fs::path dir = tmp.path / "compliance_checker" / "test_1.0.0";
  fs::create_directories(dir);
  std::ofstream(dir / "common.yaml") << "- KEY:\n    NAME: x\n    REQ: SOMETIMES\n";
  error.clear();
  CHECK(RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error) == nullptr);
  CHECK(error.find("SOMETIMES") != std::string::npos);

  std::ofstream(dir / "common.yaml") << "- KEY:\n    NAME: x\n    CHEK: \" True \"\n";
  error.clear();
  CHECK(RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error) == nullptr);
  CHECK(error.find("CHEK") != std::string::npos);

  std::ofstream(dir / "common.yaml") << "- KEY:\n    NAME: x\n    REQ: AT_LEAST(3)\n- KEY:\n    NAME: y\n    REQ: AT_LEAST_ONE_OR(a, b)\n";
  error.clear();
  auto rs = RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error);
  REQUIRE_MESSAGE(rs, error);
  REQUIRE(rs->file("test_1.0.0/common.yaml"));
  CHECK(rs->file("test_1.0.0/common.yaml")->keys.size() == 2);
  CHECK(rs->entry() == "test_1.0.0/common.yaml");
  CHECK(rs->sha256().size() == 64);
}

TEST_CASE("a lazily loaded rule set compiles only the files a log enqueues, once; a broken one surfaces when used") {
  TempDir tmp;
  fs::path dir = tmp.path / "compliance_checker" / "test_1.0.0";
  fs::create_directories(dir);
  std::ofstream(dir / "common.yaml") << "- BEGIN:\n    CODE: enqueue_config('test_1.0.0/a.yaml')\n"
                                        "- KEY:\n    NAME: submission_benchmark\n    REQ: EXACTLY_ONE\n"
                                        "    POST: enqueue_config('test_1.0.0/{}.yaml'.format(v['value']))\n";
  std::ofstream(dir / "a.yaml") << "- KEY:\n    NAME: x\n    REQ: AT_LEAST_ONE\n";
  std::ofstream(dir / "broken.yaml") << "- KEY:\n    NAME: x\n    CHECK: \" v['value'] == \"\n";
  std::ofstream(dir / "unused.yaml") << "- KEY:\n    NAME: y\n";
  std::string error;
  // Eager (the default) refuses the rule set.
  CHECK(RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error) == nullptr);
  CHECK(error.find("broken.yaml") != std::string::npos);
  auto rs = RuleSet::load(tmp.path.string(), RulesetId{"test", "1.0.0"}, &error, LoadMode::Lazy);
  REQUIRE_MESSAGE(rs, error);
  CHECK(rs->file_count() == 4);
  CHECK(rs->compiled_count() == 0);
  auto check = [&](const std::string& bench) {
    std::string text = ":::MLLOG {\"time_ms\": 1, \"key\": \"submission_benchmark\", \"value\": \"" + bench +
                       "\", \"metadata\": {}}\n:::MLLOG {\"time_ms\": 2, \"key\": \"x\", \"value\": 1, \"metadata\": {}}\n";
    mllog::LogReader reader;
    mllog::ParsedLog log;
    reader.parse(text, &log);
    return check_log(*rs, log);
  };
  FileVerdict ok = check("a");  // enqueues a.yaml twice: compiled once
  CHECK(ok.compliant);
  CHECK(rs->compiled_count() == 2);
  CHECK(rs->load_errors().empty());
  FileVerdict bad = check("broken");
  CHECK_FALSE(bad.compliant);
  bool named = false;
  for (const auto& f : bad.errors) named |= f.message.find("rule file test_1.0.0/broken.yaml cannot be loaded") != std::string::npos;
  CHECK(named);
  REQUIRE(rs->load_errors().size() == 1);
  check("broken");
  CHECK(rs->load_errors().size() == 1);  // reported once
  CHECK(rs->compiled_count() == 2);
  CHECK_FALSE(rs->compile_all(&error));
  CHECK(error.find("broken.yaml") != std::string::npos);

  // The command line: a log that uses the broken file cannot be judged (exit 2); one that does not is.
  std::ofstream(tmp.path / "a.txt") << ":::MLLOG {\"time_ms\": 1, \"key\": \"submission_benchmark\", \"value\": \"a\", "
                                       "\"metadata\": {}}\n:::MLLOG {\"time_ms\": 2, \"key\": \"x\", \"value\": 1, \"metadata\": {}}\n";
  std::ofstream(tmp.path / "b.txt") << ":::MLLOG {\"time_ms\": 1, \"key\": \"submission_benchmark\", \"value\": \"broken\", "
                                       "\"metadata\": {}}\n";
  std::string out;
  std::string args = " --ruleset test-1.0.0 --rules '" + tmp.path.string() + "'";
  CHECK(referee::testing::run_referee("check '" + (tmp.path / "a.txt").string() + "'" + args, &out) == 0);
  CHECK(referee::testing::run_referee("check '" + (tmp.path / "b.txt").string() + "'" + args, &out) == 2);
  CHECK_MESSAGE(out.find("rule set test-1.0.0 is broken") != std::string::npos, out);
  CHECK(referee::testing::run_referee("rules list --ruleset test-1.0.0 --rules '" + tmp.path.string() + "'", &out) == 2);
}

TEST_CASE("rule set names and REQ values are read as the patterns say") {
  RulesetId id;
  REQUIRE(RulesetId::parse("training-3.1.0", &id));
  CHECK(id.dir() == "training_3.1.0");
  REQUIRE(RulesetId::parse("HPC_3.0.0", &id));
  CHECK(id.id() == "hpc-3.0.0");
  REQUIRE(RulesetId::parse("10.20.300", &id));
  CHECK(id.id() == "training-10.20.300");
  REQUIRE(RulesetId::parse("a1b2-0.7.0", &id));
  CHECK(id.usage == "a1b2");
  for (const char* bad : {"", "3.1", "3.1.0.0", "training-3.1", "-3.1.0", "1a-3.1.0", "training 3.1.0", "training-3.1.0 ",
                          "training--3.1.0", "training-3.1.x", "training-", "3..1.0", ".3.1.0"})
    CHECK_MESSAGE(!RulesetId::parse(bad, &id), std::string(bad));

  TempDir tmp;
  auto req_loads = [&](const std::string& req) {
    std::ofstream(tmp.path / "r.yaml") << "- KEY:\n    NAME: x\n    REQ: " << req << "\n";
    RuleFile rf;
    std::string error;
    bool ok = load_rule_file((tmp.path / "r.yaml").string(), "r.yaml", &rf, &error);
    if (!ok) CHECK_MESSAGE(error.find("unknown REQ") != std::string::npos, error);
    return ok;
  };
  for (const char* good : {"EXACTLY_ONE", "AT_LEAST_ONE", "OPTIONAL", "AT_LEAST(2)", "AT_LEAST(10)", "AT_LEAST_ONE_OR(a, b)",
                           "AT_LEAST_ONE_OR()"})
    CHECK_MESSAGE(req_loads(good), std::string(good));
  for (const char* bad : {"EXACTLY_TWO", "AT_LEAST()", "AT_LEAST(x)", "AT_LEAST(2", "AT_LEAST_ONE_OR(a))", "OPTIONAL_", "at_least_one"})
    CHECK_MESSAGE(!req_loads(bad), std::string(bad));
}

}  // TEST_SUITE("compliance")
