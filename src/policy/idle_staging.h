// IdleStaging: which idle processes have their memory on a GPU staged, and how much
// (docs/memory.md, "Idle memory is staged"). Staging copies a process's resident memory to
// host memory while it stays on the GPU (kSwapStage), so that evicting it later takes no copy:
// a job that arrives needing the room gets it in the time an unmap takes, instead of waiting
// for a copy into host memory that may not even be pinned yet (~13 s for 40 GiB on a fresh
// host: docs/benchmarks.md, "Notebooks"). A staged process that runs again before anyone
// needed the room loses nothing: its memory never left.
// Pure; not thread-safe: the daemon's event loop is its only caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "policy/memory_ledger.h"
#include "policy/types.h"

namespace gshare {

class IdleStaging {
 public:
  // Less than this left to stage is not worth a request (one chunk of the swap engine).
  static constexpr uint64_t kMinBytes = 64ull << 20;

  // `after`: how long a job must have been idle (config [memory] idle_stage_after; 0: never).
  explicit IdleStaging(Millis after) : after_(after) {}

  // What one GPU looks like to the policy.
  struct GpuState {
    uint64_t capacity = 0;   // bytes its jobs may use (MemoryLedger::Capacity)
    uint64_t used = 0;       // resident now, contexts included (MemoryLedger::Used)
    bool contended = false;  // a job on it is active (holds or wants it) or waits for it
    std::vector<MemoryLedger::ConnMemory> conns;  // MemoryLedger::ConnsOn
  };
  // How long `job` has been idle (no lease held or wanted anywhere); nullopt: active.
  using IdleOf = std::function<std::optional<Millis>(JobId)>;
  // Host bytes a new staged copy of `job` may take (MemoryLedger::HostLeftFor its owner).
  using HostLeftOf = std::function<uint64_t(JobId)>;

  struct Request {
    ConnId conn;
    uint64_t bytes;  // to have staged in all (staged already + what the host budget allows)
  };
  // The staging requests for `gpu` now. A GPU is worth staging on when it is short of room or
  // may soon be: its jobs hold at least half of it, or another job is active on it or waits
  // for it. Then every swap-engine process of a job idle for `after` or longer, with at least
  // kMinBytes of resident movable memory not staged, is asked to stage it, longest idle first,
  // within the pinned host memory left to its owner (MemoryLedger::HostLeftFor) plus the free
  // part of its own pool. A process is asked once per idle period
  // (Forget/Active end it); checkpointed and suspended processes are left alone.
  std::vector<Request> Plan(const GpuKey& gpu, const GpuState& state, const IdleOf& idle_of,
                            const HostLeftOf& host_left);
  // `job` runs again (it asked for a lease): its processes may be asked again next time idle.
  void Active(JobId job);
  // The connection is gone.
  void Forget(ConnId conn);

 private:
  Millis after_;
  struct Asked {
    JobId job;
    uint64_t bytes;  // the request
  };
  // (conn, gpu) asked in the current idle period. Until a process's report shows its pool
  // grown for the request, the rest of the request counts as pinned already: reports lag the
  // staging, and planning from them alone would grant the same room twice.
  std::map<std::pair<ConnId, GpuKey>, Asked> asked_;
};

}  // namespace gshare
