// The store's questions: comparability in speedup, one scaling series per
// accelerator type, damaged and missing stores, read-only questions, failed
// imports, names and their validation, `referee list`, availability, and why
// a run was not counted. Tests that need the binary run it (tests/run_referee.h).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "mllog/json.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/scoring.h"
#include "submissions/table.h"
#include "submissions/cost.h"
#include "submissions/fetch_round.h"
#include "submissions/csv.h"
#include "submissions/import.h"
#include "submissions/queries.h"
#include "submissions/store.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::submissions;
using testing::run_referee;
using testing::TempDir;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// JSON as one line: newlines and the indentation after them left out.
std::string squash(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n') {
      out += s[i];
      continue;
    }
    while (i + 1 < s.size() && s[i + 1] == ' ') ++i;
  }
  return out;
}

// A hand-made store: rounds, results and runs written straight into the schema,
// so that each question meets exactly the case it is tested on.
struct Synthetic {
  std::unique_ptr<Store> s;
  std::string path;
  explicit Synthetic(const fs::path& p) : path(p.string()) {
    std::string error;
    s = Store::open(path, &error);
    REQUIRE_MESSAGE(s, error);
  }
  void exec(const std::string& sql) {
    std::string error;
    REQUIRE_MESSAGE(s->exec(sql.c_str(), &error), error);
  }
  long long last() { return sqlite3_last_insert_rowid(s->db()); }
  long long round(const std::string& name, long long ordinal) {
    Stmt st(s->db(), "INSERT INTO rounds(name, usage, version, ordinal) VALUES (?1, 'training', ?2, ?3)");
    st.bind(1, name).bind(2, name.substr(9)).bind(3, ordinal);
    REQUIRE(st.run());
    return last();
  }
  long long package(long long round_id, const std::string& org) {
    Stmt o(s->db(), "INSERT OR IGNORE INTO organisations(name) VALUES (?1)");
    o.bind(1, org);
    REQUIRE(o.run());
    Stmt p(s->db(), R"sql(INSERT INTO packages(round_id, organisation_id, path, content_sha256, verdict, ruleset_sha256,
                            referee_version, imported_at)
                          VALUES (?1, (SELECT id FROM organisations WHERE name = ?2), '/x', 'h', 'pass', 'r', 'v', 't'))sql");
    p.bind(1, round_id).bind(2, org);
    REQUIRE(p.run());
    return last();
  }
  // One scored result with three counted runs; `fingerprint` names its runs
  // (equal fingerprints in a later round make it a resubmission once linked).
  long long result(long long package_id, const std::string& system, const std::string& submitter,
                   const std::string& accelerator, long long count, double minutes, const std::string& fingerprint,
                   const std::string& availability = "onprem", const std::string& benchmark = "bert") {
    Stmt sy(s->db(), R"sql(INSERT INTO systems(package_id, name, system_name, submitter, division, availability,
                             number_of_nodes, accelerators_per_node, accelerators_count, accelerator_model_name, valid,
                             description_json) VALUES (?1, ?2, ?2, ?3, 'closed', ?4, 1, ?5, ?5, ?6, 1, '{}'))sql");
    sy.bind(1, package_id).bind(2, system).bind(3, submitter).bind(4, availability).bind(5, count).bind(6, accelerator);
    REQUIRE(sy.run());
    long long sys = last();
    Stmt r(s->db(), R"sql(INSERT INTO results(system_id, benchmark, division, verdict, score_minutes, score_pipeline_minutes)
                          VALUES (?1, ?2, 'closed', 'pass', ?3, ?3))sql");
    r.bind(1, sys).bind(2, benchmark).bind(3, minutes);
    REQUIRE(r.run());
    long long id = last();
    for (int i = 0; i < 3; ++i) {
      Stmt run(s->db(), R"sql(INSERT INTO runs(result_id, file, content_sha256, fingerprint, minutes, compliant, counted,
                                messages_json) VALUES (?1, ?2, ?3, ?3, ?4, 1, 1, '[]'))sql");
      run.bind(1, id).bind(2, "result_" + std::to_string(i) + ".txt").bind(3, fingerprint + std::to_string(i)).bind(4, minutes);
      REQUIRE(run.run());
    }
    return id;
  }
  // What import does after writing a package: link runs to their earliest copies.
  void link_resubmissions() {
    exec(R"sql(UPDATE runs SET resubmission_of = (SELECT r2.id FROM runs r2 JOIN results x2 ON r2.result_id = x2.id
                 JOIN systems s2 ON x2.system_id = s2.id JOIN packages p2 ON s2.package_id = p2.id
                 JOIN rounds d2 ON p2.round_id = d2.id
               WHERE r2.fingerprint = runs.fingerprint AND d2.ordinal < (SELECT d.ordinal FROM results x
                 JOIN systems s ON x.system_id = s.id JOIN packages p ON s.package_id = p.id
                 JOIN rounds d ON p.round_id = d.id WHERE x.id = runs.result_id) ORDER BY d2.ordinal LIMIT 1);
               UPDATE results SET resubmission = (SELECT COUNT(*) > 0 AND SUM(r.resubmission_of IS NULL) = 0
                 FROM runs r WHERE r.result_id = results.id);)sql");
  }
  void close() { s.reset(); }
};

std::string db_arg(const std::string& path) { return "--db '" + path + "'"; }

// A JSON answer parsed, or a test failure.
mllog::Json parse(const std::string& text) {
  mllog::Json doc;
  std::string error;
  REQUIRE_MESSAGE(mllog::parse_json_permissive(text, &doc, &error), error << "\n" << text);
  return doc;
}

double num(const mllog::Json* j) {
  REQUIRE(j != nullptr);
  REQUIRE((j->kind == mllog::Json::Kind::Int || j->kind == mllog::Json::Kind::Float));
  return j->kind == mllog::Json::Kind::Int ? static_cast<double>(j->i) : j->f;
}

// Records of a CSV text (CRLF between them), each split into its fields (RFC 4180).
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
    any = true;
  }
  if (any && rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

// The mini example imported into `db` (round mini-1.0.0).
void import_example(const std::string& db, const std::string& pkg = "") {
  std::string out;
  std::string dir = pkg.empty() ? std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg" : pkg;
  int rc = run_referee("import '" + dir + "' --round mini-1.0.0 " + db_arg(db), &out);
  REQUIRE_MESSAGE(rc == 0, out);
}

}  // namespace

