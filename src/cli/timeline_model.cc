#include "cli/timeline_model.h"

#include <algorithm>
#include <utility>

namespace gshare {

Timeline BuildTimeline(const std::vector<TimelineEvent>& events, int64_t since_us,
                       int64_t until_us) {
  Timeline t;
  t.since_us = since_us;
  t.until_us = until_us;
  std::map<std::pair<std::string, int64_t>, size_t> open;  // (GPU, job) -> its span's index
  auto gpu_seen = [&t](const std::string& gpu) {
    if (!gpu.empty() && std::find(t.gpus.begin(), t.gpus.end(), gpu) == t.gpus.end()) {
      t.gpus.push_back(gpu);
    }
  };
  auto close_all = [&t, &open](int64_t at_us, const std::string& why) {
    for (const auto& [key, index] : open) {
      t.spans[index].end_us = std::max(t.spans[index].start_us, at_us);
      t.spans[index].released = why;
    }
    open.clear();
  };
  for (const TimelineEvent& e : events) {
    if (e.job != 0) {
      if (!e.job_name.empty()) t.names[e.job] = e.job_name;
      t.owners[e.job] = e.uid;
    }
    gpu_seen(e.gpu);
    const auto key = std::make_pair(e.gpu, e.job);
    switch (e.kind) {
      case TimelineKind::kGrant: {
        if (open.count(key) != 0) break;  // held already: the earlier grant stands
        open[key] = t.spans.size();
        t.spans.push_back({e.gpu, e.job, e.time_us, until_us, e.detail, "", e.pid});
        break;
      }
      case TimelineKind::kRelease: {
        auto it = open.find(key);
        if (it == open.end()) {
          // Granted before the window: the hold is drawn from its start.
          t.spans.push_back(
              {e.gpu, e.job, std::min(since_us, e.time_us), e.time_us, "", e.detail, e.pid});
        } else {
          t.spans[it->second].end_us = e.time_us;
          t.spans[it->second].released = e.detail;
          open.erase(it);
        }
        break;
      }
      case TimelineKind::kDaemonStart:
        // Holds its predecessor never saw released ended with it (a crash).
        close_all(e.time_us, "daemon restarted");
        t.marks.push_back(e);
        break;
      default: t.marks.push_back(e); break;
    }
  }
  for (auto& [key, index] : open) t.spans[index].end_us = until_us;
  return t;
}

std::string TimelineJobLabel(const Timeline& t, int64_t job) {
  auto name = t.names.find(job);
  std::string label = "job " + std::to_string(job);
  if (name != t.names.end()) label += " (" + name->second + ")";
  return label;
}

}  // namespace gshare
