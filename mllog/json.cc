#include "mllog/json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace referee::mllog {

const Json* Json::find(std::string_view name) const {
  const Json* found = nullptr;
  for (const auto& [k, v] : fields)
    if (k == name) found = &v;
  return found;
}

namespace {

constexpr int kMaxDepth = 512;

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  bool parse(Json* out, std::string* error) {
    skip_ws();
    if (!value(out, 0)) {
      *error = err_.empty() ? "invalid JSON" : err_;
      return false;
    }
    skip_ws();
    if (p_ != t_.size()) {
      *error = "extra data after the JSON value at column " + std::to_string(p_ + 1);
      return false;
    }
    return true;
  }

 private:
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool fail(std::string msg) {
    if (err_.empty()) err_ = std::move(msg) + " at column " + std::to_string(p_ + 1);
    return false;
  }
  bool lit(std::string_view w) {
    if (t_.substr(p_, w.size()) == w) {
      p_ += w.size();
      return true;
    }
    return false;
  }

  bool value(Json* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (p_ >= t_.size()) return fail("unexpected end of text");
    char c = t_[p_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->kind = Json::Kind::String;
      return string(&out->s);
    }
    if (lit("null")) { out->kind = Json::Kind::Null; return true; }
    if (lit("true")) { out->kind = Json::Kind::Bool; out->b = true; return true; }
    if (lit("false")) { out->kind = Json::Kind::Bool; out->b = false; return true; }
    if (lit("NaN")) { out->kind = Json::Kind::Float; out->f = std::numeric_limits<double>::quiet_NaN(); return true; }
    if (lit("Infinity")) { out->kind = Json::Kind::Float; out->f = std::numeric_limits<double>::infinity(); return true; }
    if (lit("-Infinity")) { out->kind = Json::Kind::Float; out->f = -std::numeric_limits<double>::infinity(); return true; }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail(std::string("unexpected character '") + c + "'");
  }

  bool number(Json* out) {
    size_t start = p_;
    if (t_[p_] == '-') ++p_;
    if (p_ >= t_.size()) return fail("bad number");
    if (t_[p_] == '0') {
      ++p_;
    } else if (t_[p_] >= '1' && t_[p_] <= '9') {
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
    } else {
      return fail("bad number");
    }
    bool is_float = false;
    if (p_ < t_.size() && t_[p_] == '.') {
      size_t d = ++p_;
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
      if (p_ == d) return fail("bad number");
      is_float = true;
    }
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      size_t d = p_;
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
      if (p_ == d) return fail("bad number");
      is_float = true;
    }
    std::string num(t_.substr(start, p_ - start));
    if (!is_float) {
      errno = 0;
      long long v = std::strtoll(num.c_str(), nullptr, 10);
      if (errno == 0) {
        out->kind = Json::Kind::Int;
        out->i = v;
        return true;
      }
      // Python keeps arbitrary-precision integers; referee falls back to a double.
    }
    out->kind = Json::Kind::Float;
    out->f = std::strtod(num.c_str(), nullptr);
    return true;
  }

  static void put_utf8(std::string* s, uint32_t cp) {
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

  bool hex4(uint32_t* cp) {
    if (p_ + 4 > t_.size()) return fail("bad \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = t_[p_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= h - '0';
      else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
      else return fail("bad \\u escape");
    }
    *cp = v;
    return true;
  }

  bool string(std::string* s) {
    ++p_;  // opening quote
    while (true) {
      if (p_ >= t_.size()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(t_[p_]);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return fail("invalid control character in string");
      if (c != '\\') {
        s->push_back(static_cast<char>(c));
        ++p_;
        continue;
      }
      ++p_;
      if (p_ >= t_.size()) return fail("unterminated string");
      char e = t_[p_++];
      switch (e) {
        case '"': s->push_back('"'); break;
        case '\\': s->push_back('\\'); break;
        case '/': s->push_back('/'); break;
        case 'b': s->push_back('\b'); break;
        case 'f': s->push_back('\f'); break;
        case 'n': s->push_back('\n'); break;
        case 'r': s->push_back('\r'); break;
        case 't': s->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && t_.substr(p_, 2) == "\\u") {
            size_t save = p_;
            p_ += 2;
            uint32_t lo = 0;
            if (!hex4(&lo)) return false;
            if (lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else p_ = save;
          }
          put_utf8(s, cp);
          break;
        }
        default:
          return fail("invalid escape");
      }
    }
  }

  // The items of an array or the members of an object, after the opening
  // bracket: `item` reads one; they are separated by ',' and end at `close`.
  template <class Item>
  bool items(char close, const char* unterminated, const char* expected, Item item) {
    ++p_;
    skip_ws();
    if (p_ < t_.size() && t_[p_] == close) { ++p_; return true; }
    while (true) {
      skip_ws();
      if (!item()) return false;
      skip_ws();
      if (p_ >= t_.size()) return fail(unterminated);
      if (t_[p_] == ',') { ++p_; continue; }
      if (t_[p_] == close) { ++p_; return true; }
      return fail(expected);
    }
  }

  bool array(Json* out, int depth) {
    out->kind = Json::Kind::Array;
    return items(']', "unterminated array", "expected ',' or ']'", [&] {
      out->items.emplace_back();
      return value(&out->items.back(), depth + 1);
    });
  }

  bool object(Json* out, int depth) {
    out->kind = Json::Kind::Object;
    return items('}', "unterminated object", "expected ',' or '}'", [&] {
      if (p_ >= t_.size() || t_[p_] != '"') return fail("expected a property name in double quotes");
      std::string name;
      if (!string(&name)) return false;
      skip_ws();
      if (p_ >= t_.size() || t_[p_] != ':') return fail("expected ':'");
      ++p_;
      skip_ws();
      Json v;
      if (!value(&v, depth + 1)) return false;
      out->fields.emplace_back(std::move(name), std::move(v));
      return true;
    });
  }

  std::string_view t_;
  size_t p_ = 0;
  std::string err_;
};

}  // namespace

bool parse_json_permissive(std::string_view text, Json* out, std::string* error) {
  *out = Json{};
  Parser p(text);
  return p.parse(out, error);
}

}  // namespace referee::mllog
