#include "daemon/state/job_table.h"

#include "base/gpu_inventory.h"

namespace gshare {

GpuKey FormatGpuUuid(const proto::GpuUuid& u) {
  static const char* kHex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[u.bytes[i] >> 4];
    s += kHex[u.bytes[i] & 15];
  }
  return s;
}

Connection* JobTable::Live(ConnId id) const {
  auto it = conns.find(id);
  return it == conns.end() || it->second->closing ? nullptr : it->second.get();
}

ActiveJob* JobTable::Running(JobId id) const {
  auto it = jobs.find(id);
  return it == jobs.end() || it->second->ended ? nullptr : it->second.get();
}

bool JobTable::NoteGpu(const GpuKey& gpu, const proto::GpuUuid& uuid, int ordinal) {
  if (gpus.count(gpu) != 0) return true;
  if (gpus.size() >= kMaxGpus) return false;
  gpus.emplace(gpu, GpuInfo{uuid, ordinal});
  return true;
}

void JobTable::NoteMovedTo(const GpuKey& gpu) {
  if (gpus.count(gpu) != 0) return;
  GpuInfo info{};
  ParseGpuUuid(gpu, info.uuid.bytes);
  info.ordinal = -1;
  gpus.emplace(gpu, info);
}

std::vector<GpuKey> JobTable::GpuKeys() const {
  std::vector<GpuKey> keys;
  keys.reserve(gpus.size());
  for (const auto& [gpu, info] : gpus) keys.push_back(gpu);
  return keys;
}

std::vector<std::pair<ConnId, JobId>> JobTable::Shims() const {
  std::vector<std::pair<ConnId, JobId>> shims;
  for (const auto& [id, conn] : conns) {
    if (conn->kind == Connection::Kind::kShim && !conn->closing) shims.emplace_back(id, conn->job);
  }
  return shims;
}

std::optional<JobState> JobTable::ActiveState(int64_t id) const {
  const ActiveJob* job = Running(static_cast<JobId>(id));
  if (job == nullptr) return std::nullopt;
  return job->record.state;
}

bool JobTable::ActiveNamed(uid_t uid, const std::string& name, int64_t id) const {
  for (const auto& [job, active] : jobs) {
    if (static_cast<int64_t>(job) != id && !active->ended && !active->adhoc &&
        active->record.uid == uid && active->record.name == name) {
      return true;
    }
  }
  return false;
}

uid_t JobTable::OwnerOf(JobId job) const {
  auto it = jobs.find(job);
  return it == jobs.end() ? 0 : it->second->record.uid;
}

GpuKey JobTable::RunsOn(const Connection& c, const GpuKey& named) {
  auto it = c.moved.find(named);
  return it == c.moved.end() ? named : it->second;
}

proto::GpuUuid JobTable::NamedBy(const Connection& c, const GpuKey& gpu) const {
  GpuKey named = gpu;
  for (const auto& [from, to] : c.moved) {
    if (to == gpu) named = from;
  }
  return gpus.at(named).uuid;
}

}  // namespace gshare
