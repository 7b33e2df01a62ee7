// MemoryLedger: the daemon's view of device memory (docs/memory.md, "The daemon's ledger and
// policy").
// Per GPU and shim connection (one process of a job): allocated, resident and fixed
// (non-evictable) bytes as the process last reported them, and the GPU's capacity. It
// decides whether the jobs on a GPU fit together (shared mode) and, before an exclusive
// grant, which processes evict how much: only as much as the new holder needs, from
// processes of other jobs, least recently run first. Swapped-out data lives in host
// memory within a budget. Pure policy, no I/O; time comes in as arguments.
// Not thread-safe: the daemon's event loop is its only caller. memory_ledger_host.cc holds the
// host side (swapped, staged and pinned bytes per user, the host budgets).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "policy/arbiter.h"
#include "gshare/protocol.h"

namespace gshare {

class MemoryLedger {
 public:
  struct Options {
    // Device memory per process not in its reports (its CUDA context, the libraries' own):
    // 0.5-0.85 GiB (docs/memory.md, "The daemon's ledger and policy").
    uint64_t context_bytes = 768ull << 20;
    uint64_t gpu_limit = 0;    // 0: the GPU's own size; else at most this much is used
    uint64_t host_budget = 0;  // host bytes for swapped-out data; 0: unlimited
    // Whether a connection holds a lease on some GPU: such a process is never checkpointed
    // (its other GPUs would lose their state). Unset: none does.
    std::function<bool(ConnId)> holds_lease;
    // Host bytes for one user's swapped-out data, all their jobs together; 0: unlimited. An
    // eviction that would pass a user's budget is not planned (MakeRoom).
    uint64_t host_budget_per_user = 0;
    // The owner of a job, for host_budget_per_user. Unset: every job is one user's.
    std::function<uid_t(JobId)> owner;
    // A job's priority: memory of lower priorities is evicted first (MakeRoom). Unset: all 0.
    std::function<int(JobId)> priority;
    // Whether a job is resident on a GPU (Arbiter::SetResidents): its memory is no victim of
    // another job's room (MakeRoom). Unset: none is.
    std::function<bool(const GpuKey&, JobId)> resident;
  };
  explicit MemoryLedger(Options options) : options_(options) {}

  void Report(ConnId conn, JobId job, const GpuKey& gpu, const proto::MemReportMsg& m);
  void Forget(ConnId conn);
  // An eviction of `bytes` was asked of `conn`: counted as done until its next report.
  void NoteEviction(ConnId conn, const GpuKey& gpu, uint64_t bytes);
  // The job ran on `gpu` (grant) at `now`: least recently run jobs are evicted first.
  void Ran(JobId job, const GpuKey& gpu, TimePoint now);
  // The process of `conn` is checkpointed (engine `checkpoint`, or a suspended job): none of
  // its memory, nor its context, is on any GPU until it is restored, whatever it reports.
  void SetCheckpointed(ConnId conn, bool checkpointed);
  bool IsCheckpointed(ConnId conn) const { return checkpointed_.count(conn) != 0; }
  // Whether whole-process checkpoints can be taken (the daemon's helper works). When not,
  // checkpoint-engine memory cannot move: it counts as fixed and is no victim.
  void SetCheckpointAvailable(bool available) { checkpoint_available_ = available; }
  bool checkpoint_available() const { return checkpoint_available_; }
  // A suspended job needs no room: it is left out of Fits/Overflow and is no victim.
  void SetSuspended(JobId job, bool suspended);
  // Whether an eviction asked of a shim on `gpu` is not reported done yet.
  bool Evicting(const GpuKey& gpu) const;
  // After a report of `conn` on `gpu` whose demand grew while the process has memory to swap
  // in (a swap-in that found no room and asks for it, shim/lease/lease_memory.cc): the growth
  // is its shortfall, so the GPU had at most swapped - shortfall bytes free, and what the
  // ledger counted free beyond that is memory no report shows (another program's, the
  // driver's beyond context_bytes). Unseen(gpu) becomes at least that much. Nothing is learned
  // while an eviction on `gpu` is under way (its room may still come).
  void LearnUnseen(ConnId conn, const GpuKey& gpu);
  // Bytes of `gpu` in use that no report shows, as learned so far; MakeRoom plans as if the
  // capacity were that much smaller. Kept until no process has memory on `gpu` (Forget).
  uint64_t Unseen(const GpuKey& gpu) const;
  // The GPUs `conn` has reported memory on.
  std::vector<GpuKey> GpusOf(ConnId conn) const;
  // The process of `conn` runs on GPU `to` instead of `from` from now on (a checkpointed job
  // restored elsewhere): its report and the job's last run move there; `to`'s capacity is
  // taken as `from`'s until a report from `to` says otherwise (the driver restores only onto
  // a GPU of the same kind).
  void MoveConn(ConnId conn, const GpuKey& from, const GpuKey& to);

