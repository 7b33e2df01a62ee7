#include "runner/sharing_env.h"

#include "gshare/job_env.h"

namespace gshare {

std::vector<std::pair<std::string, std::string>> SharingEnvDefaults(
    const std::function<bool(const std::string&)>& is_set) {
  // JAX: https://docs.jax.dev/en/latest/gpu_memory_allocation.html; TensorFlow:
  // tf.config.experimental.set_memory_growth (TF_FORCE_GPU_ALLOW_GROWTH).
  static const std::pair<const char*, const char*> kDefaults[] = {
      {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"},
      {"TF_FORCE_GPU_ALLOW_GROWTH", "true"},
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : kDefaults) {
    if (!is_set(name)) out.emplace_back(name, value);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> LeaseEnv(const Config::Scheduler& s) {
  return {{job_env::kIdleReleaseMs, std::to_string(s.idle_release.count())},
          {job_env::kEarlyRelease, s.early_release ? "1" : "0"}};
}

bool MpsOptedOut(const std::vector<std::string>& env) {
  const std::string prefix = std::string(job_env::kMpsOptOut) + "=";
  for (const std::string& e : env) {
    if (e.rfind(prefix, 0) != 0) continue;  // the first entry counts, as getenv(3) finds it
    return job_env::MpsOptOutValue(std::string_view(e).substr(prefix.size()));
  }
  return false;
}

void DropMpsEnv(std::vector<std::pair<std::string, std::string>>* vars) {
  std::erase_if(*vars, [](const auto& kv) {
    return kv.first.rfind("CUDA_MPS_", 0) == 0 || kv.first == job_env::kMpsClient;
  });
}

bool EnvListHas(const std::vector<std::string>& env, const std::string& key) {
  for (const std::string& e : env) {
    if (e.size() > key.size() && e.compare(0, key.size(), key) == 0 && e[key.size()] == '=') {
      return true;
    }
  }
  return false;
}

}  // namespace gshare
