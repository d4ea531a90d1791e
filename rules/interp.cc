#include "rules/interp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <unordered_map>

#include <simdjson.h>

#include <cerrno>
#include <cstring>

#include "mllog/json.h"
#include "mllog/reader.h"

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

const std::string& name_of(int id) {
  auto& t = name_table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names.at(static_cast<size_t>(id));
}

[[noreturn]] static void raise(const char* type, std::string msg) { throw PyError{type, std::move(msg)}; }

bool py_is_integer(const Value& v) {
  if (!v.is_num()) raise("TypeError", std::string("type ") + py_type_name(v) + " doesn't define __round__ method");
  double x = v.as_double();
  if (v.kind != VKind::Float) return true;
  if (std::isnan(x) || std::isinf(x)) raise("ValueError", "cannot convert float NaN or infinity to integer");
  return std::fabs(std::nearbyint(x) - x) < 0.00001;
}

// ------------------------------------------------------------------ lexer

namespace {

enum class Tok { Name, Number, String, Op, Newline, Indent, Dedent, End };

struct Token {
  Tok kind;
  std::string text;  // name, operator, or decoded string
  Value num;         // Number
  int line, col;
};

struct Lexer {
  std::string_view src;
  std::vector<Token> out;
  CompileError* err;

  bool fail(int line, int col, std::string msg) {
    err->line = line;
    err->column = col;
    err->message = std::move(msg);
    return false;
  }

  bool run() {
    std::vector<int> indents{0};
    size_t i = 0;
    int line = 1;
    size_t line_start = 0;
    int depth = 0;
    bool at_line_start = true;
    while (i <= src.size()) {
      if (at_line_start && depth == 0) {
        // measure indentation
        size_t j = i;
        int width = 0;
        while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) {
          width += src[j] == '\t' ? 8 - (width % 8) : 1;
          ++j;
        }
        if (j >= src.size()) break;
        if (src[j] == '\n' || src[j] == '#' || src[j] == '\r') {
          // blank or comment line
          while (j < src.size() && src[j] != '\n') ++j;
          i = j + 1;
          ++line;
          line_start = i;
          continue;
        }
        if (width > indents.back()) {
          indents.push_back(width);
          out.push_back({Tok::Indent, "", {}, line, 1});
        } else {
          while (width < indents.back()) {
            indents.pop_back();
            out.push_back({Tok::Dedent, "", {}, line, 1});
          }
          if (width != indents.back()) return fail(line, 1, "inconsistent indentation");
        }
        i = j;
        at_line_start = false;
      }
      if (i >= src.size()) break;
      char c = src[i];
      int col = static_cast<int>(i - line_start) + 1;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') { ++i; continue; }
      if (c == '#') {
        while (i < src.size() && src[i] != '\n') ++i;
        continue;
      }
      if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') {
        i += 2;
        ++line;
        line_start = i;
        continue;
      }
      if (c == '\n') {
        ++i;
        ++line;
        line_start = i;
        if (depth == 0) {
          if (!out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {}, line - 1, col});
          at_line_start = true;
        }
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        std::string word(src.substr(i, j - i));
        // string prefixes
        if (j < src.size() && (src[j] == '\'' || src[j] == '"')) {
          std::string low = word;
          for (auto& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (low == "f" || low == "rf" || low == "fr") return fail(line, col, "f-strings are not supported");
          if (low == "r" || low == "u" || low == "b" || low == "br" || low == "rb") {
            i = j;
            if (!string(i, line, line_start, low.find('r') != std::string::npos)) return false;
            continue;
          }
        }
        out.push_back({Tok::Name, word, {}, line, col});
        i = j;
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
        size_t j = i;
        bool is_float = false;
        if (c == '0' && j + 1 < src.size() && (src[j + 1] == 'x' || src[j + 1] == 'X')) {
          j += 2;
          while (j < src.size() && (std::isxdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
          std::string digits;
          for (size_t k = i + 2; k < j; ++k) if (src[k] != '_') digits += src[k];
          if (digits.empty()) return fail(line, col, "invalid hexadecimal literal");
          errno = 0;
          unsigned long long u = std::strtoull(digits.c_str(), nullptr, 16);
          if (errno != 0 || u > static_cast<unsigned long long>(INT64_MAX)) return fail(line, col, "integer literal too large");
          out.push_back({Tok::Number, "", Value::integer(static_cast<int64_t>(u)), line, col});
          i = j;
          continue;
        }
        while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        if (j < src.size() && src[j] == '.') {
          is_float = true;
          ++j;
          while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        }
        if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
          size_t k = j + 1;
          if (k < src.size() && (src[k] == '+' || src[k] == '-')) ++k;
          if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
            is_float = true;
            j = k;
            while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
          }
        }
        std::string digits;
        for (size_t k = i; k < j; ++k) if (src[k] != '_') digits += src[k];
        Value v;
        if (is_float) {
          v = Value::number(std::strtod(digits.c_str(), nullptr));
        } else {
          errno = 0;
          long long n = std::strtoll(digits.c_str(), nullptr, 10);
          if (errno != 0) return fail(line, col, "integer literal too large");
          v = Value::integer(n);
        }
        if (j < src.size() && (src[j] == 'j' || src[j] == 'J')) return fail(line, col, "complex numbers are not supported");
        out.push_back({Tok::Number, digits, v, line, col});
        i = j;
        continue;
      }
      if (c == '\'' || c == '"') {
        if (!string(i, line, line_start, false)) return false;
        continue;
      }
      static const char* const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
      static const char* const ops2[] = {"**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=",
                                         "%=", "&=", "|=", "^=", "->", "<<", ">>", ":="};
      std::string op;
      for (const char* o : ops3)
        if (src.substr(i, 3) == o) op = o;
      if (op.empty())
        for (const char* o : ops2)
          if (src.substr(i, 2) == o) op = o;
      if (op.empty()) {
        if (std::string_view("+-*/%<>=()[]{},:.;|&^~@").find(c) == std::string_view::npos)
          return fail(line, col, std::string("unexpected character '") + c + "'");
        op = std::string(1, c);
      }
      if (op == "(" || op == "[" || op == "{") ++depth;
      if (op == ")" || op == "]" || op == "}") depth = std::max(0, depth - 1);
      out.push_back({Tok::Op, op, {}, line, col});
      i += op.size();
    }
    if (!out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {}, line, 1});
    while (indents.size() > 1) {
      indents.pop_back();
      out.push_back({Tok::Dedent, "", {}, line, 1});
    }
    out.push_back({Tok::End, "", {}, line, 1});
    return true;
  }

  bool string(size_t& i, int& line, size_t& line_start, bool raw) {
    int col = static_cast<int>(i - line_start) + 1;
    int start_line = line;
    char q = src[i];
    bool triple = src.substr(i, 3) == std::string(3, q);
    i += triple ? 3 : 1;
    std::string s;
    while (true) {
      if (i >= src.size()) return fail(start_line, col, "unterminated string literal");
      char c = src[i];
      if (triple ? src.substr(i, 3) == std::string(3, q) : c == q) {
        i += triple ? 3 : 1;
        break;
      }
      if (c == '\n') {
        if (!triple) return fail(start_line, col, "unterminated string literal");
        ++line;
        line_start = i + 1;
      }
      if (c == '\\' && !raw && i + 1 < src.size()) {
        char e = src[i + 1];
        i += 2;
        switch (e) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case 'r': s += '\r'; break;
          case '0': s += '\0'; break;
          case '\\': s += '\\'; break;
          case '\'': s += '\''; break;
          case '"': s += '"'; break;
          case '\n': ++line; line_start = i; break;
          default: s += '\\'; s += e;
        }
        continue;
      }
      s += c;
      ++i;
    }
    // adjacent literals concatenate
    if (!out.empty() && out.back().kind == Tok::String) {
      out.back().text += s;
    } else {
      out.push_back({Tok::String, s, {}, start_line, col});
    }
    return true;
  }
};

}  // namespace

// -------------------------------------------------------------------- AST

struct Node {
  int line = 0, col = 0;
  virtual ~Node() = default;
  virtual Value eval(Frame&) const { raise("SyntaxError", "not an expression"); }
  virtual void exec(Frame& f) const { eval(f); }
  // Assignment target support.
  virtual void assign(Frame&, Value) const { raise("SyntaxError", "cannot assign to expression"); }
};

using NodeP = std::unique_ptr<Node>;

