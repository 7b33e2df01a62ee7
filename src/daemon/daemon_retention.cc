// Removal of ended jobs, asked for (`gshare clean`) or by [retention], and the daemon log's
// size bound. Both run on the daemon's thread.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon/daemon.h"
#include "policy/dependency.h"
#include "ipc/job_json.h"
#include "daemon/log_rotation.h"
#include "base/output_pattern.h"
#include "ipc/requests.h"
#include "ipc/replies.h"
#include "base/user_name.h"

namespace gshare {

using json = nlohmann::json;

Result<std::vector<int64_t>> Daemon::RemoveEnded(double ended_before, size_t keep_newest,
                                                 std::optional<uint32_t> owner) {
  // Jobs a pending job still depends on stay, so that its dependency can be decided.
  std::set<int64_t> keep = queue_->DependedOn();
  auto deleted = store_->DeleteEnded(ended_before, keep_newest, keep, owner);
  if (!deleted.ok()) return deleted.status();
  std::vector<int64_t> removed;
  for (const JobRecord& r : deleted.value()) {
    removed.push_back(r.id);
    queue_->Forget(r.id);
    // Only logs gshare placed itself: a user's own --output file is theirs.
    // Only a file right in the logs directory: a link there is unlinked, not followed, while
    // a directory below it (or "..") is the user's to point anywhere (system_dirs.h).
    const std::string logs = JobFilesDir(r.uid) + "/logs/";
    std::string output = ExpandOutputPattern(r.output, r.id, r.name, UserName(r.uid),
                                             r.array_job_id, ArrayTaskIdOf(r));
    if (output.rfind(logs, 0) == 0 && output.find('/', logs.size()) == std::string::npos) {
      unlink(output.c_str());
    }
    unlink((JobFilesDir(r.uid) + "/scripts/" + std::to_string(r.id)).c_str());
  }
  return removed;
}

void Daemon::OnClean(Connection& c, const json& req) {
  Result<CleanRequest> parsed = CleanRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const double before = WallNow() - static_cast<double>(parsed->older_than_ms) / 1000.0;
  // An admin cleans every user's ended jobs; anyone else their own.
  auto removed = RemoveEnded(before, std::numeric_limits<size_t>::max(),
                             access_.IsAdmin(c) ? std::nullopt : std::optional<uint32_t>(c.uid));
  if (!removed.ok()) return Reply(c, ErrorReply(removed.status().message()));
  spdlog::info("clean: removed {} job(s)", removed->size());
  Reply(c, CleanReply{removed.value()}.ToJsonText());
}

void Daemon::RetentionTick(TimePoint now) {
  if (now < next_retention_) return;
  next_retention_ = now + kRetentionPeriod;
  const Config::Retention& keep = options_.config.retention;
  const double before = keep.ended_jobs.count() == 0
                            ? 0.0
                            : WallNow() - static_cast<double>(keep.ended_jobs.count()) / 1000.0;
  const size_t newest = keep.max_ended_jobs == 0 ? std::numeric_limits<size_t>::max()
                                                 : static_cast<size_t>(keep.max_ended_jobs);
  TimelineRetention();
  auto removed = RemoveEnded(before, newest);
  if (!removed.ok()) {
    spdlog::warn("retention: {}", removed.status().message());
  } else if (!removed->empty()) {
    spdlog::info("retention: removed {} ended job(s) (older than {} s or past the newest {})",
                 removed->size(), keep.ended_jobs.count() / 1000, keep.max_ended_jobs);
  }
  // The detached daemon's stderr is this file (client_context.cc); under systemd it is the
  // journal, which keeps its own bounds, and the check below leaves it alone.
  const std::string log = options_.state_dir + "/daemon.log";
  Result<bool> rotated = RotateLogIfLarger(STDERR_FILENO, log, keep.daemon_log_size);
  if (!rotated.ok()) {
    spdlog::warn("retention: {}", rotated.status().message());
  } else if (rotated.value()) {
    spdlog::info("retention: {} passed {} bytes; the earlier part is {}.1", log,
                 keep.daemon_log_size, log);
  }
}

}  // namespace gshare
