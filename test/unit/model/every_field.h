// A job record with every field set to a value of its own, none a default: the round trips of
// the store (test/unit/store/job_store_test.cc) and of the JSON forms (test/unit/ipc/
// job_list_test.cc) start from it.
#pragma once

#include "model/job_record.h"

namespace gshare::unit {

inline JobRecord EveryField() {
  // A field added to JobRecord changes its size: set it below too, so that it is saved.
  static_assert(sizeof(JobRecord) == 744, "JobRecord gained a field: give it a value here");
  JobRecord r;
  r.name = "every-field";
  r.argv = {"python3", "train.py", "--lr", "3e-4"};
  r.cwd = "/home/alice/exp";
  r.uid = 5001;
  r.priority = 7;
  r.quantum_ms = 2500;
  r.gpu = "0,1";
  r.gpus = 2;
  r.state = JobState::kRunning;
  r.reason = "Priority";
  r.submit_time = 1700000000.5;
  r.start_time = 1700000010.25;
  r.end_time = 1700000020.75;
  r.exit_code = 3;
  r.signal = 9;
  r.pid = 4242;
  r.lease_seconds = 8.5;
  r.wait_seconds = 2.25;
  r.peak_bytes = 1ull << 40;
  r.kind = JobKind::kSlurm;
  r.output = "/logs/%x-%j.out";
  r.time_limit_ms = 60'000;
  r.kill_after_ms = 5'000;
  r.dependency = "afterok:1:2";
  r.held = true;
  r.begin_time = 1700000100.125;
  r.end_request = "requeue";
  r.runner_pid = 777;
  r.runner_start = 123456789012;
  r.slot = "1";
  r.memory = MemoryEngine::kCheckpoint;
  r.token = std::string(32, 'a');
  r.array_job_id = 40;
  r.array_task_id = 3;
  r.array_task_count = 5;
  r.array_task_min = 1;
  r.array_task_max = 9;
  r.array_limit = 2;
  r.swaps_out = 11;
  r.swaps_in = 12;
  r.restarts = 4;
  r.slurm_job_id = 99;
  r.slurm_step = "batch";
  r.mail_user = "alice@example.org";
  r.mail_type = "END,FAIL";
  r.error = "/logs/%j.err";
  r.open_append = true;
  r.warn_signal = 10;
  r.warn_ms = 120'000;
  r.warn_main_only = true;
  return r;
}

}  // namespace gshare::unit
