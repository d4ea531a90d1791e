// JSON text to Values, with Python's json.loads semantics: simdjson first,
// the permissive reader (NaN, Infinity, odd bytes) when simdjson refuses.
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "base/text.h"
#include "mllog/json.h"
#include "rules/interp.h"

namespace referee::rules {

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

Value object_key(std::string_view name) {
  thread_local base::StringMap<Value> cache;
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

// Parses `json` with simdjson, which wants padding after the text (copied
// into `scratch`); false where simdjson refuses it.
bool parse_padded(simdjson::dom::parser& parser, std::string& scratch, std::string_view json, simdjson::dom::element* doc) {
  scratch.assign(json.data(), json.size());
  scratch.append(simdjson::SIMDJSON_PADDING, '\0');
  return !parser.parse(scratch.data(), json.size(), false).get(*doc);
}

}  // namespace

Value line_value_from_json(std::string_view json) {
  thread_local simdjson::dom::parser parser;
  thread_local std::string scratch;
  thread_local Value k_value = Value::str("value");
  thread_local Value k_metadata = Value::str("metadata");
  Value out = Value::dict();
  simdjson::dom::element doc;
  simdjson::dom::object obj;
  if (parse_padded(parser, scratch, json, &doc) && !doc.get_object().get(obj)) {
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
  simdjson::dom::element doc;
  if (parse_padded(parser, scratch, json, &doc)) {
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
