// MetricsPublisher: where the daemon's Prometheus exposition goes ([metrics]; docs/design.md
// "Metrics"): the HTTP endpoint of `listen` (MetricsEndpoint, polled in the event loop) and the
// file of `textfile` for node_exporter's textfile collector, replaced whole (a temporary file
// beside it, then rename(2)) every `textfile_interval`. Knows no metric: the text comes from
// the owner's callback. Time comes in as arguments. Not thread-safe: the daemon's event loop
// is its only caller. Errors are logged, never returned: metrics are an extra and the daemon
// serves without them (an endpoint that cannot listen is logged once; a file that cannot be
// written is logged when its error changes).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/config.h"
#include "daemon/observe/metrics_endpoint.h"
#include "policy/types.h"

namespace gshare {

class MetricsPublisher {
 public:
  using Text = std::function<std::string()>;
  MetricsPublisher(Config::Metrics config, Text text);

  // Listens on `listen` (if set) and schedules the first file write at `now` (if `textfile`).
  void Start(TimePoint now);
  // The endpoint once listening, else nullptr (the event loop polls it).
  MetricsEndpoint* endpoint() { return endpoint_.get(); }
  // Writes the file when due (at next_file(); nullopt: no file).
  void FileTick(TimePoint now);
  std::optional<TimePoint> next_file() const { return next_file_; }
  // The last write's error, "" after a success or before any.
  const std::string& file_error() const { return file_error_; }

 private:
  Config::Metrics config_;
  Text text_;
  std::unique_ptr<MetricsEndpoint> endpoint_;
  std::optional<TimePoint> next_file_;
  std::string file_error_;
};

// Writes `text` to `path` as a reader sees it whole or not at all: a temporary file beside it
// (".<name>.tmp": node_exporter reads only *.prom), mode 0644, then rename(2). Error naming the
// file and errno.
Status ReplaceFile(const std::string& path, const std::string& text);

}  // namespace gshare
