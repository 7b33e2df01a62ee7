// SharingController: puts SharingMode's decisions (policy/sharing_mode.h) into effect on the
// Arbiter, GPU by GPU: shared mode while the jobs on a GPU fit in its memory (and, without the
// priority board, have one priority); otherwise exclusive mode, entered with the job
// MemoryCoordinator picks to keep running, and with the jobs of the top priority resident
// beside the others' turns while they fit. The lease actions each change makes are sent through
// the Host. Time is read from the injected Clock. Single-threaded: the daemon's loop.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "daemon/gpu/memory_coordinator.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "policy/sharing_mode.h"

namespace gshare {

class SharingController {
 public:
  // What the controller needs of the daemon.
  class Host {
   public:
    virtual ~Host() = default;
    // Sends the messages of lease actions (grants, drops, CONTENDED) to their processes.
    virtual void Apply(const LeaseActions& actions) = 0;
    // Whether a shim has named `gpu`: the others are left alone.
    virtual bool KnowsGpu(const GpuKey& gpu) const = 0;
    // `gpu`'s mode or holders changed: its shared holders report their idle gaps, or stop.
    virtual void UpdateGapWatch(const GpuKey& gpu) = 0;
    // `gpu` turned exclusive: its holder pins host memory ahead of the first eviction.
    virtual void AskHolderToPin(const GpuKey& gpu) = 0;
  };
  struct Options {
    // [scheduler] sharing = "auto"; false ("exclusive"): one job at a time, no residents.
    bool sharing_auto = true;
    // Whether the priority board is up: it orders jobs of different priorities in shared mode
    // and orders residents; without it, such jobs take turns and none stays resident.
    std::function<bool()> board_on;
  };

  // All but `options` outlive the controller.
  SharingController(Options options, Arbiter& arbiter, const MemoryLedger& ledger,
                    MemoryCoordinator& memory, const Clock& clock, Host& host)
      : options_(std::move(options)),
        arbiter_(arbiter),
        ledger_(ledger),
        memory_(memory),
        clock_(clock),
        host_(host) {}

  // Gives `gpu` the mode and residents it should have now (after any report, arrival or
  // departure on it); then the residents' waiting allocations get their room.
  void Update(const GpuKey& gpu);
  // Update for each of `gpus` once a GPU held exclusive by the switch's hysteresis may go
  // shared (NextDeadline passed).
  void Tick(const std::vector<GpuKey>& gpus);
  // When Tick has work, if ever.
  std::optional<TimePoint> NextDeadline() const { return mode_.NextDeadline(); }
  // Switches of `gpu` so far, both ways (status).
  uint64_t Switches(const GpuKey& gpu) const { return mode_.Switches(gpu); }

 private:
  void UpdateResidents(const GpuKey& gpu);
  void Switch(const GpuKey& gpu, bool shared);

  Options options_;
  Arbiter& arbiter_;
  const MemoryLedger& ledger_;
  MemoryCoordinator& memory_;
  const Clock& clock_;
  Host& host_;
  SharingMode mode_;
};

}  // namespace gshare