  // Bytes jobs may use together on `gpu`: the reported size, or gpu_limit when smaller (or
  // when nothing was reported); 0 when neither is known.
  uint64_t Capacity(const GpuKey& gpu) const;
  // Whether every job with memory on `gpu` fits at once (contexts and demands included).
  // False when the capacity is unknown: nothing reported is never read as "fits".
  bool Fits(const GpuKey& gpu) const;
  // Whether a process of `job` has reported its memory on `gpu`.
  bool Reported(const GpuKey& gpu, JobId job) const;
  // Bytes by which the jobs on `gpu` exceed it (0 when they fit): at most this much of
  // theirs is ever swapped out at once.
  uint64_t Overflow(const GpuKey& gpu) const;
  // Bytes the processes with memory on `gpu` need there together, what Overflow compares
  // with the capacity: allocations, resident or not, demands and one context each (suspended
  // jobs' left out). Only `conn`'s when given.
  uint64_t Need(const GpuKey& gpu, std::optional<ConnId> conn = std::nullopt) const;

  struct Eviction {
    ConnId conn;
    uint64_t bytes;
    bool checkpoint = false;  // the whole process: checkpointed, not swapped by its shim
  };
  struct Plan {
    bool feasible = true;  // false: the host budget or fixed memory does not allow it
    std::string reason;    // when not feasible
    std::vector<Eviction> evictions;
    uint64_t bytes = 0;  // sum of evictions
  };
  // What must leave `gpu` so that `job` has all its memory there, plus the demand it
  // reported (an allocation waiting for room), `extra` bytes and kResidentHeadroom beside
  // each resident of higher priority. `leases_released`: plan as
  // if every lease had been given back (whether a waiter could be granted once the holder
  // drops), so processes that hold one may be checkpointed too. Victims go in order of
  // priority (lowest first: a higher job's working set stays resident while lower ones can
  // make the room), then least recently run first. A job of higher priority than `job` gives
  // only its staged bytes (memory idle long enough to be copied out): when the rest of the room
  // is its memory in use, the plan is not feasible, reason HigherPriorityMemory (docs/memory.md,
  // "Priority and memory": a higher job never waits for its memory because of a lower one).
  // Swap-engine processes give just the bytes needed; checkpoint-engine processes that hold no
  // lease give everything, context included. No victim gives more than its owner's
  // host_budget_per_user leaves (`job`'s own swapped data, coming back, does not count):
  // others give the rest, and when they cannot the plan is not feasible, reason
  // UserHostMemoryBudget (HostMemoryBudget for the machine's host_budget, GpuMemory when the
  // rest is fixed memory). Staged copies count toward the host budget; evicting staged memory
  // takes no more host memory.
  Plan MakeRoom(const GpuKey& gpu, JobId job, uint64_t extra = 0,
                bool leases_released = false) const;
  // Free bytes kept for a holder's allocations when one of them waits for room: without it a
  // job that grows (PyTorch's expandable segments map 20 MiB at a time) would wait for one
  // eviction round trip per allocation, which can use up a whole quantum (docs/memory.md,
  // "How `swap` works").
  static constexpr uint64_t kGrowthHeadroom = 2ull << 30;
  // Free bytes a lower job's room leaves beside each resident of higher priority on the GPU
  // (MakeRoom counts them as the lower job's own). A resident's own allocations wait for room,
  // but the driver's allocations in its process (a stream, a module, a graph's instantiation)
  // are not the engine's and fail at once with out of memory: a turn that filled the GPU to
  // the byte ended an LLM service's start-up at cuStreamCreate (docs/benchmarks.md,
  // "2026-11-29 — Serving engines and multi-process jobs").
  static constexpr uint64_t kResidentHeadroom = 2ull << 30;
  // MakeRoom with `headroom` extra bytes where the others can give them, else without.
  Plan MakeRoomWithHeadroom(const GpuKey& gpu, JobId job, uint64_t headroom) const;
  // The plan of an exclusive grant of `gpu` to `job`: MakeRoom, and on the job's first
  // exclusive turn there (it never ran under an exclusive grant) room for its growth too,
  // FirstTurnHeadroom(allocated), where the others can give it. Jobs grow in their first
  // turn (PyTorch allocates gradients and optimizer state in its first step: about a fifth
  // more memory); evicted at the grant, that room is made while the job computes, instead
  // of while its allocations wait for evictions into host memory not pinned yet
  // (docs/benchmarks.md, "Why: where the first turns waited").
  Plan GrantPlan(const GpuKey& gpu, JobId job) const;
  // A quarter of the job's allocated bytes, at least kGrowthHeadroom.
  static uint64_t FirstTurnHeadroom(uint64_t allocated) {
    return allocated / 4 > kGrowthHeadroom ? allocated / 4 : kGrowthHeadroom;
  }
  // Host bytes each swap-engine process of `job`, the exclusive holder of `gpu`, should pin
  // ahead now (SWAP_PREPARE; 0: nothing to ask now). It never has to hold more than what the
  // GPU lacks (Overflow) plus kPinMargin for the jobs' growth (the daemon asks again as the
  // overflow grows); at most its own pool plus the pinned memory the host budget has left
  // (HostLeftFor: other processes' pools count). Pinned ahead, the pool costs the job little;
  // grown during an eviction, ~0.1 s/GiB of handoff (host_pool.h). Only the holder pins
  // ahead, for the eviction at the end of its turn, and only once the GPU has settled (no
  // eviction under way, no allocation of it waiting): populating host memory is bound by the
  // host's page faults, a rate all processes share, so a pool grown while room is being made
  // slows the evictions someone waits for (docs/memory.md, "How `swap` works"). Others'
  // pools grow as they are evicted (HostPool::Take). The caller picks the holder
  // (Daemon::AskHolderToPin).
  uint64_t PoolToPin(JobId job, const GpuKey& gpu) const;
  // Enough for growth between asks. A quarter of the job's movable bytes, the margin before,
  // pinned far more than handoffs move and was still pinning when the holder's first CPU
  // phase began (docs/memory.md, "How `swap` works").
  static constexpr uint64_t kPinMargin = 2ull << 30;
  // Pinned host bytes of `conn`'s swap engine (one pool per process, for all its GPUs) that
  // hold no swapped-out data: what it can evict without growing its pool.
  uint64_t PoolFree(ConnId conn) const;
  // Bytes that other jobs than `job` hold on `gpu` and can never move (with their contexts).
  uint64_t FixedOfOthers(const GpuKey& gpu, JobId job) const;
  // Bytes `job` uses on `gpu` as it would alone: its processes' allocations, resident or
  // swapped out, and one context each (what NVML would count as used; kMemoryView).
  uint64_t UsedBy(JobId job, const GpuKey& gpu) const;

