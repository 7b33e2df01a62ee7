#include "daemon/gpu/memory_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "gshare/protocol.h"
#include "policy/incumbent.h"

namespace gshare {

bool MemoryCoordinator::CanGrant(const GpuKey& gpu, JobId job) {
  MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, job, 0, /*leases_released=*/true);
  if (plan.feasible) {
    wait_.erase(job);
    return true;
  }
  // Refusing forever would starve a job the others' fixed memory leaves too little room when
  // nothing changes: it may try (its swap-in waits, then gives the lease back). A restore
  // without room would leave the process unusable: a checkpointed job may not.
  if (plan.reason == "GpuMemory" && !ledger_.Totals(job, gpu).checkpointed) {
    wait_[job] = plan.reason;
    return true;
  }
  NoteWait(gpu, job, plan.reason);
  return false;
}

void MemoryCoordinator::NoteWait(const GpuKey& gpu, JobId job, const std::string& reason) {
  auto [it, added] = wait_.try_emplace(job);
  if (added || it->second != reason) spdlog::info("job {} waits for {}: {}", job, gpu, reason);
  it->second = reason;
}

const std::string* MemoryCoordinator::WaitReason(JobId job) const {
  auto it = wait_.find(job);
  return it == wait_.end() ? nullptr : &it->second;
}

MemoryLedger::Plan MemoryCoordinator::ResidentRoom(const GpuKey& gpu, JobId job) const {
  MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, job);
  std::erase_if(plan.evictions,
                [this](const MemoryLedger::Eviction& e) { return arbiter_.ConnHolds(e.conn); });
  return plan;
}

uint64_t MemoryCoordinator::PrepareGrant(const GpuKey& gpu, JobId job, uint64_t epoch) {
  gpus_[gpu].priced.reset();
  uint64_t fixed = ledger_.FixedOfOthers(gpu, job);
  if (arbiter_.IsShared(gpu) || !arbiter_.enabled()) return fixed;
  TimePoint now = clock_.Now();
  if (Arbiter::IsResidentEpoch(epoch)) {
    // A resident's grant: its memory comes back first, from the turns' jobs; no handoff.
    host_.SendEvictions(gpu, ResidentRoom(gpu, job));
    ledger_.Ran(job, gpu, now);
    return fixed;
  }
  if (handoffs_.IsOpen(gpu, epoch)) return fixed;  // another process of the same grant
  handoffs_.Granted(gpu, job, epoch, now);
  MemoryLedger::Plan plan = ledger_.GrantPlan(gpu, job);
  host_.SendEvictions(gpu, plan);
  handoffs_.Evicted(gpu, epoch, plan.bytes);
  ledger_.Ran(job, gpu, now);
  // A swap-engine shim reports the end of its swap-in (kReportAfterSwapIn) after every grant.
  if (ledger_.Totals(job, gpu).engine == static_cast<uint32_t>(proto::MemoryEngine::kSwap)) {
    arbiter_.AwaitSwapIn(gpu, epoch);
  }
  return fixed;
}

uint64_t MemoryCoordinator::PriceHandoff(const GpuKey& gpu) {
  uint64_t bytes = HandoffBytes(gpu);
  gpus_[gpu].priced = bytes;
  return bytes;
}

