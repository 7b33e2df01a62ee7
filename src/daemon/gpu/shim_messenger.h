// ShimMessenger: the daemon's messages to its jobs' shims that are not lease actions: evictions,
// pinning host memory ahead of them, idle staging, gap watches and stretches, the priority
// board's seats. Each names the GPU as the receiving shim does (it differs after a move:
// JobTable::NamedBy). Frames go out through an injected Send (the PeerTable's in the daemon), so
// it is unit-tested without sockets. Single-threaded: the daemon's event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "daemon/gpu/idle_stager.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/stagger_coordinator.h"
#include "daemon/state/job_table.h"
#include "daemon/state/timeline_recorder.h"
#include "gshare/protocol.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"

namespace gshare {

class ShimMessenger final : public IdleStager::Host, public StaggerCoordinator::Host {
 public:
  // Queues a frame for connection `conn`; false when it is gone or could not take it.
  using Send = std::function<bool(ConnId conn, std::string_view frame)>;
  // The parts it reads; all outlive it.
  struct Parts {
    JobTable& table;
    const Arbiter& arbiter;
    MemoryLedger& ledger;
    PriorityLanes& lanes;
    TimelineRecorder& timeline;
  };
  ShimMessenger(Parts parts, Send send) : p_(parts), send_(std::move(send)) {}

  // A LeaseMsg of `type` about `gpu` to `conn`'s shim; false when it is gone or not sent.
  bool SendLeaseMsg(ConnId conn, proto::MsgType type, const GpuKey& gpu, uint64_t epoch,
                    uint64_t bytes);
  // EVICT `bytes` of `conn`'s memory on `gpu` (swap engine), counted in the ledger until the
  // victim reports; the timeline notes a swap-out that was sent.
  void Evict(ConnId conn, const GpuKey& gpu, uint64_t bytes);
  // `gpu` is exclusive: its holder's shims pin the host memory their next eviction needs
  // (MemoryLedger::PoolToPin), asked again only when it grew by more than 256 MiB (pinning
  // takes ~0.1 s/GiB).
  void AskHolderToPin(const GpuKey& gpu);
  // Sends the priority board's seats that changed (PriorityLanes::TakeMessages).
  void SendSeats();
  // Clears the busy bits of processes that are stopped (SIGSTOP, a shell's Ctrl-Z, a debugger)
  // or gone: their shims cannot, and jobs of lower priority would wait for them. Reads
  // /proc/<pid>/stat at most every kLanesCheck while a bit is set.
  void QuietStoppedSeats(TimePoint now);
  std::optional<TimePoint> NextLanesCheck() const;
  static constexpr Millis kLanesCheck{1000};

  // IdleStager::Host.
  void SendStage(ConnId conn, const GpuKey& gpu, uint64_t bytes) override;
  uid_t JobOwner(JobId job) const override { return p_.table.OwnerOf(job); }
  // StaggerCoordinator::Host.
  std::vector<std::pair<ConnId, JobId>> Shims() const override { return p_.table.Shims(); }
  bool KnowsGpu(const GpuKey& gpu) const override { return p_.table.KnowsGpu(gpu); }
  bool SendGapWatch(ConnId conn, const GpuKey& gpu, bool on) override;
  void SendStretch(ConnId conn, const GpuKey& gpu, Millis gap) override;

 private:
  void AskToPin(Connection& c, const GpuKey& gpu);

  Parts p_;
  Send send_;
  TimePoint next_lanes_check_{};
};

}  // namespace gshare
