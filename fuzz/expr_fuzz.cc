// libFuzzer target: the rule-code interpreter.
//
// The input is compiled as an expression and as statements; whatever
// compiles runs in a frame like the one rule checks get (s = {}, the current
// line as `ll` and its value as `v`). Python exceptions (PyError) are the
// expected way to fail; any other exception, a crash, a leak or undefined
// behaviour is a finding.
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/interp.h"
#include "rules/value.h"

namespace {

using namespace referee::rules;

constexpr std::string_view kLineJson = R"({"key":"k","value":1,"metadata":{}})";

// The interpreter stops loops after 10,000,000 steps (kMaxSteps in
// rules/interp_runtime.h); a fuzz input starts close to that limit so that a loop
// ends after about this many iterations instead of running for seconds.
constexpr int kInterpMaxSteps = 10'000'000;
constexpr int kFuzzStepBudget = 20'000;

class FakeHost : public Host {
 public:
  void enqueue_config(const std::string&) override {}
  void load_line_value(const LineObj& line) override {
    line.value = Value::dict();
    line.value_loaded = true;
  }
  Value loglines() override { return Value::list(); }
};

Value make_line() {
  auto l = std::make_shared<LineObj>();
  l->key = Value::str("k");
  l->timestamp = Value::number(1700000000000.0);
  l->lineno = Value::integer(0);
  l->json = kLineJson;
  // What the real host loads from the JSON: {'value': 1, 'metadata': {}}.
  // Code that replaces ll.value, or copies the line, goes through the fake host.
  l->value = Value::dict();
  l->value.d().set(Value::str("value"), Value::integer(1));
  l->value.d().set(Value::str("metadata"), Value::dict());
  l->value_loaded = true;
  Value v;
  v.kind = VKind::Line;
  v.h = std::move(l);
  return v;
}

void run(const Code& code, bool expr) {
  FakeHost host;
  Vars globals;
  globals.set(kNameS, Value::dict());
  Vars locals;
  Value line = make_line();
  Frame f{&locals, &globals, &line, &host, kInterpMaxSteps - kFuzzStepBudget};
  try {
    if (expr) {
      Value v = code.eval(f);
      (void)py_truthy(v);
      (void)py_repr(v);
    } else {
      code.exec(f);
      if (Value* s = globals.find(kNameS)) (void)py_repr(*s);
    }
  } catch (const PyError& e) {
    (void)e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view src(reinterpret_cast<const char*>(data), size);
  {
    Code code;
    CompileError err;
    if (code.compile_expression(src, &err)) run(code, true);
  }
  {
    Code code;
    CompileError err;
    if (code.compile_statements(src, &err)) run(code, false);
  }
  return 0;
}
