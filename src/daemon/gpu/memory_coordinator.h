// MemoryCoordinator: the daemon's memory policy around exclusive turns (docs/memory.md, "The
// daemon's ledger and policy"): whether a grant may go out (room), the evictions sent before
// it, the handoff's price told to the holder with CONTENDED, the room made for a holder kept
// running as the GPU turns exclusive, a resident's room, and the handoff timing. It decides
// from the MemoryLedger and the Arbiter; the evictions go out through the Host (the daemon),
// and time is read from the injected Clock, so it is unit-tested without sockets or sleeps.
// Single-threaded: the daemon's loop.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/clock.h"
#include "daemon/gpu/handoff_log.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "policy/stagger.h"
#include "policy/types.h"

namespace gshare {

class MemoryCoordinator {
 public:
  // What the coordinator asks of the daemon.
  class Host {
   public:
    // Sends a plan's evictions (swap-outs, or checkpoints for the checkpoint engine) and counts
    // them in the ledger until the victims report.
    virtual void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) = 0;
    // The sequence number of the last checkpoint request sent to the helper (0: none yet).
    virtual uint64_t LastCheckpointSent() const = 0;
    // A handoff of `gpu` closed (the timeline records it); by default nothing.
    virtual void HandoffDone(const GpuKey& gpu, const HandoffLog::Handoff& h) {
      (void)gpu;
      (void)h;
    }

   protected:
    ~Host() = default;
  };

  // All of them outlive the coordinator.
  MemoryCoordinator(MemoryLedger& ledger, Arbiter& arbiter, const Stagger& stagger,
                    const Clock& clock, Host& host)
      : ledger_(ledger), arbiter_(arbiter), stagger_(stagger), clock_(clock), host_(host) {}

  // The arbiter's grant filter (Arbiter::Options::can_grant): whether `job` may be granted
  // `gpu` now, asked before the holder drops (its memory counts as movable). Records why a
  // refused job waits (WaitReason). A job short only of room the others' fixed memory takes
  // ("GpuMemory") may try unless it is checkpointed: its swap-in waits, a restore would fail.
  bool CanGrant(const GpuKey& gpu, JobId job);
  // Why `job`'s grant waits (the ledger plan's reason), or nullptr.
  const std::string* WaitReason(JobId job) const;
  // The job is gone: its wait reason too.
  void Forget(JobId job) { wait_.erase(job); }
  // A report of `job`, holding its GPU, shows no allocation waiting for room: a reason
  // HolderDemand recorded goes (GpuMemory stays until its next grant, as CanGrant keeps it).
  void DemandMet(JobId job);

  // Before grant `epoch` of `gpu` goes out to `job`: in exclusive mode, room is made (the
  // evictions sent) and the handoff opened and timed; a resident's grant (an epoch with
  // Arbiter::kResidentEpoch) takes its room from the others, never from a lease holder. The
  // arbiter awaits a swap engine's swap-in report (Arbiter::AwaitSwapIn). Returns the bytes the
  // other jobs hold on the GPU that cannot move (the grant's `bytes`).
  uint64_t PrepareGrant(const GpuKey& gpu, JobId job, uint64_t epoch);
  // The bytes sent with CONTENDED to the holder of `gpu` (HandoffBytes), remembered for
  // NeedsReprice until the next grant.
  uint64_t PriceHandoff(const GpuKey& gpu);
  // Bytes a handoff of `gpu` to its next waiter would move in its larger direction (the
  // holder's and others' evictions, the waiter's swap-in); proto::kHandoffNever when it would
  // checkpoint or restore a process, or evict more than kUnpinnedSlack into host memory not
  // pinned yet (seconds either way). 0 without a waiter.
  uint64_t HandoffBytes(const GpuKey& gpu) const;
  static constexpr uint64_t kUnpinnedSlack = 1ull << 30;
  // Whether the holder of `gpu` should be told CONTENDED again (Arbiter::Recontend): the price
  // went from unpriced to priced as the holder's pool was pinned (or back), or moved by more than
  // kRepriceBytes as the jobs grew. Without it a holder granted before its pool was pinned would
  // wait kUnpricedIdleMs (shim/lease/gap_predictor.h) in every gap of its turn.
  bool NeedsReprice(const GpuKey& gpu) const;
  static constexpr uint64_t kRepriceBytes = 1ull << 30;  // ~25 ms of a handoff at 40 GB/s

  // The holder of `gpu` was sent DROP: the handoff's clock starts.
  void Dropped(const GpuKey& gpu);
  // Process `conn` was checkpointed in `ms`: counted in the open handoffs of its GPUs.
  void Checkpointed(ConnId conn, double ms);
  // A process of `job` has its memory back for grant `epoch` (a swap-in report, or a restore:
  // `restored`): closes the handoff, logged when it counts as one.
  void SwappedIn(const GpuKey& gpu, JobId job, uint64_t epoch, const HandoffLog::SwapIn& s);

  // An allocation of `job`, the exclusive holder of `gpu` (process `conn`), waits for room:
  // memory no report shows is learned from its swap-in, and room is taken from the others with
  // headroom for the allocations that follow (MemoryLedger::kGrowthHeadroom). When the room
  // cannot be made, the plan's reason is the job's WaitReason until DemandMet.
  void HolderDemand(const GpuKey& gpu, ConnId conn, JobId job);
  // Residents of `gpu` (exclusive mode) whose allocation or swap-in waits get their room.
  void ResidentsDemand(const GpuKey& gpu);

  // Turning `gpu` exclusive: the job that keeps running (PickIncumbent over the non-residents:
  // the one whose room is cheapest and whose phase is longest), or nullopt.
  std::optional<JobId> ExclusiveFirst(const GpuKey& gpu) const;
  // The job ExclusiveFirst picked kept the GPU (Arbiter::SetShared): its room is made once
  // every other non-resident holder has released (MakeIncumbentRoom).
  void KeepIncumbent(const GpuKey& gpu);
  // Makes the kept holder's room (MemoryLedger::GrantPlan) once the others drained; while it
  // is checkpointed away the arbiter holds the turn (Arbiter::MakingRoom). After any release.
  void MakeIncumbentRoom(const GpuKey& gpu);
  // The helper finished every checkpoint up to `last_done`: a turn waiting for its room's
  // checkpoints starts (Arbiter::RoomMade).
  void CheckpointsDone(uint64_t last_done);

  // `gshare status`: (*g)["capacity"], handoffs and the last one.
  void AddGpuJson(const GpuKey& gpu, nlohmann::json* g) const;

 private:
  // Records why `job` waits for `gpu` (WaitReason), logged when it changes.
  void NoteWait(const GpuKey& gpu, JobId job, const std::string& reason);
  // Room for resident `job` on `gpu` (MemoryLedger::MakeRoom), leaving out the evictions of
  // lease holders: a holder's shim refuses an eviction while it runs.
  MemoryLedger::Plan ResidentRoom(const GpuKey& gpu, JobId job) const;

  struct PerGpu {
    std::optional<uint64_t> priced;     // handoff bytes last sent with CONTENDED in this grant
    bool incumbent_room = false;        // KeepIncumbent: room still to be made
    uint64_t incumbent_checkpoint = 0;  // the last checkpoint request made for that room
  };

  MemoryLedger& ledger_;
  Arbiter& arbiter_;
  const Stagger& stagger_;
  const Clock& clock_;
  Host& host_;
  HandoffLog handoffs_;
  std::map<GpuKey, PerGpu> gpus_;
  std::map<JobId, std::string> wait_;  // CanGrant's last refusal reason per job
};

}  // namespace gshare
