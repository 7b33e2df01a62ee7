// The daemon's memory policy (docs/memory.md, "The daemon's ledger and policy"): the ledger fed by
// the shims' reports, shared mode while the jobs on a GPU fit, evictions before an exclusive grant,
// pinned host memory asked for ahead of the first eviction, and the handoff timeline.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "base/byte_size.h"
#include "base/process_identity.h"
#include "daemon/daemon.h"
#include "ipc/frame_io.h"
#include "policy/incumbent.h"

namespace gshare {

namespace {

// The machine's RAM in bytes: what a host budget's "%" is of.
uint64_t PhysicalRamBytes() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

// Room for resident `job` on `gpu`: its memory comes back first, from the others; a process
// holding a lease there (the turn's holder) moves nothing while it runs (the shim refuses an
// eviction then), so it is not asked.
MemoryLedger::Plan ResidentRoom(const MemoryLedger& ledger, const Arbiter& arbiter,
                                const GpuKey& gpu, JobId job) {
  MemoryLedger::Plan plan = ledger.MakeRoom(gpu, job);
  std::erase_if(plan.evictions,
                [&arbiter](const MemoryLedger::Eviction& e) { return arbiter.ConnHolds(e.conn); });
  return plan;
}

}  // namespace

uint64_t Daemon::HostBudget(const Config& config) {
  const uint64_t ram = PhysicalRamBytes();
  Result<uint64_t> b = ParseByteSizeOrPercent(config.memory.host_budget, ram);
  return b.ok() ? b.value() : ram / 2;
}

uint64_t Daemon::UserHostBudget(const Config& config) {
  if (config.memory.host_budget_per_user.empty()) return 0;
  Result<uint64_t> b =
      ParseByteSizeOrPercent(config.memory.host_budget_per_user, PhysicalRamBytes());
  return b.ok() ? b.value() : 0;  // "0", as for host_budget: no limit
}

bool Daemon::SendLeaseMsg(ConnId conn, proto::MsgType type, const GpuKey& gpu, uint64_t epoch,
                          uint64_t bytes) {
  const Connection* c = Live(conn);
  if (c == nullptr) return false;
  proto::LeaseMsg m{};
  m.gpu = NamedBy(*c, gpu);
  m.epoch = epoch;
  m.bytes = bytes;
  std::string frame =
      EncodeFrame(type, std::string_view(reinterpret_cast<const char*>(&m), sizeof m));
  return Send(conn, frame);
}

void Daemon::OnMemoryQuery(Connection& c, const Frame& f) {
  if (c.kind != Connection::Kind::kUnknown) return Drop(c.id, "a memory query after its hello");
  c.kind = Connection::Kind::kCli;  // nothing to undo when it closes
  proto::MemQueryMsg q;
  std::memcpy(&q, f.payload.data(), sizeof q);
  proto::MemViewMsg v{};
  v.gpu = q.gpu;
  auto it = jobs_.find(q.job_id);
  if (it != jobs_.end() && MayJoin(c, *it->second, q.token)) {
    const GpuKey gpu = FormatGpuUuid(q.gpu);
    v.others_fixed = ledger_.FixedOfOthers(gpu, q.job_id);
    v.job_used = ledger_.UsedBy(q.job_id, gpu);
    v.known = 1;
  }
  Send(c, EncodeFrame(proto::MsgType::kMemoryView,
                      std::string_view(reinterpret_cast<const char*>(&v), sizeof v)));
}

void Daemon::OnMemReport(Connection& c, const GpuKey& gpu, const proto::MemReportMsg& m) {
  ledger_.Report(c.id, c.job, gpu, m);
  if (m.engine == static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint)) {
    EnsureCheckpointHelper();  // cuInit takes seconds: paid before the first eviction
  }
  ActiveJob& job = *jobs_.at(c.job);
  job.peak_bytes = std::max(job.peak_bytes, ledger_.Totals(c.job).allocated);
  if (m.held_ms != 0) job.held_ms[{c.id, gpu}] = m.held_ms;
  if ((m.flags & proto::kReportAfterSwapIn) != 0) {
    if ((m.flags & proto::kReportSwapInFailed) != 0) {
      ++job.swapins_failed;
      ++job.swapins_failed_in_row;
      spdlog::warn("job {}: its swap-in on {} did not finish ({} in a row); it asks again", c.job,
                   gpu, job.swapins_failed_in_row);
    } else {
      job.swapins_failed_in_row = 0;
      if (m.swapin_bytes != 0) {
        NoteTimeline(TimelineKind::kSwapIn, c.job, gpu, c.pid, m.swapin_bytes,
                     static_cast<double>(m.swapin_ns) / 1e6);
      }
    }
    arbiter_.SwappedIn(gpu, m.epoch, Now());  // the holder's quantum starts now
    CloseHandoff(gpu, c.job, m.epoch, m.swapin_bytes, static_cast<double>(m.swapin_ns) / 1e6);
  }
  // An allocation of the exclusive holder waits for room: take it from the others, with
  // headroom for the allocations that follow (kGrowthHeadroom).
  if (m.demand > 0 && arbiter_.Holder(gpu) == c.job && !arbiter_.IsShared(gpu)) {
    // A swap-in short of room shows memory the ledger does not see: planned from now on.
    uint64_t unseen = ledger_.Unseen(gpu);
    ledger_.LearnUnseen(c.id, gpu);
    if (ledger_.Unseen(gpu) != unseen) {
      spdlog::info("{}: {} bytes in use that no report shows (job {}'s swap-in found no room)", gpu,
                   ledger_.Unseen(gpu), c.job);
    }
    // The demand is in the report: without the headroom, the plan is what it asks.
    SendEvictions(gpu, ledger_.MakeRoomWithHeadroom(gpu, c.job, MemoryLedger::kGrowthHeadroom));
  }
  UpdateSharing(gpu);
  AskHolderToPin(gpu);
  RepriceHandoff(gpu);
  // A refused grant that is possible now goes out at the loop's Tick after this read.
}