uint64_t MemoryCoordinator::HandoffBytes(const GpuKey& gpu) const {
  std::optional<JobId> waiter = arbiter_.NextWaiter(gpu);
  if (!waiter) return 0;
  MemoryLedger::JobTotals t = ledger_.Totals(*waiter, gpu);
  if (t.checkpointed) return proto::kHandoffNever;
  MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, *waiter, 0, /*leases_released=*/true);
  // An eviction into host memory not pinned yet waits for the pool to grow at the host's
  // populate rate, which falls several-fold when jobs start together on untouched memory
  // (docs/benchmarks.md, "Why pools grew at 0.5–5 GB/s"): too slow and too uncertain to leave
  // early for. The holder's pool is pinned in its first turn (MemoryLedger::PoolToPin).
  uint64_t unpinned = 0;
  for (const MemoryLedger::Eviction& e : plan.evictions) {
    if (e.checkpoint) return proto::kHandoffNever;
    uint64_t pool_free = ledger_.PoolFree(e.conn);
    unpinned += e.bytes > pool_free ? e.bytes - pool_free : 0;
  }
  if (unpinned > kUnpinnedSlack) return proto::kHandoffNever;
  uint64_t swap_in = t.allocated > t.resident ? t.allocated - t.resident : 0;
  return std::max(plan.bytes, swap_in);
}

bool MemoryCoordinator::NeedsReprice(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  if (it == gpus_.end() || !it->second.priced || !arbiter_.NextWaiter(gpu)) return false;
  uint64_t old = *it->second.priced;
  uint64_t now = HandoffBytes(gpu);
  bool priced_now = now != proto::kHandoffNever;
  bool priced_before = old != proto::kHandoffNever;
  uint64_t diff = now > old ? now - old : old - now;
  return priced_now != priced_before || (priced_now && diff > kRepriceBytes);
}

void MemoryCoordinator::Dropped(const GpuKey& gpu) {
  handoffs_.Dropped(gpu, arbiter_.Holder(gpu), clock_.Now());
}

void MemoryCoordinator::Checkpointed(ConnId conn, double ms) {
  for (const GpuKey& gpu : ledger_.GpusOf(conn)) handoffs_.Checkpointed(gpu, ms);
}

void MemoryCoordinator::SwappedIn(const GpuKey& gpu, JobId job, uint64_t epoch,
                                  const HandoffLog::SwapIn& s) {
  std::optional<HandoffLog::Handoff> h = handoffs_.SwappedIn(gpu, job, epoch, s, clock_.Now());
  if (!h) return;
  // Over its bound, the handoff is worth a warning: the time went somewhere the bound's
  // parts do not explain (other_ms), or a copy ran below the link's rate.
  spdlog::log(h->over_bound() ? spdlog::level::warn : spdlog::level::info,
              "handoff {}: job {} -> job {}: drain {:.0f} ms, evicted {} bytes{}, swapped in {} "
              "bytes in {:.0f} ms{}, other {:.0f} ms, total {:.0f} ms{} (bound {:.0f} ms)",
              gpu, h->from, h->to, h->drain_ms, h->evict_bytes,
              h->checkpoint_ms > 0 ? fmt::format(" (checkpoints {:.0f} ms)", h->checkpoint_ms) : "",
              h->swapin_bytes, h->swapin_ms,
              h->room_wait_ms >= 0.5
                  ? fmt::format(" ({:.0f} ms of it waiting for room)", h->room_wait_ms)
                  : "",
              h->other_ms, h->total_ms,
              h->room_wait      ? ", its swap-in found no room"
              : h->over_bound() ? ", over its bound"
                                : "",
              h->bound_ms);
  host_.HandoffDone(gpu, *h);
}

void MemoryCoordinator::HolderDemand(const GpuKey& gpu, ConnId conn, JobId job) {
  // A swap-in short of room shows memory the ledger does not see: planned from now on.
  uint64_t unseen = ledger_.Unseen(gpu);
  ledger_.LearnUnseen(conn, gpu);
  if (ledger_.Unseen(gpu) != unseen) {
    spdlog::info("{}: {} bytes in use that no report shows (job {}'s swap-in found no room)", gpu,
                 ledger_.Unseen(gpu), job);
  }
  // The demand is in the report: without the headroom, the plan is what it asks.
  MemoryLedger::Plan plan = ledger_.MakeRoomWithHeadroom(gpu, job, MemoryLedger::kGrowthHeadroom);
  // A holder whose allocation cannot get its room (a job of higher priority uses it) holds
  // the GPU but does not run: `queue` and `status` say why, as for a waiting grant.
  if (!plan.feasible) NoteWait(gpu, job, plan.reason);
  host_.SendEvictions(gpu, plan);
}

