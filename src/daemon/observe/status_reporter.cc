#include "daemon/observe/status_reporter.h"

#include <unistd.h>

#include <set>
#include <utility>

#include "base/gpu_inventory.h"
#include "base/job_state.h"
#include "base/user_name.h"
#include "daemon/jobs/job_usage.h"
#include "ipc/job_json.h"
#include "ipc/status_metrics.h"

namespace gshare {
namespace {

using json = nlohmann::json;

// A live job's lease as `status --json` names it.
const char* LeaseText(const Arbiter::JobUsage& u) {
  return u.stopped ? "stopped" : u.holding ? "holding" : u.waiting ? "waiting" : "idle";
}

}  // namespace

std::string StatusReporter::MetricsText() { return StatusMetrics(Document(nullptr, {})); }

json StatusReporter::JobCounts() const {
  int pending = static_cast<int>(p_.queue.pending().size());
  int running = 0, suspended = 0;
  for (const auto& [id, job] : p_.table.jobs) {
    if (job->ended) continue;
    if (job->record.state == JobState::kRunning) ++running;
    if (job->record.state == JobState::kSuspended) ++suspended;
  }
  return {{"PENDING", pending}, {"RUNNING", running}, {"SUSPENDED", suspended}};
}

json StatusReporter::DaemonJson() const {
  const DaemonOptions& o = p_.options;
  json daemon{{"pid", getpid()},
              {"version", GSHARE_VERSION},
              {"socket", o.socket_path},
              {"mode", o.system ? "system" : "user"},
              {"database", o.database_path},
              {"scheduler", p_.arbiter.enabled() ? "on" : "off"},
              {"queue", p_.queue.paused() ? "paused" : "running"},
              // Jobs per GPU slot: `gshare parallel`'s, else [queue] max_running's.
              {"max_running", p_.queue.MaxRunning(o.config.queue.max_running)},
              {"max_running_from", p_.queue.MaxRunningFrom()},
              {"start_time", start_time_()},
              {"job_counts", JobCounts()},
              {"quantum_ms", o.config.scheduler.quantum.count()},
              {"idle_release_ms", o.config.scheduler.idle_release.count()},
              {"drop_grace_ms", o.config.scheduler.drop_grace.count()},
              // The node's host memory for swapping ([memory] host_budget, _per_user; 0: no
              // bound) and what swapped-out data and staged copies hold of it now.
              {"host_memory",
               {{"budget", p_.ledger.options().host_budget},
                {"budget_per_user", p_.ledger.options().host_budget_per_user},
                {"swapped", p_.ledger.SwappedBytes()},
                {"staged", p_.ledger.StagedBytes()}}}};
  // Each config file the daemon read at start, checked now (one stat each): a changed file
  // is not applied until a restart.
  json config_files = json::array();
  for (const ConfigStamp& stamp : o.config_files) {
    config_files.push_back(
        {{"path", stamp.path()}, {"loaded", stamp.present()}, {"changed", stamp.Changed()}});
  }
  daemon["config_files"] = std::move(config_files);
  return daemon;
}

json StatusReporter::GpuJson(const Arbiter::GpuView& v) const {
  json g{{"uuid", v.gpu},
         {"mode", !p_.arbiter.enabled() ? "off"
                  : v.shared            ? "shared"
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
         {"quantum_ms", p_.options.config.scheduler.quantum.count()}};
  auto info = p_.table.gpus.find(v.gpu);
  g["ordinal"] = info != p_.table.gpus.end() ? json(info->second.ordinal) : json(nullptr);
  // NVML's index (nvidia-smi's numbering): each job may number its GPUs from 0.
  const std::string index = GpuIndexOf(v.gpu);
  g["index"] = index != v.gpu ? json(std::stoi(index)) : json(nullptr);
  p_.memory.AddGpuJson(v.gpu, &g);
  const MemoryLedger::SwapCounters swaps = p_.ledger.SwapsOn(v.gpu);
  g["used_bytes"] = p_.ledger.Used(v.gpu);
  g["swaps_out_total"] = swaps.swaps_out;
  g["swaps_in_total"] = swaps.swaps_in;
  g["bytes_out_total"] = swaps.bytes_out;
  g["bytes_in_total"] = swaps.bytes_in;
  p_.stagger.AddJson(v.gpu, &g);
  g["mode_switches"] = p_.sharing.Switches(v.gpu);
  // Priority lanes: who is busy, who is held back behind a higher priority now.
  json lanes = p_.lanes.Json(v.gpu);
  for (json& seat : lanes) {
    const Connection* sc = p_.table.Live(seat["conn"].get<ConnId>());
    seat["job"] = sc != nullptr ? json(sc->job) : json(nullptr);
    seat["pid"] = sc != nullptr ? json(sc->pid) : json(nullptr);
  }
  g["lanes"] = std::move(lanes);
  return g;
}

json StatusReporter::ActiveJobJson(JobId id, const ActiveJob& job, TimePoint now) const {
  json j = JobToJson(job.record);
  Arbiter::JobUsage u = p_.arbiter.Usage(id, now);
  j["lease_seconds"] = u.lease_seconds;
  j["wait_seconds"] = u.wait_seconds;
  uint64_t held_ms = 0;
  for (const auto& [key, ms] : job.held_ms) held_ms += ms;
  j["held_back_seconds"] = static_cast<double>(held_ms) / 1000.0;
  j["lease"] = LeaseText(u);
  std::optional<Millis> idle = p_.staging.IdleFor(id);
  j["idle_seconds"] = idle ? json(static_cast<double>(idle->count()) / 1000.0) : json(nullptr);
  json mem = JobMemoryJson(p_.ledger, p_.memory, id, &job);
  j["allocated_bytes"] = mem["allocated"];
  j["memory"] = std::move(mem);
  j["peak_bytes"] = job.peak_bytes;
  j["moves"] = job.moves;
  JobRecord usage;  // swaps as the job's end will record them (checkpoints among them)
  RecordUsage(p_.arbiter, p_.ledger, id, job, now, &usage);
  j["swaps_out"] = usage.swaps_out;
  j["swaps_in"] = usage.swaps_in;
  return j;
}

json StatusReporter::Document(Connection* viewer, const StatusRequest& request) {
  // The metrics' view (no viewer) writes no field that HideDetails empties.
  const auto hide = [this, viewer](json* j) {
    if (viewer != nullptr) p_.access.HideDetails(*viewer, j);
  };
  const TimePoint now = p_.clock.Now();
  json daemon = DaemonJson();
  if (p_.mps) daemon["mps"] = p_.mps();
  if (request.brief) {
    json leases = json::array();
    for (const auto& [id, job] : p_.table.jobs) {
      json entry{{"id", id}, {"lease", LeaseText(p_.arbiter.Usage(id, now))}};
      if (const std::string* wait = p_.memory.WaitReason(id)) entry["waiting_for"] = *wait;
      leases.push_back(std::move(entry));
    }
    return json{{"ok", true},
                {"schema_version", kJsonSchemaVersion},
                {"daemon", std::move(daemon)},
                {"jobs", std::move(leases)}};
  }
  json gpus = json::array();
  for (const Arbiter::GpuView& v : p_.arbiter.Gpus(now)) gpus.push_back(GpuJson(v));
  json jobs = json::array();
  std::set<int64_t> listed;
  for (const auto& [id, job] : p_.table.jobs) {
    jobs.push_back(ActiveJobJson(id, *job, now));
    hide(&jobs.back());
    listed.insert(id);
  }
  ListFilter recent;
  recent.limit = kRecentJobs + 1;  // one more: whether older ones were left out
  auto rows = p_.store.List(recent);
  bool more = false;
  if (rows.ok()) {
    more = rows->size() > static_cast<size_t>(kRecentJobs);
    if (more) rows->pop_back();
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
        listed.count(id) == 0 ? p_.store.Get(id) : Result<std::optional<JobRecord>>(std::nullopt);
    if (row.ok() && row.value()) {
      jobs.push_back(JobToJson(*row.value()));
      hide(&jobs.back());
    }
  }
  return json{{"ok", true},
              {"schema_version", kJsonSchemaVersion},
              {"daemon", daemon},
              {"gpus", gpus},
              {"jobs", jobs},
              {"users", UsersJson(now)},
              {"older_jobs_left_out", more}};
}

json StatusReporter::UsersJson(TimePoint now) const {
  struct Share {
    int running = 0;
    int pending = 0;
    double lease_seconds = 0;
  };
  std::map<uid_t, Share> users;
  double total = 0;
  for (const auto& [id, job] : p_.table.jobs) {
    if (job->ended) continue;
    Share& s = users[job->record.uid];
    ++s.running;
    double lease = p_.arbiter.Usage(id, now).lease_seconds;
    s.lease_seconds += lease;
    total += lease;
  }
  for (const auto& [id, r] : p_.queue.pending()) ++users[r.uid].pending;
  json list = json::array();
  for (const auto& [uid, s] : users) {
    list.push_back({{"uid", uid},
                    {"user", UserName(uid)},
                    {"running", s.running},
                    {"pending", s.pending},
                    {"lease_seconds", s.lease_seconds},
                    {"lease_share", total > 0 ? s.lease_seconds / total : 0.0}});
  }
  return list;
}

}  // namespace gshare
