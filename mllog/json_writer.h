// A small streaming JSON writer (escaping, numbers that round-trip).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace referee::mllog {

// How a JSON string reads the bytes it is given.
//   kLatin1: each byte is a latin-1 character (U+0000..U+00FF), as the
//     consortium's tools read MLPerf log text; the checker, score and query
//     outputs that are compared with theirs use it.
//   kUtf8: the bytes are UTF-8 text (what people type: objection titles,
//     names, messages); valid UTF-8 passes through as it is, a byte that is
//     not part of a valid sequence is taken as its latin-1 character.
// Either way the output is valid UTF-8.
enum class JsonText { kLatin1, kUtf8 };

void append_json_string(std::string* out, std::string_view s, JsonText text = JsonText::kLatin1);
// Shortest text that reads back as the same double, laid out as Python's
// repr(float) does: fixed notation for decimal exponents -4..15, else
// exponent form ("100.0", "0.0001", "1e-05", "1e+16").
std::string py_float_repr(double d);
// py_float_repr, with NaN/Infinity as Python's json writes them.
std::string json_number(double d);

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 1, JsonText text = JsonText::kLatin1) : indent_(indent), text_(text) {}
  JsonWriter& begin_object() { value_prefix(); out_ += '{'; stack_.push_back(true); first_ = true; return *this; }
  JsonWriter& end_object() { close('}'); return *this; }
  JsonWriter& begin_array() { value_prefix(); out_ += '['; stack_.push_back(false); first_ = true; return *this; }
  JsonWriter& end_array() { close(']'); return *this; }
  JsonWriter& key(std::string_view k) {
    if (!first_) out_ += ',';
    newline();
    append_json_string(&out_, k, text_);
    out_ += indent_ ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) { value_prefix(); append_json_string(&out_, s, text_); return *this; }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) { value_prefix(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(double d) { value_prefix(); out_ += json_number(d); return *this; }
  JsonWriter& value(int v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(long v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(unsigned long v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(long long v) { value_prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& null() { value_prefix(); out_ += "null"; return *this; }
  // An array of strings.
  JsonWriter& strings(const std::vector<std::string>& items) {
    begin_array();
    for (const auto& s : items) value(s);
    return end_array();
  }
  JsonWriter& raw(std::string_view json) { value_prefix(); out_ += json; return *this; }
  // How the strings written from now on read their bytes (a writer of log
  // text names files and systems too, which are UTF-8).
  JsonWriter& text(JsonText t) { text_ = t; return *this; }
  const std::string& str() const { return out_; }

 private:
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      first_ = false;
      return;
    }
    if (!stack_.empty()) {
      if (!first_) out_ += ',';
      newline();
    }
    first_ = false;
  }
  void close(char c) {
    stack_.pop_back();
    if (!first_) newline();
    out_ += c;
    first_ = false;
  }
  void newline() {
    if (!indent_) return;
    out_ += '\n';
    out_.append(stack_.size() * static_cast<size_t>(indent_), ' ');
  }
  std::string out_;
  std::vector<bool> stack_;
  bool first_ = true;
  bool after_key_ = false;
  int indent_;
  JsonText text_;
};

}  // namespace referee::mllog
