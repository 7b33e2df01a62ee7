// Whole-process checkpoints (docs/memory.md, "How `checkpoint` works") and `gshare suspend` /
// `resume`. The helper (checkpoint_helper.h) locks and checkpoints a process that holds no
// lease, which frees all its device memory and its context; a grant to a checkpointed process
// goes out only once the helper restored it, after the evictions that make room for it are
// done (a restore that runs out of memory leaves the process unusable: cuda-checkpoint issue
// #44). A checkpointed process asks for nothing itself, since every CUDA call it makes blocks
// until it is restored: the daemon asks the lease on its behalf, so it gets its turn.
#include <signal.h>

#include <spdlog/spdlog.h>

#include "daemon/daemon.h"
#include "ipc/frame_io.h"
#include "gshare/cuda_checkpoint.h"

namespace gshare {

void Daemon::EnsureCheckpointHelper() {
  if (checkpoint_.started() || !checkpoint_.usable()) return;
  Status st = checkpoint_.Start(options_.self_exe);
  if (!st.ok()) spdlog::warn("{}", st.message());
}

bool Daemon::CheckpointConn(ConnId conn, const std::string& why) {
  auto it = table_.conns.find(conn);
  if (it == table_.conns.end() || it->second->closing) return false;
  if (ledger_.IsCheckpointed(conn)) return true;
  auto job = table_.jobs.find(it->second->job);
  if (job == table_.jobs.end() || job->second->ended)
    return false;  // exiting: its memory goes anyway
  if (it->second->exiting) {
    // Checkpointing a process that exits blocks its exit in the driver until the checkpoint
    // fails, seconds later (CUDA error 304; docs/memory.md, "How `checkpoint` works"); its
    // memory goes with it meanwhile, and a restore waits for that room (need_bytes).
    spdlog::debug("{}: pid {} exits, not checkpointed ({})", JobName(it->second->job),
                  it->second->pid, why);
    return false;
  }
  EnsureCheckpointHelper();
  // The lock waits for work already submitted; a process that holds no lease has none, so
  // the grace period for a DROP bounds it generously.
  uint32_t timeout_ms = static_cast<uint32_t>(options_.config.scheduler.drop_grace.count());
  if (checkpoints_.Checkpoint(conn, {it->second->pid, it->second->job}, timeout_ms) == 0) {
    spdlog::warn("cannot checkpoint pid {} ({}): {}", it->second->pid, why,
                 checkpoint_.unavailable_reason().empty() ? "the helper is not running"
                                                          : checkpoint_.unavailable_reason());
    return false;
  }
  spdlog::info("{}: checkpointing pid {} ({})", JobName(it->second->job), it->second->pid, why);
  lanes_.Quiet(conn);  // its sentinel cannot clear its busy bits while it is checkpointed
  return true;
}

bool Daemon::DeferGrant(const LeaseAction& a, const std::string& frame) {
  if (!checkpoints_.Defer(a.conn, a.gpu, a.epoch, frame)) return false;
  arbiter_.Deferred(a.gpu, a.epoch);
  PumpDeferredGrants();
  return true;
}

void Daemon::PumpDeferredGrants() {
  memory_.CheckpointsDone(checkpoint_.last_done());
  checkpoints_.Pump();
}

std::optional<CheckpointCoordinator::Process> Daemon::LiveProcess(ConnId conn) {
  Connection* c = table_.Live(conn);
  if (c == nullptr) return std::nullopt;
  return CheckpointCoordinator::Process{c->pid, c->job};
}

void Daemon::SendGrant(ConnId conn, const std::string& frame) { Send(conn, frame); }

void Daemon::GrantDelivered(const GpuKey& gpu, uint64_t epoch) {
  arbiter_.Delivered(gpu, epoch, Now());
}

void Daemon::KillProcess(pid_t pid) { kill(pid, SIGKILL); }

void Daemon::OnCheckpointReplies() {
  std::vector<CheckpointReply> replies = checkpoint_.Read();
  auto unavailable = [this](const std::string& why) {
    if (!ledger_.checkpoint_available()) return;
    spdlog::warn(
        "whole-process checkpoints are unavailable ({}): memory of --memory checkpoint "
        "jobs stays on the GPU",
        why);
    ledger_.SetCheckpointAvailable(false);
  };
  if (!checkpoint_.usable()) unavailable(checkpoint_.unavailable_reason());
  for (const CheckpointReply& r : replies) {
    std::optional<CheckpointCoordinator::Call> call = checkpoints_.Answered(r.seq);
    if (!call) continue;
    const CheckpointCoordinator::Call& cc = *call;
    auto jit = table_.jobs.find(cc.job);
    bool live = table_.Live(cc.conn) != nullptr;
    if (cc.op == CheckpointOp::kCheckpoint) {
      if (r.result != 0) {
        spdlog::warn("{}: checkpoint of pid {} failed (CUDA error {}); its memory stays on the GPU",
                     JobName(cc.job), r.pid, r.result);
        ledger_.SetCheckpointed(cc.conn, false);
        if (r.result == cuda_checkpoint::kErrorNotSupported || r.result == kNoDriver) {
          unavailable("the driver answered CUDA error " + std::to_string(r.result));
        }
        continue;
      }
      spdlog::info("{}: pid {} checkpointed in {:.0f} ms", JobName(cc.job), r.pid, r.ms);
      timeline_.Note(TimelineKind::kCheckpoint, cc.job, FirstGpuOf(cc.conn), r.pid, 0, r.ms);
      if (jit != table_.jobs.end()) {
        ++jit->second->checkpoints;
        jit->second->checkpoint_ms += r.ms;
      }
      if (live && !arbiter_.IsSuspended(cc.job)) RequestOnBehalf(cc.conn);
      continue;
    }
    if (r.result == kNoRoom) {
      // Still intact and checkpointed: give the grant back and ask again.
      spdlog::warn(
          "{}: pid {} not restored: the GPU has no room (used outside gshare?); "
          "it asks again",
          JobName(cc.job), r.pid);
      for (const auto& [gpu, epoch] : checkpoints_.GrantsAwaiting(r.seq)) {
        Apply(arbiter_.Released(cc.conn, gpu, epoch, Now()));
      }
      if (live) RequestOnBehalf(cc.conn);
      continue;
    }
    if (r.result != 0) {
      spdlog::error("{}: restore of pid {} failed (CUDA error {}): killing it", JobName(cc.job),
                    r.pid, r.result);
      kill(r.pid, SIGKILL);
      continue;
    }
    ledger_.SetCheckpointed(cc.conn, false);
    checkpoints_.Restored(cc.conn);
    rebalancer_.Ran(cc.conn);
    uint64_t bytes = ledger_.Totals(cc.job).allocated;
    spdlog::info("{}: pid {} restored in {:.0f} ms", JobName(cc.job), r.pid, r.ms);
    timeline_.Note(TimelineKind::kRestore, cc.job, FirstGpuOf(cc.conn), r.pid, bytes, r.ms);
    if (jit != table_.jobs.end()) {
      ++jit->second->restores;
      jit->second->restore_ms += r.ms;
    }
    for (const auto& [gpu, epoch] : checkpoints_.GrantsAwaiting(r.seq)) {
      memory_.SwappedIn(gpu, cc.job, epoch, bytes, r.ms);
    }
  }
  for (const auto& [gpu, info] : table_.gpus) sharing_.Update(gpu);
}

void Daemon::RequestOnBehalf(ConnId conn) {
  if (table_.Live(conn) == nullptr) return;
  for (const GpuKey& gpu : ledger_.GpusOf(conn)) {
    Apply(arbiter_.Request(conn, gpu, Now()));
    sharing_.Update(gpu);
  }
}

void Daemon::CheckpointTick() {
  PumpDeferredGrants();
  for (auto& [id, job] : table_.jobs) {
    if (!job->ended) AdvanceSuspension(*job);
  }
}

void Daemon::SignalJobProcesses(const ActiveJob& job, int sig) {
  if (SignalJob(job, sig)) return;
  for (ConnId c : job.shims) {
    auto it = table_.conns.find(c);
    if (it != table_.conns.end()) kill(it->second->pid, sig);
  }
}

void Daemon::AdvanceSuspension(ActiveJob& job) {
  using S = ActiveJob::Suspension;
  const JobId id = job.record.id;
  if (job.suspension == S::kDraining) {
    if (arbiter_.JobHolds(id)) return;  // its DROP is not acknowledged yet
    for (ConnId c : job.shims) CheckpointConn(c, "suspended");
    job.suspend_seq = checkpoint_.last_sent();
    job.suspension = S::kCheckpointing;
  }
  if (job.suspension == S::kCheckpointing && checkpoint_.last_done() >= job.suspend_seq) {
    SignalJobProcesses(job, SIGSTOP);
    job.suspension = S::kStopped;
    spdlog::info("{} suspended", JobName(id));
  }
}

Status Daemon::SuspendJob(int64_t id) {
  auto it = table_.jobs.find(id);
  if (it == table_.jobs.end() || it->second->ended) return NotInState(id, "running");
  ActiveJob& job = *it->second;
  if (job.suspension != ActiveJob::Suspension::kNone) {
    return Status::Error(JobName(id) + " is already SUSPENDED");
  }
  JobRecord r = job.record;
  r.state = JobState::kSuspended;
  if (Status st = SaveRecord(r); !st.ok()) return st;
  job.record = std::move(r);
  job.suspension = ActiveJob::Suspension::kDraining;
  ledger_.SetSuspended(id, true);
  if (!job.shims.empty()) EnsureCheckpointHelper();
  timeline_.Note(TimelineKind::kSuspend, id, "", 0);
  Apply(arbiter_.SetSuspended(id, true, Now()));
  AdvanceSuspension(job);
  for (const auto& [gpu, info] : table_.gpus) sharing_.Update(gpu);
  return Status::Ok();
}

Status Daemon::ResumeJob(int64_t id, const std::string& to_gpu) {
  auto it = table_.jobs.find(id);
  if (it == table_.jobs.end() || it->second->ended ||
      it->second->suspension == ActiveJob::Suspension::kNone) {
    return NotInState(id, "SUSPENDED");
  }
  ActiveJob& job = *it->second;
  if (!to_gpu.empty()) {
    if (Status moved = MoveJob(job, to_gpu); !moved.ok()) return moved;
  }
  JobRecord r = job.record;
  r.state = JobState::kRunning;
  if (Status st = SaveRecord(r); !st.ok()) return st;
  job.record = std::move(r);
  if (job.suspension == ActiveJob::Suspension::kStopped) SignalJobProcesses(job, SIGCONT);
  job.suspension = ActiveJob::Suspension::kNone;
  ledger_.SetSuspended(id, false);
  timeline_.Note(TimelineKind::kResume, id, "", 0);
  Apply(arbiter_.SetSuspended(id, false, Now()));
  // Checkpoints still under way ask on the process's behalf when they finish.
  for (ConnId c : job.shims) {
    if (ledger_.IsCheckpointed(c) && !arbiter_.ConnHolds(c) && !checkpoints_.InFlight(c)) {
      RequestOnBehalf(c);
    }
  }
  for (const auto& [gpu, info] : table_.gpus) sharing_.Update(gpu);
  spdlog::info("{} resumed", JobName(id));
  return Status::Ok();
}

}  // namespace gshare
