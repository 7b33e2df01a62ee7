#include "runner/launch_plan.h"

#include "runner/sharing_env.h"
#include "gshare/job_env.h"

namespace gshare {

LaunchEnv LaunchVariables(const LaunchPlan& plan,
                          const std::function<bool(const std::string&)>& job_sets,
                          bool mps_opt_out) {
  LaunchEnv env;
  if (!plan.socket.empty()) env.emplace_back(job_env::kSocket, plan.socket);
  if (plan.job_id != 0) {
    env.emplace_back(job_env::kJobId, std::to_string(plan.job_id));
    env.emplace_back(job_env::kJobName, plan.job_name);
    env.emplace_back(job_env::kJobToken, plan.token);
  }
  for (auto& kv : LeaseEnv(plan.scheduler)) env.push_back(std::move(kv));
  env.emplace_back(job_env::kMemory,
                   plan.memory ? std::string(MemoryEngineName(*plan.memory)) : std::string());
  // Before the daemon's variables: an MPS client on a machine of several GPUs names its own.
  if (!plan.visible.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", plan.visible);
  LaunchEnv daemon_env = plan.daemon_env;
  if (mps_opt_out) DropMpsEnv(&daemon_env);
  for (auto& kv : daemon_env) env.push_back(std::move(kv));
  for (auto& kv : SharingEnvDefaults(job_sets)) env.push_back(std::move(kv));
  return env;
}

}  // namespace gshare
