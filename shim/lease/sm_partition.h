// SmPartition: part of a device's SMs (a green context of the primary context, CUDA driver API
// 6.22) for the kernel launches of an MPS client while a higher-priority job on its GPU is busy
// (priority_window.h, WindowVerdict::kSubmitNarrow). A launch on stream S moves to S's companion
// stream there, S's order kept by two events (record `into` on S, the companion waits for it,
// launch, record `back` on the companion, S waits for it). Only plain kernel launches move, only
// from the primary context, never while capturing. docs/design.md, "The SM partition", has the
// rule and its measurements. GSHARE_PRIORITY_SM_PCT: the share, 1..99 (0 or 100: none; unset:
// kDefaultBusySmPct). GSHARE_PRIORITY_NARROW_DEPTH: how many moved launches one application
// stream may have queued on the partition, 1..kMaxDepth (unset or 0: no bound); a launch past
// it waits, in Enter, for the one that many launches before it to complete. Work already on
// the partition is not recalled when the higher job falls behind its arrivals and the client
// stops moving launches there (backlog_watch.h): the bound is how much of it there can be.
// Any submitting thread; reset by the fork handler.
#pragma once

#include <atomic>

#include "driver/context_registry.h"
#include "driver/cuda_abi.h"
#include "driver/real_driver.h"
#include "mutex.h"

namespace gshare::shim {

// The SM share a lower MPS client keeps while a higher job on its GPU is busy, when
// GSHARE_PRIORITY_SM_PCT is unset: 70 % (96 of an H200's 132 SMs). Measured with the service
// beside the trainings and alone in turns within one window (docs/benchmarks.md, "A service
// that falls behind"): with the backlog rule (backlog_watch.h) beside a ResNet service, three
// and eight trainings kept 77-78 % of their rate at 70 % (p99 0.85-1.13x alone, two calls)
// where at 60 % they kept 66-69 %, and one kept 82 % (1.11x). Without that rule 70 % let the
// service fall behind its arrivals for good (p99 8.4x beside eight).
inline constexpr int kDefaultBusySmPct = 70;

// Where a launch moved to; null members: it stays where it was.
struct Narrowed {
  gs_cuda::CUstream user = nullptr;   // the application's stream (per-thread resolved)
  gs_cuda::CUstream green = nullptr;  // the companion on the partition
  gs_cuda::CUevent back = nullptr;    // recorded on the companion after the launch
  bool waited = false;                // it waited for the depth bound (GSHARE_..._NARROW_DEPTH)
};

// The partitions of one process, one per device, reaching the driver only through `driver`
// (the shim's Extras(); a table of fakes in the unit tests). Trivially destructible, for
// static storage. Any thread.
class SmPartitions {
 public:
  static constexpr int kMaxCompanions = 32;
  static constexpr int kMaxDepth = 64;

  // `driver`: the entry points it calls. `pct`: the partition's share of the SMs, 1..99, or 0
  // for no partition on any device; asked once, at first use. `depth`: the bound on the moved
  // launches one stream has queued there, 1..kMaxDepth, or 0 (also when null) for none; asked
  // once. Constant-initialized, so that the shim's table needs no guard on the launch path and
  // the fork handler can reset it any time.
  constexpr SmPartitions(const DriverExtras& (*driver)(), int (*pct)(), int (*depth)() = nullptr)
      : driver_(driver), pct_source_(pct), depth_source_(depth) {}

  // Whether `device` may have a partition: a share is set and no attempt there failed.
  // Lock-free.
  bool Possible(int device);
  // Before a kernel launch on `stream` (0 with `per_thread`: the per-thread default stream)
  // on `device`, by a thread whose current context is the launch's: the companion stream to
  // launch on, its input edge already queued (it waits for what `stream` has queued). Makes
  // the device's partition at its first call there. With a depth bound D, first waits
  // (cuEventSynchronize) until the launch D moved launches before this one on `stream` has
  // completed. An empty Narrowed when the launch must stay: no partition, not the primary
  // context, the companion table full, or a driver call failed.
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
    gs_cuda::CUevent back = nullptr;  // the edge out without a depth bound
    // With a depth bound D: D edges out, used in turn, so that the one a launch reuses marks
    // the end of the launch D before it.
    gs_cuda::CUevent ring[kMaxDepth] = {};
    std::atomic<uint32_t> moved{0};  // launches moved from `user`, counting from 0
  };
  struct Partition {
    enum : int { kUntried = 0, kReady = 1, kNone = -1 };
    Mutex mu;  // making the partition and its companions; lookups take no lock
    std::atomic<int> state{kUntried};
    gs_cuda::CUcontext primary = nullptr;  // written before state turns kReady
    gs_cuda::CUgreenCtx green = nullptr;
    // Entries below count are complete (published by the release store; after that only a
    // companion's `moved` count changes).
    Companion companions[kMaxCompanions];
    std::atomic<int> count{0};
  };
  void Make(Partition& p, int device) REQUIRES(p.mu);
  Companion* CompanionOf(Partition& p, gs_cuda::CUstream user);

  int Pct();    // pct_source_'s answer, read once
  int Depth();  // depth_source_'s answer, read once; 0: no bound

  const DriverExtras& (*const driver_)();
  int (*const pct_source_)();
  int (*const depth_source_)();
  std::atomic<int> pct_{-1};    // -1: not asked yet
  std::atomic<int> depth_{-1};  // -1: not asked yet
  Partition parts_[kMaxDevices];
};

// The shim's table: Extras() and GSHARE_PRIORITY_SM_PCT (1..99; 0 or 100: no partition;
// unset: kDefaultBusySmPct), read at first use. Enter also counts the moved launches for the
// census (driver/census.h).
class SmPartition {
 public:
  static bool Possible(int device);
  static Narrowed Enter(int device, gs_cuda::CUstream stream, bool per_thread);
  static void Leave(const Narrowed& n);
  static void ResetAfterFork();
};

}  // namespace gshare::shim
