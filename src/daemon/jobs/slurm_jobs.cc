#include "daemon/jobs/slurm_jobs.h"

#include <algorithm>
#include <utility>

namespace gshare {

void SlurmJobs::Begin(int64_t slurm_job, Allocation a) {
  if (jobs_.insert_or_assign(slurm_job, std::move(a)).second) order_.push_back(slurm_job);
  while (jobs_.size() > kMaxJobs && !order_.empty()) {
    jobs_.erase(order_.front());
    order_.pop_front();
  }
}

void SlurmJobs::End(int64_t slurm_job) {
  if (jobs_.erase(slurm_job) == 0) return;
  order_.erase(std::find(order_.begin(), order_.end(), slurm_job));
}

const SlurmJobs::Allocation* SlurmJobs::Find(int64_t slurm_job) const {
  auto it = jobs_.find(slurm_job);
  return it == jobs_.end() ? nullptr : &it->second;
}

int SlurmJobs::PriorityOf(int64_t slurm_job, uint32_t uid, const Config::Slurm& rule) const {
  const Allocation* a = Find(slurm_job);
  if (a == nullptr || a->uid != uid) return rule.default_priority;
  return rule.PriorityOf(a->qos, a->partition);
}

}  // namespace gshare
