#include "model/job_record.h"

namespace gshare {

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
