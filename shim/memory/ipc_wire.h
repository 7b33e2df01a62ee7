// Legacy CUDA IPC of swap-engine memory (docs/memory.md, "Legacy IPC of engine memory"). The
// engine's memory is VMM memory, for which the driver has no legacy IPC handle (CUDA Driver
// API, "Virtual Memory Management"). So the shim answers cuIpcGetMemHandle with a handle of
// its own, below, and the importing process's shim asks the exporter's over a Unix socket for
// the region's physical handles as POSIX file descriptors (SCM_RIGHTS, unix(7)), imports them
// (cuMemImportFromShareableHandle) and maps them, as the CUDA samples' memMapIPCDrv does.
// Plain data and pure functions; any thread.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "driver/cuda_abi.h"

namespace gshare::shim {

// The 64 bytes of CUipcMemHandle when gshare made it. `magic` tells it from a driver's handle.
struct IpcWireHandle {
  char magic[8];
  uint32_t pid;     // the exporting process
  int32_t device;   // the exporter's device ordinal
  uint64_t nonce;   // random per exporting process: a handle outliving it (pid reused) fails
  uint64_t base;    // the region's base address in the exporter
  uint64_t size;    // bytes the importer maps (whole 2 MiB units)
  uint64_t offset;  // where the allocation starts in the region (a slab's block)
  uint64_t reserved[2];
};
static_assert(sizeof(IpcWireHandle) == sizeof(gs_cuda::CUipcMemHandle_v1));

inline constexpr char kIpcMagic[8] = {'g', 's', 'h', 'I', 'P', 'C', '1', '\0'};

inline gs_cuda::CUipcMemHandle_v1 EncodeIpcHandle(IpcWireHandle w) {
  std::memcpy(w.magic, kIpcMagic, sizeof kIpcMagic);
  gs_cuda::CUipcMemHandle_v1 h;
  std::memcpy(&h, &w, sizeof h);
  return h;
}

// False when `h` is not gshare's (a driver's handle: pass it on).
inline bool DecodeIpcHandle(const gs_cuda::CUipcMemHandle_v1& h, IpcWireHandle* out) {
  std::memcpy(out, &h, sizeof *out);
  return std::memcmp(out->magic, kIpcMagic, sizeof kIpcMagic) == 0 && out->pid != 0 &&
         out->size != 0;
}

// The exporter's socket: an abstract AF_UNIX name (unix(7)), so nothing is left in the file
// system when the process dies. The name, nonce included, is no secret (/proc/net/unix lists
// it): the exporter answers only its own user and root (SO_PEERCRED), who could read its
// memory anyway. Returns the address length for bind/connect.
inline socklen_t IpcSocketAddress(uint32_t pid, uint64_t nonce, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  int n = std::snprintf(addr->sun_path + 1, sizeof addr->sun_path - 1, "gshare-ipc.%u.%016llx", pid,
                        static_cast<unsigned long long>(nonce));
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Importer -> exporter, one SOCK_SEQPACKET message (the socket's name holds the nonce).
struct IpcRequest {
  char magic[8];
  uint64_t base;
};

// Exporter -> importer: messages of at most kIpcBatch chunks, each with as many descriptors.
// `status` is a CUresult: anything but CUDA_SUCCESS ends the exchange (the region is unknown,
// or the driver could not export a chunk). `total` is the number of chunks of the region.
inline constexpr int kIpcBatch = 32;
struct IpcChunkBatch {
  int32_t status;
  uint32_t total;
  uint32_t count;
  uint32_t pad;
  uint64_t bytes[kIpcBatch];
};

// How long either side waits for the other (ms): a peer that stalls cannot hold up the
// exporter's frees or the importer's open for longer.
inline constexpr int kIpcPeerTimeoutMs = 5000;

// Bounds the socket's reads and writes by kIpcPeerTimeoutMs.
inline void SetIpcPeerTimeouts(int fd) {
  struct timeval tv = {kIpcPeerTimeoutMs / 1000, (kIpcPeerTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace gshare::shim
