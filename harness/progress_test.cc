// Progress: what the RCPs expect at a batch size, what a log says so far,
// and the text and JSON the harness shows.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "harness/progress.h"
#include "rules/interp.h"
#include "rules/source.h"
#include "rules/value.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::harness;

namespace {

fs::path scratch() {
  std::random_device rd;
  fs::path p = fs::temp_directory_path() / ("referee-progress-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(p);
  return p;
}

// An RCP table of three batch sizes whose olympic means are 4, 6 and 10 epochs.
std::unique_ptr<rules::RcpTable> table(const fs::path& dir) {
  fs::path f = dir / "rcps_demo.json";
  std::ofstream(f) << R"({
 "demo_32": {"Benchmark": "demo", "BS": 32, "Epochs to converge": [1, 4, 4, 4, 4, 9]},
 "demo_64": {"Benchmark": "demo", "BS": 64, "Epochs to converge": [2, 6, 6, 6, 6, 11]},
 "demo_128": {"Benchmark": "demo", "BS": 128, "Epochs to converge": [3, 10, 10, 10, 10, 20]}
})";
  auto t = std::make_unique<rules::RcpTable>();
  std::string error;
  REQUIRE_MESSAGE(t->load(f.string(), "demo", 5, &error), error);
  return t;
}

std::shared_ptr<ProgressModel> model(const fs::path& dir) {
  auto m = std::make_shared<ProgressModel>();
  m->benchmark = "demo";
  m->target.metric = "eval_accuracy";
  m->target.has_target = true;
  m->target.target = 0.9;
  m->target.direction = "max";
  m->rcp = table(dir);
  return m;
}

std::string line(double time_ms, const std::string& key, const std::string& value, const std::string& metadata = "{}") {
  char t[64];
  std::snprintf(t, sizeof t, "%.0f", time_ms);
  return std::string(":::MLLOG {\"namespace\": \"\", \"time_ms\": ") + t + ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" +
         key + "\", \"value\": " + value + ", \"metadata\": " + metadata + "}";
}

rules::Value parse_dict(const std::string& json) {
  bool ok = false;
  std::string err;
  rules::Value v = rules::value_from_json(json, &ok, &err);
  REQUIRE_MESSAGE(ok, err << ": " << json);
  REQUIRE(v.kind == rules::VKind::Dict);
  return v;
}

}  // namespace

