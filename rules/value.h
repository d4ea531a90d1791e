// Values of the Python subset that rule files are written in.
//
// Strings are byte strings: log files are read as latin-1, in which every
// byte is one character, so comparisons and len() agree with Python.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace referee::rules {

enum class VKind : uint8_t {
  None, Bool, Int, Float, Str, List, Tuple, Dict, Line, Builtin, Method, Module, Type,
  Set,  // a set display ({'a', 'b'}): items kept unique in the order written
};

// Builtin functions and types callable from rule code.
enum class Builtin : uint8_t {
  Len, Min, Max, Abs, Sorted, IsInstance, Print, Round, Sum, Any, All, Range,
  IsInteger, EnqueueConfig, Replace,
  // math
  MathCeil, MathFloor, MathLog, MathLog2, MathLog10, MathSqrt, MathExp, MathPow, MathFabs,
  MathIsNan, MathIsInf, MathIsClose,
  // types (callable)
  TBool, TInt, TFloat, TStr, TList, TDict, TTuple, TNone, TType,
};

enum class MethodId : uint8_t {
  DictUpdate, DictGet, DictValues, DictKeys, DictItems, DictPop, DictSetDefault,
  ListAppend, ListExtend, ListCount, ListIndex, ListPop, ListInsert,
  StrReplace, StrLower, StrUpper, StrFormat, StrStartsWith, StrEndsWith, StrStrip, StrSplit,
  StrJoin, FloatIsInteger,
};

struct HeapObj {
  virtual ~HeapObj() = default;
};

struct Value {
  VKind kind = VKind::None;
  union {
    bool b;
    int64_t i;
    double f;
    Builtin fn;
  };
  std::shared_ptr<HeapObj> h;

  Value() : i(0) {}
  static Value none() { return Value(); }
  static Value boolean(bool v) { Value x; x.kind = VKind::Bool; x.b = v; return x; }
  static Value integer(int64_t v) { Value x; x.kind = VKind::Int; x.i = v; return x; }
  static Value number(double v) { Value x; x.kind = VKind::Float; x.f = v; return x; }
  static Value str(std::string s);
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  // A set of `items`, later duplicates (by Python equality) dropped.
  static Value set_of(std::vector<Value> items);
  static Value dict();
  static Value builtin(Builtin b) { Value x; x.kind = VKind::Builtin; x.fn = b; return x; }
  static Value type(Builtin b) { Value x; x.kind = VKind::Type; x.fn = b; return x; }
  static Value module() { Value x; x.kind = VKind::Module; return x; }

  bool is_num() const { return kind == VKind::Int || kind == VKind::Float || kind == VKind::Bool; }
  double as_double() const {
    return kind == VKind::Float ? f : kind == VKind::Int ? static_cast<double>(i) : (b ? 1.0 : 0.0);
  }
  const std::string& s() const;
  std::vector<Value>& items() const;  // List, Tuple or Set
  struct DictObj& d() const;
  struct LineObj& line() const;
};

struct StrObj : HeapObj {
  std::string s;
};
struct ListObj : HeapObj {
  std::vector<Value> items;
};
struct DictObj : HeapObj {
  std::vector<std::pair<Value, Value>> entries;  // insertion order
  Value* find(const Value& key);
  Value* find_str(std::string_view key);
  void set(const Value& key, Value v);
};
struct MethodObj : HeapObj {
  Value self;
  MethodId id;
};

// One log line as rule code sees it (the consortium's LogLine dataclass).
// `value` and `full_string` are built from the JSON text on first use.
struct LineObj : HeapObj {
  Value key;
  Value timestamp;
  Value lineno;
  std::string_view json;
  std::string text;  // the line's own copy of its JSON text, when it has one (json views it)
  mutable Value value;
  mutable bool value_loaded = false;
  mutable Value full_string;
  mutable bool full_loaded = false;
  // v['value'] and v['metadata'] read before `value` is built: built alone
  // (Host::line_member), and taken into `value` when it is built.
  mutable Value member_value;
  mutable Value member_meta;
  mutable bool member_value_loaded = false;
  mutable bool member_meta_loaded = false;
  // Where "value" and "metadata" lie in `json`, and the entries of those
  // that are objects: found on the first question asked of them without
  // building them (line_member_has). Offsets into `json`, so that they hold
  // when the text is copied.
  struct Entry {
    uint32_t name_at;   // the name's text (no escapes)
    uint32_t value_at;  // its value's first byte
    uint16_t name_len;
    uint8_t member;     // 0 "value", 1 "metadata"
  };
  static constexpr int kMaxEntries = 8;
  // 0 not looked for yet, 1 found, 2 the text does not scan, 3 where the
  // members start is known (member_at, from the reader, which has checked
  // the text) and their entries are not looked for yet.
  mutable uint8_t spans = 0;
  mutable uint8_t n_entries = 0;
  // Per member: 0 missing or not an object, 1 its entries are in `entries`,
  // 2 an object whose entries are not there (too many, escaped names).
  mutable uint8_t indexed[2] = {0, 0};
  mutable uint32_t member_at[2] = {0, 0};   // where each member's value starts
  mutable uint32_t member_len[2] = {0, 0};  // the length of a member that is an object
  mutable Entry entries[kMaxEntries];
};

inline const std::string& Value::s() const { return static_cast<StrObj*>(h.get())->s; }
inline std::vector<Value>& Value::items() const { return static_cast<ListObj*>(h.get())->items; }
inline DictObj& Value::d() const { return *static_cast<DictObj*>(h.get()); }
inline LineObj& Value::line() const { return *static_cast<LineObj*>(h.get()); }

// Python semantics helpers.
bool py_truthy(const Value& v);
bool py_eq(const Value& a, const Value& b);
// Two lists (or tuples) or two dicts compared item by item, with `eq` for the
// items: the same length, and each item (each key's value) equal.
// Pre: a.kind == b.kind, one of List, Tuple or Dict.
template <class Eq>
bool py_items_eq(const Value& a, const Value& b, Eq eq) {
  if (a.kind == VKind::Dict) {
    auto& x = a.d();
    auto& y = b.d();
    if (x.entries.size() != y.entries.size()) return false;
    for (auto& [k, v] : x.entries) {
      Value* o = y.find(k);
      if (!o || !eq(v, *o)) return false;
    }
    return true;
  }
  const auto& x = a.items();
  const auto& y = b.items();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!eq(x[i], y[i])) return false;
  return true;
}
std::string py_repr(const Value& v);
std::string py_str(const Value& v);
const char* py_type_name(const Value& v);

}  // namespace referee::rules
