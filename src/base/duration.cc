#include "base/duration.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "base/ascii.h"

namespace gshare {
namespace {

constexpr int64_t kMsPerSecond = 1000;
constexpr int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr int64_t kMsPerDay = 24 * kMsPerHour;
// Digits of a fraction beyond this cannot change a millisecond count of a unit <= 1 day.
constexpr int kMaxFractionDigits = 9;

Status Bad(std::string_view text, std::string_view why) {
  return Status::Error("bad duration \"" + std::string(text) + "\": " + std::string(why));
}

// A decimal number "123" or "1.25" read at text[*pos], advancing *pos past it.
struct Decimal {
  int64_t whole = 0;
  int64_t fraction = 0;  // the first fraction_digits digits after the point
  int fraction_digits = 0;
};

// Returns nullopt when no digit is at *pos or the whole part overflows; sets *overflow then.
std::optional<Decimal> ReadDecimal(std::string_view text, size_t* pos, bool allow_point,
                                   bool* overflow) {
  Decimal d;
  size_t i = *pos;
  if (i >= text.size() || !IsAsciiDigit(text[i])) return std::nullopt;
  for (; i < text.size() && IsAsciiDigit(text[i]); ++i) {
    if (__builtin_mul_overflow(d.whole, 10, &d.whole) ||
        __builtin_add_overflow(d.whole, text[i] - '0', &d.whole)) {
      *overflow = true;
      return std::nullopt;
    }
  }
  if (allow_point && i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || !IsAsciiDigit(text[i])) return std::nullopt;  // "1." is a typo
    for (; i < text.size() && IsAsciiDigit(text[i]); ++i) {
      if (d.fraction_digits < kMaxFractionDigits) {
        d.fraction = d.fraction * 10 + (text[i] - '0');
        ++d.fraction_digits;
      }
    }
  }
  *pos = i;
  return d;
}

// d * unit_ms, rounded to the nearest millisecond; nullopt on overflow.
std::optional<int64_t> ToMs(const Decimal& d, int64_t unit_ms) {
  int64_t ms;
  if (__builtin_mul_overflow(d.whole, unit_ms, &ms)) return std::nullopt;
  if (d.fraction_digits > 0) {
    int64_t scale = 1;
    for (int i = 0; i < d.fraction_digits; ++i) scale *= 10;
    // fraction < 1e9 and unit_ms <= 8.64e7, so the product fits in 64 bits.
    int64_t part = (d.fraction * unit_ms + scale / 2) / scale;
    if (__builtin_add_overflow(ms, part, &ms)) return std::nullopt;
  }
  return ms;
}

// Slurm's "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS" (integers only).
Result<std::chrono::milliseconds> ParseColonForm(std::string_view text) {
  std::vector<int64_t> fields;
  std::optional<int64_t> days;
  size_t pos = 0;
  bool overflow = false;
  while (true) {
    std::optional<Decimal> d = ReadDecimal(text, &pos, /*allow_point=*/false, &overflow);
    if (!d) return Bad(text, overflow ? "too large" : "expected D-HH:MM:SS, HH:MM:SS or MM:SS");
    if (pos < text.size() && text[pos] == '-' && !days && fields.empty()) {
      days = d->whole;
      ++pos;
      continue;
    }
    fields.push_back(d->whole);
    if (pos == text.size()) break;
    if (text[pos] != ':') return Bad(text, "expected D-HH:MM:SS, HH:MM:SS or MM:SS");
    ++pos;
  }
  // Units of the fields from the left: with days they are H[:M[:S]], without M:S or H:M:S.
  std::vector<int64_t> units;
  if (days) {
    if (fields.size() > 3) return Bad(text, "too many fields after the days");
    units = {kMsPerHour, kMsPerMinute, kMsPerSecond};
  } else if (fields.size() == 2) {
    units = {kMsPerMinute, kMsPerSecond};
  } else if (fields.size() == 3) {
    units = {kMsPerHour, kMsPerMinute, kMsPerSecond};
  } else {
    return Bad(text, "expected D-HH:MM:SS, HH:MM:SS or MM:SS");
  }
  int64_t total = 0;
  if (days && __builtin_mul_overflow(*days, kMsPerDay, &total)) return Bad(text, "too large");
  for (size_t i = 0; i < fields.size(); ++i) {
    // Only the leading field may exceed its unit ("90:00" is 90 minutes); "1:75" is a typo.
    bool leading = !days && i == 0;
    int64_t limit = units[i] == kMsPerHour ? 24 : 60;
    if (!leading && fields[i] >= limit) {
      return Bad(text, "field " + std::to_string(fields[i]) + " out of range");
    }
    int64_t part;
    if (__builtin_mul_overflow(fields[i], units[i], &part) ||
        __builtin_add_overflow(total, part, &total)) {
      return Bad(text, "too large");
    }
  }
  return std::chrono::milliseconds(total);
}

// One or more <number><unit>, or one bare number of seconds.
Result<std::chrono::milliseconds> ParseUnitForm(std::string_view text) {
  int64_t total = 0;
  size_t pos = 0;
  bool overflow = false;
  bool first = true;
  for (; pos < text.size(); first = false) {
    std::optional<Decimal> d = ReadDecimal(text, &pos, /*allow_point=*/true, &overflow);
    if (!d) return Bad(text, overflow ? "too large" : "expected a number such as 20s or 1h30m");
    size_t unit_begin = pos;
    while (pos < text.size() && !IsAsciiDigit(text[pos]) && text[pos] != '.') ++pos;
    std::string_view unit = text.substr(unit_begin, pos - unit_begin);
    int64_t unit_ms;
    if (unit.empty()) {
      if (!first) {
        return Bad(text, "a number without unit must stand alone (it means seconds)");
      }
      if (pos != text.size()) return Bad(text, "expected a number such as 20s or 1h30m");
      unit_ms = kMsPerSecond;
    } else if (unit == "ms") {
      unit_ms = 1;
    } else if (unit == "s") {
      unit_ms = kMsPerSecond;
    } else if (unit == "m") {
      unit_ms = kMsPerMinute;
    } else if (unit == "h") {
      unit_ms = kMsPerHour;
    } else if (unit == "d") {
      unit_ms = kMsPerDay;
    } else {
      return Bad(text, "unknown unit \"" + std::string(unit) + "\" (use ms, s, m, h or d)");
    }
    std::optional<int64_t> ms = ToMs(*d, unit_ms);
    if (!ms || __builtin_add_overflow(total, *ms, &total)) return Bad(text, "too large");
  }
  return std::chrono::milliseconds(total);
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty duration");
  if (t[0] == '-' || t[0] == '+') {
    return t[0] == '-' ? Bad(t, "must not be negative") : Bad(t, "unexpected sign");
  }
  Result<std::chrono::milliseconds> d =
      t.find_first_of(":-") != std::string_view::npos ? ParseColonForm(t) : ParseUnitForm(t);
  if (d.ok() && d.value() > kMaxDuration) return Bad(t, "too large (at most 3650d)");
  return d;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t signed_ms = d.count();
  // Unsigned magnitude: negating INT64_MIN would overflow.
  uint64_t ms = signed_ms < 0 ? 0 - static_cast<uint64_t>(signed_ms) : signed_ms;
  std::string sign = signed_ms < 0 ? "-" : "";
  char buf[64];
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  if (ms < static_cast<uint64_t>(kMsPerSecond)) {
    std::snprintf(buf, sizeof buf, "%llums", u(ms));
  } else if (ms < static_cast<uint64_t>(kMsPerMinute)) {
    uint64_t rest = ms % kMsPerSecond;
    if (rest == 0) {
      std::snprintf(buf, sizeof buf, "%llus", u(ms / kMsPerSecond));
    } else {
      // Exact decimal seconds without trailing zeros: 1500 -> "1.5s", 1005 -> "1.005s".
      char frac[8];
      std::snprintf(frac, sizeof frac, "%03llu", u(rest));
      std::string f(frac);
      while (f.back() == '0') f.pop_back();
      std::snprintf(buf, sizeof buf, "%llu.%ss", u(ms / kMsPerSecond), f.c_str());
    }
  } else if (ms < static_cast<uint64_t>(kMsPerHour)) {
    uint64_t m = ms / kMsPerMinute, s = ms % kMsPerMinute / kMsPerSecond;
    if (s == 0)
      std::snprintf(buf, sizeof buf, "%llum", u(m));
    else
      std::snprintf(buf, sizeof buf, "%llum%02llus", u(m), u(s));
  } else if (ms < static_cast<uint64_t>(kMsPerDay)) {
    uint64_t h = ms / kMsPerHour, m = ms % kMsPerHour / kMsPerMinute;
    if (m == 0)
      std::snprintf(buf, sizeof buf, "%lluh", u(h));
    else
      std::snprintf(buf, sizeof buf, "%lluh%02llum", u(h), u(m));
  } else {
    uint64_t days = ms / kMsPerDay, h = ms % kMsPerDay / kMsPerHour;
    if (h == 0)
      std::snprintf(buf, sizeof buf, "%llud", u(days));
    else
      std::snprintf(buf, sizeof buf, "%llud%02lluh", u(days), u(h));
  }
  return sign + buf;
}

std::string FormatSeconds(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "0s";
  const double max_s = static_cast<double>(kMaxDuration.count()) / kMsPerSecond;
  if (seconds > max_s) seconds = max_s;
  const double ms = seconds < 10 ? std::round(seconds * 10) * 100 : std::round(seconds) * 1000;
  if (ms == 0) return "0s";
  return FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(ms)));
}

}  // namespace gshare
