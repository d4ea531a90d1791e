// libFuzzer target: the rule-code interpreter.
//
// The input is compiled as an expression and as statements; whatever
// compiles runs in a frame like the one rule checks get (s = {}, the current
// line as `ll` and its value as `v`), twice: with the line's value built, and
// not built (questions about it then answered from the JSON text where they
// can be). Python exceptions (PyError) are the expected way to fail; two runs
// that give different results or exceptions, any other exception, a crash,
// a leak or undefined behaviour is a finding.
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/interp.h"
#include "rules/null_host.h"
#include "rules/value.h"

namespace {

using namespace referee::rules;

// A line with something to ask of: repeated names, an entry of each kind.
constexpr std::string_view kLineJson =
    R"({"key":"k","time_ms":1,"value":{"a":1,"b":"x"},"metadata":{"file":"t.py","epoch_num":3,"l":[1,2],)"
    R"("d":{"e":null},"rate":0.5,"epoch_num":4}})";

// The interpreter stops loops after 10,000,000 steps (kMaxSteps in
// rules/interp_runtime.h); a fuzz input starts close to that limit so that a loop
// ends after about this many iterations instead of running for seconds.
constexpr int kInterpMaxSteps = 10'000'000;
constexpr int kFuzzStepBudget = 20'000;

// Builds a line's value from its JSON, as the compliance checker does.
class JsonHost : public NullHost {
 public:
  void load_line_value(const LineObj& line) override {
    line.value = line_value_from_json(line.json);
    line.value_loaded = true;
  }
};

// The line as a KEY record's CHECK gets it: its value built (`built`), or
// not, so that questions about it are answered from the text where they can
// be (line_member_has).
Value make_line(bool built) {
  Value line = loaded_line(Value::str("k"), Value::number(1700000000000.0), Value::integer(0), kLineJson,
                           line_value_from_json(kLineJson));
  if (!built) {
    line.line().value = Value();
    line.line().value_loaded = false;
  }
  return line;
}

// What running the code gives: the result's repr or the exception, and s.
std::string run(const Code& code, bool expr, bool built) {
  JsonHost host;
  Vars globals;
  globals.set(kNameS, Value::dict());
  Vars locals;
  Value line = make_line(built);
  Frame f{&locals, &globals, &line, &host, kInterpMaxSteps - kFuzzStepBudget};
  std::string out;
  try {
    if (expr) {
      Value v = code.eval(f);
      (void)py_truthy(v);
      out = py_repr(v);
    } else {
      code.exec(f);
    }
  } catch (const PyError& e) {
    out = "!" + e.what();
  }
  if (Value* s = globals.find(kNameS)) out += "\n" + py_repr(*s);
  return out;
}

// The code on a line whose value is not built must give what it gives on
// one whose value is: answers read from the text are the dict's answers.
void run_both(const Code& code, bool expr) {
  std::string a = run(code, expr, false);
  std::string b = run(code, expr, true);
  if (a != b) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view src(reinterpret_cast<const char*>(data), size);
  {
    Code code;
    CompileError err;
    if (code.compile_expression(src, &err)) run_both(code, true);
  }
  {
    Code code;
    CompileError err;
    if (code.compile_statements(src, &err)) run_both(code, false);
  }
  return 0;
}
