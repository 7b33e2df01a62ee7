#include "base/job_state.h"

namespace gshare {

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending: return "PENDING";
    case JobState::kRunning: return "RUNNING";
    case JobState::kSuspended: return "SUSPENDED";
    case JobState::kCompleted: return "COMPLETED";
    case JobState::kFailed: return "FAILED";
    case JobState::kCancelled: return "CANCELLED";
    case JobState::kTimeout: return "TIMEOUT";
    case JobState::kLost: return "LOST";
  }
  return "?";
}

const char* JobStateCode(JobState state) {
  switch (state) {
    case JobState::kPending: return "PD";
    case JobState::kRunning: return "R";
    case JobState::kSuspended: return "S";
    case JobState::kCompleted: return "CD";
    case JobState::kFailed: return "F";
    case JobState::kCancelled: return "CA";
    case JobState::kTimeout: return "TO";
    case JobState::kLost: return "LO";
  }
  return "?";
}

std::optional<JobState> JobStateFromName(std::string_view name) {
  for (JobState s : kAllJobStates) {
    if (name == JobStateName(s)) return s;
  }
  return std::nullopt;
}

bool IsFinal(JobState state) {
  switch (state) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended: return false;
    case JobState::kCompleted:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kTimeout:
    case JobState::kLost: return true;
  }
  return false;
}

}  // namespace gshare
