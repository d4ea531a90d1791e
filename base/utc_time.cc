#include "base/utc_time.h"

#include <cstdio>

namespace referee::base {

std::string utc_string(std::chrono::system_clock::time_point t, UtcFormat f) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  long long secs = ms / 1000, frac = ms % 1000;
  if (frac < 0) frac += 1000, secs -= 1;  // before 1970: floor, not toward zero
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  int y = tm.tm_year + 1900, mo = tm.tm_mon + 1;
  switch (f) {
    case UtcFormat::Seconds:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, tm.tm_mday, tm.tm_hour, tm.tm_min,
                    tm.tm_sec);
      break;
    case UtcFormat::Millis:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, tm.tm_mday, tm.tm_hour, tm.tm_min,
                    tm.tm_sec, static_cast<int>(frac));
      break;
    case UtcFormat::Compact:
      std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ", y, mo, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
      break;
    case UtcFormat::Date:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, mo, tm.tm_mday);
      break;
  }
  return buf;
}

std::string utc_string(std::time_t t, UtcFormat f) {
  return utc_string(std::chrono::system_clock::from_time_t(t), f);
}

std::string utc_now(UtcFormat f) { return utc_string(std::chrono::system_clock::now(), f); }

bool parse_utc(const std::string& text, std::time_t* out) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = 0;
  std::tm tm{};
  if (text.size() == 10 && std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == 10) {
  } else if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) == 6 && used == 19) {
    size_t at = 19;
    if (at < text.size() && text[at] == '.') {
      ++at;
      size_t digits = 0;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at, ++digits;
      if (digits == 0) return false;
    }
    if (at + 1 != text.size() || text[at] != 'Z') return false;
  } else {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  *out = timegm(&tm);
  return true;
}

}  // namespace referee::base
