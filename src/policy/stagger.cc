#include "policy/stagger.h"

#include <algorithm>
#include <utility>

namespace gshare {
namespace {

Millis ToMillis(TimePoint::duration d) { return std::chrono::duration_cast<Millis>(d); }

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::optional<Stagger::Rhythm> Stagger::RhythmOf(const std::deque<Gap>& gaps) {
  if (gaps.size() < kMinGaps) return std::nullopt;
  std::vector<TimePoint::duration> lengths, periods;
  for (size_t i = 0; i < gaps.size(); ++i) {
    lengths.push_back(gaps[i].end - gaps[i].begin);
    if (i > 0) periods.push_back(gaps[i].end - gaps[i - 1].end);
  }
  return Rhythm{ToMillis(Median(lengths)), ToMillis(Median(periods))};
}

Millis Stagger::CoIdle(const Board& b, JobId job, const Gap& g, const std::vector<JobId>& holders) {
  // The gap, cut down to the parts in which each other holder was idle too.
  std::vector<std::pair<TimePoint, TimePoint>> idle{{g.begin, g.end}};
  bool others = false;
  for (JobId h : holders) {
    if (h == job) continue;
    others = true;
    auto it = b.gaps.find(h);
    if (it == b.gaps.end()) return Millis(0);  // no gap reported: busy as far as known
    std::vector<std::pair<TimePoint, TimePoint>> next;
    for (const auto& [from, to] : idle) {
      for (const Gap& o : it->second) {
        TimePoint lo = std::max(from, o.begin), hi = std::min(to, o.end);
        if (lo < hi) next.emplace_back(lo, hi);
      }
    }
    idle = std::move(next);
  }
  if (!others) return Millis(0);
  TimePoint::duration sum{0};
  for (const auto& [from, to] : idle) sum += to - from;
  return ToMillis(sum);
}

std::pair<JobId, Millis> Stagger::FollowerOf(const Board& b, JobId job, const Gap& g,
                                             const std::vector<JobId>& holders) {
  JobId follower = job;
  TimePoint first = g.begin, last = g.begin;
  for (JobId h : holders) {
    if (h == job) continue;
    auto it = b.gaps.find(h);
    if (it == b.gaps.end()) continue;
    for (const Gap& o : it->second) {
      if (o.end <= g.begin || o.begin >= g.end) continue;  // not of this time
      first = std::min(first, o.begin);
      if (o.begin > last) {
        last = o.begin;
        follower = h;
      }
    }
  }
  return {follower, ToMillis(last - first)};
}

std::optional<Stagger::Order> Stagger::Report(const GpuKey& gpu, JobId job, TimePoint begin,
                                              TimePoint end, const std::vector<JobId>& holders,
                                              TimePoint now) {
  if (end <= begin) return std::nullopt;
  Board& b = boards_[gpu];
  // Jobs that stopped holding no longer count.
  for (auto it = b.gaps.begin(); it != b.gaps.end();) {
    bool holds = std::find(holders.begin(), holders.end(), it->first) != holders.end();
    if (!holds) b.phase_began.erase(it->first);
    it = holds ? std::next(it) : b.gaps.erase(it);
  }
  if (std::find(holders.begin(), holders.end(), job) == holders.end()) return std::nullopt;
  if (end - begin >= kPhaseGap) {
    TimePoint& began = b.phase_began[job];
    began = std::max(began, end);
  }
  std::deque<Gap>& mine = b.gaps[job];
  mine.push_back(Gap{begin, end});
  while (mine.size() > kHistory) mine.pop_front();

  // Judge the gaps that have settled (the others' reports of the same time have arrived),
  // oldest end first.
  std::vector<std::pair<JobId, Gap*>> settled;
  for (auto& [j, gaps] : b.gaps) {
    for (Gap& g : gaps) {
      if (!g.judged && g.end + kSettle <= now) settled.emplace_back(j, &g);
    }
  }
  std::sort(settled.begin(), settled.end(),
            [](const auto& x, const auto& y) { return x.second->end < y.second->end; });
  std::optional<Order> order;
  for (auto& [j, g] : settled) {
    g->judged = true;
    Millis co = CoIdle(b, j, *g, holders);
    bool together = co >= kMinCoIdle && kTogetherFraction * co >= ToMillis(g->end - g->begin);
    b.together_run = together ? b.together_run + 1 : 0;
    if (order || b.together_run < kLockGaps || now < b.quiet_until) continue;
    // Only GPU-bound holders, each with a known rhythm.
    bool bound = true;
    for (JobId h : holders) {
      auto it = b.gaps.find(h);
      std::optional<Rhythm> r;
      if (it != b.gaps.end()) r = RhythmOf(it->second);
      if (!r || 2 * r->gap > r->period) bound = false;
    }
    if (!bound) continue;
    // The follower (the job whose gap of this time began last) is stretched so that its
    // offset from the leader goes from `lead` to its GPU phase alone (stagger.h).
    auto [follower, lead] = FollowerOf(b, j, *g, holders);
    Rhythm r = *RhythmOf(b.gaps[follower]);
    Millis shift = std::clamp((r.period + r.gap - 3 * lead) / 4, kMinCoIdle, kMaxShift);
    order = Order{follower, r.gap + shift, shift, co};
    ++stretches_[gpu];
    b.together_run = 0;
    b.quiet_until = now + std::max(kQuietMin, kQuietPeriods * r.period);
  }
  return order;
}

void Stagger::Forget(JobId job) {
  for (auto& [gpu, b] : boards_) {
    b.gaps.erase(job);
    b.phase_began.erase(job);
  }
}

std::optional<TimePoint> Stagger::PhaseBegan(const GpuKey& gpu, JobId job) const {
  auto b = boards_.find(gpu);
  if (b == boards_.end()) return std::nullopt;
  auto it = b->second.phase_began.find(job);
  if (it == b->second.phase_began.end()) return std::nullopt;
  return it->second;
}

uint64_t Stagger::Stretches(const GpuKey& gpu) const {
  auto it = stretches_.find(gpu);
  return it == stretches_.end() ? 0 : it->second;
}

}  // namespace gshare
