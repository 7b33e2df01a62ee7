#include "daemon/jobs/job_requests.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "base/array_spec.h"
#include "base/gpu_inventory.h"
#include "base/job_token.h"
#include "model/job_record.h"
#include "base/process_identity.h"
#include "base/user_name.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"
#include "policy/dependency.h"
#include "runner/launch_plan.h"
#include "runner/sharing_env.h"
#include "runner/shim_path.h"
#include "gshare/job_env.h"

namespace gshare {

using json = nlohmann::json;

Status JobRequests::AssignToken(JobRecord* r) {
  Result<std::string> token = NewJobToken();
  if (!token.ok()) return token.status();
  r->token = std::move(token.value());
  return Status::Ok();
}

void JobRequests::OnRunRegister(Connection& c, const json& req) {
  if (c.kind != Connection::Kind::kUnknown) return drop_(c.id, "second registration");
  Result<RunRegisterRequest> parsed = RunRegisterRequest::Parse(req, gpu_count_());
  if (!parsed.ok()) return reply_(c, ErrorReply(parsed.status().message()));
  JobRecord& r = parsed->job;
  Status st = p_.queue.CheckDependencies(r);
  if (st.ok()) st = access_.CheckPriority(c, r.priority);
  if (!st.ok()) return reply_(c, ErrorReply(st.message()));
  r.uid = c.uid;
  if (Status token = AssignToken(&r); !token.ok()) return reply_(c, ErrorReply(token.message()));
  r.kind = JobKind::kRun;
  r.state = JobState::kPending;
  r.submit_time = p_.clock.WallNow();
  r.runner_pid = c.pid;
  r.runner_start = ProcessStartTime(c.pid);
  auto id = p_.store.Insert(r);
  if (!id.ok()) return reply_(c, ErrorReply(id.status().message()));
  r.id = id.value();
  c.kind = Connection::Kind::kRunner;
  c.job = r.id;
  bool wait = r.held || (r.begin_time && *r.begin_time > r.submit_time) ||
              p_.queue.Dependencies(r) != DependencyState::kSatisfied;
  if (wait) {
    p_.queue.Add(r);
    return reply_(c, JobIdReply{r.id, false, false, r.token}.ToJsonText());
  }
  std::string slot =
      JoinSlots(ChooseSlots(GpuIndexList(r.gpu), r.gpus, p_.placement.RunningPerSlot(),
                            gpu_count_(), p_.placement.AllocatedPerSlot()));
  JobIdReply reply{r.id, true, false, r.token, p_.placement.VisibleDevicesOf(r.gpu, slot)};
  reply.env = p_.placement.LaunchEnvOf(r, slot);
  lifecycle_.Activate(std::move(r), slot);
  reply_(c, reply.ToJsonText());
}

void JobRequests::OnSubmit(Connection& c, const json& req) {
  Result<SubmitRequest> parsed = SubmitRequest::Parse(req, gpu_count_());
  if (!parsed.ok()) return reply_(c, ErrorReply(parsed.status().message()));
  JobRecord& r = parsed->job;
  Status st = p_.queue.CheckDependencies(r);
  if (st.ok()) st = access_.CheckPriority(c, r.priority);
  if (!st.ok()) return reply_(c, ErrorReply(st.message()));
  JobPayload payload;
  payload.env = std::move(parsed->env);
  payload.script = std::move(parsed->script);
  payload.submit_key = std::move(parsed->submit_key);
  if (!payload.submit_key.empty()) {
    // A retry of a submission whose reply was lost: the job it made, not a second one.
    Result<std::optional<int64_t>> known = p_.store.FindBySubmitKey(payload.submit_key);
    if (!known.ok()) return reply_(c, ErrorReply(known.status().message()));
    if (known.value()) {
      return reply_(c, JobIdReply{*known.value(), true, true, ""}.ToJsonText());
    }
  }
  const std::string& array = parsed->array;
  r.uid = c.uid;
  r.kind = JobKind::kSubmit;
  r.state = JobState::kPending;
  r.submit_time = p_.clock.WallNow();
  if (r.output.empty()) {
    mkdir((p_.processes.FilesDir(r.uid) + "/logs").c_str(), 0700);
    r.output = p_.processes.FilesDir(r.uid) + "/logs/%j.out";
  }
  if (!array.empty()) return SubmitArray(c, std::move(r), payload, array);
  if (Status token = AssignToken(&r); !token.ok()) return reply_(c, ErrorReply(token.message()));
  auto id = p_.store.Insert(r, &payload);
  if (!id.ok()) return reply_(c, ErrorReply(id.status().message()));
  r.id = id.value();
  spdlog::debug("job {} submitted: {}", r.id, r.name);
  p_.queue.Add(std::move(r));
  reply_(c, JobIdReply{id.value(), true, false, ""}.ToJsonText());
}

void JobRequests::OnRunAttach(Connection& c, const json& req) {
  Result<RunAttachRequest> parsed = RunAttachRequest::Parse(req);
  if (!parsed.ok()) return reply_(c, ErrorReply(parsed.status().message()));
  const int64_t id = parsed->job_id;
  auto it = p_.table.jobs.find(id);
  if (c.kind != Connection::Kind::kUnknown || it == p_.table.jobs.end() || it->second->ended ||
      it->second->record.kind != JobKind::kSubmit || it->second->record.runner_pid != c.pid ||
      (c.uid != it->second->record.uid && c.uid != 0)) {
    spdlog::warn("pid {} attached to job {}, which is not waiting for it", c.pid, id);
    return reply_(c,
                  ErrorReply("job " + std::to_string(id) + " is not waiting for its supervisor"));
  }
  JobRecord& r = it->second->record;
  auto payload = p_.store.GetPayload(PayloadIdOf(r));
  if (!payload.ok()) return reply_(c, ErrorReply(payload.status().message()));
  r.mps_isolation = MpsOptedOut(payload->env);  // before LaunchEnvOf: it decides the MPS client
  // A job submitted from inside an array task must not look like a task itself.
  std::erase_if(payload->env,
                [](const std::string& e) { return e.rfind(job_env::kArrayPrefix, 0) == 0; });
  c.kind = Connection::Kind::kRunner;
  c.job = id;
  it->second->orphan = false;
  LaunchPlan plan;
  plan.socket = p_.options.socket_path;
  plan.job_id = id;
  plan.job_name = r.name;
  plan.token = r.token;
  plan.memory = r.memory ? r.memory : ParseMemoryEngine(p_.options.config.memory.engine);
  plan.visible = p_.placement.VisibleDevicesOf(r.gpu, r.slot);
  plan.daemon_env = p_.placement.LaunchEnvOf(r, r.slot);
  plan.scheduler = p_.options.config.scheduler;
  RunAttachReply reply;
  reply.set_env = LaunchVariables(
      plan, [&payload](const std::string& name) { return EnvListHas(payload->env, name); },
      r.mps_isolation);
  if (r.IsArrayTask()) {  // Slurm's SLURM_ARRAY_* under our prefix
    reply.set_env.emplace_back(job_env::kArrayJobId, std::to_string(r.array_job_id));
    reply.set_env.emplace_back(job_env::kArrayTaskId, std::to_string(r.array_task_id));
    reply.set_env.emplace_back(job_env::kArrayTaskCount, std::to_string(r.array_task_count));
    reply.set_env.emplace_back(job_env::kArrayTaskMin, std::to_string(r.array_task_min));
    reply.set_env.emplace_back(job_env::kArrayTaskMax, std::to_string(r.array_task_max));
  }
  std::string shim = FindShim(p_.options.self_exe);
  if (shim.empty())
    spdlog::warn("job {}: no libgshare.so next to {}; it runs unshared", id, p_.options.self_exe);
  if (!shim.empty()) reply.preload = {shim};
  const std::string owner = UserName(r.uid);
  reply.argv = r.argv;
  reply.env = std::move(payload->env);
  reply.cwd = r.cwd;
  reply.output = JobFilePath(r.output, r, owner);
  reply.error = r.error.empty() ? std::string() : JobFilePath(r.error, r, owner);
  reply.open_append = r.open_append;
  reply.warn_signal = r.warn_signal;
  reply.warn_ms = r.warn_ms;
  reply.warn_main_only = r.warn_main_only;
  reply.time_limit_ms = r.time_limit_ms;
  reply.kill_after_ms = r.kill_after_ms;
  reply.script = payload->script;
  reply.script_path = p_.processes.FilesDir(r.uid) + "/scripts/" + std::to_string(id);
  reply.end_path = JobEndPath(p_.processes.FilesDir(r.uid), id);
  reply.start_path = JobStartPath(p_.processes.FilesDir(r.uid), id);
  reply_(c, reply.ToJsonText());
}

void JobRequests::OnRunStarted(Connection& c, const json& req) {
  Result<RunStartedRequest> parsed = RunStartedRequest::Parse(req);
  if (!parsed.ok()) return reply_(c, ErrorReply(parsed.status().message()));
  if (c.kind != Connection::Kind::kRunner || p_.table.jobs.count(c.job) == 0) {
    return drop_(c.id, "start without a job");
  }
  lifecycle_.Started(*p_.table.jobs.at(c.job), parsed->pid);
  reply_(c, OkReply());
}

void JobRequests::OnRunEnded(Connection& c, const json& req) {
  Result<RunEndedRequest> parsed = RunEndedRequest::Parse(req);
  if (!parsed.ok()) return reply_(c, ErrorReply(parsed.status().message()));
  // On the runner's own connection: the job it registered or attached to, whatever it names.
  if (c.kind == Connection::Kind::kRunner) {
    lifecycle_.End(c.job, parsed->end);  // nothing when it ended meanwhile
    return reply_(c, OkReply());
  }
  // On a connection of its own: a runner whose connection went with a daemon restart, for a
  // job re-adopted without it (an orphan), proven by the job's token and the owner's uid.
  const JobId id = parsed->job_id;
  auto it = p_.table.jobs.find(id);
  if (it == p_.table.jobs.end() || it->second->ended) {
    // Its end was read from its end file meanwhile (after a restart): the report is done.
    if (std::optional<JobState> state = p_.queue.StateOf(id); state && IsFinal(*state)) {
      return reply_(c, ToJsonText(json{{"ok", true}, {"already_recorded", true}}));
    }
    return reply_(c, ErrorReply("job " + std::to_string(id) + " is not running"));
  }
  const JobRecord& r = it->second->record;
  if (Status may = access_.MayRun(c, r.uid, r.token, parsed->token, id); !may.ok()) {
    return reply_(c, ErrorReply(may.message()));
  }
  // Its runner attached again (a supervisor that reached the new daemon): only its connection
  // reports the end.
  if (!it->second->orphan) {
    return reply_(c, ErrorReply("job " + std::to_string(id) +
                                " has its runner connected: only that connection reports its end"));
  }
  lifecycle_.End(id, parsed->end);
  reply_(c, OkReply());
}

void JobRequests::SubmitArray(Connection& c, JobRecord r, const JobPayload& payload,
                              const std::string& spec) {
  // The client checked it too; a request is hostile until read (docs/design.md §7).
  Result<ArraySpec> parsed = ParseArraySpec(spec);
  if (!parsed.ok()) {
    return reply_(c, ErrorReply("bad job options: --array: " + parsed.status().message()));
  }
  const std::vector<int64_t>& ids = parsed->task_ids;
  r.array_task_count = static_cast<int64_t>(ids.size());
  r.array_task_min = ids.front();
  r.array_task_max = ids.back();
  r.array_limit = parsed->limit;
  std::vector<JobRecord> tasks;
  tasks.reserve(ids.size());
  for (int64_t task : ids) {
    JobRecord& t = tasks.emplace_back(r);
    t.array_task_id = task;
    if (Status token = AssignToken(&t); !token.ok()) return reply_(c, ErrorReply(token.message()));
  }
  if (Status st = p_.store.InsertArray(&tasks, payload); !st.ok()) {
    return reply_(c, ErrorReply(st.message()));
  }
  const int64_t array_id = tasks.front().array_job_id;
  spdlog::debug("job array {} submitted: {} task(s) of {}", array_id, tasks.size(), r.name);
  for (JobRecord& t : tasks) p_.queue.Add(std::move(t));
  reply_(c, JobIdReply{array_id, true, false, ""}.ToJsonText());
}

}  // namespace gshare
