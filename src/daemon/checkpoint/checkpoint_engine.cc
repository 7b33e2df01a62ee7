// Whole-process checkpoints and suspension (checkpoint_engine.h). The helper (checkpoint_helper.h)
// locks and checkpoints a process that holds no lease, which frees all its device memory and its
// context; a grant to a checkpointed process goes out only once the helper restored it, after
// the evictions that make room for it are done (a restore that runs out of memory leaves the
// process unusable: cuda-checkpoint issue #44).
#include "daemon/checkpoint/checkpoint_engine.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include <utility>

#include "gshare/cuda_checkpoint.h"

namespace gshare {

CheckpointEngine::CheckpointEngine(Options options, Parts parts, Host& host)
    : options_(std::move(options)), p_(parts), host_(host) {}

bool CheckpointEngine::Checkpoint(ConnId conn, const std::string& why) {
  const Connection* c = p_.table.Live(conn);
  if (c == nullptr) return false;
  if (p_.ledger.IsCheckpointed(conn)) return true;
  if (p_.table.Running(c->job) == nullptr) return false;  // exiting: its memory goes anyway
  if (c->exiting) {
    // Checkpointing a process that exits blocks its exit in the driver until the checkpoint
    // fails, seconds later (CUDA error 304; docs/memory.md, "How `checkpoint` works"); its
    // memory goes with it meanwhile, and a restore waits for that room (need_bytes).
    spdlog::debug("{}: pid {} exits, not checkpointed ({})", JobName(c->job), c->pid, why);
    return false;
  }
  options_.start_helper();
  // The lock waits for work already submitted; a process that holds no lease has none, so
  // the grace period for a DROP bounds it generously.
  uint32_t timeout_ms = static_cast<uint32_t>(options_.drop_grace.count());
  if (coordinator_.Checkpoint(conn, {c->pid, c->job}, timeout_ms, FirstGpuOf(conn)) == 0) {
    spdlog::warn("cannot checkpoint pid {} ({}): {}", c->pid, why,
                 p_.service.unavailable_reason().empty() ? "the helper is not running"
                                                         : p_.service.unavailable_reason());
    return false;
  }
  spdlog::info("{}: checkpointing pid {} ({})", JobName(c->job), c->pid, why);
  p_.lanes.Quiet(conn);  // its sentinel cannot clear its busy bits while it is checkpointed
  return true;
}

bool CheckpointEngine::DeferGrant(const LeaseAction& a, const std::string& frame) {
  if (!coordinator_.Defer(a.conn, a.gpu, a.epoch, frame)) return false;
  p_.arbiter.Deferred(a.gpu, a.epoch);
  PumpDeferredGrants();
  return true;
}

void CheckpointEngine::PumpDeferredGrants() {
  p_.memory.CheckpointsDone(p_.service.last_done());
  coordinator_.Pump();
}

std::optional<CheckpointCoordinator::Process> CheckpointEngine::LiveProcess(ConnId conn) {
  Connection* c = p_.table.Live(conn);
  if (c == nullptr) return std::nullopt;
  return CheckpointCoordinator::Process{c->pid, c->job};
}

void CheckpointEngine::GrantDelivered(const GpuKey& gpu, uint64_t epoch) {
  p_.arbiter.Delivered(gpu, epoch, p_.clock.Now());
}

void CheckpointEngine::Unavailable(const std::string& why) {
  if (!p_.ledger.checkpoint_available()) return;
  spdlog::warn(
      "whole-process checkpoints are unavailable ({}): memory of --memory checkpoint "
      "jobs stays on the GPU",
      why);
  p_.ledger.SetCheckpointAvailable(false);
}

void CheckpointEngine::OnReplies(const std::vector<CheckpointReply>& replies, bool usable) {
  if (!usable) Unavailable(p_.service.unavailable_reason());
  for (const CheckpointReply& r : replies) {
    if (std::optional<CheckpointCoordinator::Call> call = coordinator_.Answered(r.seq)) {
      OnReply(r, *call);
    }
  }
  UpdateSharing();
}

void CheckpointEngine::OnReply(const CheckpointReply& r, const CheckpointCoordinator::Call& cc) {
  auto it = p_.table.jobs.find(cc.job);  // ended or not: its counters are still reported
  ActiveJob* job = it != p_.table.jobs.end() ? it->second.get() : nullptr;
  const bool live = p_.table.Live(cc.conn) != nullptr;
  if (cc.op == CheckpointOp::kCheckpoint) {
    if (r.result != 0) {
      spdlog::warn("{}: checkpoint of pid {} failed (CUDA error {}); its memory stays on the GPU",
                   JobName(cc.job), r.pid, r.result);
      p_.ledger.SetCheckpointed(cc.conn, false);
      if (r.result == cuda_checkpoint::kErrorNotSupported || r.result == kNoDriver) {
        Unavailable("the driver answered CUDA error " + std::to_string(r.result));
      }
      return;
    }
    spdlog::info("{}: pid {} checkpointed in {:.0f} ms{}", JobName(cc.job), r.pid, r.ms,
                 r.freed_bytes > 0 ? fmt::format(", {} bytes freed", r.freed_bytes) : "");
    coordinator_.Checkpointed(cc, r.freed_bytes);
    p_.timeline.Note(TimelineKind::kCheckpoint, cc.job, FirstGpuOf(cc.conn), r.pid, 0, r.ms);
    p_.memory.Checkpointed(cc.conn, r.ms);
    if (job != nullptr) {
      ++job->checkpoints;
      job->checkpoint_ms += r.ms;
    }
    if (live && !p_.arbiter.IsSuspended(cc.job)) RequestOnBehalf(cc.conn);
    return;
  }
  if (r.result == kNoRoom) {
    // Still intact and checkpointed: give the grant back and ask again.
    coordinator_.NoRoom(cc.conn);
    spdlog::warn(
        "{}: pid {} not restored: the GPU has no room (used outside gshare?); "
        "it asks again",
        JobName(cc.job), r.pid);
    AskAgainAfterRestore(r.seq, cc.conn, live);
    return;
  }
  if (r.result != 0 && r.state == cuda_checkpoint::kCheckpointed &&
      ++restore_failures_[cc.conn] <= kRestoreRetries) {
    // The driver refused before it took anything back: the process is intact, as after no
    // room. A restore that ran out of memory leaves it FAILED instead (cuda-checkpoint #44).
    spdlog::warn(
        "{}: restore of pid {} failed (CUDA error {}); it is still checkpointed and intact, "
        "and asks again ({} of {})",
        JobName(cc.job), r.pid, r.result, restore_failures_[cc.conn], kRestoreRetries);
    AskAgainAfterRestore(r.seq, cc.conn, live);
    return;
  }
  restore_failures_.erase(cc.conn);
  if (r.result != 0) {
    spdlog::error("{}: restore of pid {} failed (CUDA error {}): killing it", JobName(cc.job),
                  r.pid, r.result);
    host_.KillProcess(r.pid);
    return;
  }
  p_.ledger.SetCheckpointed(cc.conn, false);
  coordinator_.Restored(cc.conn);
  rebalancer_.Ran(cc.conn);
  const uint64_t bytes = p_.ledger.Totals(cc.job).allocated;
  spdlog::info("{}: pid {} restored in {:.0f} ms", JobName(cc.job), r.pid, r.ms);
  p_.timeline.Note(TimelineKind::kRestore, cc.job, FirstGpuOf(cc.conn), r.pid, bytes, r.ms);
  if (job != nullptr) {
    ++job->restores;
    job->restore_ms += r.ms;
  }
  for (const auto& [gpu, epoch] : coordinator_.GrantsAwaiting(r.seq)) {
    p_.memory.SwappedIn(gpu, cc.job, epoch, {.bytes = bytes, .ms = r.ms, .restored = true});
  }
}

void CheckpointEngine::AskAgainAfterRestore(uint64_t seq, ConnId conn, bool live) {
  for (const auto& [gpu, epoch] : coordinator_.GrantsAwaiting(seq)) {
    host_.Apply(p_.arbiter.Released(conn, gpu, epoch, p_.clock.Now()));
  }
  if (live) RequestOnBehalf(conn);
}

void CheckpointEngine::UpdateSharing() {
  for (const auto& [gpu, info] : p_.table.gpus) p_.sharing.Update(gpu);
}

GpuKey CheckpointEngine::FirstGpuOf(ConnId conn) const {
  std::vector<GpuKey> gpus = p_.ledger.GpusOf(conn);
  return gpus.empty() ? GpuKey() : gpus.front();
}

void CheckpointEngine::RequestOnBehalf(ConnId conn) {
  if (p_.table.Live(conn) == nullptr) return;
  for (const GpuKey& gpu : p_.ledger.GpusOf(conn)) {
    host_.Apply(p_.arbiter.Request(conn, gpu, p_.clock.Now()));
    p_.sharing.Update(gpu);
  }
}

void CheckpointEngine::Tick() {
  PumpDeferredGrants();
  for (auto& [id, job] : p_.table.jobs) {
    if (!job->ended) AdvanceSuspension(*job);
  }
  Rebalance();
}

void CheckpointEngine::AdvanceSuspension(ActiveJob& job) {
  using S = ActiveJob::Suspension;
  const JobId id = job.record.id;
  if (job.suspension == S::kDraining) {
    if (p_.arbiter.JobHolds(id)) return;  // its DROP is not acknowledged yet
    for (ConnId c : job.shims) Checkpoint(c, "suspended");
    job.suspend_seq = p_.service.last_sent();
    job.suspension = S::kCheckpointing;
  }
  if (job.suspension == S::kCheckpointing && p_.service.last_done() >= job.suspend_seq) {
    host_.SignalJobProcesses(job, SIGSTOP);
    job.suspension = S::kStopped;
    spdlog::info("{} suspended", JobName(id));
  }
}

Status CheckpointEngine::Suspend(int64_t id) {
  ActiveJob* active = p_.table.Running(static_cast<JobId>(id));
  if (active == nullptr) return host_.NotInState(id, "running");
  ActiveJob& job = *active;
  if (job.suspension != ActiveJob::Suspension::kNone) {
    return Status::Error(JobName(id) + " is already SUSPENDED");
  }
  JobRecord r = job.record;
  r.state = JobState::kSuspended;
  if (Status st = host_.SaveRecord(r); !st.ok()) return st;
  job.record = std::move(r);
  job.suspension = ActiveJob::Suspension::kDraining;
  p_.ledger.SetSuspended(id, true);
  if (!job.shims.empty()) options_.start_helper();
  p_.timeline.Note(TimelineKind::kSuspend, id, "", 0);
  host_.Apply(p_.arbiter.SetSuspended(id, true, p_.clock.Now()));
  AdvanceSuspension(job);
  UpdateSharing();
  return Status::Ok();
}

Status CheckpointEngine::Resume(int64_t id, const std::string& to_gpu) {
  ActiveJob* active = p_.table.Running(static_cast<JobId>(id));
  if (active == nullptr || active->suspension == ActiveJob::Suspension::kNone) {
    return host_.NotInState(id, "SUSPENDED");
  }
  ActiveJob& job = *active;
  if (!to_gpu.empty()) {
    if (Status moved = MoveJob(job, to_gpu); !moved.ok()) return moved;
  }
  JobRecord r = job.record;
  r.state = JobState::kRunning;
  if (Status st = host_.SaveRecord(r); !st.ok()) return st;
  job.record = std::move(r);
  if (job.suspension == ActiveJob::Suspension::kStopped) host_.SignalJobProcesses(job, SIGCONT);
  job.suspension = ActiveJob::Suspension::kNone;
  p_.ledger.SetSuspended(id, false);
  p_.timeline.Note(TimelineKind::kResume, id, "", 0);
  host_.Apply(p_.arbiter.SetSuspended(id, false, p_.clock.Now()));
  // Checkpoints still under way ask on the process's behalf when they finish.
  for (ConnId c : job.shims) {
    if (p_.ledger.IsCheckpointed(c) && !p_.arbiter.ConnHolds(c) && !coordinator_.InFlight(c)) {
      RequestOnBehalf(c);
    }
  }
  UpdateSharing();
  spdlog::info("{} resumed", JobName(id));
  return Status::Ok();
}

}  // namespace gshare
