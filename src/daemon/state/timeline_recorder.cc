// The GPU timeline's recording: events kept, lease holds turned into events, batches written,
// retention applied.
#include "daemon/state/timeline_recorder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

namespace gshare {

int64_t TimelineRecorder::NowMicros() const { return static_cast<int64_t>(clock_.WallNow() * 1e6); }

void TimelineRecorder::Record(TimelineEvent e) {
  if (!options_.enabled) return;
  const TimePoint now = clock_.Now();
  if (buffer_.size() >= options_.max_buffered) {
    // The store has not taken a batch for a long while: keep the newest, bounded.
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(buffer_.size() / 2));
  }
  if (buffer_.empty()) oldest_ = now;
  buffer_.push_back(std::move(e));
}

void TimelineRecorder::Note(TimelineKind kind, JobId job, const GpuKey& gpu, int pid,
                            uint64_t bytes, double ms, std::string detail) {
  if (!options_.enabled) return;
  TimelineEvent e;
  e.time_us = NowMicros();
  e.kind = kind;
  e.gpu = gpu;
  e.job = static_cast<int64_t>(job);
  e.uid = job != 0 ? owner_(job) : 0;
  e.pid = pid;
  e.bytes = bytes;
  e.ms = ms;
  e.detail = std::move(detail);
  Record(std::move(e));
}

void TimelineRecorder::Granting(const GpuKey& gpu, JobId job, int pid) {
  if (!options_.enabled) return;
  granting_.emplace(std::make_pair(gpu, job), pid);  // the first process of the grant
}

void TimelineRecorder::Releasing(const GpuKey& gpu, JobId job, std::string reason) {
  if (!options_.enabled) return;
  releasing_[{gpu, job}] = std::move(reason);
}

void TimelineRecorder::Holding(const GpuKey& gpu, const std::vector<JobId>& jobs,
                               std::string_view mode) {
  if (!options_.enabled) return;
  const int64_t time_us = NowMicros();
  std::set<JobId> now_holding(jobs.begin(), jobs.end());
  // Releases first, so that a GPU handed from one job to another reads in that order.
  for (auto it = holds_.lower_bound({gpu, 0}); it != holds_.end() && it->first.first == gpu;) {
    const JobId job = it->first.second;
    if (now_holding.count(job) != 0) {
      ++it;
      continue;
    }
    TimelineEvent e;
    e.time_us = time_us;
    e.kind = TimelineKind::kRelease;
    e.gpu = gpu;
    e.job = job;
    e.uid = it->second.uid;
    e.pid = it->second.pid;
    auto why = releasing_.find(it->first);
    e.detail = why != releasing_.end() ? why->second : "reclaimed";
    Record(std::move(e));
    it = holds_.erase(it);
  }
  for (JobId job : now_holding) {
    auto key = std::make_pair(gpu, job);
    if (holds_.count(key) != 0) continue;
    auto pid = granting_.find(key);
    Hold hold{owner_(job), pid != granting_.end() ? pid->second : 0};
    holds_.emplace(key, hold);
    TimelineEvent e;
    e.time_us = time_us;
    e.kind = TimelineKind::kGrant;
    e.gpu = gpu;
    e.job = job;
    e.uid = hold.uid;
    e.pid = hold.pid;
    e.detail = std::string(mode);
    Record(std::move(e));
  }
  // What was told about this GPU applied to this change only.
  for (auto it = granting_.lower_bound({gpu, 0});
       it != granting_.end() && it->first.first == gpu;) {
    it = granting_.erase(it);
  }
  for (auto it = releasing_.lower_bound({gpu, 0});
       it != releasing_.end() && it->first.first == gpu;) {
    it = releasing_.erase(it);
  }
}

void TimelineRecorder::Waiting(const GpuKey& gpu, const std::vector<JobId>& jobs) {
  if (!options_.enabled) return;
  const int64_t time_us = NowMicros();
  const std::set<JobId> now_waiting(jobs.begin(), jobs.end());
  for (auto it = waits_.lower_bound({gpu, 0}); it != waits_.end() && it->first.first == gpu;) {
    const JobId job = it->first.second;
    if (now_waiting.count(job) != 0) {
      ++it;
      continue;
    }
    Note(TimelineKind::kWaited, job, gpu, 0, 0, static_cast<double>(time_us - it->second) / 1000,
         holds_.count(it->first) != 0 ? "granted" : "gave up");
    it = waits_.erase(it);
  }
  for (JobId job : now_waiting) {
    if (waits_.emplace(std::make_pair(gpu, job), time_us).second) {
      Note(TimelineKind::kWait, job, gpu, 0);
    }
  }
}

void TimelineRecorder::SyncHolds(const Arbiter& arbiter, const std::vector<GpuKey>& gpus) {
  if (!options_.enabled) return;
  for (const GpuKey& gpu : gpus) {
    const char* mode = !arbiter.enabled() ? "off" : arbiter.IsShared(gpu) ? "shared" : "exclusive";
    Holding(gpu, arbiter.HoldingJobs(gpu), mode);
    Waiting(gpu, arbiter.WaitingJobs(gpu));
  }
}

void TimelineRecorder::EndAll(const std::string& reason) {
  if (!options_.enabled) return;
  std::set<GpuKey> gpus;
  for (const auto& [key, hold] : holds_) gpus.insert(key.first);
  for (const GpuKey& gpu : gpus) {
    for (auto it = holds_.lower_bound({gpu, 0}); it != holds_.end() && it->first.first == gpu;
         ++it) {
      releasing_[it->first] = reason;
    }
    Holding(gpu, {}, "");
  }
  std::set<GpuKey> waited;
  for (const auto& [key, since] : waits_) waited.insert(key.first);
  for (const GpuKey& gpu : waited) Waiting(gpu, {});
}

std::optional<TimePoint> TimelineRecorder::NextFlush() const {
  if (buffer_.empty() || !oldest_) return std::nullopt;
  return *oldest_ + options_.flush_after;
}

bool TimelineRecorder::Due() const {
  if (buffer_.empty()) return false;
  const TimePoint now = clock_.Now();
  return buffer_.size() >= options_.flush_events ||
         (oldest_ && now >= *oldest_ + options_.flush_after);
}

Status TimelineRecorder::Flush(JobStore& store) {
  if (buffer_.empty()) return Status::Ok();
  Status st = store.AppendTimeline(buffer_);
  buffer_.clear();
  oldest_.reset();
  return st;
}

void TimelineRecorder::Tick(JobStore& store, bool force) {
  if (!force && !Due()) return;
  const size_t events = buffer_.size();
  if (Status st = Flush(store); !st.ok()) {
    spdlog::warn("timeline: {} event(s) not recorded: {}", events, st.message());
  }
}

void TimelineRecorder::ApplyRetention(JobStore& store, const Config::Timeline& keep) {
  const int64_t before_us = keep.keep.count() == 0 ? 0 : NowMicros() - keep.keep.count() * 1000;
  const int64_t newest =
      keep.max_events == 0 ? std::numeric_limits<int64_t>::max() : keep.max_events;
  Tick(store, /*force=*/true);
  Result<int64_t> removed = store.DeleteTimeline(before_us, newest);
  if (!removed.ok()) {
    spdlog::warn("retention: {}", removed.status().message());
  } else if (removed.value() > 0) {
    spdlog::info("retention: removed {} timeline event(s) (older than {} s or past the newest {})",
                 removed.value(), keep.keep.count() / 1000, keep.max_events);
  }
}

}  // namespace gshare
