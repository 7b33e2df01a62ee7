// Logging setup for the CLI and the daemon (spdlog), the only place it is configured:
// terse "gshare: msg" by default, "[time] [level] [pid] msg" when verbose. Call once from
// main before other threads start.
#pragma once

namespace gshare {

void SetupLogging(bool verbose);

}  // namespace gshare