TEST_SUITE("store") {
  // ------------------------------------------------------------ defect 5: speedup

  TEST_CASE("speedup counts a resubmission in its first round only and never pairs unlike results as comparable") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    long long p30 = d.package(r30, "NVIDIA"), p31 = d.package(r31, "NVIDIA");
    d.result(p30, "big_n434", "NVIDIA", "NVIDIA H100-SXM5-80GB", 3472, 0.13, "big");
    d.result(p30, "small_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 20.0, "s30");
    d.result(p31, "big_n434", "NVIDIA", "NVIDIA H100-SXM5-80GB", 3472, 0.13, "big");  // the same logs again
    d.result(p31, "small_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 16.0, "s31");
    d.link_resubmissions();
    SpeedupReport rep;
    std::string error;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "training_3.1.0", "BERT", true, "nvidia", false}, &rep, &error), error);
    CHECK(rep.from_round == "training-3.0.0");
    CHECK(rep.to_round == "training-3.1.0");
    REQUIRE(rep.left_out.size() == 1);
    CHECK(contains(rep.left_out[0], "NVIDIA/big_n434 (training-3.1.0)"));
    CHECK(contains(rep.left_out[0], "NVIDIA/big_n434 (training-3.0.0)"));  // and what it copies
    CHECK(contains(rep.left_out[0], "counts in the round it was first submitted in"));
    REQUIRE(rep.pairs.size() == 2);
    // The record of 3.0 (0.13 min on 3,472) stands in 3.1: carried, never a regression to 16 min.
    CHECK(rep.pairs[0].kind == "carried");
    CHECK_FALSE(rep.pairs[0].comparable);
    CHECK(rep.pairs[0].from.round == "training-3.0.0");
    CHECK(rep.pairs[0].from.accelerators == 3472);
    CHECK(rep.pairs[0].to.round == "training-3.1.0");
    CHECK(rep.pairs[0].to.resubmission);
    CHECK(contains(rep.pairs[0].reason, "the record stands, not a regression"));
    CHECK(contains(rep.pairs[0].reason, "the fastest new result of training-3.1.0: NVIDIA/small_n1 (training-3.1.0), 16.00 min"));
    // Same scale, new results only: 8 against 8.
    CHECK(rep.pairs[1].kind == "same-scale");
    CHECK(rep.pairs[1].comparable);
    CHECK(rep.pairs[1].from.accelerators == 8);
    CHECK(rep.pairs[1].to.accelerators == 8);
    CHECK(rep.pairs[1].speedup == doctest::Approx(1.25));
    // The terminal says carried, not a speedup below 1.
    std::string out;
    REQUIRE(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "carried: NVIDIA: training-3.1.0's fastest bert result is carried from an earlier round"));
    CHECK_FALSE(contains(out, "0.01x"));
  }

  TEST_CASE("twins: results whose logs are the same bytes are one result, ranked once, never compared with each other") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r40 = d.round("training-4.0.0", 4000000);
    long long p30 = d.package(r30, "SMC"), p40 = d.package(r40, "SMC"), q40 = d.package(r40, "Other");
    d.result(p30, "smc", "SMC", "NVIDIA H100-SXM5-80GB", 8, 30.0, "old");
    // One system's logs under three names (4.0: smc, smc-ac-power, smc-dc-power), and another result.
    d.result(p40, "smc-dc-power", "SMC", "NVIDIA H100-SXM5-80GB", 8, 25.0, "same");
    d.result(p40, "smc", "SMC", "NVIDIA H100-SXM5-80GB", 8, 25.0, "same");
    d.result(p40, "smc-ac-power", "SMC", "NVIDIA H100-SXM5-80GB", 8, 25.0, "same");
    d.result(q40, "other", "Other", "NVIDIA H100-SXM5-80GB", 8, 24.0, "other");
    std::string error;
    std::vector<std::string> left_out;
    auto board = leaderboard(*d.s, {"4.0.0", "bert", "closed", false}, &error, &left_out);
    REQUIRE(board.size() == 2);  // ranked once
    CHECK(board[0].system == "other");
    CHECK(board[1].system == "smc");  // the first of the twins by name
    CHECK(board[1].twins == std::vector<std::string>{"SMC/smc-ac-power", "SMC/smc-dc-power"});
    REQUIRE(left_out.size() == 2);
    for (const auto& n : left_out) CHECK(contains(n, "is the same logs, byte for byte, as SMC/smc"));
    // Speedup: one same-scale pair for SMC (3.0's smc against 4.0's smc), not three.
    SpeedupReport rep;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "4.0.0", "bert", true, "SMC", false}, &rep, &error), error);
    int same = 0;
    for (const auto& p : rep.pairs) {
      CHECK(p.to.twin_of == 0);
      same += p.kind == "same-scale";
    }
    CHECK(same == 1);
    // Scaling: one point.
    auto series = scaling(*d.s, {"4.0.0", "bert", "", false}, "SMC", &error);
    REQUIRE(series.size() == 1);
    CHECK(series[0].points.size() == 1);
    // The answers name the twins.
    std::string out;
    REQUIRE(run_referee("leaderboard --round 4.0.0 --benchmark bert --json " + db_arg(d.path), &out) == 0);
    CHECK(contains(squash(out), "\"twins\": [\"SMC/smc-ac-power\",\"SMC/smc-dc-power\"]"));
    REQUIRE(run_referee("leaderboard --round 4.0.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "SMC/smc-dc-power (training-4.0.0) is the same logs, byte for byte, as SMC/smc"));
    // In CSV too: the row ranked names its twins (which have no rows of their own).
    REQUIRE(run_referee("leaderboard --round 4.0.0 --benchmark bert --csv " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, ",twin_of,twins"));
    CHECK(contains(out, ",,SMC/smc-ac-power SMC/smc-dc-power"));
    CHECK_FALSE(contains(out, ",smc-dc-power,"));
  }

  TEST_CASE("a benchmark's description follows its lineage: ssd before 2.0 is SSD, from 2.0 RetinaNet; an unknown name is said unknown") {
    struct Case {
      const char *round, *benchmark, *model, *dataset;
    };
    for (const Case& c : {Case{"training-1.1.0", "ssd", "SSD (ResNet-34 backbone)", "COCO 2017"},
                          Case{"training-3.1.0", "ssd", "RetinaNet (ResNeXt-50 backbone)", "OpenImages (MLPerf subset)"},
                          Case{"training-5.0.0", "retinanet", "RetinaNet (ResNeXt-50 backbone)", "OpenImages (MLPerf subset)"},
                          Case{"4.1.0", "gnn", "R-GAT", "IGBH-Full (Illinois Graph Benchmark, heterogeneous)"},
                          Case{"training-3.1.0", "gpt3", "GPT-3 175B", "C4"},
                          Case{"training-3.0.0", "dlrm_dcnv2", "DLRM with DCNv2", "Criteo 4TB, multi-hot"},
                          Case{"training-5.1.0", "llama31_8b", "Llama 3.1 8B", "C4"}}) {
      CAPTURE(c.benchmark);
      CAPTURE(c.round);
      auto d = rules::benchmark_description(c.round, c.benchmark);
      CHECK(d.known);
      CHECK(d.model == c.model);
      CHECK(d.dataset == c.dataset);
      CHECK_FALSE(d.task.empty());
    }
    auto none = rules::benchmark_description("training-9.9.0", "warp_drive");
    CHECK_FALSE(none.known);
    CHECK(none.model.empty());
  }

  TEST_CASE("a benchmark renamed between rounds is one benchmark: ssd (2.0-4.1) is retinanet, gnn is rgat; SSD before 2.0 is not") {
    CHECK(rules::benchmark_lineage("training-4.1.0", "ssd") == "retinanet");
    CHECK(rules::benchmark_lineage("2.0.0", "ssd") == "retinanet");
    CHECK(rules::benchmark_lineage("training-1.1.0", "ssd") == "ssd");  // SSD-ResNet34, another benchmark
    CHECK(rules::benchmark_lineage("training_4.0.0", "gnn") == "rgat");
    CHECK(rules::benchmark_lineage("training-5.0.0", "retinanet") == "retinanet");
    CHECK(rules::benchmark_lineage("training-5.0.0", "bert") == "bert");
    CHECK(rules::benchmark_rename_note("training-5.0.0", "retinanet").empty());
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r11 = d.round("training-1.1.0", 1001000), r41 = d.round("training-4.1.0", 4001000),
              r50 = d.round("training-5.0.0", 5000000);
    long long p11 = d.package(r11, "NVIDIA"), p41 = d.package(r41, "NVIDIA"), p50 = d.package(r50, "NVIDIA");
    d.result(p11, "old", "NVIDIA", "NVIDIA A100-SXM4-80GB", 64, 3.0, "a", "onprem", "ssd");
    d.result(p41, "n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 2.0, "b", "onprem", "ssd");
    d.result(p50, "n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 1.6, "c", "onprem", "retinanet");
    d.result(p41, "g8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 2.0, "g", "onprem", "gnn");
    d.result(p50, "g8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 1.0, "h", "onprem", "rgat");
    std::string error;
    for (const char* name : {"retinanet", "ssd", "SSD"}) {
      INFO(name);
      SpeedupReport rep;
      REQUIRE_MESSAGE(speedups(*d.s, {"4.1.0", "5.0.0", name, false, "", false}, &rep, &error), error);
      CHECK(rep.benchmark == "retinanet");
      REQUIRE(!rep.pairs.empty());
      CHECK(rep.pairs[0].comparable);
      CHECK(rep.pairs[0].speedup == doctest::Approx(1.25));
      bool said = false;
      for (const auto& n : rep.notes) said = said || contains(n, "ssd in training-4.1.0 is retinanet under its earlier name");
      CHECK(said);
    }
    SpeedupReport g;
    REQUIRE_MESSAGE(speedups(*d.s, {"4.1.0", "5.0.0", "gnn", false, "", false}, &g, &error), error);
    REQUIRE(!g.pairs.empty());
    CHECK(g.pairs[0].speedup == doctest::Approx(2.0));
    // The chains: one per benchmark, the renamed one whole; SSD of 1.1 stays its own.
    std::vector<SpeedupChain> chains;
    REQUIRE_MESSAGE(speedup_chains(*d.s, {"", "", "", false, "", false}, nullptr, &chains, &error), error);
    std::map<std::string, std::vector<std::string>> rounds;
    for (const auto& c : chains) rounds[c.benchmark] = c.rounds;
    CHECK(rounds["retinanet"] == std::vector<std::string>{"training-4.1.0", "training-5.0.0"});
    CHECK(rounds["rgat"] == std::vector<std::string>{"training-4.1.0", "training-5.0.0"});
    CHECK(rounds["ssd"] == std::vector<std::string>{"training-1.1.0"});
    CHECK(rounds.count("gnn") == 0);
  }

  TEST_CASE("minutes: four significant digits, exact ties to even as printf rounds them (the page script does the same)") {
    CHECK(minutes_text(224.25) == "224.2");
    CHECK(minutes_text(1235.5) == "1236");
    CHECK(minutes_text(0.03125) == "0.0312");
    CHECK(minutes_text(4.0085) == "4.008");
    CHECK(minutes_text(999.95) == "1000");
    CHECK(minutes_text(9.99995) == "10.00");
    CHECK(minutes_text(0.119275) == "0.1193");
  }

  TEST_CASE("terminal tables line up by columns on the screen: a name with non-ASCII letters is padded as wide as it looks") {
    Table t({"submitter", "minutes"});
    t.add({"M\xc3\xbcller", "1.5"});
    t.add({"NVIDIA", "10.25"});
    t.add({"\xe6\x97\xa5\xe6\x9c\xac", "2"});
    std::ostringstream os;
    t.print(os);
    CHECK(os.str() ==
          "submitter  minutes\n"
          "---------  -------\n"
          "M\xc3\xbcller" + std::string(9, ' ') + "1.5\n"
          "NVIDIA       10.25\n"
          "\xe6\x97\xa5\xe6\x9c\xac" + std::string(13, ' ') + "2\n");
  }

  TEST_CASE("terminal tables show a name's control characters before padding it: the columns after it stay in line") {
    Table t({"submitter", "minutes"});
    t.add({"Evil\x1b[2J\r", "1.5"});
    t.add({"A\xe2\x80\xae" "B", "10.25"});
    std::ostringstream os;
    t.print(os);
    CHECK(os.str() ==
          "submitter    minutes\n"
          "-----------  -------\n"
          "Evil^[[2J^M      1.5\n"
          "A[U+202E]B     10.25\n");
  }

  TEST_CASE("speedup: a carried record slower than the earlier round's is no record: the new results are compared") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r31 = d.round("training-3.1.0", 3001000), r40 = d.round("training-4.0.0", 4000000),
              r41 = d.round("training-4.1.0", 4001000);
    long long p31 = d.package(r31, "NVIDIA"), p40 = d.package(r40, "NVIDIA"), p41 = d.package(r41, "NVIDIA");
    d.result(p31, "old", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 12.0, "old");
    d.result(p40, "new40", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 10.0, "n40");
    d.result(p41, "old", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 12.0, "old");  // 3.1's, carried into 4.1
    d.result(p41, "new41", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 15.0, "n41");
    d.link_resubmissions();
    SpeedupReport rep;
    std::string error;
    REQUIRE_MESSAGE(speedups(*d.s, {"4.0.0", "4.1.0", "bert", false, "", false}, &rep, &error), error);
    REQUIRE(!rep.pairs.empty());
    CHECK(rep.pairs[0].kind == "headline");  // 10 -> 15 on new results: a real slowdown, said as one
    CHECK(rep.pairs[0].to.system == "new41");
    CHECK(rep.pairs[0].speedup == doctest::Approx(10.0 / 15.0));
  }

  TEST_CASE("the speedup's interval takes the score's window: non-compliant runs count as dropped at the slow end") {
    // Compliant {10, 11, 12, 20} and one non-compliant run: the score is the mean of 11, 12, 20.
    std::vector<double> a = {10, 11, 12, 20}, same = {10, 11, 12, 20};
    rules::RatioInterval with = rules::bootstrap_ratio(a, 1, same, 1, 2000, 7, 1, 1);
    REQUIRE(with.ok);
    CHECK(with.low <= 1.0);
    CHECK(with.high >= 1.0);
    CHECK(rules::olympic_mean(a, 1, 1) == doctest::Approx((11.0 + 12 + 20) / 3));
    // More non-compliant runs than the drop: no score, no interval.
    CHECK_FALSE(rules::bootstrap_ratio(a, 1, same, 1, 200, 7, 2, 0).ok);
  }

  TEST_CASE("twins: a withdrawn copy never stands for the others") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r40 = d.round("training-4.0.0", 4000000);
    long long p40 = d.package(r40, "SMC");
    long long first = d.result(p40, "smc", "SMC", "NVIDIA H100-SXM5-80GB", 8, 25.0, "same");
    d.result(p40, "smc-ac-power", "SMC", "NVIDIA H100-SXM5-80GB", 8, 25.0, "same");
    std::vector<ResultRow> rows;
    std::string error;
    rows = results_for(*d.s, {"4.0.0", "bert", "", false}, &error);
    REQUIRE(rows.size() == 2);
    // Mark the first withdrawn as the review would show it, and mark twins again.
    for (auto& r : rows) {
      r.twin_of = 0;
      r.twins.clear();
      if (r.result_id == first) r.review_status = "withdrawn";
    }
    mark_twins_for_test(&rows);
    for (const auto& r : rows) {
      if (r.result_id == first) CHECK(r.twin_of != 0);
      else CHECK(r.twins == std::vector<std::string>{"SMC/smc"});
    }
  }

  TEST_CASE("speedup: the earlier round's record may be a carried one; a faster new result beats it") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000),
              r40 = d.round("training-4.0.0", 4000000);
    long long p30 = d.package(r30, "NVIDIA"), p31 = d.package(r31, "NVIDIA"), p40 = d.package(r40, "NVIDIA");
    d.result(p30, "big", "NVIDIA", "NVIDIA H100-SXM5-80GB", 3072, 0.20, "big");
    d.result(p31, "big", "NVIDIA", "NVIDIA H100-SXM5-80GB", 3072, 0.20, "big");  // carried into 3.1
    d.result(p31, "n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 3.0, "n8");
    d.result(p40, "bigger", "NVIDIA", "NVIDIA H100-SXM5-80GB", 6144, 0.12, "bigger");
    d.link_resubmissions();
    SpeedupReport rep;
    std::string error;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.1.0", "4.0.0", "bert", false, "", false}, &rep, &error), error);
    REQUIRE(!rep.pairs.empty());
    CHECK(rep.pairs[0].kind == "headline");
    CHECK(rep.pairs[0].comparable);
    CHECK(rep.pairs[0].from.accelerators == 3072);  // 3.1's standing record, carried from 3.0
    CHECK(rep.pairs[0].speedup == doctest::Approx(0.20 / 0.12));
    bool said = false;
    for (const auto& n : rep.notes) said = said || contains(n, "training-3.1.0's fastest is a record carried into it");
    CHECK(said);
  }

  TEST_CASE("speedup: efficiency only when the later result has more accelerators, the same in every output") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    long long p30 = d.package(r30, "NVIDIA"), p31 = d.package(r31, "NVIDIA");
    d.result(p30, "n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 4.0, "a");
    d.result(p30, "n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 20.0, "b");
    d.result(p31, "n16", "NVIDIA", "NVIDIA H100-SXM5-80GB", 128, 1.6, "c");
    d.result(p31, "n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 16.0, "d");
    // Another submitter whose fastest results are of equal size: a headline at ratio 1.
    long long q30 = d.package(r30, "Other"), q31 = d.package(r31, "Other");
    d.result(q30, "o8", "Other", "NVIDIA H100-SXM5-80GB", 64, 5.0, "e");
    d.result(q31, "o8", "Other", "NVIDIA H100-SXM5-80GB", 64, 2.5, "f");
    SpeedupReport rep;
    std::string error;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "3.1.0", "bert", true, "", false}, &rep, &error), error);
    REQUIRE(rep.pairs.size() == 4);
    for (const auto& p : rep.pairs) {
      INFO(p.submitter << " " << p.kind);
      CHECK(p.comparable);
      CHECK(p.has_efficiency == (p.to.accelerators > p.from.accelerators));
    }
    // NVIDIA's headline 64 -> 128: 2.5x for 2x, 125%.
    CHECK(rep.pairs[0].submitter == "NVIDIA");
    CHECK(rep.pairs[0].efficiency == doctest::Approx(1.25));
    // The terminal, JSON and CSV say the same: a figure for the one larger pair, none for the others.
    std::string out;
    REQUIRE(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 --json " + db_arg(d.path), &out) == 0);
    mllog::Json doc = parse(out);
    int with = 0;
    for (const auto& p : doc.find("speedups")->items) {
      const mllog::Json* e = p.find("scaling_efficiency");
      REQUIRE(e);
      if (e->kind != mllog::Json::Kind::Null) ++with;
    }
    CHECK(with == 1);
    REQUIRE(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 --csv " + db_arg(d.path), &out) == 0);
    auto rows = read_csv(out);
    REQUIRE(rows.size() == 5);
    size_t col = std::find(rows[0].begin(), rows[0].end(), "scaling_efficiency") - rows[0].begin();
    REQUIRE(col < rows[0].size());
    with = 0;
    for (size_t i = 1; i < rows.size(); ++i) with += !rows[i][col].empty();
    CHECK(with == 1);
    REQUIRE(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "125.0%"));
    CHECK_FALSE(contains(out, "200.0%"));  // Other's 64 -> 64 headline: no efficiency
    // Scaling: the series' smallest result (ratio 1) has none either.
    auto series = scaling(*d.s, {"3.0.0", "bert", "", false}, "NVIDIA", &error);
    REQUIRE(series.size() == 1);
    REQUIRE(series[0].points.size() == 2);
    CHECK_FALSE(series[0].points[0].has_efficiency);
    CHECK(series[0].points[1].has_efficiency);
    CHECK(series[0].points[1].efficiency == doctest::Approx(0.625));
    REQUIRE(run_referee("scaling --round 3.0.0 --benchmark bert --submitter NVIDIA --json " + db_arg(d.path), &out) == 0);
    CHECK(contains(squash(out), "\"efficiency\": null"));
  }

  TEST_CASE("speedup: a group without a pair says why; a round of carried records only says carried") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    long long p30 = d.package(r30, "NVIDIA"), p31 = d.package(r31, "NVIDIA");
    // rnnt: 3.1 has only resubmissions of 3.0's results; 3.0 also has one of its own.
    d.result(p30, "n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 1.6, "r1", "onprem", "rnnt");
    d.result(p30, "n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 4.2, "r2", "onprem", "rnnt");
    d.result(p30, "n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 16.0, "r3", "onprem", "rnnt");
    d.result(p31, "eos_n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 1.6, "r1", "onprem", "rnnt");
    d.result(p31, "eos_n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 4.2, "r2", "onprem", "rnnt");
    // maskrcnn: every 3.1 result copies every 3.0 result: nothing is left on either side.
    d.result(p30, "m8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 4.0, "m1", "onprem", "maskrcnn");
    d.result(p31, "eos_m8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 4.0, "m1", "onprem", "maskrcnn");
    // dlrm: Other has none of it in either round.
    d.result(p30, "d8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 2.0, "d1", "onprem", "dlrm");
    d.result(p31, "d8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 1.5, "d2", "onprem", "dlrm");
    long long o30 = d.package(r30, "Other");
    d.result(o30, "x", "Other", "NVIDIA H100-SXM5-80GB", 8, 9.0, "x1", "onprem", "bert");
    d.link_resubmissions();
    SpeedupReport rep;
    std::string error;
    // rnnt and maskrcnn: 3.1 holds only 3.0's records carried forward: a carried row, no same-scale pair.
    for (const char* bench : {"rnnt", "maskrcnn"}) {
      INFO(bench);
      REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "3.1.0", bench, false, "", false}, &rep, &error), error);
      REQUIRE(rep.pairs.size() == 1);
      CHECK(rep.pairs[0].kind == "carried");
      CHECK(contains(rep.pairs[0].reason, "training-3.1.0 has no new result"));
      REQUIRE(rep.notes.size() == 1);
      CHECK(contains(rep.notes[0], "no same-scale pair (training-3.1.0 has no new result, only records carried into it)"));
    }
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "3.1.0", "dlrm", true, "Other", false}, &rep, &error), error);
    CHECK(rep.pairs.empty());
    REQUIRE(rep.notes.size() == 1);
    CHECK(contains(rep.notes[0], "Other: no scored closed-division dlrm result in training-3.0.0 or in training-3.1.0"));
    // The terminal's chains print them: no benchmark block is left without a line.
    std::string out;
    CHECK(run_referee("speedup --all-rounds --overall " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, ": overall: training-3.1.0's fastest rnnt result is carried from an earlier round"));
    CHECK(contains(out, ": overall: training-3.1.0's fastest maskrcnn result is carried from an earlier round"));
    CHECK(run_referee("speedup --all-rounds --submitter Other " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "Other: no scored closed-division dlrm result in training-3.0.0 or in training-3.1.0"));
  }

  TEST_CASE("speedup says why a pair is not comparable, and an empty answer exits 2") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r40 = d.round("training-4.0.0", 4000000), r50 = d.round("training-5.0.0", 5000000);
    long long a = d.package(r40, "Org"), b = d.package(r50, "Org");
    d.result(a, "h100_n8", "Org", "NVIDIA H100-SXM5-80GB", 64, 10.0, "a");
    d.result(b, "b200_n8", "Org", "NVIDIA B200-SXM-180GB", 64, 4.0, "b");
    // Smaller and slower in the later round, same type: fastest against fastest says nothing.
    d.result(a, "h100_n64", "Org2", "NVIDIA H100-SXM5-80GB", 512, 2.0, "c");
    d.result(b, "h100_n1", "Org2", "NVIDIA H100-SXM-80GB", 8, 50.0, "d");
    d.close();
    SpeedupReport rep;
    std::string error;
    {
      auto s = Store::open(d.path, &error, OpenMode::ReadOnly);
      REQUIRE_MESSAGE(s, error);
      REQUIRE(speedups(*s, {"training-4.0.0", "training-5.0.0", "bert", true, "", false}, &rep, &error));
    }
    REQUIRE(rep.pairs.size() == 2);
    for (const auto& p : rep.pairs) {
      CHECK_FALSE(p.comparable);
      CHECK(p.kind == "headline");
    }
    CHECK(contains(rep.pairs[0].reason, "accelerators differ: H100 SXM vs B200 SXM (64 x H100 vs 64 x B200)"));
    CHECK(contains(rep.pairs[1].reason, "both smaller (8 vs 512 accelerators) and slower"));
    std::string out;
    int rc = run_referee("speedup --benchmark bert --from 4.0.0 --to 5.0.0 --json " + db_arg(d.path), &out);
    CHECK(rc == 2);
    CHECK(contains(out, "\"comparable\": false"));
    CHECK_FALSE(contains(out, "\"comparable\": true"));
    CHECK(contains(out, "no comparable pair"));
    // One submitter, nothing comparable: the reason is printed, and the exit code is 2.
    rc = run_referee("speedup --benchmark bert --from 4.0.0 --to 5.0.0 --submitter Org2 " + db_arg(d.path), &out);
    CHECK(rc == 2);
    CHECK(contains(out, "not comparable: Org2 headline"));
  }

  TEST_CASE("speedup --from/--to names, on a typo, only the benchmarks and submitters of those two rounds") {
    // The store may hold a round the caller may not see (an embargo on the server):
    // its names must not appear in the answer to a question about two others.
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r1 = d.round("training-3.0.0", 3000000), r2 = d.round("training-3.1.0", 3001000),
              r3 = d.round("training-4.0.0", 4000000);
    long long p1 = d.package(r1, "NVIDIA"), p2 = d.package(r2, "NVIDIA"), p3 = d.package(r3, "Secret");
    d.result(p1, "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 40.0, "b1");
    d.result(p2, "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 32.0, "b2", "onprem", "gpt3");
    d.result(p3, "x_n1", "Secret", "NVIDIA B200-SXM-180GB", 8, 20.0, "b3", "onprem", "hiddenbench");
    SpeedupReport rep;
    std::string error;
    CHECK_FALSE(speedups(*d.s, {"3.0.0", "3.1.0", "bret", true, "", false}, &rep, &error));
    CHECK(contains(error, "no benchmark 'bret' in training-3.0.0 or training-3.1.0"));
    CHECK(contains(error, "bert, gpt3"));
    CHECK_FALSE(contains(error, "hiddenbench"));
    error.clear();
    CHECK_FALSE(speedups(*d.s, {"3.0.0", "3.1.0", "bert", true, "NVIDA", false}, &rep, &error));
    CHECK(contains(error, "no submitter or organisation 'NVIDA' in training-3.0.0 or training-3.1.0"));
    CHECK_FALSE(contains(error, "Secret"));
    // A benchmark of only one of the two rounds is a name, not a typo.
    error.clear();
    CHECK(speedups(*d.s, {"3.0.0", "3.1.0", "gpt3", true, "", false}, &rep, &error));
  }

  TEST_CASE("speedup --all-rounds: a submitter only in a round the caller may not see is one the store does not hold") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r1 = d.round("training-3.0.0", 3000000), r2 = d.round("training-4.0.0", 4000000);
    d.result(d.package(r1, "NVIDIA"), "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 40.0, "b1");
    d.result(d.package(r2, "NVIDIA"), "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 20.0, "b2");
    d.result(d.package(r2, "Secret"), "x_n1", "Secret", "NVIDIA B200-SXM-180GB", 8, 4.0, "x2");
    auto hide_4 = [](const std::string& r) { return r != "training-4.0.0"; };
    std::vector<SpeedupChain> chains;
    std::string hidden_error, missing_error, error;
    CHECK(!speedup_chains(*d.s, {"", "", "", true, "Secret", false}, hide_4, &chains, &hidden_error));
    CHECK(!speedup_chains(*d.s, {"", "", "", true, "NoSuch", false}, hide_4, &chains, &missing_error));
    CHECK(hidden_error == "no submitter or organisation 'Secret' in the rounds of the store");
    CHECK(missing_error == "no submitter or organisation 'NoSuch' in the rounds of the store");
    // Seen by one who may see 4.0, the name is known (its chains say what they can).
    speedup_chains(*d.s, {"", "", "", true, "Secret", false}, nullptr, &chains, &error);
    CHECK(error.find("no submitter") == std::string::npos);
    d.close();
  }

  TEST_CASE("speedup refuses --from later than --to, and --overall with --submitter") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    d.result(d.package(r30, "A"), "x", "A", "H100", 8, 2.0, "a");
    d.result(d.package(r31, "A"), "x", "A", "H100", 8, 1.0, "b");
    d.close();
    std::string out;
    CHECK(run_referee("speedup --benchmark bert --from 3.1.0 --to 3.0.0 " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "not earlier than"));
    CHECK(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 --overall --submitter A " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "excludes"));
    CHECK(run_referee("speedup --benchmark bert --from 3.0.0 --to 3.1.0 --overall " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "headline    overall"));
    CHECK(contains(out, "2.00x"));
    CHECK(contains(out, "scale rule"));
  }

  TEST_CASE("speedup: a submitter whose name changed case between rounds is one submitter") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    d.result(d.package(r30, "Acme"), "x", "acme", "H100", 8, 3.0, "a");
    d.result(d.package(r31, "Acme"), "y", "ACME", "H100", 8, 2.0, "b");
    SpeedupReport rep;
    std::string error;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "3.1.0", "bert", true, "", false}, &rep, &error), error);
    REQUIRE(rep.pairs.size() == 2);
    CHECK(rep.pairs[0].submitter == "ACME");
    CHECK(rep.pairs[0].speedup == doctest::Approx(1.5));
    CHECK(rep.notes.empty());
  }

  // ------------------------------------------------------------ defect 6: scaling

  TEST_CASE("scaling keeps one series per accelerator type, with an accelerator column") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r = d.round("training-5.0.0", 5000000);
    long long p = d.package(r, "Org");
    d.result(p, "h100_n8", "Org", "NVIDIA H100-SXM5-80GB", 64, 40.0, "a");
    d.result(p, "h100_n64", "Org", "NVIDIA H100-SXM5-80GB", 512, 6.0, "b");
    d.result(p, "b200_n1", "Org", "NVIDIA B200-SXM-180GB", 8, 100.0, "c");
    d.result(p, "b200_n8", "Org", "NVIDIA B200-SXM-180GB", 64, 14.0, "e");
    d.close();
    std::string error;
    auto s = Store::open(d.path, &error, OpenMode::ReadOnly);
    REQUIRE_MESSAGE(s, error);
    auto series = scaling(*s, {"training-5.0.0", "bert", "", false}, "org", &error);
    REQUIRE_MESSAGE(series.size() == 2, error);
    CHECK(series[0].accelerator_type == "B200");
    CHECK(series[1].accelerator_type == "H100");
    for (const auto& sr : series)
      for (const auto& pt : sr.points) CHECK(pt.result.accelerator_type == sr.accelerator_type);
    CHECK(series[0].points[1].size_ratio == doctest::Approx(8.0));
    CHECK(series[0].points[1].speedup == doctest::Approx(100.0 / 14.0));
    CHECK(series[1].points[0].speedup == doctest::Approx(1.0));  // relative to its own smallest, not to the B200s
    std::string out;
    REQUIRE(run_referee("scaling --round 5.0.0 --benchmark BERT --submitter ORG " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "accelerator  system"));
    CHECK(contains(out, "B200         b200_n8"));
    CHECK(contains(out, "H100         h100_n64"));
  }

  TEST_CASE("accelerator types: the family, without vendor words and form factors") {
    CHECK(accelerator_type("NVIDIA H100-SXM5-80GB") == "H100");
    CHECK(accelerator_type("NVIDIA H100-SXM-80GB") == "H100");
    CHECK(accelerator_type("NVIDIA B200-SXM-180GB") == "B200");
    CHECK(accelerator_type("TPU-v5p") == "TPU v5p");
    CHECK(accelerator_type("AMD Instinct MI300X") == "MI300X");
    CHECK(accelerator_type("Intel(R) Gaudi(R) 2 AI Accelerator") == "Gaudi2");
    CHECK(accelerator_type("N/A") == "N/A");  // unknown: as written
  }

  TEST_CASE("speedups compare like accelerators only: Gaudi2 across spellings is compared, H100 PCIe and SXM are not") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r1 = d.round("training-3.1.0", 3100000), r2 = d.round("training-4.0.0", 4000000);
    long long a = d.package(r1, "Intel-HabanaLabs"), b = d.package(r2, "Intel-HabanaLabs");
    d.result(a, "g2_384", "Intel-HabanaLabs", "Habana Gaudi2", 384, 153.58, "a");
    d.result(b, "g2_1024", "Intel-HabanaLabs", "Intel(R) Gaudi(R) 2 AI Accelerator", 1024, 66.91, "b");
    long long c = d.package(r1, "ASUSTeK"), e = d.package(r2, "ASUSTeK");
    d.result(c, "pcie", "ASUSTeK", "NVIDIA H100-PCIe-80GB", 8, 30.0, "c");
    d.result(e, "sxm", "ASUSTeK", "NVIDIA H100-SXM5-80GB", 8, 15.3, "d");
    d.close();
    std::string error;
    auto s = Store::open(d.path, &error, OpenMode::ReadOnly);
    REQUIRE_MESSAGE(s, error);
    SpeedupQuery q;
    q.from_round = "training-3.1.0";
    q.to_round = "training-4.0.0";
    q.benchmark = "bert";
    SpeedupReport rep;
    REQUIRE_MESSAGE(speedups(*s, q, &rep, &error), error);
    bool gaudi = false, asus = false;
    for (const auto& p : rep.pairs) {
      if (p.submitter == "Intel-HabanaLabs" && p.kind == "headline") {
        gaudi = true;
        CHECK(p.comparable);
        CHECK(p.speedup == doctest::Approx(153.58 / 66.91));
        CHECK(p.accelerators == "the same model (Gaudi2)");
      }
      if (p.submitter == "ASUSTeK") {
        asus = true;
        CHECK_FALSE(p.comparable);
        CHECK(contains(p.reason, "H100 PCIe vs H100 SXM: another model of the same family"));
      }
    }
    CHECK(gaudi);
    CHECK(asus);
  }

  // ------------------------------------------------------------ defect 7: damage, read-only, failed imports

  TEST_CASE("a damaged store is reported as damaged, exit 2, never as missing data") {
    TempDir t;
    std::string good = (t.path / "good.db").string();
    import_example(good);
    std::string out;
    REQUIRE(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf " + db_arg(good), &out) == 0);
    auto bytes = testing::read_file(good);
    REQUIRE(bytes.size() > 8192);

    SUBCASE("not a database") {
      std::string p = (t.path / "passwd.db").string();
      testing::write_file(p, std::string("root:x:0:0:root:/root:/bin/bash\n") + std::string(5000, 'x'));
      CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf " + db_arg(p), &out) == 2);
      CHECK(contains(out, "not a referee store: it is not an SQLite database"));
      CHECK(run_referee("import '" + std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg' --round mini-1.0.0 " +
                            db_arg(p), &out) == 2);
      CHECK(testing::read_file(p).rfind("root:x", 0) == 0);  // untouched
    }
    SUBCASE("truncated") {
      std::string p = (t.path / "cut.db").string();
      testing::write_file(p, bytes.substr(0, bytes.size() / 2));
      CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf " + db_arg(p), &out) == 2);
      CHECK(contains(out, "is damaged"));
      CHECK_FALSE(contains(out, "no miniclf results"));
      // The advice never sends a reviewer to an import, which would lose the review.
      CHECK(contains(out, "restore a copy from a backup"));
      CHECK_FALSE(contains(out, "rebuild it with referee import"));
    }
    SUBCASE("a page overwritten") {
      std::string p = (t.path / "bad.db").string();
      std::string b = bytes;
      for (size_t i = b.size() - 3000; i < b.size() - 1000; ++i) b[i] = static_cast<char>(i * 7);
      testing::write_file(p, b);
      CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf " + db_arg(p), &out) == 2);
      CHECK(contains(out, "is damaged"));
    }
    SUBCASE("a table missing") {
      std::string p = (t.path / "notable.db").string();
      testing::write_file(p, bytes);
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(p.c_str(), &raw) == SQLITE_OK);
      REQUIRE(sqlite3_exec(raw, "PRAGMA foreign_keys=OFF; DROP TABLE eval_points; DROP TABLE runs;", nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
      CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf " + db_arg(p), &out) == 2);
      CHECK(contains(out, "is damaged: table(s) runs, eval_points missing"));
      CHECK(contains(out, "not the peer review's users, objections, decisions and log"));
    }
    SUBCASE("an empty file") {
      std::string p = (t.path / "empty.db").string();
      testing::write_file(p, "");
      CHECK(run_referee("list rounds " + db_arg(p), &out) == 2);
      CHECK(contains(out, "an empty file, not a referee store"));
      CHECK(fs::file_size(p) == 0);
      // The review's verify says the same, and writes nothing into it.
      CHECK(run_referee("review log --verify " + db_arg(p), &out) == 2);
      CHECK(contains(out, "an empty file, not a referee store"));
      CHECK(fs::file_size(p) == 0);
    }
    SUBCASE("an SQLite database with no tables: no review command makes it a store") {
      std::string p = (t.path / "blank.db").string();
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(p.c_str(), &raw) == SQLITE_OK);
      REQUIRE(sqlite3_exec(raw, "VACUUM", nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(raw);
      const auto size = fs::file_size(p);
      for (const char* cmd : {"review log --verify", "objection list", "round list", "audit NVIDIA --round 3.1.0",
                              "review report --round 3.1.0", "list rounds"}) {
        CAPTURE(cmd);
        CHECK(run_referee(std::string(cmd) + " " + db_arg(p), &out) == 2);
        CHECK_MESSAGE(contains(out, "is an SQLite database with no tables, not a referee store"), out);
        CHECK(fs::file_size(p) == size);
      }
      REQUIRE(sqlite3_open(p.c_str(), &raw) == SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(raw, "SELECT count(*) FROM sqlite_master", -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      CHECK(sqlite3_column_int(st, 0) == 0);
      sqlite3_finalize(st);
      sqlite3_close(raw);
    }
  }

  TEST_CASE("questions create nothing: no database, no folder, no side files") {
    TempDir t;
    std::string out;
    std::string missing = (t.path / "nodir/x.db").string();
    CHECK(run_referee("leaderboard --round training-3.1.0 --benchmark gpt3 " + db_arg(missing), &out) == 2);
    CHECK(contains(out, "no store at " + missing));
    CHECK_FALSE(fs::exists(t.path / "nodir"));
    // The default path.
    testing::EnvVar xdg("XDG_DATA_HOME", (t.path / "xdg").string());
    testing::EnvVar db("REFEREE_DB", "");
    CHECK(run_referee("speedup --benchmark gpt3 --from 3.0.0 --to 3.1.0", &out) == 2);
    CHECK(contains(out, "no store at " + (t.path / "xdg/referee/referee.db").string()));
    CHECK_FALSE(fs::exists(t.path / "xdg"));
    // An import into a folder that does not exist (a mistyped --db) is refused and makes nothing.
    std::string typo = (t.path / "stroe/a.db").string();
    CHECK(run_referee("import " + std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg --round mini-1.0.0 " + db_arg(typo), &out) == 2);
    CHECK(contains(out, "no folder " + (t.path / "stroe").string() + " for the store " + typo));
    CHECK_FALSE(fs::exists(t.path / "stroe"));
    // An existing store: nothing appears beside it.
    fs::create_directories(t.path / "store");
    std::string good = (t.path / "store/a.db").string();
    import_example(good);
    auto before = testing::snapshot(t.path / "store");
    CHECK(run_referee("list systems --json " + db_arg(good), &out) == 0);
    CHECK(run_referee("compare --round mini-1.0.0 --benchmark miniclf cpu_2x_example cpu_2x_example " + db_arg(good), &out) == 2);
    CHECK(testing::snapshot(t.path / "store") == before);
  }

  TEST_CASE("import refuses a round's folder under another round's name, and folders that are no package") {
    TempDir t;
    std::string out;
    const std::string db = (t.path / "s.db").string();
    // A copy of the example laid out as the consortium's repository of another round.
    fs::path repo = t.path / "training_results_v3.1" / "ExampleOrg";
    fs::create_directories(repo.parent_path());
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", repo, fs::copy_options::recursive);
    CHECK(results_folder_round(repo.string()) == "training v3.1");
    CHECK(results_folder_round((t.path / "training_results_v4.0-main" / "X").string()) == "training v4.0");
    CHECK(results_folder_round((t.path / "results" / "training-5.0.0" / "X").string()) == "training v5.0");
    CHECK(results_folder_round((t.path / "elsewhere").string()).empty());
    std::string named;
    CHECK(results_folder_round_differs(repo.string(), "mini-1.0.0", &named));
    CHECK(named == "training-3.1.0");
    CHECK_FALSE(results_folder_round_differs(repo.string(), "training-3.1.0", &named));
    CHECK(run_referee("import " + repo.string() + " --round mini-1.0.0 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "is a folder of training-3.1.0's results (its path says so), not mini-1.0.0's; nothing was imported"));
    CHECK(contains(out, "hint: --round training-3.1.0"));
    CHECK_FALSE(fs::exists(db));
    // A report written beside the packages is skipped, with a word; on its own it is refused.
    fs::path round = t.path / "round";
    fs::create_directories(round);
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", round / "ExampleOrg", fs::copy_options::recursive);
    fs::create_directories(round / "site" / "results");
    testing::write_file((round / "site" / "results" / "1.html").string(), "<html></html>");
    CHECK(run_referee("import " + round.string() + " --round mini-1.0.0 " + db_arg(db), &out) == 0);
    CHECK(contains(out, "skipped " + (round / "site").string() + ": not a submission package (no systems/ folder"));
    CHECK(contains(out, "imported ExampleOrg"));
    CHECK(run_referee("import " + (round / "site").string() + " --round mini-1.0.0 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "is not a submission package"));
    CHECK(run_referee("list rounds --json " + db_arg(db), &out) == 0);
    CHECK(contains(out, "\"packages\": 1"));
    // A results/ folder given itself: the message says to give the folder above it.
    CHECK(run_referee("import " + (round / "ExampleOrg" / "results").string() + " --round mini-1.0.0 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "it is a results/ folder itself: give the organisation folder above it"));
  }

  TEST_CASE("a store in a read-only folder answers questions") {
    TempDir t;
    fs::path dir = t.path / "ro";
    fs::create_directories(dir);
    std::string db = (dir / "a.db").string();
    import_example(db);
    auto before = testing::snapshot(dir);
    // As root permissions are not enforced: run the question as an unprivileged user then.
    std::string prefix;
    if (geteuid() == 0) {
      if (system("command -v setpriv >/dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: running as root without setpriv; cannot make a folder read-only for the question");
        return;
      }
      prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
      fs::permissions(t.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
    }
    fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    std::string cmd = prefix + REFEREE_BINARY + " leaderboard --round mini-1.0.0 --benchmark miniclf --db '" + db + "' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int st = pclose(p);
    fs::permissions(dir, fs::perms::owner_all);
    CHECK_MESSAGE(WEXITSTATUS(st) == 0, out);
    CHECK(contains(out, "cpu_2x_example"));
    CHECK(testing::snapshot(dir) == before);
  }

  TEST_CASE("a failed import leaves no store behind and prints no count") {
    TempDir t;
    std::string out;
    std::string db = (t.path / "new/dir/x.db").string();
    CHECK(run_referee("import '" + (t.path / "nothing").string() + "' --round mini-1.0.0 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "no such folder"));
    CHECK_FALSE(fs::exists(t.path / "new"));
    // A folder that holds no package.
    fs::create_directories(t.path / "empty");
    CHECK(run_referee("import '" + (t.path / "empty").string() + "' --round mini-1.0.0 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "holds no package"));
    CHECK_FALSE(contains(out, "package(s) in"));
    CHECK_FALSE(fs::exists(t.path / "new"));
    // A rule set that cannot be loaded.
    fs::create_directories(t.path / "Broken/results");
    testing::write_file(t.path / "Broken/results/README", "not a system folder");
    int rc = run_referee("import '" + (t.path / "Broken").string() + "' --round no-such-9.9.9 " + db_arg(db), &out);
    CHECK(rc == 2);
    CHECK_FALSE(fs::exists(t.path / "new"));
    CHECK_FALSE(contains(out, "package(s) in"));
  }

  // ------------------------------------------------------------ defect 8: names, validation, list

  TEST_CASE("names: rounds in any spelling, names in any case, unknown values listed") {
    TempDir t;
    std::string db = (t.path / "a.db").string();
    import_example(db);
    std::string out;
    for (const char* round : {"mini-1.0.0", "mini_1.0.0", "MINI-1.0.0"}) {
      CHECK_MESSAGE(run_referee(std::string("leaderboard --round ") + round + " --benchmark MiniCLF " + db_arg(db), &out) == 0, out);
      CHECK(contains(out, "miniclf, mini-1.0.0"));
    }
    CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf --division closd " + db_arg(db), &out) == 2);
    CHECK(contains(out, "closed"));
    CHECK(contains(out, "open"));
    CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf --division CLOSED " + db_arg(db), &out) == 0);
    CHECK(run_referee("leaderboard --round mini-1.0.0 --benchmark gpt3 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "no benchmark 'gpt3' in mini-1.0.0; the benchmarks are: miniclf, minilm"));
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark miniclf " + db_arg(db), &out) == 2);
    CHECK(contains(out, "round 3.1.0 is not in the store"));
    CHECK(contains(out, "it has: mini-1.0.0"));
    CHECK(run_referee("scaling --round mini-1.0.0 --benchmark miniclf --submitter nobody " + db_arg(db), &out) == 2);
    CHECK(contains(out, "no submitter or organisation 'nobody'"));
    CHECK(contains(out, "ExampleOrg"));
    CHECK(run_referee("scaling --round mini-1.0.0 --benchmark miniclf --submitter exampleorg " + db_arg(db), &out) == 0);
    CHECK(run_referee("compare --round mini-1.0.0 --benchmark miniclf cpu_2x_example ExampleOrg/CPU_2X_EXAMPLE " + db_arg(db), &out) == 2);
    CHECK(contains(out, "name the same result"));
  }

  TEST_CASE("numeric options are validated and a mistyped command is named") {
    std::string out;
    CHECK(run_referee("import . --round mini-1.0.0 -j -3", &out) == 2);
    CHECK(contains(out, "-3"));
    CHECK(run_referee("workload run minilm --seed -1", &out) == 2);
    CHECK(run_referee("run spec.yaml --runs 0", &out) == 2);
    CHECK(contains(out, "referee run: --runs: Value 0 not in range"));
    CHECK(contains(out, "run 'referee run --help' for the options"));
    CHECK(run_referee("score", &out) == 2);
    CHECK(contains(out, "referee score: ORG_DIR is required"));
    CHECK(run_referee("", &out) == 2);
    CHECK(contains(out, "referee: give a command; run 'referee --help' for the commands"));
    CHECK(run_referee("list rounds --db /", &out) == 2);
    CHECK(contains(out, "referee list: / is a folder, not a store file"));
    CHECK(run_referee("run spec.yaml --parallel -2", &out) == 2);
    CHECK(run_referee("check-package . --ruleset mini-1.0.0 --jobs 100000", &out) == 2);
    CHECK(run_referee("leaderbord --round x --benchmark y", &out) == 2);
    CHECK(contains(out, "unknown command 'leaderbord'; did you mean 'leaderboard'?"));
    CHECK(contains(out, "speedup"));  // the commands are listed
    CHECK_FALSE(contains(out, "A subcommand is required"));
    CHECK(run_referee("frobnicate", &out) == 2);
    CHECK(contains(out, "unknown command 'frobnicate'"));
    CHECK_FALSE(contains(out, "did you mean"));
    // A mistyped flag is named, not reported as a missing required one.
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmrk gpt3", &out) == 2);
    CHECK(contains(out, "--benchmrk is not an option of leaderboard; did you mean --benchmark?"));
    CHECK_FALSE(contains(out, "is required"));
    CHECK(run_referee("objection file --round 3.1.0 --agianst NVIDIA", &out) == 2);
    CHECK(contains(out, "--agianst is not an option of objection file; did you mean --against?"));
  }

  TEST_CASE("referee list: rounds, benchmarks, systems, submitters") {
    TempDir t;
    std::string db = (t.path / "a.db").string();
    import_example(db);
    std::string out;
    REQUIRE(run_referee("list rounds " + db_arg(db), &out) == 0);
    CHECK(contains(out, "mini-1.0.0"));
    REQUIRE(run_referee("list benchmarks --round mini_1.0.0 --json " + db_arg(db), &out) == 0);
    CHECK(contains(out, "\"benchmark\": \"miniclf\""));
    CHECK(contains(out, "\"benchmark\": \"minilm\""));
    CHECK(contains(out, "\"results\": 1,"));  // counts are numbers
    REQUIRE(run_referee("list systems " + db_arg(db), &out) == 0);
    CHECK(contains(out, "cpu_2x_example"));
    CHECK(contains(out, "Available on-premise"));
    REQUIRE(run_referee("list submitters --json " + db_arg(db), &out) == 0);
    CHECK(contains(out, "\"submitter\": \"ExampleOrg\""));
    CHECK(run_referee("list sytems " + db_arg(db), &out) == 2);
    CHECK(run_referee("list rounds --round 9.9.9 " + db_arg(db), &out) == 2);
    CHECK(contains(out, "it has: mini-1.0.0"));
  }

  TEST_CASE("availability: every spelling to MLCommons' category, the text kept, an unknown one flagged") {
    // 3.1's five spellings, and the summarizer's own map.
    for (const char* raw : {"Available cloud", "Available in cloud", "Available Cloud", "cloud", "available in the cloud",
                            "Available-Cloud"})
      CHECK_MESSAGE(rules::availability_category(raw) == "Available cloud", raw);
    for (const char* raw : {"Available on-premise", "Available on premise", "available on premise", "onprem",
                            "Available on-premises", "available", "On-prem", "Available on prem"})
      CHECK_MESSAGE(rules::availability_category(raw) == "Available on-premise", raw);
    CHECK(rules::availability_category("preview") == "Preview");
    CHECK(rules::availability_category("Preview") == "Preview");
    CHECK(rules::availability_category("RDI") == "Research, Development, or Internal (RDI)");
    CHECK(rules::availability_category("Research, Development, or Internal") == "Research, Development, or Internal (RDI)");
    CHECK(rules::availability_category("Available in cloud (preview)") == "Preview");
    for (const char* raw : {"", "somewhere", "not available", "cloudy day at the premises of ACME", "not available in cloud",
                            "no cloud"})
      CHECK_MESSAGE(rules::availability_category(raw).empty(), raw);
    // The store's rows: the category shown, the text kept, an unknown one flagged.
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r31 = d.round("training-3.1.0", 3001000);
    long long p = d.package(r31, "NVIDIA");
    d.result(p, "a", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 20.0, "a", "Available in cloud");
    d.result(p, "b", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 21.0, "b", "available on premise");
    d.result(p, "c", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 22.0, "c", "somewhere");
    std::string error;
    auto rows = results_for(*d.s, {"3.1.0", "bert", "", false}, &error);
    REQUIRE(rows.size() == 3);
    std::map<std::string, const ResultRow*> by;
    for (const auto& r : rows) by[r.system] = &r;
    CHECK(by["a"]->availability == "Available cloud");
    CHECK(by["a"]->availability_raw == "Available in cloud");
    CHECK(by["b"]->availability == "Available on-premise");
    CHECK(by["c"]->availability == "somewhere");
    CHECK_FALSE(by["c"]->availability_known);
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json " + db_arg(d.path), &out) == 0);
    CHECK(contains(squash(out), "\"availability\": \"Available cloud\",\"availability_raw\": \"Available in cloud\""));
  }

  TEST_CASE("availability is shown as the consortium's summarizer normalises it") {
    CHECK(normalize_availability("onprem") == "Available on-premise");
    CHECK(normalize_availability("Available Cloud") == "Available cloud");
    CHECK(normalize_availability("cloud") == "Available cloud");
    CHECK(normalize_availability("RDI") == "Research, Development, or Internal (RDI)");
    CHECK(normalize_availability("preview") == "Preview");
    bool known = true;
    CHECK(normalize_availability("somewhere", &known) == "somewhere");
    CHECK_FALSE(known);
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long p = d.package(d.round("training-3.1.0", 3001000), "A");
    d.result(p, "x", "A", "H100", 8, 2.0, "a", "Available Cloud");
    d.result(p, "y", "A", "H100", 8, 3.0, "b", "onprem");
    d.close();
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "Available cloud"));
    CHECK(contains(out, "Available on-premise"));
    CHECK_FALSE(contains(out, "onprem "));
    CHECK_FALSE(contains(out, "Available Cloud"));
    // `score` too.
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", t.path / "ExampleOrg",
             fs::copy_options::recursive);
    fs::path sys = t.path / "ExampleOrg/systems/cpu_2x_example.json";
    std::string desc = testing::read_file(sys);
    size_t at = desc.find("\"Available on-premise\"");
    REQUIRE(at != std::string::npos);
    testing::write_file(sys, desc.replace(at, 22, "\"onprem\""));
    run_referee("score '" + (t.path / "ExampleOrg").string() + "' --ruleset mini-1.0.0", &out);
    CHECK(contains(out, "cpu_2x_example: closed, Available on-premise,"));
  }

  TEST_CASE("runs dropped as non-compliant and by olympic scoring are told apart") {
    TempDir t;
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", t.path / "ExampleOrg",
             fs::copy_options::recursive);
    // One miniclf run loses its run_stop: it cannot be timed, so it is non-compliant.
    fs::path f = t.path / "ExampleOrg/results/cpu_2x_example/miniclf/result_2.txt";
    std::string text = testing::read_file(f), kept;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      if (!contains(line, "\"run_stop\"")) kept += line + "\n";
      start = end + 1;
    }
    testing::write_file(f, kept);
    std::string db = (t.path / "a.db").string();
    import_example(db, (t.path / "ExampleOrg").string());
    std::string out;
    REQUIRE(run_referee("leaderboard --round mini-1.0.0 --benchmark miniclf --json " + db_arg(db), &out) == 0);
    out = squash(out);
    CHECK(contains(out, "{\"file\": \"result_2.txt\",\"minutes\": null,\"counted\": false,\"dropped\": \"noncompliant\"}"));
    CHECK(contains(out, "\"counted\": false,\"dropped\": \"olympic\"}"));
    CHECK(contains(out, "\"counted\": true,\"dropped\": null}"));
    // In the table: * for an olympic drop, ! for a non-compliant run.
    // The untouched package, as a second organisation.
    fs::copy(std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg", t.path / "Other",
             fs::copy_options::recursive);
    import_example(db, (t.path / "Other").string());
    REQUIRE(run_referee("compare --round mini-1.0.0 --benchmark miniclf ExampleOrg/cpu_2x_example Other/cpu_2x_example " +
                            db_arg(db), &out) == 0);
    CHECK(contains(out, "* olympic drop, ! non-compliant"));
    CHECK(contains(out, " -!"));
    CHECK(contains(out, "*"));
  }

  // ------------------------------------------------------------ review status in every question

  TEST_CASE("review decisions: normalised scores, withdrawn results never ranked, moved-to-open counts as open") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r30 = d.round("training-3.0.0", 3000000), r31 = d.round("training-3.1.0", 3001000);
    long long p30 = d.package(r30, "NVIDIA"), p31 = d.package(r31, "NVIDIA"), g31 = d.package(r31, "Google");
    d.result(p30, "eos_n32", "NVIDIA", "NVIDIA H100-SXM5-80GB", 256, 1.2, "a30");
    d.result(p30, "eos_n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 0.7, "b30");
    long long norm = d.result(p31, "eos_n32", "NVIDIA", "NVIDIA H100-SXM5-80GB", 256, 0.85454, "a31");
    long long wd = d.result(p31, "eos_n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 0.5, "b31");
    long long open = d.result(g31, "tpu_v5p", "Google", "TPU-v5p", 256, 0.8, "g31");
    long long pend = d.result(g31, "tpu_v5p_big", "Google", "TPU-v5p", 1024, 0.3, "h31");
    d.exec("UPDATE results SET unscaled_minutes = score_minutes");
    d.exec("INSERT INTO result_status VALUES (" + std::to_string(norm) + ", 'normalised', 1.07575758, NULL, NULL, 't')");
    d.exec("INSERT INTO result_status VALUES (" + std::to_string(wd) + ", 'withdrawn', NULL, NULL, NULL, 't')");
    d.exec("INSERT INTO result_status VALUES (" + std::to_string(open) + ", 'moved-to-open', NULL, NULL, NULL, 't')");
    d.exec("INSERT INTO result_status VALUES (" + std::to_string(pend) + ", 'objection-open', NULL, NULL, NULL, 't')");
    // Decision ids as the review writes them (the rows exist: foreign keys).
    d.exec("INSERT INTO users (name, role, created_at) VALUES ('chair', 'chair', 't')");
    d.exec("INSERT INTO objections (round_id, by_org, against_org, filed_by, title, rule, text, state, created_at) VALUES (" +
           std::to_string(r31) + ", 2, 1, 1, 'rcp', 'rcp', 'x', 'decided', 't')");
    d.exec("INSERT INTO decisions (objection_id, outcome, remedy, factor, votes_uphold, votes_reject, votes_abstain, majority, "
           "decided_by, created_at) VALUES (1, 'upheld', 'normalise', 1.07575758, 3, 0, 0, 'simple', 1, 't')");
    d.exec("UPDATE result_status SET objection_id = 1, decision_id = 1 WHERE result_id = " + std::to_string(norm));
    d.exec("UPDATE result_status SET objection_id = 1 WHERE result_id = " + std::to_string(pend));
    std::string error;
    std::vector<std::string> left_out;
    auto rows = leaderboard(*d.s, {"3.1.0", "bert", "closed", false}, &error, &left_out);
    REQUIRE_MESSAGE(rows.size() == 2, error);
    CHECK(rows[0].system == "tpu_v5p_big");
    CHECK(rows[0].review_status == "objection-open");
    CHECK(review_status_text(rows[0]) == "objection open (objection 1)");
    CHECK(rows[1].system == "eos_n32");
    CHECK(rows[1].score == doctest::Approx(0.9193).epsilon(1e-4));  // 0.85454 x 1.07575758
    CHECK(rows[1].submitted_score == doctest::Approx(0.85454));
    CHECK(review_status_text(rows[1]) == "normalised x1.0758 (decision 1)");
    REQUIRE(left_out.size() == 1);
    CHECK(contains(left_out[0], "NVIDIA/eos_n64"));
    CHECK(contains(left_out[0], "withdrawn"));
    auto opened = leaderboard(*d.s, {"3.1.0", "bert", "open", false}, &error);
    REQUIRE(opened.size() == 1);
    CHECK(opened[0].system == "tpu_v5p");
    CHECK(opened[0].submitted_division == "closed");
    // Scaling and speedup leave the withdrawn result out and say so.
    left_out.clear();
    auto series = scaling(*d.s, {"3.1.0", "bert", "", false}, "NVIDIA", &error, &left_out);
    REQUIRE(series.size() == 1);
    CHECK(series[0].points.size() == 1);
    CHECK(left_out.size() == 1);
    SpeedupReport rep;
    REQUIRE_MESSAGE(speedups(*d.s, {"3.0.0", "3.1.0", "bert", true, "NVIDIA", false}, &rep, &error), error);
    bool withdrawn_named = false;
    for (const auto& n : rep.left_out) withdrawn_named = withdrawn_named || contains(n, "withdrawn");
    CHECK(withdrawn_named);
    for (const auto& p : rep.pairs) CHECK(p.to.system != "eos_n64");
    // compare shows a withdrawn result, with its status.
    auto cmp = find_results(*d.s, {"3.1.0", "bert", "", false}, {"NVIDIA/eos_n64", "NVIDIA/eos_n32"}, &error);
    REQUIRE(cmp.size() == 2);
    CHECK(cmp[0].review_status == "withdrawn");
    // The CLI: a status column in text, a review_status object in JSON, the left-out line.
    d.close();
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "review status"));
    CHECK(contains(out, "normalised x1.0758 (decision 1)"));
    CHECK(contains(out, "0.9193 (normalised)"));
    CHECK(contains(out, "left out: NVIDIA/eos_n64 (training-3.1.0) was withdrawn by the review"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json " + db_arg(d.path), &out) == 0);
    CHECK(contains(squash(out), "\"review_status\": {\"status\": \"normalised\",\"factor\": 1.07575758,\"objection_id\": 1,\"decision_id\": 1"));
    CHECK(contains(squash(out), "\"left_out\": [\"NVIDIA/eos_n64"));
    REQUIRE(run_referee("compare --round 3.1.0 --benchmark bert NVIDIA/eos_n64 NVIDIA/eos_n32 " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "withdrawn"));
    REQUIRE(run_referee("scaling --round 3.1.0 --benchmark bert --submitter NVIDIA " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "left out: NVIDIA/eos_n64"));
    REQUIRE(run_referee("speedup --from 3.0.0 --to 3.1.0 --benchmark bert --submitter NVIDIA " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "withdrawn by the review"));
    // With accelerator-hours and a price the status column stays, last; CSV carries the status as text,
    // and the hours follow the normalised score (256 x 0.9193 min / 60).
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --division closed --price-per-accelerator-hour 2 " + db_arg(d.path), &out) == 0);
    INFO(out);
    CHECK(contains(out, "accelerator-hours  cost   checks  review status"));
    CHECK(contains(out, "0.9193 (normalised)                3.9   7.84  pass    normalised x1.0758 (decision 1)"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --division closed --csv " + db_arg(d.path), &out) == 0);
    auto csv = read_csv(out);
    REQUIRE(csv.size() == 3);
    const size_t status = static_cast<size_t>(std::find(csv[0].begin(), csv[0].end(), "review_status") - csv[0].begin());
    REQUIRE(status < csv[0].size());
    CHECK(csv[0][status + 1] == "checks");
    CHECK(csv[1][status] == "objection open (objection 1)");
    CHECK(csv[2][status] == "normalised x1.0758 (decision 1)");
    CHECK(std::stod(csv[2][14]) == doctest::Approx(256 * 0.85454 * 1.07575758 / 60));
  }

  TEST_CASE("a failed RCP check the committee normalised reads accepted by the decision, the published figure as published") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r31 = d.round("training-3.1.0", 3001000);
    long long p31 = d.package(r31, "NVIDIA");
    long long ssd = d.result(p31, "eos_n256", "NVIDIA", "NVIDIA H100-SXM5-80GB", 2048, 0.85454, "a");
    long long both = d.result(p31, "eos_n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 3.0, "b");
    long long old = d.result(p31, "eos_n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 6.0, "c");
    long long seeds = d.result(p31, "eos_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 30.0, "e");
    d.exec("UPDATE results SET unscaled_minutes = score_minutes, verdict = 'fail', rcp_status = 'found', rcp_pass = 0, "
           "result_count = 5, expected_count = 5, seeds_ok = 1");
    d.exec("UPDATE results SET failed_checks = '[\"RCP\"]' WHERE id = " + std::to_string(ssd));
    d.exec("UPDATE results SET failed_checks = '[\"RCP\", \"olympic scoring\"]' WHERE id = " + std::to_string(both));
    // Imported before schema 8 (no failed_checks): derived from the counts, seeds and RCP columns.
    d.exec("UPDATE results SET seeds_ok = 0 WHERE id = " + std::to_string(seeds));
    d.exec("INSERT INTO users (name, role, created_at) VALUES ('chair', 'chair', 't')");
    d.exec("INSERT INTO objections (round_id, by_org, against_org, filed_by, title, rule, text, state, created_at) VALUES (" +
           std::to_string(r31) + ", 1, 1, 1, 'fast', 'rcp_checker: RCP test', 'x', 'decided', 't')");
    d.exec("INSERT INTO decisions (objection_id, outcome, remedy, factor, votes_uphold, votes_reject, votes_abstain, majority, "
           "decided_by, created_at) VALUES (1, 'upheld', 'normalise', 1.07575758, 3, 0, 0, 'simple', 1, 't')");
    for (long long id : {ssd, both, old, seeds})
      d.exec("INSERT INTO result_status VALUES (" + std::to_string(id) + ", 'normalised', 1.07575758, 1, 1, 't')");
    std::string error;
    auto rows = leaderboard(*d.s, {"3.1.0", "bert", "closed", false}, &error);
    REQUIRE_MESSAGE(rows.size() == 4, error);
    std::map<std::string, ResultRow> by;
    for (const auto& r : rows) by[r.system] = r;
    CHECK(accepted_by(by["eos_n256"]) == 1);
    CHECK(checks_cell(by["eos_n256"]) == "accepted (decision 1)");
    CHECK(std::string(checks_word(by["eos_n256"])) == "accepted");
    CHECK(accepted_text(by["eos_n256"]) ==
          "the RCP check failed; the review committee normalised the score x1.0758 (decision 1 on objection 1: "
          "rcp_checker: RCP test)");
    CHECK(by["eos_n256"].score == doctest::Approx(0.9193).epsilon(1e-4));
    CHECK(by["eos_n256"].submitted_score == doctest::Approx(0.85454));
    // Normalising answers the RCP check only: another failure stays a failure.
    CHECK(accepted_by(by["eos_n64"]) == 0);
    CHECK(checks_cell(by["eos_n64"]) == "FAIL");
    CHECK(accepted_by(by["eos_n8"]) == 1);  // no failed_checks: only the RCP column fails
    CHECK(checks_cell(by["eos_n1"]) == "FAIL");  // no failed_checks, and the seeds failed too
    CHECK(by["eos_n1"].failed_checks == std::vector<std::string>{"seeds", "RCP"});
    // A result that passes is "pass" whatever the review did.
    d.exec("UPDATE results SET verdict = 'pass', failed_checks = '[]' WHERE id = " + std::to_string(ssd));
    rows = leaderboard(*d.s, {"3.1.0", "bert", "closed", false}, &error);
    for (const auto& r : rows)
      if (r.system == "eos_n256") CHECK(checks_cell(r) == "pass");
    d.exec("UPDATE results SET verdict = 'fail', failed_checks = '[\"RCP\"]' WHERE id = " + std::to_string(ssd));
    d.close();
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    INFO(out);
    CHECK(contains(out, "accepted (decision 1)"));
    CHECK(contains(out, "FAIL"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json " + db_arg(d.path), &out) == 0);
    mllog::Json j;
    std::string perr;
    REQUIRE(mllog::parse_json_permissive(out, &j, &perr));
    bool seen = false;
    for (const auto& r : j.find("results")->items) {
      if (r.find("system")->s != "eos_n256") continue;
      seen = true;
      CHECK(r.find("checks")->s == "accepted");
      CHECK(r.find("checks_pass")->kind == mllog::Json::Kind::Bool);
      CHECK_FALSE(r.find("checks_pass")->b);
      CHECK(r.find("accepted")->find("decision_id")->i == 1);
      CHECK(contains(r.find("accepted")->find("why")->s, "normalised the score x1.0758"));
      const mllog::Json* st = r.find("review_status");
      CHECK(st->find("published_score_minutes")->f == doctest::Approx(0.9193).epsilon(1e-4));
      CHECK(st->find("submitted_score_minutes")->f == doctest::Approx(0.85454));
      REQUIRE(r.find("failed_checks")->items.size() == 1);
      CHECK(r.find("failed_checks")->items[0].s == "RCP");
    }
    CHECK(seen);
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --csv " + db_arg(d.path), &out) == 0);
    auto csv = read_csv(out);
    REQUIRE(csv.size() == 5);
    const size_t checks = static_cast<size_t>(std::find(csv[0].begin(), csv[0].end(), "checks") - csv[0].begin());
    REQUIRE(checks < csv[0].size());
    std::set<std::string> words;
    for (size_t i = 1; i < csv.size(); ++i) words.insert(csv[i][checks]);
    CHECK(words == std::set<std::string>{"accepted", "fail"});
  }

  TEST_CASE("in a published round a failed RCP check its package's scaling.json answers reads accepted (scaling.json)") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r31 = d.round("training-3.1.0", 3001000);
    long long p31 = d.package(r31, "NVIDIA");
    long long scaled = d.result(p31, "eos_n256", "NVIDIA", "NVIDIA H100-SXM5-80GB", 2048, 0.9193, "a");
    long long low = d.result(p31, "eos_n64", "NVIDIA", "NVIDIA H100-SXM5-80GB", 512, 3.0, "b");
    long long none = d.result(p31, "eos_n8", "NVIDIA", "NVIDIA H100-SXM5-80GB", 64, 6.0, "c");
    d.exec("UPDATE results SET verdict = 'fail', rcp_status = 'found', rcp_pass = 0, rcp_norm_factor = 1.07575758, "
           "failed_checks = '[\"RCP\"]', result_count = 5, expected_count = 5, seeds_ok = 1");
    d.exec("UPDATE results SET published_factor = 1.07575758 WHERE id = " + std::to_string(scaled));
    d.exec("UPDATE results SET published_factor = 1.05 WHERE id = " + std::to_string(low));  // less than the RCP factor
    d.exec("UPDATE results SET published_factor = 1.0 WHERE id = " + std::to_string(none));
    std::string error;
    auto cells = [&]() {
      std::map<std::string, std::string> out;
      for (const auto& r : leaderboard(*d.s, {"3.1.0", "bert", "closed", false}, &error)) out[r.system] = checks_cell(r);
      return out;
    };
    auto c = cells();
    CHECK(c["eos_n256"] == "accepted (scaling.json)");
    CHECK(c["eos_n64"] == "FAIL");
    CHECK(c["eos_n8"] == "FAIL");
    for (const auto& r : leaderboard(*d.s, {"3.1.0", "bert", "closed", false}, &error))
      if (r.system == "eos_n256")
        CHECK(accepted_text(r) == "the RCP check failed; the package's scaling.json normalises the score x1.0758 (the RCP "
                                  "factor is x1.0758), as its round's review committee published it");
    // Before publication a scaling.json is only the submitter's own.
    d.exec("INSERT INTO round_reviews (round_id, state) VALUES (" + std::to_string(r31) + ", 'review')");
    CHECK(cells()["eos_n256"] == "FAIL");
    d.exec("UPDATE round_reviews SET state = 'published'");
    CHECK(cells()["eos_n256"] == "accepted (scaling.json)");
  }

  TEST_CASE("a schema-5 store whose result_status was dropped is damaged, not answered without status") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r = d.round("training-3.1.0", 3001000);
    d.result(d.package(r, "NVIDIA"), "eos", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 2.0, "x");
    d.exec("DROP TABLE result_status");
    d.close();
    std::string error;
    CHECK_FALSE(Store::open(d.path, &error, OpenMode::ReadOnly));
    CHECK(contains(error, "review table(s) result_status missing"));
    std::string out;
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "damaged"));
  }

  // ------------------------------------------------------------ the terminal keeps up with the dashboards
  TEST_CASE("speedup --all-rounds: each round and the next that has the benchmark, then the first to the last") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long r1 = d.round("training-3.0.0", 3000000), r2 = d.round("training-3.1.0", 3001000),
              r3 = d.round("training-4.0.0", 4000000);
    long long p1 = d.package(r1, "NVIDIA"), p2 = d.package(r2, "NVIDIA"), p3 = d.package(r3, "NVIDIA");
    d.result(p1, "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 40.0, "b1");
    d.result(p2, "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 32.0, "b2");
    d.result(p3, "a_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 20.0, "b3");
    // gpt3 is not in 3.1: its chain goes 3.0 -> 4.0 (and no first-to-last, the same pair).
    d.result(p1, "g_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 100.0, "g1", "onprem", "gpt3");
    d.result(p3, "g_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 50.0, "g3", "onprem", "gpt3");
    // ssd only in 4.0: no chain, said so.
    d.result(p3, "s_n1", "NVIDIA", "NVIDIA H100-SXM5-80GB", 8, 5.0, "s3", "onprem", "ssd");
    std::vector<SpeedupChain> chains;
    std::string error;
    REQUIRE_MESSAGE(speedup_chains(*d.s, {"", "", "", false, "", false}, nullptr, &chains, &error), error);
    REQUIRE(chains.size() == 3);
    CHECK(chains[0].benchmark == "bert");
    CHECK(chains[0].rounds == std::vector<std::string>{"training-3.0.0", "training-3.1.0", "training-4.0.0"});
    REQUIRE(chains[0].steps.size() == 3);
    CHECK(chains[0].steps[0].kind == "consecutive");
    CHECK(chains[0].steps[0].report.to_round == "training-3.1.0");
    CHECK(chains[0].steps[1].report.from_round == "training-3.1.0");
    CHECK(chains[0].steps[2].kind == "first-to-last");
    CHECK(chains[0].steps[2].report.from_round == "training-3.0.0");
    CHECK(chains[0].steps[2].report.to_round == "training-4.0.0");
    REQUIRE(!chains[0].steps[0].report.pairs.empty());
    CHECK(chains[0].steps[0].report.pairs[0].speedup == doctest::Approx(1.25));
    CHECK(chains[0].steps[1].report.pairs[0].speedup == doctest::Approx(1.6));
    CHECK(chains[0].steps[2].report.pairs[0].speedup == doctest::Approx(2.0));
    CHECK(chains[1].benchmark == "gpt3");
    REQUIRE(chains[1].steps.size() == 1);
    CHECK(chains[1].steps[0].report.from_round == "training-3.0.0");
    CHECK(chains[1].steps[0].report.to_round == "training-4.0.0");
    CHECK(chains[2].benchmark == "retinanet");  // ssd in 4.0 is RetinaNet, renamed in 5.0
    CHECK(chains[2].steps.empty());
    REQUIRE(chains[2].notes.size() == 1);
    CHECK(contains(chains[2].notes[0], "only in training-4.0.0"));
    // A round the caller may not see is left out as if the store did not hold it.
    REQUIRE(speedup_chains(*d.s, {"", "", "BERT", false, "", false},
                           [](const std::string& r) { return r != "training-3.1.0"; }, &chains, &error));
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].rounds == std::vector<std::string>{"training-3.0.0", "training-4.0.0"});
    REQUIRE(chains[0].steps.size() == 1);
    CHECK(!speedup_chains(*d.s, {"", "", "ssd", false, "", false}, [](const std::string& r) { return r != "training-4.0.0"; },
                          &chains, &error));
    CHECK(error == "no benchmark 'ssd' in the rounds of the store");
    CHECK(!speedup_chains(*d.s, {"", "", "nosuch", false, "", false}, nullptr, &chains, &error));
    CHECK(contains(error, "no benchmark 'nosuch'"));
    d.close();

    // The command: one block per benchmark, JSON and CSV of the same chain.
    std::string out;
    REQUIRE(run_referee("speedup --all-rounds --overall " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "bert: fastest closed-division results overall, round over round (training-3.0.0, training-3.1.0, training-4.0.0)"));
    CHECK(contains(out, "training-3.0.0 -> training-4.0.0  headline"));
    CHECK(contains(out, "gpt3: fastest closed-division results overall, round over round (training-3.0.0, training-4.0.0)"));
    CHECK(contains(out, "note: retinanet (ssd in training-4.0.0): only in training-4.0.0; no round to compare with"));
    REQUIRE(run_referee("speedup --all-rounds --overall --benchmark BERT --json " + db_arg(d.path), &out) == 0);
    auto doc = parse(out);
    CHECK(doc.find("schema")->s == "referee.speedup-chain/1");
    const auto& benches = doc.find("benchmarks")->items;
    REQUIRE(benches.size() == 1);
    const auto& steps = benches[0].find("steps")->items;
    REQUIRE(steps.size() == 3);
    CHECK(steps[2].find("kind")->s == "first-to-last");
    const auto& pair = steps[2].find("speedups")->items.at(0);
    CHECK(num(pair.find("speedup")) == doctest::Approx(2.0));
    CHECK(num(pair.find("from")->find("accelerator_hours")) == doctest::Approx(8 * 40.0 / 60));
    CHECK(num(pair.find("to")->find("accelerator_hours")) == doctest::Approx(8 * 20.0 / 60));
    CHECK(num(pair.find("accelerator_hours_change")) == doctest::Approx(-0.5));
    CHECK(pair.find("from")->find("cost") == nullptr);  // no price, no cost
    REQUIRE(run_referee("speedup --all-rounds --overall --benchmark bert --csv " + db_arg(d.path), &out) == 0);
    auto rows = read_csv(out);
    REQUIRE(rows.size() == 1 + 3 * 2);  // a header, then headline and same-scale rows of each step
    auto col = [&](const std::string& name) {
      auto it = std::find(rows[0].begin(), rows[0].end(), name);
      REQUIRE_MESSAGE(it != rows[0].end(), name);
      return static_cast<size_t>(it - rows[0].begin());
    };
    CHECK(rows[5][col("chain_step")] == "first-to-last");
    CHECK(rows[5][col("from_round")] == "training-3.0.0");
    CHECK(rows[5][col("to_round")] == "training-4.0.0");
    CHECK(rows[5][col("speedup")] == "2");
    CHECK(rows[5][col("from_accelerator_hours")] == "5.333333333333333");  // full precision
    CHECK(rows[5][col("accelerator_hours_change")] == "-0.5");
    // --from/--to keep working; with neither --all-rounds nor both rounds it is a usage error.
    CHECK(run_referee("speedup --from 3.0.0 --to 4.0.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "training-3.0.0 -> training-4.0.0"));
    CHECK(run_referee("speedup --benchmark bert " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "name the rounds and the benchmark (--from R1 --to R2 --benchmark B), or ask for --all-rounds"));
    CHECK(run_referee("speedup --all-rounds --from 3.0.0 --benchmark bert " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "--from excludes --all-rounds"));
    // Nothing comparable anywhere: exit 2, with the notes.
    CHECK(run_referee("speedup --all-rounds --benchmark ssd " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "note: retinanet (ssd in training-4.0.0): only in training-4.0.0"));
    CHECK(contains(out, "no comparable pair of closed-division results in any two rounds of ssd"));
  }

  TEST_CASE("CSV: RFC 4180 quoting, formula cells guarded, numbers in full precision") {
    CHECK(csv_field("plain") == "plain");
    CHECK(csv_field("a,b") == "\"a,b\"");
    CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_field("two\nlines") == "\"two\nlines\"");
    CHECK(csv_field("cr\rhere") == "\"cr\rhere\"");
    CHECK(csv_field("=1+2") == "'=1+2");
    CHECK(csv_field("+1") == "'+1");
    CHECK(csv_field("-1") == "'-1");
    CHECK(csv_field("@SUM(A1)") == "'@SUM(A1)");
    CHECK(csv_field("=HYPERLINK(\"x\",\"y\")") == "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
    CHECK(csv_field("a=b") == "a=b");  // only the first character counts
    CHECK(csv_field("") == "");
    Csv c;
    c.text("n").text("x").end_row();
    c.number(0.1).number(10.940416666666666).end_row();
    c.number(-2.5).integer(-3).end_row();  // numbers are numbers: never guarded
    c.number(std::nan("")).boolean(true).end_row();
    CHECK(c.str() == "n,x\r\n0.1,10.940416666666666\r\n-2.5,-3\r\n,true\r\n");

    // Through a command: names that a spreadsheet would run, commas and quotes.
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long p = d.package(d.round("training-3.1.0", 3001000), "Org");
    d.result(p, "=cmd|' /C calc'!A0", "Org, \"Inc\"", "NVIDIA H100-SXM5-80GB", 8, 73.0, "a");
    d.result(p, "@sys", "-Org", "NVIDIA H100-SXM5-80GB", 16, 40.0, "b");
    d.close();
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --division closed --csv " + db_arg(d.path), &out) == 0);
    auto rows = read_csv(out);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0] == std::vector<std::string>{"benchmark", "rank", "round", "organisation", "system", "submitter", "division",
                                              "availability", "availability_raw", "accelerator", "accelerator_type", "accelerators", "nodes",
                                              "score_minutes", "accelerator_hours", "checks_pass", "resubmission", "review_status",
                                              "checks", "twin_of", "twins"});
    CHECK(rows[1][4] == "'@sys");
    CHECK(rows[1][5] == "'-Org");
    CHECK(rows[1][13] == "40");
    CHECK(rows[2][4] == "'=cmd|' /C calc'!A0");
    CHECK(rows[2][5] == "Org, \"Inc\"");
    CHECK(contains(out, "\"Org, \"\"Inc\"\"\""));
    CHECK(rows[2][14] == "9.733333333333333");  // 8 x 73 min / 60
    for (const auto& cmd : {"list rounds", "list systems --round 3.1.0", "scaling --round 3.1.0 --benchmark bert --submitter Org",
                            "compare --round 3.1.0 --benchmark bert @sys Org/=cmd|' /C calc'!A0"}) {
      CAPTURE(cmd);
      std::string args = cmd;
      if (args.rfind("compare", 0) == 0) args = "compare --round 3.1.0 --benchmark bert @sys \"Org/=cmd|' /C calc'!A0\"";
      REQUIRE(run_referee(args + " --csv " + db_arg(d.path), &out) == 0);
      CHECK(out.find("\r\n") != std::string::npos);
      CHECK(out.find("\r\n") == out.find('\n') - 1);  // every record ends with CRLF
      for (size_t i = 0; (i = out.find('\n', i)) != std::string::npos; ++i) CHECK(out[i - 1] == '\r');
      CHECK_FALSE(contains(out, ",=cmd"));
    }
    // --csv and --json together are a usage error.
    CHECK(run_referee("leaderboard --round 3.1.0 --benchmark bert --csv --json " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "excludes"));
    CHECK(run_referee("list rounds --json --csv " + db_arg(d.path), &out) == 2);
  }

  TEST_CASE("accelerator-hours and the cost of one training run, per accelerator-hour or per node-month") {
    TempDir t;
    Synthetic d(t.path / "s.db");
    long long p = d.package(d.round("training-3.1.0", 3001000), "Org");
    d.result(p, "server_n1", "Org", "NVIDIA H100-SXM5-80GB", 8, 73.0, "a");  // one 8-GPU server
    d.close();
    // The library: 8 x 73 min = 9.73 accelerator-hours; one node for 73 min at 37000 a month (730 h).
    {
      std::string error;
      auto s = Store::open(d.path, &error, OpenMode::ReadOnly);
      REQUIRE(s);
      auto rows = leaderboard(*s, {"3.1.0", "bert", "", false}, &error);
      REQUIRE(rows.size() == 1);
      double h = 0, cost = 0;
      REQUIRE(accelerator_hours(rows[0], &h));
      CHECK(h == doctest::Approx(8 * 73.0 / 60));
      Price nm;
      REQUIRE(parse_price("37000", Price::Per::NodeMonth, &nm, &error));
      REQUIRE(run_cost(rows[0], nm, &cost));
      CHECK(cost == doctest::Approx(1 * (73.0 / 60) * 37000 / 730));
    }
    std::string out;
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json --price-per-node-month 37000 " + db_arg(d.path), &out) == 0);
    auto doc = parse(out);
    CHECK(num(doc.find("price")) == 37000);
    CHECK(doc.find("price_unit")->s == "per node-month");
    const auto& r = doc.find("results")->items.at(0);
    CHECK(num(r.find("accelerator_hours")) == doctest::Approx(9.7333333));
    CHECK(num(r.find("cost")) == doctest::Approx(61.6666667));  // (73/60) h x 37000 / 730
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --price-per-accelerator-hour 2.5 " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "accelerator-hours  cost   checks"));
    CHECK(contains(out, "9.7  24.33  pass"));  // 9.733 h x 2.5
    CHECK(contains(out, "cost: one training run (the score's time) at 2.5 per accelerator-hour"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --csv --price-per-node-month 37000 " + db_arg(d.path), &out) == 0);
    auto rows = read_csv(out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].back() == "price_unit");
    CHECK(rows[1].back() == "per node-month");
    CHECK(std::find(rows[0].begin(), rows[0].end(), "cost") != rows[0].end());
    REQUIRE(run_referee("compare --round 3.1.0 --benchmark bert server_n1 Org/server_n1 " + db_arg(d.path), &out) == 2);  // named twice
    // Without a price: accelerator-hours, no cost anywhere.
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "accelerator-hours  checks"));
    CHECK_FALSE(contains(out, "cost"));
    REQUIRE(run_referee("leaderboard --round 3.1.0 --benchmark bert --json " + db_arg(d.path), &out) == 0);
    CHECK(contains(out, "\"accelerator_hours\""));
    CHECK_FALSE(contains(out, "\"cost\""));
    CHECK_FALSE(contains(out, "price"));
    // Bad prices and both prices: a clear message, exit 2.
    for (const auto& bad : {"0", "-1", "abc", "inf", "nan", "2.5x", "''"}) {
      CAPTURE(bad);
      CHECK(run_referee(std::string("leaderboard --round 3.1.0 --benchmark bert --price-per-accelerator-hour ") + bad + " " +
                            db_arg(d.path),
                        &out) == 2);
      CHECK(contains(out, "is not a number greater than 0"));
    }
    CHECK(run_referee("speedup --all-rounds --price-per-accelerator-hour 2 --price-per-node-month 3 " + db_arg(d.path), &out) == 2);
    CHECK(contains(out, "excludes"));
  }
}
