// The checkpoint engine's moves (checkpoint_engine.h): `gshare resume --gpu` and [scheduler]
// rebalance move a checkpointed process onto another GPU, whose restore the driver remaps.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/gpu_inventory.h"
#include "daemon/checkpoint/checkpoint_engine.h"

namespace gshare {
namespace {

// How many GPUs job `r` sees. The driver restores a process onto another GPU only when the
// process sees every GPU of the machine (CUDA error 1 otherwise, driver 580), so a job that
// may move, by resume --gpu or the scheduler, is one that sees them all: --gpus with the
// machine's count.
int GpusSeen(const JobRecord& r) { return static_cast<int>(SplitGpuList(r.slot).size()); }

}  // namespace

Status CheckpointEngine::MoveJob(ActiveJob& job, const std::string& to_gpu) {
  const JobId id = static_cast<JobId>(job.record.id);
  const int gpu_count = options_.gpu_count();
  if (Status st = CheckGpuRequest(to_gpu, 1, gpu_count); !st.ok()) return st;
  const GpuKey to = options_.gpu_uuid_of(to_gpu);
  if (to.empty()) {
    return Status::Error("--gpu " + to_gpu +
                         ": NVML does not list this GPU, so the driver "
                         "cannot be told its UUID");
  }
  if (const int sees = GpusSeen(job.record); sees < gpu_count) {
    return Status::Error(JobName(id) + " sees " + std::to_string(sees) + " of the " +
                         std::to_string(gpu_count) +
                         " GPUs, and the driver restores a process only onto a GPU it sees "
                         "when it sees them all: submit it with --gpus " +
                         std::to_string(gpu_count) + " to move it");
  }
  if (job.suspension != ActiveJob::Suspension::kStopped) {
    return Status::Error(JobName(id) + " is still being checkpointed; resume --gpu once `gshare " +
                         "status " + std::to_string(id) + " --json` shows memory.checkpointed");
  }
  std::vector<std::pair<ConnId, GpuKey>> moves;
  for (ConnId cid : job.shims) {
    const Connection* c = p_.table.Live(cid);
    if (c == nullptr) continue;
    const std::vector<GpuKey> uses = p_.ledger.GpusOf(cid);
    if (uses.size() > 1) {
      return Status::Error(JobName(id) + ": pid " + std::to_string(c->pid) + " uses " +
                           std::to_string(uses.size()) + " GPUs; a process of one GPU moves");
    }
    for (const GpuKey& from : uses) {
      if (from == to) continue;
      if (!p_.ledger.IsCheckpointed(cid)) {
        return Status::Error(JobName(id) + ": pid " + std::to_string(c->pid) +
                             " was not checkpointed (--memory checkpoint moves a job)");
      }
      moves.emplace_back(cid, from);
    }
  }
  for (const auto& [cid, from] : moves) {
    if (Connection* c = p_.table.Live(cid)) MoveProcess(*c, from, to);
  }
  if (!moves.empty()) ++job.moves;
  return Status::Ok();
}

void CheckpointEngine::MoveProcess(Connection& c, const GpuKey& from, const GpuKey& to) {
  p_.table.NoteMovedTo(to);
  const ConnId cid = c.id;
  host_.Apply(p_.arbiter.Withdraw(cid, from, p_.clock.Now()));
  p_.ledger.MoveConn(cid, from, to);
  coordinator_.RestoreElsewhere(cid, from);
  rebalancer_.Moved(cid);
  bool renamed = false;
  for (auto& [named, runs_on] : c.moved) {
    if (runs_on == from) {
      runs_on = to;
      renamed = true;
    }
  }
  if (!renamed) c.moved[from] = to;
  spdlog::info("{}: pid {} moves from {} to {}", JobName(c.job), c.pid, from, to);
}

const std::vector<GpuSample>& CheckpointEngine::GpuKinds() {
  if (!gpu_kinds_) gpu_kinds_ = options_.sample_gpus();
  return *gpu_kinds_;
}

std::vector<Rebalancer::Gpu> CheckpointEngine::RebalanceGpus() {
  std::map<GpuKey, Arbiter::GpuView> views;
  for (Arbiter::GpuView& v : p_.arbiter.Gpus(p_.clock.Now())) views[v.gpu] = std::move(v);
  std::vector<Rebalancer::Gpu> gpus;
  for (const GpuSample& s : GpuKinds()) {
    Rebalancer::Gpu g;
    g.key = s.uuid;
    g.index = s.index;
    g.name = s.name;
    g.total = s.memory_total > 0 ? static_cast<uint64_t>(s.memory_total) : 0;
    // A GPU nobody asked for yet goes shared when a process that fits arrives
    // (SharingController::Update).
    g.shared = options_.sharing_auto;
    if (auto v = views.find(s.uuid); v != views.end()) {
      g.holding = v->second.holding;
      if (v->second.holder &&
          std::find(g.holding.begin(), g.holding.end(), *v->second.holder) == g.holding.end()) {
        g.holding.push_back(*v->second.holder);  // a gang's grant there, with no process on it
      }
      g.waiting = v->second.waiters;
      g.shared = v->second.shared;
    }
    uint64_t capacity = p_.ledger.Capacity(s.uuid);
    if (capacity == 0) capacity = g.total;
    const uint64_t need = p_.ledger.Need(s.uuid);
    g.room = capacity > need ? capacity - need : 0;
    gpus.push_back(std::move(g));
  }
  return gpus;
}

void CheckpointEngine::Rebalance() {
  if (!options_.rebalance || options_.gpu_count() <= 1 || !p_.arbiter.enabled()) return;
  // Cheap first: processes checkpointed, not holding, of jobs that see every GPU.
  std::vector<std::pair<JobId, ConnId>> candidates;
  for (const auto& [id, job] : p_.table.jobs) {
    if (job->ended || job->suspension != ActiveJob::Suspension::kNone) continue;
    if (GpusSeen(job->record) < options_.gpu_count()) continue;
    for (ConnId cid : job->shims) {
      if (p_.table.Live(cid) != nullptr && p_.ledger.IsCheckpointed(cid) &&
          !coordinator_.InFlight(cid) && !p_.arbiter.ConnHolds(cid)) {
        candidates.emplace_back(id, cid);
      }
    }
  }
  if (candidates.empty() || GpuKinds().empty()) return;
  std::vector<Rebalancer::Gpu> gpus = RebalanceGpus();
  auto index_of = [&gpus](const GpuKey& key) {
    for (const Rebalancer::Gpu& g : gpus) {
      if (g.key == key) return g.index;
    }
    return -1;
  };
  for (const auto& [id, cid] : candidates) {
    ActiveJob* job = p_.table.Running(id);
    Connection* c = p_.table.Live(cid);
    if (job == nullptr || c == nullptr) continue;
    Rebalancer::Process p;
    p.conn = cid;
    p.job = id;
    p.uses = p_.ledger.GpusOf(cid);
    p.sees_every_gpu = true;
    p.gang = !p_.arbiter.GangOf(id).empty();
    p.checkpointed = true;
    p.suspended = p_.arbiter.IsSuspended(id);
    for (const Rebalancer::Gpu& g : gpus) {
      if (p.uses.size() == 1 && g.key == p.uses[0]) {
        p.waiting = std::find(g.waiting.begin(), g.waiting.end(), id) != g.waiting.end();
      }
    }
    p.bytes = p.uses.size() == 1 ? p_.ledger.Need(p.uses[0], cid) : 0;
    const std::optional<GpuKey> to = rebalancer_.Target(p, gpus);
    if (!to) continue;
    const GpuKey from = p.uses[0];
    spdlog::info("{} moved from GPU {} to GPU {} (rebalance)", JobName(id), index_of(from),
                 index_of(*to));
    MoveProcess(*c, from, *to);
    ++job->moves;
    p_.sharing.Update(from);
    p_.sharing.Update(*to);
    RequestOnBehalf(cid);
    gpus = RebalanceGpus();  // the next candidate sees this move
  }
}

}  // namespace gshare
