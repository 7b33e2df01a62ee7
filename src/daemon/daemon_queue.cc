// The batch queue inside the daemon (docs/cli.md): submissions, `gshare run` registration and
// admission, the supervisors of submitted jobs, their start and end reports, and recovery
// after a restart. Job control and clean are in daemon_control.cc.
#include <dirent.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/slurm_step.h"
#include "daemon/daemon.h"
#include "runner/sharing_env.h"
#include "policy/dependency.h"
#include "base/gpu_inventory.h"
#include "base/job_token.h"
#include "ipc/job_json.h"
#include "base/output_pattern.h"
#include "base/process_identity.h"
#include "ipc/requests.h"
#include "ipc/replies.h"
#include "runner/shim_path.h"
#include "base/user_name.h"

namespace gshare {
namespace {

using json = nlohmann::json;

}  // namespace

Status Daemon::AssignToken(JobRecord* r) {
  Result<std::string> token = NewJobToken();
  if (!token.ok()) return token.status();
  r->token = std::move(token.value());
  return Status::Ok();
}

Status Daemon::SaveRecord(const JobRecord& r) {
  Status s = store_->Save(r);
  if (!s.ok()) spdlog::error("cannot record job {}: {}", r.id, s.message());
  return s;
}

void Daemon::LoadQueue() {
  gpu_count_ = CountGpus(options_.config.queue.gpus);
  ListFilter open;
  open.states = {JobState::kPending, JobState::kRunning, JobState::kSuspended};
  std::vector<std::pair<int64_t, std::string>> bad_rows;
  auto rows = store_->List(open, &bad_rows);
  if (!rows.ok()) {
    spdlog::error("cannot load the queue: {}", rows.status().message());
    return;
  }
  // One damaged row costs its own job, not the queue.
  for (const auto& [id, error] : bad_rows) {
    spdlog::error("{} cannot be read ({}): FAILED", JobName(id), error);
    Status st = store_->FailUnreadable(id, WallNow(), "its record cannot be read: " + error);
    if (!st.ok()) spdlog::error("{}: {}", JobName(id), st.message());
  }
  for (JobRecord& r : rows.value()) {
    if (r.state == JobState::kPending && r.kind == "run") {
      // Its `gshare run` waited on the previous daemon and gave up when that one went away.
      r.state = JobState::kCancelled;
      r.end_time = WallNow();
      SaveRecord(r);
    } else if (r.state == JobState::kPending) {
      queue_->Add(std::move(r));
    } else {
      // Re-adopted until its runner is found dead; its shims reconnect by themselves.
      auto job = std::make_unique<ActiveJob>();
      job->orphan = true;
      job->readopted = true;
      if (!r.end_request.empty()) {
        job->kill_at = Now() + Millis(r.kill_after_ms);
      }
      JobId id = r.id;
      staging_.Active(id);
      arbiter_.AddJob(id, r.priority, Millis(r.quantum_ms), r.uid);
      placement_.SetGang(r);
      job->record = std::move(r);
      table_.jobs[id] = std::move(job);
    }
  }
  next_orphan_check_ = {};  // at once
  QueueTick(Now());
  int adopted = 0;
  for (const auto& [id, job] : table_.jobs) adopted += job->ended ? 0 : 1;
  spdlog::info("queue: {} pending, {} running re-adopted, {} GPU slot(s) of {} job(s)",
               queue_->pending().size(), adopted, gpu_count_, options_.config.queue.max_running);
}

void Daemon::OnRunRegister(Connection& c, const json& req) {
  if (c.kind != Connection::Kind::kUnknown) return Drop(c.id, "second registration");
  JobRecord r;
  Status st = JobOptionsFromJson(req, &r, gpu_count_);
  if (!st.ok()) return Reply(c, ErrorReply(st.message()));
  st = queue_->CheckDependencies(r);
  if (st.ok()) st = access_.CheckPriority(c, r.priority);
  if (!st.ok()) return Reply(c, ErrorReply(st.message()));
  r.uid = c.uid;
  if (Status token = AssignToken(&r); !token.ok()) return Reply(c, ErrorReply(token.message()));
  r.kind = "run";
  r.state = JobState::kPending;
  r.submit_time = WallNow();
  r.runner_pid = c.pid;
  r.runner_start = ProcessStartTime(c.pid);
  auto id = store_->Insert(r);
  if (!id.ok()) return Reply(c, ErrorReply(id.status().message()));
  r.id = id.value();
  c.kind = Connection::Kind::kRunner;
  c.job = r.id;
  bool wait = r.held || (r.begin_time && *r.begin_time > r.submit_time) ||
              queue_->Dependencies(r) != DependencyState::kSatisfied;
  if (wait) {
    queue_->Add(r);
    return Reply(c, JobIdReply{r.id, false, false, r.token}.ToJsonText());
  }
  std::string slot = JoinSlots(ChooseSlots(GpuIndexList(r.gpu), r.gpus, placement_.RunningPerSlot(),
                                           gpu_count_, placement_.AllocatedPerSlot()));
  JobIdReply reply{r.id, true, false, r.token, placement_.VisibleDevicesOf(r.gpu, slot)};
  Activate(std::move(r), slot);
  Reply(c, reply.ToJsonText());
}

void Daemon::OnSubmit(Connection& c, const json& req) {
  c.kind = Connection::Kind::kCli;
  JobRecord r;
  JobPayload payload;
  Status st = JobOptionsFromJson(req, &r, gpu_count_);
  if (st.ok()) st = queue_->CheckDependencies(r);
  if (st.ok()) st = access_.CheckPriority(c, r.priority);
  if (!st.ok()) return Reply(c, ErrorReply(st.message()));
  try {
    payload.env = req.at("env").get<std::vector<std::string>>();
    if (req.contains("script") && !req.at("script").is_null()) {
      payload.script = req.at("script").get<std::string>();
    }
    if (req.contains("submit_key") && !req.at("submit_key").is_null()) {
      payload.submit_key = req.at("submit_key").get<std::string>();
    }
  } catch (const json::exception& e) {
    return Reply(c, ErrorReply(std::string("bad submission: ") + e.what()));
  }
  if (payload.submit_key.size() > 128) return Reply(c, ErrorReply("submit_key is too long"));
  if (!payload.submit_key.empty()) {
    // A retry of a submission whose reply was lost: the job it made, not a second one.
    Result<std::optional<int64_t>> known = store_->FindBySubmitKey(payload.submit_key);
    if (!known.ok()) return Reply(c, ErrorReply(known.status().message()));
    if (known.value()) {
      return Reply(c, JobIdReply{*known.value(), true, true, ""}.ToJsonText());
    }
  }
  std::string array;
  if (auto it = req.find("array"); it != req.end() && !it->is_null()) {
    if (!it->is_string())
      return Reply(c, ErrorReply("bad job options: \"array\" must be a string"));
    array = it->get<std::string>();
  }
  r.uid = c.uid;
  r.kind = "submit";
  r.state = JobState::kPending;
  r.submit_time = WallNow();
  if (r.output.empty()) {
    mkdir((processes_.FilesDir(r.uid) + "/logs").c_str(), 0700);
    r.output = processes_.FilesDir(r.uid) + "/logs/%j.out";
  }
  if (!array.empty()) return SubmitArray(c, std::move(r), payload, array);
  if (Status token = AssignToken(&r); !token.ok()) return Reply(c, ErrorReply(token.message()));
  auto id = store_->Insert(r, &payload);
  if (!id.ok()) return Reply(c, ErrorReply(id.status().message()));
  r.id = id.value();
  spdlog::debug("job {} submitted: {}", r.id, r.name);
  queue_->Add(std::move(r));
  Reply(c, JobIdReply{id.value(), true, false, ""}.ToJsonText());
}

void Daemon::Admission() {
  AdmissionLimits limits{gpu_count_,
                         options_.config.queue.max_running,
                         options_.config.queue.max_running_per_user,
                         placement_.AllocatedPerSlot(),
                         placement_.RunningPerArray(),
                         queue_->paused()};
  for (const BatchQueue::Start& start :
       queue_->Admit(placement_.RunningPerSlot(), limits, placement_.RunningPerUser())) {
    std::optional<JobRecord> r = queue_->Remove(start.id);
    if (!r) continue;
    const bool foreground = r->kind == "run";
    Activate(std::move(*r), start.slot);
    if (queue_->retrying()) break;  // the store refuses writes: the rest waits with it
    if (!foreground) continue;
    for (auto& [cid, c] : table_.conns) {
      if (c->kind != Connection::Kind::kRunner || c->job != static_cast<JobId>(start.id)) continue;
      json admitted{{"job_id", start.id}};
      auto active = table_.jobs.find(start.id);
      if (active != table_.jobs.end()) {
        std::string visible = placement_.VisibleDevicesOf(active->second->record.gpu, start.slot);
        if (!visible.empty()) admitted["visible"] = visible;
      }
      std::string frame = EncodeFrame(proto::MsgType::kRunAdmitted, ToJsonText(admitted));
      if (!Send(*c, frame)) spdlog::warn("job {}: cannot reach its gshare run", start.id);
      break;
    }
  }
}

void Daemon::Activate(JobRecord record, const std::string& slot) {
  const JobId id = record.id;
  // A requeued job's previous run may linger until its runner disconnects.
  if (auto old = table_.jobs.find(id); old != table_.jobs.end()) {
    arbiter_.RemoveJob(id);
    table_.jobs.erase(old);
    for (auto& [cid, c] : table_.conns) {
      if (c->job == id && c->kind == Connection::Kind::kRunner) c->job = 0;
    }
  }
  record.slot = slot;
  record.reason.clear();
  auto job = std::make_unique<ActiveJob>();
  job->record = std::move(record);
  staging_.Active(id);
  ActiveJob& active = *job;
  table_.jobs[id] = std::move(job);
  arbiter_.AddJob(id, active.record.priority, Millis(active.record.quantum_ms), active.record.uid);
  placement_.SetGang(active.record);
  if (active.record.kind != "submit") {
    SaveRecord(active.record);
    return;
  }
  active.record.state = JobState::kRunning;
  active.record.start_time = WallNow();
  active.orphan = true;  // until its supervisor attaches
  // RUNNING is durable before anything runs: a job the database still calls PENDING would
  // start again after a restart.
  if (!SaveRecord(active.record).ok()) {
    JobRecord back = std::move(active.record);
    arbiter_.RemoveJob(id);
    table_.jobs.erase(id);
    staging_.ForgetJob(id);
    back.state = JobState::kPending;
    back.start_time.reset();
    back.slot.clear();
    queue_->StartRefused(std::move(back));
    spdlog::warn("job {} stays pending: its start cannot be recorded", id);
    return;
  }
  Status st = processes_.SpawnSupervisor(active.record);
  SaveRecord(active.record);  // the supervisor's pid; without it, its end file still tells
  if (!st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
    FinishJob(id, JobState::kFailed, std::nullopt, std::nullopt, st.message());
    return;
  }
  spdlog::info("job {} started on GPU slot {} (supervisor pid {})", id, slot,
               active.record.runner_pid.value_or(0));
}

void Daemon::OnRunAttach(Connection& c, const json& req) {
  Result<RunAttachRequest> parsed = RunAttachRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const int64_t id = parsed->job_id;
  auto it = table_.jobs.find(id);
  if (c.kind != Connection::Kind::kUnknown || it == table_.jobs.end() || it->second->ended ||
      it->second->record.kind != "submit" || it->second->record.runner_pid != c.pid) {
    spdlog::warn("pid {} attached to job {}, which is not waiting for it", c.pid, id);
    return Reply(c, ErrorReply("job " + std::to_string(id) + " is not waiting for its supervisor"));
  }
  const JobRecord& r = it->second->record;
  auto payload = store_->GetPayload(PayloadIdOf(r));
  if (!payload.ok()) return Reply(c, ErrorReply(payload.status().message()));
  // A job submitted from inside an array task must not look like a task itself.
  std::erase_if(payload->env,
                [](const std::string& e) { return e.rfind("GSHARE_ARRAY_", 0) == 0; });
  c.kind = Connection::Kind::kRunner;
  c.job = id;
  it->second->orphan = false;
  json set_env{{"GSHARE_SOCKET", options_.socket_path},
               {"GSHARE_JOB_ID", std::to_string(id)},
               {"GSHARE_JOB_NAME", r.name},
               {"GSHARE_JOB_TOKEN", r.token}};
  if (r.IsArrayTask()) {  // Slurm's SLURM_ARRAY_* under our prefix
    set_env["GSHARE_ARRAY_JOB_ID"] = std::to_string(r.array_job_id);
    set_env["GSHARE_ARRAY_TASK_ID"] = std::to_string(r.array_task_id);
    set_env["GSHARE_ARRAY_TASK_COUNT"] = std::to_string(r.array_task_count);
    set_env["GSHARE_ARRAY_TASK_MIN"] = std::to_string(r.array_task_min);
    set_env["GSHARE_ARRAY_TASK_MAX"] = std::to_string(r.array_task_max);
  }
  for (const auto& [name, value] : LeaseEnv(options_.config.scheduler)) set_env[name] = value;
  set_env["GSHARE_MEMORY"] = r.memory.empty() ? options_.config.memory.engine : r.memory;
  if (std::string visible = placement_.VisibleDevicesOf(r.gpu, r.slot); !visible.empty())
    set_env["CUDA_VISIBLE_DEVICES"] = visible;
  for (const auto& [name, value] : SharingEnvDefaults(
           [&payload](const std::string& name) { return EnvListHas(payload->env, name); })) {
    set_env[name] = value;
  }
  std::string shim = FindShim(options_.self_exe);
  if (shim.empty())
    spdlog::warn("job {}: no libgshare.so next to {}; it runs unshared", id, options_.self_exe);
  json reply{{"ok", true},
             {"argv", r.argv},
             {"env", payload->env},
             {"set_env", set_env},
             {"preload", shim.empty() ? json::array() : json::array({shim})},
             {"cwd", r.cwd},
             {"output", ExpandOutputPattern(r.output, id, r.name, UserName(r.uid), r.array_job_id,
                                            ArrayTaskIdOf(r))},
             {"time_limit_ms", r.time_limit_ms},
             {"kill_after_ms", r.kill_after_ms},
             {"script", payload->script ? json(*payload->script) : json(nullptr)},
             {"script_path", processes_.FilesDir(r.uid) + "/scripts/" + std::to_string(id)},
             {"end_path", JobEndPath(processes_.FilesDir(r.uid), id)},
             {"start_path", JobStartPath(processes_.FilesDir(r.uid), id)}};
  Reply(c, ToJsonText(reply));
}

void Daemon::OnRunStarted(Connection& c, const json& req) {
  Result<RunStartedRequest> parsed = RunStartedRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  if (c.kind != Connection::Kind::kRunner || table_.jobs.count(c.job) == 0) {
    return Drop(c.id, "start without a job");
  }
  ActiveJob& job = *table_.jobs.at(c.job);
  job.record.pid = parsed->pid;
  job.record.state = JobState::kRunning;
  // The job started now, whenever admission stored it RUNNING: a supervisor that could attach
  // only to the next daemon (this one died meanwhile) starts its job seconds later.
  job.record.start_time = WallNow();
  SaveRecord(job.record);
  timeline_.Note(TimelineKind::kJobStart, c.job, "", parsed->pid, 0, 0, job.record.kind);
  Reply(c, OkReply());
  // Cancelled while its supervisor was starting it.
  if (!job.record.end_request.empty()) processes_.SignalGroup(job, SIGTERM);
}

void Daemon::AdoptUnreportedPid(ActiveJob& job) {
  std::optional<pid_t> pid = processes_.UnreportedPid(job.record);
  if (!pid) return;
  job.record.pid = *pid;
  SaveRecord(job.record);
  spdlog::info("job {}: its start was not reported; pid {} found under its supervisor",
               job.record.id, *pid);
  // Cancelled before its pid was known.
  if (!job.record.end_request.empty()) processes_.SignalGroup(job, SIGTERM);
}

void Daemon::OnRunEnded(Connection& c, const json& req) {
  // From the runner's own connection, or a fresh one after a daemon restart.
  Result<RunEndedRequest> parsed = RunEndedRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  JobId id = c.kind == Connection::Kind::kRunner && c.job != 0 ? c.job : parsed->job_id;
  auto it = table_.jobs.find(id);
  // Without its runner's connection: only for a job whose runner is not connected (re-adopted).
  if (c.kind != Connection::Kind::kRunner &&
      (it == table_.jobs.end() || it->second->ended || !it->second->orphan)) {
    // Its end was read from its end file meanwhile (after a restart): the report is done.
    if (std::optional<JobState> state = queue_->StateOf(id); state && IsFinal(*state)) {
      return Reply(c, ToJsonText(json{{"ok", true}, {"already_recorded", true}}));
    }
    return Reply(c, ErrorReply("job " + std::to_string(id) + " is not running"));
  }
  EndJob(id, parsed->end);
  Reply(c, OkReply());
}

void Daemon::EndJob(JobId id, const JobEnd& end) {
  auto it = table_.jobs.find(id);
  if (it == table_.jobs.end() || it->second->ended) return;
  ActiveJob& job = *it->second;
  const std::string request = job.record.end_request;
  if (request == "requeue") {
    job.ended = true;
    const JobRun ran = RequeuedRun(id, job, end);
    JobRecord again = job.record;
    ResetForQueue(again);
    SaveRequeued(ran, &again);
    job.record.state = JobState::kPending;
    queue_->Add(std::move(again));
    timeline_.Note(TimelineKind::kJobEnd, id, "", job.record.pid.value_or(0), 0, 0, "REQUEUED");
    spdlog::info("job {} requeued", id);
  } else {
    JobState state = request == "cancel" ? JobState::kCancelled : FinalStateOf(end);
    FinishJob(id, state, end.exit_code, end.signal, end.error, end.end_time);
  }
  unlink(JobEndPath(processes_.FilesDir(job.record.uid), id).c_str());
  unlink(JobStartPath(processes_.FilesDir(job.record.uid), id).c_str());
}

void Daemon::KillProcess(pid_t pid) { kill(pid, SIGKILL); }

std::optional<TimePoint> Daemon::QueueDeadline() const {
  std::optional<TimePoint> deadline = queue_->Deadline();
  auto earliest = [&deadline](TimePoint t) { deadline = deadline ? std::min(*deadline, t) : t; };
  for (const auto& [id, job] : table_.jobs) {
    if (job->ended) continue;
    if (job->kill_at) earliest(*job->kill_at);
    if (job->orphan) earliest(next_orphan_check_);
  }
  return deadline;
}

void Daemon::QueueTick(TimePoint now) {
  std::vector<JobId> lost;
  std::vector<std::pair<JobId, JobEnd>> reported;
  for (auto& [id, job] : table_.jobs) {
    if (job->ended) continue;
    if (job->kill_at && now >= *job->kill_at) {
      processes_.SignalGroup(*job, SIGKILL);
      job->kill_at.reset();
    }
    if (job->orphan && now >= next_orphan_check_) {
      AdoptUnreportedPid(*job);
      const JobRecord& r = job->record;
      if (std::optional<JobEnd> end = ReadJobEnd(JobEndPath(processes_.FilesDir(r.uid), id))) {
        reported.emplace_back(id, *end);
      } else if (!(r.runner_pid && r.runner_start &&
                   SameProcessAlive(*r.runner_pid, *r.runner_start))) {
        lost.push_back(id);
      }
    }
  }
  if (now >= next_orphan_check_) next_orphan_check_ = now + std::chrono::seconds(1);
  for (const auto& [id, end] : reported) EndJob(id, end);
  for (JobId id : lost) {
    ActiveJob& job = *table_.jobs.at(id);
    if (job.record.kind == "slurm") {
      // Its step's slurmstepd is gone: Slurm ended the step (its exit status is Slurm's).
      spdlog::info("job {}: Slurm step {} ended", id,
                   StepName(job.record.slurm_job_id, job.record.slurm_step));
      FinishJob(id, JobState::kCompleted, std::nullopt, std::nullopt, "");
      continue;
    }
    if (job.record.kind == "submit" && !job.record.pid &&
        access(JobStartPath(processes_.FilesDir(job.record.uid), id).c_str(), F_OK) != 0) {
      // Its supervisor ended before it started anything (the daemon died before it attached,
      // or it was killed): nothing ran, so the job goes back to the queue.
      spdlog::warn("job {}: its supervisor ended before starting it: PENDING again", id);
      job.ended = true;
      JobRecord again = job.record;
      ResetForQueue(again);
      again.reason = "";
      if (SaveRecord(again).ok()) {
        queue_->Add(std::move(again));
        continue;
      }
      job.ended = false;
    }
    if (job.readopted) {
      spdlog::warn("job {}: its runner is gone and left no exit status: LOST", id);
      FinishJob(id, JobState::kLost, std::nullopt, std::nullopt, "");
    } else {
      FinishJob(id, JobState::kFailed, std::nullopt, std::nullopt,
                "job supervisor ended unexpectedly");
    }
  }
  for (const auto& [id, end] : reported) ForgetJobIfDone(id);
  for (JobId id : lost) ForgetJobIfDone(id);
  Admission();
}

}  // namespace gshare
