// Lease policy. Invariants per GPU lease:
//  - `holding` has only connections of `holder` and of residents in exclusive mode (any job
//    when disabled), besides connections that were sent DROP and have not released yet;
//  - a job is in `queue` iff one of its connections is in `wanting`;
//  - `dropping` is set from SendDrop until the last holding connection has released.
#include "policy/arbiter.h"

#include <algorithm>

namespace gshare {

Arbiter::Arbiter(Options options) : options_(options) {}

void Arbiter::AddJob(JobId job, int priority, Millis quantum, uid_t uid) {
  Job& j = jobs_[job];
  j.uid = uid;
  j.priority = priority;
  j.quantum = quantum;
}

void Arbiter::SetPriority(JobId job, int priority) {
  auto it = jobs_.find(job);
  if (it != jobs_.end()) it->second.priority = priority;
}

void Arbiter::RemoveJob(JobId job) {
  auto it = jobs_.find(job);
  if (it != jobs_.end() && it->second.conns.empty()) {
    jobs_.erase(it);
    gangs_.erase(job);
  }
}

void Arbiter::AddConn(ConnId conn, JobId job, pid_t pid) {
  conns_[conn] = Conn{job, pid};
  jobs_[job].conns.insert(conn);
}

Millis Arbiter::QuantumOf(const Job& job) const {
  return job.quantum.count() > 0 ? job.quantum : options_.default_quantum;
}

bool Arbiter::JobWants(const Lease& lease, JobId job) const {
  for (ConnId c : lease.wanting) {
    if (conns_.at(c).job == job) return true;
  }
  return false;
}

void Arbiter::Enqueue(Lease& lease, JobId job, TimePoint now) {
  if (lease.queue.count(job) != 0) return;
  lease.queue[job] = ++arrivals_;
  lease.wait_since[job] = now;
}

bool Arbiter::GrantedBefore(const Lease& lease, const UserTurns& turns, JobId a, JobId b) const {
  const Job& ja = jobs_.at(a);
  const Job& jb = jobs_.at(b);
  if (ja.priority != jb.priority) return ja.priority > jb.priority;
  if (a == lease.incumbent || b == lease.incumbent) return a == lease.incumbent;
  uint64_t ta = turns.Last(ja.uid);
  uint64_t tb = turns.Last(jb.uid);
  if (ta != tb) return ta < tb;  // the user served least recently
  return lease.queue.at(a) < lease.queue.at(b);
}

std::optional<JobId> Arbiter::BestWaiter(const GpuKey& gpu, const Lease& lease,
                                         bool grantable_only) const {
  std::optional<JobId> best;
  for (const auto& [job, arrival] : lease.queue) {
    if (jobs_.at(job).suspended) continue;
    if (grantable_only && options_.can_grant && !options_.can_grant(gpu, job)) continue;
    if (!best || GrantedBefore(lease, lease.turns, job, *best)) best = job;
  }
  return best;
}

std::vector<JobId> Arbiter::WaiterOrder(const Lease& lease) const {
  // Each grant moves its user behind the others, so the order is found one grant at a time.
  std::vector<JobId> left;
  for (const auto& [job, arrival] : lease.queue) left.push_back(job);
  UserTurns turns = lease.turns;
  std::vector<JobId> order;
  while (!left.empty()) {
    auto best = left.begin();
    for (auto it = left.begin(); it != left.end(); ++it) {
      if (GrantedBefore(lease, turns, *it, *best)) best = it;
    }
    order.push_back(*best);
    turns.Took(jobs_.at(*best).uid);
    left.erase(best);
  }
  return order;
}

LeaseActions Arbiter::Request(ConnId conn, const GpuKey& gpu, TimePoint now) {
  LeaseActions out;
  auto cit = conns_.find(conn);
  if (cit == conns_.end()) return out;
  JobId job = cit->second.job;
  Lease& lease = leases_[gpu];
  if ((!options_.enabled || lease.shared) && !jobs_.at(job).suspended) {
    lease.holding[conn] = lease.epoch;
    if (lease.shared && options_.enabled) StartShared(lease, job, now);
    out.push_back({LeaseAction::Kind::kGrant, conn, gpu, lease.epoch, 0});
    return out;
  }
  if (options_.enabled && !lease.shared && lease.residents.count(job) != 0) {
    // A resident: granted at once, beside the turns (a suspended one waits for its resume).
    lease.wanting.insert(conn);
    if (!jobs_.at(job).suspended) GrantResidents(gpu, lease, now, out);
    return out;
  }
  if (lease.holder == job && !lease.dropping && lease.stopped.count(job) == 0) {
    // Another process (or thread) of the holding job: it shares the lease.
    lease.holding[conn] = lease.epoch;
    out.push_back({LeaseAction::Kind::kGrant, conn, gpu, lease.epoch, 0});
    if (lease.contended_epoch == lease.epoch) {
      out.push_back({LeaseAction::Kind::kContended, conn, gpu, lease.epoch, 0});
    }
    return out;
  }
  lease.wanting.insert(conn);
  Enqueue(lease, job, now);
  if (!options_.enabled || lease.shared) return out;  // suspended: waits for SetSuspended
  if (InGang(job, lease)) GangWaits(job, now, out);
  Schedule(gpu, lease, now, out);
  if (lease.holder && lease.holder != job) NotifyContended(gpu, lease, out);
  ScheduleGangs(now, out);
  return out;
}

void Arbiter::Schedule(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  if (!options_.enabled || lease.shared) return;
  if (lease.holder && !lease.dropping) {
    if ((lease.turn_waits & (kDelivery | kRoom)) != 0) return;  // its turn has not begun
    // Only a waiter that could be granted ends the holder's turn (else the GPU would idle).
    std::optional<JobId> best = NextGrant(gpu, lease, /*for_drop=*/true);
    if (!best) return;
    const Job& holder = jobs_.at(*lease.holder);
    int waiter_priority = jobs_.at(*best).priority;
    bool preempt = waiter_priority > holder.priority;
    bool expired = now >= TurnEnd(lease) && waiter_priority >= holder.priority;
    if (preempt || expired) SendDrop(gpu, lease, now, out);
    return;
  }
  if (lease.holder || TurnHolding(lease)) return;  // still draining
  std::optional<JobId> best = NextGrant(gpu, lease, /*for_drop=*/false);
  if (!best) return;
  if (InGang(*best, lease)) {
    GrantGang(*best, now, out);
  } else {
    Grant(gpu, lease, *best, now, out);
  }
}

void Arbiter::Grant(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now, LeaseActions& out) {
  ++lease.epoch;
  BeginHolding(gpu, lease, job, now, out);
  NotifyContended(gpu, lease, out);
}

void Arbiter::BeginHolding(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now,
                           LeaseActions& out) {
  lease.holder = job;
  lease.turns.Took(jobs_.at(job).uid);
  lease.incumbent.reset();
  lease.granted_at = now;
  lease.held_since = now;
  lease.dropping = false;
  lease.turn_waits = 0;
  lease.switch_time = Millis(0);
  lease.queue.erase(job);
  StopWaiting(lease, job, now);
  if (lease.stopped.erase(job) != 0) {
    for (ConnId c : jobs_.at(job).conns) {
      out.push_back({LeaseAction::Kind::kContinue, c, gpu, 0, conns_.at(c).pid});
    }
  }
  for (auto it = lease.wanting.begin(); it != lease.wanting.end();) {
    if (conns_.at(*it).job == job) {
      lease.holding[*it] = lease.epoch;
      out.push_back({LeaseAction::Kind::kGrant, *it, gpu, lease.epoch, 0});
      it = lease.wanting.erase(it);
    } else {
      ++it;
    }
  }
}

void Arbiter::NotifyContended(const GpuKey& gpu, Lease& lease, LeaseActions& out) {
  if (lease.contended_epoch == lease.epoch || lease.dropping || lease.queue.empty()) return;
  lease.contended_epoch = lease.epoch;
  ContendedToHolder(gpu, lease, out);
}

void Arbiter::ContendedToHolder(const GpuKey& gpu, const Lease& lease, LeaseActions& out) const {
  for (const auto& [conn, epoch] : lease.holding) {
    // Not the connections still dropping from shared mode (HoldInPlace), nor residents.
    if (lease.holder && conns_.at(conn).job != *lease.holder) continue;
    if (ResidentConn(lease, conn)) continue;
    out.push_back({LeaseAction::Kind::kContended, conn, gpu, epoch, 0});
  }
}

LeaseActions Arbiter::Recontend(const GpuKey& gpu) const {
  LeaseActions out;
  auto it = leases_.find(gpu);
  if (!options_.enabled || it == leases_.end()) return out;
  const Lease& lease = it->second;
  if (lease.shared || lease.dropping || lease.contended_epoch != lease.epoch) return out;
  ContendedToHolder(gpu, lease, out);
  return out;
}

void Arbiter::SendDrop(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  lease.dropping = true;
  lease.drop_sent_at = now;
  for (const auto& [conn, epoch] : lease.holding) {
    if (!ResidentConn(lease, conn)) out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
  }
  // A gang drops from all its GPUs at once; the others are marked before this one is
  // rescheduled, so that none of them counts as free for the gang again.
  if (lease.holder) DropGang(*lease.holder, now, out);
  if (!TurnHolding(lease)) {
    const std::optional<JobId> was = lease.holder;
    if (was && GangDraining(*was)) return;  // handed on with the gang's other GPUs
    EndHolding(lease, now);
    Schedule(gpu, lease, now, out);
    if (was) FinishGangDrain(*was, now, out);
  }
}

void Arbiter::EndHolding(Lease& lease, TimePoint now) {
  if (lease.holder && lease.dropping) {
    lease.last_drain_ms = Seconds(lease.drop_sent_at, now) * 1000;
    lease.max_drain_ms = std::max(lease.max_drain_ms, lease.last_drain_ms);
    ++lease.drains;
  }
  if (lease.holder) {
    JobId job = *lease.holder;
    auto jit = jobs_.find(job);
    lease.lease_seconds += Seconds(lease.held_since, now);
    if (jit != jobs_.end()) {
      // A turn that ends before it began (its grant undelivered, its swap-in not over) was
      // waiting, as BeginTurn would have counted it: the job's counters only ever grow.
      (lease.turn_waits != 0 ? jit->second.wait_seconds : jit->second.lease_seconds) +=
          Seconds(lease.granted_at, now);
      if (Wants(lease, job)) {
        Enqueue(lease, job, now);  // round robin: to the tail
        if (IsGang(job) && jit->second.gang_wait == 0) jit->second.gang_wait = ++arrivals_;
      }
    }
  }
  lease.holder.reset();
  lease.dropping = false;
  lease.turn_waits = 0;
}

void Arbiter::ReleaseConn(const GpuKey& gpu, Lease& lease, ConnId conn, TimePoint now,
                          LeaseActions& out) {
  const bool resident = ResidentConn(lease, conn);
  lease.holding.erase(conn);
  if ((lease.shared || resident) && conns_.count(conn) != 0) {
    JobId job = conns_.at(conn).job;
    bool still = false;
    for (const auto& [c, epoch] : lease.holding) still = still || conns_.at(c).job == job;
    if (!still) EndShared(lease, job, now);
  }
  if (!options_.enabled || lease.shared || resident) return;
  if (lease.holder && conns_.count(conn) && conns_.at(conn).job != *lease.holder) return;
  bool holder_left = true;
  for (const auto& [c, epoch] : lease.holding) {
    if (lease.holder && conns_.at(c).job == *lease.holder) holder_left = false;
  }
  if (holder_left || !lease.holder) {
    const std::optional<JobId> was = lease.holder;
    // A dropped gang hands its GPUs on together, once it has drained all of them.
    if (was && lease.dropping && GangDraining(*was)) return;
    if (lease.holder || !TurnHolding(lease)) EndHolding(lease, now);
    Schedule(gpu, lease, now, out);
    // A gang whose turn ended on one GPU (its processes there released) ends it everywhere.
    if (was && lease.holder != was) {
      DropGang(*was, now, out);
      FinishGangDrain(*was, now, out);
    }
  }
}

LeaseActions Arbiter::Released(ConnId conn, const GpuKey& gpu, uint64_t epoch, TimePoint now) {
  LeaseActions out;
  auto lit = leases_.find(gpu);
  if (lit == leases_.end()) return out;
  Lease& lease = lit->second;
  auto h = lease.holding.find(conn);
  if (h == lease.holding.end() || h->second != epoch) return out;  // stale or duplicate
  ReleaseConn(gpu, lease, conn, now, out);
  ScheduleGangs(now, out);
  return out;
}

LeaseActions Arbiter::Disconnected(ConnId conn, TimePoint now) {
  LeaseActions out;
  auto cit = conns_.find(conn);
  if (cit == conns_.end()) return out;
  JobId job = cit->second.job;
  for (auto& [gpu, lease] : leases_) {
    lease.wanting.erase(conn);
    if (!Wants(lease, job) && lease.holder != job) {
      lease.queue.erase(job);
      lease.wait_since.erase(job);
    }
    if (lease.holding.count(conn) != 0) ReleaseConn(gpu, lease, conn, now, out);
  }
  jobs_[job].conns.erase(conn);
  conns_.erase(cit);
  if (IsGang(job)) {
    bool waits = false;
    for (const auto& [gpu, lease] : leases_) waits = waits || lease.queue.count(job) != 0;
    if (!waits) jobs_[job].gang_wait = 0;
  }
  // A job gone entirely cannot stay stopped or queued anywhere.
  if (jobs_[job].conns.empty()) {
    for (auto& [gpu, lease] : leases_) {
      lease.stopped.erase(job);
      lease.queue.erase(job);
      lease.wait_since.erase(job);
      if (lease.holder == job && !TurnHolding(lease)) {
        EndHolding(lease, now);
        Schedule(gpu, lease, now, out);
      }
    }
  }
  ScheduleGangs(now, out);
  return out;
}

LeaseActions Arbiter::Tick(TimePoint now) {
  LeaseActions out;
  for (auto& [gpu, lease] : leases_) {
    bool holder_holds = false;  // not a gang's drained GPU waiting for its others
    for (const auto& [conn, epoch] : lease.holding) {
      holder_holds = holder_holds || (lease.holder && conns_.at(conn).job == *lease.holder);
    }
    if (lease.dropping && lease.holder && holder_holds &&
        now - lease.drop_sent_at >= options_.drop_grace) {
      // The holder ignored DROP: stop its processes, take the lease back, and queue it so
      // it is continued (and re-granted) when its turn comes.
      JobId job = *lease.holder;
      for (ConnId c : jobs_.at(job).conns) {
        out.push_back({LeaseAction::Kind::kStop, c, gpu, 0, conns_.at(c).pid});
      }
      lease.stopped.insert(job);
      for (auto it = lease.holding.begin(); it != lease.holding.end();) {
        if (conns_.at(it->first).job == job) {
          lease.wanting.insert(it->first);
          it = lease.holding.erase(it);
        } else {
          ++it;
        }
      }
      EndHolding(lease, now);
      FinishGangDrain(job, now, out);
    }
    Schedule(gpu, lease, now, out);
  }
  return out;
}

std::optional<TimePoint> Arbiter::NextDeadline() const {
  std::optional<TimePoint> next;
  auto consider = [&next](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  if (!options_.enabled) return next;
  for (const auto& [gpu, lease] : leases_) {
    if (!lease.holder) {
      // Waiters the grant filter refused are asked again each second.
      if (!lease.queue.empty() && !TurnHolding(lease) && !lease.shared) {
        consider(std::chrono::steady_clock::now() + Millis(1000));
      }
      continue;
    }
    if (lease.dropping) {
      consider(lease.drop_sent_at + options_.drop_grace);
    } else if (!lease.queue.empty() && (lease.turn_waits & (kDelivery | kRoom)) == 0) {
      consider(TurnEnd(lease));
    }
  }
  return next;
}

LeaseActions Arbiter::SetEnabled(bool enabled, TimePoint now) {
  LeaseActions out;
  if (enabled == options_.enabled) return out;
  options_.enabled = enabled;
  for (auto& [gpu, lease] : leases_) {
    if (!enabled) {
      OpenToAll(gpu, lease, now, out);
    } else {
      // Gating resumes: everyone drops; the lease is granted once all have drained.
      for (const auto& [conn, epoch] : lease.holding) {
        out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
      }
    }
  }
  return out;
}

std::vector<Arbiter::GpuView> Arbiter::Gpus(TimePoint now) const {
  std::vector<GpuView> views;
  for (const auto& [gpu, lease] : leases_) {
    GpuView v;
    v.gpu = gpu;
    v.holder = lease.holder;
    if (lease.holder) v.held_seconds = Seconds(lease.granted_at, now);
    v.dropping = lease.dropping;
    v.shared = lease.shared;
    std::set<JobId> holding;
    for (const auto& [conn, epoch] : lease.holding) holding.insert(conns_.at(conn).job);
    v.holding.assign(holding.begin(), holding.end());
    v.residents.assign(lease.residents.begin(), lease.residents.end());
    v.last_drain_ms = lease.last_drain_ms;
    v.max_drain_ms = lease.max_drain_ms;
    v.drains = lease.drains;
    v.lease_seconds_total = lease.lease_seconds;
    if (lease.holder) v.lease_seconds_total += Seconds(lease.held_since, now);
    for (const auto& [job, since] : lease.shared_since) {
      v.lease_seconds_total += Seconds(since, now);
    }
    v.wait_seconds_total = lease.wait_seconds;
    for (const auto& [job, since] : lease.wait_since) v.wait_seconds_total += Seconds(since, now);
    v.waiters = WaiterOrder(lease);
    v.stopped.assign(lease.stopped.begin(), lease.stopped.end());
    views.push_back(std::move(v));
  }
  return views;
}

void Arbiter::StopWaiting(Lease& lease, JobId job, TimePoint now) {
  auto ws = lease.wait_since.find(job);
  if (ws == lease.wait_since.end()) return;
  jobs_.at(job).wait_seconds += Seconds(ws->second, now);
  lease.wait_seconds += Seconds(ws->second, now);
  lease.wait_since.erase(ws);
}

std::optional<JobId> Arbiter::NextWaiter(const GpuKey& gpu) const {
  auto it = leases_.find(gpu);
  if (it == leases_.end()) return std::nullopt;
  return BestWaiter(gpu, it->second, /*grantable_only=*/false);
}

std::optional<JobId> Arbiter::Holder(const GpuKey& gpu) const {
  auto it = leases_.find(gpu);
  if (it == leases_.end()) return std::nullopt;
  return it->second.holder;
}

std::vector<JobId> Arbiter::JobsOn(const GpuKey& gpu) const {
  std::set<JobId> jobs;
  auto it = leases_.find(gpu);
  if (it != leases_.end()) {
    for (const auto& [conn, epoch] : it->second.holding) jobs.insert(conns_.at(conn).job);
    for (ConnId c : it->second.wanting) jobs.insert(conns_.at(c).job);
  }
  return {jobs.begin(), jobs.end()};
}

std::vector<JobId> Arbiter::HoldingJobs(const GpuKey& gpu) const {
  std::set<JobId> jobs;
  auto it = leases_.find(gpu);
  if (it != leases_.end()) {
    for (const auto& [conn, epoch] : it->second.holding) jobs.insert(conns_.at(conn).job);
  }
  return {jobs.begin(), jobs.end()};
}

int Arbiter::PriorityOf(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : it->second.priority;
}

bool Arbiter::OnePriorityOn(const GpuKey& gpu) const {
  std::vector<JobId> jobs = JobsOn(gpu);
  for (JobId j : jobs) {
    if (PriorityOf(j) != PriorityOf(jobs.front())) return false;
  }
  return true;
}

Arbiter::JobUsage Arbiter::Usage(JobId job, TimePoint now) const {
  JobUsage u;
  auto jit = jobs_.find(job);
  if (jit == jobs_.end()) return u;
  u.lease_seconds = jit->second.lease_seconds;
  u.wait_seconds = jit->second.wait_seconds;
  for (const auto& [gpu, lease] : leases_) {
    if (lease.holder == job) {
      u.holding = true;
      // Until its turn begins (BeginTurn) the holder's time is waiting.
      (lease.turn_waits != 0 ? u.wait_seconds : u.lease_seconds) += Seconds(lease.granted_at, now);
    }
    auto sh = lease.shared_since.find(job);
    if (sh != lease.shared_since.end()) {
      u.holding = true;
      u.lease_seconds += Seconds(sh->second, now);
    }
    auto ws = lease.wait_since.find(job);
    if (ws != lease.wait_since.end()) {
      u.waiting = true;
      u.wait_seconds += Seconds(ws->second, now);
    }
    if (lease.stopped.count(job) != 0) u.stopped = true;
  }
  return u;
}

}  // namespace gshare
