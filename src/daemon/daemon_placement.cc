// The daemon on a machine of several GPUs: which GPUs a placed job sees, the gang lease of a
// job that uses several at once, and moving a job's processes to another GPU (resume --gpu,
// [scheduler] rebalance); see daemon.h.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/gpu_inventory.h"
#include "daemon/daemon.h"

namespace gshare {
namespace {

// How many GPUs job `r` sees. The driver restores a process onto another GPU only when the
// process sees every GPU of the machine (CUDA error 1 otherwise, driver 580), so a job that
// may move, by resume --gpu or the scheduler, is one that sees them all: --gpus with the
// machine's count.
int GpusSeen(const JobRecord& r) { return static_cast<int>(SplitGpuList(r.slot).size()); }

}  // namespace

std::string Daemon::VisibleDevicesOf(const std::string& gpu, const std::string& slot) const {
  if (gpu.empty() && gpu_count_ <= 1) return "";
  return VisibleDevices(slot.empty() ? gpu : slot);
}

std::map<std::string, uint64_t> Daemon::AllocatedPerSlot() const {
  std::map<std::string, uint64_t> bytes;
  if (gpu_count_ <= 1) return bytes;
  for (int i = 0; i < gpu_count_; ++i) {
    const std::string slot = std::to_string(i);
    const GpuKey gpu = GpuUuidOf(slot);
    if (gpu.empty()) continue;
    for (const auto& [id, job] : table_.jobs) {
      if (!job->ended) bytes[slot] += ledger_.Totals(static_cast<JobId>(id), gpu).allocated;
    }
  }
  return bytes;
}

void Daemon::SetGang(const JobRecord& record) {
  if (record.gpus < 2) return;
  std::vector<GpuKey> keys;
  for (const std::string& entry : SplitGpuList(record.slot)) {
    std::string uuid = GpuUuidOf(entry);
    if (uuid.empty()) {
      spdlog::warn("job {}: GPU {} has no UUID from NVML; its {} GPUs are leased one by one",
                   record.id, entry, record.gpus);
      return;
    }
    keys.push_back(std::move(uuid));
  }
  spdlog::info("job {}: gang lease on GPUs {}", record.id, record.slot);
  arbiter_.SetGang(static_cast<JobId>(record.id), std::move(keys));
}

Status Daemon::MoveJob(ActiveJob& job, const std::string& to_gpu) {
  const JobId id = static_cast<JobId>(job.record.id);
  if (Status st = CheckGpuRequest(to_gpu, 1, gpu_count_); !st.ok()) return st;
  const GpuKey to = GpuUuidOf(to_gpu);
  if (to.empty()) {
    return Status::Error("--gpu " + to_gpu +
                         ": NVML does not list this GPU, so the driver "
                         "cannot be told its UUID");
  }
  if (const int sees = GpusSeen(job.record); sees < gpu_count_) {
    return Status::Error(JobName(id) + " sees " + std::to_string(sees) + " of the " +
                         std::to_string(gpu_count_) +
                         " GPUs, and the driver restores a process only onto a GPU it sees "
                         "when it sees them all: submit it with --gpus " +
                         std::to_string(gpu_count_) + " to move it");
  }
  if (job.suspension != ActiveJob::Suspension::kStopped) {
    return Status::Error(JobName(id) + " is still being checkpointed; resume --gpu once `gshare " +
                         "status " + std::to_string(id) + " --json` shows memory.checkpointed");
  }
  std::vector<std::pair<ConnId, GpuKey>> moves;
  for (ConnId cid : job.shims) {
    const Connection* c = table_.Live(cid);
    if (c == nullptr) continue;
    const std::vector<GpuKey> uses = ledger_.GpusOf(cid);
    if (uses.size() > 1) {
      return Status::Error(JobName(id) + ": pid " + std::to_string(c->pid) + " uses " +
                           std::to_string(uses.size()) + " GPUs; a process of one GPU moves");
    }
    for (const GpuKey& from : uses) {
      if (from == to) continue;
      if (!ledger_.IsCheckpointed(cid)) {
        return Status::Error(JobName(id) + ": pid " + std::to_string(c->pid) +
                             " was not checkpointed (--memory checkpoint moves a job)");
      }
      moves.emplace_back(cid, from);
    }
  }
  for (const auto& [cid, from] : moves) {
    if (Connection* c = table_.Live(cid)) MoveProcess(*c, from, to);
  }
  if (!moves.empty()) ++job.moves;
  return Status::Ok();
}

void Daemon::MoveProcess(Connection& c, const GpuKey& from, const GpuKey& to) {
  table_.NoteMovedTo(to);
  const ConnId cid = c.id;
  Apply(arbiter_.Withdraw(cid, from, Now()));
  ledger_.MoveConn(cid, from, to);
  checkpoints_.RestoreElsewhere(cid, from);
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

const std::vector<GpuSample>& Daemon::GpuKinds() {
  if (!gpu_kinds_) gpu_kinds_ = SampleGpus();
  return *gpu_kinds_;
}

std::vector<Rebalancer::Gpu> Daemon::RebalanceGpus() {
  std::map<GpuKey, Arbiter::GpuView> views;
  for (Arbiter::GpuView& v : arbiter_.Gpus(Now())) views[v.gpu] = std::move(v);
  std::vector<Rebalancer::Gpu> gpus;
  for (const GpuSample& s : GpuKinds()) {
    Rebalancer::Gpu g;
    g.key = s.uuid;
    g.index = s.index;
    g.name = s.name;
    g.total = s.memory_total > 0 ? static_cast<uint64_t>(s.memory_total) : 0;
    // A GPU nobody asked for yet goes shared when a process that fits arrives
    // (SharingController::Update).
    g.shared = options_.config.scheduler.sharing == "auto";
    if (auto v = views.find(s.uuid); v != views.end()) {
      g.holding = v->second.holding;
      if (v->second.holder &&
          std::find(g.holding.begin(), g.holding.end(), *v->second.holder) == g.holding.end()) {
        g.holding.push_back(*v->second.holder);  // a gang's grant there, with no process on it
      }
      g.waiting = v->second.waiters;
      g.shared = v->second.shared;
    }
    uint64_t capacity = ledger_.Capacity(s.uuid);
    if (capacity == 0) capacity = g.total;
    const uint64_t need = ledger_.Need(s.uuid);
    g.room = capacity > need ? capacity - need : 0;
    gpus.push_back(std::move(g));
  }
  return gpus;
}

void Daemon::RebalanceTick() {
  if (!options_.config.scheduler.rebalance || gpu_count_ <= 1 || !arbiter_.enabled()) return;
  // Cheap first: processes checkpointed, not holding, of jobs that see every GPU.
  std::vector<std::pair<JobId, ConnId>> candidates;
  for (const auto& [id, job] : table_.jobs) {
    if (job->ended || job->suspension != ActiveJob::Suspension::kNone) continue;
    if (GpusSeen(job->record) < gpu_count_) continue;
    for (ConnId cid : job->shims) {
      if (table_.Live(cid) != nullptr && ledger_.IsCheckpointed(cid) &&
          !checkpoints_.InFlight(cid) && !arbiter_.ConnHolds(cid)) {
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
    auto jit = table_.jobs.find(id);
    Connection* c = table_.Live(cid);
    if (jit == table_.jobs.end() || jit->second->ended || c == nullptr) continue;
    Rebalancer::Process p;
    p.conn = cid;
    p.job = id;
    p.uses = ledger_.GpusOf(cid);
    p.sees_every_gpu = true;
    p.gang = !arbiter_.GangOf(id).empty();
    p.checkpointed = true;
    p.suspended = arbiter_.IsSuspended(id);
    for (const Rebalancer::Gpu& g : gpus) {
      if (p.uses.size() == 1 && g.key == p.uses[0]) {
        p.waiting = std::find(g.waiting.begin(), g.waiting.end(), id) != g.waiting.end();
      }
    }
    p.bytes = p.uses.size() == 1 ? ledger_.Need(p.uses[0], cid) : 0;
    const std::optional<GpuKey> to = rebalancer_.Target(p, gpus);
    if (!to) continue;
    const GpuKey from = p.uses[0];
    spdlog::info("{} moved from GPU {} to GPU {} (rebalance)", JobName(id), index_of(from),
                 index_of(*to));
    MoveProcess(*c, from, *to);
    ++jit->second->moves;
    sharing_.Update(from);
    sharing_.Update(*to);
    RequestOnBehalf(cid);
    gpus = RebalanceGpus();  // the next candidate sees this move
  }
}

}  // namespace gshare
