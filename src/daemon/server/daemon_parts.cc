#include "daemon/server/daemon_parts.h"

#include <signal.h>

#include <utility>

#include "base/slurm_step.h"
#include "daemon/gpu/host_budget.h"
#include "ipc/frame_io.h"
#include "ipc/replies.h"

namespace gshare {

DaemonParts::DaemonParts(const DaemonOptions& options, Clock& clock,
                         std::unique_ptr<JobStore> store, PeerLinks links)
    : options(options),
      clock(clock),
      links(std::move(links)),
      store(std::move(store)),
      arbiter(Arbiter::Options{
          options.config.scheduler.enabled, options.config.scheduler.quantum,
          options.config.scheduler.drop_grace,
          [this](const GpuKey& gpu, JobId job) { return memory.CanGrant(gpu, job); }}),
      ledger(MemoryLedger::Options{
          options.config.memory.context_reserve, options.config.memory.gpu_limit,
          HostBudgetBytes(options.config), [this](ConnId c) { return arbiter.ConnHolds(c); },
          UserHostBudgetBytes(options.config), [this](JobId j) { return table.OwnerOf(j); },
          [this](JobId j) { return arbiter.PriorityOf(j); },
          [this](const GpuKey& g, JobId j) { return arbiter.IsResident(g, j); }}),
      sharing(SharingController::Options{options.config.scheduler.sharing == "auto",
                                         [this] { return lanes.on(); }},
              arbiter, ledger, memory, clock, outbox),
      engine(CheckpointEngine::Options{
                 options.config.scheduler.drop_grace, options.config.scheduler.rebalance,
                 options.config.scheduler.sharing == "auto", [this] { return gpu_count; },
                 [this] { checkpoint.EnsureStarted(this->options.self_exe); }},
             CheckpointEngine::Parts{table, arbiter, ledger, memory, sharing, lanes, timeline,
                                     checkpoint, clock},
             *this),
      lifecycle(
          JobLifecycle::Parts{options, table, queue, *this->store, processes, placement, arbiter,
                              ledger, memory, staging, timeline, clock},
          [this] { return gpu_count; }, this->links.send),
      transport{[this](Connection& c, const std::string& json_text) {
                  this->links.send(c.id, EncodeReply(json_text));
                },
                this->links.drop},
      control(JobControl::Parts{lifecycle, access, lanes, messenger},
              JobControl::Checkpoints{
                  [this](int64_t id) { return engine.Suspend(id); },
                  [this](int64_t id, const std::string& gpu) { return engine.Resume(id, gpu); }}),
      slurm(
          lifecycle, control, [this] { return gpu_count; },
          [](pid_t pid) { return SlurmStepOf(pid); }, transport),
      retention(*this->store, queue, clock,
                JobRetention::Options{options.config.retention, options.state_dir + "/daemon.log",
                                      [this](uint32_t uid) { return processes.FilesDir(uid); }}),
      status(StatusReporter::Parts{options, table, arbiter, ledger, memory, stagger, sharing, lanes,
                                   staging, queue, *this->store, access, clock,
                                   [this] { return mps.Describe(); }},
             [this] { return start_time; }) {}

void DaemonParts::KillProcess(pid_t pid) { kill(pid, SIGKILL); }

pid_t DaemonParts::RunnerOf(int64_t id) const {
  const ActiveJob* job = table.Running(id);
  if (job == nullptr) return 0;
  if (job->record.runner_pid) return *job->record.runner_pid;
  return job->record.pid.value_or(0);
}

std::string DaemonParts::MpsDir(const DaemonOptions& options) {
  if (!options.system) return options.state_dir + "/mps";
  const size_t slash = options.socket_path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : options.socket_path.substr(0, slash)) +
         "/mps";
}

}  // namespace gshare
