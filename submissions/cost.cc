#include "submissions/cost.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace referee::submissions {

bool parse_price(const std::string& text, Price::Per per, Price* out, std::string* error) {
  errno = 0;
  char* end = nullptr;
  double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v) || v <= 0) {
    if (error) *error = "price '" + text + "' is not a number greater than 0 (e.g. 2.5 or 37000)";
    return false;
  }
  out->per = per;
  out->amount = v;
  return true;
}

bool accelerator_hours(const ResultRow& r, double* hours) {
  if (!r.has_score || r.accelerators <= 0) return false;
  *hours = static_cast<double>(r.accelerators) * r.score / 60.0;
  return true;
}

bool run_cost(const ResultRow& r, const Price& price, double* cost) {
  if (price.per == Price::Per::None || !r.has_score) return false;
  if (price.per == Price::Per::AcceleratorHour) {
    double h = 0;
    if (!accelerator_hours(r, &h)) return false;
    *cost = h * price.amount;
    return std::isfinite(*cost);  // a price near the largest double overflows: no cost, not "Infinity"
  }
  if (r.nodes <= 0) return false;
  *cost = static_cast<double>(r.nodes) * (r.score / 60.0) * price.amount / kHoursPerMonth;
  return std::isfinite(*cost);
}

std::string price_unit(const Price& price) {
  switch (price.per) {
    case Price::Per::AcceleratorHour: return "per accelerator-hour";
    case Price::Per::NodeMonth: return "per node-month";
    case Price::Per::None: break;
  }
  return "";
}

}  // namespace referee::submissions
