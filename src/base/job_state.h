// A job's state, named as Slurm names them (squeue(1) "JOB STATE CODES"), plus LOST: running
// when the daemon died, with no exit status left. Text only where rows, JSON and terminals are
// written and read. Pure functions: any thread.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace gshare {

enum class JobState {
  kPending,    // PD: waiting to start (reason says why)
  kRunning,    // R
  kSuspended,  // S: `gshare suspend`, checkpointed off the GPU
  kCompleted,  // CD: exit status 0
  kFailed,     // F: non-zero exit, a signal, or could not start
  kCancelled,  // CA
  kTimeout,    // TO: its --time ended it
  kLost,       // LO: may have run; no exit status was recorded
};

inline constexpr std::array<JobState, 8> kAllJobStates = {
    JobState::kPending, JobState::kRunning,   JobState::kSuspended, JobState::kCompleted,
    JobState::kFailed,  JobState::kCancelled, JobState::kTimeout,   JobState::kLost};

// "PENDING", "RUNNING", ...: the jobs table's `state` column and JSON's "state".
const char* JobStateName(JobState state);
// "PD", "R", "S", "CD", "F", "CA", "TO", "LO": `gshare queue`'s ST column.
const char* JobStateCode(JobState state);
// The state named `name` exactly as JobStateName writes it; nullopt for anything else.
std::optional<JobState> JobStateFromName(std::string_view name);
// COMPLETED, FAILED, CANCELLED, TIMEOUT and LOST: states a job never leaves (but by requeue).
bool IsFinal(JobState state);

}  // namespace gshare
