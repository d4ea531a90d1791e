#include "submissions/csv.h"

#include <charconv>
#include <cmath>

namespace referee::submissions {

std::string csv_field(std::string_view s) {
  std::string v;
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r')) v = "'";
  v.append(s);
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

void Csv::sep() {
  if (row_started_) out_ += ',';
  row_started_ = true;
}

Csv& Csv::text(std::string_view s) {
  sep();
  out_ += csv_field(s);
  return *this;
}

std::string csv_number(double x) {
  if (!std::isfinite(x)) return "";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

Csv& Csv::number(double x) {
  sep();
  out_ += csv_number(x);
  return *this;
}

Csv& Csv::integer(long long x) {
  sep();
  out_ += std::to_string(x);
  return *this;
}

Csv& Csv::boolean(bool b) {
  sep();
  out_ += b ? "true" : "false";
  return *this;
}

Csv& Csv::empty() {
  sep();
  return *this;
}

void Csv::end_row() {
  out_ += "\r\n";
  row_started_ = false;
}

}  // namespace referee::submissions
