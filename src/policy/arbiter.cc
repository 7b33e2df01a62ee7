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
  Job& j = s_.jobs[job];
  j.uid = uid;
  j.priority = priority;
  j.quantum = quantum;
}

void Arbiter::SetPriority(JobId job, int priority) {
  auto it = s_.jobs.find(job);
  if (it != s_.jobs.end()) it->second.priority = priority;
}

void Arbiter::RemoveJob(JobId job) {
  auto it = s_.jobs.find(job);
  if (it != s_.jobs.end() && it->second.conns.empty()) {
    s_.jobs.erase(it);
    s_.gangs.erase(job);
  }
}

void Arbiter::AddConn(ConnId conn, JobId job, pid_t pid) {
  s_.conns[conn] = Conn{job, pid};
  s_.jobs[job].conns.insert(conn);
}

Millis Arbiter::QuantumOf(const Job& job) const {
  return job.quantum.count() > 0 ? job.quantum : options_.default_quantum;
}

void Arbiter::Enqueue(Lease& lease, JobId job, TimePoint now) {
  if (lease.queue.count(job) != 0) return;
  lease.queue[job] = ++s_.arrivals;
  lease.wait_since[job] = now;
}

LeaseActions Arbiter::Request(ConnId conn, const GpuKey& gpu, TimePoint now) {
  LeaseActions out;
  auto cit = s_.conns.find(conn);
  if (cit == s_.conns.end()) return out;
  JobId job = cit->second.job;
  Lease& lease = s_.leases[gpu];
  if ((!options_.enabled || lease.shared) && !s_.jobs.at(job).suspended) {
    lease.holding[conn] = lease.epoch;
    if (lease.shared && options_.enabled) StartShared(lease, job, now);
    out.push_back({LeaseAction::Kind::kGrant, conn, gpu, lease.epoch, 0});
    return out;
  }
  if (options_.enabled && !lease.shared && lease.residents.count(job) != 0) {
    // A resident: granted at once, beside the turns (a suspended one waits for its resume).
    lease.wanting.insert(conn);
    if (!s_.jobs.at(job).suspended) GrantResidents(gpu, lease, now, out);
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
  if (order_.InGang(job, lease)) GangWaits(job, now, out);
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
    std::optional<JobId> best = order_.NextGrant(gpu, lease, /*for_drop=*/true);
    if (!best) return;
    const Job& holder = s_.jobs.at(*lease.holder);
    int waiter_priority = s_.jobs.at(*best).priority;
    bool preempt = waiter_priority > holder.priority;
    bool expired = now >= TurnEnd(lease) && waiter_priority >= holder.priority;
    if (preempt || expired) SendDrop(gpu, lease, now, out);
    return;
  }
  if (lease.holder || order_.TurnHolding(lease)) return;  // still draining
  std::optional<JobId> best = order_.NextGrant(gpu, lease, /*for_drop=*/false);
  if (!best) return;
  if (order_.InGang(*best, lease)) {
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
  lease.turns.Took(s_.jobs.at(job).uid);
  lease.incumbent.reset();
  lease.granted_at = now;
  lease.held_since = now;
  lease.dropping = false;
  lease.turn_waits = 0;
  lease.switch_time = Millis(0);
  lease.queue.erase(job);
  StopWaiting(lease, job, now);
  if (lease.stopped.erase(job) != 0) {
    for (ConnId c : s_.jobs.at(job).conns) {
      out.push_back({LeaseAction::Kind::kContinue, c, gpu, 0, s_.conns.at(c).pid});
    }
  }
  for (auto it = lease.wanting.begin(); it != lease.wanting.end();) {
    if (s_.conns.at(*it).job == job) {
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
    if (lease.holder && s_.conns.at(conn).job != *lease.holder) continue;
    if (order_.ResidentConn(lease, conn)) continue;
    out.push_back({LeaseAction::Kind::kContended, conn, gpu, epoch, 0});
  }
}

LeaseActions Arbiter::Recontend(const GpuKey& gpu) const {
  LeaseActions out;
  auto it = s_.leases.find(gpu);
  if (!options_.enabled || it == s_.leases.end()) return out;
  const Lease& lease = it->second;
  if (lease.shared || lease.dropping || lease.contended_epoch != lease.epoch) return out;
  ContendedToHolder(gpu, lease, out);
  return out;
}

void Arbiter::SendDrop(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  lease.dropping = true;
  lease.drop_sent_at = now;
  for (const auto& [conn, epoch] : lease.holding) {
    if (!order_.ResidentConn(lease, conn))
      out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
  }
  // A gang drops from all its GPUs at once; the others are marked before this one is
  // rescheduled, so that none of them counts as free for the gang again.
  if (lease.holder) DropGang(*lease.holder, now, out);
  if (!order_.TurnHolding(lease)) {
    const std::optional<JobId> was = lease.holder;
    if (was && order_.GangDraining(*was)) return;  // handed on with the gang's other GPUs
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
    auto jit = s_.jobs.find(job);
    lease.lease_seconds += Seconds(lease.held_since, now);
    if (jit != s_.jobs.end()) {
      // A turn that ends before it began (its grant undelivered, its swap-in not over) was
      // waiting, as BeginTurn would have counted it: the job's counters only ever grow.
      (lease.turn_waits != 0 ? jit->second.wait_seconds : jit->second.lease_seconds) +=
          Seconds(lease.granted_at, now);
      if (order_.Wants(lease, job)) {
        Enqueue(lease, job, now);  // round robin: to the tail
        if (order_.IsGang(job) && jit->second.gang_wait == 0) jit->second.gang_wait = ++s_.arrivals;
      }
    }
  }
  lease.holder.reset();
  lease.dropping = false;
  lease.turn_waits = 0;
}

void Arbiter::ReleaseConn(const GpuKey& gpu, Lease& lease, ConnId conn, TimePoint now,
                          LeaseActions& out) {
  const bool resident = order_.ResidentConn(lease, conn);
  lease.holding.erase(conn);
  if ((lease.shared || resident) && s_.conns.count(conn) != 0) {
    JobId job = s_.conns.at(conn).job;
    bool still = false;
    for (const auto& [c, epoch] : lease.holding) still = still || s_.conns.at(c).job == job;
    if (!still) EndShared(lease, job, now);
  }
  if (!options_.enabled || lease.shared || resident) return;
  if (lease.holder && s_.conns.count(conn) && s_.conns.at(conn).job != *lease.holder) return;
  bool holder_left = true;
  for (const auto& [c, epoch] : lease.holding) {
    if (lease.holder && s_.conns.at(c).job == *lease.holder) holder_left = false;
  }
  if (holder_left || !lease.holder) {
    const std::optional<JobId> was = lease.holder;
    // A dropped gang hands its GPUs on together, once it has drained all of them.
    if (was && lease.dropping && order_.GangDraining(*was)) return;
    // A gang that lets go of one GPU of its own accord (idle, or its process there ended)
    // ends its turn on all of them, and this GPU waits for the others to drain like a DROP.
    if (was && !lease.dropping && order_.IsGang(*was)) {
      lease.dropping = true;
      lease.drop_sent_at = now;
      DropGang(*was, now, out);
      if (order_.GangDraining(*was)) return;
    }
    if (lease.holder || !order_.TurnHolding(lease)) EndHolding(lease, now);
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
  auto lit = s_.leases.find(gpu);
  if (lit == s_.leases.end()) return out;
  Lease& lease = lit->second;
  auto h = lease.holding.find(conn);
  if (h == lease.holding.end() || h->second != epoch) return out;  // stale or duplicate
  ReleaseConn(gpu, lease, conn, now, out);
  ScheduleGangs(now, out);
  return out;
}

LeaseActions Arbiter::Disconnected(ConnId conn, TimePoint now) {
  LeaseActions out;
  auto cit = s_.conns.find(conn);
  if (cit == s_.conns.end()) return out;
  JobId job = cit->second.job;
  for (auto& [gpu, lease] : s_.leases) {
    lease.wanting.erase(conn);
    if (!order_.Wants(lease, job) && lease.holder != job) {
      lease.queue.erase(job);
      lease.wait_since.erase(job);
    }
    if (lease.holding.count(conn) != 0) ReleaseConn(gpu, lease, conn, now, out);
  }
  s_.jobs[job].conns.erase(conn);
  s_.conns.erase(cit);
  if (order_.IsGang(job)) {
    bool waits = false;
    for (const auto& [gpu, lease] : s_.leases) waits = waits || lease.queue.count(job) != 0;
    if (!waits) s_.jobs[job].gang_wait = 0;
  }
  // A job gone entirely cannot stay stopped or queued anywhere.
  if (s_.jobs[job].conns.empty()) {
    for (auto& [gpu, lease] : s_.leases) {
      lease.stopped.erase(job);
      lease.queue.erase(job);
      lease.wait_since.erase(job);
      if (lease.holder == job && !order_.TurnHolding(lease)) {
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
  for (auto& [gpu, lease] : s_.leases) {
    bool holder_holds = false;  // not a gang's drained GPU waiting for its others
    for (const auto& [conn, epoch] : lease.holding) {
      holder_holds = holder_holds || (lease.holder && s_.conns.at(conn).job == *lease.holder);
    }
    if (lease.dropping && lease.holder && holder_holds &&
        now - lease.drop_sent_at >= options_.drop_grace) {
      // The holder ignored DROP: stop its processes, take the lease back, and queue it so
      // it is continued (and re-granted) when its turn comes.
      JobId job = *lease.holder;
      for (ConnId c : s_.jobs.at(job).conns) {
        out.push_back({LeaseAction::Kind::kStop, c, gpu, 0, s_.conns.at(c).pid});
      }
      lease.stopped.insert(job);
      for (auto it = lease.holding.begin(); it != lease.holding.end();) {
        if (s_.conns.at(it->first).job == job) {
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

std::optional<TimePoint> Arbiter::NextDeadline(TimePoint now) const {
  std::optional<TimePoint> next;
  auto consider = [&next](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  if (!options_.enabled) return next;
  for (const auto& [gpu, lease] : s_.leases) {
    if (!lease.holder) {
      // Waiters the grant filter refused are asked again each second.
      if (!lease.queue.empty() && !order_.TurnHolding(lease) && !lease.shared) {
        consider(now + Millis(1000));
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
  for (auto& [gpu, lease] : s_.leases) {
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
  for (const auto& [gpu, lease] : s_.leases) {
    GpuView v;
    v.gpu = gpu;
    v.holder = lease.holder;
    if (lease.holder) v.held_seconds = Seconds(lease.granted_at, now);
    v.dropping = lease.dropping;
    v.shared = lease.shared;
    std::set<JobId> holding;
    for (const auto& [conn, epoch] : lease.holding) holding.insert(s_.conns.at(conn).job);
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
    v.waiters = order_.WaiterOrder(lease);
    v.stopped.assign(lease.stopped.begin(), lease.stopped.end());
    views.push_back(std::move(v));
  }
  return views;
}

void Arbiter::StopWaiting(Lease& lease, JobId job, TimePoint now) {
  auto ws = lease.wait_since.find(job);
  if (ws == lease.wait_since.end()) return;
  s_.jobs.at(job).wait_seconds += Seconds(ws->second, now);
  lease.wait_seconds += Seconds(ws->second, now);
  lease.wait_since.erase(ws);
}

std::optional<JobId> Arbiter::NextWaiter(const GpuKey& gpu) const {
  auto it = s_.leases.find(gpu);
  if (it == s_.leases.end()) return std::nullopt;
  return order_.BestWaiter(gpu, it->second, /*grantable_only=*/false);
}

std::optional<JobId> Arbiter::Holder(const GpuKey& gpu) const {
  auto it = s_.leases.find(gpu);
  if (it == s_.leases.end()) return std::nullopt;
  return it->second.holder;
}

std::vector<JobId> Arbiter::JobsOn(const GpuKey& gpu) const {
  std::set<JobId> jobs;
  auto it = s_.leases.find(gpu);
  if (it != s_.leases.end()) {
    for (const auto& [conn, epoch] : it->second.holding) jobs.insert(s_.conns.at(conn).job);
    for (ConnId c : it->second.wanting) jobs.insert(s_.conns.at(c).job);
  }
  return {jobs.begin(), jobs.end()};
}

std::vector<JobId> Arbiter::HoldingJobs(const GpuKey& gpu) const {
  std::set<JobId> jobs;
  auto it = s_.leases.find(gpu);
  if (it != s_.leases.end()) {
    for (const auto& [conn, epoch] : it->second.holding) jobs.insert(s_.conns.at(conn).job);
  }
  return {jobs.begin(), jobs.end()};
}

std::vector<JobId> Arbiter::WaitingJobs(const GpuKey& gpu) const {
  std::vector<JobId> jobs;
  auto it = s_.leases.find(gpu);
  if (it != s_.leases.end()) {
    for (const auto& [job, since] : it->second.wait_since) jobs.push_back(job);
  }
  return jobs;
}

int Arbiter::PriorityOf(JobId job) const {
  auto it = s_.jobs.find(job);
  return it == s_.jobs.end() ? 0 : it->second.priority;
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
  auto jit = s_.jobs.find(job);
  if (jit == s_.jobs.end()) return u;
  u.lease_seconds = jit->second.lease_seconds;
  u.wait_seconds = jit->second.wait_seconds;
  for (const auto& [gpu, lease] : s_.leases) {
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
