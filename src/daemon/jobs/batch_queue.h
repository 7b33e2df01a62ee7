// The batch queue: jobs waiting to be admitted (submitted jobs, and `gshare run` jobs waiting
// for a slot), their pending reasons, and the states their dependencies are decided on. It
// owns the pending records; the Daemon owns the jobs once they start and answers for them
// through `ActiveState`. Admission itself is policy/admission.h's Admit; the queue feeds it
// and decides when it runs. Single-threaded: the daemon's loop. Store errors are returned
// (CheckDependencies) or logged (reasons).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/job_state.h"
#include "base/status.h"
#include "policy/admission.h"
#include "policy/dependency.h"
#include "policy/types.h"
#include "policy/user_turns.h"
#include "store/job_store.h"

namespace gshare {

class BatchQueue {
 public:
  // The state of job `id` while it is admitted and not ended; nullopt otherwise.
  using ActiveState = std::function<std::optional<JobState>(int64_t id)>;
  // Whether a job of user `uid` named `name`, other than `id`, is admitted and not ended.
  using ActiveNamed = std::function<bool(uid_t uid, const std::string& name, int64_t id)>;
  // A start that could not be recorded waits this long before anything starts again.
  static constexpr Millis kStoreRetry{2000};

  // `store` and `clock` outlive the queue. `paused_file` (<state_dir>/queue.paused; "" for
  // none) keeps `gshare queue pause` across restarts: it exists while the queue is paused, and
  // the queue starts paused when it exists.
  // `active_named` answers for --dependency=singleton (none: no job counts as active).
  // `parallel_file` (<state_dir>/queue.parallel; "" for none) keeps `gshare parallel N` the same
  // way: it holds N while set.
  BatchQueue(JobStore& store, const Clock& clock, ActiveState active, std::string paused_file = "",
             ActiveNamed active_named = {}, std::string parallel_file = "");

  const std::map<int64_t, JobRecord>& pending() const { return pending_; }
  // The pending job `id`, or nullptr. A change to it must be followed by Changed().
  JobRecord* Pending(int64_t id);
  // Queues `r` (new, requeued, or back from a start that failed); its id leaves the final
  // states.
  void Add(JobRecord r);
  // Takes pending job `id` out of the queue (it starts, or was cancelled: then Changed()).
  std::optional<JobRecord> Remove(int64_t id);
  // Job `id` reached final state `state` (dependencies on it can be decided).
  void Ended(int64_t id, JobState state);
  // Job `id` was deleted (gshare clean, retention).
  void Forget(int64_t id) { final_states_.erase(id); }
  // Something admission depends on changed (a job ended, a hold, a priority): Admit runs.
  void Changed() { dirty_ = true; }
  // `gshare queue pause`: no submitted job starts (AdmissionLimits::paused).
  bool paused() const { return paused_; }
  // Pauses or resumes, writing or removing the paused file first; admission reruns. Errors:
  // the file cannot be written or removed (the state stays as it was).
  Status SetPaused(bool paused);
  // `gshare parallel N` (pueue's `parallel`, task-spooler's -S): jobs per GPU slot set at run
  // time, in place of [queue] max_running; nullopt: the config's.
  static constexpr int kMaxParallel = 1000;
  std::optional<int> parallel() const { return parallel_; }
  // Jobs per GPU slot now, given [queue] max_running `configured`, and where that number comes
  // from ("parallel" or "config": status's and kQueueSet's `max_running_from`).
  int MaxRunning(int configured) const { return parallel_.value_or(configured); }
  const char* MaxRunningFrom() const { return parallel_ ? "parallel" : "config"; }
  // Sets N (1..kMaxParallel) or, with nullopt, goes back to the config's, writing or removing
  // the parallel file first; admission reruns. Errors: N out of range, the file cannot be
  // written or removed (the setting stays as it was).
  Status SetParallel(std::optional<int> n);

  // The state of job `id`: pending, active, ended, or stored; nullopt when no such job.
  std::optional<JobState> StateOf(int64_t id);
  // "no job N", or "job N is STATE, not `wanted`".
  Status NotInState(int64_t id, const std::string& wanted);
  // Error naming the first job `r` depends on that does not exist, or a parse error.
  Status CheckDependencies(const JobRecord& r);
  // `r`'s dependencies as they stand (kSatisfied when it has none).
  DependencyState Dependencies(const JobRecord& r);
  // Jobs some pending job depends on (clean keeps them).
  std::set<int64_t> DependedOn() const;

  struct Start {
    int64_t id;
    std::string slot;
  };
  // When the queue changed or a --begin came due, and no start is being retried: which
  // pending jobs start now (in order), given the jobs running per slot and per user. Changed
  // reasons of the others are written to the store. The starts stay pending until Remove()d;
  // each counts as its user's latest (fair share between users, policy/admission.h).
  std::vector<Start> Admit(const std::map<std::string, int>& running, const AdmissionLimits& limits,
                           const std::map<uid_t, int>& running_per_user = {});
  // Job `r` was taken to start but its RUNNING state could not be written: it is pending
  // again, and nothing starts for kStoreRetry.
  void StartRefused(JobRecord r);
  bool retrying() const { return retry_at_.has_value(); }
  // When Admit has work next: now when changed, the retry time, the next --begin; nullopt
  // when nothing is due.
  std::optional<TimePoint> Deadline() const;

 private:
  JobStore& store_;
  const Clock& clock_;
  ActiveState active_;
  ActiveNamed active_named_;
  std::map<int64_t, JobRecord> pending_;
  std::map<int64_t, JobState> final_states_;  // final states never change
  bool dirty_ = true;
  std::string paused_file_;
  bool paused_ = false;
  std::string parallel_file_;
  std::optional<int> parallel_;
  std::optional<TimePoint> retry_at_;
  std::optional<double> next_begin_;  // earliest --begin ahead (unix seconds)
  UserTurns starts_;                  // users' latest starts, since the daemon started
};

}  // namespace gshare
