// Mutation tests: copies of real result logs of round 3.1, changed the way
// real submissions go wrong, must get the consortium's verdict and a finding
// that names the rule, the key and the log line.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>
#include <regex>

#include "rules/interp.h"
#include "rules/rcp.h"
#include "tests/mutate.h"

namespace fs = std::filesystem;
using namespace referee::rules;
using namespace referee::testing;
using referee::mllog::ParsedLog;

namespace {

// Lowest time_ms among the log's init_start lines (the rules' first_init_start).
double first_init_start(const ParsedLog& log) {
  int k = log.find_key("init_start");
  REQUIRE(k >= 0);
  double t = std::numeric_limits<double>::infinity();
  for (const auto& ev : log.events)
    if (ev.key_id == static_cast<uint32_t>(k)) t = std::min(t, ev.time_ms);
  return t;
}

// Drops every line that contains `needle`; returns how many were dropped.
size_t drop_lines(std::vector<std::string>& lines, std::string_view needle) {
  size_t before = lines.size();
  std::erase_if(lines, [&](const std::string& l) { return contains(l, needle); });
  return before - lines.size();
}

// Runs a shell command, returns its exit status (-1 when it did not exit).
int run_shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc)) return -1;
  return WEXITSTATUS(rc);
}

std::string shell_quote(const fs::path& p) {
  std::string out;
  out += '\'';
  out += p.string();
  out += '\'';
  return out;
}

Value parse_json_file(const fs::path& p) {
  std::string text = read_bytes(p);
  bool ok = false;
  std::string err;
  Value v = value_from_json(text, &ok, &err);
  REQUIRE_MESSAGE(ok, p << ": " << err << "\n" << text.substr(0, 400));
  REQUIRE(v.kind == VKind::Dict);
  return v;
}

const Value& at(const Value& d, std::string_view k) {
  static const Value none;
  if (d.kind != VKind::Dict) return none;
  Value* p = d.d().find_str(k);
  return p ? *p : none;
}

// The string a JSON value holds, or "<not a string>".
std::string str(const Value& v) { return v.kind == VKind::Str ? v.s() : "<not a string>"; }

// Item i of a JSON array; fails the test when there is none.
const Value& item(const Value& list, size_t i) {
  REQUIRE(list.kind == VKind::List);
  REQUIRE(list.items().size() > i);
  return list.items()[i];
}

// Rewrites every eval_accuracy line of the five ssd runs to epoch 1 (the RCP
// needs 4); run_stop keeps status success.
void converge_in_one_epoch(const MiniPackage& p) {
  for (int n = 0; n < 5; ++n)
    edit_lines(p.file(n), [](auto& l) {
      size_t evals = 0;
      for (auto& line : l)
        if (contains(line, key_text("eval_accuracy"))) {
          line = with_epoch_num(line, "1");
          ++evals;
        }
      CHECK(evals > 0);
      CHECK(count_containing(l, "\"status\": \"success\"") == 1);
    });
}

}  // namespace

