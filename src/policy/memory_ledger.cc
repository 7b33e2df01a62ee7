#include "policy/memory_ledger.h"

#include <algorithm>
#include <map>
#include <set>

namespace gshare {

void MemoryLedger::Report(ConnId conn, JobId job, const GpuKey& gpu, const proto::MemReportMsg& m) {
  Entry& e = entries_[conn][gpu];
  e.job = job;
  e.gpu = gpu;
  e.demand_before = e.report.demand;
  e.report = m;
  if (m.total != 0) gpu_total_[gpu] = m.total;
  evicting_.erase({conn, gpu});
}

void MemoryLedger::Forget(ConnId conn) {
  if (auto it = entries_.find(conn); it != entries_.end()) {
    for (const auto& [gpu, e] : it->second) {
      SwapCounters& f = forgotten_swaps_[gpu];
      f.swaps_out += e.report.swaps_out;
      f.swaps_in += e.report.swaps_in;
      f.bytes_out += e.report.bytes_out;
      f.bytes_in += e.report.bytes_in;
    }
  }
  std::vector<GpuKey> gpus = GpusOf(conn);
  entries_.erase(conn);
  for (const GpuKey& gpu : gpus) {
    bool anyone = false;
    for (const auto& [other, per_gpu] : entries_) anyone = anyone || per_gpu.count(gpu) != 0;
    if (!anyone) unseen_.erase(gpu);
  }
  checkpointed_.erase(conn);
  for (auto it = evicting_.begin(); it != evicting_.end();) {
    it = it->first == conn ? evicting_.erase(it) : std::next(it);
  }
}

namespace {
template <typename T>
void SetMember(std::set<T>& set, const T& key, bool member) {
  if (member) {
    set.insert(key);
  } else {
    set.erase(key);
  }
}
}  // namespace

void MemoryLedger::SetCheckpointed(ConnId conn, bool checkpointed) {
  SetMember(checkpointed_, conn, checkpointed);
}

void MemoryLedger::SetSuspended(JobId job, bool suspended) {
  SetMember(suspended_, job, suspended);
}

bool MemoryLedger::Evicting(const GpuKey& gpu) const {
  for (const auto& [conn, g] : evicting_) {
    if (g == gpu) return true;
  }
  return false;
}

void MemoryLedger::LearnUnseen(ConnId conn, const GpuKey& gpu) {
  auto c = entries_.find(conn);
  if (c == entries_.end()) return;
  auto it = c->second.find(gpu);
  if (it == c->second.end()) return;
  const Entry& e = it->second;
  const uint64_t swapped = SwappedOf(conn, e);
  if (e.report.demand <= e.demand_before || swapped == 0 || Evicting(gpu)) return;
  const uint64_t shortfall = e.report.demand - e.demand_before;
  const uint64_t free_now = swapped > shortfall ? swapped - shortfall : 0;
  const uint64_t capacity = Capacity(gpu), used = Used(gpu);
  const uint64_t counted_free = capacity > used ? capacity - used : 0;
  if (counted_free <= free_now) return;
  uint64_t& unseen = unseen_[gpu];
  unseen = std::max(unseen, counted_free - free_now);
}

uint64_t MemoryLedger::Unseen(const GpuKey& gpu) const {
  auto it = unseen_.find(gpu);
  return it == unseen_.end() ? 0 : it->second;
}

std::vector<GpuKey> MemoryLedger::GpusOf(ConnId conn) const {
  std::vector<GpuKey> gpus;
  auto it = entries_.find(conn);
  if (it != entries_.end()) {
    for (const auto& [g, e] : it->second) gpus.push_back(g);
  }
  return gpus;
}

uint64_t MemoryLedger::ResidentOf(ConnId conn, const Entry& e) const {
  return IsCheckpointed(conn) ? 0 : e.report.resident;
}

uint64_t MemoryLedger::FixedOf(ConnId conn, const Entry& e) const {
  bool stuck = !checkpoint_available_ &&
               e.report.engine == static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
  return stuck ? ResidentOf(conn, e) : e.report.fixed;
}

uint64_t MemoryLedger::ContextOf(ConnId conn) const {
  return IsCheckpointed(conn) ? 0 : options_.context_bytes;
}

void MemoryLedger::NoteEviction(ConnId conn, const GpuKey& gpu, uint64_t bytes) {
  auto c = entries_.find(conn);
  if (c == entries_.end()) return;
  auto e = c->second.find(gpu);
  if (e == c->second.end()) return;
  proto::MemReportMsg& r = e->second.report;
  uint64_t movable = r.resident > r.fixed ? r.resident - r.fixed : 0;
  r.resident -= std::min(bytes, movable);
  r.staged -= std::min(bytes, r.staged);  // staged chunks leave first
  evicting_.insert({conn, gpu});
}

void MemoryLedger::Ran(JobId job, const GpuKey& gpu, TimePoint now) { last_ran_[{gpu, job}] = now; }

uint64_t MemoryLedger::Capacity(const GpuKey& gpu) const {
  auto it = gpu_total_.find(gpu);
  uint64_t total = it == gpu_total_.end() ? 0 : it->second;
  if (options_.gpu_limit != 0 && (total == 0 || options_.gpu_limit < total)) {
    total = options_.gpu_limit;
  }
  return total;
}

bool MemoryLedger::Fits(const GpuKey& gpu) const {
  return Capacity(gpu) != 0 && Overflow(gpu) == 0;
}

bool MemoryLedger::Reported(const GpuKey& gpu, JobId job) const {
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it != per_gpu.end() && it->second.job == job) return true;
  }
  return false;
}

