// Helpers shared by the store's unit tests. Test threads only.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "store/job_store.h"

namespace gshare {

// The store at `path`, opened (created or migrated); the test fails here when it cannot be.
inline std::unique_ptr<JobStore> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(store.value());
}

}  // namespace gshare
