#include "daemon/jobs/batch_queue.h"

#include "base/gpu_inventory.h"
#include "base/replace_file.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gshare {

namespace {

// The number in the parallel file, or nullopt (no file, or not a number in range: warned).
std::optional<int> ReadParallel(const std::string& path) {
  if (path.empty()) return std::nullopt;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[32] = {};
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  char* end = nullptr;
  const long value = n > 0 ? std::strtol(text, &end, 10) : 0;
  if (n <= 0 || end == text || (*end != '\n' && *end != '\0') || value < 1 ||
      value > BatchQueue::kMaxParallel) {
    spdlog::warn("{}: not a number of jobs per GPU slot; [queue] max_running holds", path);
    return std::nullopt;
  }
  return static_cast<int>(value);
}

}  // namespace

BatchQueue::BatchQueue(JobStore& store, const Clock& clock, ActiveState active,
                       std::string paused_file, ActiveNamed active_named, std::string parallel_file)
    : store_(store),
      clock_(clock),
      active_(std::move(active)),
      active_named_(std::move(active_named)),
      paused_file_(std::move(paused_file)),
      paused_(!paused_file_.empty() && access(paused_file_.c_str(), F_OK) == 0),
      parallel_file_(std::move(parallel_file)),
      parallel_(ReadParallel(parallel_file_)) {
  if (paused_) spdlog::info("queue paused (gshare queue resume starts jobs again)");
  if (parallel_) spdlog::info("queue: {} job(s) per GPU slot (gshare parallel)", *parallel_);
}

Status BatchQueue::SetParallel(std::optional<int> n) {
  if (n && (*n < 1 || *n > kMaxParallel)) {
    return Status::Error("jobs per GPU slot must be within 1.." + std::to_string(kMaxParallel));
  }
  if (!parallel_file_.empty()) {
    if (n) {
      // A crash leaves the old number or the new one.
      if (Status st = ReplaceFile(parallel_file_, std::to_string(*n) + "\n"); !st.ok()) return st;
    } else if (unlink(parallel_file_.c_str()) != 0 && errno != ENOENT) {
      return Status::Error("cannot remove " + parallel_file_ + ": " + std::strerror(errno));
    }
  }
  if (parallel_ != n) {
    if (n) {
      spdlog::info("queue: {} job(s) per GPU slot (gshare parallel)", *n);
    } else {
      spdlog::info("queue: jobs per GPU slot from [queue] max_running again");
    }
  }
  parallel_ = n;
  Changed();
  return Status::Ok();
}

Status BatchQueue::SetPaused(bool paused) {
  if (!paused_file_.empty()) {
    if (paused) {
      int fd = open(paused_file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) {
        return Status::Error("cannot write " + paused_file_ + ": " + std::strerror(errno));
      }
      close(fd);
    } else if (unlink(paused_file_.c_str()) != 0 && errno != ENOENT) {
      return Status::Error("cannot remove " + paused_file_ + ": " + std::strerror(errno));
    }
  }
  if (paused_ != paused) spdlog::info("queue {}", paused ? "paused" : "resumed");
  paused_ = paused;
  Changed();
  return Status::Ok();
}

JobRecord* BatchQueue::Pending(int64_t id) {
  auto it = pending_.find(id);
  return it == pending_.end() ? nullptr : &it->second;
}

void BatchQueue::Add(JobRecord r) {
  const int64_t id = r.id;
  final_states_.erase(id);
  pending_[id] = std::move(r);
  dirty_ = true;
}

std::optional<JobRecord> BatchQueue::Remove(int64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return std::nullopt;
  JobRecord r = std::move(it->second);
  pending_.erase(it);
  return r;
}

void BatchQueue::Ended(int64_t id, JobState state) {
  if (IsFinal(state)) final_states_[id] = state;
  dirty_ = true;
}

std::optional<JobState> BatchQueue::StateOf(int64_t id) {
  if (pending_.count(id) != 0) return JobState::kPending;
  if (std::optional<JobState> active = active_(id)) return active;
  auto known = final_states_.find(id);
  if (known != final_states_.end()) return known->second;
  auto row = store_.Get(id);
  if (!row.ok() || !row.value()) return std::nullopt;
  if (IsFinal(row.value()->state)) final_states_[id] = row.value()->state;
  return row.value()->state;
}

Status BatchQueue::NotInState(int64_t id, const std::string& wanted) {
  std::optional<JobState> state = StateOf(id);
  if (!state) return Status::Error("no job " + std::to_string(id));
  return Status::Error("job " + std::to_string(id) + " is " + JobStateName(*state) + ", not " +
                       wanted);
}

