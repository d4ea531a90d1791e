// An outcome as a value: a code, a message in the CLI's words and, where one
// can be given, a hint that says how to fix it. The same three fields as the
// review API's error body ({"error": {"code", "message", "hint"}}). No
// exceptions cross an API; a function that can fail returns a Status (or
// fills one) and its caller decides what to print.
#pragma once

#include <string>
#include <utility>

namespace referee::base {

// What kind of outcome. reports::Status names the same values.
enum class StatusCode { Ok, NotFound, BadRequest, Error };

struct Status {
  StatusCode code = StatusCode::Ok;
  std::string message;  // what went wrong, one sentence; empty when ok()
  std::string hint;     // how to fix it, when that can be told; else empty

  bool ok() const { return code == StatusCode::Ok; }

  static Status Ok() { return {}; }
  static Status NotFound(std::string message, std::string hint = "") {
    return {StatusCode::NotFound, std::move(message), std::move(hint)};
  }
  static Status BadRequest(std::string message, std::string hint = "") {
    return {StatusCode::BadRequest, std::move(message), std::move(hint)};
  }
  static Status Error(std::string message, std::string hint = "") {
    return {StatusCode::Error, std::move(message), std::move(hint)};
  }

  // The message and, on a line of its own, "fix: <hint>": the form the CLI
  // prints its errors in.
  std::string text() const { return hint.empty() ? message : message + "\nfix: " + hint; }
};

}  // namespace referee::base
