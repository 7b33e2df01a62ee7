// JobProcesses: a job's processes as the daemon starts and signals them — the supervisor of a
// submitted job, started as the job's owner (the system daemon runs as root; a user's own daemon
// runs jobs as itself), the [notify] command when a job ends, signals to a job's process group
// (else to each of its shims' pids) — and where each user's job files live (docs/design.md). The
// daemon's event loop; errors come back as a Status, failures to notify are logged.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/status.h"
#include "daemon/state/active_job.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/job_table.h"
#include "runner/job_identity.h"
#include "store/job_store.h"

namespace gshare {

class JobProcesses {
 public:
  // Both outlive it.
  JobProcesses(const DaemonOptions& options, const JobTable& table)
      : options_(options), table_(table) {}

  // Where the end, start, script and default log files of `uid`'s jobs live: the state
  // directory (a user's own daemon), else <state_dir>/users/<uid>.
  std::string FilesDir(uint32_t uid) const;
  // Who the supervisor of `r` runs as; under the system daemon its owner, whose files'
  // directories are made first. Errors: an unknown uid, a directory that cannot be made.
  Result<JobIdentity> SupervisorIdentity(const JobRecord& r) const;
  // Starts `self_exe job-supervisor --job <id> --socket <path>` as the job's owner, detached;
  // sets record.runner_pid and runner_start. Errors: the identity, fork(2).
  Status SpawnSupervisor(JobRecord& record) const;
  // Starts the [notify] command for job `r`, which just ended (daemon/job_end_hook.h), as its
  // owner; nothing without one. A failure is logged.
  void NotifyEnd(const JobRecord& r) const;
  // Signals the process group `job` leads (JobRunner makes it one); false when its pid is not
  // known yet or the group is gone.
  bool SignalGroup(const ActiveJob& job, int sig) const;
  // SignalGroup, else each of the job's shims' pids.
  void SignalAll(const ActiveJob& job, int sig) const;
  // The pid of submitted job `r` whose start was never recorded (its supervisor's report went to
  // a daemon that died): the child of its supervisor that leads a process group, looked for only
  // while `r`'s runner_pid is the supervisor the daemon started (same start time), so a pid that
  // the job's owner could plant is never trusted. nullopt when the pid is known, the supervisor
  // is gone or the job is not started yet. Scans /proc.
  std::optional<pid_t> UnreportedPid(const JobRecord& r) const;

 private:
  const DaemonOptions& options_;
  const JobTable& table_;
};

}  // namespace gshare
