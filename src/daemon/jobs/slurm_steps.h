// SlurmSteps: Slurm's job steps under the daemon (docs/slurm.md). A task of a step joins
// through `gshare slurm task-prolog` (kSlurmStep): the step is read from the asker's process
// tree (base/slurm_step.h), one gshare job (kind "slurm", RUNNING at once: Slurm has already
// scheduled it) is made per step on the GPUs Slurm gave it, and every task of the step gets the
// same job and token. The step's root slurmstepd is the job's runner: when it is gone the job
// ends (JobLifecycle::Tick's liveness poll). Root's Prolog (kSlurmJob "begin") tells the job's
// QOS and partition, which set its steps' priority (Config::Slurm); its Epilog ("end") ends the
// job's steps at once, dropping their processes' connections with their leases and memory.
// The daemon's event loop; refusals are error replies.
#pragma once

#include <sys/types.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/slurm_step.h"
#include "daemon/jobs/job_control.h"
#include "daemon/jobs/job_lifecycle.h"
#include "daemon/jobs/slurm_jobs.h"
#include "daemon/state/connection.h"
#include "daemon/state/request_transport.h"

namespace gshare {

class SlurmSteps {
 public:
  // The Slurm step process `pid` is a task of (SlurmStepOf), nullopt when none.
  using StepOf = std::function<std::optional<SlurmStep>(pid_t pid)>;

  // It works on `lifecycle`'s parts; `control` sets a step's priority. Both outlive it.
  SlurmSteps(JobLifecycle& lifecycle, JobControl& control, std::function<int()> gpu_count,
             StepOf step_of, RequestTransport transport)
      : lifecycle_(lifecycle),
        p_(lifecycle.parts()),
        control_(control),
        gpu_count_(std::move(gpu_count)),
        step_of_(std::move(step_of)),
        t_(std::move(transport)) {}

  // kSlurmStep from a task: joins its step's job, made at its first task. Refused: no step
  // above the asker, another user's step, a step without a GPU or with GPUs this node lacks.
  void OnStep(Connection& c, const nlohmann::json& req);
  // kSlurmJob from root's Prolog ("begin") or Epilog ("end"); RequestRouter lets only root
  // send it.
  void OnJob(Connection& c, const nlohmann::json& req);

 private:
  JobLifecycle& lifecycle_;
  const JobLifecycle::Parts& p_;
  JobControl& control_;
  std::function<int()> gpu_count_;
  StepOf step_of_;
  RequestTransport t_;
  SlurmJobs jobs_;  // what root's Prolog said of the jobs on this node
};

}  // namespace gshare
