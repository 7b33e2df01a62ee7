// JobControl: the daemon's answer to `gshare cancel`, `requeue`, `hold`, `release`, `update`,
// `suspend`, `resume`, `set-priority` and `signal` (docs/cli.md, "Job control"): each id checked
// against the requester (AccessGuard), an array's id expanded to its tasks as scancel and
// scontrol do, and one outcome per id. The daemon's event loop; every refusal is an outcome's
// error text, nothing throws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/shim_messenger.h"
#include "daemon/jobs/job_lifecycle.h"
#include "daemon/state/access_guard.h"
#include "daemon/state/active_job.h"
#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {

class JobControl {
 public:
  // What it steers besides `lifecycle`'s parts (JobLifecycle::parts); all outlive it.
  struct Parts {
    JobLifecycle& lifecycle;
    AccessGuard& access;
    PriorityLanes& lanes;
    ShimMessenger& messenger;
  };
  // `gshare suspend` and `resume [--gpu G]` of one job (CheckpointEngine::Suspend, Resume).
  struct Checkpoints {
    std::function<Status(int64_t id)> suspend;
    std::function<Status(int64_t id, const std::string& to_gpu)> resume;
  };

  JobControl(Parts parts, Checkpoints checkpoints)
      : p_(parts), jobs_(parts.lifecycle.parts()), checkpoints_(std::move(checkpoints)) {}

  // Applies `request` for the requester of connection `c` to each of its ids (an array's id:
  // the tasks the action applies to; requeue: ended jobs by their own ids).
  JobControlReply Handle(Connection& c, const JobControlRequest& request);
  // set-priority of active `job` (also a Slurm QOS's): saved, then the arbiter and its
  // processes' lanes follow. Errors: the store's.
  Status SetActivePriority(ActiveJob& job, int priority);

 private:
  // `gshare update` of pending job `pending` (its record in the queue): the fields `u` names,
  // checked (a dependency on itself, through other pending jobs, or on no job is refused),
  // saved, then admission reruns.
  Status UpdatePending(JobRecord& pending, const JobControlRequest::Update& u);
  // hold/release or set-priority of a pending job: `change` applied to a copy, saved, kept.
  Status ChangePending(JobRecord& pending, const std::function<void(JobRecord&)>& change);

  Parts p_;
  const JobLifecycle::Parts& jobs_;
  Checkpoints checkpoints_;
};

}  // namespace gshare
