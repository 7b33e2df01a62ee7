// The daemon's JSON requests: dispatch (the queue's own are in daemon_queue.cc), status,
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

namespace gshare {
namespace {

using json = nlohmann::json;

// A live job's lease as `status --json` names it.
const char* LeaseText(const Arbiter::JobUsage& u) {
  return u.stopped ? "stopped" : u.holding ? "holding" : u.waiting ? "waiting" : "idle";
}

}  // namespace

void Daemon::OnJsonFrame(Connection& c, const Frame& f) {
  json req = json::parse(f.payload, nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded() || !req.is_object()) {
    return Reply(c, ErrorReply("request is not a JSON object"));
  }
  // A handler reads its fields through requests.h; a json::exception that still slips out
  // (a bug) costs this request only: the peer gets an error and may go on.
  try {
    switch (f.type) {
      case proto::MsgType::kRunRegister: return OnRunRegister(c, req);
      case proto::MsgType::kSubmit: return OnSubmit(c, req);
      case proto::MsgType::kRunAttach: return OnRunAttach(c, req);
      case proto::MsgType::kRunStarted: return OnRunStarted(c, req);
      case proto::MsgType::kRunEnded: return OnRunEnded(c, req);
      case proto::MsgType::kSlurmStep: return OnSlurmStep(c, req);
      case proto::MsgType::kSlurmJob: return OnSlurmJob(c, req);
      case proto::MsgType::kJobControl:
        c.kind = Connection::Kind::kCli;
        return OnJobControl(c, req);
      case proto::MsgType::kClean: c.kind = Connection::Kind::kCli; return OnClean(c, req);
      case proto::MsgType::kListJobs: c.kind = Connection::Kind::kCli; return OnListJobs(c, req);
      case proto::MsgType::kTimeline: c.kind = Connection::Kind::kCli; return OnTimeline(c, req);
      case proto::MsgType::kStatusRequest: {
        c.kind = Connection::Kind::kCli;
        Result<StatusRequest> parsed = StatusRequest::Parse(req);
        if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
        return Reply(c, StatusJson(c, parsed.value()));
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
        Status st = SetQueuePaused(parsed->paused);
        if (!st.ok()) return Reply(c, ErrorReply(st.message()));
        return Reply(c, ToJsonText(json{{"ok", true}, {"paused", queue_paused_}}));
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

std::string Daemon::StatusJson(Connection& c, const StatusRequest& request) {
  return ToJsonText(StatusDocument(&c, request));
}

json Daemon::StatusDocument(Connection* viewer, const StatusRequest& request) {
  // The metrics' view (no viewer) writes no field that HideDetails empties.
  const auto hide = [this, viewer](json* j) {
    if (viewer != nullptr) access_.HideDetails(*viewer, j);
  };
  auto now = Now();
  json daemon{{"pid", getpid()},
              {"version", GSHARE_VERSION},
              {"socket", options_.socket_path},
              {"mode", options_.system ? "system" : "user"},
              {"database", options_.database_path},
              {"scheduler", arbiter_.enabled() ? "on" : "off"},
              {"queue", queue_paused_ ? "paused" : "running"},
              {"start_time", start_time_},
              {"job_counts", JobCounts()},
              {"quantum_ms", options_.config.scheduler.quantum.count()},
              {"idle_release_ms", options_.config.scheduler.idle_release.count()},
              {"drop_grace_ms", options_.config.scheduler.drop_grace.count()},
              // The node's host memory for swapping ([memory] host_budget, _per_user; 0: no
              // bound) and what swapped-out data and staged copies hold of it now.
              {"host_memory",
               {{"budget", ledger_.options().host_budget},
                {"budget_per_user", ledger_.options().host_budget_per_user},
                {"swapped", ledger_.SwappedBytes()},
                {"staged", ledger_.StagedBytes()}}}};
  // Each config file the daemon read at start, checked now (one stat each): a changed file
  // is not applied until a restart.
  json config_files = json::array();
  for (const ConfigStamp& stamp : options_.config_files) {
    config_files.push_back(
        {{"path", stamp.path()}, {"loaded", stamp.present()}, {"changed", stamp.Changed()}});
  }
  daemon["config_files"] = std::move(config_files);
  if (request.brief) {
    json leases = json::array();
    for (const auto& [id, job] : table_.jobs) {
      leases.push_back({{"id", id}, {"lease", LeaseText(arbiter_.Usage(id, now))}});
    }
    return json{{"ok", true},
                {"schema_version", kJsonSchemaVersion},
                {"daemon", std::move(daemon)},
                {"jobs", std::move(leases)}};
  }
  json gpus = json::array();
  for (const Arbiter::GpuView& v : arbiter_.Gpus(now)) {
    json g{{"uuid", v.gpu},
           {"mode", !arbiter_.enabled() ? "off"
                    : v.shared          ? "shared"
                                        : "exclusive"},
           {"holding", v.holding},
           {"residents", v.residents},
           {"holder", v.holder ? json(*v.holder) : json(nullptr)},
           {"held_seconds", v.held_seconds},
           {"waiters", v.waiters},
           {"dropping", v.dropping},
           {"drains", v.drains},
           {"last_drain_ms", v.last_drain_ms},
           {"max_drain_ms", v.max_drain_ms},
           {"stopped", v.stopped},
           {"lease_seconds_total", v.lease_seconds_total},
           {"wait_seconds_total", v.wait_seconds_total},
           {"quantum_ms", options_.config.scheduler.quantum.count()}};
    auto info = table_.gpus.find(v.gpu);
    g["ordinal"] = info != table_.gpus.end() ? json(info->second.ordinal) : json(nullptr);
    // NVML's index (nvidia-smi's numbering): each job may number its GPUs from 0.
    const std::string index = GpuIndexOf(v.gpu);
    g["index"] = index != v.gpu ? json(std::stoi(index)) : json(nullptr);
    memory_.AddGpuJson(v.gpu, &g);
    const MemoryLedger::SwapCounters swaps = ledger_.SwapsOn(v.gpu);
    g["used_bytes"] = ledger_.Used(v.gpu);
    g["swaps_out_total"] = swaps.swaps_out;
    g["swaps_in_total"] = swaps.swaps_in;
    g["bytes_out_total"] = swaps.bytes_out;
    g["bytes_in_total"] = swaps.bytes_in;
    stagger_.AddJson(v.gpu, &g);
    g["mode_switches"] = sharing_.Switches(v.gpu);
    // Priority lanes: who is busy, who is held back behind a higher priority now.
    json lanes = lanes_.Json(v.gpu);
    for (json& seat : lanes) {
      const Connection* sc = table_.Live(seat["conn"].get<ConnId>());
      seat["job"] = sc != nullptr ? json(sc->job) : json(nullptr);
      seat["pid"] = sc != nullptr ? json(sc->pid) : json(nullptr);
    }
    g["lanes"] = std::move(lanes);
    gpus.push_back(std::move(g));
  }
  json jobs = json::array();
  std::set<int64_t> listed;
  for (const auto& [id, job] : table_.jobs) {
    json j = JobToJson(job->record);
    Arbiter::JobUsage u = arbiter_.Usage(id, now);
    j["lease_seconds"] = u.lease_seconds;
    j["wait_seconds"] = u.wait_seconds;
    uint64_t held_ms = 0;
    for (const auto& [key, ms] : job->held_ms) held_ms += ms;
    j["held_back_seconds"] = static_cast<double>(held_ms) / 1000.0;
    j["lease"] = LeaseText(u);
    std::optional<Millis> idle = staging_.IdleFor(id);
    j["idle_seconds"] = idle ? json(static_cast<double>(idle->count()) / 1000.0) : json(nullptr);
    json mem = JobMemoryJson(id);
    j["allocated_bytes"] = mem["allocated"];
    j["memory"] = std::move(mem);
    j["peak_bytes"] = job->peak_bytes;
    j["moves"] = job->moves;
    JobRecord usage;  // swaps as the job's end will record them (checkpoints among them)
    RecordUsage(id, *job, &usage);
    j["swaps_out"] = usage.swaps_out;
    j["swaps_in"] = usage.swaps_in;
    hide(&j);
    jobs.push_back(std::move(j));
    listed.insert(id);
  }
  ListFilter recent;
  recent.limit = 20;
  auto rows = store_->List(recent);
  if (rows.ok()) {
    for (const JobRecord& r : rows.value()) {
      if (!listed.insert(r.id).second) continue;
      jobs.push_back(JobToJson(r));
      hide(&jobs.back());
    }
  }
  // `gshare status ID` of an older job.
  if (request.job_id) {
    const int64_t id = *request.job_id;
    auto row =
        listed.count(id) == 0 ? store_->Get(id) : Result<std::optional<JobRecord>>(std::nullopt);
    if (row.ok() && row.value()) {
      jobs.push_back(JobToJson(*row.value()));
      hide(&jobs.back());
    }
  }
  return json{{"ok", true},       {"schema_version", kJsonSchemaVersion},
              {"daemon", daemon}, {"gpus", gpus},
              {"jobs", jobs},     {"users", UsersJson(now)}};
}

}  // namespace gshare
