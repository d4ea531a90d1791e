// MLPerf HPC packages (results/<system>/strong|weak/<benchmark>/) and the
// places where the consortium's current package checker stops on packages of
// rounds before 3.0, through the referee binary, on packages built here
// against a small rules root of this test's own (so that the logs can be
// short): the rule sets' layout is the consortium's, the facts (benchmarks,
// runs) are referee's for `hpc-3.0.0` and `training-2.1.0`. The differential
// test (tests/oracle) compares the same behaviour with the consortium's tools
// on the real rule sets.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "rules/interp.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using referee::rules::Value;
using referee::rules::VKind;
using referee::testing::run_referee;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

std::string hpc_line(const std::string& key, const std::string& value, long long t, const std::string& meta = "{}") {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(t) +
         ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value +
         ", \"metadata\": " + meta + "}\n";
}

struct HpcRun {
  std::string benchmark = "deepcam";
  long long start = 1000, minutes = 10;
  int seed = 1;
  std::string nodes = "4", accelerators = "8";  // JSON values
  bool with_nodes = true;
  std::string bs = "256";
  double epoch = 10;
  std::string status = "success";
};

std::string hpc_log(const HpcRun& r) {
  long long t = r.start - 500;
  std::string s = hpc_line("submission_benchmark", "\"" + r.benchmark + "\"", t);
  if (r.with_nodes) s += hpc_line("number_of_nodes", r.nodes, t);
  s += hpc_line("accelerators_per_node", r.accelerators, t);
  s += hpc_line("global_batch_size", r.bs, t);
  s += hpc_line("seed", std::to_string(r.seed), t, "{\"file\": \"train.py\", \"lineno\": " + std::to_string(r.seed) + "}");
  s += hpc_line("run_start", "null", r.start);
  long long stop = r.start + r.minutes * 60000;
  s += hpc_line("eval_accuracy", "0.9", stop - 1, "{\"epoch_num\": " + std::to_string(r.epoch) + "}");
  s += hpc_line("run_stop", "null", stop, "{\"status\": \"" + r.status + "\"}");
  return s;
}

// A rules root with the consortium's layout: compliance_checker/<set>/common.yaml
// (a set display in a CHECK, as hpc_3.0.0's openfold rules have) and an RCP
// table whose records sit at 10 epochs.
void write_rules_root(const fs::path& root, const std::string& set, const std::string& benchmark) {
  write_file(root / "compliance_checker" / set / "common.yaml",
             "- KEY:\n    NAME: submission_benchmark\n    REQ: EXACTLY_ONE\n"
             "- KEY:\n    NAME: run_start\n    REQ: EXACTLY_ONE\n"
             "- KEY:\n    NAME: run_stop\n    REQ: EXACTLY_ONE\n"
             "    CHECK: \" v['metadata']['status'] in {'success', 'aborted'} \"\n");
  std::string points = "[10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]";
  write_file(root / "rcp_checker" / set / ("rcps_" + benchmark + ".json"),
             "{\"" + benchmark + "_ref_256\": {\"Benchmark\": \"" + benchmark + "\", \"BS\": 256, "
             "\"Epochs to converge\": " + points + ", \"Hyperparams\": {}}}\n");
}

std::string hpc_system(const std::string& division, bool with_division = true) {
  std::string s = "{";
  if (with_division) s += "\"division\": \"" + division + "\", ";
  const char* fields[] = {"submitter", "status", "system_name", "number_of_nodes", "host_processors_per_node",
                          "host_processor_model_name", "host_processor_core_count", "host_processor_vcpu_count",
                          "host_processor_frequency", "host_processor_caches", "host_processor_interconnect",
                          "host_memory_capacity", "host_storage_type", "host_storage_capacity", "host_networking",
                          "host_networking_topology", "host_memory_configuration", "accelerators_per_node",
                          "accelerator_model_name", "accelerator_host_interconnect", "accelerator_frequency",
                          "accelerator_on-chip_memories", "accelerator_memory_configuration",
                          "accelerator_memory_capacity", "accelerator_interconnect",
                          "accelerator_interconnect_topology", "cooling", "hw_notes", "framework",
                          "other_software_stack", "operating_system", "sw_notes"};
  bool first = true;
  for (const char* f : fields) {
    std::string v = std::string(f) == "number_of_nodes" ? "\"64\"" : std::string(f) == "accelerators_per_node" ? "\"8\"" : "\"x\"";
    s += (first ? "\"" : ", \"") + std::string(f) + "\": " + v;
    first = false;
  }
  return s + "}\n";
}

Value hpc_json(const std::string& text) {
  bool ok = false;
  std::string err;
  Value v = referee::rules::value_from_json(text, &ok, &err);
  REQUIRE_MESSAGE(ok, err << "\n" << text.substr(0, 600));
  REQUIRE(v.kind == VKind::Dict);
  return v;
}

const Value& hpc_at(const Value& d, const std::string& k) {
  static const Value none;
  if (d.kind != VKind::Dict) return none;
  Value* p = d.d().find_str(k);
  return p ? *p : none;
}

std::string str_of(const Value& v) { return v.kind == VKind::Str ? v.s() : std::string(); }

