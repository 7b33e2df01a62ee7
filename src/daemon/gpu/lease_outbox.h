// LeaseOutbox: what the daemon tells shims about their leases and memory. The Arbiter's lease
// actions become GRANT (priced by the memory coordinator; held back while its process is being
// restored), DROP and CONTENDED frames, SIGSTOP and SIGCONT; the ledger's evictions become EVICT
// frames or checkpoints. It is the Host of the memory coordinator and the sharing controller;
// the checkpoints it asks for go through Checkpoints, which the parts above it implement.
// Daemon thread only; a peer that cannot take a frame is dropped inside `send`, which re-enters
// the arbiter (the actions that follow are applied then).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "daemon/gpu/memory_coordinator.h"
#include "daemon/gpu/sharing_controller.h"
#include "daemon/gpu/shim_messenger.h"
#include "daemon/gpu/stagger_coordinator.h"
#include "daemon/state/job_table.h"
#include "daemon/state/timeline_recorder.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"

namespace gshare {

class LeaseOutbox final : public MemoryCoordinator::Host, public SharingController::Host {
 public:
  // What it asks of whole-process checkpoints (the checkpoint engine and its helper).
  class Checkpoints {
   public:
    // Holds back grant `a` (its frame `frame`) while its process is checkpointed or checkpoints
    // are under way; false: send it now (CheckpointEngine::DeferGrant).
    virtual bool DeferGrant(const LeaseAction& a, const std::string& frame) = 0;
    // Checkpoints the process of connection `conn` (`why` is logged; CheckpointEngine).
    virtual bool Checkpoint(ConnId conn, const std::string& why) = 0;
    // The seq of the last request sent to the helper (CheckpointService::last_sent).
    virtual uint64_t LastCheckpointSent() const = 0;

   protected:
    ~Checkpoints() = default;
  };
  // The parts it reads and tells; all outlive it (the memory coordinator may be constructed
  // after it, as it takes it as its Host).
  struct Parts {
    JobTable& table;
    const Arbiter& arbiter;
    MemoryCoordinator& memory;
    StaggerCoordinator& stagger;
    ShimMessenger& messenger;
    Checkpoints& checkpoints;
    TimelineRecorder& timeline;
  };
  // Queues an encoded frame for connection `conn`; false when it is gone or could not take it
  // (then it is dropped).
  using Send = std::function<bool(ConnId conn, std::string_view frame)>;

  LeaseOutbox(Parts parts, Send send) : p_(parts), send_(std::move(send)) {}

  // Sends the messages of lease actions, in order; the timeline's holds follow.
  void Apply(const LeaseActions& actions) override;
  // A plan's evictions: EVICT to swap-engine victims, checkpoints for the checkpoint engine's.
  void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) override;
  uint64_t LastCheckpointSent() const override { return p_.checkpoints.LastCheckpointSent(); }
  // A handoff's timeline event (TimelineKind::kHandoff).
  void HandoffDone(const GpuKey& gpu, const HandoffLog::Handoff& h) override;
  bool KnowsGpu(const GpuKey& gpu) const override { return p_.table.KnowsGpu(gpu); }
  void AskHolderToPin(const GpuKey& gpu) override { p_.messenger.AskHolderToPin(gpu); }
  void UpdateGapWatch(const GpuKey& gpu) override { p_.stagger.Update(gpu); }

 private:
  // GRANT, DROP or CONTENDED of `a` to its connection, if it is live.
  void SendLeaseFrame(const LeaseAction& a);

  Parts p_;
  Send send_;
};

}  // namespace gshare
