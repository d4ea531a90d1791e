// CSV as the questions print it (`--csv`), RFC 4180: records end with CRLF;
// a field holding a comma, a double quote, CR or LF is quoted, its quotes
// doubled; the first record is a header. Numbers are written in full
// precision, as the shortest decimal that reads back as the same double
// (10.94, 0.9310344827586207), never rounded for display; an absent value is
// an empty field. A text field that a spreadsheet would take for a formula
// (first character = + - @, tab or CR) is prefixed with ' .
#pragma once

#include <string>
#include <string_view>

namespace referee::submissions {

class Csv {
 public:
  Csv& text(std::string_view s);
  Csv& number(double x);  // not finite: an empty field
  Csv& integer(long long x);
  Csv& boolean(bool b);  // true / false
  Csv& empty();
  void end_row();  // CRLF
  const std::string& str() const { return out_; }

 private:
  void sep();
  std::string out_;
  bool row_started_ = false;
};

// A number as Csv::number writes it ("" when not finite).
std::string csv_number(double x);

// One text field, quoted and guarded as Csv::text writes it.
std::string csv_field(std::string_view s);

}  // namespace referee::submissions