void Daemon::CloseHandoff(const GpuKey& gpu, JobId job, uint64_t epoch, uint64_t bytes, double ms) {
  std::optional<HandoffLog::Handoff> h = handoffs_.SwappedIn(gpu, job, epoch, bytes, ms, Now());
  if (h) {
    spdlog::info(
        "handoff {}: job {} -> job {}: drain {:.0f} ms, evicted {} bytes, swapped in {} "
        "bytes in {:.0f} ms, total {:.0f} ms",
        gpu, h->from, h->to, h->drain_ms, h->evict_bytes, h->swapin_bytes, h->swapin_ms,
        h->total_ms);
  }
}

void Daemon::SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) {
  for (const MemoryLedger::Eviction& e : plan.evictions) {
    if (e.checkpoint) {
      CheckpointConn(e.conn, "room for another job on " + gpu);
      continue;
    }
    bool sent = SendLeaseMsg(e.conn, proto::MsgType::kEvict, gpu, 0, e.bytes);
    if (const Connection* victim = sent ? Live(e.conn) : nullptr; victim != nullptr) {
      NoteTimeline(TimelineKind::kSwapOut, victim->job, gpu, victim->pid, e.bytes);
    }
    spdlog::debug("evict {} bytes of connection {} on {}{}", e.bytes, e.conn, gpu,
                  sent ? "" : ": not sent");
    ledger_.NoteEviction(e.conn, gpu, e.bytes);
  }
}

void Daemon::AskHolderToPin(const GpuKey& gpu) {
  std::optional<JobId> holder = arbiter_.Holder(gpu);
  if (arbiter_.IsShared(gpu) || !holder) return;
  for (auto& [id, conn] : conns_) {
    if (conn->kind == Connection::Kind::kShim && conn->job == *holder) AskToPin(*conn, gpu);
  }
}

void Daemon::AskToPin(Connection& c, const GpuKey& gpu) {
  uint64_t bytes = ledger_.PoolToPin(c.job, gpu);
  uint64_t& asked = c.prepared[gpu];
  // Ask again only for a real change (pinning takes ~0.1 s/GiB).
  if (bytes > asked + (256ull << 20)) {
    asked = bytes;
    spdlog::debug("pin {} bytes ahead: connection {} on {}", bytes, c.id, gpu);
    SendLeaseMsg(c.id, proto::MsgType::kSwapPrepare, gpu, 0, bytes);
  }
}

