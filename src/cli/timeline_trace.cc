#include "cli/timeline_trace.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace gshare {

using json = nlohmann::json;

json TimelineTrace(const Timeline& t, const std::function<std::string(uint32_t uid)>& user) {
  // Trace processes: 0 for what happens on no GPU, then 1.. for the GPUs.
  std::map<std::string, int> process;
  for (size_t i = 0; i < t.gpus.size(); ++i) process[t.gpus[i]] = static_cast<int>(i) + 1;
  auto pid_of = [&process](const std::string& gpu) {
    auto it = process.find(gpu);
    return it == process.end() ? 0 : it->second;
  };
  json events = json::array();
  auto metadata = [&events](const char* name, int pid, std::optional<int64_t> tid, json args) {
    json m{{"name", name}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
    if (tid) m["tid"] = *tid;
    events.push_back(std::move(m));
  };
  metadata("process_name", 0, std::nullopt, {{"name", "jobs"}});
  metadata("process_sort_index", 0, std::nullopt, {{"sort_index", 0}});
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    metadata("process_name", pid, std::nullopt, {{"name", "GPU " + t.gpus[i]}});
    metadata("process_sort_index", pid, std::nullopt, {{"sort_index", pid}});
  }
  // A thread per job on each process it appears on.
  std::set<std::pair<int, int64_t>> threads;
  for (const TimelineSpan& s : t.spans) threads.insert({pid_of(s.gpu), s.job});
  for (const TimelineSpan& s : t.waits) threads.insert({pid_of(s.gpu), s.job});
  for (const TimelineEvent& e : t.marks) {
    if (e.job != 0) threads.insert({pid_of(e.gpu), e.job});
  }
  for (const auto& [pid, job] : threads) {
    metadata("thread_name", pid, job, {{"name", TimelineJobLabel(t, job)}});
    metadata("thread_sort_index", pid, job, {{"sort_index", job}});
  }

  // Holds and marks in time order (a hold by its start).
  std::vector<std::pair<int64_t, json>> timed;
  auto span = [&](const TimelineSpan& s, const char* name) {
    json args{{"job", s.job}, {"released", s.released}};
    if (!s.mode.empty()) args["mode"] = s.mode;
    if (s.pid != 0) args["process"] = s.pid;
    auto owner = t.owners.find(s.job);
    if (owner != t.owners.end()) args["user"] = user(owner->second);
    timed.emplace_back(s.start_us, json{{"name", name},
                                        {"cat", "lease"},
                                        {"ph", "X"},
                                        {"ts", s.start_us},
                                        {"dur", std::max<int64_t>(0, s.end_us - s.start_us)},
                                        {"pid", pid_of(s.gpu)},
                                        {"tid", s.job},
                                        {"args", std::move(args)}});
  };
  for (const TimelineSpan& s : t.spans) span(s, "lease");
  for (const TimelineSpan& s : t.waits) span(s, "wait");  // for the lease
  for (const TimelineEvent& e : t.marks) {
    json args{{"job", e.job}};
    if (e.pid != 0) args["process"] = e.pid;
    if (e.bytes != 0) args["bytes"] = e.bytes;
    if (e.ms != 0) args["ms"] = e.ms;
    if (!e.detail.empty()) args["detail"] = e.detail;
    json mark{{"name", TimelineKindName(e.kind)},
              {"cat", e.kind == TimelineKind::kSwapOut || e.kind == TimelineKind::kSwapIn ? "memory"
                      : e.kind == TimelineKind::kDrop || e.kind == TimelineKind::kHandoff ? "lease"
                                                                                          : "job"},
              {"ph", "i"},
              {"ts", e.time_us},
              {"pid", pid_of(e.gpu)},
              {"tid", e.job},
              {"args", std::move(args)}};
    // A daemon start concerns every track: a global instant.
    mark["s"] = e.kind == TimelineKind::kDaemonStart ? "g" : "t";
    timed.emplace_back(e.time_us, std::move(mark));
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [ts, e] : timed) events.push_back(std::move(e));
  return json{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"generator", "gshare timeline"},
                {"since_us", t.since_us},
                {"until_us", t.until_us},
                {"gpus", t.gpus}}}};
}

}  // namespace gshare
