// A safe interpreter for the Python subset used by the consortium's rule files.
//
// Expressions: literals (numbers, strings, True/False/None, lists, tuples,
// dicts), names, attributes, subscripts and slices, calls, arithmetic
// (+ - * / // % **), unary - + not ~, | & ^, comparisons (chained), in / not
// in / is / is not, and / or, conditional expressions.
// Statements: expression statements, assignment and augmented assignment to
// names, subscripts and attributes, `if`/`elif`/`else`, `for NAME in ...`,
// `pass`, `break`, `continue`, `from dataclasses import replace`,
// `import math`, statements joined by `;` or new lines.
// Anything else is a compile error naming the construct. Nothing here can
// touch files, the network or the process.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/value.h"

namespace referee::rules {

// A Python exception raised while running rule code.
struct PyError {
  std::string type;     // "KeyError", "TypeError", ...
  std::string message;  // Python-like text
  std::string what() const { return type + ": " + message; }
};

// Python's int() of a value, as rule code's int() computes it: false with
// the exception it raises (ValueError for a string it refuses, TypeError for
// None, a list or a dict, OverflowError beyond 64 bits).
bool python_int(const Value& v, int64_t* out, PyError* error);

struct CompileError {
  int line = 0;      // 1-based, within the code snippet
  int column = 0;    // 1-based
  std::string message;
};

// Names are interned to small integers; a few are fixed.
enum NameId : int { kNameLl = 0, kNameV = 1, kNameS = 2, kNameLoglines = 3 };
int intern_name(std::string_view name);
// The one string Value of a literal in rule code ('init_started'): every
// literal with the same text shares it, so that dictionary lookups find a
// key written elsewhere by comparing pointers first (DictObj::find).
Value intern_literal(std::string_view text);
const std::string& name_of(int id);

// A variable scope: a small list of (name id, value).
struct Vars {
  std::vector<std::pair<int, Value>> vars;
  Value* find(int id) {
    for (auto& [k, v] : vars)
      if (k == id) return &v;
    return nullptr;
  }
  void set(int id, Value v) {
    if (Value* p = find(id)) *p = std::move(v);
    else vars.emplace_back(id, std::move(v));
  }
};

// The two members of a line's value dict.
enum class LineMember : uint8_t { None, Value, Metadata };

// What the running code can reach outside itself.
class Host {
 public:
  virtual ~Host() = default;
  virtual void enqueue_config(const std::string& path) = 0;
  // Fills line.value from line.json ({'value': ..., 'metadata': ...}).
  virtual void load_line_value(const LineObj& line) = 0;
  // v['value'] or v['metadata'] of a line whose value is not built yet,
  // built without the rest; null where the host builds whole values only.
  virtual const Value* line_member(const LineObj& /*line*/, LineMember /*m*/) { return nullptr; }
  // The list of all log lines (the consortium's `loglines`), for BEGIN code.
  virtual Value loglines() = 0;
  // Whether the text a line's `json` views lasts as long as what the code
  // keeps (the whole log of a batch check); false where it goes piece by piece.
  virtual bool line_text_lasts() const { return true; }
};

struct Frame {
  Vars* locals = nullptr;   // assignments go here
  Vars* globals = nullptr;  // read after locals
  const Value* line = nullptr;  // the current LineObj, visible as `ll`, its value as `v`
  Host* host = nullptr;
  int steps = 0;            // loop iterations run, bounded
};

struct Node;

class Code {
 public:
  Code();
  ~Code();
  Code(Code&&) noexcept;
  Code& operator=(Code&&) noexcept;

  bool is_expression() const { return is_expr_; }
  const std::string& source() const { return source_; }
  bool empty() const { return !root_; }

  // Compiles; returns false and fills *err on a syntax error or a construct
  // outside the subset.
  bool compile_expression(std::string_view src, CompileError* err);
  bool compile_statements(std::string_view src, CompileError* err);

  // Throws PyError.
  Value eval(Frame& f) const;
  void exec(Frame& f) const;

 private:
  std::string source_;
  bool is_expr_ = false;
  std::unique_ptr<Node> root_;
};

// Builds a Value from JSON text with Python's json.loads semantics (NaN,
// Infinity, bytes that are not UTF-8), read with mllog/json_cursor.h.
Value value_from_json(std::string_view json, bool* ok, std::string* error);

// {'value': <value>, 'metadata': <metadata>} of one MLLOG JSON text: the
// consortium's ll.value. Fields missing from the text are None.
Value line_value_from_json(std::string_view json);
// The members of that dict one wants (a null pointer: not wanted, passed
// over); both None when the text is not a JSON object, as there.
void line_members_from_json(std::string_view json, Value* value, Value* metadata);
// The dict itself, of members already built.
Value line_value_dict(Value value, Value metadata);
// A line's member as rule code sees it, built on first use through `host`
// (alone where the host can, else with the whole value).
Value line_member_of(const LineObj& line, LineMember m, Host& host);

// Questions about a member of a line's value answered from its JSON text,
// without building the member: rule code asks `'epoch_num' in
// v['metadata']` of most lines and reads nothing else of them.
// Whether the member is an object holding `key`: 1 yes, 0 no, -1 when it
// cannot be told this way (the member is not an object, or the text does not
// scan): build the member and ask it.
int line_member_has(const LineObj& line, LineMember m, std::string_view key);
// The member's entry `key`, when the member is an object and the entry
// None, a bool or a number (built alone: rule code cannot tell it from the
// one in the dict); with `strings`, a string too (a new string each time, so
// not for rule code, where `is` tells them apart): 1 and *out set; 0 when
// the object has no such entry; -1 when it cannot be told this way (another
// entry, which must be the dict's own object, or a member that is not an
// object).
int line_member_entry(const LineObj& line, LineMember m, std::string_view key, Value* out, bool strings = false);
// The member itself when it is a scalar (None, a bool, a number, a string;
// a new string each time, so not for rule code): 1 and *out set; -1
// otherwise (an object, a list, missing, or a text that does not scan).
int line_member_scalar(const LineObj& line, LineMember m, Value* out);
// Where the line's "value" and "metadata" start in its text, as the log
// reader found them (mllog::Event::value_at, meta_at; 0: not known), so that
// those questions do not walk the line from its start.
void line_member_starts(const LineObj& line, uint32_t value_at, uint32_t meta_at);

// The `is_integer` function the rule files call: abs(round(x) - x) < 1e-5.
bool py_is_integer(const Value& v);

}  // namespace referee::rules