void Daemon::SendSeats() {
  for (const PriorityLanes::Message& s : lanes_.TakeMessages()) {
    const Connection* c = Live(s.conn);
    if (c == nullptr) continue;
    proto::LeaseMsg m{};
    m.gpu = NamedBy(*c, s.gpu);
    m.epoch = s.slot;
    m.reason = s.seat_plus_one;
    m.bytes = s.yield_mask;
    m.ordinal = static_cast<int32_t>((s.watched ? 1u : 0u) | std::min(s.yielders, 255u) << 8);
    Send(s.conn, EncodeFrame(proto::MsgType::kBoardSeat,
                             std::string_view(reinterpret_cast<const char*>(&m), sizeof m)));
  }
}

void Daemon::QuietStoppedSeats(TimePoint now) {
  if (now < next_lanes_check_) return;
  next_lanes_check_ = now + kLanesCheck;
  for (ConnId id : lanes_.BusyConns()) {
    const Connection* c = Live(id);
    std::optional<char> state = c != nullptr ? ProcessState(c->pid) : std::nullopt;
    if (state && *state != 'T' && *state != 't' && *state != 'Z' && *state != 'X') continue;
    spdlog::info("pid {} is {}: its busy mark on the priority board is cleared",
                 c != nullptr ? c->pid : 0, state ? "stopped" : "gone");
    lanes_.Quiet(id);
  }
}

void Daemon::UpdateSharing(const GpuKey& gpu) {
  if (gpus_.count(gpu) == 0) return;
  // Priorities play no part: the priority board keeps them in shared mode too, unless it
  // could not be made (then jobs of different priorities take turns, exclusively).
  bool want =
      sharing_.Want(gpu, options_.config.scheduler.sharing == "auto", ledger_, arbiter_, Now());
  if (!lanes_.on()) want = want && arbiter_.OnePriorityOn(gpu);
  UpdateResidents(gpu);  // before a switch to exclusive mode: residents keep holding
  if (arbiter_.IsShared(gpu) != want) SwitchSharing(gpu, want);
  // A resident's allocation or swap-in that waits for room gets it (also one made resident
  // by the report that shows the demand).
  if (arbiter_.IsShared(gpu)) return;
  for (JobId j : arbiter_.JobsOn(gpu)) {
    if (arbiter_.IsResident(gpu, j) && ledger_.Totals(j, gpu).demand > 0) {
      SendEvictions(gpu, ResidentRoom(ledger_, arbiter_, gpu, j));
    }
  }
}

void Daemon::SwitchSharing(const GpuKey& gpu, bool want) {
  sharing_.Switched(gpu, want, Now());
  spdlog::info("{}: {} mode", gpu, want ? "shared" : "exclusive");
  std::optional<JobId> first = want ? std::nullopt : ExclusiveFirst(gpu);
  Apply(arbiter_.SetShared(gpu, want, Now(), first));
  UpdateGapWatch(gpu);  // a holder that held it exclusively keeps its grant
  if (!want && first && arbiter_.Holder(gpu) == first) {
    gpu_memory_[gpu].incumbent_room = true;
    MakeIncumbentRoom(gpu);
  }
  if (!want) AskHolderToPin(gpu);
}

void Daemon::UpdateResidents(const GpuKey& gpu) {
  std::set<JobId> residents;
  // Only with the board, which orders the residents and the turn's holder, and with sharing
  // on: `sharing = "exclusive"` asks for one job at a time.
  if (lanes_.on() && options_.config.scheduler.sharing == "auto") {
    std::set<JobId> candidates;
    for (JobId j : arbiter_.JobsOn(gpu)) {
      if (arbiter_.GangOf(j).empty() && !arbiter_.IsSuspended(j)) candidates.insert(j);
    }
    residents = sharing_.Residents(gpu, candidates, ledger_, arbiter_, Now());
  }
  for (JobId j : residents) {
    if (!arbiter_.IsResident(gpu, j)) {
      spdlog::info("{}: job {} stays resident; the jobs of lower priority take turns beside it",
                   gpu, j);
    }
  }
  Apply(arbiter_.SetResidents(gpu, residents, Now()));
}

