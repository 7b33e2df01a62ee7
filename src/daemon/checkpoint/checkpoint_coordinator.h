// The daemon's side of the checkpoint engine (docs/memory.md, "How `checkpoint` works"): the
// checkpoints and restores the helper process runs for it, and the grants that wait for them.
// A grant to a checkpointed process goes out only once the helper restored it, and a restore
// is asked only after the checkpoints queued before the grant and the evictions that make
// room for it are done: a restore that runs out of memory leaves the process unusable
// (cuda-checkpoint issue #44). The helper and the daemon are injected (CheckpointService,
// Host), so the ordering is unit-tested without processes. Single-threaded: the daemon's loop.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/checkpoint/checkpoint_helper.h"
#include "policy/memory_ledger.h"
#include "policy/types.h"

namespace gshare {

class CheckpointCoordinator {
 public:
  // A live peer's process: the pid the helper acts on, the job it belongs to.
  struct Process {
    pid_t pid;
    JobId job;
  };
  // What goes out to processes: evictions, grants that waited, kills.
  class Delivery {
   public:
    // Sends a plan's evictions (MemoryLedger::MakeRoom) and counts them in the ledger.
    virtual void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) = 0;
    // Sends a GRANT frame that waited (for a restore) to connection `conn`.
    virtual void SendGrant(ConnId conn, const std::string& frame) = 0;
    // SIGKILLs a process that can no longer be restored.
    virtual void KillProcess(pid_t pid) = 0;

   protected:
    ~Delivery() = default;
  };
  // What the coordinator asks of the daemon.
  class Host : public Delivery {
   public:
    // The process of connection `conn`, or nullopt when it is gone or closing.
    virtual std::optional<Process> LiveProcess(ConnId conn) = 0;
    // The grant of `epoch` on `gpu` was delivered, or dropped with its peer (Arbiter::Delivered).
    virtual void GrantDelivered(const GpuKey& gpu, uint64_t epoch) = 0;

   protected:
    ~Host() = default;
  };
  // A request sent to the helper and not answered yet.
  struct Call {
    ConnId conn;
    JobId job;
    CheckpointOp op;
    GpuKey gpu;  // kCheckpoint: the GPU whose freed bytes the helper measures ("": none)
  };

  // All three outlive the coordinator.
  CheckpointCoordinator(CheckpointService& service, MemoryLedger& ledger, Host& host)
      : service_(service), ledger_(ledger), host_(host) {}

  // Asks the helper to checkpoint `process` (connection `conn`), waiting up to
  // `lock_timeout_ms` for work it submitted, and to measure what it frees on `gpu` ("": not
  // measured); the ledger counts its memory as gone until the reply. The request's seq, or 0
  // when the helper cannot take it.
  uint64_t Checkpoint(ConnId conn, const Process& process, uint32_t lock_timeout_ms,
                      const GpuKey& gpu);
  // The checkpoint of `call` freed `bytes` on its GPU (CheckpointReply::freed_bytes): the
  // process's restore there waits for at least that much free, when it is more than its
  // reported memory (a pool's reserve, the driver's own memory, frees the reports counted
  // before the driver made them). 0: not measured.
  void Checkpointed(const Call& call, uint64_t bytes);
  // The restore of `conn` found no room (kNoRoom): its next one waits only for its reported
  // memory. A rise measured while another process freed memory can exceed what the process
  // holds, and a restore waiting for it could wait forever.
  void NoRoom(ConnId conn) { footprints_.erase(conn); }
  // Holds back the grant `frame` (epoch `epoch` on `gpu`, to `conn`) when `conn` is
  // checkpointed or checkpoints are under way; false when it may go out now. The caller marks
  // it deferred (Arbiter::Deferred) and then calls Pump.
  bool Defer(ConnId conn, const GpuKey& gpu, uint64_t epoch, std::string frame);
  // Moves every deferred grant as far as it can: evictions, then a restore, then the grant.
  // Host calls happen after the grants list is updated (a Send may drop a peer and re-enter).
  void Pump();
  // Removes and returns the call that reply `seq` answers; nullopt for an unknown seq.
  std::optional<Call> Answered(uint64_t seq);
  // The grants (gpu, epoch) that wait for restore `seq`.
  std::vector<std::pair<GpuKey, uint64_t>> GrantsAwaiting(uint64_t seq) const;
  // Whether a request about `conn` is still under way.
  bool InFlight(ConnId conn) const;
  // The checkpointed process of `conn` ran on GPU `from` and is restored onto the GPU of its
  // next grant instead (the restore carries the pair), until Restored. A second move before
  // the restore keeps the first `from`: the GPU the driver checkpointed it on.
  void RestoreElsewhere(ConnId conn, const GpuKey& from) { moves_.emplace(conn, from); }
  void Restored(ConnId conn) { Forget(conn); }
  // Connection `conn` closed: its move and its footprint go.
  void Forget(ConnId conn) {
    moves_.erase(conn);
    footprints_.erase(conn);
  }
  size_t deferred() const { return grants_.size(); }

 private:
  struct DeferredGrant {
    ConnId conn;
    GpuKey gpu;
    uint64_t epoch;
    std::string frame;
    uint64_t after_seq;        // helper requests to finish first (victims' checkpoints)
    bool restore;              // the process is checkpointed: restore it first
    uint64_t restore_seq = 0;  // once asked
  };
  // One grant's next step; true when it is done with (delivered or dropped).
  bool Advance(DeferredGrant& d, std::vector<std::pair<ConnId, std::string>>* to_send);

  CheckpointService& service_;
  MemoryLedger& ledger_;
  Host& host_;
  std::map<uint64_t, Call> calls_;  // by helper seq
  std::map<ConnId, GpuKey> moves_;  // RestoreElsewhere
  // Checkpointed: what a process's checkpoint freed on a GPU, until it is restored.
  struct Footprint {
    GpuKey gpu;
    uint64_t bytes;
  };
  std::map<ConnId, Footprint> footprints_;
  std::vector<DeferredGrant> grants_;
};

}  // namespace gshare
