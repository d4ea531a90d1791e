// The live checker against the full re-check it replaces: for real logs of
// rounds 3.0 and 3.1 and mutated copies of them, the irreparable finding it
// reports (when, line, rule) and its verdicts must be those of the batch
// checker run over the lines so far.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/live_check.h"
#include "mllog/reader.h"
#include "rules/compliance.h"
#include "rules/source.h"
#include "tests/mutate.h"
#include "tests/reference_data.h"
#include "tests/temp_dir.h"

using namespace referee;
using namespace referee::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The live checker as it was: the whole text kept, the batch checker re-run
// over all of it at every check (but for findings about lines that rule code
// made, which later lines change).
class FullRecheck {
 public:
  explicit FullRecheck(const rules::RuleSet& rules) : rules_(rules) {}
  void add_line(const std::string& line) {
    text_ += line;
    text_ += '\n';
  }
  std::optional<rules::Finding> check() {
    if (reported_) return std::nullopt;
    mllog::ParsedLog log;
    reader_.parse(text_, &log);
    if (auto f = harness::second_run_start(log)) {
      reported_ = true;
      return f;
    }
    for (const auto& f : rules::check_log(rules_, log).errors)
      if (harness::is_irreparable(f) && (f.key.empty() || log.find_key(f.key) >= 0)) {
        reported_ = true;
        return f;
      }
    return std::nullopt;
  }
  rules::FileVerdict verdict() {
    mllog::ParsedLog log;
    reader_.parse(text_, &log);
    return rules::check_log(rules_, log);
  }

 private:
  const rules::RuleSet& rules_;
  std::string text_;
  mllog::LogReader reader_;
  bool reported_ = false;
};

std::string describe(const rules::Finding& f) {
  return "line " + std::to_string(f.line) + " [" + f.rule + "] key=" + f.key + " " + f.message + " found=" + f.found;
}

std::vector<std::string> described(const std::vector<rules::Finding>& v, bool drop_end) {
  std::vector<std::string> out;
  for (const auto& f : v)
    if (!drop_end || f.rule.find(" END ") == std::string::npos) out.push_back(describe(f));
  return out;
}

struct Outcome {
  size_t at = SIZE_MAX;  // index of the line after which the finding came
  std::string finding;
};

// Feeds `lines` to the live checker and to the full re-check, checking both
// after the lines `check_at` says, and compares what they report, the
// verdict so far (at a few of those points) and the final verdict.
Outcome compare(const rules::RuleSet& rules, const std::vector<std::string>& lines, size_t every,
                const std::string& label, size_t verdict_every = 0) {
  harness::LiveChecker live(rules, 24h);
  FullRecheck old(rules);
  Outcome a, b;
  bool first = true;
  for (size_t i = 0; i < lines.size(); ++i) {
    old.add_line(lines[i]);
    auto f = live.add_line(lines[i]);  // checks on its first MLLOG line only (the interval is a day)
    bool mllog = lines[i].find(mllog::kToken) != std::string::npos;
    bool check = (mllog && first) || i % every == every - 1 || i + 1 == lines.size();
    if (mllog) first = false;
    if (!check) {
      REQUIRE_FALSE(f.has_value());
      continue;
    }
    if (!f) f = live.check_now();
    auto g = old.check();
    if (f && a.at == SIZE_MAX) a = {i, describe(*f)};
    if (g && b.at == SIZE_MAX) b = {i, describe(*g)};
    if (verdict_every && (i / every) % verdict_every == 0 && a.at == SIZE_MAX) {
      INFO(label << " after line " << i);
      CHECK(described(live.verdict_so_far().errors, true) == described(old.verdict().errors, true));
      CHECK(described(live.verdict_so_far().warnings, true) == described(old.verdict().warnings, true));
    }
  }
  INFO(label);
  if (live.whole_log()) {
    // Checked in full when the MLLOG lines doubled: the same finding, later.
    CHECK(a.at >= b.at);
    CHECK((a.at == SIZE_MAX) == (b.at == SIZE_MAX));
    if (a.at != SIZE_MAX) {
      FullRecheck then(rules);
      for (size_t i = 0; i <= a.at; ++i) then.add_line(lines[i]);
      auto g = then.check();
      REQUIRE(g.has_value());
      CHECK(a.finding == describe(*g));
    }
  } else {
    CHECK(a.at == b.at);
    CHECK(a.finding == b.finding);
  }
  auto lv = live.final_verdict();
  auto ov = old.verdict();
  CHECK(lv.compliant == ov.compliant);
  CHECK(described(lv.errors, false) == described(ov.errors, false));
  CHECK(described(lv.warnings, false) == described(ov.warnings, false));
  return a;
}

