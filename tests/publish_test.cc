// referee review publish on the published round-3.1 logs: the review of
// `referee demo --review` (NVIDIA's 256-node RetinaNet normalised by 1.07575758)
// and two more decisions made here (NVIDIA's 8-node RetinaNet moved to the open
// division, its 1-node one withdrawn). The packages published are read by the
// consortium's result summarizer, whose rows must be those of results.csv;
// the refusals leave an earlier publication as it was.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using referee::testing::read_file;
using referee::testing::run_referee;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

std::string publish_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::set<std::string> csv_rows(const std::string& text, const std::string& submitter) {
  std::set<std::string> rows;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (!line.empty() && line.find("," + submitter + ",") != std::string::npos) rows.insert(line);
  }
  return rows;
}

// `referee demo --review` (round 3.1 under review) with members of the three
// organisations (az, nv, an) and a neutral chair (ch); commands as the
// store's administrator (as) or as a user (by).
struct DemoReview {
  TempDir t;
  std::string ref = referee::testing::reference_dir(), rules = referee::testing::reference_rules();
  std::string db = (t.path / "demo" / "review.db").string();
  std::map<std::string, std::string> token;
  DemoReview() {
    std::string out;
    REQUIRE_MESSAGE(run_referee("demo --review --out " + publish_quote((t.path / "demo").string()) + " --reference " +
                                    publish_quote(ref),
                                &out) == 0,
                    out);
    for (const auto& [name, org] : std::vector<std::pair<std::string, std::string>>{
             {"az", "Azure"}, {"nv", "NVIDIA"}, {"an", "Azure+NVIDIA"}, {"ch", ""}}) {
      REQUIRE(run_referee("user add " + name + " --role " + (org.empty() ? "chair" : "member") +
                              (org.empty() ? "" : " --org " + publish_quote(org)) + " --db " + publish_quote(db),
                          &out) == 0);
      size_t at = out.find("token: ");
      REQUIRE(at != std::string::npos);
      token[name] = out.substr(at + 7, out.find('\n', at) - at - 7);
    }
  }
  std::pair<int, std::string> as(const std::string& args) {
    std::string o;
    int rc = run_referee(args + " --db " + publish_quote(db), &o);
    return {rc, o};
  }
  std::pair<int, std::string> by(const std::string& who, const std::string& args) {
    std::string o;
    int rc = referee::testing::run_shell_capture(
        "REFEREE_TOKEN=" + token.at(who) + " " + std::string(REFEREE_BINARY) + " " + args + " --db " + publish_quote(db), &o);
    return {rc, o};
  }
  // Objection `by_org`'s member files against NVIDIA's `result`, NVIDIA answers proposing `remedy`, the
  // three organisations uphold it with that remedy; returns its id.
  std::string upheld(const std::string& result, const std::string& remedy) {
    auto filed = by("az", "objection file --round 3.1.0 --against NVIDIA --result " + result + " --title t --rule r --json");
    REQUIRE_MESSAGE(filed.first == 0, filed.second);
    size_t at = filed.second.find("\"id\":");
    REQUIRE(at != std::string::npos);
    std::string id = std::to_string(std::atoll(filed.second.c_str() + at + 5));
    auto r = by("nv", "objection respond " + id + " --text agreed --remedy " + remedy);
    REQUIRE_MESSAGE(r.first == 0, r.second);
    for (const char* voter : {"az", "nv", "an"}) {
      auto v = by(voter, "objection vote " + id + " --vote uphold --remedy " + remedy);
      REQUIRE_MESSAGE(v.first == 0, v.second);
    }
    return id;
  }
};

}  // namespace

