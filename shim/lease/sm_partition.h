// SmPartition: part of a device's SMs, for the kernels of a process that runs beside a busy
// higher-priority job as an MPS client (priority_window.h, WindowVerdict::kSubmitNarrow;
// docs/design.md, "Priority lanes", the SM partition).
//
// MPS fixes a client's SM share when its context is made (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE),
// so a capped training pays the cap also while the service it yields to is idle. A green
// context (CUDA driver API 6.22, "Green Contexts"; CUDA 12.4 and later) made from the primary
// context shares its memory, modules and functions and differs only in the SMs its kernels may
// use, so a kernel the application launches on a stream S of the primary context can run on a
// companion stream of the green context instead, without the application knowing, and S keeps
// its order with two events:
//
//   record `into` on S; the companion waits for `into`; launch on the companion;
//   record `back` on the companion; S waits for `back`.
//
// Everything queued on S before the launch runs before it, everything queued on S after it
// (kernels, copies, event records, synchronizations) after it. Measured on an H200 (132 SMs):
// PyTorch's kernels and tensors run on such a stream bit for bit as on their own, bare and as
// MPS clients, a bf16 GEMM takes 132/72 as long on 72 SMs, and the event round trip costs the
// launching thread ~4 driver calls (docs/benchmarks.md, "SM partition while the service is
// busy").
//
// Only kernel launches move (cuLaunchKernel, and cuLaunchKernelEx without launch attributes:
// cooperative and cluster launches need co-resident blocks the partition may not hold), only
// from the primary context (a context the application made shares no memory with the green
// one), never while the stream captures (the gate skips captured work before this is asked).
//
// GSHARE_PRIORITY_SM_PCT: the percentage of the device's SMs the partition holds, 1..99 (the
// driver rounds up to its SM granularity, 8 on an H100/H200); 0 or 100: no partition; unset:
// kDefaultBusySmPct. The partition is made at the first narrow launch on the device (one
// resource split, one green context); each stream that launches narrow gets one companion
// stream and two events, up to kMaxCompanions per device (later streams launch where they
// are). When the driver lacks green contexts or refuses one, the device has no partition and
// the window's rule runs as before. Any submitting thread; reset by the fork handler.
#pragma once

#include <atomic>

#include "hooks/context_registry.h"
#include "hooks/cuda_abi.h"
#include "hooks/real_driver.h"
#include "mutex.h"

namespace gshare::shim {

// The SM share a lower MPS client keeps while a higher job on its GPU is busy, when
// GSHARE_PRIORITY_SM_PCT is unset: half, the cap that held a ResNet service's p99 at 0.96-1.03x
// alone as a fixed MPS cap (docs/benchmarks.md, "The MPS cap's trade-off curve").
inline constexpr int kDefaultBusySmPct = 50;

// Where a launch moved to; null members: it stays where it was.
struct Narrowed {
  gs_cuda::CUstream user = nullptr;   // the application's stream (per-thread resolved)
  gs_cuda::CUstream green = nullptr;  // the companion on the partition
  gs_cuda::CUevent back = nullptr;    // recorded on the companion after the launch
};

// The partitions of one process, one per device, reaching the driver only through `driver`
// (the shim's Extras(); a table of fakes in the unit tests). Trivially destructible, for
// static storage. Any thread.
class SmPartitions {
 public:
  static constexpr int kMaxCompanions = 32;

  // `pct`: the partition's share of the SMs, 1..99; 0: no partition on any device.
  constexpr SmPartitions(const DriverExtras* driver, int pct) : driver_(driver), pct_(pct) {}

  // Whether `device` may have a partition: a share is set and no attempt there failed.
  // Lock-free.
  bool Possible(int device) const;
  // Before a kernel launch on `stream` (0 with `per_thread`: the per-thread default stream)
  // on `device`, by a thread whose current context is the launch's: the companion stream to
  // launch on, its input edge already queued (it waits for what `stream` has queued). Makes
  // the device's partition at its first call there. An empty Narrowed when the launch must
  // stay: no partition, not the primary context, the companion table full, or a driver call
  // failed.
  Narrowed Enter(int device, gs_cuda::CUstream stream, bool per_thread);
  // After the launch on `n.green`: `n.user` waits for it.
  void Leave(const Narrowed& n) const;
  // In a forked child (atfork handler; its only thread): the parent's contexts mean nothing.
  void Reset();

 private:
  struct Companion {
    gs_cuda::CUstream user = nullptr;
    gs_cuda::CUstream green = nullptr;
    gs_cuda::CUevent into = nullptr;
    gs_cuda::CUevent back = nullptr;
  };
  struct Partition {
    enum : int { kUntried = 0, kReady = 1, kNone = -1 };
    Mutex mu;  // making the partition and its companions; lookups take no lock
    std::atomic<int> state{kUntried};
    gs_cuda::CUcontext primary = nullptr;  // written before state turns kReady
    gs_cuda::CUgreenCtx green = nullptr;
    // Entries below count are complete (published by the release store, never changed).
    Companion companions[kMaxCompanions];
    std::atomic<int> count{0};
  };
  void Make(Partition& p, int device) REQUIRES(p.mu);
  const Companion* CompanionOf(Partition& p, gs_cuda::CUstream user);

  const DriverExtras* const driver_;
  const int pct_;
  Partition parts_[kMaxDevices];
};

// The shim's table: Extras() and GSHARE_PRIORITY_SM_PCT (1..99; 0 or 100: no partition;
// unset: kDefaultBusySmPct), read at first use. Enter also counts the moved launches for the
// census (hooks/census.h).
class SmPartition {
 public:
  static bool Possible(int device);
  static Narrowed Enter(int device, gs_cuda::CUstream stream, bool per_thread);
  static void Leave(const Narrowed& n);
  static void ResetAfterFork();
};

}  // namespace gshare::shim
