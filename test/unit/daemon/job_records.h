// What the daemon parts' tests store as jobs: a submitted job's fields that every row needs.
// Test threads only.
#pragma once

#include "store/job_store.h"

namespace gshare {

// A submitted job named "j" that runs `true` in "/", in `state`.
inline JobRecord SubmittedJob(JobState state) {
  JobRecord r;
  r.name = "j";
  r.argv = {"true"};
  r.cwd = "/";
  r.kind = "submit";
  r.state = state;
  return r;
}

}  // namespace gshare
