// Shared and exclusive mode, and residents, put into effect on the Arbiter.
#include "daemon/gpu/sharing_controller.h"

#include <spdlog/spdlog.h>

#include <set>

namespace gshare {

void SharingController::Update(const GpuKey& gpu) {
  if (!host_.KnowsGpu(gpu)) return;
  // Priorities play no part: the priority board keeps them in shared mode too, unless it
  // could not be made (then jobs of different priorities take turns, exclusively).
  bool want = mode_.Want(gpu, options_.sharing_auto, ledger_, arbiter_, clock_.Now());
  if (!options_.board_on()) want = want && arbiter_.OnePriorityOn(gpu);
  UpdateResidents(gpu);  // before a switch to exclusive mode: residents keep holding
  if (arbiter_.IsShared(gpu) != want) Switch(gpu, want);
  // A resident's allocation or swap-in that waits for room gets it (also one made resident
  // by the report that shows the demand).
  memory_.ResidentsDemand(gpu);
}

void SharingController::Tick(const std::vector<GpuKey>& gpus) {
  std::optional<TimePoint> settled = mode_.NextDeadline();
  if (!settled || *settled > clock_.Now()) return;
  for (const GpuKey& gpu : gpus) Update(gpu);
}

void SharingController::Switch(const GpuKey& gpu, bool shared) {
  mode_.Switched(gpu, shared, clock_.Now());
  spdlog::info("{}: {} mode", gpu, shared ? "shared" : "exclusive");
  std::optional<JobId> first = shared ? std::nullopt : memory_.ExclusiveFirst(gpu);
  host_.Apply(arbiter_.SetShared(gpu, shared, clock_.Now(), first));
  host_.UpdateGapWatch(gpu);  // a holder that held it exclusively keeps its grant
  if (!shared && first && arbiter_.Holder(gpu) == first) memory_.KeepIncumbent(gpu);
  if (!shared) host_.AskHolderToPin(gpu);
}

void SharingController::UpdateResidents(const GpuKey& gpu) {
  std::set<JobId> residents;
  // Only with the board, which orders the residents and the turn's holder, and with sharing
  // on: `sharing = "exclusive"` asks for one job at a time.
  if (options_.board_on() && options_.sharing_auto) {
    auto allowed = [this](JobId j) {
      return arbiter_.GangOf(j).empty() && !arbiter_.IsSuspended(j);
    };
    residents = mode_.Residents(gpu, allowed, ledger_, arbiter_, clock_.Now());
  }
  for (JobId j : residents) {
    if (!arbiter_.IsResident(gpu, j)) {
      spdlog::info("{}: job {} stays resident; the jobs of lower priority take turns beside it",
                   gpu, j);
    }
  }
  host_.Apply(arbiter_.SetResidents(gpu, residents, clock_.Now()));
}

}  // namespace gshare
