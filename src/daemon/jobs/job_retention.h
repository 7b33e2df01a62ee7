// JobRetention: removal of ended jobs, asked for (`gshare clean`) or by [retention] every
// kPeriod (docs/cli.md "Retention"): their rows, the log files gshare placed for them and
// their scripts; jobs a pending job depends on stay, so that its dependency can be decided.
// [retention] also bounds the daemon log's size. Time is read from the injected Clock; the
// store and the queue are the daemon's. Errors are returned (RemoveEnded) or logged (Tick).
// Single-threaded: the daemon's loop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/status.h"
#include "daemon/jobs/batch_queue.h"
#include "store/job_store.h"

namespace gshare {

class JobRetention {
 public:
  struct Options {
    Config::Retention keep;
    // The file the daemon's stderr writes to, rotated past keep.daemon_log_size; "": none
    // (under systemd the journal keeps its own bounds).
    std::string daemon_log;
    // Where the logs/ and scripts/ of `uid`'s jobs are (JobProcesses::FilesDir).
    std::function<std::string(uint32_t uid)> job_files_dir;
  };
  static constexpr Millis kPeriod{10 * 60 * 1000};

  // All of them outlive the part.
  JobRetention(JobStore& store, BatchQueue& queue, const Clock& clock, Options options)
      : store_(store), queue_(queue), clock_(clock), options_(std::move(options)) {}

  // Removes the jobs that ended before `ended_before` (unix seconds) or are not among the
  // `keep_newest` last to end, except those a pending job depends on; only `owner`'s when
  // given. A job's log is removed only when gshare placed it: a file right in its owner's
  // logs/ directory (a link there is unlinked, not followed; a user's own --output elsewhere is
  // theirs); its script too. Returns the removed ids, or the store's error.
  Result<std::vector<int64_t>> RemoveEnded(double ended_before, size_t keep_newest,
                                           std::optional<uint32_t> owner = std::nullopt);
  // Applies [retention] when due (at the first call, then every kPeriod): ended jobs, then the
  // daemon log's size. True when it ran.
  bool Tick();
  // When Tick is due next.
  TimePoint next() const { return next_; }

 private:
  JobStore& store_;
  BatchQueue& queue_;
  const Clock& clock_;
  Options options_;
  TimePoint next_{};  // the epoch: the first Tick applies [retention]
};

}  // namespace gshare
