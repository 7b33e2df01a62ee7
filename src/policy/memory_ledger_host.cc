// The host side of the ledger: what each user's processes hold in host memory (swapped out,
// staged, the pinned pools, the user's shared pool) and what the host budgets leave them
// (docs/memory.md, "Pinned host pool" and "host_budget"). Part of MemoryLedger
// (memory_ledger.h); same thread rules.
#include <algorithm>
#include <set>

#include "policy/memory_ledger.h"

namespace gshare {

uint64_t MemoryLedger::PoolToPin(JobId job, const GpuKey& gpu) const {
  JobTotals t = Totals(job, gpu);
  if (t.engine != static_cast<uint32_t>(proto::MemoryEngine::kSwap)) return 0;
  if (t.demand > 0 || Evicting(gpu)) return 0;
  uint64_t movable = t.allocated > t.fixed ? t.allocated - t.fixed : 0;
  uint64_t bytes = std::min<uint64_t>(movable, Overflow(gpu) + kPinMargin);
  if (options_.host_budget != 0) bytes = std::min(bytes, options_.host_budget);
  // Never pinned for more than the user may swap out.
  if (options_.host_budget_per_user != 0) bytes = std::min(bytes, options_.host_budget_per_user);
  // Nor past what the budgets leave, other processes' pools counted: many jobs each pinning
  // for the whole overflow would pin several times the budget.
  const uint64_t left = HostLeftFor(OwnerOf(job));
  if (left != UINT64_MAX) bytes = std::min(bytes, t.host_bytes + left);
  return bytes;
}

uint64_t MemoryLedger::PoolFree(ConnId conn) const {
  auto it = entries_.find(conn);
  if (it == entries_.end()) return 0;
  uint64_t pool = 0, swapped = 0;
  bool shared = false;
  JobId job = 0;
  for (const auto& [gpu, e] : it->second) {
    pool = std::max(pool, e.report.host_bytes);
    swapped += SwappedOf(conn, e);
    shared = shared || e.report.shared_pool != 0;
    job = e.job;
  }
  // In a shared pool the process may also take what none of its owner's processes holds.
  return (pool > swapped ? pool - swapped : 0) + (shared ? SharedPoolFree(OwnerOf(job)) : 0);
}

uint64_t MemoryLedger::SharedPoolFree(uid_t uid) const {
  uint64_t size = 0, held = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    uint64_t own = 0, shared = 0;
    bool mine = false;
    for (const auto& [g, e] : per_gpu) {
      own = std::max(own, e.report.host_bytes);
      shared = std::max(shared, e.report.shared_pool);
      mine = mine || OwnerOf(e.job) == uid;
    }
    if (!mine || shared == 0) continue;
    size = std::max(size, shared);
    held += own;
  }
  return size > held ? size - held : 0;
}

uint64_t MemoryLedger::SwappedOf(ConnId conn, const Entry& e) const {
  uint64_t resident = ResidentOf(conn, e);
  uint64_t away = e.report.allocated > resident ? e.report.allocated - resident : 0;
  return away > e.report.fresh ? away - e.report.fresh : 0;  // fresh bytes hold no host memory
}

uint64_t MemoryLedger::SwappedBytesOf(uid_t uid) const {
  uint64_t n = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) {
      if (OwnerOf(e.job) == uid) n += SwappedOf(conn, e);
    }
  }
  return n;
}

uint64_t MemoryLedger::StagedOf(ConnId conn, const Entry& e) const {
  return std::min(e.report.staged, ResidentOf(conn, e));
}

uint64_t MemoryLedger::StagedBytes() const {
  uint64_t n = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) n += StagedOf(conn, e);
  }
  return n;
}

uint64_t MemoryLedger::HostBytesOf(uid_t uid) const {
  uint64_t n = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) {
      if (OwnerOf(e.job) == uid) n += SwappedOf(conn, e) + StagedOf(conn, e);
    }
  }
  return n;
}

uint64_t MemoryLedger::PinnedOf(uid_t uid, bool all_users) const {
  uint64_t n = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    uint64_t pool = 0, held = 0;
    bool mine = all_users;
    for (const auto& [g, e] : per_gpu) {
      pool = std::max(pool, e.report.host_bytes);  // one pool per process
      held += SwappedOf(conn, e) + StagedOf(conn, e);
      mine = mine || OwnerOf(e.job) == uid;
    }
    if (mine) n += std::max(pool, held);
  }
  if (!all_users) return n + SharedPoolFree(uid);
  std::set<uid_t> owners;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) {
      if (e.report.shared_pool != 0) owners.insert(OwnerOf(e.job));
    }
  }
  for (uid_t owner : owners) n += SharedPoolFree(owner);
  return n;
}

uint64_t MemoryLedger::HostLeftFor(uid_t uid) const {
  uint64_t left = UINT64_MAX;
  if (options_.host_budget != 0) {
    const uint64_t used = PinnedOf(uid, /*all_users=*/true);
    left = options_.host_budget - std::min(options_.host_budget, used);
  }
  if (options_.host_budget_per_user != 0) {
    const uint64_t used = PinnedOf(uid, /*all_users=*/false);
    left = std::min(left,
                    options_.host_budget_per_user - std::min(options_.host_budget_per_user, used));
  }
  return left;
}

uint64_t MemoryLedger::SwappedBytes() const {
  uint64_t n = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) n += SwappedOf(conn, e);
  }
  return n;
}

}  // namespace gshare
