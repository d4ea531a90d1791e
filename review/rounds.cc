// The pure parts of a round's review (review/rounds.h): dates and the
// schedule, the pairing plan, whether logs were announced.
#include "review/rounds.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "base/text.h"

namespace referee::review {

using submissions::Stmt;
using submissions::Store;

// ------------------------------------------------------------ dates

namespace {

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  long long era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

void civil_from_days(long long z, int* y, unsigned* m, unsigned* d) {
  z += 719468;
  long long era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long yy = static_cast<long long>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(yy + (*m <= 2));
}

bool digits(const std::string& s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string format_instant(long long days, int hh, int mm, int ss) {
  int y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y, m, d, hh, mm, ss);
  return buf;
}

// Splits a normalised instant into days since the epoch and the time of day.
void split_instant(const std::string& norm, long long* days, int* hh, int* mm, int* ss) {
  int y = 0, mo = 0, d = 0;
  digits(norm, 0, 4, &y);
  digits(norm, 5, 2, &mo);
  digits(norm, 8, 2, &d);
  digits(norm, 11, 2, hh);
  digits(norm, 14, 2, mm);
  digits(norm, 17, 2, ss);
  *days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
}

}  // namespace

std::vector<std::pair<const char*, std::string Schedule::*>> schedule_fields() {
  return {{"submission_deadline", &Schedule::submission_deadline}, {"objections_due", &Schedule::objections_due},
          {"responses_due", &Schedule::responses_due},             {"decisions_due", &Schedule::decisions_due},
          {"scores_final", &Schedule::scores_final},               {"publication", &Schedule::publication},
          {"first_meeting", &Schedule::first_meeting}};
}

bool parse_instant(const std::string& text, std::string* out, std::string* error) {
  auto bad = [&](const std::string& why) {
    *error = "'" + text + "' is not a date (" + why +
             "); expected an ISO-8601 date or date-time in UTC: 2026-05-02, 2026-05-02T17:00 or 2026-05-02T17:00:00Z";
    return false;
  };
  int y, mo, d;
  if (text.size() < 10 || !digits(text, 0, 4, &y) || text[4] != '-' || !digits(text, 5, 2, &mo) || text[7] != '-' ||
      !digits(text, 8, 2, &d))
    return bad("the date must be YYYY-MM-DD");
  if (mo < 1 || mo > 12) return bad("month " + std::to_string(mo));
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d < 1 || d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap)) return bad("no day " + std::to_string(d) + " in that month");
  long long days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  if (text.size() == 10) {
    *out = format_instant(days, 23, 59, 59);
    return true;
  }
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return bad("a time follows the date after a T");
  int hh, mm, ss = 0;
  if (!digits(text, 11, 2, &hh) || text.size() < 16 || text[13] != ':' || !digits(text, 14, 2, &mm))
    return bad("the time must be HH:MM or HH:MM:SS");
  size_t at = 16;
  if (at < text.size() && text[at] == ':') {
    if (!digits(text, 17, 2, &ss)) return bad("the time must be HH:MM or HH:MM:SS");
    at = 19;
    if (at < text.size() && text[at] == '.') {  // fractions of a second are dropped
      ++at;
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    }
  }
  if (hh > 23 || mm > 59 || ss > 59) return bad("no such time of day");
  std::string zone = text.substr(at);
  if (!zone.empty() && zone != "Z" && zone != "z" && zone != "+00:00" && zone != "+0000")
    return bad("times are in UTC: end with Z or nothing");
  *out = format_instant(days, hh, mm, ss);
  return true;
}

bool schedule_in_order(const Schedule& s, std::string* error) {
  auto fields = schedule_fields();
  const char* prev_name = nullptr;
  std::string prev;
  for (size_t i = 0; i + 1 < fields.size(); ++i) {  // first_meeting is outside the chain
    const std::string& v = s.*(fields[i].second);
    if (v.empty()) continue;
    if (!prev.empty() && v < prev) {
      *error = std::string(fields[i].first) + " (" + v + ") is before " + prev_name + " (" + prev +
               "); the schedule runs submission_deadline <= objections_due <= responses_due <= decisions_due <= "
               "scores_final <= publication";
      return false;
    }
    prev = v;
    prev_name = fields[i].first;
  }
  if (!s.first_meeting.empty() && !s.submission_deadline.empty() && s.first_meeting < s.submission_deadline) {
    *error = "first_meeting (" + s.first_meeting + ") is before submission_deadline (" + s.submission_deadline + ")";
    return false;
  }
  return true;
}

