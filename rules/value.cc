#include "rules/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/digest.h"
#include "mllog/json_writer.h"
#include "rules/heap_pool.h"

namespace referee::rules {

namespace {

Value heap_value(VKind kind, std::shared_ptr<HeapObj> o) {
  Value x;
  x.kind = kind;
  x.h = std::move(o);
  return x;
}

}  // namespace

Value Value::str(std::string s) {
  auto o = std::allocate_shared<StrObj>(HeapPool<StrObj>());
  o->s = std::move(s);
  return heap_value(VKind::Str, std::move(o));
}

Value Value::list(std::vector<Value> items) {
  auto o = std::allocate_shared<ListObj>(HeapPool<ListObj>());
  o->items = std::move(items);
  return heap_value(VKind::List, std::move(o));
}

Value Value::tuple(std::vector<Value> items) {
  Value x = list(std::move(items));
  x.kind = VKind::Tuple;
  return x;
}

Value Value::set_of(std::vector<Value> items) {
  std::vector<Value> unique;
  for (auto& v : items) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || py_eq(u, v);
    if (!seen) unique.push_back(std::move(v));
  }
  Value x = list(std::move(unique));
  x.kind = VKind::Set;
  return x;
}

Value Value::dict() {
  Value x;
  x.kind = VKind::Dict;
  x.h = std::allocate_shared<DictObj>(HeapPool<DictObj>());
  return x;
}

Value* DictObj::find(const Value& key) {
  if (key.kind == VKind::Str) {
    // Keys written and read by the same literal share its string (intern_literal).
    for (auto& [k, v] : entries)
      if (k.h == key.h) return &v;
    return find_str(key.s());
  }
  for (auto& [k, v] : entries)
    if (py_eq(k, key)) return &v;
  return nullptr;
}

Value* DictObj::find_str(std::string_view key) {
  for (auto& [k, v] : entries)
    if (k.kind == VKind::Str && k.s() == key) return &v;
  return nullptr;
}

void DictObj::set(const Value& key, Value v) {
  if (Value* p = find(key)) {
    *p = std::move(v);
    return;
  }
  entries.emplace_back(key, std::move(v));
}

bool py_truthy(const Value& v) {
  switch (v.kind) {
    case VKind::None: return false;
    case VKind::Bool: return v.b;
    case VKind::Int: return v.i != 0;
    case VKind::Float: return v.f != 0.0;
    case VKind::Str: return !v.s().empty();
    case VKind::List:
    case VKind::Tuple:
    case VKind::Set: return !v.items().empty();
    case VKind::Dict: return !v.d().entries.empty();
    default: return true;
  }
}

bool py_eq(const Value& a, const Value& b) {
  if (a.is_num() && b.is_num()) {
    if (a.kind == VKind::Float || b.kind == VKind::Float) return a.as_double() == b.as_double();
    int64_t x = a.kind == VKind::Int ? a.i : a.b;
    int64_t y = b.kind == VKind::Int ? b.i : b.b;
    return x == y;
  }
  if (a.kind != b.kind) {
    bool seq = (a.kind == VKind::List || a.kind == VKind::Tuple) &&
               (b.kind == VKind::List || b.kind == VKind::Tuple);
    if (!seq) return false;
    return false;  // a list never equals a tuple in Python
  }
  if (a.h && a.h == b.h) return true;  // Python compares items by identity first
  // Cycles between distinct containers (Python raises RecursionError): a
  // depth limit, and a budget per top-level comparison so that containers
  // that hold themselves several times cannot make the work exponential.
  thread_local int depth = 0;
  thread_local long budget = 0;
  if (depth == 0) budget = 1'000'000;
  if (depth > 200 || --budget < 0) return false;
  struct Guard { Guard() { ++depth; } ~Guard() { --depth; } } guard;
  switch (a.kind) {
    case VKind::None: return true;
    case VKind::Str: return a.s() == b.s();
    case VKind::List:
    case VKind::Tuple:
    case VKind::Dict: return py_items_eq(a, b, py_eq);
    case VKind::Set: {
      // Equal sets hold the same items, in any order.
      if (a.items().size() != b.items().size()) return false;
      for (const auto& x : a.items()) {
        bool found = false;
        for (const auto& y : b.items()) found = found || py_eq(x, y);
        if (!found) return false;
      }
      return true;
    }
    case VKind::Builtin:
    case VKind::Type: return a.fn == b.fn;
    default: return a.h == b.h;
  }
}

