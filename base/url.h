// Percent-encoding (RFC 3986) and its decoding, one rule set for referee:
//
// - Encoding keeps the unreserved characters (A-Z a-z 0-9 - . _ ~) and
//   writes every other byte as %XX with upper-case hex digits, so the result
//   is one safe query value or path segment. A caller that must leave more
//   bytes as they are (an SQLite "file:" URI keeps '/') passes its own test.
// - Decoding turns %XX (either case of hex digit) into its byte. '+' means a
//   space only in application/x-www-form-urlencoded text (an HTML form's
//   body, Plus::Space); in a URL's path, a file:// URL or a query built by
//   referee it is a '+' (Plus::Literal).
// - A '%' not followed by two hex digits is refused by percent_decode
//   (nullopt: a path segment the API must answer 400 for) and kept as it is
//   by percent_decode_lenient (what browsers and curl do with such text).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace referee::base {

enum class Plus { Literal, Space };

// `s` percent-encoded: unreserved characters kept, every other byte %XX.
std::string percent_encode(std::string_view s);
// `s` percent-encoded: the bytes for which keep(byte) holds kept, every other byte %XX.
std::string percent_encode(std::string_view s, bool (*keep)(unsigned char));

// `s` decoded; nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s, Plus plus = Plus::Literal);
// `s` decoded; a '%' not followed by two hex digits is kept as it is.
std::string percent_decode_lenient(std::string_view s, Plus plus = Plus::Literal);

// The value of the field `name` in an application/x-www-form-urlencoded
// body ("a=1&b=x+y"), decoded leniently with '+' as a space; the first of
// several; "" when there is none.
std::string form_field(std::string_view body, std::string_view name);

// The host of an http:// or https:// URL, without brackets
// ("https://[::1]:8443/x" -> "::1"); "" when `url` has none.
std::string url_host(std::string_view url);

// Whether `host` is this machine over the loopback: "localhost",
// 127.0.0.0/8 (any 127.x.y.z) or ::1. Anything else may cross a network.
bool is_loopback_host(std::string_view host);

// The host of an HTTP Host header ("example.org:8080" -> "example.org",
// "[::1]:8080" -> "::1"), lower-case, without a trailing dot; "" when the
// header is empty or malformed (an unclosed '[', a port that is not digits, a
// character a host name or address does not have: '%', NUL, '@', '*', space).
std::string host_header_name(std::string_view header);

// Whether `host` (without brackets) is an IPv4 or IPv6 address literal,
// not a name that DNS resolves.
bool is_ip_literal(std::string_view host);

}  // namespace referee::base
