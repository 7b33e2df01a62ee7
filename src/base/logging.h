// Logging setup for the CLI and the daemon (spdlog), the only place it is configured:
// terse "gshare: msg" by default, "[time] [level] [pid] msg" when verbose. Call once from
// main before other threads start.
#pragma once

#include <string>

namespace gshare {

void SetupLogging(bool verbose);

// When stderr is a regular file (a detached daemon's daemon.log), each line also starts with
// its local time to the millisecond, "[2026-11-30 06:20:39.123] gshare: msg", so that the file
// can be read beside timelines and job logs; a terminal shows lines as they come and journald
// stamps its own. Call before threads start.
void StampLinesInFiles();

// The daemon's [daemon] log_level (spdlog level names, already validated by the config).
// Debug and trace also get times, levels and the pid in each line. Call before threads start.
void ApplyLogLevel(const std::string& level);

}  // namespace gshare