std::optional<JobId> Daemon::ExclusiveFirst(const GpuKey& gpu) const {
  TimePoint now = Now();
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

void Daemon::MakeIncumbentRoom(const GpuKey& gpu) {
  GpuMemory& gm = gpu_memory_[gpu];
  if (!gm.incumbent_room) return;
  std::optional<JobId> holder = arbiter_.Holder(gpu);
  if (!holder || arbiter_.IsShared(gpu)) {
    gm.incumbent_room = false;
    return;
  }
  for (const Arbiter::GpuView& v : arbiter_.Gpus(Now())) {
    if (v.gpu != gpu) continue;
    for (JobId j : v.holding) {
      // Still draining: its memory cannot move yet (residents hold beside the turns).
      if (j != *holder && !arbiter_.IsResident(gpu, j)) return;
    }
  }
  gm.incumbent_room = false;
  MemoryLedger::Plan plan = ledger_.GrantPlan(gpu, *holder);
  spdlog::info("{}: job {} keeps the GPU, exclusively; {} bytes evicted for its turn", gpu, *holder,
               plan.bytes);
  uint64_t before = checkpoint_.last_sent();
  SendEvictions(gpu, plan);
  ledger_.Ran(*holder, gpu, Now());
  if (checkpoint_.last_sent() != before) {
    gm.incumbent_checkpoint = checkpoint_.last_sent();
    arbiter_.MakingRoom(gpu);
  }
}

bool Daemon::CanGrant(const GpuKey& gpu, JobId job) {
  // Asked before the holder drops: its memory counts as movable as after its release.
  MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, job, 0, /*leases_released=*/true);
  if (plan.feasible) {
    memory_wait_.erase(job);
    return true;
  }
  // GpuMemory: the others' fixed memory leaves too little room; the job can still run when
  // theirs is gone, but refusing forever would starve it if nothing changes: let it try
  // (its swap-in waits, then gives the lease back).
  bool checkpointed = ledger_.Totals(job, gpu).checkpointed;
  // A restore without room would leave the process unusable: only then may it not try.
  if (plan.reason == "GpuMemory" && !checkpointed) {
    memory_wait_[job] = plan.reason;
    return true;
  }
  if (memory_wait_[job] != plan.reason) {
    spdlog::info("job {} waits for {}: {}", job, gpu, plan.reason);
  }
  memory_wait_[job] = plan.reason;
  return false;
}

void Daemon::NoteDrop(const LeaseAction& a) {
  handoffs_.Dropped(a.gpu, arbiter_.Holder(a.gpu), Now());
}

uint64_t Daemon::PrepareGrant(const LeaseAction& a) {
  JobId job = conns_.at(a.conn)->job;
  uint64_t fixed = ledger_.FixedOfOthers(a.gpu, job);
  if (arbiter_.IsShared(a.gpu) || !arbiter_.enabled()) return fixed;
  if (Arbiter::IsResidentEpoch(a.epoch)) {
    // A resident's grant: its memory comes back first, from the turns' jobs; no handoff.
    SendEvictions(a.gpu, ResidentRoom(ledger_, arbiter_, a.gpu, job));
    ledger_.Ran(job, a.gpu, Now());
    return fixed;
  }
  if (handoffs_.IsOpen(a.gpu, a.epoch)) return fixed;  // another process of the same grant
  TimePoint now = Now();
  handoffs_.Granted(a.gpu, job, a.epoch, now);
  MemoryLedger::Plan plan = ledger_.GrantPlan(a.gpu, job);
  SendEvictions(a.gpu, plan);
  handoffs_.Evicted(a.gpu, a.epoch, plan.bytes);
  ledger_.Ran(job, a.gpu, now);
  // A swap-engine shim reports the end of its swap-in (kReportAfterSwapIn) after every grant.
  if (ledger_.Totals(job, a.gpu).engine == static_cast<uint32_t>(proto::MemoryEngine::kSwap)) {
    arbiter_.AwaitSwapIn(a.gpu, a.epoch);
  }
  return fixed;
}

