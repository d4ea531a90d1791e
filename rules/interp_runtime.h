// The interpreter's runtime: Python's operators, attributes, subscripts,
// builtins and methods on Values, shared by the evaluator
// (rules/interp_eval.cc), the builtins (rules/interp_builtins.cc) and
// str.format (rules/interp_format.cc). Everything here raises PyError as
// Python would raise its exception. Internal to the interpreter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rules/interp.h"
#include "rules/interp_ast.h"
#include "rules/value.h"

namespace referee::rules::interp {

// Loop iterations one run may take (Frame::steps).
constexpr int kMaxSteps = 10'000'000;
// Strings that rule code builds stay below 1 MiB (Python has no such limit;
// no rule comes near it, and a fuzzed rule must not spend seconds copying).
constexpr size_t kMaxStr = 1u << 20;
// Lists that rule code builds by concatenation stay below this many items.
constexpr size_t kMaxList = 10'000'000;

[[noreturn]] void raise(const char* type, std::string msg);

// Operators (rules/interp_eval.cc).
Value binop(BinaryOp op, const Value& a, const Value& b);
bool compare(CompareOp op, const Value& a, const Value& b);
// -1, 0 or 1 as a is below, equal to or above b; 2 for NaN (unordered).
// TypeError names `op` for values without an order.
int cmp_values(const Value& a, const Value& b, const char* op);
Value subscript(const Value& obj, const Value& idx);
// TypeError for a list or dict used as a dict key.
void check_hashable(const Value& key);
int64_t as_index(const Value& v);
// A negative index counts from the end of n items.
inline int64_t norm_index(int64_t i, size_t n) { return i < 0 ? i + static_cast<int64_t>(n) : i; }
// The index `idx` of a sequence of n items (negative counts from the end);
// IndexError `message` if it is outside.
size_t index_within(const Value& idx, size_t n, const char* message);
int64_t checked(__int128 v);

// Attributes and calls (rules/interp_builtins.cc).
// The builtin named by `id` (len, math, int, ...), or null.
const Value* builtin_named(int id);
Value get_attr(const Value& obj, AttrId attr, const std::string& name);
// The method `attr` of obj's type, if it has one.
bool method_of(const Value& obj, AttrId attr, MethodId* id);
Value call_method(const Value& self, MethodId id, std::vector<Value>& args);
Value call_value(const Value& fn, std::vector<Value>& args, Frame& f);
// The items a for loop or list() sees: a copy of a list, a dict's keys, a string's characters.
std::vector<Value> iterate(const Value& v);

// str.format (rules/interp_format.cc).
std::string format_str(const std::string& fmt, const std::vector<Value>& args);

}  // namespace referee::rules::interp