namespace {

enum class Flow { Normal, Break, Continue };
thread_local Flow g_flow = Flow::Normal;
constexpr int kMaxSteps = 10'000'000;
// Strings that rule code builds stay below 1 MiB (Python has no such limit;
// no rule comes near it, and a fuzzed rule must not spend seconds copying).
constexpr size_t kMaxStr = 1u << 20;

Value call_value(const Value& fn, std::vector<Value>& args, Frame& f);
Value get_attr(const Value& obj, const std::string& name);
Value subscript(const Value& obj, const Value& idx);
Value binop(const std::string& op, const Value& a, const Value& b);
bool compare(const std::string& op, const Value& a, const Value& b);

struct Const : Node {
  Value v;
  Value eval(Frame&) const override { return v; }
};

const Value& builtin_value(int id, bool* found);

struct Name : Node {
  int id;
  std::string name;
  Value eval(Frame& f) const override {
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
    bool found = false;
    const Value& b = builtin_value(id, &found);
    if (found) return b;
    raise("NameError", "name '" + name + "' is not defined");
  }
  void assign(Frame& f, Value v) const override { f.locals->set(id, std::move(v)); }
};

struct Attr : Node {
  NodeP obj;
  std::string name;
  Value eval(Frame& f) const override {
    Value o = obj->eval(f);
    // A line's value is built on first use: `line.value` of a loglines entry (BEGIN code) or `ll.value`.
    if (o.kind == VKind::Line && name == "value" && !o.line().value_loaded && f.host) f.host->load_line_value(o.line());
    return get_attr(o, name);
  }
  void assign(Frame& f, Value v) const override {
    Value o = obj->eval(f);
    if (o.kind != VKind::Line) raise("AttributeError", std::string("'") + py_type_name(o) + "' object attribute '" + name + "' is read-only");
    LineObj& l = o.line();
    if (name == "key") l.key = std::move(v);
    else if (name == "timestamp") l.timestamp = std::move(v);
    else if (name == "lineno") l.lineno = std::move(v);
    else if (name == "value") { l.value = std::move(v); l.value_loaded = true; }
    else if (name == "full_string") { l.full_string = std::move(v); l.full_loaded = true; }
    else raise("AttributeError", "'LogLine' object has no attribute '" + name + "'");
  }
};

struct SliceNode : Node {
  NodeP lo, hi;
};

int64_t norm_index(int64_t i, size_t n) {
  if (i < 0) i += static_cast<int64_t>(n);
  return i;
}

int64_t as_index(const Value& v) {
  if (v.kind == VKind::Int) return v.i;
  if (v.kind == VKind::Bool) return v.b;
  raise("TypeError", std::string("indices must be integers, not ") + py_type_name(v));
}

struct Subscript : Node {
  NodeP obj;
  NodeP idx;
  bool is_slice = false;
  Value eval(Frame& f) const override {
    Value o = obj->eval(f);
    if (is_slice) {
      auto* sl = static_cast<const SliceNode*>(idx.get());
      Value lo = sl->lo ? sl->lo->eval(f) : Value();
      Value hi = sl->hi ? sl->hi->eval(f) : Value();
      size_t n = o.kind == VKind::Str ? o.s().size()
                 : (o.kind == VKind::List || o.kind == VKind::Tuple) ? o.items().size()
                 : (raise("TypeError", std::string("'") + py_type_name(o) + "' object is not subscriptable"), 0);
      int64_t a = lo.kind == VKind::None ? 0 : norm_index(as_index(lo), n);
      int64_t b = hi.kind == VKind::None ? static_cast<int64_t>(n) : norm_index(as_index(hi), n);
      a = std::clamp<int64_t>(a, 0, static_cast<int64_t>(n));
      b = std::clamp<int64_t>(b, 0, static_cast<int64_t>(n));
      if (b < a) b = a;
      if (o.kind == VKind::Str) return Value::str(o.s().substr(static_cast<size_t>(a), static_cast<size_t>(b - a)));
      std::vector<Value> items(o.items().begin() + a, o.items().begin() + b);
      return o.kind == VKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    return subscript(o, idx->eval(f));
  }
  void assign(Frame& f, Value v) const override {
    if (is_slice) raise("TypeError", "slice assignment is not supported");
    Value o = obj->eval(f);
    Value k = idx->eval(f);
    if (o.kind == VKind::Dict) {
      if (k.kind == VKind::List || k.kind == VKind::Dict) raise("TypeError", std::string("unhashable type: '") + py_type_name(k) + "'");
      o.d().set(k, std::move(v));
      return;
    }
    if (o.kind == VKind::List) {
      auto& items = o.items();
      int64_t i = norm_index(as_index(k), items.size());
      if (i < 0 || i >= static_cast<int64_t>(items.size())) raise("IndexError", "list assignment index out of range");
      items[static_cast<size_t>(i)] = std::move(v);
      return;
    }
    raise("TypeError", std::string("'") + py_type_name(o) + "' object does not support item assignment");
  }
};

struct Call : Node {
  NodeP fn;
  std::vector<NodeP> args;
  Value eval(Frame& f) const override {
    Value callee = fn->eval(f);
    std::vector<Value> a;
    a.reserve(args.size());
    for (const auto& x : args) a.push_back(x->eval(f));
    return call_value(callee, a, f);
  }
};

struct BinOp : Node {
  std::string op;
  NodeP a, b;
  Value eval(Frame& f) const override {
    Value x = a->eval(f);
    Value y = b->eval(f);
    return binop(op, x, y);
  }
};

struct Unary : Node {
  std::string op;
  NodeP a;
  Value eval(Frame& f) const override {
    Value x = a->eval(f);
    if (op == "not") return Value::boolean(!py_truthy(x));
    if (!x.is_num()) raise("TypeError", "bad operand type for unary " + op + ": '" + py_type_name(x) + "'");
    if (op == "-") {
      if (x.kind == VKind::Float) return Value::number(-x.f);
      if (x.kind == VKind::Int && x.i == INT64_MIN) raise("OverflowError", "integer result does not fit in 64 bits");
      return Value::integer(-(x.kind == VKind::Int ? x.i : x.b));
    }
    if (op == "+") return x.kind == VKind::Bool ? Value::integer(x.b) : x;
    if (x.kind == VKind::Float) raise("TypeError", "bad operand type for unary ~: 'float'");
    return Value::integer(~(x.kind == VKind::Int ? x.i : static_cast<int64_t>(x.b)));
  }
};

struct BoolOp : Node {
  bool is_and;
  std::vector<NodeP> parts;
  Value eval(Frame& f) const override {
    Value v;
    for (const auto& p : parts) {
      v = p->eval(f);
      if (py_truthy(v) != is_and) return v;
    }
    return v;
  }
};

struct CompareNode : Node {
  NodeP first;
  std::vector<std::pair<std::string, NodeP>> rest;
  Value eval(Frame& f) const override {
    Value left = first->eval(f);
    for (const auto& [op, node] : rest) {
      Value right = node->eval(f);
      if (!compare(op, left, right)) return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }
};

struct IfExp : Node {
  NodeP cond, yes, no;
  Value eval(Frame& f) const override { return py_truthy(cond->eval(f)) ? yes->eval(f) : no->eval(f); }
};

struct ListDisplay : Node {
  bool is_tuple = false;
  std::vector<NodeP> items;
  Value eval(Frame& f) const override {
    std::vector<Value> v;
    v.reserve(items.size());
    for (const auto& x : items) v.push_back(x->eval(f));
    return is_tuple ? Value::tuple(std::move(v)) : Value::list(std::move(v));
  }
  void assign(Frame& f, Value v) const override {
    if (v.kind != VKind::List && v.kind != VKind::Tuple) raise("TypeError", std::string("cannot unpack non-iterable ") + py_type_name(v) + " object");
    auto src = v.items();
    if (src.size() != items.size()) raise("ValueError", "wrong number of values to unpack");
    for (size_t i = 0; i < items.size(); ++i) items[i]->assign(f, src[i]);
  }
};

struct DictDisplay : Node {
  std::vector<std::pair<NodeP, NodeP>> items;
  Value eval(Frame& f) const override {
    Value d = Value::dict();
    for (const auto& [k, v] : items) {
      Value key = k->eval(f);
      if (key.kind == VKind::List || key.kind == VKind::Dict) raise("TypeError", std::string("unhashable type: '") + py_type_name(key) + "'");
      d.d().set(key, v->eval(f));
    }
    return d;
  }
};

// Statements

struct Block : Node {
  std::vector<NodeP> stmts;
  void exec(Frame& f) const override {
    for (const auto& s : stmts) {
      s->exec(f);
      if (g_flow != Flow::Normal) return;
    }
  }
};

struct ExprStmt : Node {
  NodeP e;
  void exec(Frame& f) const override { e->eval(f); }
};

struct Assign : Node {
  std::vector<NodeP> targets;
  NodeP value;
  void exec(Frame& f) const override {
    Value v = value->eval(f);
    for (const auto& t : targets) t->assign(f, v);
  }
};

struct AugAssign : Node {
  NodeP target;
  std::string op;  // without '='
  NodeP value;
  void exec(Frame& f) const override {
    Value cur = target->eval(f);
    Value rhs = value->eval(f);
    if (op == "+" && cur.kind == VKind::List) {  // list += extends in place
      if (rhs.kind != VKind::List && rhs.kind != VKind::Tuple) raise("TypeError", "can only concatenate list");
      auto add = rhs.items();
      if (cur.items().size() + add.size() > 10'000'000) raise("MemoryError", "list too large");
      cur.items().insert(cur.items().end(), add.begin(), add.end());
      target->assign(f, cur);
      return;
    }
    target->assign(f, binop(op, cur, rhs));
  }
};

struct IfStmt : Node {
  std::vector<std::pair<NodeP, NodeP>> branches;  // cond, block
  NodeP orelse;
  void exec(Frame& f) const override {
    for (const auto& [c, b] : branches)
      if (py_truthy(c->eval(f))) {
        b->exec(f);
        return;
      }
    if (orelse) orelse->exec(f);
  }
};

struct ForStmt : Node {
  NodeP target;
  NodeP iter;
  NodeP body;
  void exec(Frame& f) const override {
    Value it = iter->eval(f);
    std::vector<Value> snapshot;
    if (it.kind == VKind::List || it.kind == VKind::Tuple) {
      // Python iterates a list by index, so appends during the loop are seen.
      Value keep = it;
      for (size_t i = 0; i < keep.items().size(); ++i) {
        if (++f.steps > kMaxSteps) raise("RuntimeError", "loop ran too long");
        Value x = keep.items()[i];
        target->assign(f, std::move(x));
        body->exec(f);
        if (g_flow == Flow::Break) { g_flow = Flow::Normal; break; }
        g_flow = Flow::Normal;
      }
      return;
    }
    if (it.kind == VKind::Dict) {
      for (auto& [k, v] : it.d().entries) snapshot.push_back(k);
    } else if (it.kind == VKind::Str) {
      for (char c : it.s()) snapshot.push_back(Value::str(std::string(1, c)));
    } else {
      raise("TypeError", std::string("'") + py_type_name(it) + "' object is not iterable");
    }
    for (auto& x : snapshot) {
      if (++f.steps > kMaxSteps) raise("RuntimeError", "loop ran too long");
      target->assign(f, std::move(x));
      body->exec(f);
      if (g_flow == Flow::Break) { g_flow = Flow::Normal; break; }
      g_flow = Flow::Normal;
    }
  }
};

struct FlowStmt : Node {
  Flow flow;
  void exec(Frame&) const override { g_flow = flow; }
};

struct Pass : Node {
  void exec(Frame&) const override {}
};

struct ImportStmt : Node {
  int id;
  Value v;
  void exec(Frame& f) const override { f.locals->set(id, v); }
};

// ----------------------------------------------------------------- parser

class Parser {
 public:
  Parser(std::vector<Token> toks, CompileError* err) : t_(std::move(toks)), err_(err) {}

  NodeP parse_expression_only() {
    skip_newlines();
    NodeP e = expr_list(true);
    if (!e) return nullptr;
    skip_newlines();
    if (peek().kind != Tok::End) return fail_here("unexpected " + describe(peek()) + " after the expression");
    return e;
  }

  NodeP parse_module() {
    auto block = std::make_unique<Block>();
    skip_newlines();
    while (peek().kind != Tok::End) {
      if (!statement(block->stmts)) return nullptr;
      skip_newlines();
    }
    return block;
  }

 private:
  const Token& peek(int k = 0) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(pos_++, t_.size() - 1)]; }
  bool is_op(const char* op, int k = 0) const { return peek(k).kind == Tok::Op && peek(k).text == op; }
  bool is_name(const char* n, int k = 0) const { return peek(k).kind == Tok::Name && peek(k).text == n; }
  bool accept_op(const char* op) {
    if (is_op(op)) { ++pos_; return true; }
    return false;
  }
  void skip_newlines() {
    while (peek().kind == Tok::Newline) ++pos_;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::Name: return "name '" + t.text + "'";
      case Tok::Number: return "number";
      case Tok::String: return "string";
      case Tok::Op: return "'" + t.text + "'";
      case Tok::Newline: return "end of line";
      case Tok::Indent: return "indent";
      case Tok::Dedent: return "dedent";
      case Tok::End: return "end of code";
    }
    return "token";
  }
  NodeP fail_here(std::string msg) {
    if (err_->message.empty()) {
      err_->line = peek().line;
      err_->column = peek().col;
      err_->message = std::move(msg);
    }
    return nullptr;
  }
  template <class T>
  std::unique_ptr<T> mk(const Token& at) {
    auto n = std::make_unique<T>();
    n->line = at.line;
    n->col = at.col;
    return n;
  }

