#include "policy/grant_order.h"

#include <algorithm>

namespace gshare {

bool GrantOrder::GrantedBefore(const Lease& lease, const UserTurns& turns, JobId a, JobId b) const {
  const Job& ja = s_.jobs.at(a);
  const Job& jb = s_.jobs.at(b);
  if (ja.priority != jb.priority) return ja.priority > jb.priority;
  if (a == lease.incumbent || b == lease.incumbent) return a == lease.incumbent;
  uint64_t ta = turns.Last(ja.uid);
  uint64_t tb = turns.Last(jb.uid);
  if (ta != tb) return ta < tb;  // the user served least recently
  return lease.queue.at(a) < lease.queue.at(b);
}

std::vector<JobId> GrantOrder::WaiterOrder(const Lease& lease) const {
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
    turns.Took(s_.jobs.at(*best).uid);
    left.erase(best);
  }
  return order;
}

std::optional<JobId> GrantOrder::BestWaiter(const GpuKey& gpu, const Lease& lease,
                                            bool grantable_only) const {
  std::optional<JobId> best;
  for (const auto& [job, arrival] : lease.queue) {
    if (s_.jobs.at(job).suspended) continue;
    if (grantable_only && can_grant_ && !can_grant_(gpu, job)) continue;
    if (!best || GrantedBefore(lease, lease.turns, job, *best)) best = job;
  }
  return best;
}

std::optional<JobId> GrantOrder::NextGrant(const GpuKey& gpu, const Lease& lease,
                                           bool for_drop) const {
  if (s_.gangs.empty()) return BestWaiter(gpu, lease, true);
  std::vector<JobId> order;
  for (const auto& [job, arrival] : lease.queue) {
    if (s_.jobs.at(job).suspended) continue;
    if (can_grant_ && !can_grant_(gpu, job)) continue;
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

bool GrantOrder::JobWants(const Lease& lease, JobId job) const {
  for (ConnId c : lease.wanting) {
    if (s_.conns.at(c).job == job) return true;
  }
  return false;
}

bool GrantOrder::Wants(const Lease& lease, JobId job) const {
  if (!InGang(job, lease)) return JobWants(lease, job);
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it != s_.leases.end() && JobWants(it->second, job)) return true;
  }
  return false;
}

bool GrantOrder::Suspended(ConnId conn) const {
  auto c = s_.conns.find(conn);
  return c != s_.conns.end() && s_.jobs.at(c->second.job).suspended;
}

bool GrantOrder::ResidentConn(const Lease& lease, ConnId conn) const {
  auto c = s_.conns.find(conn);
  return c != s_.conns.end() && lease.residents.count(c->second.job) != 0;
}

bool GrantOrder::TurnHolding(const Lease& lease) const {
  for (const auto& [conn, epoch] : lease.holding) {
    if (!ResidentConn(lease, conn)) return true;
  }
  return false;
}

bool GrantOrder::InGang(JobId job, const Lease& lease) const {
  if (!IsGang(job)) return false;
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it != s_.leases.end() && &it->second == &lease) return true;
  }
  return false;
}

std::optional<JobId> GrantOrder::HeadGang() const {
  std::optional<JobId> head;
  for (JobId job : s_.gangs) {
    const Job& j = s_.jobs.at(job);
    if (j.gang_wait == 0 || j.suspended) continue;
    if (!head) {
      head = job;
      continue;
    }
    const Job& h = s_.jobs.at(*head);
    if (j.priority > h.priority || (j.priority == h.priority && j.gang_wait < h.gang_wait)) {
      head = job;
    }
  }
  return head;
}

bool GrantOrder::GangReady(JobId job, const GpuKey& freed, std::optional<JobId> head) const {
  if (!enabled_) return true;
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it == s_.leases.end() || it->second.shared) continue;
    const Lease& lease = it->second;
    if (Reserved(g, lease, job, head)) return false;
    bool free = g == freed || (!lease.holder && !TurnHolding(lease)) ||
                (lease.holder == job && !lease.dropping && lease.stopped.count(job) == 0);
    if (!free) return false;
    if (can_grant_ && !can_grant_(g, job)) return false;
  }
  return true;
}

bool GrantOrder::Reserved(const GpuKey& gpu, const Lease& lease, JobId job,
                          std::optional<JobId> head) const {
  if (!head || *head == job || lease.queue.count(*head) == 0) return false;
  const Job& h = s_.jobs.at(*head);
  if (std::find(h.gang.begin(), h.gang.end(), gpu) == h.gang.end()) return false;
  // Those ahead of the first gang in this GPU's own order keep their place: each has one
  // turn before it at most, since a turn moves its user behind the gang's.
  return GrantedBefore(lease, lease.turns, *head, job);
}

bool GrantOrder::GangDraining(JobId job) const {
  if (!IsGang(job)) return false;
  for (const GpuKey& g : s_.jobs.at(job).gang) {
    auto it = s_.leases.find(g);
    if (it == s_.leases.end() || it->second.holder != job || !it->second.dropping) continue;
    for (const auto& [conn, epoch] : it->second.holding) {
      if (s_.conns.at(conn).job == job) return true;
    }
  }
  return false;
}

}  // namespace gshare
