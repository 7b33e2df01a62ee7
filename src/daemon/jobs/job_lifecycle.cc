#include "daemon/jobs/job_lifecycle.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "base/process_identity.h"
#include "base/slurm_step.h"
#include "daemon/jobs/job_usage.h"
#include "ipc/frame_io.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"

namespace gshare {

using json = nlohmann::json;

Status JobLifecycle::Save(const JobRecord& r) {
  Status s = p_.store.Save(r);
  if (!s.ok()) spdlog::error("cannot record job {}: {}", r.id, s.message());
  return s;
}

std::optional<uint32_t> JobLifecycle::OwnerOf(int64_t id) {
  if (const JobRecord* pending = p_.queue.Pending(id)) return pending->uid;
  if (auto active = p_.table.jobs.find(id); active != p_.table.jobs.end()) {
    return active->second->record.uid;
  }
  auto row = p_.store.Get(id);
  if (!row.ok() || !row.value()) return std::nullopt;
  return row.value()->uid;
}

void JobLifecycle::Recover() {
  ListFilter open;
  open.states = {JobState::kPending, JobState::kRunning, JobState::kSuspended};
  std::vector<std::pair<int64_t, std::string>> bad_rows;
  auto rows = p_.store.List(open, &bad_rows);
  if (!rows.ok()) {
    spdlog::error("cannot load the queue: {}", rows.status().message());
    return;
  }
  // One damaged row costs its own job, not the queue.
  for (const auto& [id, error] : bad_rows) {
    spdlog::error("{} cannot be read ({}): FAILED", JobName(id), error);
    Status st = p_.store.FailUnreadable(id, WallNow(), "its record cannot be read: " + error);
    if (!st.ok()) spdlog::error("{}: {}", JobName(id), st.message());
  }
  for (JobRecord& r : rows.value()) {
    if (r.state == JobState::kPending && r.kind == JobKind::kRun) {
      // Its `gshare run` waited on the previous daemon and gave up when that one went away.
      r.state = JobState::kCancelled;
      r.end_time = WallNow();
      Save(r);
    } else if (r.state == JobState::kPending) {
      p_.queue.Add(std::move(r));
    } else {
      auto job = std::make_unique<ActiveJob>();
      job->orphan = true;
      job->readopted = true;
      // Its GPU time so far (SaveUsage) goes on from where the last daemon left it. Swap
      // counters are not carried: its live processes report their own totals again.
      job->earlier_lease_seconds = r.lease_seconds;
      job->earlier_wait_seconds = r.wait_seconds;
      job->peak_bytes = r.peak_bytes;
      if (!r.end_request.empty()) job->kill_at = Now() + Millis(r.kill_after_ms);
      JobId id = r.id;
      p_.staging.Active(id);
      p_.arbiter.AddJob(id, r.priority, Millis(r.quantum_ms), r.uid);
      p_.placement.SetGang(r);
      job->record = std::move(r);
      p_.table.jobs[id] = std::move(job);
    }
  }
  next_orphan_check_ = {};  // at once
  Tick(Now());
  int adopted = 0;
  for (const auto& [id, job] : p_.table.jobs) adopted += job->ended ? 0 : 1;
  spdlog::info("queue: {} pending, {} running re-adopted, {} GPU slot(s) of {} job(s)",
               p_.queue.pending().size(), adopted, gpu_count_(), MaxRunning());
}

int JobLifecycle::MaxRunning() const {
  return p_.queue.MaxRunning(p_.options.config.queue.max_running);
}

void JobLifecycle::Admission() {
  AdmissionLimits limits{gpu_count_(),
                         MaxRunning(),
                         p_.options.config.queue.max_running_per_user,
                         p_.placement.AllocatedPerSlot(),
                         p_.placement.RunningPerArray(),
                         p_.queue.paused()};
  for (const BatchQueue::Start& start :
       p_.queue.Admit(p_.placement.RunningPerSlot(), limits, p_.placement.RunningPerUser())) {
    std::optional<JobRecord> r = p_.queue.Remove(start.id);
    if (!r) continue;
    const bool foreground = r->kind == JobKind::kRun;
    Activate(std::move(*r), start.slot);
    if (p_.queue.retrying()) break;  // the store refuses writes: the rest waits with it
    if (!foreground) continue;
    for (auto& [cid, c] : p_.table.conns) {
      if (c->kind != Connection::Kind::kRunner || c->job != static_cast<JobId>(start.id)) continue;
      json admitted{{"job_id", start.id}};
      auto active = p_.table.jobs.find(start.id);
      if (active != p_.table.jobs.end()) {
        const JobRecord& r = active->second->record;
        std::string visible = p_.placement.VisibleDevicesOf(r.gpu, start.slot);
        if (!visible.empty()) admitted["visible"] = visible;
        if (LaunchEnv env = p_.placement.LaunchEnvOf(r, start.slot); !env.empty())
          admitted["env"] = LaunchEnvToJson(env);
      }
      std::string frame = EncodeFrame(proto::MsgType::kRunAdmitted, ToJsonText(admitted));
      if (!send_(cid, frame)) spdlog::warn("job {}: cannot reach its gshare run", start.id);
      break;
    }
  }
}

void JobLifecycle::Activate(JobRecord record, const std::string& slot) {
  const JobId id = record.id;
  // A requeued job's previous run may linger until its runner disconnects.
  if (auto old = p_.table.jobs.find(id); old != p_.table.jobs.end()) {
    p_.arbiter.RemoveJob(id);
    p_.table.jobs.erase(old);
    for (auto& [cid, c] : p_.table.conns) {
      if (c->job == id && c->kind == Connection::Kind::kRunner) c->job = 0;
    }
  }
  record.slot = slot;
  record.reason.clear();
  auto job = std::make_unique<ActiveJob>();
  job->record = std::move(record);
  p_.staging.Active(id);
  ActiveJob& active = *job;
  p_.table.jobs[id] = std::move(job);
  p_.arbiter.AddJob(id, active.record.priority, Millis(active.record.quantum_ms),
                    active.record.uid);
  p_.placement.SetGang(active.record);
  if (active.record.kind != JobKind::kSubmit) {
    Save(active.record);
    return;
  }
  active.record.state = JobState::kRunning;
  active.record.start_time = WallNow();
  active.orphan = true;  // until its supervisor attaches
  // RUNNING is durable before anything runs: a job the database still calls PENDING would
  // start again after a restart.
  if (!Save(active.record).ok()) {
    JobRecord back = std::move(active.record);
    p_.arbiter.RemoveJob(id);
    p_.table.jobs.erase(id);
    p_.staging.ForgetJob(id);
    back.state = JobState::kPending;
    back.start_time.reset();
    back.slot.clear();
    p_.queue.StartRefused(std::move(back));
    spdlog::warn("job {} stays pending: its start cannot be recorded", id);
    return;
  }
  Status st = p_.processes.SpawnSupervisor(active.record);
  Save(active.record);  // the supervisor's pid; without it, its end file still tells
  if (!st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
    Finish(id, JobState::kFailed, std::nullopt, std::nullopt, st.message());
    return;
  }
  spdlog::info("job {} started on GPU slot {} (supervisor pid {})", id, slot,
               active.record.runner_pid.value_or(0));
}

void JobLifecycle::Started(ActiveJob& job, pid_t pid) {
  job.record.pid = pid;
  job.record.state = JobState::kRunning;
  // The job started now, whenever admission stored it RUNNING: a supervisor that could attach
  // only to the next daemon (this one died meanwhile) starts its job seconds later.
  job.record.start_time = WallNow();
  Save(job.record);
  // ms: how long it was pending, which the timeline draws as its wait in the queue.
  const double pending_ms = std::max(0.0, *job.record.start_time - job.record.submit_time) * 1000;
  p_.timeline.Note(TimelineKind::kJobStart, job.record.id, "", pid, 0, pending_ms,
                   std::string(JobKindName(job.record.kind)));
  // Cancelled while its supervisor was starting it.
  if (!job.record.end_request.empty()) p_.processes.SignalGroup(job, SIGTERM);
}

void JobLifecycle::AdoptUnreportedPid(ActiveJob& job) {
  // A job activated by this daemon gets its pid from its supervisor's start report.
  if (!job.readopted) return;
  std::optional<pid_t> pid = p_.processes.UnreportedPid(job.record);
  if (!pid) return;
  job.record.pid = *pid;
  Save(job.record);
  spdlog::info("job {}: its start was not reported; pid {} found under its supervisor",
               job.record.id, *pid);
  // Cancelled before its pid was known.
  if (!job.record.end_request.empty()) p_.processes.SignalGroup(job, SIGTERM);
}

void JobLifecycle::End(JobId id, const JobEnd& end) {
  auto it = p_.table.jobs.find(id);
  if (it == p_.table.jobs.end() || it->second->ended) return;
  ActiveJob& job = *it->second;
  const std::string request = job.record.end_request;
  if (request == "requeue") {
    job.ended = true;
    const JobRun ran = RequeuedRun(id, job, end);
    JobRecord again = job.record;
    ResetForQueue(again);
    SaveRequeued(ran, &again);
    job.record.state = JobState::kPending;
    p_.queue.Add(std::move(again));
    p_.timeline.Note(TimelineKind::kJobEnd, id, "", job.record.pid.value_or(0), 0, 0, "REQUEUED");
    spdlog::info("job {} requeued", id);
  } else {
    JobState state = request == "cancel" ? JobState::kCancelled : FinalStateOf(end);
    Finish(id, state, end.exit_code, end.signal, end.error, end.end_time);
  }
  const std::string dir = p_.processes.FilesDir(job.record.uid);
  unlink(JobEndPath(dir, id).c_str());
  unlink(JobStartPath(dir, id).c_str());
}

void JobLifecycle::Finish(JobId id, JobState state, std::optional<int> exit_code,
                          std::optional<int> signal, const std::string& reason,
                          std::optional<double> end_time) {
  auto it = p_.table.jobs.find(id);
  if (it == p_.table.jobs.end() || it->second->ended) return;
  ActiveJob& job = *it->second;
  job.ended = true;
  job.kill_at.reset();
  JobRecord& r = job.record;
  r.state = state;
  r.exit_code = exit_code;
  r.signal = signal;
  r.end_time = end_time.value_or(WallNow());
  if (!r.start_time && state != JobState::kCancelled) r.start_time = r.end_time;
  RecordUsage(p_.arbiter, p_.ledger, id, job, Now(), &r);
  r.reason = reason;
  Save(r);
  p_.timeline.Note(TimelineKind::kJobEnd, id, "", r.pid.value_or(0), 0, 0, JobStateName(state));
  p_.queue.Ended(id, state);
  spdlog::info("job {} {} (lease {:.1f} s, waited {:.1f} s){}", id, JobStateName(state),
               r.lease_seconds, r.wait_seconds, reason.empty() ? "" : ": " + reason);
  p_.processes.NotifyEnd(r);
}

JobRun JobLifecycle::RequeuedRun(JobId id, const ActiveJob& job, const JobEnd& end) {
  JobRun run{job.record, true};
  JobRecord& r = run.job;
  r.state = JobState::kCancelled;
  r.exit_code = end.exit_code;
  r.signal = end.signal;
  r.end_time = end.end_time.value_or(WallNow());
  r.reason = "requeued";
  RecordUsage(p_.arbiter, p_.ledger, id, job, Now(), &r);
  return run;
}

Status JobLifecycle::SaveRequeued(const JobRun& ended, JobRecord* again) {
  Status s = p_.store.SaveRequeued(ended, WallNow(), again);
  if (!s.ok()) spdlog::error("cannot requeue job {}: {}", again->id, s.message());
  return s;
}

Status JobLifecycle::Cancel(int64_t id, bool requeue) {
  const double now = WallNow();
  if (const JobRecord* pending = p_.queue.Pending(id)) {
    if (requeue) return Status::Error(JobName(id) + " is already pending");
    JobRecord r = *pending;
    r.state = JobState::kCancelled;
    r.reason.clear();
    r.end_time = now;
    Status saved = Save(r);
    if (!saved.ok()) return saved;  // still pending, as the database says
    p_.queue.Remove(id);
    p_.queue.Ended(id, r.state);
    spdlog::info("job {} CANCELLED while pending", id);
    p_.processes.NotifyEnd(r);
    if (r.kind == JobKind::kRun) {  // its `gshare run` waits for admission: tell it
      for (auto& [cid, c] : p_.table.conns) {
        if (c->kind == Connection::Kind::kRunner && c->job == static_cast<JobId>(id)) {
          send_(cid,
                EncodeFrame(proto::MsgType::kReply, ErrorReply(JobName(id) + " was cancelled")));
          break;
        }
      }
    }
    return Status::Ok();
  }
  if (auto it = p_.table.jobs.find(id);
      it != p_.table.jobs.end() && !it->second->ended && !it->second->adhoc) {
    ActiveJob& job = *it->second;
    if (job.record.kind == JobKind::kSlurm) {
      return Status::Error(JobName(id) + " is Slurm step " +
                           StepName(job.record.slurm_job_id, job.record.slurm_step) +
                           ": Slurm ends it (scancel " + std::to_string(job.record.slurm_job_id) +
                           ")");
    }
    if (requeue && job.record.kind != JobKind::kSubmit) {
      return Status::Error(JobName(id) +
                           " is a `gshare run` job: only submitted jobs can be requeued");
    }
    AdoptUnreportedPid(job);
    JobRecord r = job.record;
    r.end_request = requeue ? "requeue" : "cancel";
    Status saved = Save(r);
    if (!saved.ok()) return saved;
    job.record = std::move(r);
    p_.processes.SignalGroup(job, SIGTERM);  // when its pid is not known yet, Started sends it
    // A suspended job must run to see it; a checkpointed process that blocks in CUDA on its
    // way out gets SIGKILL after --kill-after.
    if (job.suspension == ActiveJob::Suspension::kStopped) p_.processes.SignalAll(job, SIGCONT);
    job.kill_at = Now() + Millis(job.record.kill_after_ms);
    spdlog::info("job {}: {} requested (SIGTERM)", id, job.record.end_request);
    return Status::Ok();
  }
  auto row = p_.store.Get(id);
  if (!row.ok()) return row.status();
  if (!row.value()) return Status::Error("no " + JobName(id));
  JobRecord r = std::move(*row.value());
  if (!requeue || !IsFinal(r.state)) {
    return Status::Error(JobName(id) + " is already " + JobStateName(r.state));
  }
  if (r.kind != JobKind::kSubmit) {
    return Status::Error(JobName(id) +
                         " is a `gshare run` job: only submitted jobs can be requeued");
  }
  const JobRun ran{r, false};
  ResetForQueue(r);
  Status saved = SaveRequeued(ran, &r);
  if (!saved.ok()) return saved;
  p_.queue.Add(std::move(r));
  spdlog::info("job {} requeued", id);
  return Status::Ok();
}

std::optional<TimePoint> JobLifecycle::Deadline() const {
  std::optional<TimePoint> deadline = p_.queue.Deadline();
  auto earliest = [&deadline](TimePoint t) { deadline = deadline ? std::min(*deadline, t) : t; };
  for (const auto& [id, job] : p_.table.jobs) {
    if (job->ended) continue;
    if (job->kill_at) earliest(*job->kill_at);
    if (job->orphan) earliest(next_orphan_check_);
    if (!job->adhoc && next_usage_save_ != TimePoint{}) earliest(next_usage_save_);
  }
  return deadline;
}

void JobLifecycle::Tick(TimePoint now) {
  for (auto& [id, job] : p_.table.jobs) {
    if (!job->ended && job->kill_at && now >= *job->kill_at) {
      p_.processes.SignalGroup(*job, SIGKILL);
      job->kill_at.reset();
    }
  }
  if (now >= next_orphan_check_) {
    CheckOrphans();
    next_orphan_check_ = now + std::chrono::seconds(1);
  }
  if (now >= next_usage_save_) {
    if (next_usage_save_ != TimePoint{}) SaveUsage(now);
    next_usage_save_ = now + kUsageSaveEvery;
  }
  Admission();
}

void JobLifecycle::SaveUsage(TimePoint now) {
  for (auto& [id, job] : p_.table.jobs) {
    if (job->ended || job->adhoc) continue;
    RecordUsage(p_.arbiter, p_.ledger, id, *job, now, &job->record);
    Save(job->record);
  }
}

void JobLifecycle::CheckOrphans() {
  std::vector<JobId> lost;
  std::vector<std::pair<JobId, JobEnd>> reported;
  for (auto& [id, job] : p_.table.jobs) {
    if (job->ended || !job->orphan) continue;
    AdoptUnreportedPid(*job);
    const JobRecord& r = job->record;
    if (std::optional<JobEnd> end = ReadJobEnd(JobEndPath(p_.processes.FilesDir(r.uid), id))) {
      reported.emplace_back(id, *end);
    } else if (!(r.runner_pid && r.runner_start &&
                 SameProcessAlive(*r.runner_pid, *r.runner_start))) {
      lost.push_back(id);
    }
  }
  for (const auto& [id, end] : reported) End(id, end);
  for (JobId id : lost) OrphanGone(id);
  for (const auto& [id, end] : reported) ForgetIfDone(id);
  for (JobId id : lost) ForgetIfDone(id);
}

void JobLifecycle::OrphanGone(JobId id) {
  ActiveJob& job = *p_.table.jobs.at(id);
  if (job.record.kind == JobKind::kSlurm) {
    // Its step's slurmstepd is gone: Slurm ended the step (its exit status is Slurm's).
    spdlog::info("job {}: Slurm step {} ended", id,
                 StepName(job.record.slurm_job_id, job.record.slurm_step));
    Finish(id, JobState::kCompleted, std::nullopt, std::nullopt, "");
    return;
  }
  if (job.record.kind == JobKind::kSubmit && !job.record.pid &&
      access(JobStartPath(p_.processes.FilesDir(job.record.uid), id).c_str(), F_OK) != 0) {
    // Its supervisor ended before it started anything (the daemon died before it attached,
    // or it was killed): nothing ran, so the job goes back to the queue.
    spdlog::warn("job {}: its supervisor ended before starting it: PENDING again", id);
    job.ended = true;
    JobRecord again = job.record;
    ResetForQueue(again);
    again.reason = "";
    if (Save(again).ok()) {
      p_.queue.Add(std::move(again));
      return;
    }
    job.ended = false;
  }
  if (job.readopted) {
    spdlog::warn("job {}: its runner is gone and left no exit status: LOST", id);
    Finish(id, JobState::kLost, std::nullopt, std::nullopt, "");
  } else {
    Finish(id, JobState::kFailed, std::nullopt, std::nullopt, "job supervisor ended unexpectedly");
  }
}

void JobLifecycle::RunnerLost(JobId id, bool stopping) {
  if (p_.queue.Pending(id) != nullptr) {
    Status st = Cancel(id, false);
    if (!st.ok()) spdlog::error("job {}: {}", id, st.message());
    return;
  }
  auto it = p_.table.jobs.find(id);
  if (it == p_.table.jobs.end() || it->second->ended || stopping) return;
  ActiveJob& job = *it->second;
  if (job.record.kind == JobKind::kSubmit) {
    p_.processes.SignalGroup(job, SIGKILL);
    Finish(id, JobState::kFailed, std::nullopt, std::nullopt, "job supervisor ended unexpectedly");
  } else {
    Finish(id, JobState::kFailed, std::nullopt, std::nullopt, "gshare run exited early");
  }
}

void JobLifecycle::ForgetIfDone(JobId id) {
  auto it = p_.table.jobs.find(id);
  if (it == p_.table.jobs.end() || !it->second->ended || !it->second->shims.empty()) return;
  for (const auto& [cid, c] : p_.table.conns) {
    if (c->job == id && !c->closing) return;  // its runner is still connected
  }
  p_.arbiter.RemoveJob(id);
  p_.memory.Forget(id);
  p_.staging.ForgetJob(id);
  p_.table.jobs.erase(it);
}

}  // namespace gshare