// The five strong-scaling runs deepcam needs in `dir`: 10 to 14 minutes (olympic mean 12), seeds from `seed`.
void write_deepcam_runs(const fs::path& dir, int seed = 100) {
  for (int i = 0; i < 5; ++i) {
    HpcRun r;
    r.minutes = 10 + i;
    r.seed = seed + i;
    write_file(dir / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
}

// A rules root (hpc_3.0.0, deepcam) and a package HpcOrg whose open system
// sysA has the five strong-scaling deepcam runs of write_deepcam_runs.
struct StrongDeepcam {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  fs::path strong = pkg / "results" / "sysA" / "strong" / "deepcam";
  StrongDeepcam() {
    write_rules_root(rules, "hpc_3.0.0", "deepcam");
    write_file(pkg / "systems" / "sysA.json", hpc_system("open"));
    write_deepcam_runs(strong);
  }
};

}  // namespace

TEST_SUITE("scoring") {

TEST_CASE("HPC: strong and weak scaling checked and scored as the consortium's tools do") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  std::string desc = hpc_system("closed");
  const std::string processors = "\"host_processors_per_node\": \"x\"";  // a count the summary multiplies
  REQUIRE(desc.find(processors) != std::string::npos);
  desc.replace(desc.find(processors), processors.size(), "\"host_processors_per_node\": \"2\"");
  write_file(pkg / "systems" / "sysA.json", desc);
  fs::path strong = pkg / "results" / "sysA" / "strong" / "deepcam";
  fs::path weak = pkg / "results" / "sysA" / "weak" / "deepcam";
  // Strong: the five runs deepcam needs, 10 to 14 minutes; olympic mean 12.
  write_deepcam_runs(strong);
  // Weak: seven models (at least five), started over 6 minutes, each 20 minutes;
  // one of them non-compliant (a run_stop status the rules refuse).
  for (int i = 0; i < 7; ++i) {
    HpcRun r;
    r.start = 1000 + i * 60000;
    r.minutes = 20;
    r.seed = 200 + i;
    if (i == 6) r.status = "crashed";
    write_file(weak / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
  std::string out;
  std::string common = " --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string();
  int rc = run_referee("check-package --json" + common, &out);
  CHECK_MESSAGE(rc == 0, out);
  Value j = hpc_json(out);
  CHECK(str_of(hpc_at(j, "verdict")) == "pass");
  const Value& s = hpc_at(hpc_at(j, "benchmarks"), "sysA/strong/deepcam");
  const Value& w = hpc_at(hpc_at(j, "benchmarks"), "sysA/weak/deepcam");
  CHECK(str_of(hpc_at(s, "scaling")) == "strong");
  CHECK(str_of(hpc_at(s, "verdict")) == "pass");
  CHECK(hpc_at(s, "result_count").i == 5);
  CHECK(str_of(hpc_at(w, "scaling")) == "weak");
  CHECK(str_of(hpc_at(w, "verdict")) == "pass");  // one non-compliant file is accepted
  CHECK(hpc_at(w, "result_count").i == 7);
  CHECK(str_of(hpc_at(hpc_at(s, "rcp"), "status")) == "found");
  // The description's status "x" is no availability value of Training's, and MLPerf HPC has none: no warning.
  CHECK_MESSAGE(out.find("system description: status") == std::string::npos, out);

  rc = run_referee("score --json" + common, &out);
  CHECK_MESSAGE(rc == 0, out);
  j = hpc_json(out);
  const Value& row = hpc_at(hpc_at(j, "systems"), "sysA");
  const Value& ss = hpc_at(hpc_at(row, "benchmarks"), "deepcam");
  CHECK(hpc_at(ss, "score_minutes").as_double() == doctest::Approx(12.0));
  const Value& ws = hpc_at(hpc_at(row, "weak"), "deepcam");
  // Six models count: from the first run_start (1000) to the last counted run_stop (1000 + 5 min + 20 min).
  CHECK(hpc_at(ws, "number_of_models").i == 6);
  CHECK(hpc_at(ws, "time_to_train_all_minutes").as_double() == doctest::Approx(25.0));
  CHECK(hpc_at(ws, "instance_scale").i == 32);  // 4 nodes x 8 accelerators
  CHECK(hpc_at(ws, "consortium_stops").kind == VKind::None);

  // The CSV as the summarizer writes it: the strong table, then the weak one, whose counts it casts to float.
  rc = referee::testing::run_shell_capture("{ " + std::string(REFEREE_BINARY) + " score --csv" + common + " 2>/dev/null; }", &out);
  CHECK_MESSAGE(rc == 0, out);
  const std::string score_csv = out;
  CHECK_MESSAGE(out.find(",deepcam:number_of_models,deepcam:instance_scale,deepcam:time_to_train_all,") != std::string::npos, out);
  CHECK_MESSAGE(out.find(",6.0,32.0,25.0,") != std::string::npos, out);

  // Human text names both scalings.
  rc = run_referee("score" + common, &out);
  CHECK(out.find("weak/deepcam: 6 models of 32 accelerators in 25") != std::string::npos);
  CHECK(out.find("deepcam: 12") != std::string::npos);

  // Stored: the strong result as a result, the weak one in the round's weak-scaling table.
  fs::path db = tmp.path / "store.db";
  rc = run_referee("import " + pkg.string() + " --round hpc-3.0.0 --rules " + rules.string() + " --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("1 result, 1 weak-scaling result (7 runs), 5 runs") != std::string::npos, out);
  rc = run_referee("report --db " + db.string() + " --page rounds/hpc-3.0.0/index.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("Weak scaling (MLPerf HPC)") != std::string::npos);
  CHECK(out.find(R"("benchmark":"deepcam","system":"HpcOrg/sysA")") != std::string::npos);
  CHECK(out.find(R"("models":6,"instance_scale":32,"minutes":25)") != std::string::npos);
  CHECK(out.find(R"("closed_minutes":12)") != std::string::npos);  // the strong result
  // Its runs are kept, and a publication of the round writes the weak folder as it was imported.
  rc = run_referee("user add chair1 --role chair --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  const std::string chair_token = out.substr(out.find("token: ") + 7, out.find('\n', out.find("token: ")) - out.find("token: ") - 7);
  // `review publish` of the round as its chair, into `to`, from the store `store`.
  auto publish = [&](const fs::path& to, const fs::path& store, const std::string& flags = "") {
    return referee::testing::run_shell_capture("REFEREE_TOKEN=" + chair_token + " " + std::string(REFEREE_BINARY) +
                                                   " review publish" + flags + " --round hpc-3.0.0 --out " + to.string() +
                                                   " --rules " + rules.string() + " --db " + store.string(),
                                               &out);
  };
  fs::path pub = tmp.path / "pub";
  rc = publish(pub, db, " --json");
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find(R"({"organisation":"HpcOrg","system":"sysA","benchmark":"deepcam","scaling":"weak","status":"as submitted")") !=
        std::string::npos);
  CHECK(out.find(R"("scaling":"strong")") != std::string::npos);
  for (int i = 0; i < 7; ++i) {
    const std::string name = "result_" + std::to_string(i) + ".txt";
    CHECK(referee::testing::read_file(pub / "HpcOrg" / "results" / "sysA" / "weak" / "deepcam" / name) ==
          referee::testing::read_file(weak / name));
  }
  CHECK(fs::exists(pub / "HpcOrg" / "results" / "sysA" / "strong" / "deepcam" / "result_4.txt"));
  // The publication's table is the summarizer's CSV of what it published: both tables.
  CHECK(referee::testing::read_file(pub / "results.csv") == score_csv);
  // Published again through a link to it: the link stays, its target is the new publication; a staging
  // folder left by a publication that was killed is removed.
  fs::create_directory_symlink(pub, tmp.path / "publink");
  fs::create_directories(tmp.path / ".staging-pub-999999999" / "HpcOrg");
  rc = publish(tmp.path / "publink", db);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(fs::is_symlink(tmp.path / "publink"));
  CHECK(fs::exists(pub / "HpcOrg" / "results" / "sysA" / "weak" / "deepcam" / "result_0.txt"));
  CHECK_FALSE(fs::exists(tmp.path / ".staging-pub-999999999"));
  // A weak result file changed since the import stops the publication; the earlier one stays.
  const std::string result_3 = referee::testing::read_file(weak / "result_3.txt");
  write_file(weak / "result_3.txt", result_3 + "\n");
  rc = publish(pub, db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("weak/deepcam/result_3.txt changed since it was imported") != std::string::npos, out);
  CHECK(fs::exists(pub / "HpcOrg" / "results" / "sysA" / "weak" / "deepcam" / "result_6.txt"));
  write_file(weak / "result_3.txt", result_3);
  // A scaling.json that was not there at the import (a factor no one decided): refused; as a link out of the
  // package: refused too.
  write_file(strong / "scaling.json", "{\"scaling_factor\": 0.5}");
  rc = publish(pub, db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("strong/deepcam/scaling.json does not give the factor the package's import read (1.0)") !=
                    std::string::npos,
                out);
  fs::remove(strong / "scaling.json");
  write_file(tmp.path / "outside" / "scaling.json", "{\"scaling_factor\": 1}");
  fs::create_symlink(tmp.path / "outside" / "scaling.json", strong / "scaling.json");
  rc = publish(pub, db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("strong/deepcam/scaling.json leads outside the package (to ") != std::string::npos, out);
  fs::remove(strong / "scaling.json");
  // The same bytes, but as a link to a file outside the package: refused as import refuses it.
  write_file(tmp.path / "outside" / "result_3.txt", result_3);
  fs::remove(weak / "result_3.txt");
  fs::create_symlink(tmp.path / "outside" / "result_3.txt", weak / "result_3.txt");
  rc = publish(pub, db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("weak/deepcam/result_3.txt leads outside the package (to " +
                         fs::weakly_canonical(tmp.path / "outside" / "result_3.txt").string() + ")") != std::string::npos,
                out);
  fs::remove(weak / "result_3.txt");
  write_file(weak / "result_3.txt", result_3);
  // Runs deleted from the store: its rows are not those the import recorded, and the publication is refused.
  fs::path old_db = tmp.path / "old.db";
  fs::copy_file(db, old_db);
  auto edit = [&old_db](const char* sql) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(old_db.c_str(), &raw) == SQLITE_OK);
    CHECK(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  };
  edit("DELETE FROM weak_runs WHERE file = 'result_6.txt'");
  rc = publish(tmp.path / "pub2", old_db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("the store was edited outside referee: package HpcOrg (hpc-3.0.0): its systems, results, scores or "
                         "runs are not what event ") != std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp.path / "pub2"));
  // A status set by hand (the strong result withdrawn, with no decision in the review log): refused, not published
  // as the committee's word.
  fs::copy_file(db, old_db, fs::copy_options::overwrite_existing);
  edit("INSERT INTO result_status SELECT id, 'withdrawn', NULL, NULL, NULL, '2026-01-01T00:00:00Z' FROM results");
  rc = publish(tmp.path / "pub2", old_db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("the store was edited outside referee: result_status row for result ") != std::string::npos, out);
  CHECK_MESSAGE(out.find("no decision or open objection in the review log gives it one") != std::string::npos, out);
  CHECK_FALSE(fs::exists(tmp.path / "pub2"));
  // The review log emptied (the record of the imports gone) and rows deleted with it: refused.
  fs::copy_file(db, old_db, fs::copy_options::overwrite_existing);
  edit("DROP TRIGGER events_append_only_delete; DELETE FROM events; DELETE FROM weak_runs");
  rc = publish(tmp.path / "pub2", old_db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("the store was edited outside referee: package HpcOrg (hpc-3.0.0) has no package.import event") !=
                    std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp.path / "pub2"));
  // Names edited in the store into paths (and the record of the import gone) place nothing outside --out.
  fs::copy_file(db, old_db, fs::copy_options::overwrite_existing);
  edit("DROP TRIGGER events_append_only_delete; DELETE FROM events; "
       "UPDATE organisations SET name = '../../escape' WHERE name = 'HpcOrg'");
  fs::create_directories(tmp.path / "deep" / "er");
  rc = publish(tmp.path / "deep" / "er" / "pub3", old_db);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("the store was edited outside referee: package ../../escape (hpc-3.0.0) has no package.import event") !=
                    std::string::npos,
                out);
  CHECK_FALSE(fs::exists(tmp.path / "escape"));
  CHECK_FALSE(fs::exists(tmp.path / "deep" / "escape"));
  CHECK(fs::is_empty(tmp.path / "deep" / "er"));
  // Listings count the weak-scaling result among the system's and the round's results.
  rc = run_referee("list systems --csv --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("hpc-3.0.0,HpcOrg,sysA,") != std::string::npos, out);
  CHECK_MESSAGE(out.substr(out.find("hpc-3.0.0,HpcOrg,sysA,")).find(",2\r\n") != std::string::npos, out);
  rc = run_referee("list rounds --csv --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("hpc-3.0.0,1,2,12\r\n") != std::string::npos, out);  // 5 strong runs, 7 weak
  rc = run_referee("list benchmarks --csv --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("deepcam,hpc-3.0.0,2,2\r\n") != std::string::npos, out);
  // The same package again changes nothing.
  rc = run_referee("import " + pkg.string() + " --round hpc-3.0.0 --rules " + rules.string() + " --db " + db.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK(out.find("unchanged") != std::string::npos);
}

TEST_CASE("check-package of a round: a folder it cannot read is an error in place, names pass as UTF-8") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", round = tmp.path / "round";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  // A package with non-ASCII names, a link loop where a package would be, a folder that is no package.
  fs::path pkg = round / "\xc3\x9cn\xc3\xaf";
  write_file(pkg / "systems" / "s\xc3\xbfs.json", hpc_system("closed"));
  write_deepcam_runs(pkg / "results" / "s\xc3\xbfs" / "strong" / "deepcam");
  fs::create_directory_symlink(round / "ALoop", round / "ALoop");
  fs::create_directories(round / "notes");
  std::string out;
  std::string common = " --ruleset hpc-3.0.0 --rules " + rules.string() + " " + round.string();
  int rc = referee::testing::run_shell_capture(
      "{ " + std::string(REFEREE_BINARY) + " check-package --json" + common + " 2>/dev/null; }", &out);
  CHECK(rc == 2);  // the loop cannot be checked
  Value j = hpc_json("{\"a\": " + out + "}");
  const Value& a = hpc_at(j, "a");
  REQUIRE(a.kind == VKind::List);
  REQUIRE_MESSAGE(a.items().size() == 2, out);  // one entry for each package, in folder order
  CHECK(str_of(hpc_at(a.items()[0], "verdict")) == "error");
  CHECK(str_of(hpc_at(a.items()[0], "error")).find("cannot read " + (round / "ALoop").string() + ": ") == 0);
  CHECK(str_of(hpc_at(a.items()[1], "package")) == "\xc3\x9cn\xc3\xaf");
  CHECK(str_of(hpc_at(a.items()[1], "verdict")) == "pass");
  CHECK(hpc_at(hpc_at(a.items()[1], "systems"), "s\xc3\xbfs.json").kind == VKind::Dict);
  CHECK(hpc_at(hpc_at(a.items()[1], "benchmarks"), "s\xc3\xbfs/strong/deepcam").kind == VKind::Dict);
  rc = run_referee("check-package" + common + " 2>&1", &out);
  CHECK(rc == 2);
  CHECK(out.find("referee check-package: " + (round / "notes").string() +
                 " has no results/ folder: not a package, passed over") != std::string::npos);
  CHECK(out.find("cannot read " + (round / "ALoop").string()) != std::string::npos);
  rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  j = hpc_json(out);
  CHECK(str_of(hpc_at(j, "package")) == "\xc3\x9cn\xc3\xaf");
  CHECK(hpc_at(hpc_at(j, "systems"), "s\xc3\xbfs").kind == VKind::Dict);
  // A count written as a number: the consortium's checker joins it as text and stops; the note says so.
  std::string desc = hpc_system("closed");
  desc.replace(desc.find("\"accelerators_per_node\": \"8\""), 28, "\"accelerators_per_node\": 8");
  write_file(pkg / "systems" / "s\xc3\xbfs.json", desc);
  rc = run_referee("check-package --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(rc == 1);
  j = hpc_json(out);
  CHECK_MESSAGE(str_of(hpc_at(j, "consortium_stops")) ==
                    "its package checker joins \"accelerators_per_node\" of systems/s\xc3\xbfs.json as text and stops "
                    "with a TypeError (8 (a number), not a string)",
                str_of(hpc_at(j, "consortium_stops")));
  // Written in latin-1: the consortium's json.load stops, so nobody could check the package: invalid.
  desc = hpc_system("closed");
  desc.replace(desc.find("\"sw_notes\": \"x\""), 15, "\"sw_notes\": \"caf\xe9\"");
  desc.replace(desc.find("\"host_processors_per_node\": \"x\""), 31, "\"host_processors_per_node\": \"2\"");
  write_file(pkg / "systems" / "s\xc3\xbfs.json", desc);
  rc = run_referee("check-package --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(rc == 1, out);
  j = hpc_json(out);
  CHECK_MESSAGE(str_of(hpc_at(j, "consortium_stops")).find("stops with UnicodeDecodeError (byte 0xE9 at offset ") != std::string::npos,
                str_of(hpc_at(j, "consortium_stops")));
  CHECK(out.find("save the file as UTF-8") != std::string::npos);
  {
    // UTF-16 (a byte-order mark) and UTF-8 with a byte-order mark: each named, each invalid.
    std::string utf16 = "\xFF\xFE";
    for (char ch : std::string("{\"x\": 1}")) {
      utf16 += ch;
      utf16 += '\0';
    }
    const std::pair<std::string, std::string> cases[] = {
        {utf16, "it is UTF-16 (it starts with the byte-order mark FF FE)"},
        {"\xEF\xBB\xBF" + hpc_system("closed"), "starts with a UTF-8 byte-order mark (EF BB BF)"}};
    for (const auto& [text, said] : cases) {
      write_file(pkg / "systems" / "s\xc3\xbfs.json", text);
      std::string plain;
      rc = run_referee("check-package --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &plain);
      CHECK(rc == 1);
      CHECK_MESSAGE(plain.find(said) != std::string::npos, plain);
      CHECK_MESSAGE(plain.find("\xFF") == std::string::npos, plain);
    }
    write_file(pkg / "systems" / "s\xc3\xbfs.json", desc);
  }
  // score: the row, its text as UTF-8 in the CSV as in the JSON, and the note that the summarizer stops.
  rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(hpc_json(out), "systems"), "s\xc3\xbfs"), "consortium_stops"))
            .find("as UTF-8 and stops with UnicodeDecodeError") != std::string::npos);
  rc = run_referee("score --csv --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(out.find("caf\xc3\xa9") != std::string::npos, out);
  CHECK_MESSAGE(out.find("referee score: note: the consortium's result summarizer reads systems/s\xc3\xbfs.json as UTF-8 and "
                         "stops with UnicodeDecodeError and writes no table at all") != std::string::npos,
                out);
  // A folder where the description should be: said so, by check-package and score alike.
  fs::remove(pkg / "systems" / "s\xc3\xbfs.json");
  fs::create_directories(pkg / "systems" / "s\xc3\xbfs.json");
  rc = run_referee("check-package --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(rc == 1);
  CHECK_MESSAGE(out.find("found:    a folder of that name, not a file") != std::string::npos, out);
  CHECK_MESSAGE(out.find("stops with IsADirectoryError") != std::string::npos, out);
  rc = run_referee("score --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(out.find("systems/s\xc3\xbfs.json is a folder, not a file") != std::string::npos, out);
}

TEST_CASE("report: a submitter's scaling page holds that submitter's results, and every page linked is written") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", round = tmp.path / "round";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  // Organisation Org_X submits as "Org/X"; organisation Org-Y submits as "Org_X"; Zcopy's logs are Org-Y's.
  auto package = [&](const std::string& org, const std::string& submitter, int seed) {
    std::string desc = hpc_system("closed");
    desc.replace(desc.find("\"submitter\": \"x\""), 16, "\"submitter\": \"" + submitter + "\"");
    write_file(round / org / "systems" / "sysA.json", desc);
    write_deepcam_runs(round / org / "results" / "sysA" / "strong" / "deepcam", seed);
  };
  package("Org_X", "Org/X", 100);
  package("Org-Y", "Org_X", 200);
  package("Zcopy", "Copier", 200);
  fs::path db = tmp.path / "s.db";
  std::string out;
  int rc = run_referee("import " + round.string() + " --round hpc-3.0.0 --rules " + rules.string() + " --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  rc = run_referee("report --db " + db.string() + " --page scaling/deepcam/Org_X.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find(R"("Org-Y/sysA")") != std::string::npos);
  CHECK(out.find(R"("Org_X/sysA")") == std::string::npos);
  rc = run_referee("report --db " + db.string() + " --page scaling/deepcam/Org~2fX.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find(R"("Org_X/sysA")") != std::string::npos);
  CHECK(out.find(R"("Org-Y/sysA")") == std::string::npos);
  // The whole site: every scaling page the index links is there (the copy's too, saying why it draws nothing).
  rc = run_referee("report --db " + db.string() + " --out " + (tmp.path / "site").string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  const std::string index = referee::testing::read_file(tmp.path / "site" / "index.html");
  int linked = 0;
  for (size_t at = index.find("scaling/deepcam/"); at != std::string::npos; at = index.find("scaling/deepcam/", at + 1)) {
    std::string file = index.substr(at, index.find(".html", at) + 5 - at);
    CHECK_MESSAGE(fs::exists(tmp.path / "site" / file), file);
    ++linked;
  }
  CHECK(linked >= 3);
}

TEST_CASE("score names the fields of a system description that the summary lacks") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  std::string desc = hpc_system("closed");
  auto drop = [&desc](const std::string& field) {
    size_t at = desc.find(", \"" + field + "\": \"x\"");
    REQUIRE(at != std::string::npos);
    desc.erase(at, field.size() + 9);
  };
  drop("framework");
  drop("hw_notes");
  desc.replace(desc.find("\"accelerators_per_node\": \"8\""), 28, "\"accelerators_per_node\": \"eight\"");
  write_file(pkg / "systems" / "sysA.json", desc);
  write_deepcam_runs(pkg / "results" / "sysA" / "strong" / "deepcam");
  std::string out;
  int rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  Value j = hpc_json(out);
  std::string error = str_of(hpc_at(hpc_at(hpc_at(j, "systems"), "sysA"), "error"));
  CHECK_MESSAGE(error == "systems/sysA.json lacks \"framework\" and \"hw_notes\", which the summary needs (add them; \"\" "
                         "where a field does not apply); has \"host_processors_per_node\" and \"accelerators_per_node\" that "
                         "are not integers (the summary multiplies them by number_of_nodes)",
                error);
  // A description that is not JSON: the reason says where it stops; the text report has no empty fields; the
  // CSV leaves the system out as the summarizer does, and says so on stderr.
  write_file(pkg / "systems" / "sysA.json", "{\"division\": ");
  rc = run_referee("score" + std::string(" --ruleset hpc-3.0.0 --rules ") + rules.string() + " " + pkg.string() + " 2>&1", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("sysA: no system fields\n  error: systems/sysA.json is not JSON (") != std::string::npos, out);
  CHECK_MESSAGE(out.find(", , 0 x") == std::string::npos, out);
  rc = run_referee("score --csv --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string() + " 2>&1 >/dev/null | cat", &out);
  CHECK_MESSAGE(rc == 0, out);
  CHECK_MESSAGE(out.find("referee score: sysA is left out of the table (systems/sysA.json is not JSON (") != std::string::npos, out);
  CHECK_MESSAGE(out.find("the consortium's result summarizer reads systems/sysA.json and stops with JSONDecodeError and "
                         "writes no table at all") != std::string::npos,
                out);
  rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(hpc_json(out), "systems"), "sysA"), "consortium_stops")).find("JSONDecodeError") !=
        std::string::npos);
  // Missing: the summarizer leaves the system out, and says so; so does referee.
  fs::remove(pkg / "systems" / "sysA.json");
  rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  error = str_of(hpc_at(hpc_at(hpc_at(hpc_json(out), "systems"), "sysA"), "error"));
  CHECK_MESSAGE(error.rfind("systems/sysA.json is missing: ", 0) == 0, error);
  rc = referee::testing::run_shell_capture("{ " + std::string(REFEREE_BINARY) + " score --csv --ruleset hpc-3.0.0 --rules " +
                                               rules.string() + " " + pkg.string() + " 2>&1 >/dev/null; }",
                                           &out);
  CHECK_MESSAGE(out.find("sysA is left out of the table, as the consortium's summarizer leaves it out: systems/sysA.json is "
                         "missing") != std::string::npos,
                out);
}

TEST_CASE("score: a scaling.json the summarizer cannot use gives no score and says why, never a score at factor 1") {
  const StrongDeepcam p;
  const fs::path &rules = p.rules, &pkg = p.pkg, &strong = p.strong;
  const std::string cmd = "score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string();
  auto score_of = [&](std::string* note) -> Value {
    std::string out;
    int rc = run_referee(cmd, &out);
    CHECK_MESSAGE(rc == 0, out);
    const Value j = hpc_json(out);
    const Value& b = hpc_at(hpc_at(hpc_at(hpc_at(j, "systems"), "sysA"), "benchmarks"), "deepcam");
    *note = str_of(hpc_at(b, "note"));
    return hpc_at(b, "score_minutes");
  };
  std::string note;
  write_file(strong / "scaling.json", "{\"scaling_factor\": 2}");
  CHECK(score_of(&note).as_double() == doctest::Approx(24.0));
  const std::pair<const char*, const char*> broken[] = {
      {"{\"scaling_factor\": ", "scaling.json is not JSON (unexpected end of text at column 20)"},
      {"{\"scaling_factor\": \"abc\"}", "scaling.json's scaling_factor is 'abc', not a number"},
      {"{\"factor\": 2}", "scaling.json has no \"scaling_factor\""},
      {"[2]", "scaling.json holds JSON that is not an object"},
      {"{\"scaling_factor\": null}", "scaling.json's scaling_factor is null, not a number"},
  };
  for (const auto& b : broken) {
    const std::string text = b.first, why = b.second;
    INFO(text);
    write_file(strong / "scaling.json", text);
    CHECK(score_of(&note).kind == VKind::None);
    CHECK_MESSAGE(note.rfind(std::string(why) + ": the consortium's result summarizer stops with a traceback on it", 0) == 0, note);
  }
  // A factor that is no finite number: no score (the JSON stays JSON); one not above 0: scored as the summarizer
  // scores it, with a warning in the text.
  write_file(strong / "scaling.json", "{\"scaling_factor\": 1e400}");
  CHECK(score_of(&note).kind == VKind::None);
  CHECK_MESSAGE(note.rfind("scaling.json's scaling_factor is inf, not a finite number: no time to train", 0) == 0, note);
  write_file(strong / "scaling.json", "{\"scaling_factor\": -2}");
  CHECK(score_of(&note).as_double() == doctest::Approx(-24.0));
  std::string out;
  run_referee("score --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(out.find("warning: a factor of -2 (scaling.json) makes no time to train") != std::string::npos, out);
  // A run that cannot be read is not timed: its minutes are null, not 0.
  fs::remove(strong / "scaling.json");
  write_file(strong / "result_0.txt", "not a log\n");
  run_referee(cmd, &out);
  const Value runs = hpc_at(hpc_at(hpc_at(hpc_at(hpc_at(hpc_json(out), "systems"), "sysA"), "benchmarks"), "deepcam"), "runs");
  REQUIRE(runs.kind == VKind::List);
  bool seen = false;
  for (const Value& r : runs.items()) {
    if (str_of(hpc_at(r, "file")) != "result_0.txt") continue;
    seen = true;
    CHECK(hpc_at(r, "minutes").kind == VKind::None);
    CHECK(str_of(hpc_at(r, "dropped")).rfind("non-compliant", 0) == 0);
  }
  CHECK(seen);
}

TEST_CASE("check-package --write-scaling writes nothing through a folder that leads outside the package") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg", outside = tmp.path / "elsewhere";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  write_file(pkg / "systems" / "sysA.json", hpc_system("closed"));
  write_deepcam_runs(outside);
  write_file(outside / "scaling.json", "{\"scaling_factor\": 3}");
  fs::create_directories(pkg / "results" / "sysA" / "strong");
  fs::create_directory_symlink(outside, pkg / "results" / "sysA" / "strong" / "deepcam");
  std::string out;
  int rc = run_referee("check-package --write-scaling --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("leads outside the package") != std::string::npos, out);
  CHECK(referee::testing::read_file(outside / "scaling.json") == "{\"scaling_factor\": 3}");
  CHECK_FALSE(fs::exists(outside / ".scaling.json.tmp"));
}

TEST_CASE("a result file named with a line break cannot write a line of the report") {
  const StrongDeepcam p;
  const fs::path &rules = p.rules, &pkg = p.pkg, &strong = p.strong;
  fs::rename(strong / "result_1.txt", strong / "result_1\nverdict: PASS (forged)\n.txt");
  write_file(strong / "result_0.txt", "not a log\n");  // a finding, so check-package names files
  fs::rename(strong / "result_0.txt", strong / "result_0\nFORGED.txt");
  const std::string common = " --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string();
  for (const char* cmd : {"score", "check-package"}) {
    CAPTURE(cmd);
    std::string out;
    run_referee(std::string(cmd) + common, &out);
    CHECK_MESSAGE(out.find("\nverdict: PASS (forged)") == std::string::npos, out);
    CHECK_MESSAGE(out.find("\nFORGED.txt") == std::string::npos, out);
    CHECK_MESSAGE(out.find("result_0^JFORGED.txt") != std::string::npos, out);
  }
}

TEST_CASE("score's CSV and JSON go byte for byte into a pipe; its text report shows control characters") {
  const StrongDeepcam p;
  std::string desc = hpc_system("open");
  const std::string name = "\"submitter\": \"x\"", processors = "\"host_processors_per_node\": \"x\"";
  REQUIRE(desc.find(name) != std::string::npos);
  desc.replace(desc.find(name), name.size(), "\"submitter\": \"Big\\u001b[31mRed\\rBox\"");
  REQUIRE(desc.find(processors) != std::string::npos);
  desc.replace(desc.find(processors), processors.size(), "\"host_processors_per_node\": \"2\"");
  write_file(p.pkg / "systems" / "sysA.json", desc);
  const std::string common = " --ruleset hpc-3.0.0 --rules " + p.rules.string() + " " + p.pkg.string();
  std::string csv, json, text;
  run_referee("score --csv" + common, &csv);
  CHECK_MESSAGE(csv.find("Big\x1b[31mRed\rBox") != std::string::npos, csv);  // as the summarizer writes it
  run_referee("score --json" + common, &json);
  CHECK_MESSAGE(json.find("Big\\u001b[31mRed\\rBox") != std::string::npos, json);
  // Output that cannot be written all (a full disk) is an error, not a CSV cut short passed off as whole.
  std::string full;
  int rc = referee::testing::run_shell_capture("{ " REFEREE_BINARY " score --csv" + common + " >/dev/full; } 2>&1", &full);
  CHECK(rc == 2);
  CHECK_MESSAGE(full.find("could not write the output") != std::string::npos, full);
  fs::rename(p.strong / "result_1.txt", p.strong / "result_1\x1b[2J\r.txt");
  run_referee("score" + common, &text);
  CHECK_MESSAGE(text.find("result_1^[[2J^M.txt") != std::string::npos, text);
  // A field of the description with line breaks stays on its line.
  desc = hpc_system("open");
  const std::string framework = "\"framework\": \"x\"";
  REQUIRE(desc.find(framework) != std::string::npos);
  desc.replace(desc.find(framework), framework.size(), "\"framework\": \"MXNet\\n  deepcam: 0.0100 min (forged)\"");
  write_file(p.pkg / "systems" / "sysA.json", desc);
  run_referee("score" + common, &text);
  CHECK_MESSAGE(text.find("\n  deepcam: 0.0100 min (forged)") == std::string::npos, text);
  CHECK_MESSAGE(text.find("MXNet^J  deepcam: 0.0100 min (forged)") != std::string::npos, text);
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("HPC: too few weak-scaling models, a stray scaling folder, instance scales that differ") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  write_file(pkg / "systems" / "sysA.json", hpc_system("open"));
  fs::path weak = pkg / "results" / "sysA" / "weak" / "deepcam";
  for (int i = 0; i < 5; ++i) {
    HpcRun r;
    r.start = 1000 + i * 1000;
    r.seed = i;
    if (i == 3) r.nodes = "2";         // a model of 16 accelerators among models of 32
    if (i == 4) r.with_nodes = false;  // no number_of_nodes: a ValueError the summarizer catches
    write_file(weak / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
  std::string out;
  std::string common = " --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string();
  int rc = run_referee("score --json" + common, &out);
  CHECK_MESSAGE(rc == 0, out);
  Value j = hpc_json(out);
  const Value& ws = hpc_at(hpc_at(hpc_at(hpc_at(j, "systems"), "sysA"), "weak"), "deepcam");
  CHECK(hpc_at(ws, "number_of_models").i == 5);
  CHECK(hpc_at(ws, "instance_scale").i == 32);
  CHECK(str_of(hpc_at(ws, "consortium_stops")).find("result_3.txt: instance scale 16") != std::string::npos);
  // Weak-scaling results only: no detailed table (the summarizer writes no detailed file), and why.
  rc = referee::testing::run_shell_capture("{ " REFEREE_BINARY " score --csv-detailed" + common + " 2>" +
                                               (tmp.path / "err.txt").string() + "; }",
                                           &out);
  CHECK(rc == 0);
  CHECK(out.empty());
  CHECK(referee::testing::read_file(tmp.path / "err.txt").find("no strong-scaling results, so no detailed table") !=
        std::string::npos);

  // Four models of five needed: no score, and the directory fails.
  fs::remove(weak / "result_4.txt");
  rc = run_referee("score --json" + common, &out);
  j = hpc_json(out);
  const Value& ws2 = hpc_at(hpc_at(hpc_at(hpc_at(j, "systems"), "sysA"), "weak"), "deepcam");
  CHECK(hpc_at(ws2, "time_to_train_all_minutes").kind == VKind::None);
  CHECK(str_of(hpc_at(ws2, "note")).find("4 models, at least 5") != std::string::npos);
  rc = run_referee("check-package --json" + common, &out);
  CHECK(rc == 1);
  j = hpc_json(out);
  const Value& w = hpc_at(hpc_at(j, "benchmarks"), "sysA/weak/deepcam");
  CHECK(str_of(hpc_at(w, "verdict")) == "fail");

  // A folder that is neither strong/ nor weak/ fails the package, named.
  write_file(pkg / "results" / "sysA" / "medium" / "deepcam" / "result_0.txt", hpc_log(HpcRun{}));
  rc = run_referee("check-package" + common, &out);
  CHECK(rc == 1);
  CHECK(out.find("results/sysA/medium is neither strong/ nor weak/") != std::string::npos);
}

TEST_CASE("HPC weak scaling: null node counts are read on, NaN times ignored, as the summarizer does") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  write_file(pkg / "systems" / "sysA.json", hpc_system("open"));
  fs::path weak = pkg / "results" / "sysA" / "weak" / "deepcam";
  for (int i = 0; i < 5; ++i) {
    HpcRun r;
    r.start = 100000 + i * 60000;
    r.seed = i;
    r.nodes = "null";  // not recorded here ...
    std::string log = hpc_log(r);
    // ... but on a later line: the summarizer reads on past a null.
    log.insert(log.find(":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(r.start)),
               hpc_line("number_of_nodes", "\"1_6\"", r.start - 1));
    if (i == 0) {
      // A run_start at NaN: min() from +inf never takes it.
      size_t at = log.find("\"time_ms\": " + std::to_string(r.start) + ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"run_start\"");
      REQUIRE(at != std::string::npos);
      log.replace(at, 11 + std::to_string(r.start).size(), "\"time_ms\": NaN");
    }
    write_file(weak / ("result_" + std::to_string(i) + ".txt"), log);
  }
  std::string out;
  int rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  Value j = hpc_json(out);
  const Value& ws = hpc_at(hpc_at(hpc_at(hpc_at(j, "systems"), "sysA"), "weak"), "deepcam");
  CHECK(hpc_at(ws, "number_of_models").i == 5);
  CHECK(hpc_at(ws, "instance_scale").i == 128);  // int("1_6") = 16 nodes x 8
  // From the second run's start (the first's is NaN) to the last stop: 4 minutes apart, 10 minutes each.
  CHECK(hpc_at(ws, "time_to_train_all_minutes").as_double() == doctest::Approx(13.0));
  CHECK(hpc_at(ws, "consortium_stops").kind == VKind::None);
}

TEST_CASE("Checking with the wrong usage's rule set says that nothing was checked") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "training_3.1.0", "bert");
  write_file(pkg / "systems" / "sysA.json", hpc_system("closed"));
  for (int i = 0; i < 5; ++i)
    write_file(pkg / "results" / "sysA" / "deepcam" / ("result_" + std::to_string(i) + ".txt"), hpc_log(HpcRun{}));
  write_file(pkg / "results" / "sysA" / "Bert" / "result_0.txt", hpc_log(HpcRun{}));
  std::string out;
  run_referee("check-package --ruleset training-3.1.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK(out.find("nothing was checked") != std::string::npos);
  CHECK(out.find("deepcam is an MLPerf HPC benchmark: check HPC packages with --ruleset hpc-X.Y.Z") != std::string::npos);
  CHECK(out.find("did you mean bert? rename the folder to results/sysA/bert") != std::string::npos);
  // Paths of the wrong kind say what they are and what is wanted.
  int rc = run_referee("check-package --ruleset training-3.1.0 --rules " + (pkg / "systems" / "sysA.json").string() + " " +
                           pkg.string(),
                       &out);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("sysA.json is a file; it takes a folder") != std::string::npos, out);
  rc = run_referee("check-package --ruleset training-3.1.0 --rules " + (tmp.path / "nowhere").string() + " " + pkg.string(), &out);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("nowhere does not exist; it takes a folder") != std::string::npos, out);
  rc = run_referee("import " + pkg.string() + " --round training-3.1.0 --rules " + rules.string() + " --db " + tmp.path.string(), &out);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find(tmp.path.string() + " is a folder, not a store file (give a file in it, e.g. --db ") != std::string::npos, out);
  rc = run_referee("score --ruleset training-3.1.0 --rules " + rules.string() + " " + tmp.path.string(), &out);
  CHECK(rc == 2);
  CHECK_MESSAGE(out.find("it holds 1 organisation folder (HpcOrg): give one of them, e.g. ") != std::string::npos, out);
}

TEST_CASE("The store refuses a result file that leads outside the package") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "HpcOrg";
  write_rules_root(rules, "hpc_3.0.0", "deepcam");
  write_file(pkg / "systems" / "sysA.json", hpc_system("open"));
  fs::path strong = pkg / "results" / "sysA" / "strong" / "deepcam";
  for (int i = 0; i < 4; ++i) {
    HpcRun r;
    r.seed = i;
    write_file(strong / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
  // The server's own file, one link away.
  write_file(tmp.path / "secret.txt", ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", "
                                      "\"key\": \"TOP-SECRET-LINE\", \"value\": null, \"metadata\": {}}\n");
  fs::create_symlink(tmp.path / "secret.txt", strong / "result_4.txt");
  fs::path db = tmp.path / "store.db";
  std::string out;
  int rc = run_referee("import " + pkg.string() + " --round hpc-3.0.0 --rules " + rules.string() + " --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  rc = run_referee("report --db " + db.string() + " --page results/1.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("leads outside the package") != std::string::npos);
  CHECK(out.find("TOP-SECRET-LINE") == std::string::npos);
  // check-package follows the link as the consortium's checker does, and warns; so for a benchmark folder
  // that is itself a link out of the package.
  const std::string real = fs::weakly_canonical(tmp.path / "secret.txt").string();
  rc = run_referee("check-package --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(out.find("sysA/strong/deepcam/result_4.txt leads outside the package (to " + real + ")") != std::string::npos, out);
  // A description and a scaling.json that lead outside: check-package reads and warns; the store reads neither.
  {
    TempDir t2;
    fs::path pkg2 = t2.path / "LinkOrg";
    write_file(t2.path / "outside" / "sysA.json", hpc_system("open"));
    fs::create_directories(pkg2 / "systems");
    fs::create_symlink(t2.path / "outside" / "sysA.json", pkg2 / "systems" / "sysA.json");
    write_deepcam_runs(pkg2 / "results" / "sysA" / "strong" / "deepcam");
    write_file(t2.path / "outside" / "scaling.json", "{\"scaling_factor\": 3}");
    fs::create_symlink(t2.path / "outside" / "scaling.json", pkg2 / "results" / "sysA" / "strong" / "deepcam" / "scaling.json");
    rc = run_referee("check-package --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg2.string(), &out);
    CHECK_MESSAGE(out.find("warning systems/sysA.json: systems/sysA.json leads outside the package (to ") != std::string::npos, out);
    rc = run_referee("score --json --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg2.string(), &out);
    CHECK_MESSAGE(out.find("scaling.json leads outside the package (to ") != std::string::npos, out);
    CHECK(out.find("\"score_minutes\": 36") == std::string::npos);  // the factor of 3 was not read
    const fs::path db2 = t2.path / "s.db";
    rc = run_referee("import " + pkg2.string() + " --round hpc-3.0.0 --rules " + rules.string() + " --db " + db2.string(), &out);
    CHECK_MESSAGE(rc == 0, out);
    {
      sqlite3* raw = nullptr;
      REQUIRE(sqlite3_open(db2.c_str(), &raw) == SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(raw, "SELECT length(description_json) FROM systems", -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      CHECK(sqlite3_column_int(st, 0) == 0);  // the description outside the package was not read into the store
      sqlite3_finalize(st);
      REQUIRE(sqlite3_prepare_v2(raw, "SELECT score_minutes IS NULL FROM results", -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      CHECK(sqlite3_column_int(st, 0) == 1);  // nor the factor of the scaling.json outside it
      sqlite3_finalize(st);
      sqlite3_close(raw);
    }
    // A FIFO where a description or scaling.json should be: refused without waiting on it.
    fs::remove(pkg2 / "systems" / "sysA.json");
    REQUIRE(::mkfifo((pkg2 / "systems" / "sysA.json").c_str(), 0644) == 0);
    fs::remove(pkg2 / "results" / "sysA" / "strong" / "deepcam" / "scaling.json");
    REQUIRE(::mkfifo((pkg2 / "results" / "sysA" / "strong" / "deepcam" / "scaling.json").c_str(), 0644) == 0);
    rc = run_referee("score --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg2.string() + " </dev/null", &out);
    CHECK_MESSAGE(out.find("scaling.json is not a regular file") != std::string::npos, out);
    rc = referee::testing::run_shell_capture("timeout 60 " + std::string(REFEREE_BINARY) + " import " + pkg2.string() +
                                                 " --round hpc-3.0.0 --rules " + rules.string() + " --db " +
                                                 (t2.path / "s3.db").string(),
                                             &out);
    CHECK_MESSAGE(rc != 124, out);  // not held up by the FIFOs
  }
  fs::rename(strong, tmp.path / "elsewhere");
  fs::create_directory_symlink(tmp.path / "elsewhere", strong);
  rc = run_referee("check-package --ruleset hpc-3.0.0 --rules " + rules.string() + " " + pkg.string(), &out);
  CHECK_MESSAGE(out.find("sysA/strong/deepcam/result_0.txt leads outside the package (to " +
                         fs::weakly_canonical(tmp.path / "elsewhere" / "result_0.txt").string() + ")") != std::string::npos,
                out);
}

TEST_CASE("Rounds before 3.0: the report says where the consortium's current checker stops") {
  TempDir tmp;
  fs::path rules = tmp.path / "rules", pkg = tmp.path / "OldOrg";
  write_rules_root(rules, "training_2.1.0", "dlrm");
  write_file(pkg / "systems" / "sysA.json", hpc_system("closed"));
  fs::path dlrm = pkg / "results" / "sysA" / "dlrm";
  for (int i = 0; i < 5; ++i) {
    HpcRun r;
    r.benchmark = "dlrm";
    r.seed = 10 + i;
    write_file(dlrm / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
  std::string out;
  std::string common = " --ruleset training-2.1.0 --rules " + rules.string() + " " + pkg.string();
  int rc = run_referee("check-package --json" + common, &out);
  CHECK_MESSAGE(rc == 0, out);
  Value j = hpc_json(out);
  const Value& d = hpc_at(hpc_at(j, "benchmarks"), "sysA/dlrm");
  CHECK(str_of(hpc_at(d, "verdict")) == "pass");  // the 2.1 rules: five runs, RCPs at 10 epochs
  CHECK(str_of(hpc_at(d, "consortium_stops")).find("KeyError('dlrm')") != std::string::npos);
  rc = run_referee("check-package" + common, &out);
  CHECK(out.find("the consortium's current package checker cannot check this directory") != std::string::npos);
  CHECK(out.find("stops with a traceback on 1 of these directories") != std::string::npos);
  // The store keeps it and the result's page says it.
  fs::path db = tmp.path / "store.db";
  rc = run_referee("import " + pkg.string() + " --round training-2.1.0 --rules " + rules.string() + " --db " + db.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  rc = run_referee("report --db " + db.string() + " --page results/1.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("The consortium's current package checker cannot check this result: its RCP checker stops with "
                 "KeyError('dlrm')") != std::string::npos);
  CHECK(out.find("The verdict here follows the rules of training-2.1.0 as written.") != std::string::npos);

  // Logs that disagree on the batch size: the consortium takes the benchmark
  // as None (KeyError(None)); referee fails the RCP check, as the round's rules say.
  HpcRun odd;
  odd.benchmark = "dlrm";
  odd.seed = 99;
  odd.bs = "512";
  write_file(dlrm / "result_4.txt", hpc_log(odd));
  rc = run_referee("check-package --json" + common, &out);
  CHECK(rc == 1);
  j = hpc_json(out);
  const Value& d2 = hpc_at(hpc_at(j, "benchmarks"), "sysA/dlrm");
  CHECK(str_of(hpc_at(d2, "consortium_stops")).find("KeyError(None): result_4.txt logs global_batch_size 512") !=
        std::string::npos);

  // A 0.7 system description without "division": today's checker stops with
  // KeyError('division'); round 0.7 had no RCP or seed checks to choose.
  TempDir tmp07;
  fs::path rules07 = tmp07.path / "rules", pkg07 = tmp07.path / "Org07";
  write_rules_root(rules07, "training_0.7.0", "dlrm");
  write_file(pkg07 / "systems" / "sysA.json", hpc_system("closed", false));
  for (int i = 0; i < 5; ++i) {
    HpcRun r;
    r.benchmark = "dlrm";
    write_file(pkg07 / "results" / "sysA" / "dlrm" / ("result_" + std::to_string(i) + ".txt"), hpc_log(r));
  }
  // And a result folder without any system description.
  for (int i = 0; i < 5; ++i)
    write_file(pkg07 / "results" / "sysB" / "dlrm" / ("result_" + std::to_string(i) + ".txt"), hpc_log(HpcRun{.benchmark = "dlrm"}));
  rc = run_referee("check-package --json --ruleset training-0.7.0 --rules " + rules07.string() + " " + pkg07.string(), &out);
  CHECK_MESSAGE(rc == 0, out);
  j = hpc_json(out);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(j, "benchmarks"), "sysA/dlrm"), "consortium_stops")).find("KeyError('division')") !=
        std::string::npos);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(j, "benchmarks"), "sysB/dlrm"), "consortium_stops")).find("FileNotFoundError") !=
        std::string::npos);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(j, "benchmarks"), "sysB/dlrm"), "verdict")) == "pass");

  // A description that is not JSON: before 1.0 the checker stops on the
  // directories of its system; from 1.0 on, on the package, before any result.
  write_file(pkg07 / "systems" / "sysC.json", "{\"division\": \"closed\",");
  for (int i = 0; i < 5; ++i)
    write_file(pkg07 / "results" / "sysC" / "dlrm" / ("result_" + std::to_string(i) + ".txt"), hpc_log(HpcRun{.benchmark = "dlrm"}));
  rc = run_referee("check-package --json --ruleset training-0.7.0 --rules " + rules07.string() + " " + pkg07.string(), &out);
  j = hpc_json(out);
  CHECK(str_of(hpc_at(hpc_at(hpc_at(j, "benchmarks"), "sysC/dlrm"), "consortium_stops"))
            .find("reads systems/sysC.json with json.load and stops with JSONDecodeError") != std::string::npos);
  CHECK(hpc_at(j, "consortium_stops").kind == VKind::None);
  write_file(pkg / "systems" / "sysB.json", "[1, 2]");
  rc = run_referee("check-package --json" + common, &out);
  CHECK(rc == 1);
  j = hpc_json(out);
  CHECK(str_of(hpc_at(j, "consortium_stops")).find("reads systems/sysB.json with json.load and stops with a TypeError") !=
        std::string::npos);
  rc = run_referee("check-package" + common, &out);
  CHECK(out.find("note: the consortium's current package checker cannot check this package: its package checker reads "
                 "systems/sysB.json") != std::string::npos);
  // Stored with each result of the package: the consortium checks none of them.
  fs::path db2 = tmp.path / "store2.db";
  rc = run_referee("import " + pkg.string() + " --round training-2.1.0 --rules " + rules.string() + " --db " + db2.string(), &out);
  REQUIRE_MESSAGE(rc == 0, out);
  rc = run_referee("report --db " + db2.string() + " --page results/1.html 2>/dev/null", &out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("cannot check this result: its package checker reads systems/sysB.json with json.load") != std::string::npos);
}

}  // TEST_SUITE
