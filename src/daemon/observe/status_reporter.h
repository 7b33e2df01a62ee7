// StatusReporter: the daemon's status document (`gshare status --json`, docs/cli.md; schema
// ipc/job_json.h's kJsonSchemaVersion) as one viewer may see it, and the Prometheus exposition
// built from it (ipc/status_metrics.h). Reads the daemon's parts and the store; the one thing it
// changes is a viewer's cached groups (AccessGuard). The daemon's event loop.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/gpu/idle_stager.h"
#include "daemon/gpu/memory_coordinator.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/sharing_controller.h"
#include "daemon/gpu/stagger_coordinator.h"
#include "daemon/jobs/batch_queue.h"
#include "daemon/state/access_guard.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/job_table.h"
#include "ipc/requests.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "store/job_store.h"

namespace gshare {

class StatusReporter {
 public:
  // What it reads; all outlive it.
  struct Parts {
    const DaemonOptions& options;
    const JobTable& table;
    const Arbiter& arbiter;
    const MemoryLedger& ledger;
    const MemoryCoordinator& memory;
    const StaggerCoordinator& stagger;
    const SharingController& sharing;
    const PriorityLanes& lanes;
    const IdleStager& staging;
    const BatchQueue& queue;
    JobStore& store;
    AccessGuard& access;
    const Clock& clock;
    // The MPS backend's view (MpsServers::Describe); unset: none.
    std::function<nlohmann::json()> mps = nullptr;
  };
  // `start_time`: when the daemon started (unix seconds), known once it serves.
  StatusReporter(Parts parts, std::function<double()> start_time)
      : p_(parts), start_time_(std::move(start_time)) {}

  // The jobs a full document lists besides the active ones: the newest, by id (older ones are
  // in `gshare queue -a` and `gshare acct`; the document says when it left some out).
  static constexpr int kRecentJobs = 20;
  // The document as `viewer` may see it (AccessGuard::HideDetails on other users' jobs);
  // nullptr: the metrics' view, which holds only what every user may see. `request.brief`:
  // the daemon and each active job's lease only; `request.job_id`: that job too, however old.
  nlohmann::json Document(Connection* viewer, const StatusRequest& request);
  // The Prometheus text of the metrics' view.
  std::string MetricsText();
  // Jobs by live state ({"PENDING": n, "RUNNING": n, "SUSPENDED": n}) as `gshare queue` shows.
  nlohmann::json JobCounts() const;
  // Each user's running and pending jobs and their share of the lease seconds of the active
  // jobs (docs/design.md, "Fair share between users").
  nlohmann::json UsersJson(TimePoint now) const;

 private:
  nlohmann::json DaemonJson() const;
  nlohmann::json GpuJson(const Arbiter::GpuView& v) const;
  nlohmann::json ActiveJobJson(JobId id, const ActiveJob& job, TimePoint now) const;

  Parts p_;
  std::function<double()> start_time_;
};

}  // namespace gshare
