// Job control requests of the daemon (docs/cli.md): cancel, requeue, hold, release,
// set-priority and signal (clean: daemon_retention.cc). Each acts on a list of job ids and answers
// per id.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "base/config.h"
#include "daemon/daemon.h"
#include "ipc/replies.h"
#include "ipc/job_json.h"
#include "ipc/requests.h"
#include "policy/dependency.h"

namespace gshare {
namespace {

using json = nlohmann::json;

}  // namespace

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
  if (Status st = lifecycle_->Save(r); !st.ok()) return st;
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
      st = lifecycle_->Cancel(id, action == "requeue");
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
        st = lifecycle_->Save(r);
        if (st.ok()) *pending = std::move(r);
        queue_->Changed();
      }
    } else if (action == "update") {
      st = pending == nullptr ? NotInState(id, "pending") : UpdatePending(*pending, parsed->update);
    } else if (action == "set-priority") {
      if (pending != nullptr) {
        JobRecord r = *pending;
        r.priority = priority;
        st = lifecycle_->Save(r);
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
  Status st = lifecycle_->Save(r);
  if (!st.ok()) return st;
  job.record = std::move(r);
  arbiter_.SetPriority(job.record.id, priority);
  for (ConnId conn : job.shims) lanes_.SetPriority(conn, priority);
  messenger_.SendSeats();
  return Status::Ok();
}

}  // namespace gshare