TEST_SUITE("mutations") {
  // ------------------------------------------------------------------ 1
  TEST_CASE("dropping run_stop: the run did not finish") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kBert.file(0));
    ParsedLog log0;
    FileVerdict base = check_text(orig, &log0);
    REQUIRE_MESSAGE(base.compliant, describe(base.errors));
    RunConvergence c0 = read_convergence(log0, "3.1.0", Convergence::EpochNum);
    CHECK(c0.converged);
    CHECK(c0.epochs == 2548766);

    auto lines = split_lines(orig);
    CHECK(drop_lines(lines, key_text("run_stop")) == 1);
    const std::string text = join_lines(lines);
    ParsedLog log;
    FileVerdict v = check_text(text, &log);
    CHECK_FALSE(v.compliant);
    REQUIRE_MESSAGE(v.errors.size() == 1, describe(v.errors));
    const Finding& f = v.errors[0];
    CHECK(f.rule == "common.yaml KEY run_stop REQ EXACTLY_ONE");
    CHECK(f.key == "run_stop");
    CHECK(f.message == "required line 'run_stop' is missing");
    CHECK(f.found == "0");
    CHECK(f.line == 0);
    CHECK(contains(f.hint, "did not finish"));

    // The RCP pass reads the same file as a run that did not converge.
    RunConvergence c = read_convergence(log, "3.1.0", Convergence::EpochNum);
    CHECK_FALSE(c.converged);
    CHECK(c.epochs == 1e9);
    CHECK(c.error.empty());
  }

  TEST_CASE("dropping run_stop in one bert run is accepted, in two it is not") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    edit_lines(p.file(3), [](auto& l) { CHECK(drop_lines(l, key_text("run_stop")) == 1); });
    {
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_MESSAGE(d.pass, describe(d.errors));
      CHECK_FALSE(file_named(d, "result_3.txt").verdict.compliant);
      CHECK_FALSE(file_named(d, "result_3.txt").convergence.converged);
      REQUIRE(d.rcp_checked);
      CHECK(d.rcp.pass);
      REQUIRE(d.rcp.run_epochs.size() == 10);
      CHECK(d.rcp.run_epochs.back() == 1e9);  // the olympic mean drops it
      const Finding* w = find_rule(d.warnings, "olympic scoring");
      REQUIRE(w);
      CHECK(w->message == "1 file does not comply, accepted under olympic scoring");
    }
    edit_lines(p.file(7), [](auto& l) { CHECK(drop_lines(l, key_text("run_stop")) == 1); });
    {
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(d.pass);
      CHECK_FALSE(r.pass);
      const Finding* o = find_rule(d.errors, "olympic scoring");
      REQUIRE_MESSAGE(o, describe(d.errors));
      CHECK(o->message == "2 files do not comply, directory cannot be accepted");
      CHECK_FALSE(d.rcp.pass);
      CHECK(d.rcp.status == "not_converged");
      CHECK(d.rcp.message == "Insufficient convergence");
      const Finding* rcp = find_rule(d.errors, "RCP");
      REQUIRE(rcp);
      CHECK(rcp->message == "RCP Test Failed: Insufficient convergence");
      CHECK(contains(rcp->found, "2 runs did not converge"));
    }
  }

  TEST_CASE("run_stop with status aborted: compliant, but not converged") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    auto abort_run = [](auto& l) {
      size_t i = index_of(l, key_text("run_stop"));
      l[i] = replace_once(l[i], "\"status\": \"success\"", "\"status\": \"aborted\"");
    };
    edit_lines(p.file(6), abort_run);
    {
      const BenchmarkDir d = only_dir(run_package(p.org));
      const ResultFile& f = file_named(d, "result_6.txt");
      CHECK_MESSAGE(f.verdict.compliant, describe(f.verdict.errors));
      CHECK_FALSE(f.convergence.converged);
      CHECK(f.convergence.epochs == 1e9);
      CHECK(d.pass);
      CHECK(d.rcp.pass);
    }
    edit_lines(p.file(8), abort_run);
    {
      const BenchmarkDir d = only_dir(run_package(p.org));
      for (const auto& f : d.files) CHECK_MESSAGE(f.verdict.compliant, f.name);
      CHECK_FALSE(d.pass);
      CHECK(d.rcp.status == "not_converged");
      CHECK(d.rcp.message == "Insufficient convergence");
    }
  }

  TEST_CASE("evaluations after run_stop do not move the convergence point") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    for (int n = 0; n < 5; ++n)
      edit_lines(p.file(n), [](auto& l) {
        size_t e = index_of(l, key_text("eval_accuracy"));
        size_t stop = index_of(l, key_text("run_stop"));
        l.insert(l.begin() + static_cast<long>(stop) + 1, with_epoch_num(l[e], "1"));
      });
    const BenchmarkDir d = only_dir(run_package(p.org));
    CHECK_MESSAGE(d.pass, describe(d.errors));
    CHECK(d.rcp.pass);
    CHECK(d.rcp.submission_mean == 4.0);
  }

  // ------------------------------------------------------------------ 2
  TEST_CASE("a closed-division hyperparameter changed: gpt3 opt_adam_beta_2 0.95 -> 0.9") {
    if (!have_reference_data()) return;
    auto lines = split_lines(read_bytes(kGpt3.file(0)));
    size_t i = index_of(lines, key_text("opt_adam_beta_2"));
    lines[i] = replace_once(lines[i], "\"value\": 0.95,", "\"value\": 0.9,");
    FileVerdict v = check_text(join_lines(lines));
    CHECK_FALSE(v.compliant);
    REQUIRE_MESSAGE(v.errors.size() == 1, describe(v.errors));
    const Finding& f = v.errors[0];
    CHECK(f.rule == "closed_gpt3.yaml KEY opt_adam_beta_2 CHECK");
    CHECK(f.key == "opt_adam_beta_2");
    CHECK(f.line == i + 1);
    CHECK(f.line == 12108);  // as published: line 12108 of result_0.txt
    CHECK(f.message == "CHECK for 'opt_adam_beta_2' failed");
    CHECK(contains(f.expected, "v['value'] == 0.95"));
    CHECK(contains(f.found, "value = 0.9"));
    CHECK_FALSE(contains(f.found, "0.95"));
    CHECK(contains(f.log_text, "\"value\": 0.9,"));
    CHECK(contains(f.hint, "closed division"));
  }

  TEST_CASE("a closed-division hyperparameter with two allowed values: gpt3 opt_base_learning_rate") {
    if (!have_reference_data()) return;
    auto lines = split_lines(read_bytes(kGpt3.file(1)));
    size_t i = index_of(lines, key_text("opt_base_learning_rate"));
    std::string orig = lines[i];
    lines[i] = replace_once(orig, "\"value\": 2e-05,", "\"value\": 3e-05,");
    CHECK(check_text(join_lines(lines)).compliant);  // the rule allows 2e-5 or 3e-5
    lines[i] = replace_once(orig, "\"value\": 2e-05,", "\"value\": 4e-05,");
    FileVerdict v = check_text(join_lines(lines));
    CHECK_FALSE(v.compliant);
    const Finding* f = find_rule(v.errors, "closed_gpt3.yaml KEY opt_base_learning_rate CHECK");
    REQUIRE_MESSAGE(f, describe(v.errors));
    CHECK(f->line == i + 1);
    CHECK(contains(f->expected, "v['value'] == 2e-5 or v['value'] == 3e-5"));
    CHECK(contains(f->found, "4e-05"));
  }

  // ------------------------------------------------------------------ 3
  TEST_CASE("a key repeated with another value fails EXACTLY_ONE; with the same value it is a warning") {
    if (!have_reference_data()) return;
    auto lines = split_lines(read_bytes(kBert.file(0)));
    size_t i = index_of(lines, key_text("global_batch_size"));
    REQUIRE(contains(lines[i], "\"value\": 768,"));

    SUBCASE("another value") {
      lines.insert(lines.begin() + static_cast<long>(i) + 1,
                   replace_once(lines[i], "\"value\": 768,", "\"value\": 769,"));
      FileVerdict v = check_text(join_lines(lines));
      CHECK_FALSE(v.compliant);
      REQUIRE_MESSAGE(v.errors.size() == 1, describe(v.errors));
      const Finding& f = v.errors[0];
      CHECK(f.rule == "closed_bert.yaml KEY global_batch_size REQ EXACTLY_ONE");
      CHECK(f.key == "global_batch_size");
      CHECK(f.line == i + 2);  // the second occurrence
      CHECK(f.message == "'global_batch_size' must be logged exactly once but appears 2 times");
      CHECK(contains(f.found, "different values"));
      CHECK(contains(f.found, "768"));
      CHECK(contains(f.found, "769"));
    }
    SUBCASE("the same value") {
      lines.insert(lines.begin() + static_cast<long>(i) + 1, lines[i]);
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.errors.empty());
      REQUIRE(v.warnings.size() == 1);
      const Finding& w = v.warnings[0];
      CHECK(w.rule == "closed_bert.yaml KEY global_batch_size REQ EXACTLY_ONE");
      CHECK(w.key == "global_batch_size");
      CHECK(w.line == i + 2);
      CHECK(contains(w.message, "same value"));
      CHECK_FALSE(contains(w.found, "different values"));
    }
    SUBCASE("the same value, written differently (768 and 768.0 are equal in Python)") {
      lines.insert(lines.begin() + static_cast<long>(i) + 1,
                   replace_once(lines[i], "\"value\": 768,", "\"value\": 768.0,"));
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.warnings.size() == 1);
    }
  }

  TEST_CASE("opt_base_learning_rate repeated with another value") {
    if (!have_reference_data()) return;
    auto lines = split_lines(read_bytes(kBert.file(2)));
    size_t i = index_of(lines, key_text("opt_base_learning_rate"));
    // a later copy, far from the first, as a second rank or a restarted optimizer would log it
    size_t at = index_of(lines, key_text("init_stop"));
    lines.insert(lines.begin() + static_cast<long>(at),
                 replace_once(lines[i], "\"value\": 0.00096,", "\"value\": 0.001,"));
    FileVerdict v = check_text(join_lines(lines));
    CHECK_FALSE(v.compliant);
    const Finding* f = find_rule(v.errors, "KEY opt_base_learning_rate REQ EXACTLY_ONE");
    REQUIRE_MESSAGE(f, describe(v.errors));
    CHECK(f->line == at + 1);
    CHECK(contains(f->found, "different values"));
    CHECK(contains(f->found, "0.00096"));
    CHECK(contains(f->found, "0.001"));
  }

  // ------------------------------------------------------------------ 4
  TEST_CASE("init_stop past the closed division's 30 minutes") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kBert.file(0));
    ParsedLog log0;
    REQUIRE(check_text(orig, &log0).compliant);
    const auto first = static_cast<long long>(first_init_start(log0));
    auto lines = split_lines(orig);
    const size_t i = index_of(lines, key_text("init_stop"));
    const std::string stop = lines[i];
    constexpr long long kMinute = 60 * 1000;

    auto with_stop_at = [&](long long t) {
      auto l = lines;
      l[i] = with_time_ms(stop, t);
      return join_lines(l);
    };
    SUBCASE("31 minutes") {
      FileVerdict v = check_text(with_stop_at(first + 31 * kMinute));
      CHECK_FALSE(v.compliant);
      REQUIRE_MESSAGE(v.errors.size() == 1, describe(v.errors));
      const Finding& f = v.errors[0];
      CHECK(f.rule == "common.yaml KEY init_stop CHECK");
      CHECK(f.key == "init_stop");
      CHECK(f.line == i + 1);
      CHECK(f.message == "CHECK for 'init_stop' failed: initialization took 31.0 minutes (from the first init_start to "
                         "init_stop); the rules allow less than 30 minutes");
      CHECK(contains(f.found, "ll.timestamp - s['first_init_start'] = 1860000 ms (31.0 min)"));
      CHECK(contains(f.expected, "ll.timestamp - s['first_init_start'] < (s['compile_time_mins']*60*1e3)"));
      CHECK(contains(f.found, "s['compile_time_mins'] = 30"));
      CHECK(contains(f.found, "s['first_init_start'] = "));
      CHECK(contains(f.hint, "initialization"));
    }
    SUBCASE("exactly 30 minutes fails (the rule is a strict <)") {
      CHECK_FALSE(check_text(with_stop_at(first + 30 * kMinute)).compliant);
    }
    SUBCASE("one millisecond under 30 minutes passes") {
      FileVerdict v = check_text(with_stop_at(first + 30 * kMinute - 1));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
    }
    SUBCASE("the open division allows 240 minutes") {
      auto l = lines;
      size_t d = index_of(l, key_text("submission_division"));
      l[d] = replace_once(l[d], "\"value\": \"closed\"", "\"value\": \"open\"");
      l[i] = with_time_ms(stop, first + 31 * kMinute);
      FileVerdict v = check_text(join_lines(l));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      l[i] = with_time_ms(stop, first + 241 * kMinute);
      v = check_text(join_lines(l));
      CHECK_FALSE(v.compliant);
      const Finding* f = find_rule(v.errors, "common.yaml KEY init_stop CHECK");
      REQUIRE_MESSAGE(f, describe(v.errors));
      CHECK(contains(f->found, "s['compile_time_mins'] = 240"));
    }
  }

  // ------------------------------------------------------------------ 5
  TEST_CASE("a scaling.json other than the consortium's RCP pass leaves is said, with both factors") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    auto said = [&](const BenchmarkDir& d) {
      for (const auto& w : d.warnings)
        if (w.rule == "scaling.json") return w.message;
      return std::string();
    };
    {
      const BenchmarkDir d = only_dir(run_package(p.org));
      REQUIRE(d.rcp.evaluated);
      CHECK(said(d).empty());  // none: nothing to say
    }
    std::ofstream(p.bench / "scaling.json", std::ios::trunc) << "{\"scaling_factor\": 1e-300}";
    const BenchmarkDir d = only_dir(run_package(p.org));
    const std::string m = said(d);
    CHECK_MESSAGE(contains(m, "scaling.json gives a factor of 1e-300"), m);
    CHECK_MESSAGE(contains(m, "the consortium's RCP pass"), m);
    CHECK(d.pass);  // a warning: the consortium's checker passes the directory and rewrites the file
    // A factor that cannot be applied at all is said too.
    std::ofstream(p.bench / "scaling.json", std::ios::trunc) << "{\"scaling_factor\": \"5\"}";
    const std::string bad = said(only_dir(run_package(p.org)));
    CHECK_MESSAGE(contains(bad, "scaling.json cannot be applied"), bad);
  }

  TEST_CASE("a system description that is not JSON gives no division: its directory fails, not passes unchecked") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    const fs::path desc = p.org / "systems" / (std::string(kBert.system) + ".json");
    std::string text = read_bytes(desc);
    REQUIRE(text.rfind('}') != std::string::npos);
    text.erase(text.rfind('}'));  // the closing brace gone
    std::ofstream(desc, std::ios::binary | std::ios::trunc) << text;
    PackageReport r = run_package(p.org);
    const BenchmarkDir& d = only_dir(r);
    CHECK_FALSE(r.pass);
    CHECK_FALSE(d.pass);
    bool said = false;
    for (const auto& e : d.errors) said = said || contains(e.message, "is unknown: systems/" + std::string(kBert.system) + ".json gives none");
    CHECK_MESSAGE(said, describe(d.errors));
  }

  TEST_CASE("seeds: none logged, or the same seed in two runs") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    {
      PackageReport r = run_package(p.org);
      REQUIRE_MESSAGE(only_dir(r).pass, describe(only_dir(r).errors));
      CHECK(only_dir(r).seeds_ok);
    }
    SUBCASE("no seed in any file") {
      for (int n = 0; n < 10; ++n) edit_lines(p.file(n), [](auto& l) { CHECK(drop_lines(l, key_text("seed")) == 1); });
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(r.pass);
      CHECK_FALSE(d.pass);
      CHECK(d.seeds_checked);
      CHECK_FALSE(d.seeds_ok);
      REQUIRE(d.seed_errors.size() == 10);
      for (int n = 0; n < 10; ++n) {
        const Finding& e = d.seed_errors[static_cast<size_t>(n)];
        CHECK(e.rule == "seeds");
        CHECK(e.message == "Result file result_" + std::to_string(n) + ".txt logs no seed.");
      }
      for (const auto& f : d.files) CHECK_MESSAGE(f.verdict.compliant, f.name);  // seeds are not a compliance rule
      CHECK(d.rcp.pass);
      CHECK(d.errors.empty());  // the seed checker alone fails it
    }
    SUBCASE("no seed in one file") {
      edit_lines(p.file(4), [](auto& l) { CHECK(drop_lines(l, key_text("seed")) == 1); });
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK_FALSE(d.pass);
      REQUIRE(d.seed_errors.size() == 1);
      CHECK(d.seed_errors[0].message == "Result file result_4.txt logs no seed.");
    }
    SUBCASE("the same seed line in two files") {
      auto l0 = split_lines(read_bytes(p.file(0)));
      const std::string seed0 = l0[index_of(l0, key_text("seed"))];
      REQUIRE(contains(seed0, "\"value\": 10242,"));
      edit_lines(p.file(1), [&](auto& l) { l[index_of(l, key_text("seed"))] = seed0; });
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(d.pass);
      CHECK_FALSE(d.seeds_ok);
      REQUIRE(d.seed_errors.size() == 1);
      const Finding& e = d.seed_errors[0];
      CHECK(contains(e.message, "Result file result_1.txt logs seed 10242 on "));
      CHECK(contains(e.message, "/workspace/bert/run_pretraining.py"));
      CHECK(contains(e.message, "1272"));
      CHECK(contains(e.message, "result file result_0.txt already logs the same seed on the same line"));
      CHECK(contains(e.found, "result_0.txt"));
      CHECK(contains(e.found, "result_1.txt"));
    }
    SUBCASE("the same seed value from another source line is fine") {
      auto l0 = split_lines(read_bytes(p.file(0)));
      std::string seed0 = l0[index_of(l0, key_text("seed"))];
      seed0 = replace_once(seed0, "\"lineno\": 1272", "\"lineno\": 1273");
      edit_lines(p.file(1), [&](auto& l) { l[index_of(l, key_text("seed"))] = seed0; });
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK(d.seeds_ok);
      CHECK(d.pass);
    }
    SUBCASE("the seed checker bypass") {
      for (int n = 0; n < 10; ++n) edit_lines(p.file(n), [](auto& l) { CHECK(drop_lines(l, key_text("seed")) == 1); });
      write_bytes(p.bench / "package_checker_params", "seed-checker-bypass");
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK(d.pass);
      CHECK(d.seeds_bypassed);
      CHECK(d.seed_errors.empty());
    }
  }

  // The consortium keys seeds by the tuple (file, lineno, int(value)), and
  // 1272 == 1272.0 in a Python tuple.
  TEST_CASE("the same seed on the same line, lineno written as a float") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    auto l0 = split_lines(read_bytes(p.file(0)));
    std::string seed0 = l0[index_of(l0, key_text("seed"))];
    seed0 = replace_once(seed0, "\"lineno\": 1272", "\"lineno\": 1272.0");
    edit_lines(p.file(1), [&](auto& l) { l[index_of(l, key_text("seed"))] = seed0; });
    const BenchmarkDir d = only_dir(run_package(p.org));
    CHECK_FALSE(d.seeds_ok);
    CHECK_FALSE(d.pass);
  }

  // ------------------------------------------------------------------ 6
  TEST_CASE("converging faster than the RCP allows, and the rcp-bypass file") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    {
      const BenchmarkDir d = only_dir(run_package(p.org));
      REQUIRE_MESSAGE(d.pass, describe(d.errors));
      REQUIRE(d.rcp.status == "found");
      REQUIRE(d.rcp.submission_mean == 4.0);
    }
    converge_in_one_epoch(p);

    SUBCASE("no bypass") {
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(r.pass);
      CHECK_FALSE(d.pass);
      for (const auto& f : d.files) CHECK_MESSAGE(f.verdict.compliant, f.name << describe(f.verdict.errors));
      CHECK(d.seeds_ok);
      REQUIRE(d.rcp_checked);
      CHECK_FALSE(d.rcp.pass);
      CHECK_FALSE(d.rcp.bypassed);
      CHECK(d.rcp.status == "found");
      CHECK(d.rcp.message == "RCP found");
      CHECK(d.rcp.evaluated);
      CHECK(d.rcp.submission_mean == 1.0);
      CHECK(d.rcp.rcp_mean == 4.0);
      CHECK(contains(d.rcp.explanation, "converge faster"));
      REQUIRE(d.errors.size() == 1);
      CHECK(d.errors[0].rule == "RCP");
      CHECK(d.errors[0].message == "RCP Test Failed: RCP found");
      CHECK(contains(d.errors[0].found, "converge faster"));
      CHECK(contains(d.errors[0].expected, "olympic mean >= 4"));
    }
    SUBCASE("rcp-bypass in the benchmark folder, no trailing newline") {
      write_bytes(p.bench / "package_checker_params", "rcp-bypass");
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_MESSAGE(d.pass, describe(d.errors));
      CHECK(r.pass);
      CHECK(d.rcp.pass);
      CHECK(d.rcp.bypassed);
      CHECK(d.rcp.message == "RCP found passed using rcp_bypass");
      CHECK(d.errors.empty());
      CHECK_FALSE(find_rule(d.warnings, "package_checker_params"));
      CHECK_FALSE(find_rule(d.warnings, "files"));  // the params file is not a stray file
    }
    SUBCASE("rcp-bypass in the system folder") {
      write_bytes(p.system_dir / "package_checker_params", "rcp-bypass");
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK(d.pass);
      CHECK(d.rcp.bypassed);
    }
    SUBCASE("rcp-bypass with a trailing newline is ignored") {
      write_bytes(p.bench / "package_checker_params", "rcp-bypass\n");
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(d.pass);
      CHECK_FALSE(d.rcp.pass);
      CHECK_FALSE(d.rcp.bypassed);
      const Finding* w = find_rule(d.warnings, "package_checker_params");
      REQUIRE_MESSAGE(w, describe(d.warnings));
      CHECK(w->line == 1);
      CHECK(contains(w->message, "'rcp-bypass' is ignored"));
      CHECK(contains(w->message, "trailing newline"));
    }
    SUBCASE("rcp-bypass as the last of two lines counts") {
      write_bytes(p.bench / "package_checker_params", "seed-checker-bypass\nrcp-bypass");
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK(d.pass);
      CHECK(d.rcp.bypassed);
      CHECK_FALSE(d.seeds_bypassed);  // that line ends in a newline
      const Finding* w = find_rule(d.warnings, "package_checker_params");
      REQUIRE(w);
      CHECK(contains(w->message, "'seed-checker-bypass' is ignored"));
    }
    SUBCASE("the --rcp-bypass option") {
      PackageOptions opt;
      opt.rcp_bypass = true;
      const BenchmarkDir d = only_dir(run_package(p.org, opt));
      CHECK(d.pass);
      CHECK(d.rcp.bypassed);
    }
  }

  // Python reads package_checker_params in text mode (universal newlines), so
  // a lone CR ends a line there too.
  TEST_CASE("package_checker_params with old-Mac line ends") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    converge_in_one_epoch(p);
    write_bytes(p.bench / "package_checker_params", "seed-checker-bypass\rrcp-bypass");
    const BenchmarkDir d = only_dir(run_package(p.org));
    CHECK(d.rcp.bypassed);  // readlines() gives "seed-checker-bypass\n", "rcp-bypass"
    CHECK(d.pass);
    CHECK_FALSE(d.seeds_bypassed);
  }

  TEST_CASE("package_checker_params with CRLF line ends") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    converge_in_one_epoch(p);
    write_bytes(p.bench / "package_checker_params", "seed-checker-bypass\r\nrcp-bypass");
    const BenchmarkDir d = only_dir(run_package(p.org));
    CHECK(d.rcp.bypassed);
    CHECK(d.pass);
    CHECK_FALSE(d.seeds_bypassed);
    write_bytes(p.bench / "package_checker_params", "rcp-bypass\r\n");
    const BenchmarkDir d2 = only_dir(run_package(p.org));
    CHECK_FALSE(d2.rcp.bypassed);
    CHECK(find_rule(d2.warnings, "package_checker_params"));
  }

  TEST_CASE("bert converging faster than the interpolated RCP") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    for (int n = 0; n < 10; ++n)
      edit_lines(p.file(n), [](auto& l) {
        for (auto& line : l)
          if (contains(line, key_text("eval_accuracy"))) line = with_epoch_num(line, "1000000");
      });
    const BenchmarkDir d = only_dir(run_package(p.org));
    CHECK_FALSE(d.pass);
    CHECK(d.rcp.status == "interpolated");
    CHECK(d.rcp.message == "RCP Interpolation");
    CHECK(d.rcp.submission_mean == 1000000.0);
    CHECK(d.rcp.rcp_mean / d.rcp.max_speedup > 2e6);
    CHECK(contains(d.rcp.explanation, "converge faster"));
    for (const auto& f : d.files) CHECK_MESSAGE(f.verdict.compliant, f.name);
  }

  // ------------------------------------------------------------------ 7
  TEST_CASE("a corrupt JSON line is a parse error at its line; the rest is still checked") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kBert.file(0));
    FileVerdict base = check_text(orig);
    REQUIRE(base.compliant);
    auto lines = split_lines(orig);

    SUBCASE("a required line cut in half") {
      size_t i = index_of(lines, key_text("opt_base_learning_rate"));
      lines[i] = lines[i].substr(0, lines[i].size() / 2);
      FileVerdict v = check_text(join_lines(lines));
      CHECK_FALSE(v.compliant);
      CHECK(v.mllog_lines == base.mllog_lines);
      REQUIRE_MESSAGE(v.errors.size() == 2, describe(v.errors));
      const Finding* parse = find_rule(v.errors, "parse");
      REQUIRE(parse);
      CHECK(parse->rule == "parse");
      CHECK(parse->line == i + 1);
      CHECK(contains(parse->message, "does not parse"));
      CHECK(contains(parse->found, "{\"namespace\": \"\", \"time_ms\": "));  // the JSON text that is there
      // the key's only line did not parse, so the rules see none
      const Finding* req = find_rule(v.errors, "closed_bert.yaml KEY opt_base_learning_rate REQ EXACTLY_ONE");
      REQUIRE(req);
      CHECK(req->message == "required line 'opt_base_learning_rate' is missing");
    }
    SUBCASE("a stray brace") {
      size_t i = index_of(lines, key_text("weights_initialization"));
      lines[i] = replace_once(lines[i], "{\"namespace\"", "{}\"namespace\"");
      // and a rule break further down: still reported
      size_t j = index_of(lines, key_text("submission_status"));
      lines[j] = replace_once(lines[j], "\"value\": \"cloud\"", "\"value\": \"in the basement\"");
      FileVerdict v = check_text(join_lines(lines));
      CHECK_FALSE(v.compliant);
      REQUIRE(j < i);
      REQUIRE_MESSAGE(v.errors.size() == 2, describe(v.errors));  // in line order
      CHECK(v.errors[0].rule == "common.yaml KEY submission_status CHECK");
      CHECK(v.errors[0].line == j + 1);
      CHECK(v.errors[1].rule == "parse");
      CHECK(v.errors[1].line == i + 1);
      CHECK(contains(v.errors[1].found, "{}\"namespace\""));
    }
    SUBCASE("a parse error anywhere fails the seed checker, so the directory fails") {
      TempDir tmp;
      MiniPackage p = make_package(tmp, kBert);
      size_t at = 0;
      edit_lines(p.file(0), [&](auto& l) {
        at = index_of(l, key_text("weights_initialization"));
        l[at] = replace_once(l[at], "{\"namespace\"", "{}\"namespace\"");
      });
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      const ResultFile& f = file_named(d, "result_0.txt");
      CHECK_FALSE(f.verdict.compliant);
      REQUIRE(f.verdict.errors.size() == 1);
      CHECK(f.verdict.errors[0].line == at + 1);
      CHECK(find_rule(d.warnings, "olympic scoring"));  // one bad file alone would be accepted ...
      CHECK_FALSE(d.seeds_ok);                          // ... but the seed checker cannot read it
      REQUIRE(d.seed_errors.size() == 1);
      CHECK(contains(d.seed_errors[0].message, "Error found when querying seeds from result_0.txt"));
      CHECK_FALSE(d.pass);
      CHECK(d.rcp.pass);
    }
  }

  // ------------------------------------------------------------------ 8
  TEST_CASE("a file truncated in the middle of a line") {
    if (!have_reference_data()) return;
    std::vector<fs::path> files;
    for (int n = 0; n < 10; ++n) files.push_back(kBert.file(n));
    for (int n = 0; n < 5; ++n) files.push_back(kSsd.file(n));
    files.push_back(kGpt3.file(2));
    for (const auto& path : files) {
      CAPTURE(path);
      const std::string orig = read_bytes(path);
      size_t cut = orig.size() * 6 / 10;
      while (cut < orig.size() && (orig[cut - 1] == '\n' || orig[cut] == '\n')) ++cut;  // not at a line end
      const std::string text = orig.substr(0, cut);
      auto lines = split_lines(text);
      ParsedLog log;
      FileVerdict v = check_text(text, &log);
      CHECK_FALSE(v.compliant);
      const Finding* stop = find_rule(v.errors, "KEY run_stop REQ EXACTLY_ONE");
      REQUIRE_MESSAGE(stop, describe(v.errors));
      CHECK(contains(stop->hint, "did not finish"));
      if (contains(lines.back(), ":::MLLOG ")) {
        const Finding* parse = find_rule(v.errors, "parse");
        REQUIRE_MESSAGE(parse, describe(v.errors));
        CHECK(parse->line == lines.size());
      }
      CHECK_FALSE(read_convergence(log, "3.1.0", Convergence::EpochNum).converged);
    }
  }

  TEST_CASE("truncation at every kind of boundary never crashes") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kSsd.file(1));
    const std::string token = ":::MLLOG ";
    const size_t first = orig.find(token);
    REQUIRE(first != std::string::npos);
    // cuts inside the first line's token, right after it, inside the JSON, and every 251 bytes
    std::vector<size_t> cuts{
        0, 1, first + 3, first + token.size(), first + token.size() + 1, first + token.size() + 20};
    for (size_t c = 251; c < orig.size(); c += 251) cuts.push_back(c);
    // Every cut before the end of the run_stop line loses run_stop; later cuts
    // lose only lines no rule needs, unless they leave half an MLLOG line.
    const size_t stop_end = orig.find('\n', orig.find(key_text("run_stop")));
    REQUIRE(stop_end != std::string::npos);
    for (size_t c : cuts) {
      CAPTURE(c);
      const std::string text = orig.substr(0, c);
      ParsedLog log;
      FileVerdict v = check_text(text, &log);
      const auto tail = split_lines(text).back();
      const bool half_line = contains(tail, ":::MLLOG ") && tail.back() != '}';
      if (c < stop_end || half_line) CHECK_FALSE(v.compliant);
      if (log.events.empty()) {
        // Not one MLLOG line left: that is the reason, and no rule runs.
        CHECK(find_rule(v.errors, "parse"));
        CHECK_FALSE(find_rule(v.errors, "REQ"));
        CHECK(std::any_of(v.errors.begin(), v.errors.end(),
                          [](const Finding& f) { return f.message == "No log lines detected"; }));
      } else if (c < stop_end) {
        CHECK(find_rule(v.errors, "KEY run_stop REQ EXACTLY_ONE"));
      }
      if (half_line) CHECK(find_rule(v.errors, "parse"));
    }
    FileVerdict empty = check_text("");
    CHECK_FALSE(empty.compliant);
    const Finding* none = find_rule(empty.errors, "parse");
    REQUIRE(none);
    CHECK(none->message == "No log lines detected");
  }

  TEST_CASE("one corrupted byte breaks at most its own line") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kSsd.file(3));
    const auto lines = split_lines(orig);
    std::vector<size_t> mllog;
    for (size_t i = 0; i < lines.size(); ++i)
      if (contains(lines[i], ":::MLLOG {")) mllog.push_back(i);
    REQUIRE(mllog.size() > 100);
    const FileVerdict base = check_text(orig);
    REQUIRE(base.compliant);
    std::mt19937 rng(20231006);
    const std::string bytes = "{}[]\",:x0 \x01\xff\\";
    int broke = 0;
    for (int round = 0; round < 300; ++round) {
      auto l = lines;
      const size_t li = mllog[rng() % mllog.size()];
      const size_t json_at = l[li].find(":::MLLOG ") + 9;
      const size_t pos = json_at + rng() % (l[li].size() - json_at);
      const char b = bytes[rng() % bytes.size()];
      CAPTURE(li);
      CAPTURE(pos);
      CAPTURE(static_cast<int>(static_cast<unsigned char>(b)));
      l[li][pos] = b;
      FileVerdict v = check_text(join_lines(l));
      CHECK(v.mllog_lines == base.mllog_lines);
      for (const auto& f : v.errors)
        if (f.rule == "parse") {
          CHECK(f.line == li + 1);
          ++broke;
        }
    }
    CHECK(broke > 100);  // most single-byte changes break the JSON
  }

  TEST_CASE("a truncated directory fails without a crash") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    for (int n = 0; n < 5; ++n) {
      std::string t = read_bytes(p.file(n));
      write_bytes(p.file(n), t.substr(0, t.size() * 6 / 10 + 7));
    }
    PackageReport r = run_package(p.org);
    const BenchmarkDir& d = only_dir(r);
    CHECK_FALSE(r.pass);
    CHECK_FALSE(d.pass);
    CHECK(find_rule(d.errors, "olympic scoring"));
    for (const auto& f : d.files) CHECK_FALSE(f.verdict.compliant);
  }

  // ------------------------------------------------------------------ 9
  TEST_CASE("bytes and line shapes that must still parse") {
    if (!have_reference_data()) return;
    const std::string orig = read_bytes(kBert.file(5));
    FileVerdict base = check_text(orig);
    REQUIRE(base.compliant);
    auto lines = split_lines(orig);

    SUBCASE("bytes that are not UTF-8 inside a JSON string") {
      size_t i = index_of(lines, key_text("submission_platform"));
      lines[i] = replace_once(lines[i], "\"value\": \"ND_H100_v5\"", "\"value\": \"ND_H100\xff\xfe_v5\xc3\"");
      size_t j = index_of(lines, key_text("weights_initialization"));
      lines[j] = replace_once(lines[j], "\"tensor\": \"", "\"tensor\": \"\x80\x81\xe9");
      lines.insert(lines.begin() + 3, "garbage from stdout \xff\xfe\xfd not a log line");
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.mllog_lines == base.mllog_lines);
    }
    SUBCASE("LF, CRLF and lone CR line ends give the same verdicts and line numbers") {
      // The published bert logs mix CRLF and LF lines; make them uniform first.
      const std::string lf = replace_all(orig, "\r\n", "\n");
      REQUIRE(lf.find('\r') == std::string::npos);
      auto l = split_lines(lf);
      size_t i = index_of(l, key_text("global_batch_size"));
      for (const char* eol : {"\n", "\r\n", "\r"}) {
        CAPTURE(std::string(eol) == "\n" ? "LF" : std::string(eol) == "\r" ? "CR" : "CRLF");
        FileVerdict v = check_text(replace_all(lf, "\n", eol));
        CHECK_MESSAGE(v.compliant, describe(v.errors));
        CHECK(v.mllog_lines == base.mllog_lines);
        auto dup = l;
        dup.insert(dup.begin() + static_cast<long>(i) + 1, replace_once(l[i], "\"value\": 768,", "\"value\": 4,"));
        v = check_text(replace_all(join_lines(dup), "\n", eol));
        CHECK_FALSE(v.compliant);
        const Finding* f = find_rule(v.errors, "KEY global_batch_size REQ EXACTLY_ONE");
        REQUIRE(f);
        CHECK(f->line == i + 2);
      }
    }
    SUBCASE("a UTF-8 byte order mark and NUL bytes outside MLLOG lines") {
      const char junk[] = "binary junk \0\0\x01 from a crashed rank";
      lines.insert(lines.begin() + 5, std::string(junk, sizeof junk - 1));
      std::string text = "\xef\xbb\xbf" + join_lines(lines);
      FileVerdict v = check_text(text);
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.mllog_lines == base.mllog_lines);
    }
    SUBCASE("NaN and Infinity as values") {
      size_t i = index_of(lines, key_text("opt_lamb_beta_1"));
      lines[i] = replace_once(lines[i], "\"value\": 0.60466,", "\"value\": NaN,");
      size_t j = index_of(lines, key_text("opt_lamb_beta_2"));
      lines[j] = replace_once(lines[j], "\"value\": 0.85437,", "\"value\": -Infinity,");
      size_t k = index_of(lines, key_text("tracked_stats"));
      lines[k] = replace_once(lines[k], "\"throughput\": ", "\"throughput\": Infinity, \"x\": ");
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.mllog_lines == base.mllog_lines);
    }
    SUBCASE("NaN fails a CHECK that compares it") {
      auto g = split_lines(read_bytes(kGpt3.file(0)));
      size_t i = index_of(g, key_text("opt_adam_beta_1"));
      g[i] = replace_once(g[i], "\"value\": 0.9,", "\"value\": NaN,");
      FileVerdict v = check_text(join_lines(g));
      CHECK_FALSE(v.compliant);
      const Finding* f = find_rule(v.errors, "closed_gpt3.yaml KEY opt_adam_beta_1 CHECK");
      REQUIRE_MESSAGE(f, describe(v.errors));
      CHECK(f->line == i + 1);
      CHECK(contains(f->found, "nan"));
    }
    SUBCASE("JSON as Python's json module reads it") {
      // a repeated member keeps its last value
      size_t i = index_of(lines, key_text("opt_lamb_beta_1"));
      lines[i] = replace_once(lines[i], "\"value\": 0.60466,", "\"value\": \"first\", \"value\": 0.60466,");
      // integers beyond 64 bits, time_ms as a string
      size_t j = index_of(lines, key_text("opt_lamb_beta_2"));
      lines[j] = replace_once(lines[j], "\"value\": 0.85437,", "\"value\": 123456789012345678901234567890,");
      size_t k = index_of(lines, key_text("opt_lamb_weight_decay_rate"));
      static const std::regex t(R"("time_ms": ([0-9]+))");
      lines[k] = std::regex_replace(lines[k], t, "\"time_ms\": \"$1\"", std::regex_constants::format_first_only);
      REQUIRE(contains(lines[k], "\"time_ms\": \""));
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
    }
    SUBCASE("a raw control character inside a JSON string is a parse error (json.loads is strict)") {
      size_t i = index_of(lines, key_text("submission_platform"));
      lines[i] = replace_once(lines[i], "\"value\": \"ND_H100_v5\"", "\"value\": \"ND_H100\t_v5\"");
      FileVerdict v = check_text(join_lines(lines));
      CHECK_FALSE(v.compliant);
      const Finding* f = find_rule(v.errors, "parse");
      REQUIRE_MESSAGE(f, describe(v.errors));
      CHECK(f->line == i + 1);
    }
    SUBCASE("a repeated member decides a CHECK by its last value") {
      auto g = split_lines(read_bytes(kGpt3.file(0)));
      size_t i = index_of(g, key_text("opt_adam_beta_2"));
      g[i] = replace_once(g[i], "\"value\": 0.95,", "\"value\": 0.95, \"value\": 0.9,");
      FileVerdict v = check_text(join_lines(g));
      CHECK_FALSE(v.compliant);
      const Finding* f = find_rule(v.errors, "closed_gpt3.yaml KEY opt_adam_beta_2 CHECK");
      REQUIRE_MESSAGE(f, describe(v.errors));
      CHECK(f->line == i + 1);
      CHECK(contains(f->found, "value = 0.9"));
    }
    SUBCASE("a rank prefix before every MLLOG line") {
      for (auto& l : lines)
        if (contains(l, ":::MLLOG ")) l = "[1,0]<stdout>: " + l;
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
      CHECK(v.mllog_lines == base.mllog_lines);
      // findings still point at the file line
      size_t i = index_of(lines, key_text("run_stop"));
      lines[i] = replace_once(lines[i], "\"status\": \"success\"", "\"state\": \"success\"");
      v = check_text(join_lines(lines));
      const Finding* f = find_rule(v.errors, "common.yaml KEY run_stop CHECK");
      REQUIRE_MESSAGE(f, describe(v.errors));
      CHECK(f->line == i + 1);
      CHECK(contains(f->expected, "'status' in v['metadata']"));
    }
    SUBCASE("two tokens on a line: the text after the last one is the JSON") {
      size_t i = index_of(lines, key_text("opt_lamb_beta_1"));
      lines[i] = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 12" + lines[i];
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
    }
    SUBCASE("white space around the JSON") {
      size_t i = index_of(lines, key_text("opt_lamb_beta_1"));
      lines[i] = replace_once(lines[i], ":::MLLOG {", ":::MLLOG  \t {") + " \t ";
      FileVerdict v = check_text(join_lines(lines));
      CHECK_MESSAGE(v.compliant, describe(v.errors));
    }
  }

  TEST_CASE("a NaN value logged twice is the same value to the consortium (json's NaN is one object)") {
    // Python's json module returns one shared float('nan') object for every NaN,
    // and list.count() tests identity first, so all_same() holds: a warning only.
    if (!have_reference_data()) return;
    auto lines = split_lines(read_bytes(kBert.file(5)));
    size_t i = index_of(lines, key_text("opt_lamb_beta_1"));
    lines[i] = replace_once(lines[i], "\"value\": 0.60466,", "\"value\": NaN,");
    lines.insert(lines.begin() + static_cast<long>(i) + 1, lines[i]);
    FileVerdict v = check_text(join_lines(lines));
    CHECK_MESSAGE(v.compliant, describe(v.errors));
    CHECK(find_rule(v.warnings, "KEY opt_lamb_beta_1 REQ EXACTLY_ONE"));
  }

  // ----------------------------------------------------------------- 10
  TEST_CASE("result count: a missing file fails the directory, a stray file is a warning") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    SUBCASE("one file removed") {
      fs::remove(p.file(9));
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(r.pass);
      CHECK_FALSE(d.pass);
      CHECK(d.result_count == 9);
      CHECK(d.expected_count == 10);
      const Finding* f = find_rule(d.errors, "result count");
      REQUIRE_MESSAGE(f, describe(d.errors));
      CHECK(f->message == "Incorrect number of files in dir, or wrong file names: found 9, expected 10");
    }
    SUBCASE("one file renamed") {
      fs::rename(p.file(9), p.bench / "result9.txt");
      const BenchmarkDir d = only_dir(run_package(p.org));
      CHECK_FALSE(d.pass);
      CHECK(find_rule(d.errors, "result count"));
      CHECK(find_rule(d.warnings, "files"));
    }
    SUBCASE("a stray notes.txt") {
      write_bytes(p.bench / "notes.txt", "run on a quiet afternoon\n");
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_MESSAGE(d.pass, describe(d.errors));
      CHECK(r.pass);
      CHECK(d.result_count == 10);
      CHECK(d.errors.empty());
      const Finding* w = find_rule(d.warnings, "files");
      REQUIRE(w);
      CHECK(contains(w->message, "notes.txt"));
    }
  }

  // ----------------------------------------------------------------- 11
  TEST_CASE("olympic scoring: one non-compliant file of five is accepted, two are not") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    auto break_weight_decay = [](auto& l) {
      size_t i = index_of(l, key_text("opt_weight_decay"));
      l[i] = replace_once(l[i], "\"value\": 0,", "\"value\": 0.0001,");
    };
    edit_lines(p.file(2), break_weight_decay);
    {
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      const ResultFile& f = file_named(d, "result_2.txt");
      CHECK_FALSE(f.verdict.compliant);
      REQUIRE(f.verdict.errors.size() == 1);
      CHECK(f.verdict.errors[0].rule == "closed_ssd.yaml KEY opt_weight_decay CHECK");
      CHECK(contains(f.verdict.errors[0].found, "0.0001"));
      CHECK_MESSAGE(d.pass, describe(d.errors));
      CHECK(r.pass);
      const Finding* w = find_rule(d.warnings, "olympic scoring");
      REQUIRE(w);
      CHECK(w->message == "1 file does not comply, accepted under olympic scoring");
    }
    edit_lines(p.file(4), break_weight_decay);
    {
      PackageReport r = run_package(p.org);
      const BenchmarkDir& d = only_dir(r);
      CHECK_FALSE(d.pass);
      CHECK_FALSE(r.pass);
      REQUIRE(d.errors.size() == 1);
      CHECK(d.errors[0].rule == "olympic scoring");
      CHECK(d.errors[0].message == "2 files do not comply, directory cannot be accepted");
      CHECK(d.rcp.pass);
      CHECK(d.seeds_ok);
    }
  }

  // ----------------------------------------------------------------- 12
  TEST_CASE("the referee binary on mutated packages") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    const fs::path out = tmp.path / "out.json";
    const fs::path err = tmp.path / "err.txt";
    auto check_package_cmd = [&](const fs::path& dir, const std::string& ruleset) {
      return std::string("'") + REFEREE_BINARY + "' check-package " + shell_quote(dir) + " --ruleset " + ruleset +
             " --rules " + shell_quote(reference_rules()) + " -j 2 --json > " + shell_quote(out) + " 2> " +
             shell_quote(err);
    };

    SUBCASE("a passing package") {
      CHECK(run_shell(check_package_cmd(p.org, "training-3.1.0")) == 0);
      Value j = parse_json_file(out);
      CHECK(str(at(j, "schema")) == "referee.check-package/1");
      CHECK(str(at(j, "verdict")) == "pass");
    }
    SUBCASE("a failing file") {
      size_t i = 0;
      edit_lines(p.file(3), [&](auto& l) {
        i = index_of(l, key_text("opt_name"));
        l[i] = replace_once(l[i], "\"value\": \"adam\"", "\"value\": \"sgd\"");
      });
      edit_lines(p.file(1), [](auto& l) { drop_lines(l, key_text("run_stop")); });
      CHECK(run_shell(check_package_cmd(p.org, "training-3.1.0")) == 1);
      Value j = parse_json_file(out);
      CHECK(str(at(j, "schema")) == "referee.check-package/1");
      CHECK(str(at(j, "verdict")) == "fail");
      const Value& dir = at(at(j, "benchmarks"), std::string(kSsd.system) + "/ssd");
      REQUIRE(dir.kind == VKind::Dict);
      CHECK(str(at(dir, "verdict")) == "fail");
      const Value& f3 = at(at(dir, "files"), "result_3.txt");
      CHECK(at(f3, "compliant").kind == VKind::Bool);
      CHECK_FALSE(at(f3, "compliant").b);
      const Value& errors = at(f3, "errors");
      REQUIRE(errors.kind == VKind::List);
      REQUIRE(errors.items().size() == 1);
      const Value& e = errors.items()[0];
      CHECK(at(e, "line").is_num());
      CHECK(at(e, "line").as_double() == static_cast<double>(i + 1));
      CHECK(str(at(e, "rule")) == "closed_ssd.yaml KEY opt_name CHECK");
      CHECK(str(at(e, "message")) == "CHECK for 'opt_name' failed");
      CHECK(str(at(e, "key")) == "opt_name");
      CHECK(contains(str(at(e, "found")), "sgd"));
      const Value& e1 = item(at(at(at(dir, "files"), "result_1.txt"), "errors"), 0);
      CHECK(str(at(e1, "rule")) == "common.yaml KEY run_stop REQ EXACTLY_ONE");
      CHECK(at(e1, "line").as_double() == 0);
      const Value& dir_errors = at(dir, "errors");
      REQUIRE(dir_errors.kind == VKind::List);
      REQUIRE(dir_errors.items().size() == 1);
      CHECK(str(at(dir_errors.items()[0], "message")) == "2 files do not comply, directory cannot be accepted");
    }
    SUBCASE("human output names the file and line") {
      size_t i = 0;
      edit_lines(p.file(3), [&](auto& l) {
        i = index_of(l, key_text("opt_name"));
        l[i] = replace_once(l[i], "\"value\": \"adam\"", "\"value\": \"sgd\"");
      });
      const std::string cmd = std::string("NO_COLOR=1 '") + REFEREE_BINARY + "' check-package " + shell_quote(p.org) +
                              " --ruleset training-3.1.0 --rules " + shell_quote(reference_rules()) + " > " +
                              shell_quote(out) + " 2> " + shell_quote(err);
      CHECK(run_shell(cmd) == 0);  // one bad file: accepted under olympic scoring
      const std::string text = read_bytes(out);
      CHECK(contains(text, "PASS " + std::string(kSsd.system) + "/ssd"));
      CHECK(contains(text, "(1 non-compliant)"));
    }
    SUBCASE("the check command on one file") {
      edit_lines(p.file(0), [](auto& l) {
        size_t k = index_of(l, key_text("opt_name"));
        l[k] = replace_once(l[k], "\"value\": \"adam\"", "\"value\": \"sgd\"");
      });
      const std::string cmd = std::string("'") + REFEREE_BINARY + "' check " + shell_quote(p.file(0)) + " " +
                              shell_quote(p.file(1)) + " --ruleset training-3.1.0 --rules " +
                              shell_quote(reference_rules()) + " --json > " + shell_quote(out) + " 2> " +
                              shell_quote(err);
      CHECK(run_shell(cmd) == 1);
      Value j = parse_json_file(out);
      CHECK(str(at(j, "schema")) == "referee.check/1");
      CHECK(str(at(j, "verdict")) == "fail");
      const Value& f0 = at(at(j, "files"), p.file(0).string());
      CHECK_FALSE(at(f0, "compliant").b);
      CHECK(at(at(at(j, "files"), p.file(1).string()), "compliant").b);
    }
    SUBCASE("a missing directory") {
      CHECK(run_shell(check_package_cmd(tmp.path / "no-such-org", "training-3.1.0")) == 2);
      CHECK(contains(read_bytes(err), "not a directory"));
    }
    SUBCASE("an unknown rule set") {
      CHECK(run_shell(check_package_cmd(p.org, "training-9.9.9")) == 2);
      CHECK_FALSE(read_bytes(err).empty());
    }
    SUBCASE("a missing file for check") {
      const std::string cmd = std::string("'") + REFEREE_BINARY + "' check " +
                              shell_quote(tmp.path / "result_0.txt") + " --ruleset training-3.1.0 --rules " +
                              shell_quote(reference_rules()) + " > " + shell_quote(out) + " 2> " + shell_quote(err);
      CHECK(run_shell(cmd) == 2);
    }
  }

  // ------------------------------------------------ later rounds, odd inputs
  TEST_CASE("round 4.0 ResNet: closed_resnet.yaml enqueues round 3.1's closed_resnet_lars.yaml") {
    // The consortium resolves enqueue_config paths from the compliance_checker
    // root, any round's folder. On this published 3.1 log its compliance
    // checker (--ruleset 4.0.0) says SUCCESS after running
    // training_3.1.0/closed_resnet_lars.yaml; without the lars_opt_momentum
    // line it says FAILED ("Required EXACTLY_ONE occurrence of
    // 'lars_opt_momentum' but found 0").
    if (!have_reference_data()) return;
    referee::rules::RuleSource src;
    std::string error;
    auto rs = referee::rules::resolve_ruleset("training-4.0.0", reference_rules(), &src, &error);
    REQUIRE_MESSAGE(rs, error);
    const Source resnet{"NVIDIA", "eos_n8_ngc23.09_mxnet", "resnet"};
    const std::string orig = read_bytes(resnet.file(0));
    auto check40 = [&](const std::string& text) {
      referee::mllog::LogReader reader;
      ParsedLog log;
      reader.parse(text, &log);
      return check_log(*rs, log);
    };
    FileVerdict v = check40(orig);
    CHECK_MESSAGE(v.compliant, describe(v.errors));

    auto lines = split_lines(orig);
    CHECK(drop_lines(lines, key_text("lars_opt_momentum")) == 1);
    FileVerdict no_momentum = check40(join_lines(lines));
    CHECK_FALSE(no_momentum.compliant);
    CHECK_MESSAGE(find_rule(no_momentum.errors, "closed_resnet_lars.yaml KEY lars_opt_momentum REQ EXACTLY_ONE"),
                  describe(no_momentum.errors));

    SUBCASE("opt_name 'adam' has no rule file: the finding names the line, the key and the value") {
      // The consortium's checker stops with FileNotFoundError on
      // training_3.1.0/closed_resnet_adam.yaml (after a failed CHECK on opt_name).
      auto l = split_lines(orig);
      size_t i = index_of(l, key_text("opt_name"));
      l[i] = replace_once(l[i], "\"value\": \"lars\"", "\"value\": \"adam\"");
      FileVerdict adam = check40(join_lines(l));
      CHECK_FALSE(adam.compliant);
      const Finding* f = find_rule(adam.errors, "enqueue_config");
      REQUIRE_MESSAGE(f, describe(adam.errors));
      CHECK(f->line == i + 1);
      CHECK(f->key == "opt_name");
      CHECK(f->rule == "closed_resnet.yaml KEY opt_name enqueue_config");
      CHECK(contains(f->message, "training_3.1.0/closed_resnet_adam.yaml"));
      CHECK(contains(f->message, "opt_name = 'adam'"));
      CHECK(contains(f->expected, "one of 'lars', 'sgd'"));
      CHECK_FALSE(contains(f->hint, "benchmark"));
    }
  }

  TEST_CASE("a file that is not a log: the reason comes first and alone") {
    if (!have_reference_data()) return;
    TempDir tmp;
    const fs::path text = tmp.path / "passwd.txt", binary = tmp.path / "random.bin", empty = tmp.path / "empty.txt";
    write_bytes(text, fs::exists("/etc/passwd") ? read_bytes("/etc/passwd") : "root:x:0:0:root:/root:/bin/bash\n");
    std::mt19937 rng(9);
    std::string bytes(4096, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
    REQUIRE_FALSE(contains(bytes, ":::MLLOG"));
    write_bytes(binary, bytes);
    write_bytes(empty, "");
    const fs::path out = tmp.path / "out.txt", err = tmp.path / "err.txt";
    const std::string files = shell_quote(text) + " " + shell_quote(binary) + " " + shell_quote(empty);
    const std::string base = std::string("'") + REFEREE_BINARY + "' check " + files +
                             " --ruleset training-3.1.0 --rules " + shell_quote(reference_rules());
    CHECK(run_shell(base + " > " + shell_quote(out) + " 2> " + shell_quote(err)) == 1);
    const auto human = split_lines(read_bytes(out));
    // Per file: the FAIL line, then one finding ("No log lines detected") and its details.
    size_t fails = 0, reasons = 0;
    for (size_t k = 0; k < human.size(); ++k) {
      if (human[k].rfind("FAIL ", 0) == 0) {
        ++fails;
        REQUIRE(k + 1 < human.size());
        CHECK_MESSAGE(contains(human[k + 1], "No log lines detected"), human[k + 1]);
      }
      if (contains(human[k], "No log lines detected")) ++reasons;
      CHECK_FALSE(contains(human[k], "REQ"));
      CHECK_FALSE(contains(human[k], "enqueue_config"));
    }
    CHECK(fails == 3);
    CHECK(reasons == 3);
    CHECK(human.size() <= 3 * 6 + 1);

    CHECK(run_shell(base + " --json > " + shell_quote(out) + " 2> " + shell_quote(err)) == 1);
    Value j = parse_json_file(out);
    for (const auto& f : {text, binary, empty}) {
      CAPTURE(f);
      const Value& errors = at(at(at(j, "files"), f.string()), "errors");
      REQUIRE(errors.kind == VKind::List);
      CHECK(errors.items().size() == 1);
      CHECK(str(at(item(errors, 0), "message")) == "No log lines detected");
    }
  }

  TEST_CASE("a file whose only MLLOG line does not parse: the reason says so, the bad line follows") {
    if (!have_reference_data()) return;
    TempDir tmp;
    const fs::path log = tmp.path / "damaged.txt", out = tmp.path / "out.txt", err = tmp.path / "err.txt";
    write_bytes(log, "garbage\n:::MLLOG {\"key\": bad json\n");
    const std::string cmd = std::string("'") + REFEREE_BINARY + "' check " + shell_quote(log) +
                            " --ruleset training-3.1.0 --rules " + shell_quote(reference_rules());
    CHECK(run_shell(cmd + " --json > " + shell_quote(out) + " 2> " + shell_quote(err)) == 1);
    Value j = parse_json_file(out);
    const Value& errors = at(at(at(j, "files"), log.string()), "errors");
    REQUIRE(errors.kind == VKind::List);
    REQUIRE(errors.items().size() == 2);
    bool reason = false, bad_line = false;
    for (const auto& e : errors.items()) {
      if (str(at(e, "message")) == "No log lines detected") {
        reason = true;
        CHECK(contains(str(at(e, "found")), "none of them valid JSON"));
      }
      if (contains(str(at(e, "message")), "MLLOG line does not parse")) bad_line = true;
    }
    CHECK(reason);
    CHECK(bad_line);
  }

  TEST_CASE("a second run_start: a warning in check and score, time to train as the summarizer counts it") {
    // The mutation below (a copy of run_start after the 21st MLLOG line that
    // follows it, with that line's time_ms) gives, with the consortium's tools:
    // compliance checker 3.1.0 "WARNING - Required EXACTLY_ONE occurrence of
    // 'run_start' but found 2" and success; result_summarizer on this mini
    // package (the ten files, no scaling.json): bert 5.248664583333333.
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    double first_ms = 0, second_ms = 0, stop_ms = 0;
    size_t second_line = 0;
    edit_lines(p.file(0), [&](auto& l) {
      size_t rs = index_of(l, key_text("run_start"));
      size_t j = rs, seen = 0;
      while (seen < 21) {
        ++j;
        REQUIRE(j < l.size());
        if (contains(l[j], ":::MLLOG")) ++seen;
      }
      static const std::regex t_re(R"("time_ms": ([0-9]+))");
      std::smatch m;
      REQUIRE(std::regex_search(l[j], m, t_re));
      second_ms = std::stod(m[1].str());
      REQUIRE(std::regex_search(l[rs], m, t_re));
      first_ms = std::stod(m[1].str());
      l.insert(l.begin() + static_cast<long>(j) + 1, with_time_ms(l[rs], static_cast<long long>(second_ms)));
      second_line = j + 2;
      size_t stop = index_of(l, key_text("run_stop"));
      REQUIRE(std::regex_search(l[stop], m, t_re));
      stop_ms = std::stod(m[1].str());
    });
    const fs::path out = tmp.path / "out.txt", err = tmp.path / "err.txt";
    const std::string rules_opt = " --ruleset training-3.1.0 --rules " + shell_quote(reference_rules());
    const std::string check = std::string("'") + REFEREE_BINARY + "' check " + shell_quote(p.file(0)) + rules_opt;
    CHECK(run_shell(check + " > " + shell_quote(out) + " 2> " + shell_quote(err)) == 0);  // the verdict stays
    std::string human = read_bytes(out);
    CHECK(contains(human, "PASS"));
    CHECK(contains(human, "warning"));
    CHECK(contains(human, "'run_start' is logged 2 times"));
    CHECK(contains(human, "last run_start before run_stop: line " + std::to_string(second_line)));
    CHECK(run_shell(check + " --json > " + shell_quote(out) + " 2> " + shell_quote(err)) == 0);
    Value j = parse_json_file(out);
    const Value& w = at(at(at(j, "files"), p.file(0).string()), "warnings");
    CHECK(str(at(item(w, 0), "key")) == "run_start");

    const std::string score = std::string("'") + REFEREE_BINARY + "' score " + shell_quote(p.org) + rules_opt;
    CHECK(run_shell(score + " > " + shell_quote(out) + " 2> " + shell_quote(err)) == 0);
    human = read_bytes(out);
    CHECK_MESSAGE(contains(human, "warning: result_0.txt: 2 run_start lines: time to train counts from line " +
                                      std::to_string(second_line)),
                  human);
    CHECK(run_shell(score + " --json > " + shell_quote(out) + " 2> " + shell_quote(err)) == 0);
    j = parse_json_file(out);
    const Value& bert = at(at(at(at(j, "systems"), kBert.system), "benchmarks"), "bert");
    CHECK(std::fabs(at(bert, "score_minutes").as_double() - 5.248664583333333) < 1e-12);
    bool found = false;
    for (const auto& run : at(bert, "runs").items()) {
      if (str(at(run, "file")) != "result_0.txt") continue;
      found = true;
      CHECK(at(run, "run_starts").as_double() == 2);
      CHECK(at(run, "minutes").as_double() == (stop_ms - second_ms) / 60 / 1000);
      CHECK(at(run, "minutes_from_first_run_start").as_double() == (stop_ms - first_ms) / 60 / 1000);
      CHECK(contains(str(at(run, "warning")), "2 run_start lines"));
    }
    CHECK(found);
    CHECK(run_shell(score + " --csv > " + shell_quote(out) + " 2> " + shell_quote(err)) == 0);
    const std::string csv = read_bytes(out);
    CHECK_FALSE(contains(csv, "warning"));
    CHECK(contains(csv, "5.248664583333333"));
  }

  TEST_CASE("too few runs: the RCP explanation says so, the verdict is the consortium's") {
    // The consortium's package checker on this mini package (2 bert files):
    // "Incorrect number of files ... found 2, expected 10" and "RCP Test
    // Failed: RCP Interpolation" (numpy: "Mean of empty slice").
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    for (int n = 2; n < 10; ++n) fs::remove(p.file(n));
    PackageReport r = run_package(p.org);
    const BenchmarkDir& d = only_dir(r);
    CHECK_FALSE(r.pass);
    CHECK_FALSE(d.pass);
    CHECK(d.rcp_checked);
    CHECK_FALSE(d.rcp.pass);
    CHECK(d.rcp.message == "RCP Interpolation");
    CHECK(d.rcp.too_few_runs);
    const Finding* f = find_rule(d.errors, "RCP");
    REQUIRE_MESSAGE(f, describe(d.errors));
    CHECK(f->message == "RCP Test Failed: RCP Interpolation");
    CHECK(contains(f->found, "too few runs"));
    CHECK_FALSE(contains(f->found, "nan"));
    CHECK_FALSE(contains(f->found, "faster"));
    CHECK(contains(f->hint, "10 result files"));
  }

  TEST_CASE("a result file that cannot be read: the RCP finding names it, not the batch sizes of the others") {
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kSsd);
    fs::remove(p.file(2));
    fs::create_directory(p.file(2));  // where result_2.txt should be: a folder, which no one can read as a log
    PackageReport r = run_package(p.org);
    const BenchmarkDir& d = only_dir(r);
    CHECK_FALSE(d.pass);
    const Finding* f = find_rule(d.errors, "RCP");
    REQUIRE_MESSAGE(f, describe(d.errors));
    CHECK_MESSAGE(f->found.rfind("result_2.txt cannot be read, so it gives the check no global_batch_size", 0) == 0, f->found);
    CHECK(contains(f->hint, "readable regular file"));
    CHECK(f->expected.empty());
    CHECK(contains(d.consortium_stops, "cannot read result_2.txt"));
  }

  TEST_CASE("system status: today's values from 4.0.0 on, with the rule change named; accepted before") {
    // The consortium's system_desc_checker (today's) refuses a status outside
    // its four values for every ruleset from 4.0.0 on, and checks nothing before.
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    fs::path sys = p.org / "systems" / (std::string(kBert.system) + ".json");
    write_bytes(sys, replace_once(read_bytes(sys), "\"status\": \"Available Cloud\"", "\"status\": \"cloud\""));
    SystemFile sf31, sf40;
    std::string division;
    RoundFacts f40 = facts31();
    f40.ruleset = "training-4.0.0";
    f40.system_status_check = true;
    check_system(sys, facts31(), &sf31, &division);
    check_system(sys, f40, &sf40, &division);
    CHECK(sf31.valid);
    REQUIRE(sf31.warnings.size() == 1);
    CHECK(contains(sf31.warnings[0].message, "accepted for training-3.1.0"));
    CHECK(contains(sf31.warnings[0].hint, "\"Available cloud\""));
    CHECK_FALSE(sf40.valid);
    REQUIRE(sf40.errors.size() == 1);
    CHECK(sf40.errors[0].message == "Field status contains a non valid value: cloud");
    CHECK(contains(sf40.errors[0].hint, "the rule changed since training-4.0.0"));
    CHECK(contains(sf40.errors[0].hint, "\"cloud\" is written \"Available cloud\" today"));
  }

  TEST_CASE("a division written \"Closed\": the consortium's verdict, and a warning that seeds and RCPs were not checked") {
    // The consortium's package checker compares the division with "closed"
    // exactly, so "Closed" passes without its seed and RCP checks.
    if (!have_reference_data()) return;
    TempDir tmp;
    MiniPackage p = make_package(tmp, kBert);
    fs::path sys = p.org / "systems" / (std::string(kBert.system) + ".json");
    const std::string json = read_bytes(sys);
    REQUIRE(contains(json, "\"division\": \"closed\""));
    write_bytes(sys, replace_once(json, "\"division\": \"closed\"", "\"division\": \"Closed\""));
    PackageReport r = run_package(p.org);
    const BenchmarkDir& d = only_dir(r);
    CHECK(d.pass);
    CHECK_FALSE(d.rcp_checked);
    const Finding* f = find_rule(d.warnings, "division");
    REQUIRE_MESSAGE(f, describe(d.warnings));
    CHECK(contains(f->message, "seed and RCP checks run only for \"closed\""));
    CHECK(f->found == "\"Closed\"");
  }

  TEST_CASE("rule code that formats with a huge field number: a Python error, not an abort") {
    // '{0777777777777777777777777}'.format(...) raised std::out_of_range in
    // referee; Python raises ValueError "Too many decimal digits in format string".
    TempDir tmp;
    fs::path dir = tmp.path / "compliance_checker" / "training_9.0.0";
    fs::create_directories(dir);
    write_bytes(dir / "common.yaml",
                "- KEY:\n    NAME: run_start\n    REQ: EXACTLY_ONE\n"
                "    CHECK: \" '{0777777777777777777777777}'.format(v['value']) == 'x' \"\n");
    fs::path log = tmp.path / "result_0.txt";
    write_bytes(log, ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", \"key\": "
                     "\"run_start\", \"value\": null, \"metadata\": {\"file\": \"a.py\", \"lineno\": 1}}\n");
    const fs::path out = tmp.path / "out.txt", err = tmp.path / "err.txt";
    const std::string cmd = std::string("'") + REFEREE_BINARY + "' check " + shell_quote(log) +
                            " --ruleset training-9.0.0 --rules " + shell_quote(tmp.path) + " > " + shell_quote(out) +
                            " 2> " + shell_quote(err);
    CHECK(run_shell(cmd) == 1);
    CHECK_MESSAGE(contains(read_bytes(out), "ValueError: Too many decimal digits in format string"), read_bytes(out));
  }
}