Status BatchQueue::CheckDependencies(const JobRecord& r) {
  if (r.dependency.empty()) return Status::Ok();
  Result<std::vector<Dependency>> deps = ParseDependencies(r.dependency);
  if (!deps.ok()) return deps.status();
  for (int64_t job : NamedJobs(deps.value())) {
    if (!StateOf(job))
      return Status::Error("dependency on job " + std::to_string(job) + ", which does not exist");
  }
  return Status::Ok();
}

DependencyState BatchQueue::Dependencies(const JobRecord& r) {
  if (r.dependency.empty()) return DependencyState::kSatisfied;
  Result<std::vector<Dependency>> deps = ParseDependencies(r.dependency);
  if (!deps.ok()) return DependencyState::kNever;
  // singleton: an earlier job of the same name and user still pending, or one running. Looked
  // for only when the job has one: admission asks for every pending job's dependencies.
  bool singleton_waits = false;
  if (HasSingleton(deps.value())) {
    singleton_waits = active_named_ && active_named_(r.uid, r.name, r.id);
    for (auto it = pending_.begin(); !singleton_waits && it != pending_.end() && it->first < r.id;
         ++it) {
      singleton_waits = it->second.uid == r.uid && it->second.name == r.name;
    }
  }
  return EvaluateDependencies(
      deps.value(), [this](int64_t job) { return StateOf(job); }, singleton_waits);
}

std::set<int64_t> BatchQueue::DependedOn() const {
  std::set<int64_t> jobs;
  for (const auto& [id, r] : pending_) {
    Result<std::vector<Dependency>> deps = ParseDependencies(r.dependency);
    if (!deps.ok()) continue;
    for (int64_t job : NamedJobs(deps.value())) jobs.insert(job);
  }
  return jobs;
}

std::vector<BatchQueue::Start> BatchQueue::Admit(const std::map<std::string, int>& running,
                                                 const AdmissionLimits& limits,
                                                 const std::map<uid_t, int>& running_per_user) {
  const double now = clock_.WallNow();
  if (retry_at_) {
    if (clock_.Now() < *retry_at_) return {};
    retry_at_.reset();
    dirty_ = true;
  }
  if (!dirty_ && !(next_begin_ && *next_begin_ <= now)) return {};
  dirty_ = false;
  std::vector<AdmissionJob> candidates;
  std::vector<JobRecord*> records;
  candidates.reserve(pending_.size());
  records.reserve(pending_.size());
  for (auto& [id, r] : pending_) {
    AdmissionJob& a = candidates.emplace_back();
    a.id = id;
    a.uid = r.uid;
    a.priority = r.priority;
    a.submit_time = r.submit_time;
    a.held = r.held;
    a.begin_time = r.begin_time;
    a.gpu = GpuIndexList(r.gpu);
    a.gpus = r.gpus;
    a.foreground = r.kind == JobKind::kRun;
    a.array_job_id = r.array_job_id;
    a.array_limit = r.array_limit;
    if (!r.held) a.dependencies = Dependencies(r);
    records.push_back(&r);
  }
  AdmissionUsers users{running_per_user, starts_};
  AdmissionResult result = gshare::Admit(candidates, running, limits, now, &users);
  starts_ = users.starts;
  next_begin_ = result.next_begin;
  std::vector<std::pair<int64_t, std::string>> changed;
  for (size_t i = 0; i < records.size(); ++i) {
    const char* reason = result.reasons[i];
    if (reason == nullptr || records[i]->reason == reason) continue;
    records[i]->reason = reason;
    changed.emplace_back(records[i]->id, reason);
  }
  Status s = store_.SetReasons(changed);
  if (!s.ok()) spdlog::error("cannot record pending reasons: {}", s.message());
  std::vector<Start> starts;
  starts.reserve(result.start.size());
  for (const AdmissionResult::Start& start : result.start) {
    starts.push_back({candidates[start.index].id, start.slot});
  }
  return starts;
}

void BatchQueue::StartRefused(JobRecord r) {
  Add(std::move(r));
  retry_at_ = clock_.Now() + kStoreRetry;
}

std::optional<TimePoint> BatchQueue::Deadline() const {
  const TimePoint now = clock_.Now();
  if (retry_at_) return std::max(now, *retry_at_);
  if (dirty_) return now;
  if (!next_begin_) return std::nullopt;
  return now + std::chrono::duration_cast<TimePoint::duration>(
                   std::chrono::duration<double>(std::max(0.0, *next_begin_ - clock_.WallNow())));
}

}  // namespace gshare
