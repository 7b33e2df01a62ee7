#include "base/begin_time.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/duration.h"

#include "base/ascii.h"

namespace gshare {
namespace {

constexpr std::string_view kBeginForms =
    "expected now[+DUR], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], today, tomorrow, midnight, noon, "
    "teatime or @UNIX_SECONDS";
constexpr std::string_view kLimitForms =
    "expected minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], a duration such as 1h30m, or UNLIMITED";
// More digits than this in a count of seconds would lose exactness in a double.
constexpr size_t kMaxSecondsDigits = 15;

Status BadBegin(std::string_view text, std::string_view why) {
  return Status::Error("bad begin time \"" + std::string(text) + "\": " + std::string(why));
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Reads min_digits..max_digits decimal digits at text[*pos], advancing *pos past them.
std::optional<int> ReadInt(std::string_view text, size_t* pos, size_t min_digits,
                           size_t max_digits) {
  size_t i = *pos;
  int value = 0;
  for (; i < text.size() && IsAsciiDigit(text[i]) && i - *pos < max_digits; ++i) {
    value = value * 10 + (text[i] - '0');
  }
  if (i - *pos < min_digits) return std::nullopt;
  *pos = i;
  return value;
}

// A local calendar time as a wall clock shows it; month 1-12.
struct LocalTime {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0;
};

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

LocalTime NextDay(LocalTime t) {
  if (++t.day > DaysInMonth(t.year, t.month)) {
    t.day = 1;
    if (++t.month > 12) {
      t.month = 1;
      ++t.year;
    }
  }
  return t;
}

LocalTime PreviousDay(LocalTime t) {
  if (--t.day < 1) {
    if (--t.month < 1) {
      t.month = 12;
      --t.year;
    }
    t.day = DaysInMonth(t.year, t.month);
  }
  return t;
}

// Which way from `now` a form such as 12:00 or noon resolves: a begin time looks ahead (the
// next such instant), a past time back (the last one).
enum class Toward { kAhead, kBack };

// The local date at `now`, at 00:00:00; nullopt when localtime_r cannot represent it.
std::optional<LocalTime> DateAt(double now) {
  if (!(std::fabs(now) < 1e15)) return std::nullopt;  // also NaN; keeps the cast defined
  time_t seconds = static_cast<time_t>(std::floor(now));
  tm fields;
  if (localtime_r(&seconds, &fields) == nullptr) return std::nullopt;
  return LocalTime{fields.tm_year + 1900, fields.tm_mon + 1, fields.tm_mday};
}

bool Shows(time_t t, const LocalTime& want) {
  tm f;
  if (localtime_r(&t, &f) == nullptr) return false;
  return f.tm_year + 1900 == want.year && f.tm_mon + 1 == want.month && f.tm_mday == want.day &&
         f.tm_hour == want.hour && f.tm_min == want.minute && f.tm_sec == want.second;
}

// The instants at which the local clock shows `want`, ascending: two in the hour that a DST
// change repeats, one otherwise. In an hour that a DST change skips no instant shows it; then
// the one instant that reads `want` with the offset in force before the skip (PEP 495 fold=0).
// Empty when mktime cannot represent the time. `want` must hold in-range fields.
std::vector<time_t> InstantsOf(const LocalTime& want) {
  std::vector<time_t> shown, read;
  // mktime with tm_isdst 0 and 1 reads the fields with the standard and the DST offset; the
  // round trip through localtime_r keeps only the readings that the zone really uses then.
  for (int isdst : {0, 1}) {
    tm fields{};
    fields.tm_year = want.year - 1900;
    fields.tm_mon = want.month - 1;
    fields.tm_mday = want.day;
    fields.tm_hour = want.hour;
    fields.tm_min = want.minute;
    fields.tm_sec = want.second;
    fields.tm_isdst = isdst;
    time_t t = mktime(&fields);
    bool shows = Shows(t, want);
    if (t == static_cast<time_t>(-1) && !shows) continue;  // -1 is also 1969-12-31 23:59:59Z
    read.push_back(t);
    if (shows) shown.push_back(t);
  }
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  if (!shown.empty() || read.empty()) return shown;
  // Skipped: a gap comes from the UTC offset growing, so the reading with the smaller offset,
  // the one in force before the gap, is the later instant.
  return {*std::max_element(read.begin(), read.end())};
}

// The earliest instant at or after `now` (kAhead), or the latest at or before it (kBack), at
// which the local clock shows hour:minute:second.
Result<double> ClockAt(Toward dir, std::string_view text, int hour, int minute, int second,
                       double now) {
  std::optional<LocalTime> day = DateAt(now);
  if (!day) return BadBegin(text, "current time out of range");
  // The next (previous) day's instant always lies past `now`, unless the zone skips all of that
  // day (Samoa skipped 2011-12-30), hence a third day.
  for (int i = 0; i < 3; ++i, day = dir == Toward::kAhead ? NextDay(*day) : PreviousDay(*day)) {
    day->hour = hour;
    day->minute = minute;
    day->second = second;
    std::vector<time_t> instants = InstantsOf(*day);
    if (dir == Toward::kBack) std::reverse(instants.begin(), instants.end());
    for (time_t t : instants) {
      const double at = static_cast<double>(t);
      if (dir == Toward::kAhead ? at >= now : at <= now) return at;
    }
  }
  return BadBegin(text, "time out of range");
}

Result<double> AtLocal(std::string_view text, const LocalTime& t) {
  std::vector<time_t> instants = InstantsOf(t);
  if (instants.empty()) return BadBegin(text, "time out of range");
  return static_cast<double>(instants.front());
}

// "H[H]:MM[:SS]" as all of `clock`; `text` is the whole input, for messages.
Status ParseClock(std::string_view clock, std::string_view text, LocalTime* t) {
  size_t pos = 0;
  std::optional<int> hour = ReadInt(clock, &pos, 1, 2);
  if (!hour || pos >= clock.size() || clock[pos++] != ':') return BadBegin(text, kBeginForms);
  std::optional<int> minute = ReadInt(clock, &pos, 2, 2);
  if (!minute) return BadBegin(text, kBeginForms);
  std::optional<int> second = 0;
  if (pos < clock.size()) {
    if (clock[pos++] != ':' || !(second = ReadInt(clock, &pos, 2, 2))) {
      return BadBegin(text, kBeginForms);
    }
  }
  if (pos != clock.size()) return BadBegin(text, kBeginForms);
  if (*hour > 23) return BadBegin(text, "hour " + std::to_string(*hour) + " out of range");
  if (*minute > 59) return BadBegin(text, "minute " + std::to_string(*minute) + " out of range");
  if (*second > 59) return BadBegin(text, "second " + std::to_string(*second) + " out of range");
  t->hour = *hour;
  t->minute = *minute;
  t->second = *second;
  return Status::Ok();
}

// "YYYY-MM-DD[tH[H]:MM[:SS]]" (already lower case).
Result<double> ParseDate(std::string_view s, std::string_view text) {
  size_t pos = 0;
  LocalTime t;
  std::optional<int> year = ReadInt(s, &pos, 4, 4);
  bool dash1 = pos < s.size() && s[pos++] == '-';
  std::optional<int> month = ReadInt(s, &pos, 1, 2);
  bool dash2 = pos < s.size() && s[pos++] == '-';
  std::optional<int> day = ReadInt(s, &pos, 1, 2);
  if (!year || !dash1 || !month || !dash2 || !day) return BadBegin(text, kBeginForms);
  if (pos < s.size()) {
    if (s[pos] != 't') return BadBegin(text, kBeginForms);
    Status clock = ParseClock(s.substr(pos + 1), text, &t);
    if (!clock.ok()) return clock;
  }
  if (*month < 1 || *month > 12) {
    return BadBegin(text, "month " + std::to_string(*month) + " out of range");
  }
  if (*day < 1 || *day > DaysInMonth(*year, *month)) {
    return BadBegin(text, "day " + std::to_string(*day) + " out of range for " +
                              std::string(s.substr(0, 4)) + "-" + (*month < 10 ? "0" : "") +
                              std::to_string(*month));
  }
  t.year = *year;
  t.month = *month;
  t.day = *day;
  return AtLocal(text, t);
}

// What follows "now+": a ParseDuration duration or Slurm's N<word>.
Result<double> ParseRelative(std::string_view amount, std::string_view text, double now) {
  size_t digits = amount.find_first_not_of("0123456789");
  if (digits != 0 && digits != std::string_view::npos && digits <= kMaxSecondsDigits) {
    std::string_view word = amount.substr(digits);
    int64_t unit = 0;
    if (word == "second" || word == "seconds") unit = 1;
    if (word == "minute" || word == "minutes") unit = 60;
    if (word == "hour" || word == "hours") unit = 3600;
    if (word == "day" || word == "days") unit = 86400;
    if (word == "week" || word == "weeks") unit = 7 * 86400;
    if (unit != 0) {
      int64_t count = 0;
      for (char c : amount.substr(0, digits)) count = count * 10 + (c - '0');
      return now + static_cast<double>(count) * static_cast<double>(unit);
    }
  }
  Result<std::chrono::milliseconds> d = ParseDuration(amount);
  if (!d.ok() || amount.empty() || amount.front() == ' ') {
    return BadBegin(text, "expected now+DUR such as now+1h, now+90s or now+2days");
  }
  return now + static_cast<double>(d->count()) / 1000.0;
}

// What follows "@": N or N.F unix seconds.
Result<double> ParseUnixSeconds(std::string_view number, std::string_view text) {
  size_t whole_end = number.find_first_not_of("0123456789");
  if (whole_end == std::string_view::npos) whole_end = number.size();
  bool ok = whole_end > 0 && whole_end <= kMaxSecondsDigits;
  double value = 0;
  for (size_t i = 0; ok && i < whole_end; ++i) value = value * 10 + (number[i] - '0');
  if (ok && whole_end < number.size()) {
    std::string_view fraction = number.substr(whole_end + 1);
    ok = number[whole_end] == '.' && !fraction.empty() &&
         fraction.find_first_not_of("0123456789") == std::string_view::npos;
    double scale = 0.1;
    for (size_t i = 0; ok && i < fraction.size(); ++i, scale /= 10) {
      value += (fraction[i] - '0') * scale;
    }
  }
  if (!ok) return BadBegin(text, "expected @UNIX_SECONDS such as @1700000000 or @1700000000.5");
  return value;
}

constexpr std::string_view kPastForms =
    "expected now[-DUR], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], today, yesterday, midnight, noon, "
    "fika, teatime or @UNIX_SECONDS";

// The clocks that have a name, each way.
struct NamedClock {
  std::string_view name;
  int hour;
};
constexpr NamedClock kAheadClocks[] = {{"midnight", 0}, {"noon", 12}, {"teatime", 16}};
constexpr NamedClock kBackClocks[] = {{"noon", 12}, {"fika", 15}, {"teatime", 16}};

// The forms of a begin time (kAhead) or of a past time (kBack) in `t`, trimmed and not empty.
// Both read now[+DUR], @UNIX_SECONDS, a date and a clock, and today (its 00:00); ahead also
// tomorrow and the named clocks of kAheadClocks; back also now-DUR, yesterday, midnight (today's
// 00:00) and those of kBackClocks.
Result<double> ParseForms(std::string_view t, double now, Toward dir) {
  const bool back = dir == Toward::kBack;
  std::string s = Lower(t);
  if (s == "now") return now;
  if (s.starts_with("now+")) return ParseRelative(std::string_view(s).substr(4), t, now);
  if (back && s.starts_with("now-")) {
    // The same amounts as now+, counted back.
    Result<double> ahead = ParseRelative(std::string_view(s).substr(4), t, now);
    if (!ahead.ok()) return BadBegin(t, "expected now-DUR such as now-1day, now-2hours or now-90m");
    return now - (ahead.value() - now);
  }
  const bool next_day = s == (back ? "yesterday" : "tomorrow");
  if (s == "today" || next_day || (back && s == "midnight")) {
    std::optional<LocalTime> day = DateAt(now);
    if (!day) return BadBegin(t, "current time out of range");
    if (next_day) day = back ? PreviousDay(*day) : NextDay(*day);
    return AtLocal(t, *day);
  }
  for (const NamedClock& c : back ? std::span(kBackClocks) : std::span(kAheadClocks)) {
    if (s == c.name) return ClockAt(dir, t, c.hour, 0, 0, now);
  }
  if (s[0] == '@') return ParseUnixSeconds(std::string_view(s).substr(1), t);
  if (s.size() > 4 && s[4] == '-') return ParseDate(s, t);
  if (s.find(':') != std::string::npos) {
    LocalTime clock;
    Status status = ParseClock(s, t, &clock);
    if (!status.ok()) return status;
    return ClockAt(dir, t, clock.hour, clock.minute, clock.second, now);
  }
  return BadBegin(t, back ? kPastForms : kBeginForms);
}

}  // namespace

Result<double> ParseBeginTime(std::string_view text, double now) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty begin time");
  Result<double> b = ParseForms(t, now, Toward::kAhead);
  // Later than kMaxDuration from now is a typo, and would overflow the daemon's clocks.
  const double max_ahead = static_cast<double>(kMaxDuration.count()) / 1000.0;
  if (b.ok() && !(b.value() <= now + max_ahead)) return BadBegin(t, "more than 3650 days ahead");
  return b;
}

Result<double> ParsePastTime(std::string_view text, double now) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty time");
  Result<double> past = ParseForms(t, now, Toward::kBack);
  if (past.ok()) return past;
  // The shared readers name a begin time; this is any time, and its forms are the past's.
  std::string message = past.status().message();
  const std::string begin = "bad begin time";
  if (message.starts_with(begin)) message.replace(0, begin.size(), "bad time");
  const std::string forms(kBeginForms);
  if (size_t at = message.find(forms); at != std::string::npos) {
    message.replace(at, forms.size(), kPastForms);
  }
  return Status::Error(message);
}

Result<std::chrono::milliseconds> ParseTimeLimit(std::string_view text) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty time limit");
  std::string lower = Lower(t);
  if (lower == "unlimited" || lower == "infinite") return std::chrono::milliseconds(0);
  // sbatch(1) --time: "Acceptable time formats include "minutes", ..." -- a bare number is
  // minutes here, where ParseDuration would read seconds.
  bool bare = t.find_first_not_of("0123456789.") == std::string_view::npos;
  std::string duration = bare ? std::string(t) + "m" : lower;
  Result<std::chrono::milliseconds> d = ParseDuration(duration);
  if (d.ok()) return d;
  // ParseDuration says 'bad duration "X": why'; keep the why, under our own name for the input.
  std::string reason = d.status().message();
  std::string prefix = "bad duration \"" + duration + "\": ";
  if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
  return Status::Error("bad time limit \"" + std::string(t) + "\": " + reason + "; " +
                       std::string(kLimitForms));
}

}  // namespace gshare
