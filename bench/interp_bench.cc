// Cost of the rule-code interpreter per evaluation, for expressions and
// statements like those of the consortium's rule files. Code is compiled once
// and run in a loop over a frame like the one a KEY record's CHECK gets: the
// current line (a LineObj whose value dict is already loaded) and the rule
// file's state `s`.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "rules/interp.h"
#include "rules/null_host.h"
#include "rules/value.h"

namespace {

using namespace referee::rules;

Value make_line() {
  Value meta = Value::dict();
  meta.d().set(Value::str("file"), Value::str("train.py"));
  meta.d().set(Value::str("lineno"), Value::integer(42));
  meta.d().set(Value::str("epoch_num"), Value::integer(3));
  Value value = Value::dict();
  value.d().set(Value::str("value"), Value::number(0.9));
  value.d().set(Value::str("metadata"), meta);
  return loaded_line(Value::str("eval_accuracy"), Value::number(1700000123456.0), Value::integer(1234),
                     R"({"key": "eval_accuracy", "value": 0.9, "metadata": {"file": "train.py", "lineno": 42, "epoch_num": 3}})",
                     value);
}

// The state a run has by the time its first eval_accuracy line is checked.
Value make_state() {
  Value s = Value::dict();
  s.d().set(Value::str("init_started"), Value::boolean(true));
  s.d().set(Value::str("init_stopped"), Value::boolean(true));
  s.d().set(Value::str("run_started"), Value::boolean(false));
  s.d().set(Value::str("run_stopped"), Value::boolean(false));
  s.d().set(Value::str("first_init_start"), Value::number(1700000000000.0));
  s.d().set(Value::str("compile_time_mins"), Value::integer(30));
  return s;
}

struct Env {
  NullHost host;
  Vars globals;
  Vars locals;
  Value line = make_line();
  Env() { globals.set(kNameS, make_state()); }
  Frame frame() { return Frame{&locals, &globals, &line, &host, 0}; }
};

Code compile(std::string_view src, bool expr) {
  Code c;
  CompileError err;
  bool ok = expr ? c.compile_expression(src, &err) : c.compile_statements(src, &err);
  if (!ok) {
    std::fprintf(stderr, "cannot compile %.*s: %s\n", static_cast<int>(src.size()), src.data(), err.message.c_str());
    std::abort();
  }
  return c;
}

void run_expression(benchmark::State& state, std::string_view src) {
  Code c = compile(src, true);
  Env env;
  bool truthy = false;
  for (auto _ : state) {
    env.locals.vars.clear();
    Frame f = env.frame();
    Value v = c.eval(f);
    truthy = py_truthy(v);
    benchmark::DoNotOptimize(truthy);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetLabel(truthy ? "True" : "False");
}

void BM_EvalValueEquals(benchmark::State& state) { run_expression(state, "v['value'] == 0.9"); }
BENCHMARK(BM_EvalValueEquals);

void BM_EvalStateFlags(benchmark::State& state) {
  run_expression(state, "s['init_started'] and not s['run_started']");
}
BENCHMARK(BM_EvalStateFlags);

void BM_EvalTimestampArith(benchmark::State& state) {
  run_expression(state, "ll.timestamp - s['first_init_start'] < (s['compile_time_mins']*60*1e3)");
}
BENCHMARK(BM_EvalTimestampArith);

void BM_ExecPostStatement(benchmark::State& state) {
  Code c = compile("s['init_started'] = True; s['first_init_start']=min(s['first_init_start'], ll.timestamp)", false);
  Env env;
  for (auto _ : state) {
    env.locals.vars.clear();
    Frame f = env.frame();
    c.exec(f);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ExecPostStatement);

void BM_CompileExpression(benchmark::State& state) {
  constexpr std::string_view src = "ll.timestamp - s['first_init_start'] < (s['compile_time_mins']*60*1e3)";
  for (auto _ : state) {
    Code c;
    CompileError err;
    bool ok = c.compile_expression(src, &err);
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_CompileExpression);

}  // namespace

BENCHMARK_MAIN();