  struct JobTotals {
    uint64_t allocated = 0, resident = 0, fixed = 0, demand = 0, host_bytes = 0;
    uint64_t swaps_out = 0, swaps_in = 0, bytes_out = 0, bytes_in = 0, swap_ns = 0;
    uint64_t staged = 0;   // resident bytes with a current host copy (kSwapStage)
    uint64_t swapped = 0;  // not resident and held in host memory (fresh bytes are not)
    uint32_t engine = 0;
    bool checkpointed = false;  // some process of the job is checkpointed
  };
  // Sum over the job's processes (on every GPU when gpu is empty).
  JobTotals Totals(JobId job, const GpuKey& gpu = "") const;
  // Swap-engine moves on one GPU since the ledger was made: its processes' counters, those
  // forgotten included, so the sums only ever grow (metrics' counters).
  struct SwapCounters {
    uint64_t swaps_out = 0, swaps_in = 0, bytes_out = 0, bytes_in = 0;
  };
  SwapCounters SwapsOn(const GpuKey& gpu) const;
  // Host bytes holding swapped-out data, over all jobs.
  uint64_t SwappedBytes() const;
  // Host bytes holding staged copies of resident memory (MemReportMsg::staged), over all jobs.
  uint64_t StagedBytes() const;
  // Pinned host bytes a new staged copy of a job of `uid` may take within host_budget and
  // host_budget_per_user; UINT64_MAX: no bound. Each process counts its pinned pool, or its
  // swapped and staged bytes when more (a report may predate the pool's growth): pools never
  // shrink (shim/memory/host_pool.h), so a pool grown by earlier evictions stays pinned after
  // its data came back, and staging, which nobody waits for, must not add to it past the
  // budget (evictions are bounded by swapped and staged bytes only: MakeRoom).
  uint64_t HostLeftFor(uid_t uid) const;
  // Bytes of the shared host pool that the processes of `uid`'s jobs share
  // (MemReportMsg::shared_pool) that no process holds: the largest pool size its processes report
  // less their own parts; 0 without a shared pool.
  uint64_t SharedPoolFree(uid_t uid) const;
  // One process's memory on a GPU, as last reported.
  struct ConnMemory {
    ConnId conn = 0;
    JobId job = 0;
    uint32_t engine = 0;
    uint64_t resident = 0, fixed = 0, staged = 0;
    bool checkpointed = false, suspended = false;
    uint64_t pool_free = 0;  // pinned pool bytes holding no data (PoolFree less staged bytes)
    uint64_t pool = 0;       // pinned pool bytes (MemReportMsg::host_bytes)
    uint64_t swapped = 0;    // swapped-out bytes on this GPU
  };
  // Every process with memory on `gpu`, in ConnId order.
  std::vector<ConnMemory> ConnsOn(const GpuKey& gpu) const;
  // Bytes resident on `gpu` now, contexts included.
  uint64_t Used(const GpuKey& gpu) const;
  // Host bytes holding swapped-out data of jobs of `uid`.
  uint64_t SwappedBytesOf(uid_t uid) const;
  const Options& options() const { return options_; }

