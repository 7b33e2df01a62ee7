#include "daemon/timeline_recorder.h"

#include <algorithm>

namespace gshare {

void TimelineRecorder::Record(TimelineEvent e, TimePoint now) {
  if (!options_.enabled) return;
  if (buffer_.size() >= options_.max_buffered) {
    // The store has not taken a batch for a long while: keep the newest, bounded.
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(buffer_.size() / 2));
  }
  if (buffer_.empty()) oldest_ = now;
  buffer_.push_back(std::move(e));
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
                               std::string_view mode, const std::function<uint32_t(JobId)>& owner,
                               int64_t time_us, TimePoint now) {
  if (!options_.enabled) return;
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
    Record(std::move(e), now);
    it = holds_.erase(it);
  }
  for (JobId job : now_holding) {
    auto key = std::make_pair(gpu, job);
    if (holds_.count(key) != 0) continue;
    auto pid = granting_.find(key);
    Hold hold{owner(job), pid != granting_.end() ? pid->second : 0};
    holds_.emplace(key, hold);
    TimelineEvent e;
    e.time_us = time_us;
    e.kind = TimelineKind::kGrant;
    e.gpu = gpu;
    e.job = job;
    e.uid = hold.uid;
    e.pid = hold.pid;
    e.detail = std::string(mode);
    Record(std::move(e), now);
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

void TimelineRecorder::EndAll(const std::string& reason, int64_t time_us, TimePoint now) {
  if (!options_.enabled) return;
  std::set<GpuKey> gpus;
  for (const auto& [key, hold] : holds_) gpus.insert(key.first);
  for (const GpuKey& gpu : gpus) {
    for (auto it = holds_.lower_bound({gpu, 0}); it != holds_.end() && it->first.first == gpu;
         ++it) {
      releasing_[it->first] = reason;
    }
    Holding(
        gpu, {}, "", [](JobId) { return 0u; }, time_us, now);
  }
}

std::optional<TimePoint> TimelineRecorder::NextFlush() const {
  if (buffer_.empty() || !oldest_) return std::nullopt;
  return *oldest_ + options_.flush_after;
}

bool TimelineRecorder::Due(TimePoint now) const {
  if (buffer_.empty()) return false;
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

}  // namespace gshare
