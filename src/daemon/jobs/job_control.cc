#include "daemon/jobs/job_control.h"

#include <set>
#include <utility>
#include <vector>

#include "policy/dependency.h"

namespace gshare {

JobControlReply JobControl::Handle(Connection& c, const JobControlRequest& request) {
  const std::string& action = request.action;
  // An array's job id stands for its tasks that the action applies to, as in scancel and
  // scontrol: hold and release its pending ones, suspend, resume and signal its running ones,
  // cancel and set-priority both; requeue takes ended jobs, by their own ids.
  const bool on_pending = action != "suspend" && action != "resume" && action != "signal";
  const bool on_active = action != "hold" && action != "release" && action != "update";
  std::vector<int64_t> ids = action == "requeue"
                                 ? request.ids
                                 : jobs_.placement.ExpandArrayIds(
                                       request.ids, jobs_.queue.pending(), on_pending, on_active);
  // A task named as J_T is that job alone, whatever else it is. An array's id may expand to
  // many tasks: the ones already there are looked up in a set, not searched for each.
  if (!request.exact_ids.empty()) {
    std::set<int64_t> listed(ids.begin(), ids.end());
    for (int64_t id : request.exact_ids) {
      if (listed.insert(id).second) ids.push_back(id);
    }
  }
  JobControlReply reply;
  for (int64_t id : ids) {
    Status st = p_.access.MayControl(c, id, action);
    if (st.ok() && action == "set-priority") st = p_.access.CheckPriority(c, request.priority);
    if (!st.ok()) {
      reply.results.push_back({id, st.message()});
      continue;
    }
    JobRecord* pending = jobs_.queue.Pending(id);
    auto active = jobs_.table.jobs.find(id);
    const bool running = active != jobs_.table.jobs.end() && !active->second->ended;
    if (action == "cancel" || action == "requeue") {
      st = p_.lifecycle.Cancel(id, action == "requeue");
    } else if (action == "suspend") {
      st = checkpoints_.suspend(id);
    } else if (action == "resume") {
      st = checkpoints_.resume(id, request.gpu);
    } else if (action == "hold" || action == "release") {
      st = pending == nullptr
               ? jobs_.queue.NotInState(id, "pending")
               : ChangePending(*pending, [&action](JobRecord& r) { r.held = action == "hold"; });
    } else if (action == "update") {
      st = pending == nullptr ? jobs_.queue.NotInState(id, "pending")
                              : UpdatePending(*pending, request.update);
    } else if (action == "set-priority") {
      if (pending != nullptr) {
        st = ChangePending(*pending, [&request](JobRecord& r) { r.priority = request.priority; });
      } else if (running) {
        st = SetActivePriority(*active->second, request.priority);
      } else {
        st = jobs_.queue.NotInState(id, "pending or running");
      }
    } else {  // signal
      if (!running || !jobs_.processes.SignalGroup(*active->second, request.signal)) {
        st = Status::Error(JobName(id) + " is not running");
      }
    }
    reply.results.push_back({id, st.ok() ? "" : st.message()});
  }
  return reply;
}

Status JobControl::ChangePending(JobRecord& pending,
                                 const std::function<void(JobRecord&)>& change) {
  JobRecord r = pending;
  change(r);
  Status st = p_.lifecycle.Save(r);
  if (st.ok()) pending = std::move(r);
  jobs_.queue.Changed();
  return st;
}

Status JobControl::UpdatePending(JobRecord& pending, const JobControlRequest::Update& u) {
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
      const std::vector<int64_t> named = NamedJobs(deps.value());
      std::vector<int64_t> todo = named;
      std::set<int64_t> seen;
      while (!todo.empty()) {
        int64_t id = todo.back();
        todo.pop_back();
        if (id == r.id) {
          return Status::Error("a dependency of " + JobName(r.id) + " on " +
                               JobName(named.front()) + " would wait for itself");
        }
        const JobRecord* p = seen.insert(id).second ? jobs_.queue.Pending(id) : nullptr;
        if (p == nullptr || p->dependency.empty()) continue;
        Result<std::vector<Dependency>> next = ParseDependencies(p->dependency);
        if (next.ok()) {
          for (int64_t job : NamedJobs(next.value())) todo.push_back(job);
        }
      }
      r.dependency = FormatDependencies(deps.value());
      if (Status st = jobs_.queue.CheckDependencies(r); !st.ok()) return st;
    }
  }
  if (Status st = p_.lifecycle.Save(r); !st.ok()) return st;
  pending = std::move(r);
  jobs_.queue.Changed();
  return Status::Ok();
}

Status JobControl::SetActivePriority(ActiveJob& job, int priority) {
  JobRecord r = job.record;
  r.priority = priority;
  Status st = p_.lifecycle.Save(r);
  if (!st.ok()) return st;
  job.record = std::move(r);
  jobs_.arbiter.SetPriority(job.record.id, priority);
  for (ConnId conn : job.shims) p_.lanes.SetPriority(conn, priority);
  p_.messenger.SendSeats();
  return Status::Ok();
}

}  // namespace gshare
