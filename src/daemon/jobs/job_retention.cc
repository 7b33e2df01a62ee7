#include "daemon/jobs/job_retention.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <limits>
#include <set>

#include "model/job_record.h"
#include "base/user_name.h"
#include "daemon/jobs/log_rotation.h"

namespace gshare {

Result<std::vector<int64_t>> JobRetention::RemoveEnded(double ended_before, size_t keep_newest,
                                                       std::optional<uint32_t> owner) {
  std::set<int64_t> keep = queue_.DependedOn();
  auto deleted = store_.DeleteEnded(ended_before, keep_newest, keep, owner);
  if (!deleted.ok()) return deleted.status();
  std::vector<int64_t> removed;
  for (const JobRecord& r : deleted.value()) {
    removed.push_back(r.id);
    queue_.Forget(r.id);
    const std::string dir = options_.job_files_dir(r.uid);
    const std::string logs = dir + "/logs/";
    std::string output = JobFilePath(r.output, r, UserName(r.uid));
    // A directory below logs/ (or "..") is the user's to point anywhere (system_dirs.h).
    if (output.rfind(logs, 0) == 0 && output.find('/', logs.size()) == std::string::npos) {
      unlink(output.c_str());
    }
    unlink((dir + "/scripts/" + std::to_string(r.id)).c_str());
  }
  return removed;
}

bool JobRetention::Tick() {
  const TimePoint now = clock_.Now();
  if (now < next_) return false;
  next_ = now + kPeriod;
  const Config::Retention& keep = options_.keep;
  const double before =
      keep.ended_jobs.count() == 0
          ? 0.0
          : clock_.WallNow() - static_cast<double>(keep.ended_jobs.count()) / 1000.0;
  const size_t newest = keep.max_ended_jobs == 0 ? std::numeric_limits<size_t>::max()
                                                 : static_cast<size_t>(keep.max_ended_jobs);
  auto removed = RemoveEnded(before, newest);
  if (!removed.ok()) {
    spdlog::warn("retention: {}", removed.status().message());
  } else if (!removed->empty()) {
    spdlog::info("retention: removed {} ended job(s) (older than {} s or past the newest {})",
                 removed->size(), keep.ended_jobs.count() / 1000, keep.max_ended_jobs);
  }
  if (options_.daemon_log.empty()) return true;
  Result<bool> rotated =
      RotateLogIfLarger(STDERR_FILENO, options_.daemon_log, keep.daemon_log_size);
  if (!rotated.ok()) {
    spdlog::warn("retention: {}", rotated.status().message());
  } else if (rotated.value()) {
    spdlog::info("retention: {} passed {} bytes; the earlier part is {}.1", options_.daemon_log,
                 keep.daemon_log_size, options_.daemon_log);
  }
  return true;
}

}  // namespace gshare
