// Logging setup for the CLI and the daemon (spdlog), the only place it is configured:
// terse "gshare: msg" by default, "[time] [level] [pid] msg" when verbose. Call once from
// main before other threads start.
#pragma once

#include <string>

namespace gshare {

void SetupLogging(bool verbose);

// The daemon's [daemon] log_level (spdlog level names, already validated by the config).
// Debug and trace also get times, levels and the pid in each line. Call before threads start.
void ApplyLogLevel(const std::string& level);

}  // namespace gshare
