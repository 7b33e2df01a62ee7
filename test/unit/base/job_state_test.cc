#include "base/job_state.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace gshare::unit_job_state {
namespace {

TEST_CASE("JobState: names and codes are Slurm's, distinct, and read back") {
  std::set<std::string> names, codes;
  for (JobState s : kAllJobStates) {
    names.insert(JobStateName(s));
    codes.insert(JobStateCode(s));
    CHECK(JobStateFromName(JobStateName(s)) == s);
  }
  CHECK(names.size() == kAllJobStates.size());
  CHECK(codes.size() == kAllJobStates.size());
  CHECK(std::string(JobStateName(JobState::kCancelled)) == "CANCELLED");
  CHECK(std::string(JobStateCode(JobState::kCompleted)) == "CD");
  CHECK(std::string(JobStateCode(JobState::kLost)) == "LO");
  CHECK_FALSE(JobStateFromName("pending").has_value());  // the column's exact text only
  CHECK_FALSE(JobStateFromName("PD").has_value());
  CHECK_FALSE(JobStateFromName("").has_value());
}

TEST_CASE("JobState: the final states are those a job never leaves") {
  std::set<JobState> final;
  for (JobState s : kAllJobStates) {
    if (IsFinal(s)) final.insert(s);
  }
  CHECK(final == std::set<JobState>{JobState::kCompleted, JobState::kFailed, JobState::kCancelled,
                                    JobState::kTimeout, JobState::kLost});
}

}  // namespace
}  // namespace gshare::unit_job_state
