#include "daemon/jobs/slurm_steps.h"

#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "base/gpu_inventory.h"
#include "base/job_state.h"
#include "base/user_name.h"
#include "daemon/jobs/job_requests.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {

using json = nlohmann::json;

void SlurmSteps::OnStep(Connection& c, const json& req) {
  Result<SlurmStepRequest> parsed = SlurmStepRequest::Parse(req);
  if (!parsed.ok()) return t_.reply(c, ErrorReply(parsed.status().message()));
  std::optional<SlurmStep> step = step_of_(c.pid);
  if (!step) {
    return t_.reply(c, ErrorReply("pid " + std::to_string(c.pid) +
                                  " is no task of a Slurm job step (no root slurmstepd above it)"));
  }
  const std::string step_name = StepName(step->job_id, step->step);
  // The step's other tasks join the job its first task made.
  for (const auto& [id, job] : p_.table.jobs) {
    const JobRecord& r = job->record;
    if (job->ended || r.kind != JobKind::kSlurm || r.slurm_job_id != step->job_id ||
        r.slurm_step != step->step) {
      continue;
    }
    if (r.uid != c.uid) {
      return t_.reply(c, ErrorReply(std::string(kPermissionDenied) + "Slurm step " + step_name +
                                    " is another user's"));
    }
    return t_.reply(
        c, JobIdReply{r.id, true, false, r.token, p_.placement.VisibleDevicesOf(r.gpu, r.slot)}
               .ToJsonText());
  }
  const std::vector<std::string> gpus = SplitGpuList(parsed->gpus);
  if (gpus.empty()) return t_.reply(c, ErrorReply("Slurm step " + step_name + " has no GPU"));
  JobRecord r;
  r.gpu = parsed->gpus;
  r.gpus = static_cast<int>(gpus.size());
  if (Status st = CheckGpuRequest(r.gpu, r.gpus, gpu_count_()); !st.ok()) {
    return t_.reply(c, ErrorReply("Slurm step " + step_name + ": " + st.message()));
  }
  r.kind = JobKind::kSlurm;
  r.slurm_job_id = step->job_id;
  r.slurm_step = step->step;
  r.name = parsed->name.empty() ? step_name : parsed->name;
  r.argv = {"slurm step " + step_name};
  r.uid = c.uid;
  r.priority = jobs_.PriorityOf(step->job_id, c.uid, p_.options.config.slurm);
  r.quantum_ms = p_.options.config.scheduler.quantum.count();
  r.memory = ParseMemoryEngine(p_.options.config.memory.engine);
  r.state = JobState::kRunning;
  r.submit_time = p_.clock.WallNow();
  r.start_time = r.submit_time;
  r.runner_pid = step->stepd_pid;
  r.runner_start = step->stepd_start;
  if (Status token = JobRequests::AssignToken(&r); !token.ok())
    return t_.reply(c, ErrorReply(token.message()));
  Result<int64_t> id = p_.store.Insert(r);
  if (!id.ok()) return t_.reply(c, ErrorReply(id.status().message()));
  r.id = id.value();
  const std::string slot = GpuIndexList(r.gpu);
  JobIdReply reply{r.id, true, false, r.token, p_.placement.VisibleDevicesOf(r.gpu, slot)};
  spdlog::info("job {}: Slurm step {} of {} (priority {}) on GPU {}", r.id, step_name,
               UserName(r.uid), r.priority, slot);
  lifecycle_.Activate(std::move(r), slot);
  // Its slurmstepd's liveness is polled, with the other runners', every second.
  if (auto it = p_.table.jobs.find(reply.job_id); it != p_.table.jobs.end())
    it->second->orphan = true;
  t_.reply(c, reply.ToJsonText());
}

void SlurmSteps::OnJob(Connection& c, const json& req) {
  Result<SlurmJobRequest> parsed = SlurmJobRequest::Parse(req);
  if (!parsed.ok()) return t_.reply(c, ErrorReply(parsed.status().message()));
  const SlurmJobRequest& s = parsed.value();
  json ended = json::array();
  if (s.action == "begin") {
    jobs_.Begin(s.job_id, {s.uid, s.partition, s.qos});
    // A step that joined before the Prolog spoke (a Prolog run late) takes its priority now.
    const int priority = jobs_.PriorityOf(s.job_id, s.uid, p_.options.config.slurm);
    for (auto& [id, job] : p_.table.jobs) {
      if (job->ended || job->record.kind != JobKind::kSlurm ||
          job->record.slurm_job_id != s.job_id || job->record.priority == priority ||
          job->record.uid != s.uid) {
        continue;
      }
      if (Status st = control_.SetActivePriority(*job, priority); !st.ok()) {
        spdlog::error("{}: {}", JobName(id), st.message());
      }
    }
    spdlog::info("Slurm job {} of {}: partition {}, QOS {}", s.job_id, UserName(s.uid),
                 s.partition.empty() ? "-" : s.partition, s.qos.empty() ? "-" : s.qos);
    return t_.reply(c, ToJsonText(json{{"ok", true}, {"ended", ended}}));
  }
  jobs_.End(s.job_id);
  std::vector<JobId> steps;
  for (const auto& [id, job] : p_.table.jobs) {
    if (!job->ended && job->record.kind == JobKind::kSlurm &&
        job->record.slurm_job_id == s.job_id) {
      steps.push_back(id);
    }
  }
  for (JobId id : steps) {
    // Its processes, if any are left, lose their connections: their leases, seats and memory
    // in the ledger go now, not when Slurm's kill reaches them.
    std::vector<ConnId> shims(p_.table.jobs.at(id)->shims.begin(),
                              p_.table.jobs.at(id)->shims.end());
    for (ConnId conn : shims) t_.drop(conn, "its Slurm job ended");
    spdlog::info("job {}: Slurm job {} ended", id, s.job_id);
    lifecycle_.Finish(id, JobState::kCompleted, std::nullopt, std::nullopt, "");
    lifecycle_.ForgetIfDone(id);
    ended.push_back(id);
  }
  t_.reply(c, ToJsonText(json{{"ok", true}, {"ended", ended}}));
}

}  // namespace gshare