 private:
  struct Entry {
    JobId job = 0;
    GpuKey gpu;
    proto::MemReportMsg report{};
    uint64_t demand_before = 0;  // the demand of the report before this one
  };
  // What the entry occupies on its GPU now: its resident bytes and its context.
  uint64_t ResidentOf(ConnId conn, const Entry& e) const;
  uint64_t ContextOf(ConnId conn) const;
  uid_t OwnerOf(JobId job) const { return options_.owner ? options_.owner(job) : 0; }
  // Swapped-out bytes of the entry: allocated, not resident and not fresh (held in host
  // memory; fresh bytes were never backed and hold none).
  uint64_t SwappedOf(ConnId conn, const Entry& e) const;
  // Staged bytes of the entry (resident, with a host copy).
  uint64_t StagedOf(ConnId conn, const Entry& e) const;
  // Host bytes of staged copies and swapped-out data of `uid`'s jobs.
  uint64_t HostBytesOf(uid_t uid) const;
  // Pinned host bytes of the processes of `uid`'s jobs (every uid: all_users): per process
  // its pool or its swapped and staged bytes, the larger; and once per user, the free part of
  // the pool their processes share (MemReportMsg::shared_pool), SharedPoolFree.
  uint64_t PinnedOf(uid_t uid, bool all_users) const;

  // Fixed bytes of the entry: what it reports, or all it holds when it can never move.
  uint64_t FixedOf(ConnId conn, const Entry& e) const;

  Options options_;
  bool checkpoint_available_ = true;
  std::set<ConnId> checkpointed_;
  std::set<JobId> suspended_;
  std::set<std::pair<ConnId, GpuKey>> evicting_;
  std::map<ConnId, std::map<GpuKey, Entry>> entries_;
  std::map<GpuKey, SwapCounters> forgotten_swaps_;  // of the processes Forget removed
  std::map<GpuKey, uint64_t> gpu_total_;
  std::map<GpuKey, uint64_t> unseen_;  // LearnUnseen
  std::map<std::pair<GpuKey, JobId>, TimePoint> last_ran_;
};

}  // namespace gshare
