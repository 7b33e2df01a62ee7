// Helpers shared by the store's unit tests. Test threads only.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/job_state.h"
#include "store/job_store.h"

namespace gshare {

// The store at `path`, opened (created or migrated); the test fails here when it cannot be.
inline std::unique_ptr<JobStore> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(store.value());
}

// A pending job of uid 1000 named `name` (`state`: another state's name), as `submit` makes
// one: argv, cwd and submit time filled in.
inline JobRecord SampleJob(std::string name, std::string state = "PENDING") {
  JobRecord r;
  r.name = std::move(name);
  r.argv = {"python", "train.py"};
  r.cwd = "/home/u";
  r.uid = 1000;
  r.state = JobStateFromName(state).value();
  r.submit_time = 1700000000.5;
  return r;
}

// Inserts `r`; its id. The test fails here when the insert fails.
inline int64_t InsertOrDie(JobStore* store, const JobRecord& r) {
  Result<int64_t> id = store->Insert(r);
  REQUIRE_MESSAGE(id.ok(), id.status().message());
  return id.value();
}

// Job `id` as stored; the test fails here when it cannot be read or does not exist.
inline JobRecord GetOrDie(JobStore* store, int64_t id) {
  Result<std::optional<JobRecord>> r = store->Get(id);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r.value().has_value());
  return *r.value();
}

}  // namespace gshare
