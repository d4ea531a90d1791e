#include "submissions/table.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "base/text.h"

namespace referee::submissions {

namespace {
bool numeric(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '%' || c == 'x' || c == ','; });
}
}  // namespace

void Table::print(std::ostream& os) const {
  // Each cell as one line, its control characters and the characters that
  // reorder or hide text shown (base::one_line), and then measured: widths in
  // terminal columns of what is shown, not bytes ("Müller" and "NVIDIA" take
  // six each, "a^[b" four), so a name cannot shift the columns after it.
  auto shown = [](const std::vector<std::string>& r) {
    std::vector<std::string> out;
    out.reserve(r.size());
    for (const std::string& c : r) out.push_back(base::one_line(c));
    return out;
  };
  const std::vector<std::string> header = shown(header_);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (const auto& r : rows_) rows.push_back(shown(r));
  std::vector<size_t> w(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) w[i] = base::display_width(header[i]);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], base::display_width(r[i]));
  auto line = [&](const std::vector<std::string>& r, bool head) {
    for (size_t i = 0; i < w.size(); ++i) {
      std::string c = i < r.size() ? r[i] : "";
      std::string pad(w[i] - base::display_width(c), ' ');
      os << (i ? "  " : "") << (!head && numeric(c) ? pad + c : c + (i + 1 < w.size() ? pad : ""));
    }
    os << "\n";
  };
  line(header, true);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  line(rule, true);
  for (const auto& r : rows) line(r, false);
}

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string minutes_text(double minutes) {
  double a = minutes < 0 ? -minutes : minutes;
  int decimals = a < 1 ? 4 : a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0;
  // 9.99995 would print as "10.000": the rounding decides the width.
  if (a < 1000 && std::stod(fixed(a, decimals)) >= (a < 1 ? 1 : a < 10 ? 10 : a < 100 ? 100 : 1000) && decimals > 0) --decimals;
  return fixed(minutes, decimals);
}

std::string percent(double x, int decimals) { return fixed(x * 100, decimals) + "%"; }

}  // namespace referee::submissions