uint64_t MemoryLedger::Overflow(const GpuKey& gpu) const {
  uint64_t capacity = Capacity(gpu);
  if (capacity == 0) return 0;
  uint64_t need = Need(gpu);
  return need > capacity ? need - capacity : 0;
}

uint64_t MemoryLedger::Need(const GpuKey& gpu, std::optional<ConnId> only) const {
  uint64_t need = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    if (only && conn != *only) continue;
    auto it = per_gpu.find(gpu);
    if (it == per_gpu.end() || suspended_.count(it->second.job) != 0) continue;
    const proto::MemReportMsg& r = it->second.report;
    need += r.allocated + r.demand + options_.context_bytes;
  }
  return need;
}

uint64_t MemoryLedger::FixedOfOthers(const GpuKey& gpu, JobId job) const {
  uint64_t fixed = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it == per_gpu.end() || it->second.job == job || IsCheckpointed(conn)) continue;
    fixed += FixedOf(conn, it->second) + options_.context_bytes;
  }
  return fixed;
}

uint64_t MemoryLedger::UsedBy(JobId job, const GpuKey& gpu) const {
  uint64_t used = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it != per_gpu.end() && it->second.job == job) {
      used += it->second.report.allocated + options_.context_bytes;
    }
  }
  return used;
}

