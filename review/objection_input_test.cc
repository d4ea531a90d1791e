// What an objection refuses or shows for input at the edges: names given
// twice, figures that would give no finite percentage.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/review_fixture.h"

namespace referee::testing {
namespace {
using namespace review_fixture;
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_SUITE("review") {
  TEST_CASE("an objection naming a result or a run twice is refused, naming which") {
    Review f;
    Response twice = f.call("goog", "POST", "/api/v1/objections",
                            R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet","NVIDIA/eos/retinanet"],)"
                            R"("title":"t","rule":"r"})");
    CHECK(twice.status == 400);
    CHECK(has(twice.body, "results: NVIDIA/eos/retinanet is named twice"));
    Response runs = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"t","rule":"r",)"
                           R"("drop_runs":["result_0.txt","result_0.txt"]})");
    CHECK(runs.status == 400);
    CHECK(has(runs.body, "drop_runs: result_0.txt is named twice"));
    CHECK(f.count("objections") == 0);
  }

  TEST_CASE("a figure near the largest double gives a null change, never Infinity, in every listing") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    // An impact beyond 100000 minutes is no score: refused.
    Response huge = f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"figure":"f","value":1,"impact_minutes":1e308}]})");
    CHECK(huge.status == 400);
    CHECK(has(huge.body, "at most 100000"));
    Response add = f.call("nv", "POST", path + "/evidence", R"({"evidence":[{"figure":"f","value":1e308}]})");
    REQUIRE_MESSAGE(add.status == 201, add.body);
    for (const std::string& p : {path, std::string("/api/v1/objections?round=3.1.0")}) {
      Response r = f.call("goog", "GET", p, "");
      CHECK(r.status == 200);
      CHECK_FALSE(has(r.body, "Infinity"));
      CHECK_FALSE(has(r.body, "NaN"));
    }
  }

  TEST_CASE("a chair of a party neither gives its side more time nor closes the round over its open case") {
    Review f;
    f.add_user("nvchair", "NVIDIA", "chair");
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    f.set_deadline("responses_due", "2020-01-01");
    // NVIDIA's chair, NVIDIA accused: no late response on its own override.
    Response late = f.call("nvchair", "POST", path + "/responses", R"({"text":"late","override":"granted"})");
    CHECK(late.status == 403);
    CHECK(has(late.body, "a chair whose organisation (NVIDIA) is a party to this objection does not override its deadlines"));
    CHECK(f.count("responses") == 0);
    // Nor final or published over the open objection against NVIDIA; a neutral chair may, with a reason.
    Response close = f.call("nvchair", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"x"})");
    CHECK(close.status == 403);
    CHECK(has(close.body, "is a party to open objections #" + std::to_string(id)));
    Response neutral = f.call("chair1", "POST", "/api/v1/rounds/3.1.0/state", R"({"state":"final","override":"x"})");
    CHECK(neutral.status == 200);
  }

  TEST_CASE("quoted lines: named by result and run, never by the server's paths; a run's file is a name, not a path") {
    Review f;
    long long id = f.file_rcp();
    std::string path = "/api/v1/objections/" + std::to_string(id);
    auto lines = [&](const std::string& file, const std::string& range) {
      return f.call("goog", "POST", path + "/evidence",
                    R"({"evidence":[{"result":"NVIDIA/eos/retinanet","file":")" + file + R"(","lines":")" + range + R"("}]})");
    };
    Response many = lines("result_0.txt", "1-50");
    CHECK(many.status == 422);
    CHECK(has(many.body, "run result_0.txt of NVIDIA/eos/retinanet has 3 lines, not 1-50"));
    CHECK_FALSE(has(many.body, f.dir.path.string()));
    // A store edited so that a run's file is a path: refused, nothing read.
    f.exec("UPDATE runs SET file = '../../../etc/hostname' WHERE file = 'result_1.txt' AND result_id = " +
           std::to_string(f.results.at("NVIDIA/eos/retinanet")));
    Response escape = lines("../../../etc/hostname", "1");
    CHECK(escape.status == 400);
    CHECK(has(escape.body, "is not the name of a run's log"));
    CHECK(f.count("evidence") == 0);
    // A log gone from the server's disk: named by result and run.
    std::filesystem::remove(f.logs / "results/eos/retinanet/result_0.txt");
    Response gone = lines("result_0.txt", "1");
    CHECK(gone.status == 422);
    CHECK(has(gone.body, "the log of run result_0.txt of NVIDIA/eos/retinanet is not on the server's disk"));
    CHECK_FALSE(has(gone.body, f.dir.path.string()));
  }

  TEST_CASE("the committee's report quotes what members wrote: no forged block, heading, decision line or HTML") {
    Review f;
    // A text that would close the issue block and open one attributed to another organisation, a
    // title with a decision line, raw HTML and a right-to-left override.
    std::string text = R"(fine\n---\nobjection: 99\ntitle: \"[training-3.1.0] forged\"\nlabels: [\"by NVIDIA\"]\n---\n# Forged\n<script>x</script>)";
    Response filed = f.call("goog", "POST", "/api/v1/objections",
                            R"({"round":"3.1.0","against":"NVIDIA","results":["NVIDIA/eos/retinanet"],"title":"t\nDecision: upheld \u202Egnp.exe","rule":"r","text":")" +
                                text + R"("})");
    REQUIRE_MESSAGE(filed.status == 201, filed.body);
    for (const char* format : {"github", "md"}) {
      Response r = f.call("chair1", "GET", std::string("/api/v1/rounds/3.1.0/report?format=") + format, "");
      REQUIRE_MESSAGE(r.status == 200, r.body);
      int rules = 0;
      size_t start = 0;
      while (start < r.body.size()) {
        size_t nl = r.body.find('\n', start);
        if (nl == std::string::npos) nl = r.body.size();
        std::string line = r.body.substr(start, nl - start);
        if (line == "---") ++rules;
        CHECK_MESSAGE(line.rfind("Decision: upheld", 0) != 0, format << ": " << line);
        CHECK_MESSAGE(line.rfind("# Forged", 0) != 0, format << ": " << line);
        CHECK_MESSAGE(line.rfind("objection: 99", 0) != 0, format << ": " << line);
        start = nl + 1;
      }
      CHECK(rules == (std::string(format) == "github" ? 2 : 0));  // the one objection's own block only
      CHECK(has(r.body, "> # Forged"));
      CHECK(has(r.body, "&lt;script&gt;"));
      CHECK_FALSE(has(r.body, "<script>"));
      CHECK(has(r.body, "[U+202E]"));
      CHECK_FALSE(has(r.body, "\xE2\x80\xAE"));
    }
  }

  TEST_CASE("messages that help: a mistyped organisation, log subject, version and head; the minutes name evidence once") {
    Review f;
    Response typo = f.call("goog", "POST", "/api/v1/objections",
                           R"({"round":"3.1.0","against":"Nvida","results":["NVIDIA/eos/retinanet"],"title":"t","rule":"r"})");
    CHECK(typo.status == 404);
    CHECK(has(typo.body, "organisation Nvida did not submit to training-3.1.0"));
    CHECK_MESSAGE(has(typo.body, "did you mean NVIDIA? the round's submitters: Dell, Google, NVIDIA"), typo.body);
    Response subject = f.call("chair1", "GET", "/api/v1/log?subject=foo", "");
    CHECK(subject.status == 400);
    CHECK(has(subject.body, "subject 'foo' names nothing the log records"));
    CHECK(f.call("chair1", "GET", "/api/v1/log?subject=objection/", "").status == 200);
    CHECK(f.call("chair1", "GET", "/api/v1/log?subject=round", "").status == 200);
    long long id = f.file_rcp();
    const std::string path = "/api/v1/objections/" + std::to_string(id);
    REQUIRE(f.call("goog", "POST", path + "/evidence", R"({"evidence":[{"check":"RCP: mean 7.1 epochs < 7.6","note":"seen twice"}]})").status == 201);
    Response ahead = f.call("nv", "POST", path + "/responses", R"({"text":"x","version":9})");
    CHECK(ahead.status == 409);
    CHECK(has(ahead.body, "is at version 2: version 9 was never one of it"));
    Request starred;
    starred.method = "POST";
    starred.path = path + "/responses";
    starred.body = R"({"text":"x"})";
    starred.token = f.token.at("nv");
    starred.if_match = "*";
    starred.if_match_given = true;
    Response star = f.api->handle(starred);
    CHECK(star.status == 400);
    CHECK(has(star.body, "for version 3: If-Match: 3"));
    // A head whose hash is another event's: the number before the colon is wrong, the log is not rewritten.
    Response verified = f.call("chair1", "GET", "/api/v1/log/verify", "");
    REQUIRE(verified.status == 200);
    const Json vj = parse(verified.body);
    REQUIRE_MESSAGE(vj.find("head_hash"), verified.body);
    const std::string hash = vj.find("head_hash")->s;
    const long long seq = vj.find("head_seq")->i;
    Response wrong = f.call("chair1", "GET", "/api/v1/log/verify?head=" + std::to_string(seq - 1) + ":" + hash, "");
    CHECK(has(wrong.body, "that hash is event " + std::to_string(seq) + "'s, not event " + std::to_string(seq - 1) + "'s"));
    // The minutes: "- check (note)" and its quote, never "- check: check".
    Response md = f.call("chair1", "GET", "/api/v1/rounds/3.1.0/report?format=md", "");
    REQUIRE(md.status == 200);
    CHECK(has(md.body, "\n- check (seen twice)\n"));
    CHECK_FALSE(has(md.body, "check: check"));
  }
}

}  // namespace referee::testing
