#include "rules/interp_lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace referee::rules::interp {

namespace {

// The digits of a number literal without Python's '_' separators.
std::string without_underscores(std::string_view s) {
  std::string digits;
  for (char c : s)
    if (c != '_') digits += c;
  return digits;
}


struct Lexer {
  std::string_view src;
  std::vector<Token> out;
  CompileError* err;

  bool fail(int line, int col, std::string msg) {
    err->line = line;
    err->column = col;
    err->message = std::move(msg);
    return false;
  }

  bool run() {
    std::vector<int> indents{0};
    size_t i = 0;
    int line = 1;
    size_t line_start = 0;
    int depth = 0;
    bool at_line_start = true;
    while (i <= src.size()) {
      if (at_line_start && depth == 0) {
        // measure indentation
        size_t j = i;
        int width = 0;
        while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) {
          width += src[j] == '\t' ? 8 - (width % 8) : 1;
          ++j;
        }
        if (j >= src.size()) break;
        if (src[j] == '\n' || src[j] == '#' || src[j] == '\r') {
          // blank or comment line
          while (j < src.size() && src[j] != '\n') ++j;
          i = j + 1;
          ++line;
          line_start = i;
          continue;
        }
        if (width > indents.back()) {
          indents.push_back(width);
          out.push_back({Tok::Indent, "", {}, line, 1});
        } else {
          while (width < indents.back()) {
            indents.pop_back();
            out.push_back({Tok::Dedent, "", {}, line, 1});
          }
          if (width != indents.back()) return fail(line, 1, "inconsistent indentation");
        }
        i = j;
        at_line_start = false;
      }
      if (i >= src.size()) break;
      char c = src[i];
      int col = static_cast<int>(i - line_start) + 1;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') { ++i; continue; }
      if (c == '#') {
        while (i < src.size() && src[i] != '\n') ++i;
        continue;
      }
      if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') {
        i += 2;
        ++line;
        line_start = i;
        continue;
      }
      if (c == '\n') {
        ++i;
        ++line;
        line_start = i;
        if (depth == 0) {
          if (!out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {}, line - 1, col});
          at_line_start = true;
        }
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        std::string word(src.substr(i, j - i));
        // string prefixes
        if (j < src.size() && (src[j] == '\'' || src[j] == '"')) {
          std::string low = word;
          for (auto& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (low == "f" || low == "rf" || low == "fr") return fail(line, col, "f-strings are not supported");
          if (low == "r" || low == "u" || low == "b" || low == "br" || low == "rb") {
            i = j;
            if (!string(i, line, line_start, low.find('r') != std::string::npos)) return false;
            continue;
          }
        }
        out.push_back({Tok::Name, word, {}, line, col});
        i = j;
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
        size_t j = i;
        bool is_float = false;
        if (c == '0' && j + 1 < src.size() && (src[j + 1] == 'x' || src[j + 1] == 'X')) {
          j += 2;
          while (j < src.size() && (std::isxdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
          std::string digits = without_underscores(src.substr(i + 2, j - i - 2));
          if (digits.empty()) return fail(line, col, "invalid hexadecimal literal");
          errno = 0;
          unsigned long long u = std::strtoull(digits.c_str(), nullptr, 16);
          if (errno != 0 || u > static_cast<unsigned long long>(INT64_MAX)) return fail(line, col, "integer literal too large");
          out.push_back({Tok::Number, "", Value::integer(static_cast<int64_t>(u)), line, col});
          i = j;
          continue;
        }
        while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        if (j < src.size() && src[j] == '.') {
          is_float = true;
          ++j;
          while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        }
        if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
          size_t k = j + 1;
          if (k < src.size() && (src[k] == '+' || src[k] == '-')) ++k;
          if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
            is_float = true;
            j = k;
            while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
          }
        }
        std::string digits = without_underscores(src.substr(i, j - i));
        Value v;
        if (is_float) {
          v = Value::number(std::strtod(digits.c_str(), nullptr));
        } else {
          errno = 0;
          long long n = std::strtoll(digits.c_str(), nullptr, 10);
          if (errno != 0) return fail(line, col, "integer literal too large");
          v = Value::integer(n);
        }
        if (j < src.size() && (src[j] == 'j' || src[j] == 'J')) return fail(line, col, "complex numbers are not supported");
        out.push_back({Tok::Number, digits, v, line, col});
        i = j;
        continue;
      }
      if (c == '\'' || c == '"') {
        if (!string(i, line, line_start, false)) return false;
        continue;
      }
      static const char* const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
      static const char* const ops2[] = {"**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=",
                                         "%=", "&=", "|=", "^=", "->", "<<", ">>", ":="};
      std::string op;
      for (const char* o : ops3)
        if (src.substr(i, 3) == o) op = o;
      if (op.empty())
        for (const char* o : ops2)
          if (src.substr(i, 2) == o) op = o;
      if (op.empty()) {
        if (std::string_view("+-*/%<>=()[]{},:.;|&^~@").find(c) == std::string_view::npos)
          return fail(line, col, std::string("unexpected character '") + c + "'");
        op = std::string(1, c);
      }
      if (op == "(" || op == "[" || op == "{") ++depth;
      if (op == ")" || op == "]" || op == "}") depth = std::max(0, depth - 1);
      out.push_back({Tok::Op, op, {}, line, col});
      i += op.size();
    }
    if (!out.empty() && out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", {}, line, 1});
    while (indents.size() > 1) {
      indents.pop_back();
      out.push_back({Tok::Dedent, "", {}, line, 1});
    }
    out.push_back({Tok::End, "", {}, line, 1});
    return true;
  }

  bool string(size_t& i, int& line, size_t& line_start, bool raw) {
    int col = static_cast<int>(i - line_start) + 1;
    int start_line = line;
    char q = src[i];
    bool triple = src.substr(i, 3) == std::string(3, q);
    i += triple ? 3 : 1;
    std::string s;
    while (true) {
      if (i >= src.size()) return fail(start_line, col, "unterminated string literal");
      char c = src[i];
      if (triple ? src.substr(i, 3) == std::string(3, q) : c == q) {
        i += triple ? 3 : 1;
        break;
      }
      if (c == '\n') {
        if (!triple) return fail(start_line, col, "unterminated string literal");
        ++line;
        line_start = i + 1;
      }
      if (c == '\\' && !raw && i + 1 < src.size()) {
        char e = src[i + 1];
        i += 2;
        switch (e) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case 'r': s += '\r'; break;
          case '0': s += '\0'; break;
          case '\\': s += '\\'; break;
          case '\'': s += '\''; break;
          case '"': s += '"'; break;
          case '\n': ++line; line_start = i; break;
          default: s += '\\'; s += e;
        }
        continue;
      }
      s += c;
      ++i;
    }
    // adjacent literals concatenate
    if (!out.empty() && out.back().kind == Tok::String) {
      out.back().text += s;
    } else {
      out.push_back({Tok::String, s, {}, start_line, col});
    }
    return true;
  }
};

}  // namespace

bool tokenize(std::string_view src, std::vector<Token>* out, CompileError* err) {
  Lexer lx{src, {}, err};
  if (!lx.run()) return false;
  *out = std::move(lx.out);
  return true;
}

}  // namespace referee::rules::interp
