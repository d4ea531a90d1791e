// The evaluator: what each syntax-tree node does when rule code runs, and
// Python's operators on Values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "rules/interp_ast.h"
#include "rules/interp_runtime.h"

namespace referee::rules {

using interp::raise;

Value Node::eval(Frame&) const { raise("SyntaxError", "not an expression"); }
void Node::assign(Frame&, Value) const { raise("SyntaxError", "cannot assign to expression"); }

namespace interp {

namespace {

// How the statement that ran last left its block: `break` and `continue`
// unwind to the loop around them.
thread_local ast::Flow g_flow = ast::Flow::Normal;

[[noreturn]] void not_subscriptable(const Value& o) {
  raise("TypeError", std::string("'") + py_type_name(o) + "' object is not subscriptable");
}

double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

[[noreturn]] void unsupported_operands(BinaryOp op, const Value& a, const Value& b) {
  raise("TypeError", std::string("unsupported operand type(s) for ") + op_text(op) + ": '" + py_type_name(a) + "' and '" +
                         py_type_name(b) + "'");
}

int64_t int_of(const Value& v) { return v.kind == VKind::Int ? v.i : v.b; }

// | & ^ << >> on two numbers.
Value bitwise(BinaryOp op, const Value& a, const Value& b) {
  if (a.kind == VKind::Float || b.kind == VKind::Float) unsupported_operands(op, a, b);
  int64_t x = int_of(a);
  int64_t y = int_of(b);
  int64_t r;
  switch (op) {
    case BinaryOp::BitOr: r = x | y; break;
    case BinaryOp::BitAnd: r = x & y; break;
    case BinaryOp::BitXor: r = x ^ y; break;
    case BinaryOp::LShift:
      if (y < 0) raise("ValueError", "negative shift count");
      r = checked(static_cast<__int128>(x) << std::min<int64_t>(y, 100));
      break;
    default:  // RShift
      if (y < 0) raise("ValueError", "negative shift count");
      r = x >> std::min<int64_t>(y, 63);
      break;
  }
  bool shift = op == BinaryOp::LShift || op == BinaryOp::RShift;
  if (a.kind == VKind::Bool && b.kind == VKind::Bool && !shift) return Value::boolean(r != 0);
  return Value::integer(r);
}

// Arithmetic on two ints (or bools).
Value int_arith(BinaryOp op, const Value& a, const Value& b) {
  __int128 x = int_of(a);
  __int128 y = int_of(b);
  switch (op) {
    case BinaryOp::Add: return Value::integer(checked(x + y));
    case BinaryOp::Sub: return Value::integer(checked(x - y));
    case BinaryOp::Mul: return Value::integer(checked(x * y));
    case BinaryOp::Div:
      if (y == 0) raise("ZeroDivisionError", "division by zero");
      return Value::number(static_cast<double>(x) / static_cast<double>(y));
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (y == 0) raise("ZeroDivisionError", "integer division or modulo by zero");
      __int128 q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      if (op == BinaryOp::FloorDiv) return Value::integer(checked(q));
      return Value::integer(checked(x - q * y));
    }
    default: {  // Pow
      if (y < 0) return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
      // |x| <= 1 never overflows: answer without looping y times
      if (y == 0 || x == 1) return Value::integer(1);
      if (x == 0) return Value::integer(0);
      if (x == -1) return Value::integer(y % 2 ? -1 : 1);
      __int128 r = 1;
      for (__int128 k = 0; k < y; ++k) {
        r *= x;
        checked(r);
      }
      return Value::integer(static_cast<int64_t>(r));
    }
  }
}

// Arithmetic on two numbers, one of them a float.
Value float_arith(BinaryOp op, const Value& a, const Value& b) {
  double x = a.as_double(), y = b.as_double();
  switch (op) {
    case BinaryOp::Add: return Value::number(x + y);
    case BinaryOp::Sub: return Value::number(x - y);
    case BinaryOp::Mul: return Value::number(x * y);
    case BinaryOp::Div:
      if (y == 0) raise("ZeroDivisionError", "float division by zero");
      return Value::number(x / y);
    case BinaryOp::FloorDiv:
      if (y == 0) raise("ZeroDivisionError", "float floor division by zero");
      return Value::number(std::floor(x / y));
    case BinaryOp::Mod:
      if (y == 0) raise("ZeroDivisionError", "float modulo");
      return Value::number(py_fmod(x, y));
    default:  // Pow
      if (x == 0 && y < 0) raise("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) raise("ValueError", "complex result of fractional power");
      return Value::number(std::pow(x, y));
  }
}

bool contains(const Value& container, const Value& x) {
  switch (container.kind) {
    case VKind::List:
    case VKind::Tuple:
      for (const auto& e : container.items())
        if (py_eq(e, x)) return true;
      return false;
    case VKind::Set:
      check_hashable(x);
      for (const auto& e : container.items())
        if (py_eq(e, x)) return true;
      return false;
    case VKind::Dict:
      check_hashable(x);
      return container.d().find(x) != nullptr;
    case VKind::Str:
      if (x.kind != VKind::Str) raise("TypeError", std::string("'in <string>' requires string as left operand, not ") + py_type_name(x));
      return container.s().find(x.s()) != std::string::npos;
    default:
      raise("TypeError", std::string("argument of type '") + py_type_name(container) + "' is not iterable");
  }
}

bool identical(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == VKind::None) return true;
  if (a.kind == VKind::Bool) return a.b == b.b;
  if (a.kind == VKind::Type || a.kind == VKind::Builtin) return a.fn == b.fn;
  if (a.h) return a.h == b.h;
  return py_eq(a, b);
}

}  // namespace

// ---------------------------------------------------------------- operators

void raise(const char* type, std::string msg) { throw PyError{type, std::move(msg)}; }

const char* op_text(BinaryOp op) {
  static const char* const text[] = {"+", "-", "*", "/", "//", "%", "**", "|", "&", "^", "<<", ">>"};
  return text[static_cast<size_t>(op)];
}

const char* op_text(UnaryOp op) {
  static const char* const text[] = {"not", "-", "+", "~"};
  return text[static_cast<size_t>(op)];
}

const char* op_text(CompareOp op) {
  static const char* const text[] = {"<", ">", "==", ">=", "<=", "!=", "in", "not in", "is", "is not"};
  return text[static_cast<size_t>(op)];
}

bool binary_op_named(std::string_view text, BinaryOp* op) {
  for (int k = 0; k <= static_cast<int>(BinaryOp::RShift); ++k)
    if (text == op_text(static_cast<BinaryOp>(k))) {
      *op = static_cast<BinaryOp>(k);
      return true;
    }
  return false;
}

int64_t checked(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    raise("OverflowError", "integer result does not fit in 64 bits");
  return static_cast<int64_t>(v);
}

int64_t as_index(const Value& v) {
  if (v.kind == VKind::Int) return v.i;
  if (v.kind == VKind::Bool) return v.b;
  raise("TypeError", std::string("indices must be integers, not ") + py_type_name(v));
}

size_t index_within(const Value& idx, size_t n, const char* message) {
  int64_t i = norm_index(as_index(idx), n);
  if (i < 0 || i >= static_cast<int64_t>(n)) raise("IndexError", message);
  return static_cast<size_t>(i);
}

void check_hashable(const Value& key) {
  if (key.kind == VKind::List || key.kind == VKind::Dict || key.kind == VKind::Set)
    raise("TypeError", std::string("unhashable type: '") + py_type_name(key) + "'");
}

Value binop(BinaryOp op, const Value& a, const Value& b) {
  if (a.is_num() && b.is_num()) {
    switch (op) {
      case BinaryOp::BitOr:
      case BinaryOp::BitAnd:
      case BinaryOp::BitXor:
      case BinaryOp::LShift:
      case BinaryOp::RShift: return bitwise(op, a, b);
      default: break;
    }
    if (a.kind != VKind::Float && b.kind != VKind::Float) return int_arith(op, a, b);
    return float_arith(op, a, b);
  }
  if (op == BinaryOp::Add && a.kind == VKind::Str && b.kind == VKind::Str) {
    if (a.s().size() + b.s().size() > kMaxStr) raise("MemoryError", "string too large");
    return Value::str(a.s() + b.s());
  }
  if (op == BinaryOp::Add && a.kind == b.kind && (a.kind == VKind::List || a.kind == VKind::Tuple)) {
    if (a.items().size() + b.items().size() > kMaxList) raise("MemoryError", "list too large");
    std::vector<Value> items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return a.kind == VKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (op == BinaryOp::Mul && ((a.kind == VKind::Str && b.kind == VKind::Int) || (a.kind == VKind::Int && b.kind == VKind::Str))) {
    const Value& s = a.kind == VKind::Str ? a : b;
    int64_t n = a.kind == VKind::Int ? a.i : b.i;
    if (n > 1'000'000 || (n > 0 && s.s().size() > kMaxStr / static_cast<size_t>(n)))
      raise("MemoryError", "string repetition too large");
    std::string out;
    if (n > 0) out.reserve(s.s().size() * static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) out += s.s();
    return Value::str(std::move(out));
  }
  if (op == BinaryOp::Mod && a.kind == VKind::Str) raise("TypeError", "'%' string formatting is not supported");
  unsupported_operands(op, a, b);
}

int cmp_values(const Value& a, const Value& b, const char* op) {
  if (a.is_num() && b.is_num()) {
    if (a.kind != VKind::Float && b.kind != VKind::Float) {
      int64_t x = int_of(a);
      int64_t y = int_of(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    double x = a.as_double(), y = b.as_double();
    if (std::isnan(x) || std::isnan(y)) return 2;  // unordered
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind == VKind::Str && b.kind == VKind::Str) {
    int c = a.s().compare(b.s());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if ((a.kind == VKind::List && b.kind == VKind::List) || (a.kind == VKind::Tuple && b.kind == VKind::Tuple)) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (py_eq(x[i], y[i])) continue;
      return cmp_values(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  raise("TypeError", std::string("'") + op + "' not supported between instances of '" + py_type_name(a) +
                         "' and '" + py_type_name(b) + "'");
}

bool compare(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::Eq: return py_eq(a, b);
    case CompareOp::Ne: return !py_eq(a, b);
    case CompareOp::In: return contains(b, a);
    case CompareOp::NotIn: return !contains(b, a);
    case CompareOp::Is: return identical(a, b);
    case CompareOp::IsNot: return !identical(a, b);
    default: break;
  }
  int c = cmp_values(a, b, op_text(op));
  if (c == 2) return false;
  switch (op) {
    case CompareOp::Lt: return c < 0;
    case CompareOp::Gt: return c > 0;
    case CompareOp::Le: return c <= 0;
    default: return c >= 0;  // Ge
  }
}

Value subscript(const Value& o, const Value& idx) {
  switch (o.kind) {
    case VKind::Dict: {
      check_hashable(idx);
      Value* p = o.d().find(idx);
      if (!p) raise("KeyError", py_repr(idx));
      return *p;
    }
    case VKind::List: return o.items()[index_within(idx, o.items().size(), "list index out of range")];
    case VKind::Tuple: return o.items()[index_within(idx, o.items().size(), "tuple index out of range")];
    case VKind::Str: return Value::str(std::string(1, o.s()[index_within(idx, o.s().size(), "string index out of range")]));
    default: not_subscriptable(o);
  }
}

// -------------------------------------------------------------- expressions

namespace ast {

namespace {

// The line whose value `v` names, while that value is not built; null when
// `v` is a local or the line's value is built.
const LineObj* unbuilt_line(const Frame& f) {
  if (!f.line || !f.host) return nullptr;
  const LineObj& l = f.line->line();
  if (l.value_loaded || (f.locals && f.locals->find(kNameV))) return nullptr;
  return &l;
}

bool member_loaded(const LineObj& l, LineMember m) {
  return m == LineMember::Value ? l.member_value_loaded : l.member_meta_loaded;
}

}  // namespace

Value Name::eval(Frame& f) const {
  if (f.locals)
    if (Value* p = f.locals->find(id)) return *p;
  if (f.line && (id == kNameLl || id == kNameV)) {
    if (id == kNameLl) return *f.line;
    const LineObj& l = f.line->line();
    if (!l.value_loaded) f.host->load_line_value(l);
    return l.value;
  }
  if (f.globals && f.globals != f.locals)
    if (Value* p = f.globals->find(id)) return *p;
  if (id == kNameLoglines && f.host) return f.host->loglines();
  if (builtin) return *builtin;
  raise("NameError", "name '" + name + "' is not defined");
}

const Value* Name::peek(Frame& f) const {
  if (f.locals)
    if (Value* p = f.locals->find(id)) return p;
  if (f.line && (id == kNameLl || id == kNameV)) {
    if (id == kNameLl) return f.line;
    const LineObj& l = f.line->line();
    if (!l.value_loaded) f.host->load_line_value(l);
    return &l.value;
  }
  if (f.globals && f.globals != f.locals)
    if (Value* p = f.globals->find(id)) return p;
  return nullptr;  // loglines, a builtin or an error: eval()
}

void Name::assign(Frame& f, Value v) const { f.locals->set(id, std::move(v)); }

Value Attr::object(Frame& f) const {
  // ll.timestamp and the like: the attribute of the object where it is.
  if (attr != AttrId::LineValue)
    if (const Value* p = obj->peek(f)) return *p;
  Value o = obj->eval(f);
  // A line's value is built on first use: `line.value` of a loglines entry (BEGIN code) or `ll.value`.
  if (attr == AttrId::LineValue && o.kind == VKind::Line && !o.line().value_loaded && f.host) f.host->load_line_value(o.line());
  return o;
}

Value Attr::eval(Frame& f) const { return get_attr(object(f), attr, name); }

void Attr::assign(Frame& f, Value v) const {
  Value o = obj->eval(f);
  if (o.kind != VKind::Line) raise("AttributeError", std::string("'") + py_type_name(o) + "' object attribute '" + name + "' is read-only");
  LineObj& l = o.line();
  switch (attr) {
    case AttrId::Key: l.key = std::move(v); break;
    case AttrId::Timestamp: l.timestamp = std::move(v); break;
    case AttrId::Lineno: l.lineno = std::move(v); break;
    case AttrId::LineValue: l.value = std::move(v); l.value_loaded = true; break;
    case AttrId::FullString: l.full_string = std::move(v); l.full_loaded = true; break;
    default: raise("AttributeError", "'LogLine' object has no attribute '" + name + "'");
  }
}

const Value* Subscript::peek(Frame& f) const {
  if (!const_idx || is_slice || v_member != LineMember::None) return nullptr;
  const Value* o = obj->peek(f);
  if (!o || o->kind != VKind::Dict) return nullptr;
  return o->d().find(const_idx->v);  // a missing key: eval() raises KeyError
}

Value Subscript::eval(Frame& f) const {
  // v['value'] with `v` the line's value (not a local of that name): the
  // member alone, while the whole dict is not built.
  if (v_member != LineMember::None)
    if (const LineObj* l = unbuilt_line(f)) return line_member_of(*l, v_member, *f.host);
  if (member_entry)
    if (const LineObj* l = unbuilt_line(f)) {
      LineMember m = static_cast<const Subscript*>(obj.get())->v_member;
      if (!member_loaded(*l, m)) {
        Value out;
        int r = line_member_entry(*l, m, const_idx->v.s(), &out);
        if (r == 1) return out;
        if (r == 0) raise("KeyError", py_repr(const_idx->v));
      }
    }
  if (const_idx)
    if (const Value* p = peek(f)) return *p;
  Value o = obj->eval(f);
  if (!is_slice) return subscript(o, idx->eval(f));
  auto* sl = static_cast<const SliceNode*>(idx.get());
  Value lo = sl->lo ? sl->lo->eval(f) : Value();
  Value hi = sl->hi ? sl->hi->eval(f) : Value();
  size_t n = o.kind == VKind::Str ? o.s().size()
             : (o.kind == VKind::List || o.kind == VKind::Tuple) ? o.items().size()
             : (not_subscriptable(o), 0);
  int64_t a = lo.kind == VKind::None ? 0 : norm_index(as_index(lo), n);
  int64_t b = hi.kind == VKind::None ? static_cast<int64_t>(n) : norm_index(as_index(hi), n);
  a = std::clamp<int64_t>(a, 0, static_cast<int64_t>(n));
  b = std::clamp<int64_t>(b, 0, static_cast<int64_t>(n));
  if (b < a) b = a;
  if (o.kind == VKind::Str) return Value::str(o.s().substr(static_cast<size_t>(a), static_cast<size_t>(b - a)));
  std::vector<Value> items(o.items().begin() + a, o.items().begin() + b);
  return o.kind == VKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
}

void Subscript::assign(Frame& f, Value v) const {
  if (is_slice) raise("TypeError", "slice assignment is not supported");
  if (const_idx) {
    // s['x'] = ...: into the dict where it is, keyed by the literal.
    const Value* p = obj->peek(f);
    if (p && p->kind == VKind::Dict) {
      p->d().set(const_idx->v, std::move(v));
      return;
    }
  }
  Value o = obj->eval(f);
  Value k = idx->eval(f);
  if (o.kind == VKind::Dict) {
    check_hashable(k);
    o.d().set(k, std::move(v));
    return;
  }
  if (o.kind == VKind::List) {
    auto& items = o.items();
    items[index_within(k, items.size(), "list assignment index out of range")] = std::move(v);
    return;
  }
  raise("TypeError", std::string("'") + py_type_name(o) + "' object does not support item assignment");
}

namespace {

// A call's argument list, taken from a per-thread stack of vectors (a call
// made while the arguments of another are evaluated takes the next one) and
// given back cleared: a call allocates nothing for its arguments once the
// stack is as deep as the code's calls nest.
class ArgList {
 public:
  ArgList() : a_(take()) {}
  ~ArgList() {
    a_.clear();
    --state().depth;
  }
  ArgList(const ArgList&) = delete;
  ArgList& operator=(const ArgList&) = delete;
  std::vector<Value>& get() { return a_; }

 private:
  struct State {
    std::deque<std::vector<Value>> lists;  // a deque: taking a new one moves none of the others
    size_t depth = 0;
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static std::vector<Value>& take() {
    State& s = state();
    if (s.depth == s.lists.size()) s.lists.emplace_back();
    return s.lists[s.depth++];
  }
  std::vector<Value>& a_;
};

}  // namespace

Value Call::eval(Frame& f) const {
  // obj.method(...): the method is called on obj without building a bound
  // method value first. Python's order stays: the object, its attribute
  // (AttributeError before any argument runs), then the arguments.
  ArgList list;
  std::vector<Value>& a = list.get();
  auto arguments = [&] {
    for (const auto& x : args) a.push_back(x->eval(f));
  };
  if (const Attr* at = callee_attr) {
    Value self = at->object(f);
    MethodId id;
    if (method_of(self, at->attr, &id)) {
      arguments();
      return call_method(self, id, a);
    }
    Value callee = get_attr(self, at->attr, at->name);
    arguments();
    return call_value(callee, a, f);
  }
  Value callee = fn->eval(f);
  arguments();
  return call_value(callee, a, f);
}

Value BinOp::eval(Frame& f) const {
  Value x = a->eval(f);
  Value y = b->eval(f);
  return binop(op, x, y);
}

Value Unary::eval(Frame& f) const {
  Value x = a->eval(f);
  if (op == UnaryOp::Not) return Value::boolean(!py_truthy(x));
  if (!x.is_num()) raise("TypeError", std::string("bad operand type for unary ") + op_text(op) + ": '" + py_type_name(x) + "'");
  switch (op) {
    case UnaryOp::Neg:
      if (x.kind == VKind::Float) return Value::number(-x.f);
      if (x.kind == VKind::Int && x.i == INT64_MIN) raise("OverflowError", "integer result does not fit in 64 bits");
      return Value::integer(-int_of(x));
    case UnaryOp::Pos: return x.kind == VKind::Bool ? Value::integer(x.b) : x;
    default:  // Invert
      if (x.kind == VKind::Float) raise("TypeError", "bad operand type for unary ~: 'float'");
      return Value::integer(~int_of(x));
  }
}

Value BoolOp::eval(Frame& f) const {
  bool is_and = op == BoolOpKind::And;
  Value v;
  for (const auto& p : parts) {
    v = p->eval(f);
    if (py_truthy(v) != is_and) return v;
  }
  return v;
}

Value CompareNode::eval(Frame& f) const {
  Value left = first->eval(f);
  for (size_t i = 0; i < rest.size(); ++i) {
    const auto& [op, node] = rest[i];
    if (line_probe && i + 1 == rest.size() && left.kind == VKind::Str)
      if (const LineObj* l = unbuilt_line(f)) {
        int has = -1;
        if (line_probe == 1) {
          // The dict is {'value': ..., 'metadata': ...}, whatever the text holds.
          has = left.s() == "value" || left.s() == "metadata";
        } else {
          LineMember m = static_cast<const Subscript*>(node.get())->v_member;
          if (!member_loaded(*l, m)) has = line_member_has(*l, m, left.s());
        }
        if (has >= 0) return Value::boolean((has == 1) == (op == CompareOp::In));
      }
    Value right = node->eval(f);
    if (!compare(op, left, right)) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value IfExp::eval(Frame& f) const { return py_truthy(cond->eval(f)) ? yes->eval(f) : no->eval(f); }

Value ListDisplay::eval(Frame& f) const {
  std::vector<Value> v;
  v.reserve(items.size());
  for (const auto& x : items) v.push_back(x->eval(f));
  if (is_set) {
    for (const auto& x : v) check_hashable(x);
    return Value::set_of(std::move(v));
  }
  return is_tuple ? Value::tuple(std::move(v)) : Value::list(std::move(v));
}

void ListDisplay::assign(Frame& f, Value v) const {
  if (v.kind != VKind::List && v.kind != VKind::Tuple) raise("TypeError", std::string("cannot unpack non-iterable ") + py_type_name(v) + " object");
  auto src = v.items();
  if (src.size() != items.size()) raise("ValueError", "wrong number of values to unpack");
  for (size_t i = 0; i < items.size(); ++i) items[i]->assign(f, src[i]);
}

Value DictDisplay::eval(Frame& f) const {
  Value d = Value::dict();
  for (const auto& [k, v] : items) {
    Value key = k->eval(f);
    check_hashable(key);
    d.d().set(key, v->eval(f));
  }
  return d;
}

// --------------------------------------------------------------- statements

void Block::exec(Frame& f) const {
  for (const auto& s : stmts) {
    s->exec(f);
    if (g_flow != Flow::Normal) return;
  }
}

void Assign::exec(Frame& f) const {
  Value v = value->eval(f);
  for (const auto& t : targets) t->assign(f, v);
}

void AugAssign::exec(Frame& f) const {
  Value cur = target->eval(f);
  Value rhs = value->eval(f);
  if (op == BinaryOp::Add && cur.kind == VKind::List) {  // list += extends in place
    if (rhs.kind != VKind::List && rhs.kind != VKind::Tuple) raise("TypeError", "can only concatenate list");
    auto add = rhs.items();
    if (cur.items().size() + add.size() > kMaxList) raise("MemoryError", "list too large");
    cur.items().insert(cur.items().end(), add.begin(), add.end());
    target->assign(f, cur);
    return;
  }
  target->assign(f, binop(op, cur, rhs));
}

void IfStmt::exec(Frame& f) const {
  for (const auto& [c, b] : branches)
    if (py_truthy(c->eval(f))) {
      b->exec(f);
      return;
    }
  if (orelse) orelse->exec(f);
}

bool ForStmt::iteration(Frame& f, Value item) const {
  if (++f.steps > kMaxSteps) raise("RuntimeError", "loop ran too long");
  target->assign(f, std::move(item));
  body->exec(f);
  bool broke = g_flow == Flow::Break;
  g_flow = Flow::Normal;
  return !broke;
}

void ForStmt::exec(Frame& f) const {
  Value it = iter->eval(f);
  if (it.kind == VKind::List || it.kind == VKind::Tuple) {
    // Python iterates a list by index, so appends during the loop are seen.
    for (size_t i = 0; i < it.items().size(); ++i)
      if (!iteration(f, it.items()[i])) break;
    return;
  }
  for (auto& x : iterate(it))
    if (!iteration(f, std::move(x))) break;
}

void FlowStmt::exec(Frame&) const { g_flow = flow; }

}  // namespace ast

Value evaluate(const Node& root, Frame& f) {
  g_flow = ast::Flow::Normal;
  return root.eval(f);
}

void execute(const Node& root, Frame& f) {
  g_flow = ast::Flow::Normal;
  root.exec(f);
  g_flow = ast::Flow::Normal;
}

}  // namespace interp
}  // namespace referee::rules
