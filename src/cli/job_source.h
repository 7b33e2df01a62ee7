// Where the CLI reads jobs: a user's own daemon's database, read directly (the daemon is never
// loaded by `queue`, `wait` or `logs`), or any other daemon (the system daemon, whose database
// users cannot read; one of another state directory), asked over its socket (kListJobs).
// Main thread only.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/job_store.h"

namespace gshare {

struct ClientContext;

class JobSource {
 public:
  // The source of `ctx`'s daemon, once a daemon runs when `start_daemon` (so that pending
  // jobs progress and stale states are recovered). nullptr without error when a user's daemon
  // never recorded a job (no database). Errors are one line.
  static Result<std::unique_ptr<JobSource>> Open(const ClientContext& ctx, bool start_daemon);

  // The job's row, or nullopt when there is none.
  Result<std::optional<JobRecord>> Get(int64_t id);
  // As JobStore::List; rows that cannot be read are named on stderr and left out.
  Result<std::vector<JobRecord>> List(const ListFilter& filter);
  // As JobStore::ForEachInQueueOrder (from the daemon: one reply, then the rows).
  Status ForEachInQueueOrder(const ListFilter& filter,
                             const std::function<void(const JobRecord&)>& row);
  // As JobStore::ForEachRun (from the daemon: a page of rows per exchange).
  Status ForEachRun(const RunFilter& filter, const std::function<void(const JobRun&)>& run);
  // Whether the daemon withheld the command, directory and output of job `id` in a row read
  // so far: another user's job under the system daemon (docs/cli.md "Several users").
  bool Hidden(int64_t id) const { return hidden_.count(id) != 0; }

 private:
  std::unique_ptr<JobStore> store_;  // a user's daemon
  std::string socket_;               // else the system daemon's socket
  std::set<int64_t> hidden_;         // Hidden()
};

}  // namespace gshare
