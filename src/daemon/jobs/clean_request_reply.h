// The daemon's answer to kClean (`gshare clean [--older-than D]`, docs/cli.md "Retention"): the
// ended jobs removed through JobRetention. The daemon's thread only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon/jobs/job_retention.h"

namespace gshare {

// The reply text to request `req` ({"older_than_ms"?}) at `now` (unix seconds): {"ok",
// "removed": [ids]} of the jobs that ended at least older_than_ms ago, only `owner`'s when
// given (an admin cleans every user's: nullopt). A malformed request or a store error is an
// error reply.
std::string CleanRequestReply(JobRetention& retention, const nlohmann::json& req, double now,
                              std::optional<uint32_t> owner);

}  // namespace gshare