  static bool is_keyword(const std::string& w) {
    static const char* const kw[] = {"and", "or", "not", "in", "is", "if", "else", "elif", "for", "while",
                                     "def", "class", "return", "lambda", "import", "from", "pass", "break",
                                     "continue", "try", "except", "finally", "with", "as", "global",
                                     "nonlocal", "del", "yield", "raise", "assert", "async", "await"};
    for (const char* k : kw)
      if (w == k) return true;
    return false;
  }

  // statements ---------------------------------------------------------
  bool statement(std::vector<NodeP>& out) {
    Depth guard(&depth_);
    if (depth_ > kMaxNesting) return !!fail_here("blocks nested too deeply");
    const Token& t = peek();
    if (t.kind == Tok::Indent) return !!fail_here("unexpected indent");
    if (t.kind == Tok::Name) {
      if (t.text == "if") return if_stmt(out);
      if (t.text == "for") return for_stmt(out);
      static const char* const unsupported[] = {"while", "def", "class", "return", "lambda", "try", "with",
                                                "global", "nonlocal", "del", "yield", "raise", "assert",
                                                "async", "await", "except", "finally"};
      for (const char* u : unsupported)
        if (t.text == u) return !!fail_here("'" + t.text + "' is not supported in rule code");
    }
    // simple statements separated by ';'
    while (true) {
      if (!simple_statement(out)) return false;
      if (accept_op(";")) {
        if (peek().kind == Tok::Newline || peek().kind == Tok::End) break;
        continue;
      }
      break;
    }
    if (peek().kind == Tok::Newline) {
      ++pos_;
      return true;
    }
    if (peek().kind == Tok::End || peek().kind == Tok::Dedent) return true;
    return !!fail_here("unexpected " + describe(peek()));
  }

  bool simple_statement(std::vector<NodeP>& out) {
    const Token& t = peek();
    if (is_name("pass")) { ++pos_; out.push_back(mk<Pass>(t)); return true; }
    if (is_name("break") || is_name("continue")) {
      auto n = mk<FlowStmt>(t);
      n->flow = t.text == "break" ? Flow::Break : Flow::Continue;
      ++pos_;
      out.push_back(std::move(n));
      return true;
    }
    if (is_name("from")) {
      ++pos_;
      std::string mod = dotted();
      if (!is_name("import")) return !!fail_here("expected 'import'");
      ++pos_;
      if (peek().kind != Tok::Name) return !!fail_here("expected a name to import");
      std::string what = next().text;
      if (mod == "dataclasses" && what == "replace") {
        auto n = mk<ImportStmt>(t);
        n->id = intern_name("replace");
        n->v = Value::builtin(Builtin::Replace);
        out.push_back(std::move(n));
        return true;
      }
      if (mod == "math") {
        auto n = mk<ImportStmt>(t);
        n->id = intern_name(what);
        n->v = get_attr(Value::module(), what);
        out.push_back(std::move(n));
        return true;
      }
      return !!fail_here("import of '" + mod + "." + what + "' is not supported (only dataclasses.replace and math)");
    }
    if (is_name("import")) {
      ++pos_;
      std::string mod = dotted();
      if (mod != "math") return !!fail_here("import of '" + mod + "' is not supported (only math)");
      auto n = mk<ImportStmt>(t);
      n->id = intern_name("math");
      n->v = Value::module();
      out.push_back(std::move(n));
      return true;
    }
    NodeP first = expr_list(false);
    if (!first) return false;
    static const char* const aug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "|=", "&=", "^="};
    for (const char* a : aug) {
      if (is_op(a)) {
        ++pos_;
        if (!assignable(first.get())) return !!fail_here("cannot assign to this expression");
        auto n = mk<AugAssign>(t);
        n->op = std::string(a, std::strlen(a) - 1);
        n->target = std::move(first);
        n->value = expr_list(false);
        if (!n->value) return false;
        out.push_back(std::move(n));
        return true;
      }
    }
    if (is_op("=")) {
      auto n = mk<Assign>(t);
      n->targets.push_back(std::move(first));
      while (accept_op("=")) {
        NodeP e = expr_list(false);
        if (!e) return false;
        n->targets.push_back(std::move(e));
      }
      n->value = std::move(n->targets.back());
      n->targets.pop_back();
      for (const auto& tg : n->targets)
        if (!assignable(tg.get())) return !!fail_here("cannot assign to this expression");
      out.push_back(std::move(n));
      return true;
    }
    auto n = mk<ExprStmt>(t);
    n->e = std::move(first);
    out.push_back(std::move(n));
    return true;
  }

  static bool assignable(const Node* n) {
    if (dynamic_cast<const Name*>(n) || dynamic_cast<const Attr*>(n) || dynamic_cast<const Subscript*>(n)) return true;
    if (auto* l = dynamic_cast<const ListDisplay*>(n)) {
      for (const auto& x : l->items)
        if (!assignable(x.get())) return false;
      return true;
    }
    return false;
  }

  std::string dotted() {
    std::string s;
    if (peek().kind != Tok::Name) return s;
    s = next().text;
    while (is_op(".") && peek(1).kind == Tok::Name) {
      pos_ += 1;
      s += "." + next().text;
    }
    return s;
  }

  NodeP suite() {
    if (!accept_op(":")) return fail_here("expected ':'");
    auto block = std::make_unique<Block>();
    if (peek().kind != Tok::Newline) {
      // single-line suite: `if x: a; b`
      while (true) {
        if (!simple_statement(block->stmts)) return nullptr;
        if (accept_op(";") && peek().kind != Tok::Newline && peek().kind != Tok::End) continue;
        break;
      }
      if (peek().kind == Tok::Newline) ++pos_;
      return block;
    }
    ++pos_;
    skip_newlines();
    if (peek().kind != Tok::Indent) return fail_here("expected an indented block");
    ++pos_;
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) {
      if (!statement(block->stmts)) return nullptr;
      skip_newlines();
    }
    if (peek().kind == Tok::Dedent) ++pos_;
    return block;
  }

  bool if_stmt(std::vector<NodeP>& out) {
    auto n = mk<IfStmt>(peek());
    ++pos_;
    NodeP cond = test();
    if (!cond) return false;
    NodeP body = suite();
    if (!body) return false;
    n->branches.emplace_back(std::move(cond), std::move(body));
    while (true) {
      skip_newlines_before_keyword();
      if (is_name("elif")) {
        ++pos_;
        NodeP c = test();
        if (!c) return false;
        NodeP b = suite();
        if (!b) return false;
        n->branches.emplace_back(std::move(c), std::move(b));
        continue;
      }
      if (is_name("else")) {
        ++pos_;
        n->orelse = suite();
        if (!n->orelse) return false;
      }
      break;
    }
    out.push_back(std::move(n));
    return true;
  }
  void skip_newlines_before_keyword() {
    size_t p = pos_;
    while (t_[p].kind == Tok::Newline) ++p;
    if (t_[p].kind == Tok::Name && (t_[p].text == "elif" || t_[p].text == "else")) pos_ = p;
  }

  bool for_stmt(std::vector<NodeP>& out) {
    auto n = mk<ForStmt>(peek());
    ++pos_;
    n->target = target_list();
    if (!n->target) return false;
    if (!is_name("in")) return !!fail_here("expected 'in'");
    ++pos_;
    n->iter = expr_list(false);
    if (!n->iter) return false;
    n->body = suite();
    if (!n->body) return false;
    if (is_name("else")) return !!fail_here("'for ... else' is not supported");
    out.push_back(std::move(n));
    return true;
  }

  NodeP target_list() {
    const Token& t = peek();
    std::vector<NodeP> items;
    while (true) {
      NodeP e = bitor_expr();
      if (!e) return nullptr;
      if (!assignable(e.get())) return fail_here("cannot assign to this expression");
      items.push_back(std::move(e));
      if (!accept_op(",")) break;
    }
    if (items.size() == 1) return std::move(items[0]);
    auto l = mk<ListDisplay>(t);
    l->is_tuple = true;
    l->items = std::move(items);
    return l;
  }

  // expressions --------------------------------------------------------
  NodeP expr_list(bool /*top*/) {
    const Token& t = peek();
    NodeP first = test();
    if (!first) return nullptr;
    if (!is_op(",")) return first;
    auto tup = mk<ListDisplay>(t);
    tup->is_tuple = true;
    tup->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (peek().kind == Tok::Newline || peek().kind == Tok::End || is_op("=") || is_op(")")) break;
      NodeP e = test();
      if (!e) return nullptr;
      tup->items.push_back(std::move(e));
    }
    return tup;
  }

  // Nesting deeper than this is refused. Each parenthesis level counts three
  // (test, not_test, factor), so this allows the 200 levels CPython allows.
  static constexpr int kMaxNesting = 600;
  struct Depth {
    explicit Depth(int* d) : d_(d) { ++*d_; }
    ~Depth() { --*d_; }
    int* d_;
  };
  int depth_ = 0;

  NodeP test() {
    Depth guard(&depth_);
    if (depth_ > kMaxNesting) return fail_here("expression nested too deeply");
    const Token& t = peek();
    if (is_name("lambda")) return fail_here("'lambda' is not supported in rule code");
    NodeP a = or_test();
    if (!a) return nullptr;
    if (is_name("if")) {
      ++pos_;
      auto n = mk<IfExp>(t);
      n->yes = std::move(a);
      n->cond = or_test();
      if (!n->cond) return nullptr;
      if (!is_name("else")) return fail_here("expected 'else' in conditional expression");
      ++pos_;
      n->no = test();
      if (!n->no) return nullptr;
      return n;
    }
    return a;
  }

  NodeP bool_chain(bool is_and) {
    const Token& t = peek();
    NodeP a = is_and ? not_test() : bool_chain(true);
    if (!a) return nullptr;
    const char* kw = is_and ? "and" : "or";
    if (!is_name(kw)) return a;
    auto n = mk<BoolOp>(t);
    n->is_and = is_and;
    n->parts.push_back(std::move(a));
    while (is_name(kw)) {
      ++pos_;
      NodeP b = is_and ? not_test() : bool_chain(true);
      if (!b) return nullptr;
      n->parts.push_back(std::move(b));
    }
    return n;
  }
  NodeP or_test() { return bool_chain(false); }

  NodeP not_test() {
    Depth guard(&depth_);
    if (depth_ > kMaxNesting) return fail_here("expression nested too deeply");
    if (is_name("not")) {
      auto n = mk<Unary>(peek());
      ++pos_;
      n->op = "not";
      n->a = not_test();
      if (!n->a) return nullptr;
      return n;
    }
    return comparison();
  }

  bool comp_op(std::string* op) {
    static const char* const ops[] = {"<", ">", "==", ">=", "<=", "!="};
    for (const char* o : ops)
      if (is_op(o)) { *op = o; ++pos_; return true; }
    if (is_name("in")) { *op = "in"; ++pos_; return true; }
    if (is_name("not") && is_name("in", 1)) { *op = "not in"; pos_ += 2; return true; }
    if (is_name("is")) {
      ++pos_;
      if (is_name("not")) { ++pos_; *op = "is not"; } else { *op = "is"; }
      return true;
    }
    return false;
  }

  NodeP comparison() {
    const Token& t = peek();
    NodeP a = bitor_expr();
    if (!a) return nullptr;
    std::string op;
    if (!comp_op(&op)) return a;
    auto n = mk<CompareNode>(t);
    n->first = std::move(a);
    do {
      NodeP b = bitor_expr();
      if (!b) return nullptr;
      n->rest.emplace_back(op, std::move(b));
    } while (comp_op(&op));
    return n;
  }

  NodeP binary_level(int level) {
    static const std::vector<std::vector<const char*>> levels = {
        {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (level >= static_cast<int>(levels.size())) return factor();
    NodeP a = binary_level(level + 1);
    if (!a) return nullptr;
    while (true) {
      const char* found = nullptr;
      for (const char* o : levels[static_cast<size_t>(level)])
        if (is_op(o)) found = o;
      if (!found) return a;
      if (std::string(found) == "@") return fail_here("'@' is not supported");
      auto n = mk<BinOp>(peek());
      ++pos_;
      n->op = found;
      n->a = std::move(a);
      n->b = binary_level(level + 1);
      if (!n->b) return nullptr;
      a = std::move(n);
    }
  }
  NodeP bitor_expr() { return binary_level(0); }

  NodeP factor() {
    Depth guard(&depth_);
    if (depth_ > kMaxNesting) return fail_here("expression nested too deeply");
    if (is_op("-") || is_op("+") || is_op("~")) {
      auto n = mk<Unary>(peek());
      n->op = next().text;
      n->a = factor();
      if (!n->a) return nullptr;
      return n;
    }
    return power();
  }

  NodeP power() {
    NodeP a = primary();
    if (!a) return nullptr;
    if (is_op("**")) {
      auto n = mk<BinOp>(peek());
      ++pos_;
      n->op = "**";
      n->a = std::move(a);
      n->b = factor();
      if (!n->b) return nullptr;
      return n;
    }
    return a;
  }

  NodeP primary() {
    NodeP a = atom();
    if (!a) return nullptr;
    while (true) {
      const Token& t = peek();
      if (accept_op(".")) {
        if (peek().kind != Tok::Name) return fail_here("expected an attribute name");
        auto n = mk<Attr>(t);
        n->obj = std::move(a);
        n->name = next().text;
        a = std::move(n);
      } else if (accept_op("(")) {
        auto n = mk<Call>(t);
        n->fn = std::move(a);
        while (!is_op(")")) {
          if (peek().kind == Tok::Name && is_op("=", 1)) return fail_here("keyword arguments are not supported");
          if (is_op("*") || is_op("**")) return fail_here("argument unpacking is not supported");
          NodeP e = test();
          if (!e) return nullptr;
          if (is_name("for")) return fail_here("generator expressions are not supported");
          n->args.push_back(std::move(e));
          if (!accept_op(",")) break;
        }
        if (!accept_op(")")) return fail_here("expected ')'");
        a = std::move(n);
      } else if (accept_op("[")) {
        auto n = mk<Subscript>(t);
        n->obj = std::move(a);
        if (is_op(":") || (!is_op("]") && slice_ahead())) {
          auto sl = mk<SliceNode>(t);
          if (!is_op(":")) {
            sl->lo = test();
            if (!sl->lo) return nullptr;
          }
          if (!accept_op(":")) return fail_here("expected ':'");
          if (!is_op("]")) {
            sl->hi = test();
            if (!sl->hi) return nullptr;
          }
          if (is_op(":")) return fail_here("slice steps are not supported");
          n->idx = std::move(sl);
          n->is_slice = true;
        } else {
          n->idx = expr_list(false);
          if (!n->idx) return nullptr;
        }
        if (!accept_op("]")) return fail_here("expected ']'");
        a = std::move(n);
      } else {
        return a;
      }
    }
  }
  // Is there a ':' at bracket depth 0 before the closing ']'?
  bool slice_ahead() const {
    int depth = 0;
    for (size_t p = pos_; p < t_.size(); ++p) {
      const Token& t = t_[p];
      if (t.kind != Tok::Op) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      else if (t.text == ")" || t.text == "}") --depth;
      else if (t.text == "]") {
        if (depth == 0) return false;
        --depth;
      } else if (t.text == ":" && depth == 0) return true;
    }
    return false;
  }

  NodeP atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Number: {
        auto n = mk<Const>(t);
        n->v = t.num;
        ++pos_;
        return n;
      }
      case Tok::String: {
        auto n = mk<Const>(t);
        n->v = Value::str(t.text);
        ++pos_;
        return n;
      }
      case Tok::Name: {
        if (t.text == "True" || t.text == "False" || t.text == "None") {
          auto n = mk<Const>(t);
          n->v = t.text == "None" ? Value() : Value::boolean(t.text == "True");
          ++pos_;
          return n;
        }
        if (is_keyword(t.text)) return fail_here("'" + t.text + "' is not supported here");
        auto n = mk<Name>(t);
        n->name = t.text;
        n->id = intern_name(t.text);
        ++pos_;
        return n;
      }
      case Tok::Op: {
        if (t.text == "(") {
          ++pos_;
          if (accept_op(")")) {
            auto n = mk<ListDisplay>(t);
            n->is_tuple = true;
            return n;
          }
          NodeP e = test();
          if (!e) return nullptr;
          if (is_name("for")) return fail_here("generator expressions are not supported");
          if (is_op(",")) {
            auto tup = mk<ListDisplay>(t);
            tup->is_tuple = true;
            tup->items.push_back(std::move(e));
            while (accept_op(",")) {
              if (is_op(")")) break;
              NodeP x = test();
              if (!x) return nullptr;
              tup->items.push_back(std::move(x));
            }
            e = std::move(tup);
          }
          if (!accept_op(")")) return fail_here("expected ')'");
          return e;
        }
        if (t.text == "[") {
          ++pos_;
          auto n = mk<ListDisplay>(t);
          while (!is_op("]")) {
            NodeP e = test();
            if (!e) return nullptr;
            if (is_name("for")) return fail_here("list comprehensions are not supported");
            n->items.push_back(std::move(e));
            if (!accept_op(",")) break;
          }
          if (!accept_op("]")) return fail_here("expected ']'");
          return n;
        }
        if (t.text == "{") {
          ++pos_;
          auto n = mk<DictDisplay>(t);
          while (!is_op("}")) {
            NodeP k = test();
            if (!k) return nullptr;
            if (!accept_op(":")) return fail_here(is_name("for") ? "dict comprehensions are not supported"
                                                                 : "set displays are not supported (expected ':')");
            NodeP v = test();
            if (!v) return nullptr;
            n->items.emplace_back(std::move(k), std::move(v));
            if (!accept_op(",")) break;
          }
          if (!accept_op("}")) return fail_here("expected '}'");
          return n;
        }
        return fail_here("unexpected " + describe(t));
      }
      default:
        return fail_here("unexpected " + describe(t));
    }
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  CompileError* err_;
};

