// The table and its handlers. A handler reads its fields through ipc/requests.h; a
// json::exception that still slips out (a bug) costs its request only: the peer gets an error
// and may go on.
#include "daemon/server/request_router.h"

#include <spdlog/spdlog.h>

#include <string>

#include "daemon/jobs/clean_request_reply.h"
#include "daemon/observe/job_list_reply.h"
#include "daemon/observe/timeline_reply.h"
#include "daemon/server/daemon_parts.h"
#include "daemon/server/daemon_ping.h"
#include "ipc/job_json.h"
#include "ipc/job_list.h"
#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {
namespace {

using json = nlohmann::json;

void ReplyTo(RequestRouter& r, Connection& c, const std::string& text) {
  r.parts().transport.reply(c, text);
}

void RouteShim(RequestRouter& r, Connection& c, const Frame& f) { r.parts().shims.OnFrame(c, f); }

void RoutePing(RequestRouter& r, Connection& c, const Frame& f) {
  r.parts().links.send(c.id, PongFor(f));  // at once: the shim's liveness check of the daemon
}

void RouteMemoryQuery(RequestRouter& r, Connection& c, const Frame& f) {
  r.parts().shims.OnMemoryQuery(c, f);
}

void RouteMpsJoinQuery(RequestRouter& r, Connection& c, const Frame& f) {
  r.parts().shims.OnMpsJoinQuery(c, f);
}

void RouteHostPoolQuery(RequestRouter& r, Connection& c, const Frame& f) {
  r.parts().shims.OnHostPoolQuery(c, f);
}

void RouteRunRegister(RequestRouter& r, Connection& c, const json& q) {
  r.parts().requests.OnRunRegister(c, q);
}
void RouteSubmit(RequestRouter& r, Connection& c, const json& q) {
  r.parts().requests.OnSubmit(c, q);
}
void RouteRunAttach(RequestRouter& r, Connection& c, const json& q) {
  r.parts().requests.OnRunAttach(c, q);
}
void RouteRunStarted(RequestRouter& r, Connection& c, const json& q) {
  r.parts().requests.OnRunStarted(c, q);
}
void RouteRunEnded(RequestRouter& r, Connection& c, const json& q) {
  r.parts().requests.OnRunEnded(c, q);
}
void RouteSlurmStep(RequestRouter& r, Connection& c, const json& q) {
  r.parts().slurm.OnStep(c, q);
}
void RouteSlurmJob(RequestRouter& r, Connection& c, const json& q) { r.parts().slurm.OnJob(c, q); }

void RouteJobControl(RequestRouter& r, Connection& c, const json& q) {
  Result<JobControlRequest> parsed = JobControlRequest::Parse(q);
  if (!parsed.ok()) return ReplyTo(r, c, ErrorReply(parsed.status().message()));
  ReplyTo(r, c, r.parts().control.Handle(c, parsed.value()).ToJsonText());
}

void RouteClean(RequestRouter& r, Connection& c, const json& q) {
  DaemonParts& p = r.parts();
  ReplyTo(r, c,
          CleanRequestReply(p.retention, q, p.clock.WallNow(),
                            p.access.IsAdmin(c) ? std::nullopt : std::optional<uint32_t>(c.uid)));
}

void RouteListJobs(RequestRouter& r, Connection& c, const json& q) {
  Result<ListJobsRequest> parsed = ListJobsRequest::Parse(q);
  if (!parsed.ok()) return ReplyTo(r, c, ErrorReply(parsed.status().message()));
  DaemonParts& p = r.parts();
  ReplyTo(r, c, ListJobsReply(*p.store, parsed.value(), [&](json* job) {
            p.access.HideDetails(c, job);
          }));
}

void RouteTimeline(RequestRouter& r, Connection& c, const json& q) {
  DaemonParts& p = r.parts();
  ReplyTo(r, c, TimelineReply(*p.store, p.timeline, q, c.uid, p.access.IsAdmin(c)));
}

void RouteStatus(RequestRouter& r, Connection& c, const json& q) {
  Result<StatusRequest> parsed = StatusRequest::Parse(q);
  if (!parsed.ok()) return ReplyTo(r, c, ErrorReply(parsed.status().message()));
  ReplyTo(r, c, ToJsonText(r.parts().status.Document(&c, parsed.value())));
}

void RouteSchedulerSet(RequestRouter& r, Connection& c, const json& q) {
  Result<SchedulerSetRequest> parsed = SchedulerSetRequest::Parse(q);
  if (!parsed.ok()) return ReplyTo(r, c, ErrorReply(parsed.status().message()));
  DaemonParts& p = r.parts();
  const bool enabled = parsed->enabled;
  p.outbox.Apply(p.arbiter.SetEnabled(enabled, p.clock.Now()));
  spdlog::info("scheduler {}", enabled ? "on" : "off");
  ReplyTo(r, c, SchedulerReply{enabled}.ToJsonText());
}

void RouteQueueSet(RequestRouter& r, Connection& c, const json& q) {
  Result<QueueSetRequest> parsed = QueueSetRequest::Parse(q);
  if (!parsed.ok()) return ReplyTo(r, c, ErrorReply(parsed.status().message()));
  DaemonParts& p = r.parts();
  if (parsed->paused) {
    if (Status st = p.queue.SetPaused(*parsed->paused); !st.ok()) {
      return ReplyTo(r, c, ErrorReply(st.message()));
    }
  }
  if (parsed->max_running) {
    const std::optional<int> n =
        *parsed->max_running == 0 ? std::nullopt : std::optional<int>(*parsed->max_running);
    if (Status st = p.queue.SetParallel(n); !st.ok()) {
      return ReplyTo(r, c, ErrorReply(st.message()));
    }
  }
  ReplyTo(r, c,
          ToJsonText(json{{"ok", true},
                          {"paused", p.queue.paused()},
                          {"max_running", p.lifecycle.MaxRunning()},
                          {"max_running_from", p.queue.MaxRunningFrom()}}));
}

void RouteShutdown(RequestRouter& r, Connection& c, const json&) {
  ReplyTo(r, c, OkReply());
  r.Stop();
}

constexpr uint8_t kCliSenders = kFromFresh | kFromCli;

// In protocol order. `senders` of a shim's lease messages: its own connection after its hello;
// a runner's: the connection that registered or attached it.
constexpr RequestRule kRules[] = {
    {proto::MsgType::kHello, "hello", kFromFresh, Authority::kSelf, nullptr, RouteShim, nullptr},
    {proto::MsgType::kLeaseRequest, "lease request", kFromShim, Authority::kSelf, nullptr,
     RouteShim, nullptr},
    {proto::MsgType::kLeaseReleased, "lease release", kFromShim, Authority::kSelf, nullptr,
     RouteShim, nullptr},
    {proto::MsgType::kMemReport, "memory report", kFromShim, Authority::kSelf, nullptr, RouteShim,
     nullptr},
    {proto::MsgType::kGapReport, "gap report", kFromShim, Authority::kSelf, nullptr, RouteShim,
     nullptr},
    {proto::MsgType::kPing, "ping", kFromFresh | kFromShim | kFromRunner | kFromCli,
     Authority::kAnyone, nullptr, RoutePing, nullptr},
    {proto::MsgType::kMemoryQuery, "memory query", kFromFresh, Authority::kJobRunner, nullptr,
     RouteMemoryQuery, nullptr},
    {proto::MsgType::kHostPoolQuery, "host pool query", kFromFresh, Authority::kJobRunner, nullptr,
     RouteHostPoolQuery, nullptr},
    {proto::MsgType::kMpsJoinQuery, "MPS join query", kFromFresh, Authority::kJobRunner, nullptr,
     RouteMpsJoinQuery, nullptr},
    {proto::MsgType::kRunRegister, "run registration", kFromFresh, Authority::kSelf, nullptr,
     nullptr, RouteRunRegister},
    {proto::MsgType::kRunStarted, "run start", kFromRunner, Authority::kJobRunner, nullptr, nullptr,
     RouteRunStarted},
    {proto::MsgType::kRunEnded, "run end", kFromFresh | kFromRunner, Authority::kJobRunner, nullptr,
     nullptr, RouteRunEnded},
    {proto::MsgType::kStatusRequest, "status", kCliSenders, Authority::kAnyone, nullptr, nullptr,
     RouteStatus},
    {proto::MsgType::kSchedulerSet, "scheduler switch", kCliSenders, Authority::kAdmin,
     "switch the scheduler", nullptr, RouteSchedulerSet},
    {proto::MsgType::kShutdown, "shutdown", kCliSenders, Authority::kAdmin, "stop it", nullptr,
     RouteShutdown},
    {proto::MsgType::kSubmit, "submission", kCliSenders, Authority::kSelf, nullptr, nullptr,
     RouteSubmit},
    {proto::MsgType::kJobControl, "job control", kCliSenders, Authority::kJobOwner, nullptr,
     nullptr, RouteJobControl},
    {proto::MsgType::kClean, "clean", kCliSenders, Authority::kJobOwner, nullptr, nullptr,
     RouteClean},
    {proto::MsgType::kRunAttach, "supervisor attach", kFromFresh, Authority::kJobRunner, nullptr,
     nullptr, RouteRunAttach},
    {proto::MsgType::kListJobs, "job list", kCliSenders, Authority::kAnyone, nullptr, nullptr,
     RouteListJobs},
    {proto::MsgType::kQueueSet, "queue setting", kCliSenders, Authority::kAdmin,
     "pause, resume or resize the queue", nullptr, RouteQueueSet},
    {proto::MsgType::kTimeline, "timeline", kCliSenders, Authority::kAnyone, nullptr, nullptr,
     RouteTimeline},
    {proto::MsgType::kSlurmStep, "Slurm step", kCliSenders, Authority::kSelf, nullptr, nullptr,
     RouteSlurmStep},
    {proto::MsgType::kSlurmJob, "Slurm job", kCliSenders, Authority::kRoot,
     "tell of Slurm jobs (its Prolog and Epilog)", nullptr, RouteSlurmJob},
};

const char* KindName(Connection::Kind kind) {
  switch (kind) {
    case Connection::Kind::kUnknown: return "fresh";
    case Connection::Kind::kShim: return "shim";
    case Connection::Kind::kRunner: return "runner";
    case Connection::Kind::kCli: return "CLI";
  }
  return "?";
}

}  // namespace

