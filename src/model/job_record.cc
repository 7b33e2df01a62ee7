#include "model/job_record.h"

namespace gshare {

std::string_view JobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::kRun: return "run";
    case JobKind::kSubmit: return "submit";
    case JobKind::kSlurm: return "slurm";
  }
  return "submit";  // unreachable for a valid enum value
}

std::optional<JobKind> ParseJobKind(std::string_view name) {
  for (JobKind k : {JobKind::kRun, JobKind::kSubmit, JobKind::kSlurm}) {
    if (JobKindName(k) == name) return k;
  }
  return std::nullopt;
}

void ResetForQueue(JobRecord& r) {
  r.state = JobState::kPending;
  r.reason.clear();
  r.start_time.reset();
  r.end_time.reset();
  r.exit_code.reset();
  r.signal.reset();
  r.pid.reset();
  r.runner_pid.reset();
  r.runner_start.reset();
  r.slot.clear();
  r.end_request.clear();
  r.lease_seconds = 0;
  r.wait_seconds = 0;
  r.peak_bytes = 0;
  r.swaps_out = 0;
  r.swaps_in = 0;
}

}  // namespace gshare
