// What the daemon parts' tests store as jobs: a submitted job's fields that every row needs,
// a store opened or the test failed, a job stored and queued. Test threads only.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>

#include "daemon/jobs/batch_queue.h"
#include "store/job_store.h"

namespace gshare {

// A submitted job named "j" that runs `true` in "/", in `state`.
inline JobRecord SubmittedJob(JobState state) {
  JobRecord r;
  r.name = "j";
  r.argv = {"true"};
  r.cwd = "/";
  r.kind = JobKind::kSubmit;
  r.state = state;
  return r;
}

// The job store at `path` (created), or the test fails with its error.
inline std::unique_ptr<JobStore> OpenStoreOrFail(const std::string& path) {
  Result<std::unique_ptr<JobStore>> opened = JobStore::Open(path);
  REQUIRE_MESSAGE(opened.ok(), opened.status().message());
  return std::move(opened.value());
}

// Stores `r` and queues it (pending) in `queue`; its id.
inline int64_t StoreAndQueue(JobStore& store, BatchQueue& queue, JobRecord r) {
  Result<int64_t> id = store.Insert(r);
  REQUIRE(id.ok());
  r.id = id.value();
  queue.Add(r);
  return r.id;
}

}  // namespace gshare