// -------------------------------------------------------------- runtime

struct BuiltinEntry {
  const char* name;
  Value v;
};

const std::vector<std::pair<int, Value>>& builtin_table() {
  static const std::vector<std::pair<int, Value>> table = [] {
    std::vector<std::pair<int, Value>> t;
    auto add = [&](const char* n, Value v) { t.emplace_back(intern_name(n), std::move(v)); };
    add("len", Value::builtin(Builtin::Len));
    add("min", Value::builtin(Builtin::Min));
    add("max", Value::builtin(Builtin::Max));
    add("abs", Value::builtin(Builtin::Abs));
    add("sorted", Value::builtin(Builtin::Sorted));
    add("isinstance", Value::builtin(Builtin::IsInstance));
    add("print", Value::builtin(Builtin::Print));
    add("round", Value::builtin(Builtin::Round));
    add("sum", Value::builtin(Builtin::Sum));
    add("any", Value::builtin(Builtin::Any));
    add("all", Value::builtin(Builtin::All));
    add("range", Value::builtin(Builtin::Range));
    add("is_integer", Value::builtin(Builtin::IsInteger));
    add("enqueue_config", Value::builtin(Builtin::EnqueueConfig));
    add("math", Value::module());
    add("bool", Value::type(Builtin::TBool));
    add("int", Value::type(Builtin::TInt));
    add("float", Value::type(Builtin::TFloat));
    add("str", Value::type(Builtin::TStr));
    add("list", Value::type(Builtin::TList));
    add("dict", Value::type(Builtin::TDict));
    add("tuple", Value::type(Builtin::TTuple));
    add("type", Value::type(Builtin::TType));
    return t;
  }();
  return table;
}

const Value& builtin_value(int id, bool* found) {
  static const Value none;
  for (const auto& [k, v] : builtin_table())
    if (k == id) {
      *found = true;
      return v;
    }
  *found = false;
  return none;
}

Value type_of(const Value& v) {
  switch (v.kind) {
    case VKind::Bool: return Value::type(Builtin::TBool);
    case VKind::Int: return Value::type(Builtin::TInt);
    case VKind::Float: return Value::type(Builtin::TFloat);
    case VKind::Str: return Value::type(Builtin::TStr);
    case VKind::List: return Value::type(Builtin::TList);
    case VKind::Tuple: return Value::type(Builtin::TTuple);
    case VKind::Dict: return Value::type(Builtin::TDict);
    case VKind::None: return Value::type(Builtin::TNone);
    case VKind::Type: return Value::type(Builtin::TType);
    default: return Value::type(Builtin::TType);
  }
}

bool isinstance_of(const Value& v, const Value& t) {
  if (t.kind == VKind::Tuple) {
    for (const auto& x : t.items())
      if (isinstance_of(v, x)) return true;
    return false;
  }
  if (t.kind != VKind::Type) raise("TypeError", "isinstance() arg 2 must be a type or tuple of types");
  if (t.fn == Builtin::TInt && v.kind == VKind::Bool) return true;  // bool subclasses int
  return type_of(v).fn == t.fn;
}

