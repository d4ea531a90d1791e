#include "base/url.h"

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

}  // namespace referee::base
