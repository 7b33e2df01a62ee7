// Process-wide state of the fake driver: cuInit and the settings it reads from the environment,
// the devices and their primary contexts, the table of live handles, and the checks every export
// starts with. Any thread. Everything is leaked on purpose (no statics with destructors), so
// exit() with busy workers and fork() children that exit stay safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "context.h"
#include "driver/cuda_abi.h"
#include "physical_gpus.h"

namespace gs_cuda::fake {

// Devices have two numbers. The ordinal is what the process passes as CUdevice: 0 .. devices-1
// of the GPUs CUDA_VISIBLE_DEVICES leaves it. The physical index (0 .. physical_devices-1) is
// the machine's GPU: its UUID, its FAKE_CUDA_DEVICE_FILE counter and the op log name it.
// Contexts, pools and allocations keep ordinals; memory.cc and the op log translate.
struct Settings {
  int devices = 1;                   // the visible devices (ordinals)
  int physical_devices = 1;          // FAKE_CUDA_DEVICES
  uint64_t mem_bytes = 16ull << 30;  // FAKE_CUDA_MEM_BYTES, per device
  uint32_t kernel_ms = 20;           // FAKE_CUDA_KERNEL_MS, kernels without a duration
  uint64_t context_bytes = 0;        // FAKE_CUDA_CONTEXT_BYTES, a process's first context
  uint64_t pin_us_per_mib = 0;       // FAKE_CUDA_PIN_US_PER_MIB, pinned host allocation
  unsigned sms = 132;                // FAKE_CUDA_SMS, SMs per device (green contexts)
};

// cuInit: reads the settings and CUDA_VISIBLE_DEVICES, opens the op log and
// FAKE_CUDA_DEVICE_FILE (device_usage.h) once. CUDA_ERROR_NO_DEVICE when no device is visible
// (FAKE_CUDA_DEVICES is 0, or the list names none), CUDA_ERROR_UNKNOWN when the log or the
// device file cannot be opened; later calls return the first call's result.
CUresult Init();
// checkpoint.cc: the agent that carries out other processes' cuCheckpointProcess* calls on
// this one (only with FAKE_CUDA_CHECKPOINT_DIR; false when it cannot listen), and the wait
// of every export while this process is locked or checkpointed.
bool StartCheckpointAgent();
void WaitWhileLocked();

// The settings; valid once Init succeeded.
const Settings& GetSettings();

// CUDA_ERROR_NOT_INITIALIZED before a successful cuInit, else CUDA_SUCCESS. While another
// process holds this one locked (checkpoint.cc), blocks until it is unlocked.
CUresult CheckInit();
// CheckInit, then the calling thread's current context into *ctx, or CUDA_ERROR_INVALID_CONTEXT.
CUresult CheckContext(Context** ctx);
// CUDA_ERROR_INVALID_DEVICE unless 0 <= dev < devices.
CUresult CheckDevice(CUdevice dev);

// CUDA_VISIBLE_DEVICES as the CUDA driver reads it: unset (visible == nullptr) is every
// physical device in order; else comma-separated entries, each a decimal physical index or a
// UUID "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (physical_gpus.h). The list ends at the
// first entry that is malformed, out of range or a repeat. Fills out[ordinal] = physical
// index (kMaxDevices entries) and returns the count; 0 when nothing is visible.
int ParseVisibleDevices(const char* visible, int physical_count, int* out);

// The physical index of a valid ordinal. Lock-free; any thread.
int PhysicalDevice(int ordinal);
// Moves ordinal onto another physical device (a checkpoint restore with GPU pairs). The caller
// moves the charged bytes; only while the process is checkpointed (no op runs).
void SetPhysicalDevice(int ordinal, int physical);

// The primary context of dev (valid), created on first use; nullptr when it cannot start.
Context* PrimaryContext(int dev);

// Maps a CUstream argument to a stream of the current context:
//   0      -> the per-thread default stream when per_thread_export (a _ptsz/_ptds export),
//             else the legacy default stream;
//   0x1    -> the legacy default stream; 0x2 -> the per-thread default stream;
//   other  -> a live stream handle, else CUDA_ERROR_INVALID_HANDLE.
// Needs a current context for 0, 0x1 and 0x2 (CUDA_ERROR_INVALID_CONTEXT).
CUresult ResolveStream(CUstream handle, bool per_thread_export, Stream** out);

// The sticky error of the process, as after a fault on a GPU: CUDA_SUCCESS until an op found
// its memory gone when it ran (CUDA_ERROR_ILLEGAL_ADDRESS); from then on submissions and the
// synchronizing calls return it.
void SetStickyError(CUresult r);
CUresult StickyError();

// An injected failure of one export: the first K calls of the process fail, K from the
// environment variable named (read at construction; unset, 0 or not a number: none). Trivially
// destructible, for a function-local static; any thread.
class InjectedFailures {
 public:
  explicit InjectedFailures(const char* env);
  // Whether this call is one of the first K.
  bool Next() { return limit_ > 0 && calls_.fetch_add(1) < limit_; }

 private:
  long limit_;
  std::atomic<long> calls_{0};
};

// The live handles, so that a stale or foreign handle is an error rather than a crash.
enum class HandleKind { kContext, kStream, kEvent, kModule, kFunction, kGraph, kGraphExec, kPool };
void AddHandle(const void* h, HandleKind kind);
void DropHandle(const void* h);
bool IsHandle(const void* h, HandleKind kind);

}  // namespace gs_cuda::fake