int cmp_values(const Value& a, const Value& b, const char* op) {
  if (a.is_num() && b.is_num()) {
    if (a.kind != VKind::Float && b.kind != VKind::Float) {
      int64_t x = a.kind == VKind::Int ? a.i : a.b;
      int64_t y = b.kind == VKind::Int ? b.i : b.b;
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

bool contains(const Value& container, const Value& x) {
  switch (container.kind) {
    case VKind::List:
    case VKind::Tuple:
      for (const auto& e : container.items())
        if (py_eq(e, x)) return true;
      return false;
    case VKind::Dict:
      if (x.kind == VKind::List || x.kind == VKind::Dict) raise("TypeError", std::string("unhashable type: '") + py_type_name(x) + "'");
      return container.d().find(x) != nullptr;
    case VKind::Str:
      if (x.kind != VKind::Str) raise("TypeError", std::string("'in <string>' requires string as left operand, not ") + py_type_name(x));
      return container.s().find(x.s()) != std::string::npos;
    default:
      raise("TypeError", std::string("argument of type '") + py_type_name(container) + "' is not iterable");
  }
}

bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return py_eq(a, b);
  if (op == "!=") return !py_eq(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  if (op == "is" || op == "is not") {
    bool same;
    if (a.kind != b.kind) same = false;
    else if (a.kind == VKind::None) same = true;
    else if (a.kind == VKind::Bool) same = a.b == b.b;
    else if (a.kind == VKind::Type || a.kind == VKind::Builtin) same = a.fn == b.fn;
    else if (a.h) same = a.h == b.h;
    else same = py_eq(a, b);
    return op == "is" ? same : !same;
  }
  int c = cmp_values(a, b, op.c_str());
  if (c == 2) return false;
  if (op == "<") return c < 0;
  if (op == ">") return c > 0;
  if (op == "<=") return c <= 0;
  return c >= 0;
}

int64_t checked(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    raise("OverflowError", "integer result does not fit in 64 bits");
  return static_cast<int64_t>(v);
}

double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

Value binop(const std::string& op, const Value& a, const Value& b) {
  if (a.is_num() && b.is_num()) {
    bool ints = a.kind != VKind::Float && b.kind != VKind::Float;
    if (op == "|" || op == "&" || op == "^" || op == "<<" || op == ">>") {
      if (!ints) raise("TypeError", "unsupported operand type(s) for " + op + ": '" + py_type_name(a) + "' and '" + py_type_name(b) + "'");
      int64_t x = a.kind == VKind::Int ? a.i : a.b;
      int64_t y = b.kind == VKind::Int ? b.i : b.b;
      if ((op == "<<" || op == ">>") && y < 0) raise("ValueError", "negative shift count");
      int64_t r = op == "|" ? (x | y) : op == "&" ? (x & y) : op == "^" ? (x ^ y)
                  : op == "<<" ? checked(static_cast<__int128>(x) << std::min<int64_t>(y, 100))
                               : (x >> std::min<int64_t>(y, 63));
      if (a.kind == VKind::Bool && b.kind == VKind::Bool && (op == "|" || op == "&" || op == "^")) return Value::boolean(r != 0);
      return Value::integer(r);
    }
    if (ints) {
      __int128 x = a.kind == VKind::Int ? a.i : a.b;
      __int128 y = b.kind == VKind::Int ? b.i : b.b;
      if (op == "+") return Value::integer(checked(x + y));
      if (op == "-") return Value::integer(checked(x - y));
      if (op == "*") return Value::integer(checked(x * y));
      if (op == "/") {
        if (y == 0) raise("ZeroDivisionError", "division by zero");
        return Value::number(static_cast<double>(x) / static_cast<double>(y));
      }
      if (op == "//" || op == "%") {
        if (y == 0) raise("ZeroDivisionError", "integer division or modulo by zero");
        __int128 q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        if (op == "//") return Value::integer(checked(q));
        return Value::integer(checked(x - q * y));
      }
      if (op == "**") {
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
    double x = a.as_double(), y = b.as_double();
    if (op == "+") return Value::number(x + y);
    if (op == "-") return Value::number(x - y);
    if (op == "*") return Value::number(x * y);
    if (op == "/") {
      if (y == 0) raise("ZeroDivisionError", "float division by zero");
      return Value::number(x / y);
    }
    if (op == "//") {
      if (y == 0) raise("ZeroDivisionError", "float floor division by zero");
      return Value::number(std::floor(x / y));
    }
    if (op == "%") {
      if (y == 0) raise("ZeroDivisionError", "float modulo");
      return Value::number(py_fmod(x, y));
    }
    if (op == "**") {
      if (x == 0 && y < 0) raise("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) raise("ValueError", "complex result of fractional power");
      return Value::number(std::pow(x, y));
    }
  }
  if (op == "+" && a.kind == VKind::Str && b.kind == VKind::Str) {
    if (a.s().size() + b.s().size() > kMaxStr) raise("MemoryError", "string too large");
    return Value::str(a.s() + b.s());
  }
  if (op == "+" && a.kind == b.kind && (a.kind == VKind::List || a.kind == VKind::Tuple)) {
    if (a.items().size() + b.items().size() > 10'000'000) raise("MemoryError", "list too large");
    std::vector<Value> items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return a.kind == VKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (op == "*" && ((a.kind == VKind::Str && b.kind == VKind::Int) || (a.kind == VKind::Int && b.kind == VKind::Str))) {
    const Value& s = a.kind == VKind::Str ? a : b;
    int64_t n = a.kind == VKind::Int ? a.i : b.i;
    if (n > 1'000'000 || (n > 0 && s.s().size() > kMaxStr / static_cast<size_t>(n)))
      raise("MemoryError", "string repetition too large");
    std::string out;
    if (n > 0) out.reserve(s.s().size() * static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) out += s.s();
    return Value::str(std::move(out));
  }
  if (op == "%" && a.kind == VKind::Str) raise("TypeError", "'%' string formatting is not supported");
  raise("TypeError", "unsupported operand type(s) for " + op + ": '" + py_type_name(a) + "' and '" + py_type_name(b) + "'");
}

Value index_into(const std::vector<Value>& items, const Value& idx, const char* what) {
  int64_t i = norm_index(as_index(idx), items.size());
  if (i < 0 || i >= static_cast<int64_t>(items.size())) raise("IndexError", std::string(what) + " index out of range");
  return items[static_cast<size_t>(i)];
}

Value subscript(const Value& o, const Value& idx) {
  switch (o.kind) {
    case VKind::Dict: {
      if (idx.kind == VKind::List || idx.kind == VKind::Dict) raise("TypeError", std::string("unhashable type: '") + py_type_name(idx) + "'");
      Value* p = o.d().find(idx);
      if (!p) raise("KeyError", py_repr(idx));
      return *p;
    }
    case VKind::List: return index_into(o.items(), idx, "list");
    case VKind::Tuple: return index_into(o.items(), idx, "tuple");
    case VKind::Str: {
      int64_t i = norm_index(as_index(idx), o.s().size());
      if (i < 0 || i >= static_cast<int64_t>(o.s().size())) raise("IndexError", "string index out of range");
      return Value::str(std::string(1, o.s()[static_cast<size_t>(i)]));
    }
    default:
      raise("TypeError", std::string("'") + py_type_name(o) + "' object is not subscriptable");
  }
}

Value method(const Value& self, MethodId id) {
  Value m;
  m.kind = VKind::Method;
  auto o = std::make_shared<MethodObj>();
  o->self = self;
  o->id = id;
  m.h = std::move(o);
  return m;
}

Value get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case VKind::Line: {
      LineObj& l = obj.line();
      if (name == "key") return l.key;
      if (name == "timestamp") return l.timestamp;
      if (name == "lineno") return l.lineno;
      if (name == "value") {
        if (!l.value_loaded) raise("RuntimeError", "line value not loaded");
        return l.value;
      }
      if (name == "full_string") {
        if (!l.full_loaded) {
          l.full_string = Value::str(std::string(mllog::kToken) + std::string(l.json));
          l.full_loaded = true;
        }
        return l.full_string;
      }
      break;
    }
    case VKind::Dict:
      if (name == "update") return method(obj, MethodId::DictUpdate);
      if (name == "get") return method(obj, MethodId::DictGet);
      if (name == "values") return method(obj, MethodId::DictValues);
      if (name == "keys") return method(obj, MethodId::DictKeys);
      if (name == "items") return method(obj, MethodId::DictItems);
      if (name == "pop") return method(obj, MethodId::DictPop);
      if (name == "setdefault") return method(obj, MethodId::DictSetDefault);
      break;
    case VKind::List:
      if (name == "append") return method(obj, MethodId::ListAppend);
      if (name == "extend") return method(obj, MethodId::ListExtend);
      if (name == "count") return method(obj, MethodId::ListCount);
      if (name == "index") return method(obj, MethodId::ListIndex);
      if (name == "pop") return method(obj, MethodId::ListPop);
      if (name == "insert") return method(obj, MethodId::ListInsert);
      break;
    case VKind::Str:
      if (name == "replace") return method(obj, MethodId::StrReplace);
      if (name == "lower") return method(obj, MethodId::StrLower);
      if (name == "upper") return method(obj, MethodId::StrUpper);
      if (name == "format") return method(obj, MethodId::StrFormat);
      if (name == "startswith") return method(obj, MethodId::StrStartsWith);
      if (name == "endswith") return method(obj, MethodId::StrEndsWith);
      if (name == "strip") return method(obj, MethodId::StrStrip);
      if (name == "split") return method(obj, MethodId::StrSplit);
      if (name == "join") return method(obj, MethodId::StrJoin);
      break;
    case VKind::Float:
      if (name == "is_integer") return method(obj, MethodId::FloatIsInteger);
      break;
    case VKind::Module: {
      static const std::pair<const char*, Builtin> fns[] = {
          {"ceil", Builtin::MathCeil}, {"floor", Builtin::MathFloor}, {"log", Builtin::MathLog},
          {"log2", Builtin::MathLog2}, {"log10", Builtin::MathLog10}, {"sqrt", Builtin::MathSqrt},
          {"exp", Builtin::MathExp}, {"pow", Builtin::MathPow}, {"fabs", Builtin::MathFabs},
          {"isnan", Builtin::MathIsNan}, {"isinf", Builtin::MathIsInf}, {"isclose", Builtin::MathIsClose}};
      for (const auto& [n, b] : fns)
        if (name == n) return Value::builtin(b);
      if (name == "pi") return Value::number(M_PI);
      if (name == "e") return Value::number(M_E);
      if (name == "inf") return Value::number(std::numeric_limits<double>::infinity());
      if (name == "nan") return Value::number(std::numeric_limits<double>::quiet_NaN());
      raise("AttributeError", "module 'math' has no attribute '" + name + "'");
    }
    default:
      break;
  }
  raise("AttributeError", std::string("'") + py_type_name(obj) + "' object has no attribute '" + name + "'");
}

void want_args(const std::vector<Value>& a, size_t lo, size_t hi, const char* fn) {
  if (a.size() < lo || a.size() > hi)
    raise("TypeError", std::string(fn) + "() takes " + std::to_string(lo) + (lo == hi ? "" : " to " + std::to_string(hi)) +
                           " arguments (" + std::to_string(a.size()) + " given)");
}

double num_arg(const Value& v, const char* fn) {
  if (!v.is_num()) raise("TypeError", std::string(fn) + "(): must be real number, not " + py_type_name(v));
  return v.as_double();
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind) {
    case VKind::List:
    case VKind::Tuple: return v.items();
    case VKind::Dict: {
      std::vector<Value> keys;
      for (const auto& [k, x] : v.d().entries) keys.push_back(k);
      return keys;
    }
    case VKind::Str: {
      std::vector<Value> chars;
      for (char c : v.s()) chars.push_back(Value::str(std::string(1, c)));
      return chars;
    }
    default:
      raise("TypeError", std::string("'") + py_type_name(v) + "' object is not iterable");
  }
}

Value to_int(const Value& v) {
  switch (v.kind) {
    case VKind::Bool: return Value::integer(v.b);
    case VKind::Int: return v;
    case VKind::Float:
      if (std::isnan(v.f) || std::isinf(v.f)) raise("ValueError", "cannot convert float NaN or infinity to integer");
      if (std::fabs(v.f) > 9.2e18) raise("OverflowError", "integer too large");
      return Value::integer(static_cast<int64_t>(std::trunc(v.f)));
    case VKind::Str: {
      std::string s = v.s();
      while (!s.empty() && mllog::is_py_space(static_cast<unsigned char>(s.back()))) s.pop_back();
      size_t b = 0;
      while (b < s.size() && mllog::is_py_space(static_cast<unsigned char>(s[b]))) ++b;
      s = s.substr(b);
      std::string digits;
      for (size_t k = 0; k < s.size(); ++k) {
        char c = s[k];
        if (c == '_' && k > 0 && k + 1 < s.size()) continue;
        if (!(std::isdigit(static_cast<unsigned char>(c)) || (k == 0 && (c == '-' || c == '+'))))
          raise("ValueError", "invalid literal for int() with base 10: " + py_repr(v));
        digits += c;
      }
      if (digits.empty() || digits == "-" || digits == "+") raise("ValueError", "invalid literal for int() with base 10: " + py_repr(v));
      errno = 0;
      long long n = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno) raise("OverflowError", "integer too large");
      return Value::integer(n);
    }
    default:
      raise("TypeError", std::string("int() argument must be a string or a number, not '") + py_type_name(v) + "'");
  }
}

Value to_float(const Value& v) {
  if (v.is_num()) return Value::number(v.as_double());
  if (v.kind == VKind::Str) {
    double d = 0;
    if (!mllog::py_float_from_string(v.s(), &d)) raise("ValueError", "could not convert string to float: " + py_repr(v));
    return Value::number(d);
  }
  raise("TypeError", std::string("float() argument must be a string or a real number, not '") + py_type_name(v) + "'");
}

// Python's round(x) / round(x, n): banker's rounding for n omitted.
Value py_round(const std::vector<Value>& a) {
  want_args(a, 1, 2, "round");
  const Value& x = a[0];
  if (!x.is_num()) raise("TypeError", std::string("type ") + py_type_name(x) + " doesn't define __round__ method");
  if (a.size() == 1 || a[1].kind == VKind::None) {
    if (x.kind != VKind::Float) return Value::integer(x.kind == VKind::Int ? x.i : x.b);
    if (std::isnan(x.f) || std::isinf(x.f)) raise("ValueError", "cannot convert float NaN or infinity to integer");
    double r = std::nearbyint(x.f);
    if (std::fabs(r) > 9.2e18) raise("OverflowError", "integer too large");
    return Value::integer(static_cast<int64_t>(r));
  }
  int64_t n = as_index(a[1]);
  if (x.kind != VKind::Float) return x;
  // Correctly rounded decimal rounding, as CPython does, via printf.
  if (n > 300 || std::isnan(x.f) || std::isinf(x.f)) return x;
  char buf[512];
  if (n >= 0) {
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(n), x.f);
    return Value::number(std::strtod(buf, nullptr));
  }
  double p = std::pow(10.0, static_cast<double>(-n));
  return Value::number(std::nearbyint(x.f / p) * p);
}

Value min_max(std::vector<Value>& a, bool is_min) {
  std::vector<Value> items = a.size() == 1 ? iterate(a[0]) : a;
  if (items.empty()) raise("ValueError", std::string(is_min ? "min" : "max") + "() arg is an empty sequence");
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    int c = cmp_values(items[i], best, is_min ? "<" : ">");
    if (c == 2) continue;
    if (is_min ? c < 0 : c > 0) best = items[i];
  }
  return best;
}

// A decimal number in a format string, as CPython's get_integer reads it:
// above PY_SSIZE_T_MAX it is "Too many decimal digits in format string".
int64_t format_number(const std::string& digits) {
  int64_t n = 0;
  for (char c : digits) {
    int d = c - '0';
    if (n > (INT64_MAX - d) / 10) raise("ValueError", "Too many decimal digits in format string");
    n = n * 10 + d;
  }
  return n;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One replacement field's format spec, for the subset rule files use:
// [sign][#][0][width][.precision][type] with type f F e E g G d or none.
// Anything else raises ValueError, as an unsupported spec must not pass.
std::string format_value(const Value& v, const std::string& spec) {
  if (spec.empty()) return py_str(v);
  size_t i = 0;
  std::string flags;
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) flags += spec[i++];
  if (i < spec.size() && spec[i] == '#') flags += spec[i++];
  if (i < spec.size() && spec[i] == '0') flags += spec[i++];
  std::string width, precision;
  while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') width += spec[i++];
  bool has_precision = false;
  if (i < spec.size() && spec[i] == '.') {
    has_precision = true;
    ++i;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') precision += spec[i++];
    if (precision.empty()) raise("ValueError", "Format specifier missing precision");
  }
  // Python reads the numbers before it looks at the rest of the spec.
  int64_t w = width.empty() ? -1 : format_number(width);
  int64_t p = precision.empty() ? -1 : format_number(precision);
  std::string type = spec.substr(i);
  static const std::string kTypes = "fFeEgGd";
  if (type.size() != 1 || kTypes.find(type[0]) == std::string::npos)
    raise("ValueError", "format spec '" + spec + "' is not supported");
  constexpr int64_t kMaxField = 4096;
  if (w > kMaxField || p > kMaxField)
    raise("ValueError", "format width or precision above " + std::to_string(kMaxField) + " is not supported: '" + spec + "'");
  std::string cfmt = "%" + flags + width + (has_precision ? "." + precision : std::string());
  std::string out;
  if (type[0] == 'd') {
    if (v.kind != VKind::Int && v.kind != VKind::Bool)
      raise("ValueError", std::string("Unknown format code 'd' for object of type '") + py_type_name(v) + "'");
    if (has_precision) raise("ValueError", "Precision not allowed in integer format specifier");
    if (flags.find('#') != std::string::npos) raise("ValueError", "Alternate form (#) not allowed with integer format specifier 'd'");
    cfmt += "lld";
    long long x = v.kind == VKind::Int ? static_cast<long long>(v.i) : static_cast<long long>(v.b);
    int n = std::snprintf(nullptr, 0, cfmt.c_str(), x);
    out.resize(static_cast<size_t>(n) + 1);
    std::snprintf(out.data(), out.size(), cfmt.c_str(), x);
  } else {
    if (!v.is_num())
      raise("ValueError", std::string("Unknown format code '") + type + "' for object of type '" + py_type_name(v) + "'");
    cfmt += type;
    double x = v.as_double();
    if (std::isnan(x)) x = std::fabs(x);  // Python prints "nan", never "-nan"
    int n = std::snprintf(nullptr, 0, cfmt.c_str(), x);
    out.resize(static_cast<size_t>(n) + 1);
    std::snprintf(out.data(), out.size(), cfmt.c_str(), x);
  }
  out.pop_back();
  return out;
}

// str.format with positional fields: {} {0} {0:spec} {0!r} {0!s}, {{ and }}.
std::string format_str(const std::string& fmt, const std::vector<Value>& args) {
  std::string out;
  size_t auto_idx = 0;
  enum { kNone, kAuto, kManual } numbering = kNone;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '{') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
      size_t close = fmt.find('}', i);
      if (close == std::string::npos) raise("ValueError", "Single '{' encountered in format string");
      std::string field = fmt.substr(i + 1, close - i - 1);
      std::string spec;
      size_t colon = field.find(':');
      if (colon != std::string::npos) {
        spec = field.substr(colon + 1);
        field = field.substr(0, colon);
      }
      char conversion = 0;
      size_t bang = field.find('!');
      if (bang != std::string::npos) {
        std::string conv = field.substr(bang + 1);
        field = field.substr(0, bang);
        if (conv.size() != 1) raise("ValueError", "expected ':' after conversion specifier");
        if (conv[0] != 'r' && conv[0] != 's') raise("ValueError", "Unknown conversion specifier " + conv);
        conversion = conv[0];
      }
      size_t idx = 0;
      if (field.empty()) {
        if (numbering == kManual)
          raise("ValueError", "cannot switch from manual field specification to automatic field numbering");
        numbering = kAuto;
        idx = auto_idx++;
      } else if (all_digits(field)) {
        int64_t n = format_number(field);
        if (numbering == kAuto)
          raise("ValueError", "cannot switch from automatic field numbering to manual field specification");
        numbering = kManual;
        idx = static_cast<size_t>(n);
        if (idx >= args.size())
          raise("IndexError", "Replacement index " + std::to_string(n) + " out of range for positional args tuple");
      } else {
        raise("KeyError", "'" + field + "'");
      }
      if (idx >= args.size())
        raise("IndexError", "Replacement index " + std::to_string(idx) + " out of range for positional args tuple");
      const Value& v = args[idx];
      if (conversion == 'r') out += format_value(Value::str(py_repr(v)), spec);
      else if (conversion == 's') out += format_value(Value::str(py_str(v)), spec);
      else out += format_value(v, spec);
      i = close;
      continue;
    }
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
      raise("ValueError", "Single '}' encountered in format string");
    }
    out += c;
  }
  return out;
}

