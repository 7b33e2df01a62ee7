// Prometheus metrics from the daemon's status document (ipc/status_metrics.h), published by
// daemon/metrics_publisher.h; the job counts `gshare queue` and the metrics show.
#include "base/job_state.h"
#include "daemon/daemon.h"
#include "ipc/status_metrics.h"

namespace gshare {

std::string Daemon::MetricsText() { return StatusMetrics(StatusDocument(nullptr, {})); }

nlohmann::json Daemon::JobCounts() const {
  int pending = static_cast<int>(queue_ ? queue_->pending().size() : 0);
  int running = 0, suspended = 0;
  for (const auto& [id, job] : table_.jobs) {
    if (job->ended) continue;
    if (job->record.state == JobState::kRunning) ++running;
    if (job->record.state == JobState::kSuspended) ++suspended;
  }
  return {{"PENDING", pending}, {"RUNNING", running}, {"SUSPENDED", suspended}};
}

}  // namespace gshare