TEST_SUITE("progress") {
  TEST_CASE("RCP reference at a batch size: exact, interpolated, or none with the reason") {
    fs::path dir = scratch();
    auto t = table(dir);
    rules::RcpRecord r;
    std::string status, why;
    REQUIRE(t->reference_at(64, &r, &status, &why));
    CHECK(status == "found");
    CHECK(r.mean == doctest::Approx(6));
    CHECK(why == "RCP at batch size 64");
    REQUIRE(t->reference_at(96, &r, &status, &why));
    CHECK(status == "interpolated");
    CHECK(r.mean == doctest::Approx(8));  // halfway between 6 (BS 64) and 10 (BS 128)
    CHECK(why == "RCP interpolated between batch sizes 64 and 128");
    CHECK_FALSE(t->reference_at(256, &r, &status, &why));
    CHECK(status == "missing");
    CHECK(why == "batch size 256 is larger than every RCP (largest 128)");
    CHECK_FALSE(t->reference_at(16, &r, &status, &why));
    CHECK(why == "batch size 16 is smaller than every RCP (smallest 32)");
    fs::remove_all(dir);
  }

  TEST_CASE("a log's progress: fraction of the RCP mean, time to train from the log, estimate at the pace so far") {
    fs::path dir = scratch();
    auto m = model(dir);
    ProgressTracker t(m);
    Progress p = t.snapshot();
    CHECK_FALSE(p.started);
    CHECK_FALSE(p.has_expected);
    CHECK(p.no_expected == "no global_batch_size logged yet");
    CHECK(progress_text(p, *m).find("not started training") != std::string::npos);

    double t0 = 1700000000000.0;
    t.add_line("plain output, not a log line: eval_accuracy run_start");
    t.add_line(line(t0 - 5000, "global_batch_size", "64"));
    t.add_line(line(t0, "run_start", "null"));
    uint64_t before = t.events();
    t.add_line(line(t0 + 10000, "epoch_start", "null", "{\"epoch_num\": 1}"));  // not an evaluation
    t.add_line(line(t0 + 20000, "eval_accuracy_top5", "0.99", "{\"epoch_num\": 5}"));  // another key
    CHECK(t.events() == before);
    t.add_line("[1] :::MLLOG {\"time_ms\":" + std::to_string(static_cast<long long>(t0 + 60000)) +
               ",\"key\":\"eval_accuracy\",\"value\":0.5,\"metadata\":{\"epoch_num\":1.5}}");
    CHECK(t.events() == before + 1);
    p = t.snapshot();
    CHECK(p.started);
    CHECK(p.has_batch_size);
    CHECK(p.batch_size == 64);
    CHECK(p.evals == 1);
    CHECK(p.eval == doctest::Approx(0.5));
    CHECK(p.position == doctest::Approx(1.5));
    CHECK_FALSE(p.target_reached);
    CHECK(p.has_time_to_train);
    CHECK(p.time_to_train_s == doctest::Approx(60));  // run_start to the evaluation, in log time
    REQUIRE(p.has_expected);
    CHECK(p.expected == doctest::Approx(6));
    CHECK(p.has_fraction);
    CHECK(p.fraction == doctest::Approx(0.25));
    REQUIRE(p.has_eta);
    CHECK(p.eta_s == doctest::Approx(180));  // 40 s per epoch, 4.5 epochs to go
    std::string text = progress_text(p, *m);
    CHECK_MESSAGE(text.find("eval_accuracy 0.5 at 1.5 epochs (target >= 0.9)") != std::string::npos, text);
    CHECK_MESSAGE(text.find("1.5 of ~6 epochs (RCP at batch size 64): about 25% of the way, ~3 min 00 s left") !=
                      std::string::npos,
                  text);
    CHECK_MESSAGE(text.find("time to train 1 min 00 s so far") != std::string::npos, text);

    t.add_line(line(t0 + 200000, "eval_accuracy", "0.93", "{\"epoch_num\": 5}"));
    t.add_line(line(t0 + 201000, "run_stop", "null", "{\"status\": \"success\"}"));
    p = t.snapshot();
    CHECK(p.stopped);
    CHECK(p.stop_status == "success");
    CHECK(p.target_reached);
    CHECK(p.time_to_train_s == doctest::Approx(201));  // run_start to run_stop, as the score counts it
    CHECK(p.fraction == doctest::Approx(5.0 / 6));
    CHECK_FALSE(p.has_eta);  // it ended
    text = progress_text(p, *m);
    CHECK_MESSAGE(text.find("(target >= 0.9, reached)") != std::string::npos, text);
    CHECK_MESSAGE(text.find("time to train 3 min 21 s; run_stop success") != std::string::npos, text);
    CHECK_MESSAGE(text.find("; ended at 5 epochs, 83% of the ~6 the RCPs expect (RCP at batch size 64);") != std::string::npos, text);
    CHECK(text.find("of the way") == std::string::npos);

    t.reset();
    CHECK_FALSE(t.snapshot().started);
    CHECK(t.snapshot().evals == 0);
    // One epoch is said in the singular.
    t.add_line(line(t0 - 5000, "global_batch_size", "64"));
    t.add_line(line(t0, "run_start", "null"));
    t.add_line(line(t0 + 40000, "eval_accuracy", "0.4", "{\"epoch_num\": 1}"));
    text = progress_text(t.snapshot(), *m);
    CHECK_MESSAGE(text.find("eval_accuracy 0.4 at 1 epoch (target") != std::string::npos, text);
    fs::remove_all(dir);
  }

  TEST_CASE("no time left is estimated for a run that ended without run_stop, or that reached its target") {
    fs::path dir = scratch();
    auto m = model(dir);
    double t0 = 1700000000000.0;
    // Cancelled (or crashed) at 1.5 of ~6 epochs: it had an estimate while it ran.
    ProgressTracker t(m);
    t.add_line(line(t0 - 5000, "global_batch_size", "64"));
    t.add_line(line(t0, "run_start", "null"));
    t.add_line(line(t0 + 60000, "eval_accuracy", "0.5", "{\"epoch_num\": 1.5}"));
    REQUIRE(t.snapshot().has_eta);
    CHECK_FALSE(t.snapshot().ended);
    t.end();
    Progress p = t.snapshot();
    CHECK(p.ended);
    CHECK_FALSE(p.stopped);
    CHECK_FALSE(p.has_eta);
    CHECK(p.has_fraction);
    std::string text = progress_text(p, *m);
    CHECK_MESSAGE(text.find("left") == std::string::npos, text);
    CHECK_MESSAGE(text.find("; ended at 1.5 epochs, 25% of the ~6 the RCPs expect (RCP at batch size 64);") !=
                      std::string::npos,
                  text);
    CHECK_MESSAGE(text.find("time to train 1 min 00 s to the last evaluation; ended without run_stop") !=
                      std::string::npos,
                  text);
    rules::Value v = parse_dict(progress_json(RunProgress{"demo-0", "cancelled", 61, 3, p}, *m));
    CHECK(v.d().find_str("ended")->kind == rules::VKind::Bool);
    CHECK(v.d().find_str("ended")->b);
    CHECK(v.d().find_str("eta_s")->kind == rules::VKind::None);

    // Still running, but the target is reached at 3 of ~6 epochs: it stops there, nothing is left.
    ProgressTracker r(m);
    r.add_line(line(t0 - 5000, "global_batch_size", "64"));
    r.add_line(line(t0, "run_start", "null"));
    r.add_line(line(t0 + 30000, "eval_accuracy", "0.95", "{\"epoch_num\": 3}"));
    Progress q = r.snapshot();
    CHECK(q.target_reached);
    CHECK_FALSE(q.ended);
    CHECK_FALSE(q.has_eta);
    text = progress_text(q, *m);
    CHECK_MESSAGE(text.find("3 of ~6 epochs (RCP at batch size 64): target reached, run_stop expected next") !=
                      std::string::npos,
                  text);
    CHECK_MESSAGE(text.find("left") == std::string::npos, text);
    fs::remove_all(dir);
  }

  TEST_CASE("no RCP applies: no fraction and no estimate, and the reason instead of a guess") {
    fs::path dir = scratch();
    auto m = model(dir);
    ProgressTracker t(m);
    t.add_line(line(0, "global_batch_size", "512"));
    t.add_line(line(1000, "run_start", "null"));
    t.add_line(line(61000, "eval_accuracy", "0.4", "{\"epoch_num\": 2}"));
    Progress p = t.snapshot();
    CHECK_FALSE(p.has_expected);
    CHECK_FALSE(p.has_fraction);
    CHECK_FALSE(p.has_eta);
    CHECK(p.no_expected == "no RCP applies: batch size 512 is larger than every RCP (largest 128)");
    std::string text = progress_text(p, *m);
    CHECK_MESSAGE(text.find("no estimate (no RCP applies: batch size 512 is larger than every RCP (largest 128))") !=
                      std::string::npos,
                  text);
    CHECK(text.find("% of the way") == std::string::npos);

    auto none = std::make_shared<ProgressModel>();
    none->no_rcp = "no RCP table: cannot read RCP table /x/rcps_demo.json";
    ProgressTracker u(none);
    u.add_line(line(0, "global_batch_size", "64"));
    CHECK(u.snapshot().no_expected == none->no_rcp);
    fs::remove_all(dir);
  }

  TEST_CASE("a target to go below (a loss) is reached from above") {
    fs::path dir = scratch();
    auto m = model(dir);
    m->target.direction = "min";
    m->target.target = 2.1;
    ProgressTracker t(m);
    t.add_line(line(0, "eval_accuracy", "2.2", "{\"epoch_num\": 1}"));
    CHECK_FALSE(t.snapshot().target_reached);
    t.add_line(line(0, "eval_accuracy", "2.05", "{\"epoch_num\": 2}"));
    CHECK(t.snapshot().target_reached);
    CHECK(progress_text(t.snapshot(), *m).find("(target <= 2.1, reached)") != std::string::npos);
    fs::remove_all(dir);
  }

  TEST_CASE("JSON progress: one object, every documented field, null where unknown") {
    fs::path dir = scratch();
    auto m = model(dir);
    ProgressTracker t(m);
    t.add_line(line(0, "global_batch_size", "64"));
    t.add_line(line(1000, "run_start", "null"));
    t.add_line(line(31000, "eval_accuracy", "0.7", "{\"epoch_num\": 3}"));
    RunProgress r{"demo-0", "running", 12.5, 42, t.snapshot()};
    std::string j = progress_json(r, *m);
    CHECK(j.find('\n') == std::string::npos);
    rules::Value v = parse_dict(j);
    auto num = [&](const char* k) {
      rules::Value* x = v.d().find_str(k);
      REQUIRE_MESSAGE(x, k);
      REQUIRE_MESSAGE(x->is_num(), k);
      return x->as_double();
    };
    auto str = [&](const char* k) {
      rules::Value* x = v.d().find_str(k);
      REQUIRE_MESSAGE(x, k);
      REQUIRE_MESSAGE(x->kind == rules::VKind::Str, k);
      return x->s();
    };
    auto is_null = [&](const char* k) {
      rules::Value* x = v.d().find_str(k);
      REQUIRE_MESSAGE(x, k);
      return x->kind == rules::VKind::None;
    };
    CHECK(str("type") == "progress");
    CHECK(str("run") == "demo-0");
    CHECK(str("state") == "running");
    CHECK(num("wall_s") == doctest::Approx(12.5));
    CHECK(num("lines") == 42);
    CHECK(num("time") > 1.7e9);
    CHECK(num("batch_size") == 64);
    CHECK(str("metric") == "eval_accuracy");
    CHECK(num("target") == doctest::Approx(0.9));
    CHECK(str("target_direction") == "max");
    CHECK(num("evals") == 1);
    CHECK(num("eval") == doctest::Approx(0.7));
    CHECK(str("unit") == "epochs");
    CHECK(num("position") == 3);
    CHECK(num("expected") == doctest::Approx(6));
    CHECK(str("expected_basis") == "RCP at batch size 64");
    CHECK(is_null("no_expected"));
    CHECK(num("fraction") == doctest::Approx(0.5));
    CHECK(num("eta_s") == doctest::Approx(30));
    CHECK(num("time_to_train_s") == doctest::Approx(30));
    CHECK(is_null("stop_status"));

    ProgressTracker empty(m);
    rules::Value e = parse_dict(progress_json(RunProgress{"demo-1", "waiting", 0, 0, empty.snapshot()}, *m));
    for (const char* k : {"batch_size", "eval", "position", "expected", "fraction", "eta_s", "time_to_train_s"})
      CHECK_MESSAGE(e.d().find_str(k)->kind == rules::VKind::None, k);
    CHECK(e.d().find_str("no_expected")->s() == "no global_batch_size logged yet");

    rules::Value ev = parse_dict(event_json("demo-0: started (seed 7) \"quoted\""));
    CHECK(ev.d().find_str("type")->s() == "event");
    CHECK(ev.d().find_str("message")->s() == "demo-0: started (seed 7) \"quoted\"");
    fs::remove_all(dir);
  }

  TEST_CASE("the model of a benchmark comes from its rule set: target, unit and RCP table") {
    std::string error;
    rules::RuleSource src;
    auto rs = rules::resolve_ruleset("mini-1.0.0", "", &src, &error);
    REQUIRE_MESSAGE(rs, error);
    rules::RoundFacts facts;
    REQUIRE(rules::facts_for(*rs, &facts, &error));
    auto m = load_progress_model(*rs, facts, "torchclf");
    CHECK(m->target.has_target);
    CHECK(m->field == "epoch_num");
    CHECK(m->quantity == "epochs");
    REQUIRE(m->rcp);
    CHECK(m->no_rcp.empty());
    // The table's own record at batch size 128, as the RCP check reads it.
    rules::RcpRecord r;
    std::string status, why;
    REQUIRE(m->rcp->reference_at(128, &r, &status, &why));
    const rules::RcpRecord* rec = nullptr;
    for (const auto& x : m->rcp->records())
      if (x.bs == 128) rec = &x;
    REQUIRE(rec);
    CHECK(r.mean == rec->mean);

    auto missing = load_progress_model(*rs, facts, "nosuchbench");
    CHECK_FALSE(missing->rcp);
    CHECK(missing->no_rcp.find("no RCP table: cannot read RCP table") == 0);
  }

  TEST_CASE("durations for a person") {
    CHECK(format_duration(0) == "0.0 s");
    CHECK(format_duration(0.64) == "0.6 s");
    CHECK(format_duration(59.4) == "59 s");
    CHECK(format_duration(60) == "1 min 00 s");
    CHECK(format_duration(3599) == "59 min 59 s");
    CHECK(format_duration(3720) == "1 h 02 min");
    CHECK(format_duration(-5) == "0.0 s");
  }
}
