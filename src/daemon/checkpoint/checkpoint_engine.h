// CheckpointEngine: the daemon's side of whole-process checkpoints (docs/memory.md, "How
// `checkpoint` works"): which processes are checkpointed (evictions of --memory checkpoint jobs,
// `gshare suspend`), what the helper's replies mean, `gshare resume [--gpu]`, and moving
// checkpointed processes between GPUs ([scheduler] rebalance; docs/cli.md "Several GPUs").
// A checkpointed process asks for nothing itself (every CUDA call it makes blocks until it is
// restored), so the engine asks the lease on its behalf. The helper (CheckpointService), NVML's
// view of the GPUs and what goes out to processes (Host) are injected: unit-tested without
// processes or GPUs. Single-threaded: the daemon's event loop.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/gpu_inventory.h"
#include "base/gpu_metrics.h"
#include "base/status.h"
#include "daemon/checkpoint/checkpoint_coordinator.h"
#include "daemon/gpu/memory_coordinator.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/sharing_controller.h"
#include "daemon/state/job_table.h"
#include "daemon/state/timeline_recorder.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "policy/rebalance.h"

namespace gshare {

class CheckpointEngine : private CheckpointCoordinator::Host {
 public:
  // What the engine asks of the daemon, beyond what the coordinator sends through it.
  class Host : public CheckpointCoordinator::Delivery {
   public:
    // Sends the messages of lease actions to their processes.
    virtual void Apply(const LeaseActions& actions) = 0;
    // Writes job row `r`; a failure is returned (and the job's state is left as it was).
    virtual Status SaveRecord(const JobRecord& r) = 0;
    // The error for job `id`, which is not active or not in the state `wanted` names.
    virtual Status NotInState(int64_t id, const std::string& wanted) = 0;
    // Signals every process of `job` (SIGSTOP, SIGCONT): its group, else each shim's pid.
    virtual void SignalJobProcesses(const ActiveJob& job, int sig) = 0;

   protected:
    ~Host() = default;
  };
  struct Options {
    Millis drop_grace{0};      // [scheduler] drop_grace: bounds a checkpoint's lock wait
    bool rebalance = false;    // [scheduler] rebalance
    bool sharing_auto = true;  // [scheduler] sharing = "auto": a GPU nobody uses goes shared
    // GPUs of the machine (NVML's count, 1 without NVML; known once the daemon started).
    std::function<int()> gpu_count = [] { return 1; };
    // Starts the helper unless it runs (cuInit takes seconds: started ahead of need).
    std::function<void()> start_helper = [] {};
    // The UUID of a --gpu entry (index or UUID), "" when unknown (base/gpu_inventory.h).
    std::function<std::string(const std::string&)> gpu_uuid_of = GpuUuidOf;
    // NVML's view of the GPUs, read once (names and sizes do not change); empty without NVML.
    std::function<std::vector<GpuSample>()> sample_gpus = SampleGpus;
  };
  // The daemon's parts the engine reads and changes; all outlive it.
  struct Parts {
    JobTable& table;
    Arbiter& arbiter;
    MemoryLedger& ledger;
    MemoryCoordinator& memory;
    SharingController& sharing;
    PriorityLanes& lanes;
    TimelineRecorder& timeline;
    CheckpointService& service;
    const Clock& clock;
  };

  CheckpointEngine(Options options, Parts parts, Host& host);

  // Asks the helper to checkpoint the process of connection `conn` (`why` is logged). True when
  // it is (or already was) checkpointed or under way; false for a process that is gone,
  // exiting or of an ended job, or when the helper cannot take it.
  bool Checkpoint(ConnId conn, const std::string& why);
  // Holds back grant `a` (its frame `frame`) while its process is checkpointed or checkpoints
  // are under way: the grant goes out once the restore is done. False: send it now.
  bool DeferGrant(const LeaseAction& a, const std::string& frame);
  // The helper's replies, and whether it is still usable (false: checkpoints are unavailable
  // from now on, and --memory checkpoint jobs keep their memory on the GPU).
  void OnReplies(const std::vector<CheckpointReply>& replies, bool usable);
  // After every event: deferred grants move on, suspensions advance, rebalance looks for moves.
  void Tick();
  // `gshare suspend`: the job's lease drains, its processes are checkpointed, then stopped.
  // Errors: not running, already suspended, the row not saved.
  Status Suspend(int64_t id);
  // `gshare resume`: `to_gpu` (an index or UUID; "" to stay) restores the job onto that GPU.
  // Errors: not suspended, the row not saved, a move the driver cannot make (MoveJob).
  Status Resume(int64_t id, const std::string& to_gpu);
  // Connection `conn` is gone.
  void Forget(ConnId conn) {
    rebalancer_.Forget(conn);
    coordinator_.Forget(conn);
    restore_failures_.erase(conn);
  }
  void StartHelper() { options_.start_helper(); }

 private:
  // CheckpointCoordinator::Host.
  std::optional<CheckpointCoordinator::Process> LiveProcess(ConnId conn) override;
  void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) override {
    host_.SendEvictions(gpu, plan);
  }
  void SendGrant(ConnId conn, const std::string& frame) override { host_.SendGrant(conn, frame); }
  void GrantDelivered(const GpuKey& gpu, uint64_t epoch) override;
  void KillProcess(pid_t pid) override { host_.KillProcess(pid); }

  void PumpDeferredGrants();
  void OnReply(const CheckpointReply& r, const CheckpointCoordinator::Call& call);
  void Unavailable(const std::string& why);
  void AdvanceSuspension(ActiveJob& job);
  // Asks the lease for checkpointed process `conn`, which cannot ask itself.
  void RequestOnBehalf(ConnId conn);
  // A restore (reply `seq`) of `conn` did not take place and left it checkpointed: the grants
  // waiting for it are given back, and it asks again when it still lives.
  void AskAgainAfterRestore(uint64_t seq, ConnId conn, bool live);
  void UpdateSharing();  // every GPU a shim named
  // The first GPU the ledger knows `conn` on ("" when none): where its checkpoint is drawn.
  GpuKey FirstGpuOf(ConnId conn) const;
  // Moves suspended job `job` (every process checkpointed, of one GPU, seeing every GPU: the
  // driver's condition for a restore elsewhere) onto `to_gpu` (checkpoint_moves.cc).
  Status MoveJob(ActiveJob& job, const std::string& to_gpu);
  // One checkpointed process of one GPU: its accounting moves to `to`, its next restore carries
  // the pair, the shim's name of `from` maps to `to` (Connection::moved).
  void MoveProcess(Connection& c, const GpuKey& from, const GpuKey& to);
  void Rebalance();
  std::vector<Rebalancer::Gpu> RebalanceGpus();
  const std::vector<GpuSample>& GpuKinds();

  Options options_;
  Parts p_;
  Host& host_;
  CheckpointCoordinator coordinator_{p_.service, p_.ledger, *this};
  Rebalancer rebalancer_;
  std::optional<std::vector<GpuSample>> gpu_kinds_;  // GpuKinds()
  // Restores in a row that failed with the process still checkpointed, by connection; past
  // kRestoreRetries the process is killed, as after a restore that left it unusable.
  std::map<ConnId, int> restore_failures_;
  static constexpr int kRestoreRetries = 3;
};

}  // namespace gshare
