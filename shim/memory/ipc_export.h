// IpcExports: the regions of this process that gshare's legacy IPC handles name, and the
// thread that gives their physical memory to importing processes (ipc_wire.h). The swap
// engine publishes a region when cuIpcGetMemHandle asks for it (the region is resident for
// good from then on) and forgets it when it is freed. Any thread; the serving thread takes
// only mu_, and the engine calls in with its own lock held (lock order: the engine's, then
// mu_).
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "driver/cuda_abi.h"
#include "memory/swap_records.h"
#include "mutex.h"

namespace gshare::shim {

using namespace gs_cuda;

class IpcExports {
 public:
  static IpcExports& Get();

  // Publishes the region at `base`, backed by its `n` chunks in address order (each mapped,
  // its handle created with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR). Publishing a base
  // again replaces its record. CUDA_SUCCESS with *nonce (random per process, part of the socket's
  // name: ipc_wire.h); CUDA_ERROR_NOT_SUPPORTED when the driver cannot export handles or the socket
  // or thread cannot be made; CUDA_ERROR_OUT_OF_MEMORY.
  CUresult Publish(uint64_t base, int n, const swap_internal::Chunk* chunks, uint64_t* nonce)
      EXCLUDES(mu_);
  // The region at `base` is being freed: later requests for it are refused. Waits for an
  // exchange in progress (each bounded by kIpcPeerTimeoutMs). Nothing when it is unknown.
  void Forget(uint64_t base) EXCLUDES(mu_);

 private:
  struct Piece {
    uint64_t bytes;
    CUmemGenericAllocationHandle handle;
  };
  struct Entry {
    uint64_t base;
    int n;
    Piece* pieces;  // malloc'd, n of them
  };
  // The listening socket and its thread, for this pid (a forked child makes its own).
  bool ServingLocked() REQUIRES(mu_);
  static void* Serve(void* self);
  // One importer's request on connection `conn`, answered and closed.
  void Answer(int conn) EXCLUDES(mu_);
  Entry* FindLocked(uint64_t base) REQUIRES(mu_);

  Mutex mu_;
  Entry* entries_ GUARDED_BY(mu_) = nullptr;
  int count_ GUARDED_BY(mu_) = 0;
  int capacity_ GUARDED_BY(mu_) = 0;
  pid_t server_pid_ GUARDED_BY(mu_) = 0;
  int listen_fd_ GUARDED_BY(mu_) = -1;
  uint64_t nonce_ GUARDED_BY(mu_) = 0;
};

}  // namespace gshare::shim