bool default_schedule(const std::string& deadline, Schedule* out, std::string* error) {
  std::string d;
  if (!parse_instant(deadline, &d, error)) return false;
  *out = Schedule{};
  out->submission_deadline = d;
  long long days = 0;
  int hh = 0, mm = 0, ss = 0;
  split_instant(d, &days, &hh, &mm, &ss);
  out->objections_due = format_instant(days + 7, hh, mm, ss);
  // The Monday of review week 2 (days + 8 .. days + 14): 1970-01-01 was a Thursday.
  long long monday = days + 8;
  while (((monday % 7) + 7 + 3) % 7 != 0) ++monday;  // (days + 3) % 7 == 0 on a Monday
  out->responses_due = format_instant(monday, 23, 59, 59);
  out->decisions_due = format_instant(days + 14, hh, mm, ss);
  out->scores_final = format_instant(days + 21, hh, mm, ss);
  out->publication = format_instant(days + 28, hh, mm, ss);
  return true;
}

// ------------------------------------------------------------ pairings

namespace {

// The partners of a joint submission's folder name (Azure+NVIDIA -> azure, nvidia).
std::set<std::string> partners(const std::string& org) {
  std::set<std::string> out;
  for (const auto& p : base::split(org, '+'))
    if (!p.empty()) out.insert(base::lower(p));
  return out;
}

}  // namespace

bool same_party(const std::string& a, const std::string& b) {
  auto pa = partners(a), pb = partners(b);
  for (const auto& x : pa)
    if (pb.count(x)) return true;
  return false;
}

std::vector<PairingPlan> plan_pairings(std::vector<SubmitterCount> subs) {
  std::sort(subs.begin(), subs.end(), [](const SubmitterCount& a, const SubmitterCount& b) {
    if (a.results != b.results) return a.results > b.results;
    return a.organisation < b.organisation;
  });
  std::vector<PairingPlan> out;
  std::set<std::pair<std::string, std::string>> have;
  auto add = [&](const std::string& a, const std::string& b, const char* reason) {
    if (a == b || same_party(a, b) || !have.insert({a, b}).second) return;
    out.push_back({a, b, reason});
  };
  size_t n = subs.size();
  for (size_t i = 0; i + 1 < n; i += 2) {
    bool three = n % 2 == 1 && i + 3 == n;  // the odd one out joins the last pair
    size_t end = three ? i + 3 : i + 2;
    // A joint submission is not paired with one of its partners: the next
    // submitter down the ranking that shares no partner with the group moves up.
    for (size_t k = i + 1; k < end; ++k) {
      auto clashes = [&](size_t j) {
        for (size_t g = i; g < k; ++g)
          if (same_party(subs[g].organisation, subs[j].organisation)) return true;
        return false;
      };
      if (!clashes(k)) continue;
      for (size_t j = k + 1; j < n; ++j)
        if (!clashes(j)) {
          std::rotate(subs.begin() + static_cast<long>(k), subs.begin() + static_cast<long>(j),
                      subs.begin() + static_cast<long>(j) + 1);
          break;
        }
    }
    for (size_t a = i; a < end; ++a)
      for (size_t b = i; b < end; ++b) add(subs[a].organisation, subs[b].organisation, "rank");
    if (three) break;
  }
  std::vector<std::string> big;
  for (const auto& s : subs)
    if (s.max_accelerators >= 512) big.push_back(s.organisation);
  for (const auto& a : big)
    for (const auto& b : big) add(a, b, "scale-512");
  return out;
}

bool announced(Store& s, long long result_id) {
  Stmt q(s.db(), "SELECT 1 FROM announcements WHERE result_id = ?1 LIMIT 1");
  q.bind(1, result_id);
  return q.step();
}

}  // namespace referee::review
