// The daemon's JSON requests: dispatch (the jobs' own: JobRequests, JobControl), status,
// scheduler on/off, shutdown. Every request is validated (src/ipc/requests.h); a malformed one gets
// an error reply and the connection stays usable.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/config.h"
#include "base/gpu_inventory.h"
#include "daemon/daemon.h"
#include "ipc/replies.h"
#include "ipc/job_json.h"
#include "ipc/requests.h"
#include "daemon/clean_request_reply.h"
#include "daemon/job_list_reply.h"
#include "daemon/timeline_reply.h"
#include "ipc/job_list.h"

namespace gshare {
using json = nlohmann::json;

void Daemon::OnJsonFrame(Connection& c, const Frame& f) {
  json req = json::parse(f.payload, nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded() || !req.is_object()) {
    return Reply(c, ErrorReply("request is not a JSON object"));
  }
  // A handler reads its fields through requests.h; a json::exception that still slips out
  // (a bug) costs this request only: the peer gets an error and may go on.
  try {
    switch (f.type) {
      case proto::MsgType::kRunRegister: return requests_->OnRunRegister(c, req);
      case proto::MsgType::kSubmit: return requests_->OnSubmit(c, req);
      case proto::MsgType::kRunAttach: return requests_->OnRunAttach(c, req);
      case proto::MsgType::kRunStarted: return requests_->OnRunStarted(c, req);
      case proto::MsgType::kRunEnded: return requests_->OnRunEnded(c, req);
      case proto::MsgType::kSlurmStep: return slurm_->OnStep(c, req);
      case proto::MsgType::kSlurmJob: return slurm_->OnJob(c, req);
      case proto::MsgType::kJobControl: {
        c.kind = Connection::Kind::kCli;
        Result<JobControlRequest> parsed = JobControlRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, control_->Handle(c, parsed.value()).ToJsonText());
      }
      case proto::MsgType::kClean:
        c.kind = Connection::Kind::kCli;
        return Reply(c, CleanRequestReply(
                            *retention_, req, WallNow(),
                            access_.IsAdmin(c) ? std::nullopt : std::optional<uint32_t>(c.uid)));
      case proto::MsgType::kListJobs: {
        c.kind = Connection::Kind::kCli;
        Result<ListJobsRequest> parsed = ListJobsRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, ListJobsReply(*store_, parsed.value(),
                                      [&](json* job) { access_.HideDetails(c, job); }));
      }
      case proto::MsgType::kTimeline:
        c.kind = Connection::Kind::kCli;
        return Reply(c, TimelineReply(*store_, timeline_, req, c.uid, access_.IsAdmin(c)));
      case proto::MsgType::kStatusRequest: {
        c.kind = Connection::Kind::kCli;
        Result<StatusRequest> parsed = StatusRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, ToJsonText(status_->Document(&c, parsed.value())));
      }
      case proto::MsgType::kSchedulerSet: {
        c.kind = Connection::Kind::kCli;
        Result<SchedulerSetRequest> parsed = SchedulerSetRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        if (!access_.IsAdmin(c)) {
          return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                                     "only an admin may switch the scheduler"));
        }
        const bool enabled = parsed->enabled;
        Apply(arbiter_.SetEnabled(enabled, Now()));
        spdlog::info("scheduler {}", enabled ? "on" : "off");
        return Reply(c, SchedulerReply{enabled}.ToJsonText());
      }
      case proto::MsgType::kQueueSet: {
        c.kind = Connection::Kind::kCli;
        Result<QueueSetRequest> parsed = QueueSetRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        if (!access_.IsAdmin(c)) {
          return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                                     "only an admin may pause or resume the queue"));
        }
        Status st = queue_->SetPaused(parsed->paused);
        if (!st.ok()) return Reply(c, ErrorReply(st.message()));
        return Reply(c, ToJsonText(json{{"ok", true}, {"paused", queue_->paused()}}));
      }
      case proto::MsgType::kShutdown:
        c.kind = Connection::Kind::kCli;
        if (!access_.IsAdmin(c)) {
          return Reply(c, ErrorReply(std::string(kPermissionDenied) + "only an admin may stop it"));
        }
        Reply(c, OkReply());
        stopping_ = true;
        return;
      default: return Drop(c.id, "unexpected message");
    }
  } catch (const json::exception& e) {
    spdlog::error("request type {} of pid {}: {}", static_cast<int>(f.type), c.pid, e.what());
    Reply(c, ErrorReply(std::string("bad request: ") + e.what()));
  }
}

}  // namespace gshare
