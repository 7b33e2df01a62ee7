// The arbiter's shared mode (jobs that fit in a GPU together all hold it; the driver
// time-slices them) and the switch back to exclusive mode; see arbiter.h.
#include <algorithm>

#include "policy/arbiter.h"

namespace gshare {

LeaseActions Arbiter::SetShared(const GpuKey& gpu, bool shared, TimePoint now,
                                std::optional<JobId> first) {
  LeaseActions out;
  Lease& lease = s_.leases[gpu];
  if (lease.shared == shared) return out;
  lease.shared = shared;
  if (!options_.enabled) return out;
  if (shared) {
    OpenToAll(gpu, lease, now, out);
    for (const auto& [c, epoch] : lease.holding) StartShared(lease, s_.conns.at(c).job, now);
  } else {
    // Exclusive again. A `first` that holds the GPU and has the highest priority on it keeps
    // running, as the holder of its grant; the others drop. Otherwise every holder drops and
    // the lease is granted once all have drained, `first` first among the waiters of its
    // priority.
    // Residents keep holding, in the grants they have.
    lease.incumbent = first;
    for (auto it = lease.shared_since.begin(); it != lease.shared_since.end();) {
      const JobId job = (it++)->first;
      if (lease.residents.count(job) == 0) EndShared(lease, job, now);
    }
    if (first && KeepsRunning(gpu, lease, *first)) {
      HoldInPlace(gpu, lease, *first, now, out);
    } else {
      for (const auto& [conn, epoch] : lease.holding) {
        if (!order_.ResidentConn(lease, conn)) {
          out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
        }
      }
      if (!order_.TurnHolding(lease)) Schedule(gpu, lease, now, out);
    }
  }
  ScheduleGangs(now, out);
  return out;
}

bool Arbiter::KeepsRunning(const GpuKey& gpu, const Lease& lease, JobId job) const {
  if (s_.jobs.at(job).suspended) return false;
  bool holds = false;
  for (const auto& [c, epoch] : lease.holding) holds = holds || s_.conns.at(c).job == job;
  if (!holds) return false;
  for (JobId other : JobsOn(gpu)) {
    if (lease.residents.count(other) != 0) continue;  // they run beside it
    if (s_.jobs.at(other).priority > s_.jobs.at(job).priority) return false;
  }
  return lease.residents.count(job) == 0;
}

void Arbiter::HoldInPlace(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now,
                          LeaseActions& out) {
  // Its connections keep the epoch they hold; DROPs to the others carry theirs, and their
  // releases leave the holder alone (ReleaseConn).
  BeginHolding(gpu, lease, job, now, out);
  for (const auto& [conn, epoch] : lease.holding) {
    if (s_.conns.at(conn).job != job && !order_.ResidentConn(lease, conn)) {
      out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
    }
  }
  // The next waiter is news to this holder (whose grant may be epoch 0, shared mode's first).
  lease.contended_epoch = ~uint64_t{0};
  NotifyContended(gpu, lease, out);
}

void Arbiter::OpenToAll(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  for (JobId job : lease.stopped) {
    for (ConnId c : s_.jobs.at(job).conns) {
      out.push_back({LeaseAction::Kind::kContinue, c, gpu, 0, s_.conns.at(c).pid});
    }
  }
  lease.stopped.clear();
  if (lease.holder) EndHolding(lease, now);
  GrantAllWanting(gpu, lease, now, out);
}

void Arbiter::GrantAllWanting(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  for (auto it = lease.wanting.begin(); it != lease.wanting.end();) {
    if (order_.Suspended(*it)) {
      ++it;
      continue;
    }
    lease.holding[*it] = lease.epoch;
    out.push_back({LeaseAction::Kind::kGrant, *it, gpu, lease.epoch, 0});
    if (lease.shared && options_.enabled) StartShared(lease, s_.conns.at(*it).job, now);
    it = lease.wanting.erase(it);
  }
  for (auto it = lease.queue.begin(); it != lease.queue.end();) {
    JobId job = it->first;
    if (order_.Wants(lease, job)) {
      ++it;
      continue;
    }
    StopWaiting(lease, job, now);
    it = lease.queue.erase(it);
  }
}

void Arbiter::StartShared(Lease& lease, JobId job, TimePoint now) {
  lease.shared_since.emplace(job, now);
}

void Arbiter::EndShared(Lease& lease, JobId job, TimePoint now) {
  auto it = lease.shared_since.find(job);
  if (it == lease.shared_since.end()) return;
  auto jit = s_.jobs.find(job);
  if (jit != s_.jobs.end()) jit->second.lease_seconds += Seconds(it->second, now);
  lease.lease_seconds += Seconds(it->second, now);
  lease.shared_since.erase(it);
}

LeaseActions Arbiter::SetResidents(const GpuKey& gpu, const std::set<JobId>& residents,
                                   TimePoint now) {
  LeaseActions out;
  Lease& lease = s_.leases[gpu];
  if (lease.residents == residents) return out;
  const std::set<JobId> before = lease.residents;
  lease.residents = residents;
  if (!options_.enabled || lease.shared) return out;
  for (JobId job : before) {
    if (residents.count(job) != 0) continue;
    EndShared(lease, job, now);
    if (AdoptFormerResident(gpu, lease, job, now, out)) continue;
    // Ordinary again: it asks for turns like the others.
    if (order_.JobWants(lease, job)) Enqueue(lease, job, now);
    for (const auto& [conn, epoch] : lease.holding) {
      if (s_.conns.at(conn).job == job)
        out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
    }
  }
  for (JobId job : residents) {
    if (before.count(job) != 0 || s_.jobs.count(job) == 0) continue;
    if (lease.holder == job && !lease.dropping) {
      // It keeps running, beside the turns; the turn goes on to the next waiter.
      EndHolding(lease, now);
      lease.queue.erase(job);
      StartShared(lease, job, now);
    } else if (lease.queue.count(job) != 0) {
      StopWaiting(lease, job, now);
      lease.queue.erase(job);
    }
  }
  GrantResidents(gpu, lease, now, out);
  Schedule(gpu, lease, now, out);
  ScheduleGangs(now, out);
  return out;
}

bool Arbiter::AdoptFormerResident(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now,
                                  LeaseActions& out) {
  auto jit = s_.jobs.find(job);
  if (lease.holder || jit == s_.jobs.end() || jit->second.suspended) return false;
  bool holds = false;
  for (const auto& [conn, epoch] : lease.holding) {
    const JobId j = s_.conns.at(conn).job;
    if (j == job) {
      holds = true;
    } else if (!order_.ResidentConn(lease, conn)) {
      return false;  // another job's turn is still held (or draining)
    }
  }
  if (!holds) return false;
  ++lease.epoch;  // for its connections still waiting, granted with the turn
  BeginHolding(gpu, lease, job, now, out);
  return true;
}

bool Arbiter::IsResident(const GpuKey& gpu, JobId job) const {
  auto it = s_.leases.find(gpu);
  return it != s_.leases.end() && it->second.residents.count(job) != 0;
}

void Arbiter::GrantResidents(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out) {
  if (!options_.enabled || lease.shared) return;
  for (auto it = lease.wanting.begin(); it != lease.wanting.end();) {
    const JobId job = s_.conns.at(*it).job;
    if (lease.residents.count(job) == 0 || s_.jobs.at(job).suspended) {
      ++it;
      continue;
    }
    const uint64_t epoch = kResidentEpoch | ++lease.resident_grants;
    lease.holding[*it] = epoch;
    out.push_back({LeaseAction::Kind::kGrant, *it, gpu, epoch, 0});
    StartShared(lease, job, now);
    it = lease.wanting.erase(it);
  }
}

bool Arbiter::IsShared(const GpuKey& gpu) const {
  auto it = s_.leases.find(gpu);
  return it != s_.leases.end() && it->second.shared;
}

std::optional<TimePoint> Arbiter::SharedSince(const GpuKey& gpu, JobId job) const {
  auto it = s_.leases.find(gpu);
  if (it == s_.leases.end()) return std::nullopt;
  auto s = it->second.shared_since.find(job);
  if (s == it->second.shared_since.end()) return std::nullopt;
  return s->second;
}

}  // namespace gshare
