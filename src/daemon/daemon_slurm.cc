// Slurm steps under the daemon (docs/slurm.md). A task of a Slurm job step joins through
// `gshare slurm task-prolog` (kSlurmStep): the daemon reads the step from the asker's process
// tree (base/slurm_step.h), makes one gshare job per step (kind "slurm", RUNNING at once: Slurm
// has already scheduled it) on the GPUs Slurm gave it, and hands every task of the step the
// same job and token. The step's root slurmstepd is the job's runner: when it is gone the job
// ends (JobLifecycle::Tick's liveness poll). Root's Prolog (kSlurmJob "begin") tells the job's QOS
// and partition, which set its steps' priority (Config::Slurm); its Epilog ("end") ends the job's
// steps at once: their processes' leases and memory are dropped with their connections.
#include <spdlog/spdlog.h>

#include "base/gpu_inventory.h"
#include "base/job_state.h"
#include "base/slurm_step.h"
#include "base/user_name.h"
#include "daemon/daemon.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {

using json = nlohmann::json;

void Daemon::OnSlurmStep(Connection& c, const json& req) {
  c.kind = Connection::Kind::kCli;
  Result<SlurmStepRequest> parsed = SlurmStepRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  std::optional<SlurmStep> step = SlurmStepOf(c.pid);
  if (!step) {
    return Reply(c, ErrorReply("pid " + std::to_string(c.pid) +
                               " is no task of a Slurm job step (no root slurmstepd above it)"));
  }
  const std::string step_name = StepName(step->job_id, step->step);
  // The step's other tasks join the job its first task made.
  for (const auto& [id, job] : table_.jobs) {
    const JobRecord& r = job->record;
    if (job->ended || r.kind != "slurm" || r.slurm_job_id != step->job_id ||
        r.slurm_step != step->step) {
      continue;
    }
    if (r.uid != c.uid) {
      return Reply(c, ErrorReply(std::string(kPermissionDenied) + "Slurm step " + step_name +
                                 " is another user's"));
    }
    return Reply(c,
                 JobIdReply{r.id, true, false, r.token, placement_.VisibleDevicesOf(r.gpu, r.slot)}
                     .ToJsonText());
  }
  const std::vector<std::string> gpus = SplitGpuList(parsed->gpus);
  if (gpus.empty()) return Reply(c, ErrorReply("Slurm step " + step_name + " has no GPU"));
  JobRecord r;
  r.gpu = parsed->gpus;
  r.gpus = static_cast<int>(gpus.size());
  if (Status st = CheckGpuRequest(r.gpu, r.gpus, gpu_count_); !st.ok()) {
    return Reply(c, ErrorReply("Slurm step " + step_name + ": " + st.message()));
  }
  r.kind = "slurm";
  r.slurm_job_id = step->job_id;
  r.slurm_step = step->step;
  r.name = parsed->name.empty() ? step_name : parsed->name;
  r.argv = {"slurm step " + step_name};
  r.uid = c.uid;
  r.priority = slurm_.PriorityOf(step->job_id, c.uid, options_.config.slurm);
  r.quantum_ms = options_.config.scheduler.quantum.count();
  r.memory = options_.config.memory.engine;
  r.state = JobState::kRunning;
  r.submit_time = WallNow();
  r.start_time = r.submit_time;
  r.runner_pid = step->stepd_pid;
  r.runner_start = step->stepd_start;
  if (Status token = JobRequests::AssignToken(&r); !token.ok())
    return Reply(c, ErrorReply(token.message()));
  Result<int64_t> id = store_->Insert(r);
  if (!id.ok()) return Reply(c, ErrorReply(id.status().message()));
  r.id = id.value();
  const std::string slot = GpuIndexList(r.gpu);
  JobIdReply reply{r.id, true, false, r.token, placement_.VisibleDevicesOf(r.gpu, slot)};
  spdlog::info("job {}: Slurm step {} of {} (priority {}) on GPU {}", r.id, step_name,
               UserName(r.uid), r.priority, slot);
  lifecycle_->Activate(std::move(r), slot);
  // Its slurmstepd's liveness is polled, with the other runners', every second.
  if (auto it = table_.jobs.find(reply.job_id); it != table_.jobs.end()) it->second->orphan = true;
  Reply(c, reply.ToJsonText());
}

void Daemon::OnSlurmJob(Connection& c, const json& req) {
  c.kind = Connection::Kind::kCli;
  Result<SlurmJobRequest> parsed = SlurmJobRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  if (c.uid != 0) {
    return Reply(c, ErrorReply(std::string(kPermissionDenied) +
                               "only root (Slurm's Prolog and Epilog) may tell of Slurm jobs"));
  }
  const SlurmJobRequest& s = parsed.value();
  json ended = json::array();
  if (s.action == "begin") {
    slurm_.Begin(s.job_id, {s.uid, s.partition, s.qos});
    // A step that joined before the Prolog spoke (a Prolog run late) takes its priority now.
    const int priority = slurm_.PriorityOf(s.job_id, s.uid, options_.config.slurm);
    for (auto& [id, job] : table_.jobs) {
      if (job->ended || job->record.kind != "slurm" || job->record.slurm_job_id != s.job_id ||
          job->record.priority == priority || job->record.uid != s.uid) {
        continue;
      }
      if (Status st = control_->SetActivePriority(*job, priority); !st.ok()) {
        spdlog::error("{}: {}", JobName(id), st.message());
      }
    }
    spdlog::info("Slurm job {} of {}: partition {}, QOS {}", s.job_id, UserName(s.uid),
                 s.partition.empty() ? "-" : s.partition, s.qos.empty() ? "-" : s.qos);
    return Reply(c, ToJsonText(json{{"ok", true}, {"ended", ended}}));
  }
  slurm_.End(s.job_id);
  std::vector<JobId> steps;
  for (const auto& [id, job] : table_.jobs) {
    if (!job->ended && job->record.kind == "slurm" && job->record.slurm_job_id == s.job_id) {
      steps.push_back(id);
    }
  }
  for (JobId id : steps) {
    // Its processes, if any are left, lose their connections: their leases, seats and memory
    // in the ledger go now, not when Slurm's kill reaches them.
    std::vector<ConnId> shims(table_.jobs.at(id)->shims.begin(), table_.jobs.at(id)->shims.end());
    for (ConnId conn : shims) Drop(conn, "its Slurm job ended");
    spdlog::info("job {}: Slurm job {} ended", id, s.job_id);
    lifecycle_->Finish(id, JobState::kCompleted, std::nullopt, std::nullopt, "");
    lifecycle_->ForgetIfDone(id);
    ended.push_back(id);
  }
  Reply(c, ToJsonText(json{{"ok", true}, {"ended", ended}}));
}

}  // namespace gshare
