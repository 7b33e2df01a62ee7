// The variables gshare sets in a job's environment as it launches, built in one place for the
// three launchers: `gshare run`, the job supervisor of a submitted job (whose variables the
// daemon sends it) and Slurm's task prolog. What the shim reads (the daemon's socket, the job's
// id and token, the lease settings, the memory engine), the GPUs the job may see, the daemon's
// further variables (its MPS backend's) and the sharing defaults of common frameworks. Pure;
// any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/config.h"
#include "ipc/replies.h"

namespace gshare {

struct LaunchPlan {
  std::string socket;    // GSHARE_SOCKET: the daemon that serves the job
  int64_t job_id = 0;    // 0: the job is not registered (then no GSHARE_JOB_ID/NAME/TOKEN)
  std::string job_name;  // GSHARE_JOB_NAME
  std::string token;     // GSHARE_JOB_TOKEN (base/job_token.h)
  std::optional<MemoryEngine>
      memory;                   // GSHARE_MEMORY: the memory engine; nullopt: the shim's default
  std::string visible;          // CUDA_VISIBLE_DEVICES; "": left as it is
  LaunchEnv daemon_env;         // the daemon's further variables (JobIdReply::env)
  Config::Scheduler scheduler;  // GSHARE_IDLE_RELEASE_MS, GSHARE_EARLY_RELEASE (LeaseEnv)
};

// The (name, value) pairs to set, in order (a later one of a name wins). `job_sets(name)`:
// whether the job's own environment names `name`; a sharing default it names is left out, and
// GSHARE_MPS=0 there (`mps_opt_out`, MpsOptedOut) leaves the daemon's MPS variables out.
LaunchEnv LaunchVariables(const LaunchPlan& plan,
                          const std::function<bool(const std::string&)>& job_sets,
                          bool mps_opt_out);

}  // namespace gshare
