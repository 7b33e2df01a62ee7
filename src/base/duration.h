// Durations as people write them in config files and on the command line ("20s", "1h30m",
// Slurm's "D-HH:MM:SS"), and back into a short form for status output.
// Pure functions of their arguments: any thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace gshare {

// The longest duration gshare accepts anywhere (time limits, quanta, --begin offsets, clean
// --older-than, config values): 3650 days. Far past any real job, and small enough that a
// monotonic or wall-clock time plus it, in nanoseconds, never overflows 64 bits.
inline constexpr std::chrono::milliseconds kMaxDuration{3650LL * 24 * 3600 * 1000};

// Parses a non-negative duration of at most kMaxDuration. Accepted forms:
//   unit form: one or more <number><unit> with unit ms, s, m, h or d, the number optionally
//     decimal ("250ms", "1.5s", "5m", "2h", "1d", "1h30m");
//   a bare number, in seconds ("90", "0.5");
//   Slurm's colon form: "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS".
// Surrounding blanks are ignored; fractions finer than a millisecond are rounded to nearest.
// On failure (empty, negative, unknown unit, garbage, more than kMaxDuration) returns an error
// whose one-line message quotes the input.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Short human form of `d`, largest units first, trailing zero parts dropped:
// "350ms", "20s", "1.5s", "5m03s", "1h02m", "2h", "3d04h". Seconds are dropped from hours
// and minutes from days (truncated). Negative durations get a leading '-'. ParseDuration
// reads every result back (exactly when no part was dropped).
std::string FormatDuration(std::chrono::milliseconds d);

// A measured time in seconds for people, the one duration format of every command's output
// but the Slurm-shaped columns (queue's TIME as squeue's, acct's as sacct's): FormatDuration of
// it rounded to tenths below ten seconds and to whole seconds above ("0s", "350ms", "4.2s",
// "27s", "1m05s", "1h02m"). Not a number, infinite or not above 0: "0s".
std::string FormatSeconds(double seconds);

}  // namespace gshare
