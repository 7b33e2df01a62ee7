#include "daemon/gpu/handoff_log.h"

#include <algorithm>
#include <chrono>

namespace gshare {
namespace {

double Ms(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

void HandoffLog::Dropped(const GpuKey& gpu, std::optional<JobId> holder, TimePoint now) {
  PerGpu& g = gpus_[gpu];
  if (g.drop_at) return;  // a DROP repeated within one turn: the first one counts
  g.drop_at = now;
  g.dropped_holder = holder;
}

bool HandoffLog::IsOpen(const GpuKey& gpu, uint64_t epoch) const {
  auto it = gpus_.find(gpu);
  return it != gpus_.end() && it->second.open && it->second.open->epoch == epoch;
}

void HandoffLog::Granted(const GpuKey& gpu, JobId job, uint64_t epoch, TimePoint now) {
  PerGpu& g = gpus_[gpu];
  Handoff h;
  h.from = g.dropped_holder.value_or(0);
  h.to = job;
  h.epoch = epoch;
  h.drop_at = g.drop_at.value_or(now);
  h.grant_at = now;
  h.drain_ms = Ms(h.drop_at, now);
  g.drop_at.reset();
  g.dropped_holder.reset();
  g.open = h;
}

void HandoffLog::Evicted(const GpuKey& gpu, uint64_t epoch, uint64_t bytes) {
  auto it = gpus_.find(gpu);
  if (it != gpus_.end() && it->second.open && it->second.open->epoch == epoch) {
    it->second.open->evict_bytes += bytes;
  }
}

void HandoffLog::Checkpointed(const GpuKey& gpu, double ms) {
  auto it = gpus_.find(gpu);
  if (it != gpus_.end() && it->second.open) {
    it->second.open->checkpoint_ms += ms;
    it->second.open->driver_paced = true;
  }
}

std::optional<HandoffLog::Handoff> HandoffLog::SwappedIn(const GpuKey& gpu, JobId job,
                                                         uint64_t epoch, const SwapIn& s,
                                                         TimePoint now) {
  auto it = gpus_.find(gpu);
  if (it == gpus_.end()) return std::nullopt;
  PerGpu& g = it->second;
  if (!g.open || g.open->epoch != epoch || g.open->to != job) return std::nullopt;
  Handoff h = *g.open;
  g.open.reset();
  h.swapin_bytes += s.bytes;
  h.swapin_ms = std::max(h.swapin_ms, s.ms);
  h.room_wait_ms = std::max(h.room_wait_ms, std::min(s.room_wait_ms, s.ms));
  h.room_wait = h.room_wait || s.no_room;
  h.driver_paced = h.driver_paced || s.restored;
  h.total_ms = Ms(h.drop_at, now);
  h.other_ms = std::max(0.0, h.total_ms - h.drain_ms - h.checkpoint_ms - h.swapin_ms);
  h.bound_ms = h.driver_paced ? h.drain_ms + h.checkpoint_ms + h.swapin_ms + kBoundSlackMs
                              : h.drain_ms +
                                    static_cast<double>(std::max(h.evict_bytes, h.swapin_bytes)) /
                                        kBoundBytesPerMs +
                                    h.room_wait_ms + kBoundSlackMs;
  if (h.from == 0 && h.swapin_bytes == 0 && h.evict_bytes == 0) return std::nullopt;
  ++g.handoffs;
  if (h.over_bound()) ++g.over_bound;
  g.last = h;
  return h;
}

uint64_t HandoffLog::count(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  return it == gpus_.end() ? 0 : it->second.handoffs;
}

uint64_t HandoffLog::over_bound(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  return it == gpus_.end() ? 0 : it->second.over_bound;
}

const HandoffLog::Handoff* HandoffLog::last(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  return it == gpus_.end() || !it->second.last ? nullptr : &*it->second.last;
}

void HandoffLog::AddJson(const GpuKey& gpu, nlohmann::json* g) const {
  (*g)["handoffs"] = count(gpu);
  (*g)["handoffs_over_bound"] = over_bound(gpu);
  nlohmann::json last = nullptr;
  if (const Handoff* h = this->last(gpu)) {
    last = {{"from", h->from},
            {"to", h->to},
            {"drain_ms", h->drain_ms},
            {"evict_bytes", h->evict_bytes},
            {"checkpoint_ms", h->checkpoint_ms},
            {"swapin_bytes", h->swapin_bytes},
            {"swapin_ms", h->swapin_ms},
            {"room_wait_ms", h->room_wait_ms},
            {"other_ms", h->other_ms},
            {"total_ms", h->total_ms},
            {"bound_ms", h->bound_ms},
            {"room_wait", h->room_wait},
            {"driver_paced", h->driver_paced}};
  }
  (*g)["last_handoff"] = last;
}

}  // namespace gshare
