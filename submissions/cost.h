// The cost of speed: accelerator-hours to train, and what one training run
// costs at a price the user gives.
//
// accelerator-hours = accelerators x time to train (the result's score, in
// hours). A price is per accelerator-hour, or per node-month as cloud
// providers quote servers (one node = the system's accelerators per node;
// a month = 730 hours, 365 x 24 / 12).
#pragma once

#include <string>

#include "submissions/queries.h"

namespace referee::submissions {

inline constexpr double kHoursPerMonth = 730.0;

struct Price {
  enum class Per { None, AcceleratorHour, NodeMonth };
  Per per = Per::None;
  double amount = 0;
};

// Parses "--price-per-accelerator-hour 2.5" / "--price-per-node-month 37000"
// values: a finite number > 0. False with *error otherwise.
bool parse_price(const std::string& text, Price::Per per, Price* out, std::string* error);

// false when the result has no score or no accelerator count.
bool accelerator_hours(const ResultRow& r, double* hours);

// The cost of one training run (the score's time) at `price`: false when
// the price is None, the result has no score or size, or (per node-month)
// no node count.
bool run_cost(const ResultRow& r, const Price& price, double* cost);

// "per accelerator-hour" / "per node-month" / "".
std::string price_unit(const Price& price);

}  // namespace referee::submissions
