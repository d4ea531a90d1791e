#include "base/url.h"

#include <arpa/inet.h>

#include "base/digest.h"

namespace referee::base {

namespace {

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes `s` into *out; false at the first bad escape when `strict`.
bool decode(std::string_view s, Plus plus, bool strict, std::string* out) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+' && plus == Plus::Space) {
      out->push_back(' ');
      continue;
    }
    if (c != '%') {
      out->push_back(c);
      continue;
    }
    int a = i + 1 < s.size() ? hex_value(s[i + 1]) : -1, b = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (a < 0 || b < 0) {
      if (strict) return false;
      out->push_back(c);
      continue;
    }
    out->push_back(static_cast<char>(a * 16 + b));
    i += 2;
  }
  return true;
}

}  // namespace

std::string percent_encode(std::string_view s, bool (*keep)(unsigned char)) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (keep(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      append_hex(&out, c, /*upper=*/true);
    }
  }
  return out;
}

std::string percent_encode(std::string_view s) { return percent_encode(s, unreserved); }

std::optional<std::string> percent_decode(std::string_view s, Plus plus) {
  std::string out;
  if (!decode(s, plus, true, &out)) return std::nullopt;
  return out;
}

std::string percent_decode_lenient(std::string_view s, Plus plus) {
  std::string out;
  decode(s, plus, false, &out);
  return out;
}

std::string form_field(std::string_view body, std::string_view name) {
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t end = body.find('&', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view item = body.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = item.find('=');
    if (item.substr(0, eq) != name) continue;
    return eq == std::string_view::npos ? "" : percent_decode_lenient(item.substr(eq + 1), Plus::Space);
  }
  return "";
}

std::string url_host(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  std::string_view rest = url.substr(start + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);  // user:pass@
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    return close == std::string_view::npos ? "" : std::string(rest.substr(1, close - 1));
  }
  return std::string(rest.substr(0, rest.find(':')));
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  // 127.x.y.z, each part a number of at most three digits.
  if (host.rfind("127.", 0) != 0) return false;
  int parts = 0;
  size_t digits = 0;
  for (char c : host) {
    if (c == '.') {
      if (digits == 0) return false;
      ++parts;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 3) return false;
    } else {
      return false;
    }
  }
  return parts == 3 && digits > 0;
}

std::string host_header_name(std::string_view header) {
  std::string_view name = header, port;
  if (!header.empty() && header.front() == '[') {
    size_t close = header.find(']');
    if (close == std::string_view::npos) return "";
    name = header.substr(1, close - 1);
    std::string_view rest = header.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "";
      port = rest.substr(1);
    }
  } else if (size_t colon = header.find(':'); colon != std::string_view::npos) {
    name = header.substr(0, colon);
    port = header.substr(colon + 1);
  }
  for (char c : port)
    if (c < '0' || c > '9') return "";
  // A name is letters, digits, '-' and '.'; an address literal hex digits, '.' and ':' (no '%', NUL or space).
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':'))
      return "";
  std::string out;
  out.reserve(name.size());
  for (char c : name) out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

bool is_ip_literal(std::string_view host) {
  if (host.empty() || host.size() > 64) return false;
  std::string h(host);
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1;
}

}  // namespace referee::base
