// Numbers as the review's text output shows them. JSON keeps every digit;
// text rounds, so that a reader sees 0.9193 min, not 0.91928265993266 min.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "mllog/json_writer.h"

namespace referee::review {

// A score in minutes: 4 decimals ("0.8545").
inline std::string minutes_text(double minutes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4f", minutes);
  return b;
}

// A scaling factor as it was given, up to 8 decimals ("1.0758",
// "1.07575758"; 1.0757575757575757 shows as "1.07575758").
inline std::string factor_text(double factor) {
  std::string given = mllog::py_float_repr(factor);
  size_t dot = given.find('.');
  if (given.find_first_of("eEn") == std::string::npos && (dot == std::string::npos || given.size() - dot - 1 <= 8))
    return given;
  char b[64];
  std::snprintf(b, sizeof b, "%.8f", factor);
  std::string s = b;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s += '0';
  }
  return s;
}

// Any other figure: 6 significant digits ("7.33333", "2", "1.5e-07").
inline std::string figure_text(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// A figure with its unit: minutes ("min") as minutes_text, others as figure_text.
inline std::string figure_unit_text(double v, const std::string& unit) {
  return unit == "min" ? minutes_text(v) : figure_text(v);
}

}  // namespace referee::review
