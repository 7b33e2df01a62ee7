#include "daemon/checkpoint/checkpoint_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gshare {

uint64_t CheckpointCoordinator::Checkpoint(ConnId conn, const Process& process,
                                           uint32_t lock_timeout_ms, const GpuKey& gpu) {
  uint64_t seq =
      service_.Submit(CheckpointOp::kCheckpoint, process.pid, lock_timeout_ms, 0, gpu, "");
  if (seq == 0) return 0;
  calls_[seq] = {conn, process.job, CheckpointOp::kCheckpoint, gpu};
  ledger_.SetCheckpointed(conn, true);  // counted as gone, as an eviction, until the reply
  return seq;
}

void CheckpointCoordinator::Checkpointed(const Call& call, uint64_t bytes) {
  if (bytes > 0 && !call.gpu.empty()) {
    footprints_[call.conn] = {call.gpu, bytes};
  } else {
    footprints_.erase(call.conn);
  }
}

bool CheckpointCoordinator::Defer(ConnId conn, const GpuKey& gpu, uint64_t epoch,
                                  std::string frame) {
  const bool restore = ledger_.IsCheckpointed(conn);
  if (!restore && service_.last_done() == service_.last_sent()) return false;
  grants_.push_back({conn, gpu, epoch, std::move(frame), service_.last_sent(), restore});
  return true;
}

bool CheckpointCoordinator::Advance(DeferredGrant& d,
                                    std::vector<std::pair<ConnId, std::string>>* to_send) {
  std::optional<Process> process = host_.LiveProcess(d.conn);
  if (!process) return true;
  if (d.restore && d.restore_seq == 0) {
    // Room first: the checkpoints queued before the grant and the shims' evictions.
    if (service_.last_done() < d.after_seq || ledger_.Evicting(d.gpu)) return false;
    if (ledger_.IsCheckpointed(d.conn)) {
      // Whatever still stands in the way goes first (a victim that held another lease at the
      // grant): a restore without room would lose the process.
      MemoryLedger::Plan plan = ledger_.MakeRoom(d.gpu, process->job);
      if (plan.bytes > 0) {
        if (plan.feasible) host_.SendEvictions(d.gpu, plan);
        return false;
      }
      // What it will take on the GPU: its memory and a context, or what its checkpoint freed
      // when that was more (a bound the helper checks against the GPU's free memory before it
      // restores: a restore without room loses the process).
      auto move = moves_.find(d.conn);
      uint64_t need =
          ledger_.Totals(process->job, d.gpu).allocated + ledger_.options().context_bytes;
      auto footprint = footprints_.find(d.conn);
      const GpuKey& from = move == moves_.end() ? d.gpu : move->second;
      if (footprint != footprints_.end() && footprint->second.gpu == from) {
        need = std::max(need, footprint->second.bytes);
      }
      d.restore_seq = service_.Submit(CheckpointOp::kRestore, process->pid, 0, need, d.gpu,
                                      move == moves_.end() ? GpuKey() : move->second);
      if (d.restore_seq == 0) {
        spdlog::error("job {}: pid {} is checkpointed and cannot be restored ({}): killing it",
                      process->job, process->pid, service_.unavailable_reason());
        host_.KillProcess(process->pid);
        return true;
      }
      calls_[d.restore_seq] = {d.conn, process->job, CheckpointOp::kRestore, GpuKey()};
    } else {
      d.restore = false;  // restored for another grant meanwhile
    }
  }
  if (service_.last_done() < (d.restore ? d.restore_seq : d.after_seq)) return false;
  if (!ledger_.IsCheckpointed(d.conn)) to_send->emplace_back(d.conn, std::move(d.frame));
  return true;
}

void CheckpointCoordinator::Pump() {
  std::vector<std::pair<ConnId, std::string>> to_send;
  std::vector<std::pair<GpuKey, uint64_t>> delivered;
  for (auto it = grants_.begin(); it != grants_.end();) {
    if (Advance(*it, &to_send)) {
      delivered.emplace_back(it->gpu, it->epoch);
      it = grants_.erase(it);
    } else {
      ++it;
    }
  }
  // The holder's turn starts now (or, when it got nothing, it is dropped at once).
  for (const auto& [gpu, epoch] : delivered) host_.GrantDelivered(gpu, epoch);
  for (const auto& [conn, frame] : to_send) host_.SendGrant(conn, frame);
}

std::optional<CheckpointCoordinator::Call> CheckpointCoordinator::Answered(uint64_t seq) {
  auto it = calls_.find(seq);
  if (it == calls_.end()) return std::nullopt;
  Call call = it->second;
  calls_.erase(it);
  return call;
}

std::vector<std::pair<GpuKey, uint64_t>> CheckpointCoordinator::GrantsAwaiting(uint64_t seq) const {
  std::vector<std::pair<GpuKey, uint64_t>> grants;
  for (const DeferredGrant& d : grants_) {
    if (d.restore_seq == seq) grants.emplace_back(d.gpu, d.epoch);
  }
  return grants;
}

bool CheckpointCoordinator::InFlight(ConnId conn) const {
  for (const auto& [seq, call] : calls_) {
    if (call.conn == conn) return true;
  }
  return false;
}

}  // namespace gshare
