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
#include "rules/null_host.h"
#include "rules/value.h"

namespace {

using namespace referee::rules;

constexpr std::string_view kLineJson = R"({"key":"k","value":1,"metadata":{}})";

// The interpreter stops loops after 10,000,000 steps (kMaxSteps in
// rules/interp_runtime.h); a fuzz input starts close to that limit so that a loop
// ends after about this many iterations instead of running for seconds.
constexpr int kInterpMaxSteps = 10'000'000;
constexpr int kFuzzStepBudget = 20'000;

Value make_line() {
  // What the real host loads from the JSON: {'value': 1, 'metadata': {}}.
  // Code that replaces ll.value, or copies the line, goes through the null host.
  Value value = Value::dict();
  value.d().set(Value::str("value"), Value::integer(1));
  value.d().set(Value::str("metadata"), Value::dict());
  return loaded_line(Value::str("k"), Value::number(1700000000000.0), Value::integer(0), kLineJson, value);
}

void run(const Code& code, bool expr) {
  NullHost host;
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
