// The GPU timeline (`gshare timeline`): the kTimeline request that reads back the events the
// TimelineRecorder wrote. The daemon's thread.
#include "daemon/daemon.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/timeline_request.h"

namespace gshare {

using json = nlohmann::json;

namespace {

// Events per kTimeline reply: ~200 bytes each in JSON, far below the client's frame limit.
constexpr int kTimelinePage = 20'000;

}  // namespace

void Daemon::OnTimeline(Connection& c, const json& req) {
  Result<TimelineRequest> parsed = TimelineRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const TimelineRequest& r = parsed.value();
  // A user sees their own jobs' events; every user's only an admin (policy/access.h).
  if (r.all_users && !access_.IsAdmin(c)) {
    return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                               "only an admin may see every user's timeline"));
  }
  timeline_.Tick(*store_, /*force=*/true);  // what happened until now is in the answer
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

}  // namespace gshare
