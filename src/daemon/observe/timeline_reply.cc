#include "daemon/observe/timeline_reply.h"

#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/timeline_request.h"
#include "policy/access.h"

namespace gshare {

using json = nlohmann::json;

std::string TimelineReply(JobStore& store, TimelineRecorder& recorder, const json& req,
                          uint32_t uid, bool admin) {
  Result<TimelineRequest> parsed = TimelineRequest::Parse(req);
  if (!parsed.ok()) return ErrorReply(parsed.status().message());
  const TimelineRequest& r = parsed.value();
  // A user sees their own jobs' events; every user's only an admin (policy/access.h).
  if (r.all_users && !admin) {
    return ErrorReply(std::string(kPermissionDenied) +
                      "only an admin may see every user's timeline");
  }
  recorder.Tick(store, /*force=*/true);  // what happened until now is in the answer
  TimelineFilter filter;
  filter.since_us = r.since_us;
  filter.until_us = r.until_us;
  if (!r.all_users) filter.uid = uid;
  filter.jobs = r.jobs;
  filter.after_id = r.after_id;
  filter.max_rows = kTimelinePage;
  json events = json::array();
  int64_t next_after = 0;
  Status st = store.ForEachTimelineEvent(
      filter, [&events](const TimelineEvent& e) { events.push_back(EventToJson(e)); }, &next_after);
  if (!st.ok()) return ErrorReply(st.message());
  return ToJsonText(json{{"ok", true},
                         {"recording", recorder.enabled()},
                         {"events", std::move(events)},
                         {"next_after", next_after != 0 ? json(next_after) : json(nullptr)}});
}

}  // namespace gshare
