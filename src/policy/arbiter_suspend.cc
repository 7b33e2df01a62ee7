// The arbiter's job suspension (gshare suspend/resume), deferred grants (a grant that
// reaches its holder only after the daemon restored its memory) and quanta that start after
// the holder's swap-in; see arbiter.h.
#include <algorithm>
#include <chrono>

#include "policy/arbiter.h"

namespace gshare {

Arbiter::Lease* Arbiter::HolderLease(const GpuKey& gpu, uint64_t epoch) {
  auto it = s_.leases.find(gpu);
  if (it == s_.leases.end() || !it->second.holder || it->second.epoch != epoch) return nullptr;
  return &it->second;
}

void Arbiter::BeginTurn(const GpuKey& gpu, uint64_t epoch, TurnWait wait, TimePoint now) {
  Lease* lease = HolderLease(gpu, epoch);
  if (lease == nullptr || (lease->turn_waits & wait) == 0) return;
  lease->turn_waits &= ~static_cast<unsigned>(wait);
  s_.jobs.at(*lease->holder).wait_seconds += Seconds(lease->granted_at, now);
  if (wait == kDelivery || wait == kRoom) {
    lease->switch_time = std::chrono::duration_cast<Millis>(now - lease->granted_at);
  }
  lease->granted_at = now;
}

void Arbiter::Deferred(const GpuKey& gpu, uint64_t epoch) {
  if (Lease* lease = HolderLease(gpu, epoch)) lease->turn_waits |= kDelivery;
}

void Arbiter::Delivered(const GpuKey& gpu, uint64_t epoch, TimePoint now) {
  BeginTurn(gpu, epoch, kDelivery, now);
}

void Arbiter::MakingRoom(const GpuKey& gpu) {
  auto it = s_.leases.find(gpu);
  if (it != s_.leases.end() && it->second.holder) it->second.turn_waits |= kRoom;
}

void Arbiter::RoomMade(const GpuKey& gpu, TimePoint now) {
  auto it = s_.leases.find(gpu);
  if (it == s_.leases.end()) return;
  BeginTurn(gpu, it->second.epoch, kRoom, now);
}

void Arbiter::AwaitSwapIn(const GpuKey& gpu, uint64_t epoch) {
  if (Lease* lease = HolderLease(gpu, epoch)) lease->turn_waits |= kSwapIn;
}

void Arbiter::SwappedIn(const GpuKey& gpu, uint64_t epoch, TimePoint now) {
  BeginTurn(gpu, epoch, kSwapIn, now);
}

TimePoint Arbiter::TurnEnd(const Lease& lease) const {
  Millis turn = std::max(QuantumOf(s_.jobs.at(*lease.holder)), kTurnPerSwitch * lease.switch_time);
  TimePoint end = lease.granted_at + turn;
  return (lease.turn_waits & kSwapIn) != 0 ? end + kSwapInAllowance : end;
}

LeaseActions Arbiter::SetSuspended(JobId job, bool suspended, TimePoint now) {
  LeaseActions out;
  auto jit = s_.jobs.find(job);
  if (jit == s_.jobs.end() || jit->second.suspended == suspended) return out;
  jit->second.suspended = suspended;
  for (auto& [gpu, lease] : s_.leases) {
    if (suspended) {
      if (options_.enabled && !lease.shared && lease.residents.count(job) == 0) {
        if (lease.holder == job && !lease.dropping) SendDrop(gpu, lease, now, out);
        continue;
      }
      for (const auto& [conn, epoch] : lease.holding) {
        if (s_.conns.at(conn).job == job)
          out.push_back({LeaseAction::Kind::kDrop, conn, gpu, epoch, 0});
      }
    } else if (!options_.enabled || lease.shared) {
      GrantAllWanting(gpu, lease, now, out);
    } else {
      GrantResidents(gpu, lease, now, out);
      Schedule(gpu, lease, now, out);
    }
  }
  ScheduleGangs(now, out);
  return out;
}

LeaseActions Arbiter::Withdraw(ConnId conn, const GpuKey& gpu, TimePoint now) {
  LeaseActions out;
  auto cit = s_.conns.find(conn);
  auto lit = s_.leases.find(gpu);
  if (cit == s_.conns.end() || lit == s_.leases.end()) return out;
  Lease& lease = lit->second;
  const JobId job = cit->second.job;
  if (lease.wanting.erase(conn) == 0) return out;
  if (!order_.Wants(lease, job) && lease.holder != job) {
    StopWaiting(lease, job, now);
    lease.queue.erase(job);
    // A gang that wants none of its GPUs any more waits for none: left queued on the others,
    // it would end their holders' turns for a grant it does not need.
    if (order_.InGang(job, lease)) GangStopsWaiting(job, now);
  }
  Schedule(gpu, lease, now, out);
  ScheduleGangs(now, out);
  return out;
}

bool Arbiter::IsSuspended(JobId job) const {
  auto it = s_.jobs.find(job);
  return it != s_.jobs.end() && it->second.suspended;
}

bool Arbiter::JobHolds(JobId job) const {
  for (const auto& [gpu, lease] : s_.leases) {
    for (const auto& [conn, epoch] : lease.holding) {
      if (s_.conns.at(conn).job == job) return true;
    }
  }
  return false;
}

bool Arbiter::ConnHolds(ConnId conn) const {
  for (const auto& [gpu, lease] : s_.leases) {
    if (lease.holding.count(conn) != 0) return true;
  }
  return false;
}

}  // namespace gshare
