// What a review operation returns: a value, or an Error saying why not. The
// domain functions (review/objections.h, review/policy.h) speak no HTTP; the
// route layer (review/router.h) turns an Error into the API's error body
// {"error": {"status", "code", "message", "hint"}} with `status` as the HTTP
// status, and the CLI prints its message and hint.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace referee::review {

struct Error {
  int status = 500;      // 400 bad input, 403 refused by role or party, 404 unknown (or hidden), 409 stale, 422 a review rule, 500, 503
  std::string code;      // stable: "stale", "late", "forbidden", ...
  std::string message;   // what is wrong, naming the object
  std::string hint;      // how to go on; "" = none
  long long version = -1;  // a 409: the object's current version (in the body as "version"); else -1
};

inline Error make_error(int status, std::string code, std::string message, std::string hint = "") {
  Error e;
  e.status = status;
  e.code = std::move(code);
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

// A value of T or an Error. T is not Error.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  T& value() { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace referee::review
