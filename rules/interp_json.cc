// JSON text to Values, with Python's json.loads semantics (NaN, Infinity,
// bytes that are not UTF-8), read with mllog's JsonCursor.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mllog/json_cursor.h"
#include "rules/interp.h"

namespace referee::rules {

namespace {

// Object names repeat on every line ("file", "lineno", "epoch_num"): share one
// string per name and thread instead of allocating it again.

Value object_key(std::string_view name) {
  if (name.size() > 40) return Value::str(std::string(name));
  // Direct-mapped by length and three of the bytes: a log's few names
  // ("file", "lineno", "epoch_num") each keep a slot; another name in the
  // slot replaces it.
  thread_local std::array<Value, 256> cache;
  size_t h = name.size() * 0x9E37u;
  if (!name.empty())
    h += static_cast<unsigned char>(name[0]) * 31u + static_cast<unsigned char>(name[name.size() / 2]) * 7u +
         static_cast<unsigned char>(name.back());
  Value& slot = cache[(h ^ (h >> 8)) & 255];
  if (slot.kind != VKind::Str || slot.s() != name) slot = Value::str(std::string(name));
  return slot;
}

Value json_string_value(std::string_view raw, bool escaped) {
  if (!escaped) return Value::str(std::string(raw));
  std::string s;
  mllog::decode_json_string(raw, &s);
  return Value::str(std::move(s));
}

// One value at the cursor, as Python's json.loads gives it.
bool value_at(mllog::JsonCursor& c, Value* out, int depth) {
  using Tok = mllog::JsonCursor::Tok;
  switch (c.next(depth)) {
    case Tok::Bad: return false;
    case Tok::Null: *out = Value(); return true;
    case Tok::True: *out = Value::boolean(true); return true;
    case Tok::False: *out = Value::boolean(false); return true;
    case Tok::NaN: *out = Value::number(std::numeric_limits<double>::quiet_NaN()); return true;
    case Tok::Infinity: *out = Value::number(std::numeric_limits<double>::infinity()); return true;
    case Tok::NegInfinity: *out = Value::number(-std::numeric_limits<double>::infinity()); return true;
    case Tok::Number: {
      mllog::JsonCursor::Number n;
      if (!c.number(&n)) return false;
      *out = n.is_int ? Value::integer(n.i) : Value::number(n.f);
      return true;
    }
    case Tok::String: {
      std::string_view raw;
      bool esc = false;
      if (!c.string(&raw, &esc)) return false;
      *out = json_string_value(raw, esc);
      return true;
    }
    case Tok::Array: {
      std::vector<Value> items;
      bool more;
      c.open(']', &more);
      while (more) {
        items.emplace_back();
        if (!value_at(c, &items.back(), depth + 1) || !c.after_item(']', &more)) return false;
      }
      *out = Value::list(std::move(items));
      return true;
    }
    case Tok::Object: {
      Value d = Value::dict();
      auto& dict = d.d();
      bool more;
      c.open('}', &more);
      while (more) {
        std::string_view name;
        std::string scratch;
        if (!c.member(&name, &scratch)) return false;
        Value v;
        if (!value_at(c, &v, depth + 1)) return false;
        // A repeated name keeps its place and takes the last value, as Python's dict does.
        if (Value* old = dict.find_str(name)) *old = std::move(v);
        else dict.entries.emplace_back(object_key(name), std::move(v));
        if (!c.after_item('}', &more)) return false;
      }
      *out = std::move(d);
      return true;
    }
  }
  return false;
}

}  // namespace

Value line_value_from_json(std::string_view json) {
  Value value, meta;
  line_members_from_json(json, &value, &meta);
  return line_value_dict(std::move(value), std::move(meta));
}

Value line_value_dict(Value value, Value metadata) {
  thread_local Value k_value = Value::str("value");
  thread_local Value k_metadata = Value::str("metadata");
  Value out = Value::dict();
  out.d().entries.reserve(2);
  out.d().entries.emplace_back(k_value, std::move(value));
  out.d().entries.emplace_back(k_metadata, std::move(metadata));
  return out;
}

Value line_member_of(const LineObj& line, LineMember m, Host& host) {
  if (!line.value_loaded)
    if (const Value* p = host.line_member(line, m)) return *p;
  if (!line.value_loaded) host.load_line_value(line);
  if (line.value.kind == VKind::Dict)
    if (Value* v = line.value.d().find_str(m == LineMember::Value ? "value" : "metadata")) return *v;
  return Value();
}

void line_members_from_json(std::string_view json, Value* value_out, Value* meta_out) {
  Value value, meta;
  // Only "value" and "metadata" are built, those wanted; the rest of the line
  // is checked and passed over. A line that is not a JSON object gives None for both.
  mllog::JsonCursor c(json);
  c.ws();
  bool ok = c.next(0) == mllog::JsonCursor::Tok::Object;
  if (ok) {
    bool more;
    c.open('}', &more);
    while (ok && more) {
      std::string_view name;
      std::string scratch;
      if (!c.member(&name, &scratch)) {
        ok = false;
        break;
      }
      if (name == "value" && value_out) ok = value_at(c, &value, 1);  // the last of repeated names wins
      else if (name == "metadata" && meta_out) ok = value_at(c, &meta, 1);
      else ok = c.skip(1);
      ok = ok && c.after_item('}', &more);
    }
    ok = ok && c.finish();
  }
  if (!ok) value = meta = Value();
  if (value_out) *value_out = std::move(value);
  if (meta_out) *meta_out = std::move(meta);
}

namespace {

// The text of the line's member `m`, as line_members_from_json would build
// it (the last of repeated names), or false when it is missing or the line
// does not scan (those give None there). Found once per line.
bool line_member_text(const LineObj& line, LineMember m, std::string_view* out) {
  if (line.spans == 0) {
    line.spans = 2;
    uint32_t at[2] = {0, 0}, len[2] = {0, 0};
    mllog::JsonCursor c(line.json);
    c.ws();
    bool ok = c.next(0) == mllog::JsonCursor::Tok::Object;
    if (ok) {
      bool more;
      c.open('}', &more);
      while (ok && more) {
        std::string_view name;
        std::string scratch;
        if (!c.member(&name, &scratch)) {
          ok = false;
          break;
        }
        int which = name == "value" ? 0 : name == "metadata" ? 1 : -1;
        size_t start = c.offset();
        ok = c.skip(1) && (which < 0 || c.offset() <= UINT32_MAX);
        if (ok && which >= 0) {
          at[which] = static_cast<uint32_t>(start);
          len[which] = static_cast<uint32_t>(c.offset() - start);
        }
        ok = ok && c.after_item('}', &more);
      }
      ok = ok && c.finish();
    }
    if (ok) {
      line.spans = 1;
      for (int i = 0; i < 2; ++i) {
        line.member_at[i] = at[i];
        line.member_len[i] = len[i];
      }
    }
  }
  int i = m == LineMember::Value ? 0 : 1;
  if (line.spans != 1 || line.member_len[i] == 0) return false;
  *out = line.json.substr(line.member_at[i], line.member_len[i]);
  return true;
}

// Walks the member's object to the entry `key` (the last of repeated
// names); 1 with the cursor's offset of its value in *at, 0 none, -1 the
// member is not an object.
int member_entry_at(const LineObj& line, LineMember m, std::string_view key, std::string_view* text, size_t* at) {
  if (!line_member_text(line, m, text) || (*text)[0] != '{') return -1;
  mllog::JsonCursor c(*text);
  if (c.next(1) != mllog::JsonCursor::Tok::Object) return -1;
  bool more;
  c.open('}', &more);
  int found = 0;
  while (more) {
    std::string_view name;
    std::string scratch;
    if (!c.member(&name, &scratch)) return -1;
    if (name == key) {
      found = 1;
      *at = c.offset();
    }
    if (!c.skip(2) || !c.after_item('}', &more)) return -1;
  }
  return found;
}

}  // namespace

int line_member_has(const LineObj& line, LineMember m, std::string_view key) {
  std::string_view text;
  size_t at = 0;
  return member_entry_at(line, m, key, &text, &at);
}

int line_member_entry(const LineObj& line, LineMember m, std::string_view key, Value* out) {
  std::string_view text;
  size_t at = 0;
  int r = member_entry_at(line, m, key, &text, &at);
  if (r != 1) return r;
  char c0 = text[at];
  if (c0 == '{' || c0 == '[') return -1;
  mllog::JsonCursor c(text.substr(at));
  return value_at(c, out, 2) ? 1 : -1;
}

Value value_from_json(std::string_view json, bool* ok, std::string* error) {
  mllog::JsonCursor c(json);
  c.ws();
  Value v;
  if (!value_at(c, &v, 0) || !c.finish()) {
    *error = c.error().empty() ? "invalid JSON" : c.error();
    *ok = false;
    return Value();
  }
  *ok = true;
  return v;
}

}  // namespace referee::rules