std::vector<fs::path> reference_logs(size_t stride) {
  std::vector<fs::path> out;
  for (const char* round : {"training_results_v3.0", "training_results_v3.1"}) {
    std::vector<fs::path> all;
    for (const auto& e : fs::recursive_directory_iterator(reference_dir() + "/mlperf/" + round)) {
      std::string n = e.path().filename().string();
      if (e.is_regular_file() && n.rfind("result_", 0) == 0 && e.path().extension() == ".txt") all.push_back(e.path());
    }
    std::sort(all.begin(), all.end());
    for (size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  }
  return out;
}

std::unique_ptr<rules::RuleSet> ruleset_for(const std::string& id) {
  rules::RuleSource src;
  std::string error;
  auto rs = rules::resolve_ruleset(id, reference_rules(), &src, &error);
  REQUIRE_MESSAGE(rs, error);
  return rs;
}

// A rule set of our own under <dir>/compliance_checker/training_9.9.9/.
std::unique_ptr<rules::RuleSet> own_rules(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  fs::path d = dir / "compliance_checker" / "training_9.9.9";
  fs::create_directories(d);
  for (const auto& [name, text] : files) write_bytes(d / name, text);
  std::string error;
  rules::RulesetId id;
  REQUIRE(rules::RulesetId::parse("training-9.9.9", &id));
  auto rs = rules::RuleSet::load(dir.string(), id, &error);
  REQUIRE_MESSAGE(rs, error);
  return rs;
}

std::string line(const std::string& key, const std::string& value, int t = 1) {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(t) + ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" +
         key + "\", \"value\": " + value + ", \"metadata\": {\"file\": \"x.py\", \"lineno\": 1}}";
}

}  // namespace