TEST_SUITE("review_e2e") {
  TEST_CASE("review publish: the decisions as packages and tables, read alike by the consortium's summarizer") {
    if (!referee::testing::have_reference_data()) return;
    DemoReview dr;
    TempDir& t = dr.t;
    const std::string &ref = dr.ref, &rules = dr.rules;
    auto as = [&](const std::string& args) { return dr.as(args); };
    auto by = [&](const std::string& who, const std::string& args) { return dr.by(who, args); };
    struct Case {
      std::string result, remedy;
    };
    for (const Case& c : {Case{"NVIDIA/eos_n8_ngc23.09_pytorch/ssd", "open"}, Case{"NVIDIA/eos_ngc23.09_pytorch/ssd", "withdraw"}}) {
      const std::string id = dr.upheld(c.result, c.remedy);
      auto d = by("ch", "objection decide " + id + " --remedy " + c.remedy + " --text decided");
      REQUIRE_MESSAGE(d.first == 0, d.second);
    }
    const std::string pub = (t.path / "pub").string();
    const std::string publish = "review publish --round 3.1.0 --out " + publish_quote(pub) + " --rules " + publish_quote(rules);

    // Still in review: refused, nothing written.
    auto early = as(publish);
    CHECK(early.first == 1);
    CHECK(early.second.find("still in review") != std::string::npos);
    CHECK_FALSE(fs::exists(pub));
    REQUIRE(as("round state 3.1.0 final --reason 'review over'").first == 0);
    // A member does not publish.
    auto member = by("az", publish);
    CHECK(member.first == 1);
    CHECK(member.second.find("only a review chair or an administrator publishes") != std::string::npos);

    auto done = by("ch", publish);
    REQUIRE_MESSAGE(done.first == 0, done.second);
    CHECK(done.second.find("NVIDIA/eos_n256_ngc23.09_pytorch/ssd: normalised by 1.07575758 (decision 1)") != std::string::npos);
    CHECK(done.second.find("1 normalised, 1 moved to open, 1 withdrawn (left out)") != std::string::npos);
    const fs::path nv = fs::path(pub) / "NVIDIA";
    // The committee's factor, written as the consortium writes it.
    CHECK(read_file(nv / "results/eos_n256_ngc23.09_pytorch/ssd/scaling.json") == "{\"scaling_factor\": 1.07575758}\n");
    // Moved to open: under its own system, whose description says open.
    CHECK(fs::exists(nv / "results/eos_n8_ngc23.09_pytorch-open/ssd/result_0.txt"));
    CHECK_FALSE(fs::exists(nv / "results/eos_n8_ngc23.09_pytorch"));
    CHECK(read_file(nv / "systems/eos_n8_ngc23.09_pytorch-open.json").find("\"division\": \"open\"") != std::string::npos);
    // Withdrawn: absent.
    CHECK_FALSE(fs::exists(nv / "results/eos_ngc23.09_pytorch"));
    // The result files byte for byte; the other submitters as submitted, their own scaling.json kept.
    const std::string src = ref + "/mlperf/training_results_v3.1";
    CHECK(read_file(nv / "results/eos_n256_ngc23.09_pytorch/ssd/result_3.txt") ==
          read_file(src + "/NVIDIA/results/eos_n256_ngc23.09_pytorch/ssd/result_3.txt"));
    CHECK(read_file(fs::path(pub) / "Azure/results/ND_H100_v5_pytorch/bert/scaling.json") ==
          read_file(src + "/Azure/results/ND_H100_v5_pytorch/bert/scaling.json"));
    const std::string csv = read_file(fs::path(pub) / "results.csv");
    CHECK(csv.rfind("division,availability,submitter,system,", 0) == 0);
    CHECK(csv.find("open,onprem,NVIDIA,Eos_n8,") != std::string::npos);
    CHECK(csv.find(",0.919282663558,") != std::string::npos);  // 0.8545 min x 1.07575758
    CHECK(read_file(fs::path(pub) / "decisions.md").find("normalise") != std::string::npos);

    // The consortium's summarizer on each published package: the same rows.
    const bool oracle = !referee::testing::kSanitized &&
                        std::system("/usr/bin/python3 -c 'import numpy, scipy, pandas, yaml' >/dev/null 2>&1") == 0;
    if (!oracle && !referee::testing::kSanitized && std::getenv("CI"))
      FAIL("the consortium's summarizer needs Debian's python3 with python3-numpy/-scipy/-pandas/-yaml; CI must have them");
    if (oracle) {
      for (const char* org : {"NVIDIA", "Azure", "Azure+NVIDIA"}) {
        CAPTURE(org);
        fs::path copy = t.path / (std::string("oracle-") + org);
        fs::copy(fs::path(pub) / org, copy, fs::copy_options::recursive);
        std::string o;
        int rc = referee::testing::run_shell_capture(
            "cd " + publish_quote(copy.string()) + " && PYTHONPATH=" + publish_quote(ref + "/mlperf/logging") +
                " /usr/bin/python3 -m mlperf_logging.result_summarizer . training 3.1.0 --csv out.csv",
            &o);
        REQUIRE_MESSAGE(rc == 0, o);
        std::set<std::string> theirs = csv_rows(read_file(copy / "out.csv"), org), ours = csv_rows(csv, org);
        CHECK(!ours.empty());
        CHECK(theirs == ours);
      }
    } else {
      MESSAGE("the consortium's summarizer is not run here (sanitizer build, or Debian's python3-pandas missing)");
    }

    // Published again over itself: replaced whole. A folder that is not a publication: refused.
    write_file(fs::path(pub) / "stray.txt", "x");
    auto again = by("ch", publish);
    CHECK_MESSAGE(again.first == 0, again.second);
    CHECK_FALSE(fs::exists(fs::path(pub) / "stray.txt"));
    fs::create_directories(t.path / "mine");
    write_file(t.path / "mine" / "notes.txt", "mine");
    auto theirs = by("ch", "review publish --round 3.1.0 --out " + publish_quote((t.path / "mine").string()) + " --rules " +
                               publish_quote(rules));
    CHECK(theirs.first == 1);
    CHECK(theirs.second.find("is not an earlier publication of referee") != std::string::npos);
    CHECK(read_file(t.path / "mine" / "notes.txt") == "mine");
    // A result file changed since its import: refused, the earlier publication as it was.
    const fs::path changed = t.path / "demo/review-package/NVIDIA/results/eos_n256_ngc23.09_pytorch/ssd/result_0.txt";
    write_file(changed, read_file(changed) + "tampered\n");
    auto tampered = by("ch", publish);
    CHECK(tampered.first == 1);
    CHECK(tampered.second.find("changed since it was imported") != std::string::npos);
    CHECK(read_file(nv / "results/eos_n256_ngc23.09_pytorch/ssd/result_0.txt") ==
          read_file(src + "/NVIDIA/results/eos_n256_ngc23.09_pytorch/ssd/result_0.txt"));
    for (const auto& e : fs::directory_iterator(t.path)) CHECK(e.path().filename().string().rfind(".staging-", 0) != 0);

    // Once the round is published, its public pages say what the review decided for each result.
    REQUIRE(as("round state 3.1.0 published --reason 'published'").first == 0);
    const std::string site = (t.path / "site").string();
    REQUIRE(as("report --out " + publish_quote(site)).first == 0);
    std::string outcomes;
    for (const auto& e : fs::directory_iterator(fs::path(site) / "results")) {
      std::string page = read_file(e.path());
      for (const char* o : {"accepted with factor 1.0758 by decision 1", "moved to the open division by decision",
                            "withdrawn by decision", "accepted as submitted"})
        if (page.find(o) != std::string::npos) outcomes += std::string(o) + "\n";
    }
    CHECK(outcomes.find("accepted with factor 1.0758 by decision 1") != std::string::npos);
    CHECK(outcomes.find("moved to the open division by decision") != std::string::npos);
    CHECK(outcomes.find("withdrawn by decision") != std::string::npos);
    CHECK(outcomes.find("accepted as submitted") != std::string::npos);
  }

  TEST_CASE("review publish: a result moved to open whose name <system>-open a system of the package has is refused, not merged") {
    if (!referee::testing::have_reference_data()) return;
    DemoReview dr;
    // NVIDIA's package has a system named as eos_n8's open copy would be.
    const fs::path pkg = dr.t.path / "demo/review-package/NVIDIA";
    fs::copy(pkg / "systems/eos_n8_ngc23.09_pytorch.json", pkg / "systems/eos_n8_ngc23.09_pytorch-open.json");
    fs::copy(pkg / "results/eos_n8_ngc23.09_pytorch", pkg / "results/eos_n8_ngc23.09_pytorch-open", fs::copy_options::recursive);
    auto imp = dr.as("import " + publish_quote(pkg.string()) + " --round 3.1.0 --rules " + publish_quote(dr.rules));
    REQUIRE_MESSAGE(imp.first == 0, imp.second);
    const std::string id = dr.upheld("NVIDIA/eos_n8_ngc23.09_pytorch/ssd", "open");
    auto d = dr.by("ch", "objection decide " + id + " --remedy open --text decided");
    REQUIRE_MESSAGE(d.first == 0, d.second);
    REQUIRE(dr.as("round state 3.1.0 final --reason 'review over'").first == 0);
    const fs::path pub = dr.t.path / "pub";
    auto done = dr.by("ch", "review publish --round 3.1.0 --out " + publish_quote(pub.string()) + " --rules " + publish_quote(dr.rules));
    CHECK(done.first != 0);
    CHECK_MESSAGE(done.second.find("NVIDIA's result eos_n8_ngc23.09_pytorch/ssd moves to the open division as system "
                                   "eos_n8_ngc23.09_pytorch-open, but NVIDIA's package already has a system of that name") !=
                      std::string::npos,
                  done.second);
    CHECK_FALSE(fs::exists(pub));
  }

  TEST_CASE("a fix decision: due by its date, delivered by the corrected package, with what it changed; verify holds it") {
    if (!referee::testing::have_reference_data()) return;
    DemoReview dr;
    const std::string result = "NVIDIA/eos_n8_ngc23.09_pytorch/ssd";
    const std::string id = dr.upheld(result, "fix");
    // fix_due goes with fix only; a bad date is refused.
    CHECK(dr.by("ch", "objection decide " + id + " --remedy fix --fix-due soon").first == 2);
    auto d = dr.by("ch", "objection decide " + id + " --remedy fix --fix-due 2099-01-31 --text 'rerun it'");
    REQUIRE_MESSAGE(d.first == 0, d.second);
    auto shown = dr.by("az", "objection show " + id);
    CHECK_MESSAGE(shown.second.find("fix due by 2099-01-31") != std::string::npos, shown.second);
    auto js = dr.by("az", "objection show " + id + " --json");
    CHECK_MESSAGE(js.second.find(R"("fix":{"state":"due","due":"2099-01-31T23:59:59Z","deliveries":[]})") != std::string::npos, js.second);

    // NVIDIA's corrected package: one log of the result changed, another result's left alone.
    const fs::path pkg = dr.t.path / "demo/review-package/NVIDIA";
    const fs::path log = pkg / "results/eos_n8_ngc23.09_pytorch/ssd/result_2.txt";
    const std::string original = read_file(log);
    write_file(log, original + "rerun on the corrected node\n");
    auto imp = dr.as("import " + publish_quote(pkg.string()) + " --round 3.1.0 --rules " + publish_quote(dr.rules));
    REQUIRE_MESSAGE(imp.first == 0, imp.second);
    CHECK(imp.second.find("replaced NVIDIA") != std::string::npos);
    shown = dr.by("an", "objection show " + id);
    CHECK_MESSAGE(shown.second.find("fix delivered") != std::string::npos, shown.second);
    CHECK_MESSAGE(shown.second.find("eos_n8_ngc23.09_pytorch/ssd: files changed result_2.txt; score ") != std::string::npos,
                  shown.second);
    CHECK(shown.second.find("(unchanged)") != std::string::npos);
    js = dr.by("an", "objection show " + id + " --json");
    CHECK(js.second.find(R"("state":"delivered")") != std::string::npos);
    CHECK(js.second.find(R"("files":{"added":[],"removed":[],"changed":["result_2.txt"]})") != std::string::npos);
    // The committee's report says so; the log holds the delivery to its event.
    auto rep = dr.as("review report --round 3.1.0");
    CHECK_MESSAGE(rep.second.find("; fix delivered (it was due by 2099-01-31T23:59:59Z); package ") != std::string::npos,
                  rep.second);
    REQUIRE(dr.as("review log --verify").first == 0);
    auto tamper = [&](const std::string& sql, const std::string& expect) {
      CAPTURE(sql);
      const fs::path copy = dr.t.path / "tampered.db";
      fs::copy_file(dr.db, copy, fs::copy_options::overwrite_existing);
      sqlite3* h = nullptr;
      REQUIRE(sqlite3_open(copy.string().c_str(), &h) == SQLITE_OK);
      CHECK(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(h);
      std::string o;
      REQUIRE(run_referee("review log --verify --db " + publish_quote(copy.string()), &o) == 1);
      CHECK_MESSAGE(o.find(expect) != std::string::npos, o);
    };
    tamper("UPDATE fix_deliveries SET changes_json = '[]'", "what it says the replacement changed is not what event");
    tamper("DELETE FROM fix_deliveries", "fix_deliveries: the fix of objection " + id + " delivered by event");
    tamper("UPDATE decisions SET fix_due = '2000-01-01'", "the fix is due 2000-01-01, event");
    tamper("UPDATE fix_deliveries SET created_at = '2000-01-01T00:00:00.000Z'", "delivered at 2000-01-01");
    // The original package put back: the fix is due again, and that import delivers nothing.
    write_file(log, original);
    imp = dr.as("import " + publish_quote(pkg.string()) + " --round 3.1.0 --rules " + publish_quote(dr.rules));
    REQUIRE_MESSAGE(imp.first == 0, imp.second);
    shown = dr.by("an", "objection show " + id);
    CHECK_MESSAGE(shown.second.find("fix due by 2099-01-31") != std::string::npos, shown.second);
    CHECK(dr.as("review log --verify").first == 0);
    // A date passed is refused.
    CHECK(dr.by("ch", "objection decide " + id + " --amend --reason r --remedy fix --fix-due 2001-01-01").first != 0);
  }
}
