// The queue's admission policy (docs/cli.md "Admission"): which pending jobs start now, on
// which GPU slot, and Slurm's reason for each one that waits. A pure function of its
// arguments: any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/dependency.h"
#include "policy/user_turns.h"

namespace gshare {

// Slurm's pending reasons (squeue(1) "JOB REASON CODES").
inline constexpr const char* kReasonPriority = "Priority";
inline constexpr const char* kReasonResources = "Resources";
inline constexpr const char* kReasonDependency = "Dependency";
inline constexpr const char* kReasonDependencyNever = "DependencyNeverSatisfied";
inline constexpr const char* kReasonHeld = "JobHeldUser";
inline constexpr const char* kReasonBeginTime = "BeginTime";
// The user runs [queue] max_running_per_user jobs already: Slurm's reason for a QOS's
// MaxJobsPerUser limit, the per-user limit of every job alike (an association's own
// AssocMaxJobsLimit belongs to one user's account and does not fit a machine-wide limit).
inline constexpr const char* kReasonUserLimit = "QOSMaxJobsPerUserLimit";
// A task of a job array whose "%N" limit of tasks running at once is reached (Slurm's).
inline constexpr const char* kReasonArrayLimit = "JobArrayTaskLimit";
// `gshare queue pause`: no submitted job starts until `gshare queue resume` (pueue's pause;
// Slurm has no reason code for it).
inline constexpr const char* kReasonPaused = "QueuePaused";

struct AdmissionJob {
  int64_t id = 0;
  uid_t uid = 0;  // the owner
  int priority = 0;
  double submit_time = 0;  // unix seconds
  bool held = false;
  std::optional<double> begin_time;                            // unix seconds
  DependencyState dependencies = DependencyState::kSatisfied;  // evaluated by the caller
  std::string gpu;           // as requested (comma-separated when several); empty: any GPU
  int gpus = 1;              // GPUs it uses at once, each a slot that must have room
  bool foreground = false;   // a waiting `gshare run`: not bound by max_running
  int64_t array_job_id = 0;  // a task of this job array (--array); 0: none
  int64_t array_limit = 0;   // its array's "%N": at most N of its tasks run at once; 0: none
};

struct AdmissionLimits {
  int gpu_count = 1;             // GPUs of the machine, slots "0".."gpu_count-1" (at least 1)
  int max_running = 2;           // jobs per GPU slot (at least 1)
  int max_running_per_user = 0;  // jobs per user over all slots; 0: no limit
  // Device bytes the jobs on each slot hold now (the memory ledger's), placement's second
  // key; a slot missing: 0.
  std::map<std::string, uint64_t> allocated{};
  // Tasks of each job array (by array job id) running now; an array missing: 0.
  std::map<int64_t, int> array_running{};
  bool paused = false;  // `gshare queue pause`: only foreground jobs (gshare run) start
};

// What admission knows of each user: jobs running now, and when a job of theirs last started.
struct AdmissionUsers {
  std::map<uid_t, int> running;
  UserTurns starts;
};

struct AdmissionResult {
  struct Start {
    size_t index;      // into Admit's `pending`
    std::string slot;  // "0".."gpu_count-1" or the job's own --gpu value; several: "0,2"
  };
  std::vector<Start> start;  // in admission order
  // For each job of `pending` (same index): the reason it waits (one of the kReason
  // constants), or nullptr when it starts.
  std::vector<const char*> reasons;
  std::optional<double> next_begin;  // earliest --begin still ahead of `now`
};

// Slots for a job requesting `gpu` (--gpu) and `count` GPUs: the requested ones, or for ""
// the `count` best of "0".."gpu_count-1" by (jobs running there, fewest first; device bytes
// held there, `allocated`, fewest first; index), in index order: the job goes where the
// fewest jobs take turns with it, and among those where the most memory is free, so its
// first turn needs the least eviction. `running` counts jobs per slot.
std::vector<std::string> ChooseSlots(const std::string& gpu, int count,
                                     const std::map<std::string, int>& running, int gpu_count,
                                     const std::map<std::string, uint64_t>& allocated = {});

// "0,2" from {"0", "2"}: the slot text of a job (JobRecord::slot).
std::string JoinSlots(const std::vector<std::string>& slots);

// Considers `pending` by priority (higher first); within a priority, round robin between users
// (fair share, docs/design.md): next comes the user with the fewest jobs running (counting
// those this call starts), then the one whose job started least recently (`users.starts`, a
// user never started first), then the user whose next job was submitted first; a user's own
// jobs go by submission time, then id. A job that is held, before its begin time or waiting
// on dependencies keeps that reason (in that order of precedence). An eligible task of a job
// array that runs `array_limit` tasks (limits.array_running, counting the starts of this
// call) waits with JobArrayTaskLimit; an eligible job whose user runs max_running_per_user
// jobs waits with QOSMaxJobsPerUserLimit; otherwise it starts
// when its slot runs fewer than max_running jobs (a foreground one always does, and counts);
// otherwise the first such job gets Resources and every later one Priority. `running` counts
// the jobs running per slot now. While limits.paused, every eligible job but a foreground one
// waits with QueuePaused. Each start is also recorded in `users` (the caller's copy).
// O(n log n) in the number of pending jobs (100,000 jobs: a few tens of ms).
AdmissionResult Admit(const std::vector<AdmissionJob>& pending, std::map<std::string, int> running,
                      const AdmissionLimits& limits, double now, AdmissionUsers* users = nullptr);

}  // namespace gshare