TEST_SUITE("harness") {
  TEST_CASE("live: every log of rounds 3.0 and 3.1, as the full re-check sees it") {
    if (!have_reference_data()) return;
    auto rs30 = ruleset_for("training-3.0.0");
    auto rs31 = ruleset_for("training-3.1.0");
    size_t n = 0, reported = 0;
    // The sanitizer build takes every 8th log; the release build every one.
    const size_t stride = referee::testing::kSanitized ? 8 : 1;
    for (const auto& p : reference_logs(stride)) {
      const auto& rs = p.string().find("v3.0") != std::string::npos ? *rs30 : *rs31;
      auto lines = split_lines(read_bytes(p));
      Outcome o = compare(rs, lines, std::max<size_t>(1, lines.size() / 12), p.string(), 4);
      reported += o.at != SIZE_MAX;
      ++n;
    }
    MESSAGE(n << " logs, " << reported << " with an irreparable finding");
    CHECK(n * stride > 600);
  }

  TEST_CASE("live: mutated logs report the same finding at the same line as the full re-check") {
    if (!have_reference_data()) return;
    const auto& rs = rules31();
    const auto bert = split_lines(read_bytes(kBert.file(0)));
    const auto ssd = split_lines(read_bytes(kSsd.file(0)));
    const size_t start = index_of(bert, key_text("run_start"));
    const size_t stop = index_of(bert, key_text("run_stop"));
    struct Case {
      std::string name;
      std::vector<std::string> lines;
      bool irreparable;
    };
    std::vector<Case> cases;
    auto with = [&](std::string name, std::vector<std::string> base, auto edit, bool irreparable) {
      edit(base);
      cases.push_back({std::move(name), std::move(base), irreparable});
    };
    with("as published", bert, [](auto&) {}, false);
    with("run_stop dropped", bert, [&](auto& l) { l.erase(l.begin() + static_cast<long>(stop)); }, false);
    with("run_stop aborted", bert, [&](auto& l) { l[stop] = replace_once(l[stop], "\"success\"", "\"aborted\""); }, false);
    with("a CHECK fails mid-run (eval_accuracy without epoch_num)", bert, [&](auto& l) {
      size_t i = index_of(l, key_text("eval_accuracy"), index_of(l, key_text("eval_accuracy")) + 1);
      l[i] = replace_once(l[i], "\"epoch_num\"", "\"epoch_nom\"");
    }, true);
    with("EXACTLY_ONE key repeated with another value", bert, [&](auto& l) {
      size_t i = index_of(l, key_text("global_batch_size"));
      std::string again = l[i];
      auto v = again.find("\"value\": ");
      again.insert(v + 9, "1");
      l.insert(l.begin() + static_cast<long>(stop), again);
    }, true);
    with("EXACTLY_ONE key repeated with the same value", bert, [&](auto& l) {
      size_t i = index_of(l, key_text("global_batch_size"));
      l.insert(l.begin() + static_cast<long>(stop), l[i]);
    }, false);
    with("a second run_start", bert, [&](auto& l) { l.insert(l.begin() + static_cast<long>(stop), l[start]); }, true);
    with("corrupt JSON in the middle", bert, [&](auto& l) {
      size_t i = index_of(l, mllog::kToken, start + 3);
      l[i] = replace_once(l[i], "}", "]");
    }, true);
    with("truncated in the middle of a line", bert, [&](auto& l) {
      l.resize(stop);
      l.back() = l.back().substr(0, l.back().size() / 2);
    }, true);
    with("a corrupted byte", bert, [&](auto& l) {
      size_t i = index_of(l, mllog::kToken, start + 5);
      l[i][l[i].size() / 2] = '\x01';
    }, true);
    with("CRLF line ends", bert, [&](auto& l) { for (auto& x : l) x += '\r'; }, false);
    with("old-Mac line ends inside lines", bert, [&](auto& l) {
      for (size_t i = start + 1; i < stop; i += 3) l[i] = "chatter\r" + l[i];
    }, false);
    with("chatter and two tokens on a line", bert, [&](auto& l) {
      std::vector<std::string> out;
      for (auto& x : l) {
        out.push_back("step 12 loss 3.1 lr 0.001");
        out.push_back(x.find(mllog::kToken) != std::string::npos ? ":::MLLOG noise " + x : x);
      }
      l = out;
    }, false);
    with("a benchmark the round does not have", bert, [&](auto& l) {
      size_t i = index_of(l, key_text("submission_benchmark"));
      l[i] = replace_once(l[i], "\"bert\"", "\"bort\"");  // closed_common's CHECK of the name, and a missing rule file
    }, true);
    with("init_stop too late", ssd, [&](auto& l) {
      size_t i = index_of(l, key_text("init_stop"));
      size_t j = index_of(l, key_text("init_start"));
      long long t0 = std::stoll(l[j].substr(l[j].find("\"time_ms\": ") + 11));
      l[i] = with_time_ms(l[i], t0 + 31LL * 60 * 1000);
    }, true);
    with("no MLLOG line at all", std::vector<std::string>{"hello", "world"}, [](auto&) {}, false);
    with("only a broken MLLOG line", std::vector<std::string>{"x :::MLLOG {nope"}, [](auto&) {}, true);
    for (const auto& c : cases) {
      Outcome per_line = compare(rs, c.lines, 1, c.name, 25);
      INFO(c.name << ": " << per_line.finding);
      CHECK((per_line.at != SIZE_MAX) == c.irreparable);
      compare(rs, c.lines, 7, c.name + " (every 7 lines)");
    }
  }

  TEST_CASE("live: stable diffusion's aggregated evaluations are not stopped before CLIP arrives") {
    if (!have_reference_data()) return;
    // Its rules build aggregated_eval_accuracy lines from FID and CLIP lines
    // logged apart: after an FID line the aggregate lacks CLIP, which the
    // next line brings. The full re-check stopped this published run there.
    fs::path p = fs::path(results31()) / "NVIDIA/results/eos_n8_ngc23.09_nemo_mm/stable_diffusion/result_2.txt";
    harness::LiveChecker live(rules31(), 0ms);
    CHECK_FALSE(live.whole_log());
    for (const auto& l : split_lines(read_bytes(p))) CHECK_FALSE(live.add_line(l).has_value());
    CHECK(live.whole_log());
    CHECK(live.final_verdict().compliant);
  }

  TEST_CASE("live: files enqueued late read the lines before, and keep the batch checker's queue order") {
    TempDir tmp;
    // common enqueues b (at 'go_b') and c (at 'go_c'); b's BEGIN enqueues d.
    // The batch queue is common, b, c, d: c's record of 'k' drops b's
    // message, d's failure stands. Live, d is enqueued before c is.
    auto rs = own_rules(tmp.path, {
        {"common.yaml", "- KEY:\n    NAME: k\n    CHECK: \" v['value'] == 1 \"\n"
                        "- KEY:\n    NAME: go_b\n    POST: \" enqueue_config('training_9.9.9/b.yaml') \"\n"
                        "- KEY:\n    NAME: go_c\n    POST: \" enqueue_config('training_9.9.9/c.yaml') \"\n"},
        {"b.yaml", "- BEGIN:\n    CODE: \" enqueue_config('training_9.9.9/d.yaml') \"\n"
                   "- KEY:\n    NAME: k\n    CHECK: \" v['value'] == 2 \"\n"},
        {"c.yaml", "- KEY:\n    NAME: k\n    REQ: AT_LEAST_ONE\n    CHECK: \" v['value'] >= 0 \"\n"},
        {"d.yaml", "- KEY:\n    NAME: k\n    CHECK: \" v['value'] == 3 \"\n    REQ: AT_LEAST(3)\n"},
    });
    std::vector<std::string> lines;
    lines.push_back(line("k", "1"));
    lines.push_back("chatter");
    lines.push_back(line("go_b", "0"));
    for (int i = 0; i < 5; ++i) lines.push_back(line("k", "1"));
    lines.push_back(line("go_c", "0"));
    for (int i = 0; i < 5; ++i) lines.push_back(line("k", "3"));
    Outcome o = compare(*rs, lines, 1, "queue order", 1);
    CHECK(o.at != SIZE_MAX);
    CHECK(o.finding.find("d.yaml KEY k CHECK") != std::string::npos);
  }

  TEST_CASE("live: a file enqueued late after megabytes of output reads them again in pieces, numbered as one text") {
    TempDir tmp;
    // b, enqueued by the last line, re-reads some 5 MB before it: more than
    // one piece. Its finding is about a line deep in the middle.
    auto rs = own_rules(tmp.path, {
        {"common.yaml", "- KEY:\n    NAME: k\n    CHECK: \" v['value'] >= 0 \"\n"
                        "- KEY:\n    NAME: go_b\n    POST: \" enqueue_config('training_9.9.9/b.yaml') \"\n"},
        {"b.yaml", "- KEY:\n    NAME: k\n    CHECK: \" v['value'] != 7 \"\n    REQ: AT_LEAST(3)\n"},
    });
    std::vector<std::string> lines;
    const std::string chatter(120, 'x');
    size_t seven = 0;
    for (int i = 0; i < 45000; ++i) {
      lines.push_back(chatter);
      if (i % 9000 == 0) lines.push_back(line("k", i == 27000 ? "7" : "1"));
      if (i == 27000) seven = lines.size();  // its line number
    }
    lines.push_back(line("go_b", "0"));
    Outcome o = compare(*rs, lines, 20000, "late file, long prefix", 1);
    CHECK(o.at == lines.size() - 1);
    CHECK(o.finding.find("b.yaml KEY k CHECK") != std::string::npos);
    CHECK(o.finding.find("line " + std::to_string(seven) + " ") == 0);
  }

  TEST_CASE("live: a rule set that reads the whole log is checked in full, on a doubling schedule") {
    TempDir tmp;
    auto rs = own_rules(tmp.path, {
        {"common.yaml", "- BEGIN:\n    CODE: \" s['n'] = len(loglines) \"\n"
                        "- KEY:\n    NAME: k\n    CHECK: \" v['value'] < 900 \"\n"},
    });
    std::vector<std::string> lines;
    for (int i = 0; i < 1100; ++i) lines.push_back(line("k", std::to_string(i)));
    harness::LiveChecker live(*rs, 0ms);
    std::optional<rules::Finding> f;
    size_t at = 0;
    for (size_t i = 0; i < lines.size() && !f; ++i) f = live.add_line(lines[i]), at = i;
    REQUIRE(f.has_value());
    CHECK(f->rule == "common.yaml KEY k CHECK");
    CHECK(f->line == 1024);  // a later failure of the same key replaces the earlier one
    // Full checks after 1, 2, 4, ... 1024 MLLOG lines: eleven, the finding at the last.
    CHECK(live.full_checks_run() == 11);
    CHECK(at == 1023);
    CHECK_FALSE(live.final_verdict().compliant);
  }

  TEST_CASE("live: memory holds a chunk of text, not the log") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE(rs);
    harness::LiveChecker live(*rs, 0ms);
    for (int i = 0; i < 200000; ++i) {
      live.add_line("step " + std::to_string(i) + " loss 1.0 some chatter that is not MLLOG at all");
      CHECK(live.pending_bytes() <= 70 * 1024);
    }
    CHECK(live.text().size() > 200000u * 40);
  }
}