static std::string float_repr(double d) { return mllog::py_float_repr(d); }

std::string py_repr(const Value& v) {
  // Rule code can build cycles (s['a'] = s): a container already being
  // printed prints as [...] or {...}, as in Python; the depth limit bounds
  // deep but acyclic nesting.
  thread_local int depth = 0;
  thread_local std::vector<const HeapObj*> active;
  if (depth > 64) return "...";
  bool container = v.kind == VKind::List || v.kind == VKind::Tuple || v.kind == VKind::Dict || v.kind == VKind::Set;
  if (container && std::find(active.begin(), active.end(), v.h.get()) != active.end())
    return v.kind == VKind::Dict ? "{...}" : v.kind == VKind::List ? "[...]" : "(...)";
  struct Guard {
    const HeapObj* h;
    explicit Guard(const HeapObj* p) : h(p) {
      ++depth;
      if (h) active.push_back(h);
    }
    ~Guard() {
      --depth;
      if (h) active.pop_back();
    }
  } guard(container ? v.h.get() : nullptr);
  switch (v.kind) {
    case VKind::None: return "None";
    case VKind::Bool: return v.b ? "True" : "False";
    case VKind::Int: return std::to_string(v.i);
    case VKind::Float: return float_repr(v.f);
    case VKind::Str: {
      // Python's repr: single quotes unless the text has one and no double quote.
      const std::string& t = v.s();
      char q = t.find('\'') != std::string::npos && t.find('"') == std::string::npos ? '"' : '\'';
      std::string out;
      out.reserve(t.size() + 2);
      out += q;
      size_t plain = 0;  // start of the run of characters copied as they are
      for (size_t k = 0; k < t.size(); ++k) {
        char c = t[k];
        unsigned char u = static_cast<unsigned char>(c);
        bool as_is = c != q && c != '\\' && u >= 0x20 && !(u >= 0x7f && u <= 0xa0) && u != 0xad;
        if (as_is) continue;
        out.append(t, plain, k - plain);
        plain = k + 1;
        if (c == q || c == '\\') { out += '\\'; out += c; }
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (u < 0x20 || (u >= 0x7f && u <= 0xa0) || u == 0xad) {  // not printable in latin-1
          out += "\\x";
          base::append_hex(&out, u);
        }
      }
      out.append(t, plain, t.size() - plain);
      out += q;
      return out;
    }
    case VKind::List:
    case VKind::Tuple: {
      std::string out = v.kind == VKind::List ? "[" : "(";
      bool first = true;
      for (const auto& x : v.items()) {
        if (!first) out += ", ";
        first = false;
        out += py_repr(x);
      }
      if (v.kind == VKind::Tuple && v.items().size() == 1) out += ",";
      return out + (v.kind == VKind::List ? "]" : ")");
    }
    case VKind::Set: {
      // Python prints a set's items in hash order; here in the order written.
      if (v.items().empty()) return "set()";
      std::string out = "{";
      bool first = true;
      for (const auto& x : v.items()) {
        if (!first) out += ", ";
        first = false;
        out += py_repr(x);
      }
      return out + "}";
    }
    case VKind::Dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, x] : v.d().entries) {
        if (!first) out += ", ";
        first = false;
        out += py_repr(k) + ": " + py_repr(x);
      }
      return out + "}";
    }
    case VKind::Line: return "LogLine(key=" + py_repr(v.line().key) + ")";
    case VKind::Builtin: return "<built-in function>";
    case VKind::Method: return "<bound method>";
    case VKind::Module: return "<module 'math'>";
    case VKind::Type: return "<class>";
  }
  return "?";
}

std::string py_str(const Value& v) {
  if (v.kind == VKind::Str) return v.s();
  return py_repr(v);
}

const char* py_type_name(const Value& v) {
  switch (v.kind) {
    case VKind::None: return "NoneType";
    case VKind::Bool: return "bool";
    case VKind::Int: return "int";
    case VKind::Float: return "float";
    case VKind::Str: return "str";
    case VKind::List: return "list";
    case VKind::Tuple: return "tuple";
    case VKind::Dict: return "dict";
    case VKind::Set: return "set";
    case VKind::Line: return "LogLine";
    case VKind::Builtin: return "builtin_function_or_method";
    case VKind::Method: return "method";
    case VKind::Module: return "module";
    case VKind::Type: return "type";
  }
  return "object";
}

}  // namespace referee::rules
