#include "mllog/json.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "mllog/json_cursor.h"

namespace referee::mllog {

const Json* Json::find(std::string_view name) const {
  const Json* found = nullptr;
  for (const auto& [k, v] : fields)
    if (k == name) found = &v;
  return found;
}

double JsonCursor::strtod_copy(const char* s, const char* e) {
  std::string num(s, static_cast<size_t>(e - s));
  return std::strtod(num.c_str(), nullptr);
}

namespace {

void put_utf8(std::string* s, uint32_t cp) {
  if (cp < 0x80) {
    s->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Four hex digits JsonCursor::string() has checked.
uint32_t hex4(const char* p) {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    char h = p[k];
    v <<= 4;
    if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
    else v |= static_cast<uint32_t>(h - 'A' + 10);
  }
  return v;
}

bool tree_at(JsonCursor& c, Json* out, int depth) {
  using Tok = JsonCursor::Tok;
  switch (c.next(depth)) {
    case Tok::Bad: return false;
    case Tok::Null: out->kind = Json::Kind::Null; return true;
    case Tok::True: out->kind = Json::Kind::Bool; out->b = true; return true;
    case Tok::False: out->kind = Json::Kind::Bool; out->b = false; return true;
    case Tok::NaN: out->kind = Json::Kind::Float; out->f = std::numeric_limits<double>::quiet_NaN(); return true;
    case Tok::Infinity: out->kind = Json::Kind::Float; out->f = std::numeric_limits<double>::infinity(); return true;
    case Tok::NegInfinity: out->kind = Json::Kind::Float; out->f = -std::numeric_limits<double>::infinity(); return true;
    case Tok::Number: {
      JsonCursor::Number n;
      if (!c.number(&n)) return false;
      if (n.is_int) {
        out->kind = Json::Kind::Int;
        out->i = n.i;
      } else {
        out->kind = Json::Kind::Float;
        out->f = n.f;
      }
      return true;
    }
    case Tok::String: {
      std::string_view raw;
      bool esc = false;
      if (!c.string(&raw, &esc)) return false;
      out->kind = Json::Kind::String;
      if (esc) decode_json_string(raw, &out->s);
      else out->s.assign(raw);
      return true;
    }
    case Tok::Array: {
      out->kind = Json::Kind::Array;
      bool more;
      c.open(']', &more);
      while (more) {
        out->items.emplace_back();
        if (!tree_at(c, &out->items.back(), depth + 1) || !c.after_item(']', &more)) return false;
      }
      return true;
    }
    case Tok::Object: {
      out->kind = Json::Kind::Object;
      bool more;
      c.open('}', &more);
      while (more) {
        std::string_view name;
        std::string scratch;
        if (!c.member(&name, &scratch)) return false;
        Json v;
        if (!tree_at(c, &v, depth + 1)) return false;
        out->fields.emplace_back(std::string(name), std::move(v));
        if (!c.after_item('}', &more)) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

void decode_json_string(std::string_view raw, std::string* out) {
  const char* p = raw.data();
  const char* e = p + raw.size();
  out->reserve(out->size() + raw.size());
  while (p < e) {
    const char* q = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(e - p)));
    if (!q) q = e;
    out->append(p, static_cast<size_t>(q - p));
    p = q;
    if (p >= e) break;
    char x = p[1];
    p += 2;
    switch (x) {
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp = hex4(p);
        p += 4;
        // A high surrogate and a low one after it are one code point.
        if (cp >= 0xD800 && cp < 0xDC00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
          uint32_t lo = hex4(p + 2);
          if (lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
          }
        }
        put_utf8(out, cp);
        break;
      }
      default: out->push_back(x); break;  // '"', '\\', '/'
    }
  }
}

bool parse_json_permissive(std::string_view text, Json* out, std::string* error) {
  *out = Json{};
  JsonCursor c(text);
  c.ws();
  if (!tree_at(c, out, 0) || !c.finish()) {
    *error = c.error().empty() ? "invalid JSON" : c.error();
    return false;
  }
  return true;
}

}  // namespace referee::mllog
