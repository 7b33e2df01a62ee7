#include "daemon/server/log_throttle.h"

namespace gshare {

std::optional<uint64_t> LogThrottle::Note(uid_t uid, TimePoint now, const std::string& detail) {
  auto [it, fresh] = uids_.try_emplace(uid);
  Window& w = it->second;
  if (fresh || now >= w.end) {
    // A new window; what the last one held back is reported with this event.
    const uint64_t count = w.held + 1;
    w = Window{now + window_, 1, 0, ""};
    return count;
  }
  if (w.logged < burst_) {
    ++w.logged;
    return 1;
  }
  ++w.held;
  w.last = detail;
  return std::nullopt;
}

void LogThrottle::Flush(
    TimePoint now,
    const std::function<void(uid_t uid, uint64_t count, const std::string& last)>& report) {
  for (auto it = uids_.begin(); it != uids_.end();) {
    Window& w = it->second;
    if (now < w.end) {
      ++it;
      continue;
    }
    if (w.held == 0) {
      it = uids_.erase(it);
      continue;
    }
    report(it->first, w.held, w.last);
    // The report was this window's line: events in the next window are held back from the
    // first, so that a steady stream costs one line per window.
    w = Window{now + window_, burst_, 0, ""};
    ++it;
  }
}

std::optional<TimePoint> LogThrottle::NextFlush() const {
  std::optional<TimePoint> next;
  for (const auto& [uid, w] : uids_) {
    if (w.held != 0 && (!next || w.end < *next)) next = w.end;
  }
  return next;
}

}  // namespace gshare
