#include "rules/interp_parser.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "rules/interp_lexer.h"
#include "rules/interp_runtime.h"

namespace referee::rules::interp {

namespace {

using namespace ast;

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
        n->v = get_attr(Value::module(), attr_named(what), what);
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
        binary_op_named(std::string_view(a, std::strlen(a) - 1), &n->op);
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
      if (l->is_set) return false;
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
    return tuple_rest(t, std::move(first), [this] {
      return peek().kind == Tok::Newline || peek().kind == Tok::End || is_op("=") || is_op(")");
    });
  }

  // The tuple `first, ...` at a ',' after its first item; `stop` says which
  // token after a ',' ends it.
  template <class Stop>
  NodeP tuple_rest(const Token& t, NodeP first, Stop stop) {
    auto tup = mk<ListDisplay>(t);
    tup->is_tuple = true;
    tup->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (stop()) break;
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
    n->op = is_and ? BoolOpKind::And : BoolOpKind::Or;
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
      n->op = UnaryOp::Not;
      n->a = not_test();
      if (!n->a) return nullptr;
      return n;
    }
    return comparison();
  }

  bool comp_op(CompareOp* op) {
    static const std::pair<const char*, CompareOp> ops[] = {
        {"<", CompareOp::Lt}, {">", CompareOp::Gt}, {"==", CompareOp::Eq},
        {">=", CompareOp::Ge}, {"<=", CompareOp::Le}, {"!=", CompareOp::Ne}};
    for (const auto& [text, o] : ops)
      if (is_op(text)) { *op = o; ++pos_; return true; }
    if (is_name("in")) { *op = CompareOp::In; ++pos_; return true; }
    if (is_name("not") && is_name("in", 1)) { *op = CompareOp::NotIn; pos_ += 2; return true; }
    if (is_name("is")) {
      ++pos_;
      if (is_name("not")) { ++pos_; *op = CompareOp::IsNot; } else { *op = CompareOp::Is; }
      return true;
    }
    return false;
  }

  NodeP comparison() {
    const Token& t = peek();
    NodeP a = bitor_expr();
    if (!a) return nullptr;
    CompareOp op;
    if (!comp_op(&op)) return a;
    auto n = mk<CompareNode>(t);
    n->first = std::move(a);
    do {
      NodeP b = bitor_expr();
      if (!b) return nullptr;
      n->rest.emplace_back(op, std::move(b));
    } while (comp_op(&op));
    const auto& [last_op, last] = n->rest.back();
    if (last_op == CompareOp::In || last_op == CompareOp::NotIn) {
      auto* name = dynamic_cast<const Name*>(last.get());
      auto* sub = dynamic_cast<const Subscript*>(last.get());
      if (name && name->id == kNameV) n->line_probe = 1;
      else if (sub && sub->v_member != LineMember::None) n->line_probe = 2;
    }
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
      binary_op_named(found, &n->op);
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
      n->op = is_op("-") ? UnaryOp::Neg : is_op("+") ? UnaryOp::Pos : UnaryOp::Invert;
      ++pos_;
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
      n->op = BinaryOp::Pow;
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
        n->attr = attr_named(n->name);
        a = std::move(n);
      } else if (accept_op("(")) {
        auto n = mk<Call>(t);
        n->fn = std::move(a);
        n->callee_attr = dynamic_cast<const Attr*>(n->fn.get());
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
          auto* name = dynamic_cast<const Name*>(n->obj.get());
          auto* key = dynamic_cast<const Const*>(n->idx.get());
          n->const_idx = key;
          if (name && name->id == kNameV && key && key->v.kind == VKind::Str) {
            if (key->v.s() == "value") n->v_member = LineMember::Value;
            else if (key->v.s() == "metadata") n->v_member = LineMember::Metadata;
          }
          auto* inner = dynamic_cast<const Subscript*>(n->obj.get());
          n->member_entry = inner && inner->v_member != LineMember::None && key && key->v.kind == VKind::Str;
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
        n->v = intern_literal(t.text);
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
        n->builtin = builtin_named(n->id);
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
            e = tuple_rest(t, std::move(e), [this] { return is_op(")"); });
            if (!e) return nullptr;
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
            if (n->items.empty() && (is_op(",") || is_op("}"))) {
              // A set display: {'a', 'b'}.
              auto set = mk<ListDisplay>(t);
              set->is_set = true;
              set->items.push_back(std::move(k));
              while (accept_op(",") && !is_op("}")) {
                NodeP e = test();
                if (!e) return nullptr;
                if (is_op(":")) return fail_here("expected ',' or '}' in a set display");
                set->items.push_back(std::move(e));
              }
              if (!accept_op("}")) return fail_here("expected '}'");
              return set;
            }
            if (!accept_op(":")) return fail_here(is_name("for") ? "dict and set comprehensions are not supported"
                                                                 : "expected ':'");
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

}  // namespace

NodeP parse(std::string_view src, bool expression, CompileError* err) {
  std::vector<Token> toks;
  if (!tokenize(src, &toks, err)) return nullptr;
  if (!expression) return Parser(std::move(toks), err).parse_module();
  // An expression is one logical line; new lines inside brackets are fine.
  // Layout tokens are dropped: the consortium's eval() sees a stripped string.
  std::erase_if(toks, [](const Token& t) { return t.kind == Tok::Indent || t.kind == Tok::Dedent; });
  return Parser(std::move(toks), err).parse_expression_only();
}

}  // namespace referee::rules::interp
