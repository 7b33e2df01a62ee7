// HandoffLog: the timing of each lease handoff of a GPU in exclusive mode, from the DROP sent
// to the old holder until the new holder's memory is back on the GPU (drain, evictions,
// swap-in), for the daemon's log and `gshare status` (gpus[].handoffs, last_handoff). It only
// records: nothing here decides. Time comes in as arguments. Daemon thread only.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "policy/types.h"

namespace gshare {

class HandoffLog {
 public:
  struct Handoff {
    JobId from = 0, to = 0;  // from 0: the GPU was free (nobody was dropped)
    uint64_t epoch = 0;      // of the new holder's grant
    TimePoint drop_at{}, grant_at{};
    uint64_t evict_bytes = 0, swapin_bytes = 0;
    double drain_ms = 0;       // DROP .. grant (the old holder's drain and release)
    double checkpoint_ms = 0;  // whole-process checkpoints that made the grant's room, summed
    double swapin_ms = 0;      // the slowest of the new holder's processes to swap in or restore
    // Of swapin_ms, the time that swap-in waited for room another job's memory held (a higher
    // priority's, or one being evicted or exiting): a wait for memory, not the handoff's cost,
    // so it is added to the bound as it was taken.
    double room_wait_ms = 0;
    double total_ms = 0;  // DROP .. the new holder's memory back
    // The rest: total - drain - checkpoints - swap-in (the grant's delivery, the shim waking,
    // the report coming back). Never negative.
    double other_ms = 0;
    // A checkpoint or a restore moved memory: the driver's cuCheckpointProcess sets that
    // rate (1.4-4.8 GB/s measured, docs/benchmarks.md), not the link.
    bool driver_paced = false;
    // What the handoff should take at most: its drain, the bytes of its larger direction at
    // kBoundBytesPerMs (evictions and the swap-in overlap), its room wait and kBoundSlackMs.
    // Driver-paced: its drain, checkpoints and restores as they took, and kBoundSlackMs for
    // the rest.
    double bound_ms = 0;
    // The new holder's swap-in found no room (what it needs is another job's, of a higher
    // priority or not evicted yet): its time is a wait for memory, not the handoff's cost, and
    // is never counted over the bound.
    bool room_wait = false;
    bool over_bound() const { return !room_wait && total_ms > bound_ms; }
  };
  // 50 GB/s: a pinned copy over PCIe 5.0 x16 (H100/H200, about 55 GB/s each way measured,
  // docs/benchmarks.md), in bytes per ms; 50 ms for the messages and the processes waking.
  static constexpr double kBoundBytesPerMs = 50e6;
  static constexpr double kBoundSlackMs = 50;

  // A DROP went to `holder` of `gpu`; the first DROP of a turn starts the handoff's clock.
  void Dropped(const GpuKey& gpu, std::optional<JobId> holder, TimePoint now);
  // True when grant `epoch` of `gpu` is already open (another process of the same grant).
  bool IsOpen(const GpuKey& gpu, uint64_t epoch) const;
  // Grant `epoch` of `gpu` went to `job`: opens its handoff (drain measured from the DROP, or
  // 0 when none was sent).
  void Granted(const GpuKey& gpu, JobId job, uint64_t epoch, TimePoint now);
  // The evictions made for the open grant `epoch` moved `bytes`.
  void Evicted(const GpuKey& gpu, uint64_t epoch, uint64_t bytes);
  // A process with memory on `gpu` was checkpointed in `ms`: part of the open handoff, if any
  // (the room of its grant).
  void Checkpointed(const GpuKey& gpu, double ms);
  // What a process reports of its swap-in (or restore) for a grant: `bytes` moved in `ms`, of
  // which `room_wait_ms` waiting for room; `no_room`: it gave up for want of room;
  // `restored`: it was restored from a checkpoint (the driver's pace).
  struct SwapIn {
    uint64_t bytes = 0;
    double ms = 0;
    double room_wait_ms = 0;
    bool no_room = false;
    bool restored = false;
  };
  // A process of `job` swapped in `s` for grant `epoch`: closes the handoff. Returns it when it
  // counts as one (something was dropped or moved; a first grant on a free GPU that moved
  // nothing does not); nullopt then, and for a report of another grant or job.
  std::optional<Handoff> SwappedIn(const GpuKey& gpu, JobId job, uint64_t epoch, const SwapIn& s,
                                   TimePoint now);

  // Handoffs of `gpu` counted so far, those over their bound, and the last one (nullptr when
  // none).
  uint64_t count(const GpuKey& gpu) const;
  uint64_t over_bound(const GpuKey& gpu) const;
  const Handoff* last(const GpuKey& gpu) const;
  // `gshare status`: (*g)["handoffs"], (*g)["handoffs_over_bound"] and (*g)["last_handoff"]
  // (null when none).
  void AddJson(const GpuKey& gpu, nlohmann::json* g) const;

 private:
  struct PerGpu {
    std::optional<Handoff> open;  // waiting for the new holder's swap-in report
    std::optional<Handoff> last;
    std::optional<TimePoint> drop_at;  // DROP sent to the current holder
    std::optional<JobId> dropped_holder;
    uint64_t handoffs = 0;
    uint64_t over_bound = 0;
  };
  std::map<GpuKey, PerGpu> gpus_;
};

}  // namespace gshare
