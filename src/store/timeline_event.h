// One event of the GPU timeline (`gshare timeline`): a lease granted, dropped or released, a
// swap, a checkpoint or restore, a suspension, a job's start or end. The daemon records them in
// the timeline table (JobStore::AppendTimeline); readers select them with a TimelineFilter.
// Plain values and pure functions: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gshare {

enum class TimelineKind {
  kDaemonStart,  // the daemon started: leases open before it were ended by its predecessor
  kJobStart,     // detail: "run" or "submit"; ms: how long it was pending before
  kJobEnd,       // detail: the job's final state (COMPLETED, FAILED, ...)
  kGrant,        // the job holds the GPU's lease from now; detail: "exclusive", "shared", "off"
  kDrop,         // the daemon asked the holder to give the lease back (DROP)
  kRelease,      // the job holds the GPU no more; detail: why ("dropped", "idle", "exit", ...)
  kSwapOut,      // bytes: device memory the daemon asked the process to move to the host
  kSwapIn,       // bytes, ms: memory the process moved back for its grant
  kCheckpoint,   // ms: the whole process checkpointed off the GPU
  kRestore,      // bytes, ms: restored onto the GPU
  kSuspend,      // `gshare suspend`
  kResume,       // `gshare resume`
  kWait,         // the job began to wait for the GPU's lease (asked, not granted)
  kWaited,       // ms: how long it waited; detail: "granted", or "gave up" (it stopped asking)
  kHandoff,      // job: the new holder; bytes: moved (evicted + swapped in); ms: DROP .. its
                 // memory back; detail: "from job F: drain D ms, checkpoints C ms, swap-in
                 // S ms, other O ms, bound B ms" (HandoffLog::Handoff)
};

// "daemon_start", "job_start", "job_end", "grant", "drop", "release", "swap_out", "swap_in",
// "checkpoint", "restore", "suspend", "resume", "wait", "waited", "handoff": the table's `kind`
// column and JSON's.
const char* TimelineKindName(TimelineKind kind);
// The kind named `name` exactly as TimelineKindName writes it; nullopt for anything else.
std::optional<TimelineKind> TimelineKindFromName(std::string_view name);

struct TimelineEvent {
  int64_t id = 0;       // assigned by the store, in the order events were recorded
  int64_t time_us = 0;  // unix microseconds
  TimelineKind kind = TimelineKind::kGrant;
  std::string gpu;  // "GPU-xxxxxxxx-..." (or a MIG instance's UUID); empty: no GPU
  int64_t job = 0;  // 0: none (kDaemonStart)
  uint32_t uid = 0;
  int pid = 0;         // the process it concerns; 0: the whole job
  uint64_t bytes = 0;  // kSwapOut, kSwapIn, kRestore
  double ms = 0;       // kSwapIn, kCheckpoint, kRestore: how long it took
  std::string detail;
  std::string job_name;  // read from the job's row when it still exists; never written
};

// Which events a read returns: those of [since_us, until_us], of the jobs owned by `uid` (and
// the daemon's own, job 0) when given, of `jobs` when not empty, in id order. Paging: ids
// greater than after_id, at most max_rows events of the window and owner looked at (0: no
// limit), of which those of other jobs than `jobs` are left out.
struct TimelineFilter {
  int64_t since_us = 0;
  int64_t until_us = INT64_MAX;
  std::optional<uint32_t> uid;
  std::set<int64_t> jobs;
  int64_t after_id = 0;
  int max_rows = 0;
};

}  // namespace gshare
