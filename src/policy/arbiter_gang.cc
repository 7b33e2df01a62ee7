// The arbiter's gang leases: a job that spans GPUs is granted all of them at once or none;
// see Arbiter::SetGang in arbiter.h for the rules and why they cannot deadlock.
#include <algorithm>

#include "policy/arbiter.h"

namespace gshare {

void Arbiter::SetGang(JobId job, std::vector<GpuKey> gpus) {
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  Job& j = s_.jobs[job];
  if (gpus.size() < 2) {
    j.gang.clear();
    j.gang_wait = 0;
    s_.gangs.erase(job);
    return;
  }
  j.gang = std::move(gpus);
  s_.gangs.insert(job);
}

std::vector<GpuKey> Arbiter::GangOf(JobId job) const {
  auto it = s_.jobs.find(job);
  return it == s_.jobs.end() ? std::vector<GpuKey>{} : it->second.gang;
}

void Arbiter::GangWaits(JobId job, TimePoint now, LeaseActions& out) {
  Job& j = s_.jobs.at(job);
  if (j.gang_wait == 0) j.gang_wait = ++s_.arrivals;
  DropGang(job, now, out);
  for (const GpuKey& g : j.gang) {
    Lease& lease = s_.leases[g];
    if (lease.holder != job && !lease.shared) Enqueue(lease, job, now);
  }
}

void Arbiter::GangStopsWaiting(JobId job, TimePoint now) {
  Job& j = s_.jobs.at(job);
  j.gang_wait = 0;
  for (const GpuKey& g : j.gang) {
    auto it = s_.leases.find(g);
    if (it == s_.leases.end() || it->second.holder == job) continue;
    StopWaiting(it->second, job, now);
    it->second.queue.erase(job);
  }
}

void Arbiter::GrantGang(JobId job, TimePoint now, LeaseActions& out) {
  Job& j = s_.jobs.at(job);
  j.gang_wait = 0;
  for (const GpuKey& g : j.gang) {
    Lease& lease = s_.leases[g];
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
  if (!order_.IsGang(job) || !options_.enabled) return;
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it == s_.leases.end()) continue;
    Lease& lease = it->second;
    if (lease.holder == job && !lease.dropping && !lease.shared) SendDrop(g, lease, now, out);
  }
}

void Arbiter::FinishGangDrain(JobId job, TimePoint now, LeaseActions& out) {
  if (!order_.IsGang(job) || order_.GangDraining(job)) return;
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it == s_.leases.end()) continue;
    Lease& lease = it->second;
    if (lease.holder != job || !lease.dropping) continue;
    EndHolding(lease, now);
    Schedule(g, lease, now, out);
  }
}

void Arbiter::ScheduleGangs(TimePoint now, LeaseActions& out) {
  if (s_.gangs.empty() || !options_.enabled) return;
  // A waiting gang queues on each of its GPUs that went exclusive since it began to wait.
  for (JobId job : s_.gangs) {
    if (s_.jobs.at(job).gang_wait == 0) continue;
    for (const GpuKey& g : s_.jobs.at(job).gang) {
      Lease& lease = s_.leases[g];
      if (!lease.shared && lease.holder != job) Enqueue(lease, job, now);
    }
  }
  for (auto& [gpu, lease] : s_.leases) {
    Schedule(gpu, lease, now, out);
    if (lease.holder) NotifyContended(gpu, lease, out);
  }
}

}  // namespace gshare
