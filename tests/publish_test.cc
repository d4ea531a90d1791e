// referee review publish on the published round-3.1 logs: the review of
// `referee demo --review` (NVIDIA's 256-node RetinaNet normalised by 1.07575758)
// and two more decisions made here (NVIDIA's 8-node RetinaNet moved to the open
// division, its 1-node one withdrawn). The packages published are read by the
// consortium's result summarizer, whose rows must be those of results.csv;
// the refusals leave an earlier publication as it was.
#include <doctest/doctest.h>

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

}  // namespace

TEST_SUITE("review_e2e") {
  TEST_CASE("review publish: the decisions as packages and tables, read alike by the consortium's summarizer") {
    if (!referee::testing::have_reference_data()) return;
    TempDir t;
    const std::string ref = referee::testing::reference_dir(), rules = referee::testing::reference_rules();
    const std::string db = (t.path / "demo" / "review.db").string();
    std::string out;
    REQUIRE_MESSAGE(run_referee("demo --review --out " + publish_quote((t.path / "demo").string()) + " --reference " +
                                    publish_quote(ref),
                                &out) == 0,
                    out);
    // Members of the three organisations and a chair, for two more objections against NVIDIA's RetinaNet.
    std::map<std::string, std::string> token;
    for (const auto& [name, org] : std::vector<std::pair<std::string, std::string>>{
             {"az", "Azure"}, {"nv", "NVIDIA"}, {"an", "Azure+NVIDIA"}, {"ch", ""}}) {
      REQUIRE(run_referee("user add " + name + " --role " + (org.empty() ? "chair" : "member") +
                              (org.empty() ? "" : " --org " + publish_quote(org)) + " --db " + publish_quote(db),
                          &out) == 0);
      size_t at = out.find("token: ");
      REQUIRE(at != std::string::npos);
      token[name] = out.substr(at + 7, out.find('\n', at) - at - 7);
    }
    // As the store's administrator (no token), and as a user.
    auto as = [&](const std::string& args) {
      std::string o;
      int rc = run_referee(args + " --db " + publish_quote(db), &o);
      return std::make_pair(rc, o);
    };
    auto by = [&](const std::string& who, const std::string& args) {
      std::string o;
      int rc = referee::testing::run_shell_capture("REFEREE_TOKEN=" + token.at(who) + " " + std::string(REFEREE_BINARY) + " " +
                                                       args + " --db " + publish_quote(db),
                                                   &o);
      return std::make_pair(rc, o);
    };
    struct Case {
      std::string result, remedy;
    };
    for (const Case& c : {Case{"NVIDIA/eos_n8_ngc23.09_pytorch/ssd", "open"}, Case{"NVIDIA/eos_ngc23.09_pytorch/ssd", "withdraw"}}) {
      auto filed = by("az", "objection file --round 3.1.0 --against NVIDIA --result " + c.result + " --title t --rule r --json");
      REQUIRE_MESSAGE(filed.first == 0, filed.second);
      size_t at = filed.second.find("\"id\":");
      REQUIRE(at != std::string::npos);
      std::string id = std::to_string(std::atoll(filed.second.c_str() + at + 5));
      auto r = by("nv", "objection respond " + id + " --text agreed --remedy " + c.remedy);
      REQUIRE_MESSAGE(r.first == 0, r.second);
      for (const char* voter : {"az", "nv", "an"}) {
        auto v = by(voter, "objection vote " + id + " --vote uphold --remedy " + c.remedy);
        REQUIRE_MESSAGE(v.first == 0, v.second);
      }
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
}