Value call_method(const MethodObj& m, std::vector<Value>& a) {
  const Value& self = m.self;
  switch (m.id) {
    case MethodId::DictUpdate: {
      want_args(a, 1, 1, "update");
      if (a[0].kind != VKind::Dict) raise("TypeError", "update() argument must be a dict");
      auto entries = a[0].d().entries;  // copy: a dict may update itself
      for (auto& [k, v] : entries) self.d().set(k, v);
      return Value();
    }
    case MethodId::DictGet: {
      want_args(a, 1, 2, "get");
      Value* p = self.d().find(a[0]);
      return p ? *p : (a.size() > 1 ? a[1] : Value());
    }
    case MethodId::DictValues: {
      std::vector<Value> v;
      for (auto& [k, x] : self.d().entries) v.push_back(x);
      return Value::list(std::move(v));
    }
    case MethodId::DictKeys: {
      std::vector<Value> v;
      for (auto& [k, x] : self.d().entries) v.push_back(k);
      return Value::list(std::move(v));
    }
    case MethodId::DictItems: {
      std::vector<Value> v;
      for (auto& [k, x] : self.d().entries) v.push_back(Value::tuple({k, x}));
      return Value::list(std::move(v));
    }
    case MethodId::DictPop: {
      want_args(a, 1, 2, "pop");
      auto& e = self.d().entries;
      for (size_t i = 0; i < e.size(); ++i)
        if (py_eq(e[i].first, a[0])) {
          Value v = e[i].second;
          e.erase(e.begin() + static_cast<long>(i));
          return v;
        }
      if (a.size() > 1) return a[1];
      raise("KeyError", py_repr(a[0]));
    }
    case MethodId::DictSetDefault: {
      want_args(a, 1, 2, "setdefault");
      if (Value* p = self.d().find(a[0])) return *p;
      Value v = a.size() > 1 ? a[1] : Value();
      self.d().set(a[0], v);
      return v;
    }
    case MethodId::ListAppend:
      want_args(a, 1, 1, "append");
      self.items().push_back(a[0]);
      return Value();
    case MethodId::ListExtend: {
      want_args(a, 1, 1, "extend");
      std::vector<Value> add = iterate(a[0]);
      self.items().insert(self.items().end(), add.begin(), add.end());
      return Value();
    }
    case MethodId::ListCount: {
      want_args(a, 1, 1, "count");
      int64_t n = 0;
      for (const auto& x : self.items()) n += py_eq(x, a[0]);
      return Value::integer(n);
    }
    case MethodId::ListIndex: {
      want_args(a, 1, 1, "index");
      for (size_t i = 0; i < self.items().size(); ++i)
        if (py_eq(self.items()[i], a[0])) return Value::integer(static_cast<int64_t>(i));
      raise("ValueError", py_repr(a[0]) + " is not in list");
    }
    case MethodId::ListPop: {
      want_args(a, 0, 1, "pop");
      auto& items = self.items();
      if (items.empty()) raise("IndexError", "pop from empty list");
      int64_t i = a.empty() ? static_cast<int64_t>(items.size()) - 1 : norm_index(as_index(a[0]), items.size());
      if (i < 0 || i >= static_cast<int64_t>(items.size())) raise("IndexError", "pop index out of range");
      Value v = items[static_cast<size_t>(i)];
      items.erase(items.begin() + i);
      return v;
    }
    case MethodId::ListInsert: {
      want_args(a, 2, 2, "insert");
      auto& items = self.items();
      int64_t i = std::clamp<int64_t>(norm_index(as_index(a[0]), items.size()), 0, static_cast<int64_t>(items.size()));
      items.insert(items.begin() + i, a[1]);
      return Value();
    }
    case MethodId::StrReplace: {
      want_args(a, 2, 2, "replace");
      if (a[0].kind != VKind::Str || a[1].kind != VKind::Str) raise("TypeError", "replace() arguments must be str");
      const std::string& from = a[0].s();
      const std::string& to = a[1].s();
      std::string s = self.s(), out;
      if (from.empty()) return Value::str(s);
      size_t pos = 0;
      while (true) {
        size_t f = s.find(from, pos);
        if (f == std::string::npos) break;
        out += s.substr(pos, f - pos) + to;
        if (out.size() > kMaxStr) raise("MemoryError", "string too large");
        pos = f + from.size();
      }
      out += s.substr(pos);
      return Value::str(out);
    }
    case MethodId::StrLower:
    case MethodId::StrUpper: {
      std::string s = self.s();
      for (auto& c : s) c = static_cast<char>(m.id == MethodId::StrLower ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
      return Value::str(s);
    }
    case MethodId::StrFormat: return Value::str(format_str(self.s(), a));
    case MethodId::StrStartsWith:
    case MethodId::StrEndsWith: {
      want_args(a, 1, 1, "startswith");
      if (a[0].kind != VKind::Str) raise("TypeError", "startswith arg must be str");
      const std::string& s = self.s();
      const std::string& p = a[0].s();
      if (p.size() > s.size()) return Value::boolean(false);
      return Value::boolean(m.id == MethodId::StrStartsWith ? s.compare(0, p.size(), p) == 0
                                                            : s.compare(s.size() - p.size(), p.size(), p) == 0);
    }
    case MethodId::StrStrip: {
      std::string s = self.s();
      size_t b = 0, e = s.size();
      while (b < e && mllog::is_py_space(static_cast<unsigned char>(s[b]))) ++b;
      while (e > b && mllog::is_py_space(static_cast<unsigned char>(s[e - 1]))) --e;
      return Value::str(s.substr(b, e - b));
    }
    case MethodId::StrSplit: {
      want_args(a, 0, 1, "split");
      const std::string& s = self.s();
      std::vector<Value> parts;
      if (a.empty() || a[0].kind == VKind::None) {
        size_t i = 0;
        while (i < s.size()) {
          while (i < s.size() && mllog::is_py_space(static_cast<unsigned char>(s[i]))) ++i;
          size_t j = i;
          while (j < s.size() && !mllog::is_py_space(static_cast<unsigned char>(s[j]))) ++j;
          if (j > i) parts.push_back(Value::str(s.substr(i, j - i)));
          i = j;
        }
      } else {
        if (a[0].kind != VKind::Str || a[0].s().empty()) raise("ValueError", "empty separator");
        const std::string& sep = a[0].s();
        size_t pos = 0;
        while (true) {
          size_t f = s.find(sep, pos);
          if (f == std::string::npos) break;
          parts.push_back(Value::str(s.substr(pos, f - pos)));
          pos = f + sep.size();
        }
        parts.push_back(Value::str(s.substr(pos)));
      }
      return Value::list(std::move(parts));
    }
    case MethodId::StrJoin: {
      want_args(a, 1, 1, "join");
      std::string out;
      bool first = true;
      for (const auto& x : iterate(a[0])) {
        if (x.kind != VKind::Str) raise("TypeError", "sequence item: expected str instance");
        if (!first) out += self.s();
        first = false;
        out += x.s();
        if (out.size() > kMaxStr) raise("MemoryError", "string too large");
      }
      return Value::str(std::move(out));
    }
    case MethodId::FloatIsInteger:
      return Value::boolean(std::isfinite(self.f) && self.f == std::floor(self.f));
  }
  raise("TypeError", "unsupported method");
}

Value call_value(const Value& fn, std::vector<Value>& a, Frame& f) {
  if (fn.kind == VKind::Method) return call_method(*static_cast<MethodObj*>(fn.h.get()), a);
  if (fn.kind != VKind::Builtin && fn.kind != VKind::Type)
    raise("TypeError", std::string("'") + py_type_name(fn) + "' object is not callable");
  switch (fn.fn) {
    case Builtin::Len: {
      want_args(a, 1, 1, "len");
      const Value& x = a[0];
      if (x.kind == VKind::Str) return Value::integer(static_cast<int64_t>(x.s().size()));
      if (x.kind == VKind::List || x.kind == VKind::Tuple) return Value::integer(static_cast<int64_t>(x.items().size()));
      if (x.kind == VKind::Dict) return Value::integer(static_cast<int64_t>(x.d().entries.size()));
      raise("TypeError", std::string("object of type '") + py_type_name(x) + "' has no len()");
    }
    case Builtin::Min: if (a.empty()) raise("TypeError", "min expected at least 1 argument"); return min_max(a, true);
    case Builtin::Max: if (a.empty()) raise("TypeError", "max expected at least 1 argument"); return min_max(a, false);
    case Builtin::Abs: {
      want_args(a, 1, 1, "abs");
      const Value& x = a[0];
      if (x.kind == VKind::Float) return Value::number(std::fabs(x.f));
      if (x.kind == VKind::Int) return Value::integer(x.i < 0 ? checked(-static_cast<__int128>(x.i)) : x.i);
      if (x.kind == VKind::Bool) return Value::integer(x.b);
      raise("TypeError", std::string("bad operand type for abs(): '") + py_type_name(x) + "'");
    }
    case Builtin::Sorted: {
      want_args(a, 1, 1, "sorted");
      std::vector<Value> items = iterate(a[0]);
      std::stable_sort(items.begin(), items.end(), [](const Value& x, const Value& y) {
        int c = cmp_values(x, y, "<");
        return c == -1;
      });
      return Value::list(std::move(items));
    }
    case Builtin::IsInstance: want_args(a, 2, 2, "isinstance"); return Value::boolean(isinstance_of(a[0], a[1]));
    case Builtin::Print: return Value();
    case Builtin::Round: return py_round(a);
    case Builtin::Sum: {
      want_args(a, 1, 2, "sum");
      Value acc = a.size() > 1 ? a[1] : Value::integer(0);
      for (const auto& x : iterate(a[0])) acc = binop("+", acc, x);
      return acc;
    }
    case Builtin::Any:
    case Builtin::All: {
      want_args(a, 1, 1, "any");
      bool any = fn.fn == Builtin::Any;
      for (const auto& x : iterate(a[0]))
        if (py_truthy(x) == any) return Value::boolean(any);
      return Value::boolean(!any);
    }
    case Builtin::Range: {
      want_args(a, 1, 3, "range");
      int64_t lo = 0, hi, step = 1;
      if (a.size() == 1) hi = as_index(a[0]);
      else { lo = as_index(a[0]); hi = as_index(a[1]); if (a.size() == 3) step = as_index(a[2]); }
      if (step == 0) raise("ValueError", "range() arg 3 must not be zero");
      // The length first: a huge range fails at once instead of after
      // building ten million values. Building it counts as loop steps.
      __int128 span = step > 0 ? static_cast<__int128>(hi) - lo : static_cast<__int128>(lo) - hi;
      __int128 n = span <= 0 ? 0 : (span + (step > 0 ? step : -static_cast<__int128>(step)) - 1) /
                                       (step > 0 ? step : -static_cast<__int128>(step));
      if (n > 10'000'000) raise("MemoryError", "range too large");
      f.steps += static_cast<int>(n);
      if (f.steps > kMaxSteps) raise("RuntimeError", "loop ran too long");
      std::vector<Value> v;
      v.reserve(static_cast<size_t>(n));
      for (__int128 i = lo; step > 0 ? i < hi : i > hi; i += step) v.push_back(Value::integer(static_cast<int64_t>(i)));
      return Value::list(std::move(v));
    }
    case Builtin::IsInteger: want_args(a, 1, 1, "is_integer"); return Value::boolean(py_is_integer(a[0]));
    case Builtin::EnqueueConfig:
      want_args(a, 1, 1, "enqueue_config");
      if (a[0].kind != VKind::Str) raise("TypeError", "enqueue_config() expects a path string");
      f.host->enqueue_config(a[0].s());
      return Value();
    case Builtin::Replace: {
      want_args(a, 1, 1, "replace");
      if (a[0].kind != VKind::Line) raise("TypeError", "replace() should be called on dataclass instances");
      const LineObj& src = a[0].line();
      if (!src.value_loaded) f.host->load_line_value(src);
      auto copy = std::make_shared<LineObj>(src);
      Value v;
      v.kind = VKind::Line;
      v.h = std::move(copy);
      return v;
    }
    case Builtin::MathCeil: {
      want_args(a, 1, 1, "ceil");
      double x = num_arg(a[0], "ceil");
      if (a[0].kind != VKind::Float) return Value::integer(a[0].kind == VKind::Int ? a[0].i : a[0].b);
      return to_int(Value::number(std::ceil(x)));
    }
    case Builtin::MathFloor: {
      want_args(a, 1, 1, "floor");
      double x = num_arg(a[0], "floor");
      if (a[0].kind != VKind::Float) return Value::integer(a[0].kind == VKind::Int ? a[0].i : a[0].b);
      return to_int(Value::number(std::floor(x)));
    }
    case Builtin::MathLog: {
      want_args(a, 1, 2, "log");
      double x = num_arg(a[0], "log");
      if (x <= 0) raise("ValueError", "math domain error");
      double r = std::log(x);
      if (a.size() == 2) {
        double b = num_arg(a[1], "log");
        if (b <= 0 || b == 1) raise("ValueError", "math domain error");
        r /= std::log(b);
      }
      return Value::number(r);
    }
    case Builtin::MathLog2:
    case Builtin::MathLog10:
    case Builtin::MathSqrt:
    case Builtin::MathExp:
    case Builtin::MathFabs: {
      want_args(a, 1, 1, "math");
      double x = num_arg(a[0], "math");
      switch (fn.fn) {
        case Builtin::MathLog2: if (x <= 0) raise("ValueError", "math domain error"); return Value::number(std::log2(x));
        case Builtin::MathLog10: if (x <= 0) raise("ValueError", "math domain error"); return Value::number(std::log10(x));
        case Builtin::MathSqrt: if (x < 0) raise("ValueError", "math domain error"); return Value::number(std::sqrt(x));
        case Builtin::MathExp: return Value::number(std::exp(x));
        default: return Value::number(std::fabs(x));
      }
    }
    case Builtin::MathPow: want_args(a, 2, 2, "pow"); return Value::number(std::pow(num_arg(a[0], "pow"), num_arg(a[1], "pow")));
    case Builtin::MathIsNan: want_args(a, 1, 1, "isnan"); return Value::boolean(std::isnan(num_arg(a[0], "isnan")));
    case Builtin::MathIsInf: want_args(a, 1, 1, "isinf"); return Value::boolean(std::isinf(num_arg(a[0], "isinf")));
    case Builtin::MathIsClose: {
      want_args(a, 2, 2, "isclose");
      double x = num_arg(a[0], "isclose"), y = num_arg(a[1], "isclose");
      return Value::boolean(x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)));
    }
    case Builtin::TBool: want_args(a, 0, 1, "bool"); return Value::boolean(!a.empty() && py_truthy(a[0]));
    case Builtin::TInt: want_args(a, 0, 1, "int"); return a.empty() ? Value::integer(0) : to_int(a[0]);
    case Builtin::TFloat: want_args(a, 0, 1, "float"); return a.empty() ? Value::number(0) : to_float(a[0]);
    case Builtin::TStr: want_args(a, 0, 1, "str"); return Value::str(a.empty() ? "" : py_str(a[0]));
    case Builtin::TList: want_args(a, 0, 1, "list"); return Value::list(a.empty() ? std::vector<Value>{} : iterate(a[0]));
    case Builtin::TTuple: want_args(a, 0, 1, "tuple"); return Value::tuple(a.empty() ? std::vector<Value>{} : iterate(a[0]));
    case Builtin::TDict: {
      want_args(a, 0, 1, "dict");
      Value d = Value::dict();
      if (!a.empty()) {
        if (a[0].kind != VKind::Dict) raise("TypeError", "dict() argument must be a dict");
        d.d().entries = a[0].d().entries;
      }
      return d;
    }
    case Builtin::TType: want_args(a, 1, 1, "type"); return type_of(a[0]);
    case Builtin::TNone: raise("TypeError", "cannot create 'NoneType' instances");
  }
  raise("TypeError", "not callable");
}

}  // namespace

