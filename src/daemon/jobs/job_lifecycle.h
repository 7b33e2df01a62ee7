// JobLifecycle: a job's way from PENDING to its final state as the daemon drives it (docs/cli.md,
// "Job states"): admission to GPU slots, activation (a submitted job is stored RUNNING before
// its supervisor starts), its start and end reports, cancel and requeue with --kill-after's
// SIGKILL, the re-adopted jobs of a restart (their end files, their supervisors found gone), and
// forgetting a job once nothing of it is connected. The daemon's event loop; a write the store
// refuses is logged and returned, and the job keeps what the database says.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "daemon/gpu/idle_stager.h"
#include "daemon/gpu/memory_coordinator.h"
#include "daemon/jobs/batch_queue.h"
#include "daemon/jobs/job_placement.h"
#include "daemon/jobs/job_processes.h"
#include "daemon/state/active_job.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/job_table.h"
#include "daemon/state/timeline_recorder.h"
#include "ipc/job_end.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "store/job_store.h"

namespace gshare {

class JobLifecycle {
 public:
  // The daemon's parts it reads and changes; all outlive it.
  struct Parts {
    const DaemonOptions& options;
    JobTable& table;
    BatchQueue& queue;
    JobStore& store;
    JobProcesses& processes;
    JobPlacement& placement;
    Arbiter& arbiter;
    MemoryLedger& ledger;
    MemoryCoordinator& memory;
    IdleStager& staging;
    TimelineRecorder& timeline;
    Clock& clock;
  };
  // Queues an encoded frame for connection `conn` (a `gshare run` waiting for admission); false
  // when it is gone.
  using Send = std::function<bool(ConnId conn, std::string_view frame)>;

  JobLifecycle(Parts parts, std::function<int()> gpu_count, Send send)
      : p_(parts), gpu_count_(std::move(gpu_count)), send_(std::move(send)) {}

  // After a restart: the stored PENDING jobs queued again (a `gshare run`'s own is CANCELLED:
  // its client left with the old daemon), the RUNNING and SUSPENDED ones re-adopted until their
  // supervisors are found gone (their shims reconnect by themselves), then one Tick.
  void Recover();
  // Starts what admission allows (BatchQueue::Admit) and tells each admitted `gshare run`.
  void Admission();
  // Jobs per GPU slot now: `gshare parallel`'s N, else [queue] max_running.
  int MaxRunning() const;
  // Makes `record` active on GPU slots `slot`. A submitted job is stored RUNNING first (else it
  // stays PENDING), then its supervisor starts (FAILED when it cannot).
  void Activate(JobRecord record, const std::string& slot);
  // Active job `job`'s process group leader is `pid`: stored with its start time (now); a
  // cancel that came first is sent now.
  void Started(ActiveJob& job, pid_t pid);
  // Ends active job `id` as `end` reports, honouring a pending cancel or requeue; removes its
  // end and start files.
  void End(JobId id, const JobEnd& end);
  // Records the end of active job `id` with its usage; `end_time` (unix seconds) when its
  // runner saw it, else now. Runs the [notify] command.
  void Finish(JobId id, JobState state, std::optional<int> exit_code, std::optional<int> signal,
              const std::string& reason, std::optional<double> end_time = std::nullopt);
  // `gshare cancel` / `requeue` of job `id`: a pending job ends CANCELLED at once; an active
  // one gets SIGTERM (SIGKILL after its --kill-after) and ends as its end report says; a
  // finished submitted job is requeued. Errors: no such job, a Slurm step, a `gshare run` job's
  // requeue, a job already final, the store's.
  Status Cancel(int64_t id, bool requeue);
  // Due --kill-after SIGKILLs; once a second, re-adopted jobs' end files and supervisors; every
  // kUsageSaveEvery, SaveUsage; then Admission.
  void Tick(TimePoint now);
  // When Tick has work next: a kill, the queue's (BatchQueue::Deadline), the next check of a
  // re-adopted job, the next SaveUsage while jobs run.
  std::optional<TimePoint> Deadline() const;
  // Stores the GPU time and counters of every running job in its row (RecordUsage), so that a
  // daemon started after this one goes on from them (Recover) instead of from 0: at every
  // kUsageSaveEvery, and at the daemon's stop. Ad hoc processes have no row.
  void SaveUsage(TimePoint now);
  // A daemon that dies (kill -9, a crash) loses at most this much of its jobs' GPU time.
  static constexpr std::chrono::seconds kUsageSaveEvery{30};
  // The connection of job `id`'s `gshare run` or supervisor closed. A `gshare run` still waiting
  // for admission (Ctrl-C, a hang-up) is cancelled. A job that has not ended is FAILED unless the
  // daemon is `stopping`; a submitted one's process group is SIGKILLed first: nothing enforces
  // its limits or reports its end any more.
  void RunnerLost(JobId id, bool stopping);
  // Removes ended job `id` once no shim and no runner of it is connected.
  void ForgetIfDone(JobId id);
  // Writes `r` to the store; a failure is logged and returned.
  Status Save(const JobRecord& r);
  // The parts it drives, for the request handlers that work on the same jobs.
  const Parts& parts() const { return p_; }
  // The owner of job `id` wherever it is (pending, active, stored: AccessGuard's lookup);
  // nullopt when there is no such job or its row cannot be read.
  std::optional<uint32_t> OwnerOf(int64_t id);

 private:
  // The run of active job `id` that a requeue request ended as `end` reports, for its history.
  JobRun RequeuedRun(JobId id, const ActiveJob& job, const JobEnd& end);
  // Keeps `ended` in the job's run history and saves `again` (made PENDING) as its row
  // (JobStore::SaveRequeued); a failure is logged and returned.
  Status SaveRequeued(const JobRun& ended, JobRecord* again);
  // A re-adopted job's pid that no start report gave (JobProcesses::UnreportedPid), recorded;
  // nothing for a job this daemon activated.
  void AdoptUnreportedPid(ActiveJob& job);
  // Tick's look at re-adopted (orphan) jobs: an end file read, a supervisor gone.
  void CheckOrphans();
  // Supervisor of `id` gone without an end report: PENDING again when nothing started, else
  // LOST (re-adopted) or FAILED; a Slurm step's end is Slurm's.
  void OrphanGone(JobId id);

  TimePoint Now() const { return p_.clock.Now(); }
  double WallNow() const { return p_.clock.WallNow(); }

  Parts p_;
  std::function<int()> gpu_count_;
  Send send_;
  TimePoint next_orphan_check_{};
  TimePoint next_usage_save_{};
};

}  // namespace gshare