void MemoryCoordinator::DemandMet(JobId job) {
  auto it = wait_.find(job);
  if (it != wait_.end() && it->second != "GpuMemory") wait_.erase(it);
}

void MemoryCoordinator::ResidentsDemand(const GpuKey& gpu) {
  if (arbiter_.IsShared(gpu)) return;
  for (JobId j : arbiter_.JobsOn(gpu)) {
    if (arbiter_.IsResident(gpu, j) && ledger_.Totals(j, gpu).demand > 0) {
      host_.SendEvictions(gpu, ResidentRoom(gpu, j));
    }
  }
}

std::optional<JobId> MemoryCoordinator::ExclusiveFirst(const GpuKey& gpu) const {
  TimePoint now = clock_.Now();
  std::vector<IncumbentCandidate> candidates;
  for (JobId j : arbiter_.JobsOn(gpu)) {
    if (arbiter_.IsResident(gpu, j)) continue;  // it keeps running beside the turns
    IncumbentCandidate c;
    c.job = j;
    MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, j, 0, /*leases_released=*/true);
    c.feasible = plan.feasible;
    c.bytes = plan.bytes;
    if (std::optional<TimePoint> since = arbiter_.SharedSince(gpu, j)) {
      TimePoint began = std::max(*since, stagger_.PhaseBegan(gpu, j).value_or(*since));
      c.phase = std::chrono::duration_cast<Millis>(now - began);
    }
    candidates.push_back(c);
  }
  return PickIncumbent(candidates);
}

void MemoryCoordinator::KeepIncumbent(const GpuKey& gpu) {
  gpus_[gpu].incumbent_room = true;
  MakeIncumbentRoom(gpu);
}

void MemoryCoordinator::MakeIncumbentRoom(const GpuKey& gpu) {
  auto it = gpus_.find(gpu);
  if (it == gpus_.end() || !it->second.incumbent_room) return;
  PerGpu& g = it->second;
  std::optional<JobId> holder = arbiter_.Holder(gpu);
  if (!holder || arbiter_.IsShared(gpu)) {
    g.incumbent_room = false;
    return;
  }
  TimePoint now = clock_.Now();
  for (const Arbiter::GpuView& v : arbiter_.Gpus(now)) {
    if (v.gpu != gpu) continue;
    for (JobId j : v.holding) {
      // Still draining: its memory cannot move yet (residents hold beside the turns).
      if (j != *holder && !arbiter_.IsResident(gpu, j)) return;
    }
  }
  g.incumbent_room = false;
  MemoryLedger::Plan plan = ledger_.GrantPlan(gpu, *holder);
  spdlog::info("{}: job {} keeps the GPU, exclusively; {} bytes evicted for its turn", gpu, *holder,
               plan.bytes);
  uint64_t before = host_.LastCheckpointSent();
  host_.SendEvictions(gpu, plan);
  ledger_.Ran(*holder, gpu, now);
  if (host_.LastCheckpointSent() != before) {
    g.incumbent_checkpoint = host_.LastCheckpointSent();
    arbiter_.MakingRoom(gpu);
  }
}

void MemoryCoordinator::CheckpointsDone(uint64_t last_done) {
  for (auto& [gpu, g] : gpus_) {
    if (g.incumbent_checkpoint != 0 && last_done >= g.incumbent_checkpoint) {
      g.incumbent_checkpoint = 0;
      arbiter_.RoomMade(gpu, clock_.Now());
    }
  }
}

void MemoryCoordinator::AddGpuJson(const GpuKey& gpu, nlohmann::json* g) const {
  (*g)["capacity"] = ledger_.Capacity(gpu);
  handoffs_.AddJson(gpu, g);
}

}  // namespace gshare
