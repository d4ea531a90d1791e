// Python's builtins (len, min, round, int, math.*, ...) and the methods of
// dicts, lists, strings and floats that rule code may call, and the
// attributes of values.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "mllog/json.h"
#include "mllog/reader.h"
#include "rules/interp_runtime.h"

namespace referee::rules {

using interp::raise;

bool py_is_integer(const Value& v) {
  if (!v.is_num()) raise("TypeError", std::string("type ") + py_type_name(v) + " doesn't define __round__ method");
  double x = v.as_double();
  if (v.kind != VKind::Float) return true;
  if (std::isnan(x) || std::isinf(x)) raise("ValueError", "cannot convert float NaN or infinity to integer");
  return std::fabs(std::nearbyint(x) - x) < 0.00001;
}

namespace interp {

namespace {

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
void want_args(const std::vector<Value>& a, size_t lo, size_t hi, const char* fn) {
  if (a.size() < lo || a.size() > hi)
    raise("TypeError", std::string(fn) + "() takes " + std::to_string(lo) + (lo == hi ? "" : " to " + std::to_string(hi)) +
                           " arguments (" + std::to_string(a.size()) + " given)");
}

double num_arg(const Value& v, const char* fn) {
  if (!v.is_num()) raise("TypeError", std::string(fn) + "(): must be real number, not " + py_type_name(v));
  return v.as_double();
}

// s without Python's white space at either end: str.strip().
std::string py_strip(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && mllog::is_py_space(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && mllog::is_py_space(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
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
      std::string s = py_strip(v.s());
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
  std::vector<Value> iterated;
  if (a.size() == 1) iterated = iterate(a[0]);
  const std::vector<Value>& items = a.size() == 1 ? iterated : a;
  if (items.empty()) raise("ValueError", std::string(is_min ? "min" : "max") + "() arg is an empty sequence");
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    int c = cmp_values(items[i], best, is_min ? "<" : ">");
    if (c == 2) continue;
    if (is_min ? c < 0 : c > 0) best = items[i];
  }
  return best;
}

}  // namespace

const Value* builtin_named(int id) {
  for (const auto& [k, v] : builtin_table())
    if (k == id) return &v;
  return nullptr;
}

AttrId attr_named(std::string_view name) {
  static const std::pair<const char*, AttrId> names[] = {
      {"key", AttrId::Key}, {"timestamp", AttrId::Timestamp}, {"lineno", AttrId::Lineno},
      {"value", AttrId::LineValue}, {"full_string", AttrId::FullString},
      {"update", AttrId::Update}, {"get", AttrId::Get}, {"values", AttrId::Values}, {"keys", AttrId::Keys},
      {"items", AttrId::Items}, {"pop", AttrId::Pop}, {"setdefault", AttrId::SetDefault},
      {"append", AttrId::Append}, {"extend", AttrId::Extend}, {"count", AttrId::Count}, {"index", AttrId::Index},
      {"insert", AttrId::Insert}, {"replace", AttrId::Replace}, {"lower", AttrId::Lower}, {"upper", AttrId::Upper},
      {"format", AttrId::Format}, {"startswith", AttrId::StartsWith}, {"endswith", AttrId::EndsWith},
      {"strip", AttrId::Strip}, {"split", AttrId::Split}, {"join", AttrId::Join}, {"is_integer", AttrId::IsInteger},
      {"ceil", AttrId::Ceil}, {"floor", AttrId::Floor}, {"log", AttrId::Log}, {"log2", AttrId::Log2},
      {"log10", AttrId::Log10}, {"sqrt", AttrId::Sqrt}, {"exp", AttrId::Exp}, {"pow", AttrId::PowFn},
      {"fabs", AttrId::Fabs}, {"isnan", AttrId::IsNan}, {"isinf", AttrId::IsInf}, {"isclose", AttrId::IsClose},
      {"pi", AttrId::Pi}, {"e", AttrId::E}, {"inf", AttrId::Inf}, {"nan", AttrId::Nan}};
  for (const auto& [n, id] : names)
    if (name == n) return id;
  return AttrId::Other;
}

bool method_of(const Value& obj, AttrId attr, MethodId* id) {
  auto found = [id](MethodId m) {
    *id = m;
    return true;
  };
  switch (obj.kind) {
    case VKind::Dict:
      switch (attr) {
        case AttrId::Update: return found(MethodId::DictUpdate);
        case AttrId::Get: return found(MethodId::DictGet);
        case AttrId::Values: return found(MethodId::DictValues);
        case AttrId::Keys: return found(MethodId::DictKeys);
        case AttrId::Items: return found(MethodId::DictItems);
        case AttrId::Pop: return found(MethodId::DictPop);
        case AttrId::SetDefault: return found(MethodId::DictSetDefault);
        default: return false;
      }
    case VKind::List:
      switch (attr) {
        case AttrId::Append: return found(MethodId::ListAppend);
        case AttrId::Extend: return found(MethodId::ListExtend);
        case AttrId::Count: return found(MethodId::ListCount);
        case AttrId::Index: return found(MethodId::ListIndex);
        case AttrId::Pop: return found(MethodId::ListPop);
        case AttrId::Insert: return found(MethodId::ListInsert);
        default: return false;
      }
    case VKind::Str:
      switch (attr) {
        case AttrId::Replace: return found(MethodId::StrReplace);
        case AttrId::Lower: return found(MethodId::StrLower);
        case AttrId::Upper: return found(MethodId::StrUpper);
        case AttrId::Format: return found(MethodId::StrFormat);
        case AttrId::StartsWith: return found(MethodId::StrStartsWith);
        case AttrId::EndsWith: return found(MethodId::StrEndsWith);
        case AttrId::Strip: return found(MethodId::StrStrip);
        case AttrId::Split: return found(MethodId::StrSplit);
        case AttrId::Join: return found(MethodId::StrJoin);
        default: return false;
      }
    case VKind::Float:
      if (attr == AttrId::IsInteger) return found(MethodId::FloatIsInteger);
      return false;
    default:
      return false;
  }
}

Value get_attr(const Value& obj, AttrId attr, const std::string& name) {
  MethodId id;
  if (method_of(obj, attr, &id)) {
    Value m;
    m.kind = VKind::Method;
    auto o = std::make_shared<MethodObj>();
    o->self = obj;
    o->id = id;
    m.h = std::move(o);
    return m;
  }
  if (obj.kind == VKind::Line) {
    LineObj& l = obj.line();
    switch (attr) {
      case AttrId::Key: return l.key;
      case AttrId::Timestamp: return l.timestamp;
      case AttrId::Lineno: return l.lineno;
      case AttrId::LineValue:
        if (!l.value_loaded) raise("RuntimeError", "line value not loaded");
        return l.value;
      case AttrId::FullString:
        if (!l.full_loaded) {
          l.full_string = Value::str(std::string(mllog::kToken) + std::string(l.json));
          l.full_loaded = true;
        }
        return l.full_string;
      default: break;
    }
  }
  if (obj.kind == VKind::Module) {
    switch (attr) {
      case AttrId::Ceil: return Value::builtin(Builtin::MathCeil);
      case AttrId::Floor: return Value::builtin(Builtin::MathFloor);
      case AttrId::Log: return Value::builtin(Builtin::MathLog);
      case AttrId::Log2: return Value::builtin(Builtin::MathLog2);
      case AttrId::Log10: return Value::builtin(Builtin::MathLog10);
      case AttrId::Sqrt: return Value::builtin(Builtin::MathSqrt);
      case AttrId::Exp: return Value::builtin(Builtin::MathExp);
      case AttrId::PowFn: return Value::builtin(Builtin::MathPow);
      case AttrId::Fabs: return Value::builtin(Builtin::MathFabs);
      case AttrId::IsNan: return Value::builtin(Builtin::MathIsNan);
      case AttrId::IsInf: return Value::builtin(Builtin::MathIsInf);
      case AttrId::IsClose: return Value::builtin(Builtin::MathIsClose);
      case AttrId::Pi: return Value::number(M_PI);
      case AttrId::E: return Value::number(M_E);
      case AttrId::Inf: return Value::number(std::numeric_limits<double>::infinity());
      case AttrId::Nan: return Value::number(std::numeric_limits<double>::quiet_NaN());
      default: raise("AttributeError", "module 'math' has no attribute '" + name + "'");
    }
  }
  raise("AttributeError", std::string("'") + py_type_name(obj) + "' object has no attribute '" + name + "'");
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind) {
    case VKind::List:
    case VKind::Tuple:
    case VKind::Set: return v.items();
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

Value call_method(const Value& self, MethodId id, std::vector<Value>& a) {
  switch (id) {
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
    case MethodId::DictValues:
    case MethodId::DictKeys:
    case MethodId::DictItems: {
      std::vector<Value> v;
      for (auto& [k, x] : self.d().entries)
        v.push_back(id == MethodId::DictKeys ? k : id == MethodId::DictValues ? x : Value::tuple({k, x}));
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
      size_t i = a.empty() ? items.size() - 1 : index_within(a[0], items.size(), "pop index out of range");
      Value v = items[i];
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
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
      for (auto& c : s) c = static_cast<char>(id == MethodId::StrLower ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
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
      return Value::boolean(id == MethodId::StrStartsWith ? s.compare(0, p.size(), p) == 0
                                                            : s.compare(s.size() - p.size(), p.size(), p) == 0);
    }
    case MethodId::StrStrip: return Value::str(py_strip(self.s()));
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
  if (fn.kind == VKind::Method) {
    const auto& m = *static_cast<MethodObj*>(fn.h.get());
    return call_method(m.self, m.id, a);
  }
  if (fn.kind != VKind::Builtin && fn.kind != VKind::Type)
    raise("TypeError", std::string("'") + py_type_name(fn) + "' object is not callable");
  switch (fn.fn) {
    case Builtin::Len: {
      want_args(a, 1, 1, "len");
      const Value& x = a[0];
      if (x.kind == VKind::Str) return Value::integer(static_cast<int64_t>(x.s().size()));
      if (x.kind == VKind::List || x.kind == VKind::Tuple || x.kind == VKind::Set)
        return Value::integer(static_cast<int64_t>(x.items().size()));
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
      for (const auto& x : iterate(a[0])) acc = binop(BinaryOp::Add, acc, x);
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
      // A copy views the text the original does, which tells which line it
      // was made from; where that text goes before the code's state does (a
      // live check's chunk), the copy keeps its own.
      if (!f.host->line_text_lasts() || !src.text.empty()) {
        copy->text.assign(src.json);
        copy->json = copy->text;
      }
      Value v;
      v.kind = VKind::Line;
      v.h = std::move(copy);
      return v;
    }
    case Builtin::MathCeil:
    case Builtin::MathFloor: {
      bool ceil = fn.fn == Builtin::MathCeil;
      const char* name = ceil ? "ceil" : "floor";
      want_args(a, 1, 1, name);
      double x = num_arg(a[0], name);
      if (a[0].kind != VKind::Float) return Value::integer(a[0].kind == VKind::Int ? a[0].i : a[0].b);
      return to_int(Value::number(ceil ? std::ceil(x) : std::floor(x)));
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

}  // namespace interp

bool python_int(const Value& v, int64_t* out, PyError* error) {
  try {
    *out = interp::to_int(v).i;
    return true;
  } catch (const PyError& e) {
    *error = e;
    return false;
  }
}

}  // namespace referee::rules