MemoryLedger::Plan MemoryLedger::MakeRoom(const GpuKey& gpu, JobId job, uint64_t extra,
                                          bool leases_released) const {
  Plan plan;
  uint64_t capacity = Capacity(gpu);
  if (capacity == 0) return plan;
  // Memory in use that no report shows (LearnUnseen) is room no eviction can make.
  capacity -= std::min(capacity, Unseen(gpu));
  uint64_t used = 0;         // resident now, contexts included
  uint64_t missing = extra;  // bytes of `job` still to come back
  uint64_t own_swapped = 0;  // host bytes holding `job`'s swapped-out data
  struct Victim {
    TimePoint last;
    ConnId conn;
    uint64_t movable;
    bool checkpoint;
    uid_t uid;
    int priority;
    uint64_t staged;  // of movable: leaves without new host memory
  };
  std::vector<Victim> victims;
  const int own_priority = options_.priority ? options_.priority(job) : 0;
  bool held_back = false;     // a higher priority's memory in use stayed where it was
  std::set<JobId> kept_free;  // higher residents with kResidentHeadroom kept free beside them
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it == per_gpu.end()) continue;
    const Entry& e = it->second;
    const proto::MemReportMsg& r = e.report;
    const uint64_t resident = ResidentOf(conn, e);
    used += resident + ContextOf(conn);
    if (e.job == job) {
      uint64_t away = r.allocated > resident ? r.allocated - resident : 0;
      own_swapped += SwappedOf(conn, e);  // its host copies, given back as they come in
      missing += away;                    // fresh bytes need room too
      missing += r.demand;                // an allocation of it waits for this much
      missing += options_.context_bytes - ContextOf(conn);  // a restore brings it back
      continue;
    }
    if (suspended_.count(e.job) != 0) continue;  // stopped: it cannot move anything now
    if (options_.resident && options_.resident(gpu, e.job)) {  // stays on the GPU
      const int priority = options_.priority ? options_.priority(e.job) : 0;
      if (priority > own_priority && kept_free.insert(e.job).second) missing += kResidentHeadroom;
      continue;
    }
    bool checkpoint = checkpoint_available_ &&
                      r.engine == static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
    uint64_t fixed = FixedOf(conn, e);
    uint64_t movable = resident > fixed ? resident - fixed : 0;
    if (checkpoint) {
      if (IsCheckpointed(conn)) continue;
      if (!leases_released && options_.holds_lease && options_.holds_lease(conn)) continue;
      movable = resident + options_.context_bytes;  // all of it or nothing
    }
    const int priority = options_.priority ? options_.priority(e.job) : 0;
    const uint64_t staged = checkpoint ? 0 : StagedOf(conn, e);
    if (priority > own_priority && movable > staged) {
      // A lower job never takes room a higher one uses: only what it staged (idle long enough
      // to be copied out, docs/memory.md "Idle memory is staged") may leave for it.
      held_back = true;
      movable = staged;
    }
    if (movable == 0) continue;
    auto lr = last_ran_.find({gpu, e.job});
    victims.push_back({lr == last_ran_.end() ? TimePoint{} : lr->second, conn, movable, checkpoint,
                       OwnerOf(e.job), priority, staged});
  }
  // After the swap-in the GPU holds used + missing; whatever passes the capacity must go
  // (also memory that stayed resident beyond a gpu_limit while nothing had to move).
  if (used + missing <= capacity) return plan;
  uint64_t need = used + missing - capacity;
  std::stable_sort(victims.begin(), victims.end(), [](const Victim& a, const Victim& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.last < b.last;
  });
  // What each victim's owner may still swap out under host_budget_per_user.
  std::map<uid_t, uint64_t> user_left;
  bool user_bound = false;  // a victim gave less than it could for its owner's budget
  uint64_t new_host = 0;    // host bytes the plan takes beyond staged copies
  if (options_.host_budget_per_user != 0) {
    const uid_t own_uid = OwnerOf(job);
    for (const Victim& v : victims) {
      if (user_left.count(v.uid) != 0) continue;
      uint64_t swapped = HostBytesOf(v.uid);
      if (v.uid == own_uid) swapped -= std::min(swapped, own_swapped);  // it comes back
      user_left[v.uid] =
          options_.host_budget_per_user - std::min(options_.host_budget_per_user, swapped);
    }
  }
  for (const Victim& v : victims) {
    if (plan.bytes >= need) break;
    uint64_t take = v.checkpoint ? v.movable : std::min(v.movable, need - plan.bytes);
    if (options_.host_budget_per_user != 0) {
      uint64_t& left = user_left.at(v.uid);
      // Staged bytes are counted already: only the rest needs the owner's budget.
      uint64_t fresh = take - std::min(take, v.staged);
      if (fresh > left) {
        user_bound = true;
        if (v.checkpoint) continue;  // all or nothing
        take = std::min(take, v.staged) + left;
        fresh = left;
      }
      if (take == 0) continue;
      left -= fresh;
    }
    plan.evictions.push_back({v.conn, take, v.checkpoint});
    plan.bytes += take;
    new_host += take - std::min(take, v.staged);
  }
  if (plan.bytes < need) {
    plan.feasible = false;
    // The rest is fixed (other jobs' memory that cannot move), or its owners' budgets are full.
    plan.reason = user_bound  ? "UserHostMemoryBudget"
                  : held_back ? "HigherPriorityMemory"
                              : "GpuMemory";
  } else if (options_.host_budget != 0 &&
             SwappedBytes() + StagedBytes() - own_swapped + new_host > options_.host_budget) {
    // The job's own host copy is given back as it comes in, so it does not count.
    plan.feasible = false;
    plan.reason = "HostMemoryBudget";
  }
  return plan;
}

