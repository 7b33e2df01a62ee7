// Prometheus metrics from the daemon's status document (ipc/status_metrics.h): the HTTP
// endpoint of [metrics] listen in the event loop (daemon/metrics_endpoint.h) and the file of
// [metrics] textfile for node_exporter's textfile collector.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/job_state.h"
#include "base/listen_address.h"
#include "daemon/daemon.h"
#include "ipc/status_metrics.h"

namespace gshare {
namespace {

// Writes `text` to `path` as a reader sees it whole or not at all: a temporary file beside
// it, then rename(2). node_exporter reads only *.prom, so the temporary name is never read.
Status ReplaceFile(const std::string& path, const std::string& text) {
  const size_t slash = path.rfind('/');
  const std::string tmp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return Status::Error("cannot write " + tmp + ": " + strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return Status::Error("cannot write " + tmp + ": " + strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // fchmod: the daemon's umask (077) would keep the collector, another user, out.
  fchmod(fd, 0644);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return Status::Error("cannot rename " + tmp + " to " + path + ": " + strerror(err));
  }
  return Status::Ok();
}

}  // namespace

void Daemon::StartMetrics() {
  const Config::Metrics& m = options_.config.metrics;
  if (!m.textfile.empty()) next_metrics_file_ = Now();
  if (m.listen.empty()) return;
  Result<ListenAddress> addr = ParseListenAddress(m.listen, m.allow_remote);
  Status st = addr.ok() ? Status::Ok() : addr.status();
  auto endpoint = std::make_unique<MetricsEndpoint>([this] { return MetricsText(); });
  if (st.ok()) st = endpoint->Listen(addr.value(), m.listen);
  if (!st.ok()) {
    // Metrics are an extra: the daemon, which clients start on demand, serves without them.
    spdlog::error("{}: no metrics endpoint", st.message());
    return;
  }
  metrics_ = std::move(endpoint);
  spdlog::info("metrics on http://{}/metrics", m.listen);
}

std::string Daemon::MetricsText() { return StatusMetrics(StatusDocument(nullptr, {})); }

void Daemon::MetricsFileTick(TimePoint now) {
  if (!next_metrics_file_ || now < *next_metrics_file_) return;
  const Config::Metrics& m = options_.config.metrics;
  next_metrics_file_ = now + m.textfile_interval;
  Status st = ReplaceFile(m.textfile, MetricsText());
  if (!st.ok() && st.message() != metrics_file_error_) {
    spdlog::warn("metrics: {}", st.message());
  }
  metrics_file_error_ = st.ok() ? "" : st.message();
}

nlohmann::json Daemon::JobCounts() const {
  int pending = static_cast<int>(queue_ ? queue_->pending().size() : 0);
  int running = 0, suspended = 0;
  for (const auto& [id, job] : jobs_) {
    if (job->ended) continue;
    if (job->record.state == JobState::kRunning) ++running;
    if (job->record.state == JobState::kSuspended) ++suspended;
  }
  return {{"PENDING", pending}, {"RUNNING", running}, {"SUSPENDED", suspended}};
}

}  // namespace gshare
