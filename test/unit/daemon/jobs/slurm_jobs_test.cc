#include "daemon/jobs/slurm_jobs.h"

#include <doctest/doctest.h>

namespace gshare::unit_slurm_jobs {
namespace {

Config::Slurm Rule() {
  Config::Slurm rule;
  rule.qos_priority = {{"high", 20}};
  rule.partition_priority = {{"interactive", 10}};
  rule.default_priority = 1;
  return rule;
}

TEST_CASE("a step's priority follows what root's Prolog said of its job") {
  SlurmJobs jobs;
  const Config::Slurm rule = Rule();
  CHECK(jobs.PriorityOf(7, 1000, rule) == 1);  // no Prolog: the default
  jobs.Begin(7, {1000, "interactive", "normal"});
  CHECK(jobs.PriorityOf(7, 1000, rule) == 10);
  CHECK(jobs.PriorityOf(7, 1001, rule) == 1);  // another user's step: not this job's facts
  jobs.Begin(8, {1001, "interactive", "high"});
  CHECK(jobs.PriorityOf(8, 1001, rule) == 20);
  jobs.Begin(7, {1000, "batch", ""});  // the job, requeued, begins again elsewhere
  CHECK(jobs.PriorityOf(7, 1000, rule) == 1);
  REQUIRE(jobs.Find(7) != nullptr);
  CHECK(jobs.Find(7)->partition == "batch");
  jobs.End(7);
  CHECK(jobs.Find(7) == nullptr);
  CHECK(jobs.PriorityOf(7, 1000, rule) == 1);
  jobs.End(7);  // again: no error
  jobs.End(99);
  CHECK(jobs.size() == 1);
}

TEST_CASE("jobs whose Epilog never came are forgotten oldest first past the cap") {
  SlurmJobs jobs;
  const int64_t cap = static_cast<int64_t>(SlurmJobs::kMaxJobs);
  for (int64_t id = 1; id <= cap + 10; ++id) jobs.Begin(id, {1000, "p", ""});
  CHECK(jobs.size() == SlurmJobs::kMaxJobs);
  CHECK(jobs.Find(10) == nullptr);
  CHECK(jobs.Find(11) != nullptr);
  jobs.End(12);  // an Epilog: its room goes to the next job, the oldest stays
  jobs.Begin(cap + 11, {1000, "p", ""});
  CHECK(jobs.Find(11) != nullptr);
  jobs.Begin(cap + 12, {1000, "p", ""});
  CHECK(jobs.Find(11) == nullptr);
  CHECK(jobs.Find(13) != nullptr);
  CHECK(jobs.size() == SlurmJobs::kMaxJobs);
}

}  // namespace
}  // namespace gshare::unit_slurm_jobs
