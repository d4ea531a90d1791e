// Terminal tables: columns padded to their widest cell, numbers right-aligned.
// The questions' text answers (submissions/render.h) and the commands print them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace referee::submissions {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double x, int decimals);
std::string percent(double x, int decimals);
// A score in minutes in text, to four significant digits (0.1193, 3.440,
// 11.77, 224.0; 1234 from a thousand on): enough to tell apart results that
// differ by a few tenths of a percent: speedup tables, sentences and the
// pages' tables (the page script rounds the same way); leaderboard and
// compare print four decimals.
std::string minutes_text(double minutes);

}  // namespace referee::submissions
