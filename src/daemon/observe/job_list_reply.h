// The daemon's answer to kListJobs (ipc/job_list.h): jobs read from its database for a client
// that cannot open it (a user of the system daemon). The daemon's thread only.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ipc/job_list.h"
#include "store/job_store.h"

namespace gshare {

// The reply text: {"ok": true, "jobs": [...]} in the request's order, a job's row alone for
// {"job_id"} (none when it does not exist); rows that cannot be read are left out (logged).
// A store error is an error reply.
// `hide` removes from each job's JSON what the requester may not see (Daemon::HideDetails).
std::string ListJobsReply(JobStore& store, const ListJobsRequest& request,
                          const std::function<void(nlohmann::json*)>& hide);

}  // namespace gshare
