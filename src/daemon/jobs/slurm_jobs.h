// What the daemon knows of the Slurm jobs on this node from root's Slurm Prolog (`gshare slurm
// prolog`): each job's owner, partition and QOS, so that its steps' gshare priority follows
// the configured rule (Config::Slurm) from facts no user supplied. Entries go at the job's
// Epilog, or the oldest first past kMaxJobs (a node whose Epilog does not call gshare).
// Pure state: no I/O, no clock. The daemon's event loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "base/config.h"

namespace gshare {

class SlurmJobs {
 public:
  struct Allocation {
    uint32_t uid = 0;
    std::string partition;
    std::string qos;
  };
  // Jobs remembered at most; Slurm nodes run far fewer at once.
  static constexpr size_t kMaxJobs = 4096;

  // The Prolog's facts for `slurm_job` (replacing earlier ones: a requeued job starts again).
  void Begin(int64_t slurm_job, Allocation a);
  // Forgets `slurm_job` (its Epilog ran); a job never begun is no error.
  void End(int64_t slurm_job);
  // The Prolog's facts for `slurm_job`, or null when none came.
  const Allocation* Find(int64_t slurm_job) const;
  // The gshare priority of a step of `slurm_job` owned by `uid`: `rule` applied to the Prolog's
  // QOS and partition; its default_priority when no Prolog spoke of the job, or when it named
  // another owner.
  int PriorityOf(int64_t slurm_job, uint32_t uid, const Config::Slurm& rule) const;
  size_t size() const { return jobs_.size(); }

 private:
  std::map<int64_t, Allocation> jobs_;
  std::deque<int64_t> order_;  // the keys of jobs_ in Begin order, for the cap
};

}  // namespace gshare
