// What `status`, `queue` and `submit` tell of the daemon besides their own data: that a config
// file it read at start has changed since (it reads its config once), that the queue is paused,
// and which running jobs wait for their GPU lease, and why (queue's REASON `Lease`, or the
// memory it waits for), or for room to join an MPS server (`MpsRoom`).
// Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace gshare {

struct GlobalOptions;

// Prints one line on stderr when the status document `status` (full or brief) names a config
// file that changed since the daemon started: the files and how to restart it (a system
// daemon: ask an admin). Prints nothing for a document without "config_files" (an older
// daemon's).
void WarnIfConfigChanged(const nlohmann::json& status);

// Prints one line on stderr when the status document `status` says the queue is paused
// (`gshare queue pause`): nothing submitted starts until `gshare queue resume`.
void WarnIfQueuePaused(const nlohmann::json& status);

// The jobs the status document `status` (full or brief) lists as waiting at their first CUDA
// call for room to join their GPU's MPS server (daemon.mps.arriving); empty where it lists
// none or has no such list (an older daemon's). Entries without a numeric "job" are skipped.
std::set<int64_t> MpsArrivingJobs(const nlohmann::json& status);

// A live job as the brief status tells it.
struct JobGlance {
  std::string lease;          // "holding", "waiting", "idle", "stopped", ...
  std::string waiting_for;    // what its grant waits for (memory.waiting_for: "GpuMemory",
                              // "HigherPriorityMemory", ...; docs/memory.md), else empty
  bool mps_arriving = false;  // a process of it waits at its first CUDA call for room to join
                              // its GPU's MPS server (daemon.mps.arriving)
};

// Asks a running daemon (never starts one) for the brief status: warns as WarnIfConfigChanged
// and WarnIfQueuePaused, and returns each live job's glance by job id. Empty when no daemon answers
// or the reply is unreadable: the caller's own output goes on.
std::map<int64_t, JobGlance> GlanceAtDaemon(const GlobalOptions& global);

}  // namespace gshare
