// Environment defaults under which common frameworks share a GPU instead of claiming most of
// its memory at start: JAX/XLA preallocates 75 % of the memory it sees and TensorFlow maps
// nearly all of it, so the second of two such jobs finds no room (docs/memory.md, "What a job
// sees"). gshare sets them in every job's environment unless the job's environment already
// names them, so a user's explicit choice always wins. Pure; any thread.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"

namespace gshare {

// The scheduler settings the shim reads from a job's environment (GSHARE_IDLE_RELEASE_MS,
// GSHARE_EARLY_RELEASE), for `gshare run` and submitted jobs alike.
std::vector<std::pair<std::string, std::string>> LeaseEnv(const Config::Scheduler& s);

// The (name, value) defaults whose name `is_set` reports unset.
std::vector<std::pair<std::string, std::string>> SharingEnvDefaults(
    const std::function<bool(const std::string&)>& is_set);

// Whether the "K=V" entries of a job's environment ask to run outside MPS: GSHARE_MPS set to
// 0, no, off or false (include/gshare/job_env.h).
bool MpsOptedOut(const std::vector<std::string>& env);
// Removes the MPS backend's variables (CUDA_MPS_*, GSHARE_MPS_CLIENT) from `vars`.
void DropMpsEnv(std::vector<std::pair<std::string, std::string>>* vars);

// Whether "K=V" entries name `key`.
bool EnvListHas(const std::vector<std::string>& env, const std::string& key);

}  // namespace gshare