uint64_t Daemon::HandoffBytes(const GpuKey& gpu) {
  std::optional<JobId> waiter = arbiter_.NextWaiter(gpu);
  if (!waiter) return 0;
  MemoryLedger::JobTotals t = ledger_.Totals(*waiter, gpu);
  if (t.checkpointed) return proto::kHandoffNever;
  MemoryLedger::Plan plan = ledger_.MakeRoom(gpu, *waiter, 0, /*leases_released=*/true);
  // An eviction into host memory not pinned yet waits for the pool to grow, at the host's
  // populate rate, which falls several-fold when jobs start together on untouched memory
  // (docs/benchmarks.md, "Why pools grew at 0.5–5 GB/s: the VM's first touch"): too slow and
  // too uncertain to leave early for. The holder's pool is pinned in its first turn (PoolToPin).
  constexpr uint64_t kUnpinnedSlack = 1ull << 30;
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

void Daemon::RepriceHandoff(const GpuKey& gpu) {
  auto it = gpu_memory_.find(gpu);
  if (it == gpu_memory_.end() || !it->second.priced || !arbiter_.NextWaiter(gpu)) return;
  uint64_t old = *it->second.priced;
  uint64_t now = HandoffBytes(gpu);
  bool priced_now = now != proto::kHandoffNever;
  bool priced_before = old != proto::kHandoffNever;
  uint64_t diff = now > old ? now - old : old - now;
  if (priced_now != priced_before || (priced_now && diff > kRepriceBytes)) {
    Apply(arbiter_.Recontend(gpu));
  }
}

nlohmann::json Daemon::JobMemoryJson(JobId job) const {
  MemoryLedger::JobTotals t = ledger_.Totals(job);
  static const char* kEngines[] = {"off", "swap", "managed", "checkpoint"};
  auto it = jobs_.find(job);
  std::string engine = t.engine < 4 ? kEngines[t.engine] : "?";
  if (it != jobs_.end() && !it->second->record.memory.empty() && t.allocated == 0) {
    engine = it->second->record.memory;
  }
  auto wait = memory_wait_.find(job);
  nlohmann::json waiting_for = nullptr;
  if (wait != memory_wait_.end()) waiting_for = wait->second;
  uint64_t checkpoints = 0, restores = 0, swapins_failed = 0;
  // Its processes gone from the ledger keep counting: the counters only ever grow.
  if (it != jobs_.end()) {
    t.swaps_out += it->second->gone_swaps_out;
    t.swaps_in += it->second->gone_swaps_in;
    t.bytes_out += it->second->gone_bytes_out;
    t.bytes_in += it->second->gone_bytes_in;
  }
  double checkpoint_s = 0, restore_s = 0;
  if (it != jobs_.end()) {
    checkpoints = it->second->checkpoints;
    restores = it->second->restores;
    checkpoint_s = it->second->checkpoint_ms / 1000;
    restore_s = it->second->restore_ms / 1000;
    swapins_failed = it->second->swapins_failed;
    if (waiting_for.is_null() && it->second->swapins_failed_in_row > 0) waiting_for = "SwapIn";
  }
  return {{"engine", engine},
          {"checkpointed", t.checkpointed},
          {"checkpoints", checkpoints},
          {"restores", restores},
          {"checkpoint_seconds", checkpoint_s},
          {"restore_seconds", restore_s},
          {"allocated", t.allocated},
          {"resident", t.resident},
          {"swapped", t.allocated > t.resident ? t.allocated - t.resident : 0},
          {"fixed", t.fixed},
          {"staged", t.staged},
          {"host_bytes", t.host_bytes},
          {"swaps_out", t.swaps_out},
          {"swaps_in", t.swaps_in},
          {"bytes_out", t.bytes_out},
          {"bytes_in", t.bytes_in},
          {"swap_seconds", static_cast<double>(t.swap_ns) / 1e9},
          {"swapins_failed", swapins_failed},
          {"waiting_for", waiting_for}};
}

void Daemon::AddGpuMemoryJson(const GpuKey& gpu, nlohmann::json* g) const {
  (*g)["capacity"] = ledger_.Capacity(gpu);
  handoffs_.AddJson(gpu, g);
}

}  // namespace gshare
