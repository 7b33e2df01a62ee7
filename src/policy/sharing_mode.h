// SharingMode: whether a GPU runs in shared mode (every job on it holds the lease at once, the
// driver time-slices them and the priority board orders them) or in exclusive mode (one job
// at a time, memory moved between turns), and the hysteresis of the switch. Priorities play
// no part in the switch: the board keeps them in both modes (docs/design.md, "Priority
// lanes"), so a job of another priority arriving switches nothing unless its memory does not
// fit. In exclusive mode the jobs of the top priority stay resident (Arbiter::SetResidents)
// when they fit beside any one of the others: their working set stays on the GPU while the
// others take turns in the rest.
// Pure; not thread-safe: the daemon's event loop is its only caller.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "policy/arbiter.h"
#include "policy/memory_ledger.h"

namespace gshare {

class SharingMode {
 public:
  // After a switch to exclusive mode, the GPU stays exclusive at least this long: a job
  // whose memory goes back and forth around the GPU's size (an allocator that frees and
  // maps again, a job between steps) switches at most once a second, not at each report.
  // Going exclusive is never delayed: memory that does not fit must be made room for.
  static constexpr Millis kSettle{1000};

  // The mode `gpu` should have now, given what the ledger and the arbiter know: shared when
  // sharing is on, every job waiting for or holding the GPU has reported its memory there (a
  // job whose memory is unknown may not fit: it waits its turn) and they all fit; else
  // exclusive. Going shared again waits kSettle after the last switch to exclusive
  // (NextDeadline tells when to ask again).
  bool Want(const GpuKey& gpu, bool sharing_on, const MemoryLedger& ledger, const Arbiter& arbiter,
            TimePoint now);
  // The mode of `gpu` was set to `shared` at `now` (the caller applied Want's answer).
  void Switched(const GpuKey& gpu, bool shared, TimePoint now);
  // When a GPU held exclusive by kSettle may go shared, if any.
  std::optional<TimePoint> NextDeadline() const;
  // Switches of `gpu` so far, both ways (status).
  uint64_t Switches(const GpuKey& gpu) const;
  // The residents `gpu` should have in exclusive mode now, among the jobs `allowed` accepts
  // (the caller's rule: not gangs, not suspended): the jobs on it (OnGpu) of its top priority, when
  // jobs of a lower priority are on it too, the top jobs have reported their memory there, and
  // their need (MemoryLedger::Need) together fits its capacity (less the memory no report shows);
  // else none. The lower jobs need not fit beside them: their turns get only room that is free
  // or staged (docs/memory.md, "Priority and memory"), so a top job never waits for a lower
  // one's turn. Residents that stop fitting stay kSettle after they were made, as exclusive
  // mode does (NextDeadline), then go.
  std::set<JobId> Residents(const GpuKey& gpu, const std::function<bool(JobId)>& allowed,
                            const MemoryLedger& ledger, const Arbiter& arbiter, TimePoint now);
  // The jobs on `gpu` for Residents: those holding or waiting for it, and those whose memory
  // is on it (not suspended) although they let go of it between bursts of work (an idle
  // release). A service stays resident through its idle gaps: its next request is granted
  // at once as a resident's, not as an ordinary job's that ends the lower job's turn and is
  // told to bound its work (CONTENDED) until it is made resident again.
  static std::set<JobId> OnGpu(const GpuKey& gpu, const MemoryLedger& ledger,
                               const Arbiter& arbiter);

 private:
  struct State {
    std::optional<TimePoint> exclusive_since;  // the last switch to exclusive
    bool held = false;                         // Want said exclusive only because of kSettle
    uint64_t switches = 0;
    std::set<JobId> residents;                 // Residents' last answer
    std::optional<TimePoint> residents_since;  // when it last became non-empty
    bool residents_held = false;               // kept only because of kSettle
  };
  std::map<GpuKey, State> gpus_;
};

}  // namespace gshare
