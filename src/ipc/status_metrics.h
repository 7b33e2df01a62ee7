// The daemon's status document (`gshare status --json`) as Prometheus metrics: one exposition
// in text format 0.0.4 (docs/cli.md "Metrics" lists every family). The daemon's endpoint and
// textfile and `gshare metrics` all write it from the same document, so no number is computed
// twice. Pure apart from user-name lookups; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gshare {

// The metrics of `status` (a StatusJson document). Per-GPU counters are cumulative since the
// daemon started (gshare_daemon_start_time_seconds); per-job series exist only for live jobs
// (RUNNING, SUSPENDED), whose counters grow over their run; pending jobs are counted in
// gshare_queue_jobs only. Only what every local user may see with `gshare queue` and
// `gshare status` is written: job id, owner, name and numbers, never a command or a path.
// Fields missing from the document are left out, never invented.
std::string StatusMetrics(const nlohmann::json& status);

}  // namespace gshare
