// What the server refuses before it reads a request's body or routes it.
// cpp-httplib reads the whole body before the router sees the request, and
// decodes a compressed one first; it takes any number of header lines and a
// Content-Length it then tries to skip byte by byte. These checks run in
// its pre-routing hook, on the headers alone, so that no caller (signed in
// or not) makes the server read, decode or wait for what it will refuse.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "base/text.h"

namespace referee::server {

// The most header lines and header bytes (names and values) a request may
// carry; more is 431.
constexpr size_t kMaxHeaderLines = 100;
constexpr size_t kMaxHeaderBytes = 32 * 1024;

struct Refusal {
  int status = 0;  // 0: none
  std::string code, message, hint;
};

// The refusal for a request with these headers (names compared without
// case), or status 0. In order: too many or too large headers (431); a
// Transfer-Encoding (411: the API takes a body with a Content-Length only);
// a Content-Encoding other than identity (415: bodies are not decompressed);
// a Content-Length that is not one number, or two that differ (400); one
// larger than `max_body` (413).
template <typename Headers>
Refusal refuse_before_body(const Headers& headers, size_t max_body);

// ---------------------------------------------------------------- template

template <typename Headers>
Refusal refuse_before_body(const Headers& headers, size_t max_body) {
  size_t bytes = 0;
  for (const auto& [k, v] : headers) bytes += k.size() + v.size();
  if (headers.size() > kMaxHeaderLines || bytes > kMaxHeaderBytes)
    return {431, "headers-too-large",
            "the request has " + std::to_string(headers.size()) + " header lines of " + std::to_string(bytes) +
                " bytes; the server takes at most " + std::to_string(kMaxHeaderLines) + " lines and " +
                std::to_string(kMaxHeaderBytes) + " bytes",
            "send fewer or shorter headers"};
  std::string length;
  bool has_length = false;
  for (const auto& [k, v] : headers) {
    if (base::iequals(k, "Transfer-Encoding"))
      return {411, "length-required", "a body sent with Transfer-Encoding (" + base::one_line(v) + ") is not taken",
              "send the body whole, with a Content-Length"};
    if (base::iequals(k, "Content-Encoding") && !base::iequals(base::trim(v), "identity"))
      return {415, "unsupported-encoding",
              "a body with Content-Encoding " + base::one_line(v) + " is not taken: bodies are not decompressed",
              "send the JSON uncompressed"};
    if (base::iequals(k, "Content-Length")) {
      std::string n(base::trim(v));
      if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos)
        return {400, "bad-request", "Content-Length '" + base::one_line(v) + "' is not a number of bytes", ""};
      if (has_length && n != length)
        return {400, "bad-request", "two different Content-Length headers (" + length + " and " + n + ")",
                "send one Content-Length"};
      length = n;
      has_length = true;
    }
  }
  if (has_length && std::stoull(length) > max_body)
    return {413, "too-large",
            "the request body is larger than " + std::to_string(max_body) + " bytes (Content-Length " + length + ")",
            "send less; the server's limit is --max-body"};
  return {};
}

}  // namespace referee::server
