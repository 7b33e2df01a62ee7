// ProcessJobs: one job per process (pid and start time), at most per_user live jobs per capped
// user (past it the newest is joined), and an ended job's processes forgotten.
#include "daemon/gpu/process_jobs.h"

#include <doctest/doctest.h>

namespace gshare::unit_process_jobs {
namespace {

using P = ProcessJobs::Process;

TEST_CASE("ProcessJobs: one job per process, and a capped user's extra processes join") {
  ProcessJobs jobs(2);
  const P a{1000, 10, 111}, a_again{1000, 10, 111}, reused_pid{1000, 10, 999};
  CHECK(jobs.JobOf(a, true) == 0);
  jobs.Add(a, 1);
  CHECK(jobs.JobOf(a_again, true) == 1);     // a second connection of the same process
  CHECK(jobs.JobOf(reused_pid, true) == 0);  // another process with the pid
  jobs.Add(reused_pid, 2);
  CHECK(jobs.LiveOf(1000) == 2);
  // At the cap: a new process of the user joins the newest job.
  const P third{1000, 30, 5};
  CHECK(jobs.JobOf(third, true) == 2);
  jobs.Add(third, 2);
  CHECK(jobs.LiveOf(1000) == 2);
  CHECK(jobs.JobOf(third, true) == 2);
  // An admin's process is not capped; another user's neither.
  CHECK(jobs.JobOf(P{1000, 40, 5}, false) == 0);
  CHECK(jobs.JobOf(P{2000, 40, 5}, true) == 0);

  // Job 2 ends: its processes are forgotten, and the user is below the cap again.
  jobs.Ended(2);
  CHECK(jobs.LiveOf(1000) == 1);
  CHECK(jobs.JobOf(third, true) == 0);
  CHECK(jobs.JobOf(reused_pid, true) == 0);
  CHECK(jobs.JobOf(a, true) == 1);
  jobs.Ended(1);
  jobs.Ended(1);  // once only
  CHECK(jobs.size() == 0);
  CHECK(jobs.LiveOf(1000) == 0);
}

TEST_CASE("ProcessJobs with per_user 0 caps nobody") {
  ProcessJobs jobs(0);
  for (pid_t pid = 1; pid <= 100; ++pid) {
    CHECK(jobs.JobOf(P{1000, pid, 1}, true) == 0);
    jobs.Add(P{1000, pid, 1}, static_cast<JobId>(pid));
  }
  CHECK(jobs.LiveOf(1000) == 100);
}

}  // namespace
}  // namespace gshare::unit_process_jobs
