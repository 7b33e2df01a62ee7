// Job control requests of the daemon (docs/cli.md): cancel, requeue, hold, release,
// set-priority and signal (clean: daemon_retention.cc). Each acts on a list of job ids and answers
// per id.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "base/config.h"
#include "base/slurm_step.h"
#include "daemon/daemon.h"
#include "ipc/replies.h"
#include "ipc/job_json.h"
#include "ipc/requests.h"
#include "policy/dependency.h"

namespace gshare {
namespace {

using json = nlohmann::json;

}  // namespace

Status Daemon::CancelJob(int64_t id, bool requeue) {
  const double now = WallNow();
  if (const JobRecord* pending = queue_->Pending(id)) {
    if (requeue) return Status::Error(JobName(id) + " is already pending");
    JobRecord r = *pending;
    r.state = JobState::kCancelled;
    r.reason.clear();
    r.end_time = now;
    Status saved = SaveRecord(r);
    if (!saved.ok()) return saved;  // still pending, as the database says
    queue_->Remove(id);
    queue_->Ended(id, r.state);
    spdlog::info("job {} CANCELLED while pending", id);
    processes_.NotifyEnd(r);
    if (r.kind == "run") {  // its `gshare run` waits for admission: tell it
      for (auto& [cid, c] : table_.conns) {
        if (c->kind == Connection::Kind::kRunner && c->job == static_cast<JobId>(id)) {
          Reply(*c, ErrorReply(JobName(id) + " was cancelled"));
          break;
        }
      }
    }
    return Status::Ok();
  }
  if (auto it = table_.jobs.find(id);
      it != table_.jobs.end() && !it->second->ended && !it->second->adhoc) {
    ActiveJob& job = *it->second;
    if (job.record.kind == "slurm") {
      return Status::Error(JobName(id) + " is Slurm step " +
                           StepName(job.record.slurm_job_id, job.record.slurm_step) +
                           ": Slurm ends it (scancel " + std::to_string(job.record.slurm_job_id) +
                           ")");
    }
    if (requeue && job.record.kind != "submit") {
      return Status::Error(JobName(id) +
                           " is a `gshare run` job: only submitted jobs can be requeued");
    }
    if (job.orphan) AdoptUnreportedPid(job);
    JobRecord r = job.record;
    r.end_request = requeue ? "requeue" : "cancel";
    Status saved = SaveRecord(r);
    if (!saved.ok()) return saved;
    job.record = std::move(r);
    processes_.SignalGroup(job, SIGTERM);  // when its pid is not known yet, OnRunStarted sends it
    // A suspended job must run to see it; a checkpointed process that blocks in CUDA on its
    // way out gets SIGKILL after --kill-after.
    if (job.suspension == ActiveJob::Suspension::kStopped) processes_.SignalAll(job, SIGCONT);
    job.kill_at = Now() + Millis(job.record.kill_after_ms);
    spdlog::info("job {}: {} requested (SIGTERM)", id, job.record.end_request);
    return Status::Ok();
  }
  auto row = store_->Get(id);
  if (!row.ok()) return row.status();
  if (!row.value()) return Status::Error("no " + JobName(id));
  JobRecord r = std::move(*row.value());
  if (!requeue || !IsFinal(r.state)) {
    return Status::Error(JobName(id) + " is already " + JobStateName(r.state));
  }
  if (r.kind != "submit") {
    return Status::Error(JobName(id) +
                         " is a `gshare run` job: only submitted jobs can be requeued");
  }
  const JobRun ran{r, false};
  ResetForQueue(r);
  Status saved = SaveRequeued(ran, &r);
  if (!saved.ok()) return saved;
  queue_->Add(std::move(r));
  spdlog::info("job {} requeued", id);
  return Status::Ok();
}

Status Daemon::UpdatePending(JobRecord& pending, const JobControlRequest::Update& u) {
  JobRecord r = pending;
  if (u.name) r.name = *u.name;
  if (u.time_limit_ms) r.time_limit_ms = *u.time_limit_ms;
  if (u.begin_time) {
    r.begin_time = *u.begin_time > 0 ? std::optional<double>(*u.begin_time) : std::nullopt;
  }
  if (u.dependency) {
    if (u.dependency->empty()) {
      r.dependency.clear();
    } else {
      Result<std::vector<Dependency>> deps = ParseDependencies(*u.dependency);
      if (!deps.ok()) return deps.status();
      // Only pending jobs can still wait on r: a cycle would keep them all pending for ever.
      std::vector<int64_t> todo;
      for (const Dependency& d : deps.value()) todo.push_back(d.job);
      std::set<int64_t> seen;
      while (!todo.empty()) {
        int64_t id = todo.back();
        todo.pop_back();
        if (id == r.id) {
          return Status::Error("a dependency of " + JobName(r.id) + " on " +
                               JobName(deps->front().job) + " would wait for itself");
        }
        const JobRecord* p = seen.insert(id).second ? queue_->Pending(id) : nullptr;
        if (p == nullptr || p->dependency.empty()) continue;
        Result<std::vector<Dependency>> next = ParseDependencies(p->dependency);
        for (const Dependency& d : next.ok() ? next.value() : std::vector<Dependency>{}) {
          todo.push_back(d.job);
        }
      }
      r.dependency = FormatDependencies(deps.value());
      if (Status st = queue_->CheckDependencies(r); !st.ok()) return st;
    }
  }
  if (Status st = SaveRecord(r); !st.ok()) return st;
  pending = std::move(r);
  queue_->Changed();
  return Status::Ok();
}

void Daemon::OnJobControl(Connection& c, const json& req) {
  Result<JobControlRequest> parsed = JobControlRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const std::string& action = parsed->action;
  // An array's job id stands for its tasks that the action applies to, as in scancel and
  // scontrol: hold and release its pending ones, suspend, resume and signal its running ones,
  // cancel and set-priority both; requeue takes ended jobs, by their own ids.
  const bool on_pending = action != "suspend" && action != "resume" && action != "signal";
  const bool on_active = action != "hold" && action != "release" && action != "update";
  const std::vector<int64_t> ids =
      action == "requeue"
          ? parsed->ids
          : placement_.ExpandArrayIds(parsed->ids, queue_->pending(), on_pending, on_active);
  const int priority = parsed->priority;
  const int sig = parsed->signal;
  JobControlReply reply;
  for (int64_t id : ids) {
    Status st = access_.MayControl(c, id, action);
    if (st.ok() && action == "set-priority") st = access_.CheckPriority(c, priority);
    if (!st.ok()) {
      reply.results.push_back({id, st.message()});
      continue;
    }
    JobRecord* pending = queue_->Pending(id);
    auto active = table_.jobs.find(id);
    const bool running = active != table_.jobs.end() && !active->second->ended;
    if (action == "cancel" || action == "requeue") {
      st = CancelJob(id, action == "requeue");
    } else if (action == "suspend") {
      st = engine_.Suspend(id);
    } else if (action == "resume") {
      st = engine_.Resume(id, parsed->gpu);
    } else if (action == "hold" || action == "release") {
      if (pending == nullptr) {
        st = NotInState(id, "pending");
      } else {
        JobRecord r = *pending;
        r.held = action == "hold";
        st = SaveRecord(r);
        if (st.ok()) *pending = std::move(r);
        queue_->Changed();
      }
    } else if (action == "update") {
      st = pending == nullptr ? NotInState(id, "pending") : UpdatePending(*pending, parsed->update);
    } else if (action == "set-priority") {
      if (pending != nullptr) {
        JobRecord r = *pending;
        r.priority = priority;
        st = SaveRecord(r);
        if (st.ok()) *pending = std::move(r);
        queue_->Changed();
      } else if (running) {
        st = SetActivePriority(*active->second, priority);
      } else {
        st = NotInState(id, "pending or running");
      }
    } else {  // signal
      if (!running || !processes_.SignalGroup(*active->second, sig)) {
        st = Status::Error(JobName(id) + " is not running");
      }
    }
    reply.results.push_back({id, st.ok() ? "" : st.message()});
  }
  Reply(c, reply.ToJsonText());
}

Status Daemon::SetActivePriority(ActiveJob& job, int priority) {
  JobRecord r = job.record;
  r.priority = priority;
  Status st = SaveRecord(r);
  if (!st.ok()) return st;
  job.record = std::move(r);
  arbiter_.SetPriority(job.record.id, priority);
  for (ConnId conn : job.shims) lanes_.SetPriority(conn, priority);
  messenger_.SendSeats();
  return Status::Ok();
}

}  // namespace gshare
