// A small JSON tree with Python's json.loads semantics (NaN, Infinity, bytes
// that are not UTF-8), read with json_cursor.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace referee::mllog {

struct Json {
  Json() = default;  // user-declared: clang 14 + libstdc++ 12 reject the recursive pair without it
  enum class Kind { Null, Bool, Int, Float, String, Array, Object };
  Kind kind = Kind::Null;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::string s;                                   // String (raw bytes, latin-1 view)
  std::vector<Json> items;                         // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in order, duplicates kept

  // Last field with this name (Python's json keeps the last duplicate), or null.
  const Json* find(std::string_view name) const;
};

// Parses one JSON text the way Python's json.loads does (strict=True, NaN,
// Infinity and -Infinity accepted, a repeated key keeps the last value).
// Returns false and sets *error on failure.
bool parse_json_permissive(std::string_view text, Json* out, std::string* error);

}  // namespace referee::mllog
