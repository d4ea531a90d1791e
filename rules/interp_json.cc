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

// The entries of the line's member `which`, whose value starts at `start`
// of the line's text, when it is an object: its state for LineObj::indexed,
// and the length of its text in *len. False when the text does not scan.
bool index_member(const LineObj& line, int which, size_t start, uint8_t* indexed, uint32_t* len) {
  // A repeated name: the entries of the one before go.
  uint8_t kept = 0;
  for (uint8_t k = 0; k < line.n_entries; ++k)
    if (line.entries[k].member != which) line.entries[kept++] = line.entries[k];
  line.n_entries = kept;
  *indexed = 0;
  *len = 0;
  if (start >= line.json.size() || line.json[start] != '{') return true;
  const char* base = line.json.data();
  std::string_view text = line.json.substr(start);
  mllog::JsonCursor c(text);
  if (c.next(1) != mllog::JsonCursor::Tok::Object) return false;
  *indexed = 1;
  bool more;
  c.open('}', &more);
  while (more) {
    std::string_view raw;
    bool esc = false;
    if (!c.name(&raw, &esc)) return false;
    size_t value_at = start + c.offset();
    if (esc || line.n_entries == LineObj::kMaxEntries || raw.size() > UINT16_MAX || value_at > UINT32_MAX) {
      *indexed = 2;
    } else if (*indexed == 1) {
      LineObj::Entry& e = line.entries[line.n_entries++];
      e.name_at = static_cast<uint32_t>(raw.data() - base);
      e.name_len = static_cast<uint16_t>(raw.size());
      e.value_at = static_cast<uint32_t>(value_at);
      e.member = static_cast<uint8_t>(which);
    }
    if (!c.skip(2) || !c.after_item('}', &more)) return false;
  }
  if (c.offset() > UINT32_MAX) return false;
  *len = static_cast<uint32_t>(c.offset());
  return true;
}

// Finds where the line's "value" and "metadata" lie, as
// line_members_from_json would build them (the last of repeated names), and
// the entries of those that are objects. Once per line.
void index_line(const LineObj& line) {
  uint32_t at[2] = {0, 0}, len[2] = {0, 0};
  uint8_t indexed[2] = {0, 0};
  bool known = line.spans == 3;
  line.spans = 2;  // until the end is reached
  line.n_entries = 0;
  if (known) {
    // Where they start is known, and the reader has checked the text.
    for (int i = 0; i < 2; ++i) {
      at[i] = line.member_at[i];
      if (!index_member(line, i, at[i], &indexed[i], &len[i])) return;
    }
  } else {
    mllog::JsonCursor c(line.json);
    c.ws();
    if (c.next(0) != mllog::JsonCursor::Tok::Object) return;
    bool more;
    c.open('}', &more);
    while (more) {
      std::string_view name;
      std::string scratch;
      if (!c.member(&name, &scratch)) return;
      int which = name == "value" ? 0 : name == "metadata" ? 1 : -1;
      size_t start = c.offset();
      if (start > UINT32_MAX) return;
      if (which >= 0) {
        if (!index_member(line, which, start, &indexed[which], &len[which])) return;
        at[which] = static_cast<uint32_t>(start);
      }
      if (!c.skip(1) || !c.after_item('}', &more)) return;
    }
    if (!c.finish()) return;
  }
  line.spans = 1;
  for (int i = 0; i < 2; ++i) {
    line.member_at[i] = at[i];
    line.member_len[i] = len[i];
    line.indexed[i] = indexed[i];
  }
}

// The member's index in LineObj's arrays, the line indexed first.
int indexed_member(const LineObj& line, LineMember m) {
  if (line.spans == 0 || line.spans == 3) index_line(line);
  return m == LineMember::Value ? 0 : 1;
}

// Finds the member's entry `key` (the last of repeated names): 1 with the
// offset of its value in `line.json`, 0 none, -1 the member is not an object.
int member_entry_at(const LineObj& line, LineMember m, std::string_view key, size_t* at) {
  int i = indexed_member(line, m);
  if (line.spans != 1 || line.indexed[i] == 0) return -1;
  int found = 0;
  if (line.indexed[i] == 1) {
    for (uint8_t k = 0; k < line.n_entries; ++k) {
      const LineObj::Entry& e = line.entries[k];
      if (e.member == i && e.name_len == key.size() && line.json.compare(e.name_at, e.name_len, key) == 0) {
        found = 1;
        *at = e.value_at;
      }
    }
    return found;
  }
  // Too many entries, or escaped names: walk the member's text.
  std::string_view text = line.json.substr(line.member_at[i], line.member_len[i]);
  mllog::JsonCursor c(text);
  if (c.next(1) != mllog::JsonCursor::Tok::Object) return -1;
  bool more;
  c.open('}', &more);
  while (more) {
    std::string_view name;
    std::string scratch;
    if (!c.member(&name, &scratch)) return -1;
    if (name == key) {
      found = 1;
      *at = line.member_at[i] + c.offset();
    }
    if (!c.skip(2) || !c.after_item('}', &more)) return -1;
  }
  return found;
}

}  // namespace

int line_member_has(const LineObj& line, LineMember m, std::string_view key) {
  size_t at = 0;
  return member_entry_at(line, m, key, &at);
}

int line_member_entry(const LineObj& line, LineMember m, std::string_view key, Value* out, bool strings) {
  size_t at = 0;
  int r = member_entry_at(line, m, key, &at);
  if (r != 1) return r;
  char c0 = line.json[at];
  if (c0 == '{' || c0 == '[' || (c0 == '"' && !strings)) return -1;
  mllog::JsonCursor c(line.json.substr(at));
  return value_at(c, out, 2) ? 1 : -1;
}

int line_member_scalar(const LineObj& line, LineMember m, Value* out) {
  int i = indexed_member(line, m);
  size_t at = line.member_at[i];
  if (line.spans != 1 || at == 0 || at >= line.json.size() || line.json[at] == '{' || line.json[at] == '[') return -1;
  mllog::JsonCursor c(line.json.substr(at));
  return value_at(c, out, 1) ? 1 : -1;
}

void line_member_starts(const LineObj& line, uint32_t value_at, uint32_t meta_at) {
  if (!value_at || !meta_at || value_at >= line.json.size() || meta_at >= line.json.size()) return;
  line.member_at[0] = value_at;
  line.member_at[1] = meta_at;
  line.spans = 3;
}

Value value_from_json(std::string_view json, bool* ok, std::string* error) {
  if (json.substr(0, 3) == "\xEF\xBB\xBF") {
    // Python's json.loads refuses it too ("Unexpected UTF-8 BOM").
    *error = "the text starts with a UTF-8 byte-order mark (EF BB BF): remove those three bytes";
    *ok = false;
    return Value();
  }
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
