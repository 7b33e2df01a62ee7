// Rebalance: whether the scheduler moves a checkpointed process that waits for its GPU onto
// an idle GPU of the same kind, and which one (issue 26; docs/cli.md "Several GPUs"). The
// daemon gathers the facts and moves the process (CheckpointEngine::Rebalance,
// CheckpointEngine::MoveProcess); this class decides, and remembers the processes that moved and
// have not run since, so that none is moved back and forth without computing in between. Pure, no
// I/O; not thread-safe: the daemon's event loop is its only caller.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/types.h"

namespace gshare {

class Rebalancer {
 public:
  // A GPU of the machine, as NVML, the arbiter and the memory ledger see it now.
  struct Gpu {
    GpuKey key;
    int index = 0;               // NVML's (nvidia-smi's): the lower wins a tie
    std::string name;            // NVML's name ("NVIDIA H100 80GB HBM3"); "" when unknown
    uint64_t total = 0;          // NVML's total memory in bytes; 0 when unknown
    std::vector<JobId> holding;  // jobs holding its lease (several in shared mode)
    std::vector<JobId> waiting;  // jobs waiting for its lease
    bool shared = false;         // shared mode: a request there is granted at once
    uint64_t room = 0;           // bytes its ledger has free: capacity less what its processes need
  };
  // One process of a job, as the daemon sees it now.
  struct Process {
    ConnId conn = 0;
    JobId job = 0;
    std::vector<GpuKey> uses;  // the GPUs it has memory on
    // The job sees every GPU of the machine: the driver restores a process onto another GPU
    // only then (docs/benchmarks.md, the move runs on the H100s).
    bool sees_every_gpu = false;
    // The job has a gang lease (Arbiter::SetGang): on a GPU in exclusive mode it would wait
    // for all its gang's GPUs, the one it left among them, so only a shared one helps it.
    bool gang = false;
    bool checkpointed = false;  // its checkpoint is done, and no restore is under way
    bool suspended = false;     // `gshare suspend`: it stays where the user put it
    bool waiting = false;       // it asks for the lease of the GPU it uses
    uint64_t bytes = 0;         // what it needs on a GPU: allocations, demand, a context
  };

  // The GPU `p` should move to now, or nullopt. It moves when it is a checkpointed process of
  // one GPU K of a job that sees every GPU and is not suspended, it waits for K while another
  // job holds K, and it has run since its last move (Moved, Ran); it moves to a GPU J other
  // than K of K's kind (same NVML name and total memory, both known) that nobody holds and
  // nobody else waits for, whose room takes its bytes, and, for a gang job, that is in shared
  // mode. Among several such GPUs: the most room, then the lowest index. `gpus`: every GPU
  // of the machine (K among them; a process on a GPU not listed stays).
  std::optional<GpuKey> Target(const Process& p, const std::vector<Gpu>& gpus) const;

  // The process of `conn` moved: it does not move again before Ran.
  void Moved(ConnId conn) { unsettled_.insert(conn); }
  // The process of `conn` was restored and runs (its turn begins).
  void Ran(ConnId conn) { unsettled_.erase(conn); }
  // The connection is gone.
  void Forget(ConnId conn) { unsettled_.erase(conn); }

 private:
  std::set<ConnId> unsettled_;  // moved, not run since
};

}  // namespace gshare
