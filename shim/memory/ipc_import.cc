#include "memory/ipc_import.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "driver/real_driver.h"
#include "memory/ipc_wire.h"
#include "memory/swap_records.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
namespace {

IpcImports g_ipc_imports;

using swap_internal::kGranule;  // gshare's regions are whole units of it

// Receives one batch; its descriptors go to fds (count of them). False on a short or broken
// message (any descriptors that came are closed).
bool ReceiveBatch(int sock, IpcChunkBatch* b, int* fds) {
  struct iovec iov = {b, sizeof *b};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kIpcBatch)];
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  int got = 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < kIpcBatch) {
        fds[got++] = fd;
      } else {
        close(fd);
      }
    }
  }
  bool ok = n == static_cast<ssize_t>(sizeof *b) && (msg.msg_flags & MSG_CTRUNC) == 0 &&
            b->count <= static_cast<uint32_t>(kIpcBatch) &&
            (b->status != CUDA_SUCCESS || got == static_cast<int>(b->count));
  if (!ok || b->status != CUDA_SUCCESS) {
    for (int i = 0; i < got; ++i) close(fds[i]);
  }
  return ok;
}

// Connects to the exporter and maps what it sends at `va` (reserved, w.size bytes), giving
// `device` read-write access. Returns what it mapped in *mapped (bytes from va) on failure.
CUresult MapFromExporter(const IpcWireHandle& w, CUdeviceptr va, int device, uint64_t* mapped) {
  const VmmDriver& v = *Vmm();
  *mapped = 0;
  int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) return CUDA_ERROR_INVALID_HANDLE;
  SetIpcPeerTimeouts(sock);
  sockaddr_un addr;
  socklen_t len = IpcSocketAddress(w.pid, w.nonce, &addr);
  IpcRequest req{};
  std::memcpy(req.magic, kIpcMagic, sizeof kIpcMagic);
  req.base = w.base;
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      send(sock, &req, sizeof req, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req)) {
    close(sock);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  CUresult res = CUDA_SUCCESS;
  uint32_t seen = 0;
  for (;;) {
    IpcChunkBatch b{};
    int fds[kIpcBatch];
    if (!ReceiveBatch(sock, &b, fds)) {
      res = CUDA_ERROR_INVALID_HANDLE;
      break;
    }
    if (b.status != CUDA_SUCCESS) {
      res = b.status;
      break;
    }
    for (uint32_t i = 0; i < b.count; ++i) {
      CUmemGenericAllocationHandle h = 0;
      if (res == CUDA_SUCCESS && *mapped + b.bytes[i] > w.size) res = CUDA_ERROR_INVALID_HANDLE;
      if (res == CUDA_SUCCESS) {
        res = v.cuMemImportFromShareableHandle(
            &h, reinterpret_cast<void*>(static_cast<intptr_t>(fds[i])),
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      }
      close(fds[i]);
      if (res != CUDA_SUCCESS) continue;
      res = v.cuMemMap(va + *mapped, b.bytes[i], 0, h, 0);
      v.cuMemRelease(h);  // the mapping keeps the memory
      if (res == CUDA_SUCCESS) *mapped += b.bytes[i];
    }
    seen += b.count;
    if (res != CUDA_SUCCESS || seen >= b.total) break;
  }
  close(sock);
  if (res == CUDA_SUCCESS && *mapped != w.size) res = CUDA_ERROR_INVALID_HANDLE;
  if (res == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    res = v.cuMemSetAccess(va, w.size, &access, 1);
  }
  return res;
}

}  // namespace

IpcImports& IpcImports::Get() { return g_ipc_imports; }

IpcImports::Mapped* IpcImports::FindLocked(uint32_t pid, uint64_t nonce, uint64_t base) {
  for (int i = 0; i < count_; ++i) {
    if (maps_[i].pid == pid && maps_[i].nonce == nonce && maps_[i].base == base) {
      return &maps_[i];
    }
  }
  return nullptr;
}

bool IpcImports::Open(const CUipcMemHandle_v1& h, CUdeviceptr* out, CUresult* result) {
  IpcWireHandle w;
  if (!DecodeIpcHandle(h, &w)) return false;
  if (out == nullptr || w.size % kGranule != 0 || w.offset >= w.size) {
    *result = CUDA_ERROR_INVALID_VALUE;
    return true;
  }
  {
    MutexLock lock(mu_);
    if (Mapped* m = FindLocked(w.pid, w.nonce, w.base)) {
      ++m->refs;
      *out = m->va + m->offset;
      *result = CUDA_SUCCESS;
      return true;
    }
  }
  const VmmDriver* v = Vmm();
  CUdevice device = 0;
  if (v == nullptr || v->cuMemImportFromShareableHandle == nullptr || !LoadRealDriver()) {
    *result = CUDA_ERROR_NOT_SUPPORTED;
    return true;
  }
  if (Extras().cuCtxGetDevice == nullptr || Extras().cuCtxGetDevice(&device) != CUDA_SUCCESS) {
    *result = CUDA_ERROR_INVALID_CONTEXT;
    return true;
  }
  CUdeviceptr va = 0;
  *result = v->cuMemAddressReserve(&va, w.size, kGranule, 0, 0);
  if (*result != CUDA_SUCCESS) return true;
  uint64_t mapped = 0;
  *result = MapFromExporter(w, va, device, &mapped);
  MutexLock lock(mu_);
  Mapped* m = *result == CUDA_SUCCESS ? FindLocked(w.pid, w.nonce, w.base) : nullptr;
  if (*result == CUDA_SUCCESS && m == nullptr && count_ == capacity_) {
    int cap = capacity_ == 0 ? 16 : capacity_ * 2;
    auto* grown = static_cast<Mapped*>(std::realloc(maps_, sizeof(Mapped) * cap));
    if (grown == nullptr) {
      *result = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      maps_ = grown;
      capacity_ = cap;
    }
  }
  if (*result != CUDA_SUCCESS || m != nullptr) {
    // Failed, or another thread opened it meanwhile: this mapping goes.
    if (mapped != 0) v->cuMemUnmap(va, mapped);
    v->cuMemAddressFree(va, w.size);
  }
  if (*result != CUDA_SUCCESS) return true;
  if (m == nullptr) {
    m = &maps_[count_++];
    *m = Mapped{w.pid, w.nonce, w.base, va, w.size, w.offset, 0};
  }
  ++m->refs;
  *out = m->va + m->offset;
  return true;
}

bool IpcImports::Close(CUdeviceptr p, CUresult* result) {
  MutexLock lock(mu_);
  for (int i = 0; i < count_; ++i) {
    Mapped& m = maps_[i];
    if (m.va + m.offset != p) continue;
    *result = CUDA_SUCCESS;
    if (--m.refs == 0) {
      const VmmDriver& v = *Vmm();
      v.cuMemUnmap(m.va, m.size);
      v.cuMemAddressFree(m.va, m.size);
      m = maps_[--count_];
    }
    return true;
  }
  return false;
}

}  // namespace gshare::shim
