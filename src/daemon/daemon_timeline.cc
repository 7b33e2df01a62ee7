// The GPU timeline (`gshare timeline`): the events the daemon records as it grants, drops and
// takes back leases, swaps, checkpoints and suspends, kept by the TimelineRecorder and written
// in batches; the kTimeline request that reads them back; their retention. The daemon's
// thread.
#include <spdlog/spdlog.h>

#include <chrono>
#include <limits>

#include "daemon/daemon.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/timeline_request.h"

namespace gshare {

using json = nlohmann::json;

namespace {

// Events per kTimeline reply: ~200 bytes each in JSON, far below the client's frame limit.
constexpr int kTimelinePage = 20'000;

int64_t UnixMicros(double unix_seconds) { return static_cast<int64_t>(unix_seconds * 1e6); }

}  // namespace

void Daemon::NoteTimeline(TimelineKind kind, JobId job, const GpuKey& gpu, int pid, uint64_t bytes,
                          double ms, std::string detail) {
  if (!timeline_.enabled()) return;
  TimelineEvent e;
  e.time_us = UnixMicros(WallNow());
  e.kind = kind;
  e.gpu = gpu;
  e.job = static_cast<int64_t>(job);
  e.uid = job != 0 ? JobOwner(job) : 0;
  e.pid = pid;
  e.bytes = bytes;
  e.ms = ms;
  e.detail = std::move(detail);
  timeline_.Record(std::move(e), Now());
}

GpuKey Daemon::FirstGpuOf(ConnId conn) const {
  std::vector<GpuKey> gpus = ledger_.GpusOf(conn);
  return gpus.empty() ? GpuKey() : gpus.front();
}

void Daemon::SyncLeaseHolds() {
  if (!timeline_.enabled()) return;
  const int64_t now_us = UnixMicros(WallNow());
  const TimePoint now = Now();
  for (const auto& [gpu, info] : gpus_) {
    const char* mode = !arbiter_.enabled()      ? "off"
                       : arbiter_.IsShared(gpu) ? "shared"
                                                : "exclusive";
    timeline_.Holding(
        gpu, arbiter_.HoldingJobs(gpu), mode, [this](JobId job) { return JobOwner(job); }, now_us,
        now);
  }
}

void Daemon::TimelineTick(TimePoint now, bool force) {
  if (!force && !timeline_.Due(now)) return;
  const size_t events = timeline_.buffered();
  if (Status st = timeline_.Flush(*store_); !st.ok()) {
    spdlog::warn("timeline: {} event(s) not recorded: {}", events, st.message());
  }
}

void Daemon::OnTimeline(Connection& c, const json& req) {
  Result<TimelineRequest> parsed = TimelineRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const TimelineRequest& r = parsed.value();
  // A user sees their own jobs' events; every user's only an admin (policy/access.h).
  if (r.all_users && !access_.IsAdmin(c)) {
    return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                               "only an admin may see every user's timeline"));
  }
  TimelineTick(Now(), /*force=*/true);  // what happened until now is in the answer
  TimelineFilter filter;
  filter.since_us = r.since_us;
  filter.until_us = r.until_us;
  if (!r.all_users) filter.uid = c.uid;
  filter.jobs = r.jobs;
  filter.after_id = r.after_id;
  filter.max_rows = kTimelinePage;
  json events = json::array();
  int64_t next_after = 0;
  Status st = store_->ForEachTimelineEvent(
      filter, [&events](const TimelineEvent& e) { events.push_back(EventToJson(e)); }, &next_after);
  if (!st.ok()) return Reply(c, ErrorReply(st.message()));
  Reply(c, ToJsonText(json{{"ok", true},
                           {"recording", timeline_.enabled()},
                           {"events", std::move(events)},
                           {"next_after", next_after != 0 ? json(next_after) : json(nullptr)}}));
}

void Daemon::TimelineRetention() {
  const Config::Timeline& keep = options_.config.timeline;
  const int64_t before_us =
      keep.keep.count() == 0 ? 0 : UnixMicros(WallNow()) - keep.keep.count() * 1000;
  const int64_t newest =
      keep.max_events == 0 ? std::numeric_limits<int64_t>::max() : keep.max_events;
  TimelineTick(Now(), /*force=*/true);
  Result<int64_t> removed = store_->DeleteTimeline(before_us, newest);
  if (!removed.ok()) {
    spdlog::warn("retention: {}", removed.status().message());
  } else if (removed.value() > 0) {
    spdlog::info("retention: removed {} timeline event(s) (older than {} s or past the newest {})",
                 removed.value(), keep.keep.count() / 1000, keep.max_events);
  }
}

}  // namespace gshare
