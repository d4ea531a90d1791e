#include "review/router.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_set>

#include "base/text.h"
#include "mllog/json_writer.h"

namespace referee::review {

std::string Context::query(const std::string& name, const std::string& fallback) const {
  std::string v = fallback;
  for (const auto& [k, val] : req.query)
    if (k == name) v = val;
  return v;
}

bool if_match_version(std::string text, long long* out) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoll(text);
  return true;
}

bool path_id(const std::string& text, long long* out) {
  if (text.empty() || text.size() > 18 || text[0] == '0' || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = std::stoll(text);
  return true;
}

namespace {

int depth_of(const mllog::Json& j) {
  int d = 0;
  for (const auto& x : j.items) d = std::max(d, depth_of(x));
  for (const auto& [k, x] : j.fields) d = std::max(d, depth_of(x));
  return d + 1;
}

// Whether every string (names too) in `j` is UTF-8 without a NUL: a `\u0000`
// would be stored, but SQLite's text functions and every C string reading it
// back stop at it, so "a\u0000b" would come back as "a".
bool has_nul(const std::string& t) { return t.find('\0') != std::string::npos; }

bool strings_valid(const mllog::Json& j) {
  if (j.kind == mllog::Json::Kind::String && (!valid_utf8(j.s) || has_nul(j.s))) return false;
  for (const auto& x : j.items)
    if (!strings_valid(x)) return false;
  for (const auto& [k, x] : j.fields)
    if (!valid_utf8(k) || has_nul(k) || !strings_valid(x)) return false;
  return true;
}

// The most fields one object of a request body may have: no request takes
// more than a few dozen.
constexpr size_t kMaxFields = 256;

// The size of the largest object anywhere in `j`.
size_t widest_object(const mllog::Json& j) {
  size_t w = j.fields.size();
  for (const auto& x : j.items) w = std::max(w, widest_object(x));
  for (const auto& [k, x] : j.fields) w = std::max(w, widest_object(x));
  return w;
}

// The first name that appears twice in one object, anywhere in `j`. Linear
// in the number of fields (a set of the names seen).
bool duplicate_name(const mllog::Json& j, std::string* name) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(j.fields.size());
  for (const auto& [k, x] : j.fields)
    if (!seen.insert(k).second) {
      *name = k;
      return true;
    }
  for (const auto& x : j.items)
    if (duplicate_name(x, name)) return true;
  for (const auto& [k, x] : j.fields)
    if (duplicate_name(x, name)) return true;
  return false;
}

}  // namespace

bool parse_body(const Request& r, std::initializer_list<const char*> allowed, mllog::Json* out, Response* err) {
  *out = mllog::Json{};
  out->kind = mllog::Json::Kind::Object;
  size_t only_space = r.body.find_first_not_of(" \t\r\n");
  if (only_space == std::string::npos) return true;
  size_t bad = 0;
  if (!valid_utf8(r.body, &bad)) {
    *err = error_response(400, "bad-request", "the request body is not valid UTF-8 (byte " + std::to_string(bad) + ")",
                          "send JSON encoded as UTF-8");
    return false;
  }
  std::string perr;
  if (!mllog::parse_json_permissive(r.body, out, &perr)) {
    *err = error_response(400, "bad-request", "the request body is not JSON: " + perr);
    return false;
  }
  if (out->kind != mllog::Json::Kind::Object) {
    *err = error_response(400, "bad-request", "the request body must be a JSON object");
    return false;
  }
  if (depth_of(*out) > 32) {
    *err = error_response(400, "bad-request", "the request body is nested more than 32 deep");
    return false;
  }
  if (size_t w = widest_object(*out); w > kMaxFields) {
    *err = error_response(400, "bad-request",
                          "an object of the request body has " + std::to_string(w) + " fields; at most " +
                              std::to_string(kMaxFields) + " are taken");
    return false;
  }
  if (!strings_valid(*out)) {  // \ud800 escapes decode to surrogates
    *err = error_response(400, "bad-request", "a string in the request body is not valid Unicode (a lone surrogate) or holds a NUL (\\u0000)");
    return false;
  }
  // {"text":"a","text":"b"} means different things to different readers: refused, not guessed.
  if (std::string twice; duplicate_name(*out, &twice)) {
    *err = error_response(400, "bad-request", "field '" + twice + "' appears more than once in an object of the request body",
                          "send each field once");
    return false;
  }
  for (const auto& [k, v] : out->fields) {
    bool known = false;
    for (const char* a : allowed)
      if (k == a) known = true;
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      *err = error_response(400, "unknown-field", "unknown field '" + base::excerpt(k) + "' in the request body",
                            list.empty() ? "this request takes no body" : "the fields are: " + list);
      return false;
    }
  }
  return true;
}

