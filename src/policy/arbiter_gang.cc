// The arbiter's gang leases: a job that spans GPUs is granted all of them at once or none;
// see Arbiter::SetGang in arbiter.h for the rules and why they cannot deadlock.
#include <algorithm>

#include "policy/arbiter.h"

namespace gshare {

void Arbiter::SetGang(JobId job, std::vector<GpuKey> gpus) {
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  Job& j = jobs_[job];
  if (gpus.size() < 2) {
    j.gang.clear();
    j.gang_wait = 0;
    gangs_.erase(job);
    return;
  }
  j.gang = std::move(gpus);
  gangs_.insert(job);
}

std::vector<GpuKey> Arbiter::GangOf(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? std::vector<GpuKey>{} : it->second.gang;
}

bool Arbiter::IsGang(JobId job) const { return gangs_.count(job) != 0; }

bool Arbiter::InGang(JobId job, const Lease& lease) const {
  if (!IsGang(job)) return false;
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it != leases_.end() && &it->second == &lease) return true;
  }
  return false;
}

bool Arbiter::Wants(const Lease& lease, JobId job) const {
  if (!InGang(job, lease)) return JobWants(lease, job);
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it != leases_.end() && JobWants(it->second, job)) return true;
  }
  return false;
}

void Arbiter::GangWaits(JobId job, TimePoint now, LeaseActions& out) {
  Job& j = jobs_.at(job);
  if (j.gang_wait == 0) j.gang_wait = ++arrivals_;
  DropGang(job, now, out);
  for (const GpuKey& g : j.gang) {
    Lease& lease = leases_[g];
    if (lease.holder != job && !lease.shared) Enqueue(lease, job, now);
  }
}

void Arbiter::GangStopsWaiting(JobId job, TimePoint now) {
  Job& j = jobs_.at(job);
  j.gang_wait = 0;
  for (const GpuKey& g : j.gang) {
    auto it = leases_.find(g);
    if (it == leases_.end() || it->second.holder == job) continue;
    StopWaiting(it->second, job, now);
    it->second.queue.erase(job);
  }
}

std::optional<JobId> Arbiter::HeadGang() const {
  std::optional<JobId> head;
  for (JobId job : gangs_) {
    const Job& j = jobs_.at(job);
    if (j.gang_wait == 0 || j.suspended) continue;
    if (!head) {
      head = job;
      continue;
    }
    const Job& h = jobs_.at(*head);
    if (j.priority > h.priority || (j.priority == h.priority && j.gang_wait < h.gang_wait)) {
      head = job;
    }
  }
  return head;
}

bool Arbiter::GangReady(JobId job, const GpuKey& freed, std::optional<JobId> head) const {
  if (!options_.enabled) return true;
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it == leases_.end() || it->second.shared) continue;
    const Lease& lease = it->second;
    if (Reserved(g, lease, job, head)) return false;
    bool free = g == freed || (!lease.holder && !TurnHolding(lease)) ||
                (lease.holder == job && !lease.dropping && lease.stopped.count(job) == 0);
    if (!free) return false;
    if (options_.can_grant && !options_.can_grant(g, job)) return false;
  }
  return true;
}

bool Arbiter::Reserved(const GpuKey& gpu, const Lease& lease, JobId job,
                       std::optional<JobId> head) const {
  if (!head || *head == job || lease.queue.count(*head) == 0) return false;
  const Job& h = jobs_.at(*head);
  if (std::find(h.gang.begin(), h.gang.end(), gpu) == h.gang.end()) return false;
  // Those ahead of the first gang in this GPU's own order keep their place: each has one
  // turn before it at most, since a turn moves its user behind the gang's.
  return GrantedBefore(lease, lease.turns, *head, job);
}

std::optional<JobId> Arbiter::NextGrant(const GpuKey& gpu, const Lease& lease,
                                        bool for_drop) const {
  if (gangs_.empty()) return BestWaiter(gpu, lease, true);
  std::vector<JobId> order;
  for (const auto& [job, arrival] : lease.queue) {
    if (jobs_.at(job).suspended) continue;
    if (options_.can_grant && !options_.can_grant(gpu, job)) continue;
    order.push_back(job);
  }
  std::sort(order.begin(), order.end(),
            [&](JobId a, JobId b) { return GrantedBefore(lease, lease.turns, a, b); });
  const std::optional<JobId> head = HeadGang();
  for (JobId job : order) {
    if (Reserved(gpu, lease, job, head)) continue;
    if (InGang(job, lease)) {
      if (for_drop && job == head) return job;
      if (!GangReady(job, for_drop ? gpu : GpuKey(), head)) continue;
    }
    return job;
  }
  return std::nullopt;
}

void Arbiter::GrantGang(JobId job, TimePoint now, LeaseActions& out) {
  Job& j = jobs_.at(job);
  j.gang_wait = 0;
  for (const GpuKey& g : j.gang) {
    Lease& lease = leases_[g];
    if (!options_.enabled || lease.shared) {
      lease.queue.erase(job);
      StopWaiting(lease, job, now);
      continue;
    }
    if (lease.holder == job) continue;  // its grant there stands
    ++lease.epoch;
    BeginHolding(g, lease, job, now, out);
    NotifyContended(g, lease, out);
  }
}

void Arbiter::DropGang(JobId job, TimePoint now, LeaseActions& out) {
  if (!IsGang(job) || !options_.enabled) return;
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it == leases_.end()) continue;
    Lease& lease = it->second;
    if (lease.holder == job && !lease.dropping && !lease.shared) SendDrop(g, lease, now, out);
  }
}

bool Arbiter::GangDraining(JobId job) const {
  if (!IsGang(job)) return false;
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it == leases_.end() || it->second.holder != job || !it->second.dropping) continue;
    for (const auto& [conn, epoch] : it->second.holding) {
      if (conns_.at(conn).job == job) return true;
    }
  }
  return false;
}

void Arbiter::FinishGangDrain(JobId job, TimePoint now, LeaseActions& out) {
  if (!IsGang(job) || GangDraining(job)) return;
  for (const GpuKey& g : jobs_.at(job).gang) {
    auto it = leases_.find(g);
    if (it == leases_.end()) continue;
    Lease& lease = it->second;
    if (lease.holder != job || !lease.dropping) continue;
    EndHolding(lease, now);
    Schedule(g, lease, now, out);
  }
}

void Arbiter::ScheduleGangs(TimePoint now, LeaseActions& out) {
  if (gangs_.empty() || !options_.enabled) return;
  // A waiting gang queues on each of its GPUs that went exclusive since it began to wait.
  for (JobId job : gangs_) {
    if (jobs_.at(job).gang_wait == 0) continue;
    for (const GpuKey& g : jobs_.at(job).gang) {
      Lease& lease = leases_[g];
      if (!lease.shared && lease.holder != job) Enqueue(lease, job, now);
    }
  }
  for (auto& [gpu, lease] : leases_) {
    Schedule(gpu, lease, now, out);
    if (lease.holder) NotifyContended(gpu, lease, out);
  }
}

}  // namespace gshare