std::span<const RequestRule> RequestRouter::Rules() { return kRules; }

const RequestRule* RequestRouter::RuleOf(proto::MsgType type) {
  for (const RequestRule& rule : kRules) {
    if (rule.type == type) return &rule;
  }
  return nullptr;
}

Sender RequestRouter::SenderOf(Connection::Kind kind) {
  switch (kind) {
    case Connection::Kind::kUnknown: return kFromFresh;
    case Connection::Kind::kShim: return kFromShim;
    case Connection::Kind::kRunner: return kFromRunner;
    case Connection::Kind::kCli: return kFromCli;
  }
  return kFromFresh;
}

void RequestRouter::Dispatch(Connection& c, const Frame& f) {
  const RequestRule* rule = RuleOf(f.type);
  if (rule == nullptr) {
    return parts_.links.drop(c.id, "a message type the daemon does not take (" +
                                       std::to_string(static_cast<int>(f.type)) + ")");
  }
  // A connection that holds a lease or a job must not become another kind: what it holds would
  // not be undone when it closes.
  if ((rule->senders & SenderOf(c.kind)) == 0) {
    return parts_.links.drop(
        c.id, std::string("a ") + rule->name + " on a " + KindName(c.kind) + " connection");
  }
  if (rule->binary != nullptr) return rule->binary(*this, c, f);
  json req = json::parse(f.payload, nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded() || !req.is_object()) {
    return ReplyTo(*this, c, ErrorReply("request is not a JSON object"));
  }
  if (rule->senders == kCliSenders) c.kind = Connection::Kind::kCli;
  if ((rule->authority == Authority::kAdmin && !parts_.access.IsAdmin(c)) ||
      (rule->authority == Authority::kRoot && c.uid != 0)) {
    spdlog::warn("uid {} may not {}: refused", c.uid, rule->denied);
    return ReplyTo(*this, c,
                   ErrorReply(std::string(kPermissionDenied) + "only " +
                              (rule->authority == Authority::kRoot ? "root" : "an admin") +
                              " may " + rule->denied));
  }
  try {
    rule->json(*this, c, req);
  } catch (const json::exception& e) {
    spdlog::error("{} of pid {}: {}", rule->name, c.pid, e.what());
    ReplyTo(*this, c, ErrorReply(std::string("bad request: ") + e.what()));
  }
}

}  // namespace gshare
