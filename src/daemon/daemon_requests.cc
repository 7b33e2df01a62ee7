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
  DaemonParts& p = *parts_;
  // A handler reads its fields through requests.h; a json::exception that still slips out
  // (a bug) costs this request only: the peer gets an error and may go on.
  try {
    switch (f.type) {
      case proto::MsgType::kRunRegister: return p.requests.OnRunRegister(c, req);
      case proto::MsgType::kSubmit: return p.requests.OnSubmit(c, req);
      case proto::MsgType::kRunAttach: return p.requests.OnRunAttach(c, req);
      case proto::MsgType::kRunStarted: return p.requests.OnRunStarted(c, req);
      case proto::MsgType::kRunEnded: return p.requests.OnRunEnded(c, req);
      case proto::MsgType::kSlurmStep: return p.slurm.OnStep(c, req);
      case proto::MsgType::kSlurmJob: return p.slurm.OnJob(c, req);
      case proto::MsgType::kJobControl: {
        c.kind = Connection::Kind::kCli;
        Result<JobControlRequest> parsed = JobControlRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, p.control.Handle(c, parsed.value()).ToJsonText());
      }
      case proto::MsgType::kClean:
        c.kind = Connection::Kind::kCli;
        return Reply(c, CleanRequestReply(
                            p.retention, req, WallNow(),
                            p.access.IsAdmin(c) ? std::nullopt : std::optional<uint32_t>(c.uid)));
      case proto::MsgType::kListJobs: {
        c.kind = Connection::Kind::kCli;
        Result<ListJobsRequest> parsed = ListJobsRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, ListJobsReply(*p.store, parsed.value(),
                                      [&](json* job) { p.access.HideDetails(c, job); }));
      }
      case proto::MsgType::kTimeline:
        c.kind = Connection::Kind::kCli;
        return Reply(c, TimelineReply(*p.store, p.timeline, req, c.uid, p.access.IsAdmin(c)));
      case proto::MsgType::kStatusRequest: {
        c.kind = Connection::Kind::kCli;
        Result<StatusRequest> parsed = StatusRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, ToJsonText(p.status.Document(&c, parsed.value())));
      }
      case proto::MsgType::kSchedulerSet: {
        c.kind = Connection::Kind::kCli;
        Result<SchedulerSetRequest> parsed = SchedulerSetRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        if (!p.access.IsAdmin(c)) {
          return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                                     "only an admin may switch the scheduler"));
        }
        const bool enabled = parsed->enabled;
        p.outbox.Apply(p.arbiter.SetEnabled(enabled, Now()));
        spdlog::info("scheduler {}", enabled ? "on" : "off");
        return Reply(c, SchedulerReply{enabled}.ToJsonText());
      }
      case proto::MsgType::kQueueSet: {
        c.kind = Connection::Kind::kCli;
        Result<QueueSetRequest> parsed = QueueSetRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        if (!p.access.IsAdmin(c)) {
          return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                                     "only an admin may pause or resume the queue"));
        }
        Status st = p.queue.SetPaused(parsed->paused);
        if (!st.ok()) return Reply(c, ErrorReply(st.message()));
        return Reply(c, ToJsonText(json{{"ok", true}, {"paused", p.queue.paused()}}));
      }
      case proto::MsgType::kShutdown:
        c.kind = Connection::Kind::kCli;
        if (!p.access.IsAdmin(c)) {
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
