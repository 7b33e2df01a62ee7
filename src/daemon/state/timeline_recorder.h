// TimelineRecorder: the GPU timeline (`gshare timeline`) as the daemon records it. Events wait in
// memory and go to the store in one transaction once the oldest has waited flush_after or
// flush_events have piled up, so a burst of grants costs one commit, not one each. It turns
// the arbiter's lease holders into grant and release events, per GPU and job, and applies
// [timeline] keep and max_events. It only records: nothing here decides. Time is read from the
// injected Clock (events carry its wall clock). Store errors are logged: the timeline is a
// record, not a ledger. Daemon thread only.
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

#include "base/clock.h"
#include "base/config.h"
#include "base/status.h"
#include "policy/arbiter.h"
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
  // The uid of an active job (0 when unknown).
  using Owner = std::function<uint32_t(JobId)>;
  // `clock` outlives the recorder.
  TimelineRecorder(Options options, const Clock& clock, Owner owner)
      : options_(options), clock_(clock), owner_(std::move(owner)) {}

  bool enabled() const { return options_.enabled; }
  // Keeps `e` (its id ignored) until the next Flush.
  void Record(TimelineEvent e);
  // Records an event of `job` (0: the daemon's own, uid 0) now: `bytes` moved, taking `ms`.
  void Note(TimelineKind kind, JobId job, const GpuKey& gpu, int pid, uint64_t bytes = 0,
            double ms = 0, std::string detail = "");

  // Lease holds. Grant events name the process whose grant began the hold, release events
  // why it ended: both are told before the holders change (Granting, Releasing), and used
  // by the next Holding call that sees the change; what it did not use is forgotten then.
  void Granting(const GpuKey& gpu, JobId job, int pid);
  void Releasing(const GpuKey& gpu, JobId job, std::string reason);
  // The jobs that hold `gpu` now (any order): a grant event (detail `mode`) for each that did
  // not before, a release event for each that no longer does (detail: what Releasing said,
  // else "reclaimed").
  void Holding(const GpuKey& gpu, const std::vector<JobId>& jobs, std::string_view mode);
  // The jobs that wait for `gpu`'s lease now: a wait event for each that did not before, a
  // waited event for each that no longer does (ms: how long; detail "granted" when it holds
  // the GPU now, after Holding, else "gave up").
  void Waiting(const GpuKey& gpu, const std::vector<JobId>& jobs);
  // Holding and Waiting for each of `gpus` as `arbiter` has them now, the mode "off", "shared" or
  // "exclusive" (after every change of leases).
  void SyncHolds(const Arbiter& arbiter, const std::vector<GpuKey>& gpus);
  // Ends every hold with a release event of `reason`, and every wait (the daemon stops).
  void EndAll(const std::string& reason);

  // When the buffer must be written next (nullopt while it is empty), and whether it is due.
  std::optional<TimePoint> NextFlush() const;
  bool Due() const;
  // Writes the buffer to `store` in one transaction and empties it; on failure the events are
  // lost and the error returned.
  Status Flush(JobStore& store);
  // Flush when due (or now when `force`); a failure is logged.
  void Tick(JobStore& store, bool force = false);
  // Flushes, then removes from `store` the events older than keep.keep (0: no age limit) and
  // those past the newest keep.max_events (0: no cap); logged.
  void ApplyRetention(JobStore& store, const Config::Timeline& keep);
  size_t buffered() const { return buffer_.size(); }

 private:
  struct Hold {
    uint32_t uid = 0;
    int pid = 0;
  };
  int64_t NowMicros() const;
  Options options_;
  const Clock& clock_;
  Owner owner_;
  std::vector<TimelineEvent> buffer_;
  std::optional<TimePoint> oldest_;                            // when buffer_[0] was recorded
  std::map<std::pair<GpuKey, JobId>, Hold> holds_;             // who holds each GPU now
  std::map<std::pair<GpuKey, JobId>, int> granting_;           // Granting's pids, until used
  std::map<std::pair<GpuKey, JobId>, std::string> releasing_;  // Releasing's reasons
  std::map<std::pair<GpuKey, JobId>, int64_t> waits_;          // who waits, since (unix µs)
};

}  // namespace gshare