// ------------------------------------------------------------------- Code

Code::Code() = default;
Code::~Code() = default;
Code::Code(Code&&) noexcept = default;
Code& Code::operator=(Code&&) noexcept = default;

bool Code::compile_expression(std::string_view src, CompileError* err) {
  source_ = std::string(src);
  is_expr_ = true;
  Lexer lx{src, {}, err};
  // An expression is one logical line; new lines inside brackets are fine.
  if (!lx.run()) return false;
  // Drop layout tokens: the consortium's eval() sees a stripped string.
  std::vector<Token> toks;
  for (auto& t : lx.out)
    if (t.kind != Tok::Indent && t.kind != Tok::Dedent) toks.push_back(std::move(t));
  Parser p(std::move(toks), err);
  root_ = p.parse_expression_only();
  return root_ != nullptr;
}

bool Code::compile_statements(std::string_view src, CompileError* err) {
  source_ = std::string(src);
  is_expr_ = false;
  Lexer lx{src, {}, err};
  if (!lx.run()) return false;
  Parser p(std::move(lx.out), err);
  root_ = p.parse_module();
  return root_ != nullptr;
}

Value Code::eval(Frame& f) const {
  g_flow = Flow::Normal;
  return root_->eval(f);
}

void Code::exec(Frame& f) const {
  g_flow = Flow::Normal;
  root_->exec(f);
  g_flow = Flow::Normal;
}

