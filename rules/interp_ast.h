// The rule language's syntax tree: the nodes the parser
// (rules/interp_parser.cc) builds and the evaluator (rules/interp_eval.cc)
// runs. Operators, attribute names and builtin names are resolved here once,
// when the code is compiled, so that running it compares no strings.
// Internal to the interpreter (rules/interp*.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/interp.h"
#include "rules/value.h"

namespace referee::rules {

struct Node {
  int line = 0, col = 0;
  virtual ~Node() = default;
  virtual Value eval(Frame& f) const;
  // Where the value eval() would copy already lives (a variable, a literal,
  // a dict entry), when evaluating has no effect; else null (call eval()).
  // Valid until other code runs: read it at once.
  virtual const Value* peek(Frame& /*f*/) const { return nullptr; }
  virtual void exec(Frame& f) const { eval(f); }
  // Assignment target support.
  virtual void assign(Frame& f, Value v) const;
};

namespace interp {

using NodeP = std::unique_ptr<Node>;

// Operators ---------------------------------------------------------------

// + - * / // % ** | & ^ << >>, and the augmented assignments made of them.
enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, BitOr, BitAnd, BitXor, LShift, RShift };
enum class UnaryOp : uint8_t { Not, Neg, Pos, Invert };
enum class CompareOp : uint8_t { Lt, Gt, Eq, Ge, Le, Ne, In, NotIn, Is, IsNot };
enum class BoolOpKind : uint8_t { And, Or };

// The operator's text as Python writes it, for error messages.
const char* op_text(BinaryOp op);
const char* op_text(UnaryOp op);
const char* op_text(CompareOp op);
// The binary operator spelt `text` ("+", "//", ...); false if there is none.
bool binary_op_named(std::string_view text, BinaryOp* op);

// Attribute names the runtime knows (of log lines, dicts, lists, strings,
// floats and the math module); Other for any other name.
enum class AttrId : uint8_t {
  Other,
  // LogLine fields
  Key, Timestamp, Lineno, LineValue, FullString,
  // methods
  Update, Get, Values, Keys, Items, Pop, SetDefault, Append, Extend, Count, Index, Insert,
  Replace, Lower, Upper, Format, StartsWith, EndsWith, Strip, Split, Join, IsInteger,
  // math
  Ceil, Floor, Log, Log2, Log10, Sqrt, Exp, PowFn, Fabs, IsNan, IsInf, IsClose, Pi, E, Inf, Nan,
};
AttrId attr_named(std::string_view name);

// Nodes -------------------------------------------------------------------

namespace ast {

struct Const : Node {
  Value v;
  Value eval(Frame&) const override { return v; }
  const Value* peek(Frame&) const override { return &v; }
};

struct Name : Node {
  int id;
  std::string name;
  // The builtin of this name (len, math, int, ...), read when neither the
  // locals nor the globals bind it; null if there is none.
  const Value* builtin = nullptr;
  Value eval(Frame& f) const override;
  const Value* peek(Frame& f) const override;
  void assign(Frame& f, Value v) const override;
};

struct Attr : Node {
  NodeP obj;
  std::string name;
  AttrId attr = AttrId::Other;
  Value eval(Frame& f) const override;
  void assign(Frame& f, Value v) const override;
  // The object, with a log line's value loaded when `.value` is asked of it.
  Value object(Frame& f) const;
};

struct SliceNode : Node {
  NodeP lo, hi;
};

struct Subscript : Node {
  NodeP obj;
  NodeP idx;  // a SliceNode when is_slice
  bool is_slice = false;
  // v['value'] or v['metadata'] written out: read through Host::line_member
  // while the line's value dict is not built.
  LineMember v_member = LineMember::None;
  // The index when it is a literal (s['init_started']): nothing runs between
  // finding the container and its entry.
  const Const* const_idx = nullptr;
  // v['metadata']['epoch_num'] and the like: `obj` is a v_member subscript
  // and the index a literal string; a scalar entry is built alone
  // (line_member_entry).
  bool member_entry = false;
  const Value* peek(Frame& f) const override;
  Value eval(Frame& f) const override;
  void assign(Frame& f, Value v) const override;
};

struct Call : Node {
  NodeP fn;
  std::vector<NodeP> args;
  const Attr* callee_attr = nullptr;  // fn, when it is `obj.name`
  Value eval(Frame& f) const override;
};

struct BinOp : Node {
  BinaryOp op;
  NodeP a, b;
  Value eval(Frame& f) const override;
};

struct Unary : Node {
  UnaryOp op;
  NodeP a;
  Value eval(Frame& f) const override;
};

struct BoolOp : Node {
  BoolOpKind op;
  std::vector<NodeP> parts;
  Value eval(Frame& f) const override;
};

struct CompareNode : Node {
  NodeP first;
  std::vector<std::pair<CompareOp, NodeP>> rest;
  // The last comparison is `x in v` (1) or `x in v['value']`,
  // `x in v['metadata']` (2): a string x is looked for in the line's text
  // while the line's value is not built (line_member_has).
  uint8_t line_probe = 0;
  Value eval(Frame& f) const override;
};

struct IfExp : Node {
  NodeP cond, yes, no;
  Value eval(Frame& f) const override;
};

struct ListDisplay : Node {
  bool is_tuple = false;
  bool is_set = false;  // {a, b}: a set display
  std::vector<NodeP> items;
  Value eval(Frame& f) const override;
  void assign(Frame& f, Value v) const override;
};

struct DictDisplay : Node {
  std::vector<std::pair<NodeP, NodeP>> items;
  Value eval(Frame& f) const override;
};

// Statements

struct Block : Node {
  std::vector<NodeP> stmts;
  void exec(Frame& f) const override;
};

struct ExprStmt : Node {
  NodeP e;
  void exec(Frame& f) const override { e->eval(f); }
};

struct Assign : Node {
  std::vector<NodeP> targets;
  NodeP value;
  void exec(Frame& f) const override;
};

struct AugAssign : Node {
  NodeP target;
  BinaryOp op;
  NodeP value;
  void exec(Frame& f) const override;
};

struct IfStmt : Node {
  std::vector<std::pair<NodeP, NodeP>> branches;  // cond, block
  NodeP orelse;
  void exec(Frame& f) const override;
};

struct ForStmt : Node {
  NodeP target;
  NodeP iter;
  NodeP body;
  void exec(Frame& f) const override;
  // Runs the body for one item; false when it breaks out of the loop.
  bool iteration(Frame& f, Value item) const;
};

enum class Flow { Normal, Break, Continue };

struct FlowStmt : Node {
  Flow flow;
  void exec(Frame& f) const override;
};

struct Pass : Node {
  void exec(Frame&) const override {}
};

struct ImportStmt : Node {
  int id;
  Value v;
  void exec(Frame& f) const override { f.locals->set(id, v); }
};

}  // namespace ast

// Running a compiled tree (rules/interp_eval.cc): an expression's value, or
// a module's statements for their effects.
Value evaluate(const Node& root, Frame& f);
void execute(const Node& root, Frame& f);

}  // namespace interp
}  // namespace referee::rules
