// IpcImports: cuIpcOpenMemHandle / cuIpcCloseMemHandle of the legacy IPC handles gshare makes
// for swap-engine memory (ipc_wire.h). Opening asks the exporting process's shim for the
// region's physical handles, imports them and maps them at an address of this process,
// readable and writable from the device of the calling thread's context, as the driver's
// cuIpcOpenMemHandle does (CUDA Driver API, "Interprocess Communication"; the peer access
// that CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS asks for is what the mapping's access gives).
// Handles of the driver's own are not touched. Any thread.
#pragma once

#include <cstdint>

#include "driver/cuda_abi.h"
#include "mutex.h"

namespace gshare::shim {

using namespace gs_cuda;

class IpcImports {
 public:
  static IpcImports& Get();

  // False when `h` is not gshare's (pass it to the driver). Else *result: CUDA_SUCCESS with
  // *out the allocation's address here (the same address, counted once more, when the handle
  // is open already); CUDA_ERROR_INVALID_HANDLE when the exporter is gone or does not know
  // the region; CUDA_ERROR_INVALID_CONTEXT without a current context; the driver's errors
  // from importing, reserving and mapping (nothing is left mapped then).
  bool Open(const CUipcMemHandle_v1& h, CUdeviceptr* out, CUresult* result) EXCLUDES(mu_);
  // False when `p` is not an address Open gave (pass it to the driver). The mapping goes
  // when every Open of it is closed.
  bool Close(CUdeviceptr p, CUresult* result) EXCLUDES(mu_);

 private:
  struct Mapped {
    uint32_t pid;
    uint64_t nonce;
    uint64_t base;  // the exporter's
    CUdeviceptr va;
    uint64_t size;
    uint64_t offset;
    int refs;
  };
  Mapped* FindLocked(uint32_t pid, uint64_t nonce, uint64_t base) REQUIRES(mu_);

  Mutex mu_;
  Mapped* maps_ GUARDED_BY(mu_) = nullptr;
  int count_ GUARDED_BY(mu_) = 0;
  int capacity_ GUARDED_BY(mu_) = 0;
};

}  // namespace gshare::shim