// ------------------------------------------------------------- from JSON

namespace {

Value from_json_tree(const mllog::Json& j) {
  using K = mllog::Json::Kind;
  switch (j.kind) {
    case K::Null: return Value();
    case K::Bool: return Value::boolean(j.b);
    case K::Int: return Value::integer(j.i);
    case K::Float: return Value::number(j.f);
    case K::String: return Value::str(j.s);
    case K::Array: {
      std::vector<Value> items;
      items.reserve(j.items.size());
      for (const auto& x : j.items) items.push_back(from_json_tree(x));
      return Value::list(std::move(items));
    }
    case K::Object: {
      Value d = Value::dict();
      for (const auto& [k, v] : j.fields) d.d().set(Value::str(k), from_json_tree(v));
      return d;
    }
  }
  return Value();
}

// Object names repeat on every line ("file", "lineno", "epoch_num"): share one
// string per name and thread instead of allocating it again.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct NameEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

Value object_key(std::string_view name) {
  thread_local std::unordered_map<std::string, Value, NameHash, NameEq> cache;
  if (name.size() > 40) return Value::str(std::string(name));
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  Value v = Value::str(std::string(name));
  cache.emplace(std::string(name), v);
  return v;
}

Value from_simdjson(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::NULL_VALUE: return Value();
    case T::BOOL: return Value::boolean(e.get_bool().value_unsafe());
    case T::INT64: return Value::integer(e.get_int64().value_unsafe());
    case T::UINT64: {
      uint64_t u = e.get_uint64().value_unsafe();
      return Value::number(static_cast<double>(u));
    }
    case T::DOUBLE: return Value::number(e.get_double().value_unsafe());
    case T::STRING: return Value::str(std::string(e.get_string().value_unsafe()));
    case T::ARRAY: {
      std::vector<Value> items;
      simdjson::dom::array arr;
      if (e.get_array().get(arr)) return Value();
      for (auto x : arr) items.push_back(from_simdjson(x));
      return Value::list(std::move(items));
    }
    case T::OBJECT: {
      Value d = Value::dict();
      simdjson::dom::object obj;
      if (e.get_object().get(obj)) return d;
      auto& entries = d.d().entries;
      entries.reserve(obj.size());
      for (auto field : obj) {
        Value k = object_key(field.key);
        Value v = from_simdjson(field.value);
        // A repeated name keeps the last value, as Python's json does.
        if (Value* old = d.d().find_str(field.key)) *old = std::move(v);
        else entries.emplace_back(std::move(k), std::move(v));
      }
      return d;
    }
  }
  return Value();
}

}  // namespace

Value line_value_from_json(std::string_view json) {
  thread_local simdjson::dom::parser parser;
  thread_local std::string scratch;
  thread_local Value k_value = Value::str("value");
  thread_local Value k_metadata = Value::str("metadata");
  scratch.assign(json.data(), json.size());
  scratch.append(simdjson::SIMDJSON_PADDING, '\0');
  Value out = Value::dict();
  simdjson::dom::element doc;
  simdjson::dom::object obj;
  if (!parser.parse(scratch.data(), json.size(), false).get(doc) && !doc.get_object().get(obj)) {
    Value value, meta;
    for (auto field : obj) {  // the last of repeated names wins
      if (field.key == "value") value = from_simdjson(field.value);
      else if (field.key == "metadata") meta = from_simdjson(field.value);
    }
    out.d().entries.reserve(2);
    out.d().entries.emplace_back(k_value, std::move(value));
    out.d().entries.emplace_back(k_metadata, std::move(meta));
    return out;
  }
  bool ok = false;
  std::string err;
  Value whole = value_from_json(json, &ok, &err);
  Value* val = ok && whole.kind == VKind::Dict ? whole.d().find_str("value") : nullptr;
  Value* meta = ok && whole.kind == VKind::Dict ? whole.d().find_str("metadata") : nullptr;
  out.d().entries.emplace_back(k_value, val ? *val : Value());
  out.d().entries.emplace_back(k_metadata, meta ? *meta : Value());
  return out;
}

Value value_from_json(std::string_view json, bool* ok, std::string* error) {
  thread_local simdjson::dom::parser parser;
  thread_local std::string scratch;
  scratch.assign(json.data(), json.size());
  scratch.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element doc;
  if (!parser.parse(scratch.data(), json.size(), false).get(doc)) {
    *ok = true;
    return from_simdjson(doc);
  }
  mllog::Json tree;
  if (!mllog::parse_json_permissive(json, &tree, error)) {
    *ok = false;
    return Value();
  }
  *ok = true;
  return from_json_tree(tree);
}

}  // namespace referee::rules
