// ProcessJobs: the jobs of processes preloaded outside `gshare run` (a shim's hello without a
// job's token: ShimSessions), bounded so that no user grows the daemon's jobs and database by
// connecting: one job per process however many connections it opens (a process is its pid and
// start time), and at most `per_user` such jobs live per user who is not an admin ([limits]
// process_jobs_per_user); past it a new process of that user joins the user's newest such
// job, which it then shares (lease, memory, its row), instead of making one. Bookkeeping only:
// the caller makes and ends the jobs. Not thread-safe: the daemon's event loop is its only
// caller.
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

#include "policy/types.h"

namespace gshare {

class ProcessJobs {
 public:
  // A process as the kernel names it: SO_PEERCRED's uid and pid, and its start time
  // (/proc/PID/stat, 0 when it cannot be read) so that a reused pid is another process.
  struct Process {
    uid_t uid = 0;
    pid_t pid = 0;
    int64_t start_ticks = 0;
    auto operator<=>(const Process&) const = default;
  };

  // `per_user`: live jobs of one user who is not an admin; 0: no cap.
  explicit ProcessJobs(size_t per_user) : per_user_(per_user) {}

  // The job process `p` belongs to: its own live one, else (when `capped`, the user not an
  // admin, has per_user live jobs) the user's newest; 0: the caller makes a new job and Adds it.
  JobId JobOf(const Process& p, bool capped) const;
  // Process `p` is in `job`: a new job of its own (counted for its user), or one JobOf gave.
  void Add(const Process& p, JobId job);
  // `job` ended: it and its processes are forgotten (a process's later hello makes a new job).
  void Ended(JobId job);

  size_t LiveOf(uid_t uid) const;
  size_t size() const { return jobs_.size(); }

 private:
  size_t per_user_;
  std::map<Process, JobId> process_job_;
  struct Job {
    uid_t uid = 0;
    std::set<Process> processes;
  };
  std::map<JobId, Job> jobs_;
  std::map<uid_t, std::set<JobId>> by_user_;  // live jobs, oldest (lowest id) first
};

}  // namespace gshare
