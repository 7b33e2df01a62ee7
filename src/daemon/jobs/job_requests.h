// JobRequests: the requests that make jobs and report on them (docs/cli.md): `gshare run`'s
// registration (kRunRegister: queued, or started at once with its GPUs), `gshare submit`
// (kSubmit: one job, or an array's tasks; a retried submission key answers the job it made),
// and a submitted job's supervisor attaching (kRunAttach: what to run, as whom it was
// submitted), starting (kRunStarted) and ending (kRunEnded). Every request is read as hostile
// (docs/design.md §7): a bad one gets an error reply, a protocol breach drops its connection.
// What follows from them is JobLifecycle's. The daemon's event loop.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "daemon/jobs/job_lifecycle.h"
#include "daemon/state/access_guard.h"
#include "daemon/state/connection.h"
#include "daemon/state/request_transport.h"
#include "store/job_store.h"

namespace gshare {

class JobRequests {
 public:
  // It works on `lifecycle`'s parts (JobLifecycle::parts); both outlive it.
  JobRequests(JobLifecycle& lifecycle, AccessGuard& access, std::function<int()> gpu_count,
              RequestTransport transport)
      : lifecycle_(lifecycle),
        p_(lifecycle.parts()),
        access_(access),
        gpu_count_(std::move(gpu_count)),
        reply_(std::move(transport.reply)),
        drop_(std::move(transport.drop)) {}

  // Each answers connection `c`'s request `req` (a JSON object).
  void OnRunRegister(Connection& c, const nlohmann::json& req);
  void OnSubmit(Connection& c, const nlohmann::json& req);
  void OnRunAttach(Connection& c, const nlohmann::json& req);
  void OnRunStarted(Connection& c, const nlohmann::json& req);
  void OnRunEnded(Connection& c, const nlohmann::json& req);

  // Gives a new job its token (base/job_token.h); error when no randomness is to be had.
  static Status AssignToken(JobRecord* r);

 private:
  // Queues one task of `r` per task id of `spec` (a submission's "array", base/array_spec.h)
  // and replies with the array's job id.
  void SubmitArray(Connection& c, JobRecord r, const JobPayload& payload, const std::string& spec);

  JobLifecycle& lifecycle_;
  const JobLifecycle::Parts& p_;
  AccessGuard& access_;
  std::function<int()> gpu_count_;
  std::function<void(Connection&, const std::string&)> reply_;
  std::function<void(ConnId, const std::string&)> drop_;
};

}  // namespace gshare
