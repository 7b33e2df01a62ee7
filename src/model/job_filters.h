// Which jobs and runs a listing asks for: of the store (JobStore::List, ForEachRun) and of the
// daemon (ipc/job_list.h) alike. Plain data; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "base/job_state.h"

namespace gshare {

// Which runs ForEachRun calls back for: those submitted at or before `until` that had not
// ended before `since` (a run not ended yet always has not), as sacct's --starttime/--endtime
// select the jobs that existed within the window.
struct RunFilter {
  double since = 0;             // unix seconds
  double until = 0;             // unix seconds
  std::set<JobState> states;    // the run's state; empty: every state
  bool requeued = false;        // also earlier runs ended by requeue when `states` is not empty
  std::optional<uint32_t> uid;  // the owner
  // Paging (the system daemon's replies are bounded): only jobs with a greater id, and at most
  // this many job rows (0: no limit); a full page leaves out the earlier runs of jobs after
  // its last row, which come with the next page.
  int64_t after_id = 0;
  int max_rows = 0;
};

// Which rows List returns.
struct ListFilter {
  std::set<JobState> states;            // empty: every state
  std::string name;                     // empty: any; else the exact job name
  std::optional<uint32_t> uid;          // the owner
  std::optional<int64_t> array_job_id;  // only the tasks of this job array
  int limit = 0;                        // 0: no limit
  // kNewestFirst: highest id first. kQueueOrder: RUNNING and SUSPENDED jobs first (by start),
  // then PENDING ones in the order admission considers them (priority, submission time, id),
  // then the rest newest first.
  enum class Order { kNewestFirst, kQueueOrder } order = Order::kNewestFirst;
};

}  // namespace gshare
