// Reading the GPU timeline through the daemon (protocol.h kTimeline): the request as a typed
// struct (ToJson on the client's side, Parse on the daemon's, as requests.h) and an event's
// JSON both ways. Any thread; Parse and EventFromJson never throw.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "base/status.h"
#include "store/timeline_event.h"

namespace gshare {

// kTimeline: {"since_us", "until_us", "all_users", "jobs": [ids], "after_id"}. The daemon
// answers with one page: {"ok": true, "events": [EventToJson...], "next_after": the after_id
// of the next page, or null after the last}. Without all_users only the requester's jobs'
// events come (and the daemon's own); with it, every user's, for admins only.
struct TimelineRequest {
  int64_t since_us = 0;
  int64_t until_us = 0;
  bool all_users = false;
  std::set<int64_t> jobs;  // empty: every job
  int64_t after_id = 0;
  nlohmann::json ToJson() const;
  static Result<TimelineRequest> Parse(const nlohmann::json& j);
};

// {"id", "time_us", "kind", "gpu", "job", "name", "uid", "pid", "bytes", "ms", "detail"}.
nlohmann::json EventToJson(const TimelineEvent& e);
// An event as EventToJson wrote it; an error names a missing or mistyped field or an unknown
// kind.
Result<TimelineEvent> EventFromJson(const nlohmann::json& j);

}  // namespace gshare
