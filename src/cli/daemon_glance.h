// What `status`, `queue` and `submit` tell of the daemon besides their own data: that a config
// file it read at start has changed since (it reads its config once), and which running jobs
// wait for their GPU lease (queue's REASON `Lease`). Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace gshare {

struct GlobalOptions;

// Prints one line on stderr when the status document `status` (full or brief) names a config
// file that changed since the daemon started: the files and how to restart it (a system
// daemon: ask an admin). Prints nothing for a document without "config_files" (an older
// daemon's).
void WarnIfConfigChanged(const nlohmann::json& status);

// Asks a running daemon (never starts one) for the brief status: warns as WarnIfConfigChanged
// and returns each live job's lease ("holding", "waiting", "idle", "stopped") by job id. Empty
// when no daemon answers or the reply is unreadable: the caller's own output goes on.
std::map<int64_t, std::string> GlanceAtDaemon(const GlobalOptions& global);

}  // namespace gshare
