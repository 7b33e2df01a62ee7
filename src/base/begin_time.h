// The job options that name a time: --begin (an instant, Slurm's sbatch --begin forms) and
// --time (a limit, Slurm's sbatch --time forms, where a bare number means minutes).
// Pure functions of their arguments and of the local time zone (TZ, read through localtime_r
// and mktime): any thread, as long as no thread changes TZ meanwhile.
#pragma once

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace gshare {

// Reads a --begin time, given the current time `now`; both are unix seconds. Accepted forms
// (keywords case-insensitive, surrounding blanks ignored):
//   now, now+DUR       DUR as ParseDuration reads it ("now+1h", "now+90s", "now+1h30m"), or
//                      Slurm's now+N[seconds|minutes|hours|days|weeks] (singular too; bare
//                      "now+N" is seconds, as in Slurm);
//   HH:MM[:SS]         the next such local time: today when it is at or after `now`, else
//                      tomorrow;
//   YYYY-MM-DD[THH:MM[:SS]]  local time, midnight when the time is left out;
//   today, tomorrow    local midnight of that day;
//   midnight, noon, teatime  the next 00:00, 12:00, 16:00, as HH:MM;
//   @N                 unix seconds, possibly fractional.
// A local time that a DST change shows twice means the earlier instant (for HH:MM: the earliest
// at or after `now`); one that a DST change skips is read with the UTC offset in force before
// the skip, so 02:30 on a spring-forward night is 03:30 after it (Python's fold=0, PEP 495).
// On failure (unknown form, a field out of range such as month 13, 25:00 or February 30)
// returns an error whose one-line message quotes the input.
Result<double> ParseBeginTime(std::string_view text, double now);

// Reads a time of the past as sacct(1) --starttime and --endtime do, given the current time
// `now`; both are unix seconds. Accepted forms (keywords case-insensitive, blanks around
// ignored):
//   now, now-DUR, now+DUR  DUR as ParseBeginTime reads it after "now+" ("now-1day",
//                          "now-2hours", "now-90m");
//   HH:MM[:SS]             the last such local time at or before `now`: today, else yesterday;
//   YYYY-MM-DD[THH:MM[:SS]]  local time, midnight when the time is left out;
//   today, yesterday       local midnight of that day; midnight is today's;
//   noon, fika, teatime    the last 12:00, 15:00, 16:00, as HH:MM;
//   @N                     unix seconds, possibly fractional.
// Local times a DST change repeats or skips are read as ParseBeginTime reads them. On failure
// returns an error whose one-line message quotes the input.
Result<double> ParsePastTime(std::string_view text, double now);

// Reads a --time limit as sbatch(1) --time does: a bare number is minutes ("90", "1.5"),
// "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS"; also ParseDuration's unit forms
// ("90s", "1h30m"). "0", "UNLIMITED" and "INFINITE" (any case) mean no limit and give 0.
// On failure returns an error whose one-line message quotes the input.
Result<std::chrono::milliseconds> ParseTimeLimit(std::string_view text);

}  // namespace gshare
