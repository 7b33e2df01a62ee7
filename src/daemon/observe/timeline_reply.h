// The daemon's answer to kTimeline (`gshare timeline`, ipc/timeline_request.h): the recorded
// events the requester may see, a page at a time. The daemon's thread only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/state/timeline_recorder.h"
#include "store/job_store.h"

namespace gshare {

// Events per reply: ~200 bytes each in JSON, far below the client's frame limit.
inline constexpr int kTimelinePage = 20'000;

// The reply text to request `req` of user `uid`: {"ok", "recording", "events", "next_after"}.
// A user sees their own jobs' events; every user's only an `admin` (policy/access.h). The
// recorder's buffered events are written first, so the answer holds what happened until now.
// A malformed request, a refusal or a store error is an error reply.
std::string TimelineReply(JobStore& store, TimelineRecorder& recorder, const nlohmann::json& req,
                          uint32_t uid, bool admin);

}  // namespace gshare
