#include "daemon/gpu/host_pools.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

#include "daemon/gpu/host_budget.h"
#include "gshare/protocol.h"

namespace gshare {

HostPools::HostPools(uint64_t per_user, uint64_t machine) {
  uint64_t budget = per_user != 0 ? per_user : machine;
  if (budget == 0) budget = PhysicalRamBytes() / 2;
  const uint64_t blocks =
      std::clamp<uint64_t>(budget / proto::kHostPoolBlockBytes, 1, proto::kHostPoolMaxBlocks);
  file_bytes_ = proto::kHostPoolHeaderBytes + blocks * proto::kHostPoolBlockBytes;
}

int HostPools::For(uid_t uid) {
  auto it = pools_.find(uid);
  if (it != pools_.end()) return it->second.get();
  UniqueFd fd(memfd_create("gshare-host-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd.get() < 0) {
    spdlog::warn("host pool for uid {}: memfd_create: {}", uid, std::strerror(errno));
    return -1;
  }
  // Sealed at its size: no process can shrink it under the others' mappings (SIGBUS).
  if (ftruncate(fd.get(), static_cast<off_t>(file_bytes_)) != 0 ||
      fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    spdlog::warn("host pool for uid {}: sizing and sealing: {}", uid, std::strerror(errno));
    return -1;
  }
  const int raw = fd.get();
  pools_.emplace(uid, std::move(fd));
  return raw;
}

}  // namespace gshare
