#include "cli/timeline_model.h"

#include <algorithm>
#include <utility>

namespace gshare {

Timeline BuildTimeline(const std::vector<TimelineEvent>& events, int64_t since_us,
                       int64_t until_us) {
  Timeline t;
  t.since_us = since_us;
  t.until_us = until_us;
  // (GPU, job) -> the index of its open hold in t.spans, and of its open wait in t.waits.
  std::map<std::pair<std::string, int64_t>, size_t> open, waiting;
  auto gpu_seen = [&t](const std::string& gpu) {
    if (!gpu.empty() && std::find(t.gpus.begin(), t.gpus.end(), gpu) == t.gpus.end()) {
      t.gpus.push_back(gpu);
    }
  };
  auto close_all = [](std::vector<TimelineSpan>& spans,
                      std::map<std::pair<std::string, int64_t>, size_t>& opened, int64_t at_us,
                      const std::string& why) {
    for (const auto& [key, index] : opened) {
      spans[index].end_us = std::max(spans[index].start_us, at_us);
      spans[index].released = why;
    }
    opened.clear();
  };
  // A span of `spans` opened by `e`, or closed by it (one opened before the window begins
  // at its start).
  auto begin = [&](std::vector<TimelineSpan>& spans,
                   std::map<std::pair<std::string, int64_t>, size_t>& opened,
                   const TimelineEvent& e) {
    const auto key = std::make_pair(e.gpu, e.job);
    if (opened.count(key) != 0) return;  // open already: the earlier start stands
    opened[key] = spans.size();
    spans.push_back({e.gpu, e.job, e.time_us, until_us, e.detail, "", e.pid});
  };
  auto end = [&](std::vector<TimelineSpan>& spans,
                 std::map<std::pair<std::string, int64_t>, size_t>& opened,
                 const TimelineEvent& e) {
    auto it = opened.find(std::make_pair(e.gpu, e.job));
    if (it == opened.end()) {
      spans.push_back(
          {e.gpu, e.job, std::min(since_us, e.time_us), e.time_us, "", e.detail, e.pid});
    } else {
      spans[it->second].end_us = e.time_us;
      spans[it->second].released = e.detail;
      opened.erase(it);
    }
  };
  for (const TimelineEvent& e : events) {
    if (e.job != 0) {
      if (!e.job_name.empty()) t.names[e.job] = e.job_name;
      t.owners[e.job] = e.uid;
    }
    gpu_seen(e.gpu);
    switch (e.kind) {
      case TimelineKind::kGrant: begin(t.spans, open, e); break;
      case TimelineKind::kRelease: end(t.spans, open, e); break;
      case TimelineKind::kWait: begin(t.waits, waiting, e); break;
      case TimelineKind::kWaited: end(t.waits, waiting, e); break;
      case TimelineKind::kDaemonStart:
        // Holds and waits its predecessor never saw end ended with it (a crash).
        close_all(t.spans, open, e.time_us, "daemon restarted");
        close_all(t.waits, waiting, e.time_us, "daemon restarted");
        t.marks.push_back(e);
        break;
      case TimelineKind::kJobStart:
        if (e.ms > 0) {
          const int64_t pending_us = static_cast<int64_t>(e.ms * 1000);
          t.queued.push_back({"", e.job, std::max(since_us, e.time_us - pending_us), e.time_us, "",
                              "started", e.pid});
        }
        t.marks.push_back(e);
        break;
      default: t.marks.push_back(e); break;
    }
  }
  return t;
}

void ClipTimeline(Timeline* t, int64_t since_us) {
  t->since_us = std::max(t->since_us, since_us);
  for (std::vector<TimelineSpan>* spans : {&t->spans, &t->waits, &t->queued}) {
    std::erase_if(*spans, [&](const TimelineSpan& s) { return s.end_us < t->since_us; });
    for (TimelineSpan& s : *spans) s.start_us = std::max(s.start_us, t->since_us);
  }
  std::erase_if(t->marks, [&](const TimelineEvent& e) { return e.time_us < t->since_us; });
}

std::string TimelineJobLabel(const Timeline& t, int64_t job) {
  auto name = t.names.find(job);
  std::string label = "job " + std::to_string(job);
  if (name != t.names.end()) label += " (" + name->second + ")";
  return label;
}

}  // namespace gshare