MemoryLedger::Plan MemoryLedger::MakeRoomWithHeadroom(const GpuKey& gpu, JobId job,
                                                      uint64_t headroom) const {
  if (headroom > 0) {
    Plan roomy = MakeRoom(gpu, job, headroom);
    if (roomy.feasible) return roomy;
  }
  return MakeRoom(gpu, job);
}

MemoryLedger::Plan MemoryLedger::GrantPlan(const GpuKey& gpu, JobId job) const {
  bool first_turn = last_ran_.count({gpu, job}) == 0;
  return MakeRoomWithHeadroom(gpu, job,
                              first_turn ? FirstTurnHeadroom(Totals(job, gpu).allocated) : 0);
}

MemoryLedger::SwapCounters MemoryLedger::SwapsOn(const GpuKey& gpu) const {
  SwapCounters t;
  if (auto f = forgotten_swaps_.find(gpu); f != forgotten_swaps_.end()) t = f->second;
  for (const auto& [conn, per_gpu] : entries_) {
    auto e = per_gpu.find(gpu);
    if (e == per_gpu.end()) continue;
    t.swaps_out += e->second.report.swaps_out;
    t.swaps_in += e->second.report.swaps_in;
    t.bytes_out += e->second.report.bytes_out;
    t.bytes_in += e->second.report.bytes_in;
  }
  return t;
}

MemoryLedger::JobTotals MemoryLedger::Totals(JobId job, const GpuKey& gpu) const {
  JobTotals t;
  std::set<ConnId> counted_host;
  for (const auto& [conn, per_gpu] : entries_) {
    for (const auto& [g, e] : per_gpu) {
      if (e.job != job || (!gpu.empty() && g != gpu)) continue;
      const proto::MemReportMsg& r = e.report;
      t.allocated += r.allocated;
      t.resident += ResidentOf(conn, e);
      t.checkpointed = t.checkpointed || IsCheckpointed(conn);
      t.fixed += r.fixed;
      t.demand += r.demand;
      // Per-process counters and the host pool are the same in each GPU's report.
      if (counted_host.insert(conn).second) {
        t.host_bytes += r.host_bytes;
      }
      t.swaps_out += r.swaps_out;
      t.swaps_in += r.swaps_in;
      t.bytes_out += r.bytes_out;
      t.bytes_in += r.bytes_in;
      t.swap_ns += r.swap_ns;
      t.staged += StagedOf(conn, e);
      t.swapped += SwappedOf(conn, e);
      t.engine = std::max(t.engine, r.engine);
    }
  }
  return t;
}

std::vector<MemoryLedger::ConnMemory> MemoryLedger::ConnsOn(const GpuKey& gpu) const {
  std::vector<ConnMemory> out;
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it == per_gpu.end()) continue;
    const Entry& e = it->second;
    const uint64_t free = PoolFree(conn);
    const uint64_t staged = StagedOf(conn, e);
    out.push_back({conn, e.job, e.report.engine, ResidentOf(conn, e), FixedOf(conn, e), staged,
                   IsCheckpointed(conn), suspended_.count(e.job) != 0,
                   free > staged ? free - staged : 0, e.report.host_bytes, SwappedOf(conn, e)});
  }
  return out;
}

uint64_t MemoryLedger::Used(const GpuKey& gpu) const {
  uint64_t used = 0;
  for (const auto& [conn, per_gpu] : entries_) {
    auto it = per_gpu.find(gpu);
    if (it != per_gpu.end()) used += ResidentOf(conn, it->second) + ContextOf(conn);
  }
  return used;
}

void MemoryLedger::MoveConn(ConnId conn, const GpuKey& from, const GpuKey& to) {
  auto c = entries_.find(conn);
  if (c == entries_.end() || from == to) return;
  auto e = c->second.find(from);
  if (e == c->second.end()) return;
  Entry moved = e->second;
  moved.gpu = to;
  c->second.erase(e);
  c->second[to] = moved;
  evicting_.erase({conn, from});
  if (gpu_total_.count(to) == 0 && gpu_total_.count(from) != 0) gpu_total_[to] = gpu_total_[from];
  auto ran = last_ran_.find({from, moved.job});
  if (ran != last_ran_.end()) {
    last_ran_[{to, moved.job}] = ran->second;
    last_ran_.erase(ran);
  }
}

}  // namespace gshare
