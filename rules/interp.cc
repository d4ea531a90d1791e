// The interpreter's public surface: interned names, and Code, which compiles
// rule code with the parser (rules/interp_parser.cc, reading the tokens of
// rules/interp_lexer.cc) and runs it with the evaluator (rules/interp_eval.cc).
#include "rules/interp.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/text.h"
#include "rules/interp_ast.h"
#include "rules/interp_parser.h"

namespace referee::rules {

// ------------------------------------------------------------------ names

namespace {
struct NameTable {
  std::mutex mu;
  std::unordered_map<std::string, int> ids;
  std::vector<std::string> names;
  NameTable() {
    for (const char* n : {"ll", "v", "s", "loglines"}) {
      ids.emplace(n, static_cast<int>(names.size()));
      names.emplace_back(n);
    }
  }
};
NameTable& name_table() {
  static NameTable t;
  return t;
}
}  // namespace

int intern_name(std::string_view name) {
  auto& t = name_table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) return it->second;
  int id = static_cast<int>(t.names.size());
  t.names.emplace_back(name);
  t.ids.emplace(std::string(name), id);
  return id;
}

Value intern_literal(std::string_view text) {
  struct Literals {
    std::mutex mu;
    base::StringMap<Value> values;
  };
  static Literals t;
  // Bounded: code compiled again and again (a server) does not grow it without end.
  constexpr size_t kMax = 1 << 16;
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.values.find(text);
  if (it == t.values.end()) {
    Value v = Value::str(std::string(text));
    if (t.values.size() >= kMax) return v;
    it = t.values.emplace(std::string(text), std::move(v)).first;
  }
  // The table owns the string until the process ends; the literal's value
  // points at it without sharing that ownership (an aliasing pointer with no
  // count), so that evaluating a literal, which copies it, does not count
  // references: with --jobs, every thread copying the same literal would
  // write the same count, the cores taking its cache line from each other.
  Value v;
  v.kind = VKind::Str;
  v.h = std::shared_ptr<HeapObj>(std::shared_ptr<HeapObj>(), it->second.h.get());
  return v;
}

const std::string& name_of(int id) {
  auto& t = name_table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names.at(static_cast<size_t>(id));
}

// ------------------------------------------------------------------- Code

Code::Code() = default;
Code::~Code() = default;
Code::Code(Code&&) noexcept = default;
Code& Code::operator=(Code&&) noexcept = default;

bool Code::compile_expression(std::string_view src, CompileError* err) {
  source_ = std::string(src);
  is_expr_ = true;
  root_ = interp::parse(src, true, err);
  return root_ != nullptr;
}

bool Code::compile_statements(std::string_view src, CompileError* err) {
  source_ = std::string(src);
  is_expr_ = false;
  root_ = interp::parse(src, false, err);
  return root_ != nullptr;
}

Value Code::eval(Frame& f) const { return interp::evaluate(*root_, f); }

void Code::exec(Frame& f) const { interp::execute(*root_, f); }

}  // namespace referee::rules