namespace {

Response type_error(const char* name, const char* expected) {
  return error_response(400, "bad-field", std::string("field '") + name + "' must be " + expected);
}

// An absent (or null) field: an error when it is required.
bool missing(const char* name, bool required, Response* err) {
  if (required) *err = error_response(400, "missing-field", std::string("field '") + name + "' is required");
  return required;
}

}  // namespace

bool body_string(const mllog::Json& body, const char* name, bool required, std::string* out, Response* err) {
  const mllog::Json* v = body.find(name);
  if (!v || v->kind == mllog::Json::Kind::Null) return !missing(name, required, err);
  if (v->kind != mllog::Json::Kind::String) {
    *err = type_error(name, "a string");
    return false;
  }
  *out = v->s;
  return true;
}

bool body_number(const mllog::Json& body, const char* name, bool required, double* out, bool* present, Response* err) {
  const mllog::Json* v = body.find(name);
  if (present) *present = false;
  if (!v || v->kind == mllog::Json::Kind::Null) return !missing(name, required, err);
  if (v->kind == mllog::Json::Kind::Int) *out = static_cast<double>(v->i);
  else if (v->kind == mllog::Json::Kind::Float && std::isfinite(v->f)) *out = v->f;
  else {
    *err = type_error(name, "a finite number");
    return false;
  }
  if (present) *present = true;
  return true;
}

bool body_int(const mllog::Json& body, const char* name, bool required, long long* out, bool* present, Response* err) {
  const mllog::Json* v = body.find(name);
  if (present) *present = false;
  if (!v || v->kind == mllog::Json::Kind::Null) return !missing(name, required, err);
  if (v->kind != mllog::Json::Kind::Int) {
    *err = type_error(name, "an integer");
    return false;
  }
  *out = v->i;
  if (present) *present = true;
  return true;
}

bool body_strings(const mllog::Json& body, const char* name, bool required, std::vector<std::string>* out,
                  Response* err) {
  const mllog::Json* v = body.find(name);
  if (!v || v->kind == mllog::Json::Kind::Null) return !missing(name, required, err);
  if (v->kind != mllog::Json::Kind::Array) {
    *err = type_error(name, "an array of strings");
    return false;
  }
  out->clear();
  for (const auto& x : v->items) {
    if (x.kind != mllog::Json::Kind::String) {
      *err = type_error(name, "an array of strings");
      return false;
    }
    out->push_back(x.s);
  }
  return true;
}

Response json_response(std::string body, int status) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

bool body_bool(const mllog::Json& body, const char* name, bool* out, Response* err) {
  const mllog::Json* v = body.find(name);
  if (!v || v->kind == mllog::Json::Kind::Null) return true;
  if (v->kind != mllog::Json::Kind::Bool) {
    *err = type_error(name, "true or false");
    return false;
  }
  *out = v->b;
  return true;
}

bool read_expected(const Request& r, const mllog::Json& body, Expected* out, Response* err) {
  *out = Expected{};
  if (!body_int(body, "version", false, &out->version, &out->given, err)) return false;
  if (out->given && out->version < 0) {  // 0: a round's review record not made yet
    *err = error_response(400, "bad-field", "version " + std::to_string(out->version) + " is not a version number",
                          "send the version you read: a number from 0");
    return false;
  }
  if (out->given || (r.if_match.empty() && !r.if_match_given)) return true;
  if (!if_match_version(r.if_match, &out->version)) {
    *err = error_response(400, "bad-request", "If-Match '" + base::excerpt(r.if_match) + "' is not a version number",
                          "send the version you read as a number (for version 3: If-Match: 3), as the object's "
                          "`version` names it");
    return false;
  }
  out->given = true;
  return true;
}

}  // namespace referee::review
