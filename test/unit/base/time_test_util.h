// What the tests of the time parsers (base/begin_time.h: begin times, and past times for
// `gshare acct`) share: a TZ for one test, and the fixed "now" they count from.
#pragma once

#include <stdlib.h>
#include <time.h>

#include <optional>
#include <string>

namespace gshare::unit_time {

// Sets TZ for one test and puts the old value back (tzset(3) after each change). Not
// thread-safe: the process's environment and time zone change.
class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    if (const char* old = getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old_)
      setenv("TZ", old_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> old_;
};

// 2024-03-15 10:30:00 UTC, a Friday (seconds since the epoch).
inline constexpr double kNow = 1710498600;
inline constexpr double kHour = 3600;
inline constexpr double kDay = 86400;

}  // namespace gshare::unit_time
