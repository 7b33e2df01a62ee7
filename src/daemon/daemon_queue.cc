// The batch queue's requests in the daemon (docs/cli.md): submissions, `gshare run` registration,
// the attach, start and end reports of the supervisors of submitted jobs. What follows from
// them (admission, end, recovery after a restart) is JobLifecycle's; job control is JobControl's,
// clean is in daemon_retention.cc.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

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
  lifecycle_->Activate(std::move(r), slot);
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
  lifecycle_->Started(*table_.jobs.at(c.job), parsed->pid);
  Reply(c, OkReply());
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
  lifecycle_->End(id, parsed->end);
  Reply(c, OkReply());
}

void Daemon::KillProcess(pid_t pid) { kill(pid, SIGKILL); }

}  // namespace gshare
