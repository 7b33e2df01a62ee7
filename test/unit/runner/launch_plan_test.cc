// LaunchVariables: one list of a job's launch variables for `gshare run`, the supervisor and
// Slurm's task prolog.
#include "runner/launch_plan.h"

#include <doctest/doctest.h>

#include <map>

namespace gshare::unit_launch_plan {
namespace {

// The value each name ends with (a later pair of a name wins, as the launchers apply them).
std::map<std::string, std::string> Final(const LaunchEnv& env) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : env) out[k] = v;
  return out;
}

LaunchPlan Plan() {
  LaunchPlan p;
  p.socket = "/run/gshare.sock";
  p.job_id = 12;
  p.job_name = "train";
  p.token = "00ff";
  p.memory = MemoryEngine::kSwap;
  p.visible = "1";
  p.scheduler.idle_release = std::chrono::milliseconds(700);
  p.scheduler.early_release = false;
  p.daemon_env = {{"CUDA_MPS_PIPE_DIRECTORY", "/s/mps/1/pipe"},
                  {"GSHARE_MPS_CLIENT", "1"},
                  {"CUDA_VISIBLE_DEVICES", "GPU-bbbb"}};
  return p;
}

TEST_CASE("LaunchVariables: the shim's variables, the GPUs, the daemon's, then the defaults") {
  const auto nothing_set = [](const std::string&) { return false; };
  const auto env = Final(LaunchVariables(Plan(), nothing_set, false));
  CHECK(env.at("GSHARE_SOCKET") == "/run/gshare.sock");
  CHECK(env.at("GSHARE_JOB_ID") == "12");
  CHECK(env.at("GSHARE_JOB_NAME") == "train");
  CHECK(env.at("GSHARE_JOB_TOKEN") == "00ff");
  CHECK(env.at("GSHARE_MEMORY") == "swap");
  CHECK(env.at("GSHARE_IDLE_RELEASE_MS") == "700");
  CHECK(env.at("GSHARE_EARLY_RELEASE") == "0");
  CHECK(env.at("CUDA_MPS_PIPE_DIRECTORY") == "/s/mps/1/pipe");
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-bbbb");  // the daemon's, after the slot's
  CHECK(env.at("XLA_PYTHON_CLIENT_PREALLOCATE") == "false");
  CHECK(env.at("TF_FORCE_GPU_ALLOW_GROWTH") == "true");
}

TEST_CASE("LaunchVariables: the job's own choices win; no job, no job variables") {
  LaunchPlan p = Plan();
  p.job_id = 0;
  p.visible.clear();
  const auto env = Final(LaunchVariables(
      p, [](const std::string& n) { return n == "XLA_PYTHON_CLIENT_PREALLOCATE"; }, true));
  CHECK(env.count("GSHARE_JOB_ID") == 0);
  CHECK(env.count("GSHARE_JOB_TOKEN") == 0);
  CHECK(env.count("XLA_PYTHON_CLIENT_PREALLOCATE") == 0);  // the job named it
  CHECK(env.count("CUDA_MPS_PIPE_DIRECTORY") == 0);        // GSHARE_MPS=0: outside MPS
  CHECK(env.count("GSHARE_MPS_CLIENT") == 0);
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-bbbb");  // a UUID: the same GPU out of MPS
  CHECK(env.at("GSHARE_SOCKET") == "/run/gshare.sock");
}

}  // namespace
}  // namespace gshare::unit_launch_plan
