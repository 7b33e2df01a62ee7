#include "daemon/gpu/process_jobs.h"

namespace gshare {

JobId ProcessJobs::JobOf(const Process& p, bool capped) const {
  if (auto it = process_job_.find(p); it != process_job_.end()) return it->second;
  if (!capped || per_user_ == 0) return 0;
  auto user = by_user_.find(p.uid);
  if (user == by_user_.end() || user->second.size() < per_user_) return 0;
  return *user->second.rbegin();  // job ids grow: the newest
}

void ProcessJobs::Add(const Process& p, JobId job) {
  process_job_[p] = job;
  auto [it, fresh] = jobs_.try_emplace(job);
  if (fresh) {
    it->second.uid = p.uid;
    by_user_[p.uid].insert(job);
  }
  it->second.processes.insert(p);
}

void ProcessJobs::Ended(JobId job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  for (const Process& p : it->second.processes) {
    auto pj = process_job_.find(p);
    if (pj != process_job_.end() && pj->second == job) process_job_.erase(pj);
  }
  auto user = by_user_.find(it->second.uid);
  if (user != by_user_.end()) {
    user->second.erase(job);
    if (user->second.empty()) by_user_.erase(user);
  }
  jobs_.erase(it);
}

size_t ProcessJobs::LiveOf(uid_t uid) const {
  auto it = by_user_.find(uid);
  return it == by_user_.end() ? 0 : it->second.size();
}

}  // namespace gshare
