// TimelineRecorder: what the daemon keeps of the GPU timeline (`gshare timeline`) until it is
// written: events wait in memory and go to the store in one transaction once the oldest has
// waited flush_after or flush_events have piled up, so a burst of grants costs one commit,
// not one each. It also turns the arbiter's lease holders into grant and release events, per
// GPU and job. It only records: nothing here decides. Daemon thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "policy/types.h"
#include "store/job_store.h"
#include "store/timeline_event.h"

namespace gshare {

class TimelineRecorder {
 public:
  struct Options {
    bool enabled = true;           // [timeline] record; false: every call below does nothing
    Millis flush_after{250};       // the longest an event waits in memory
    size_t flush_events = 512;     // a batch this large is written at once
    size_t max_buffered = 100000;  // past this (the store failing), the oldest are dropped
  };
  explicit TimelineRecorder(Options options) : options_(options) {}

  bool enabled() const { return options_.enabled; }
  // Keeps `e` (its id ignored) until the next Flush.
  void Record(TimelineEvent e, TimePoint now);

  // Lease holds. Grant events name the process whose grant began the hold, release events
  // why it ended: both are told before the holders change (Granting, Releasing), and used
  // by the next Holding call that sees the change; what it did not use is forgotten then.
  void Granting(const GpuKey& gpu, JobId job, int pid);
  void Releasing(const GpuKey& gpu, JobId job, std::string reason);
  // The jobs that hold `gpu` now (any order): a grant event (detail `mode`) for each that did
  // not before, a release event for each that no longer does (detail: what Releasing said,
  // else "reclaimed"). `owner` gives a job's uid.
  void Holding(const GpuKey& gpu, const std::vector<JobId>& jobs, std::string_view mode,
               const std::function<uint32_t(JobId)>& owner, int64_t time_us, TimePoint now);
  // Ends every hold with a release event of `reason` (the daemon stops).
  void EndAll(const std::string& reason, int64_t time_us, TimePoint now);

  // When the buffer must be written next (nullopt while it is empty), and whether it is due.
  std::optional<TimePoint> NextFlush() const;
  bool Due(TimePoint now) const;
  // Writes the buffer to `store` in one transaction and empties it; on failure the events are
  // lost (the caller logs the error): the timeline is a record, not a ledger.
  Status Flush(JobStore& store);
  size_t buffered() const { return buffer_.size(); }

 private:
  struct Hold {
    uint32_t uid = 0;
    int pid = 0;
  };
  Options options_;
  std::vector<TimelineEvent> buffer_;
  std::optional<TimePoint> oldest_;                            // when buffer_[0] was recorded
  std::map<std::pair<GpuKey, JobId>, Hold> holds_;             // who holds each GPU now
  std::map<std::pair<GpuKey, JobId>, int> granting_;           // Granting's pids, until used
  std::map<std::pair<GpuKey, JobId>, std::string> releasing_;  // Releasing's reasons
};

}  // namespace gshare
