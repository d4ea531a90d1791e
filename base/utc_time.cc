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

}  // namespace referee::base
