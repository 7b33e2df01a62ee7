// SmPartitions (sm_partition.h): per device, one green context of part of the SMs and a table
// of companion streams, one per application stream that launched narrow. Reaches the driver
// only through its table of entry points (compiled into the unit tests as it is).
#include "lease/sm_partition.h"

#include "memory/vmm_driver.h"
#include "shim_log.h"

namespace gshare::shim {

using namespace gs_cuda;

namespace {

bool HasGreenContexts(const DriverExtras& x) {
  return x.cuCtxGetCurrent && x.cuCtxGetDevice && x.cuEventCreate && x.cuEventRecord &&
         x.cuStreamWaitEvent && x.cuDeviceGetDevResource && x.cuDevSmResourceSplitByCount &&
         x.cuDevResourceGenerateDesc && x.cuGreenCtxCreate && x.cuGreenCtxStreamCreate &&
         x.cuDevicePrimaryCtxRetain && x.cuDevicePrimaryCtxRelease;
}

}  // namespace

int SmPartitions::Pct() {
  int pct = pct_.load(std::memory_order_relaxed);
  if (pct < 0) {
    pct = pct_source_();
    pct_.store(pct, std::memory_order_relaxed);
  }
  return pct;
}

int SmPartitions::Depth() {
  int depth = depth_.load(std::memory_order_relaxed);
  if (depth < 0) {
    depth = depth_source_ != nullptr ? depth_source_() : 0;
    if (depth < 0 || depth > kMaxDepth) depth = 0;
    depth_.store(depth, std::memory_order_relaxed);
  }
  return depth;
}

bool SmPartitions::Possible(int device) {
  return Pct() != 0 && parts_[device].state.load(std::memory_order_relaxed) != Partition::kNone;
}

// Makes `p`'s green context of Pct() of the SMs of the calling thread's device, whose current
// context must be the primary one.
void SmPartitions::Make(Partition& p, int device) {
  const DriverExtras& x = driver_();
  CUdevice dev = 0;
  CUcontext current = nullptr;
  CUcontext primary = nullptr;
  if (!HasGreenContexts(x) || x.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
      x.cuCtxGetCurrent(&current) != CUDA_SUCCESS ||
      x.cuDevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS) {
    p.state.store(Partition::kNone, std::memory_order_release);
    return;
  }
  const char* failed = nullptr;
  CUresult r = CUDA_SUCCESS;
  CUdevResource all = {};
  CUdevResource group = {};
  CUdevResource rest = {};
  unsigned groups = 1;
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx green = nullptr;
  if (current != primary) {
    failed = "the job's kernels run in a context it made, not the device's primary context";
  } else if ((r = x.cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
    failed = "cuDeviceGetDevResource";
  } else if ((r = x.cuDevSmResourceSplitByCount(
                  &group, &groups, &all, &rest, 0,
                  static_cast<unsigned>(all.sm.smCount * Pct() / 100))) != CUDA_SUCCESS ||
             groups != 1 || group.sm.smCount >= all.sm.smCount) {
    failed = "cuDevSmResourceSplitByCount";
  } else if ((r = x.cuDevResourceGenerateDesc(&desc, &group, 1)) != CUDA_SUCCESS) {
    failed = "cuDevResourceGenerateDesc";
  } else if ((r = x.cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) !=
             CUDA_SUCCESS) {
    failed = "cuGreenCtxCreate";
  }
  // The green context holds its own reference to the primary context.
  x.cuDevicePrimaryCtxRelease(dev);
  if (failed != nullptr) {
    Warn(
        "GPU %d: no SM partition (%s, %d); beside a busy higher priority this job's kernels "
        "use every SM",
        device, failed, r);
    p.state.store(Partition::kNone, std::memory_order_release);
    return;
  }
  p.primary = primary;
  p.green = green;
  p.state.store(Partition::kReady, std::memory_order_release);
}

// The companion of `user`, made on first use; nullptr when the table is full or the driver
// refused a stream or an event.
SmPartitions::Companion* SmPartitions::CompanionOf(Partition& p, CUstream user) {
  auto find = [&p, user]() -> Companion* {
    const int n = p.count.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (p.companions[i].user == user) return &p.companions[i];
    }
    return nullptr;
  };
  if (Companion* c = find()) return c;
  MutexLock lock(p.mu);
  if (Companion* c = find()) return c;
  const int n = p.count.load(std::memory_order_relaxed);
  if (n == kMaxCompanions) return nullptr;
  // Filled in place, unpublished until the count's release store.
  Companion& c = p.companions[n];
  c.user = user;
  c.moved.store(0, std::memory_order_relaxed);
  const DriverExtras& x = driver_();
  if (x.cuGreenCtxStreamCreate(&c.green, p.green, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS ||
      x.cuEventCreate(&c.into, kEventDisableTiming) != CUDA_SUCCESS ||
      x.cuEventCreate(&c.back, kEventDisableTiming) != CUDA_SUCCESS) {
    return nullptr;  // what was made stays unused: at most once per stream
  }
  for (int i = 0; i < Depth(); ++i) {
    if (x.cuEventCreate(&c.ring[i], kEventDisableTiming) != CUDA_SUCCESS) return nullptr;
  }
  p.count.store(n + 1, std::memory_order_release);
  return &c;
}

Narrowed SmPartitions::Enter(int device, CUstream stream, bool per_thread) {
  if (device < 0 || device >= kMaxDevices || Pct() == 0) return {};
  Partition& p = parts_[device];
  if (p.state.load(std::memory_order_acquire) == Partition::kUntried) {
    MutexLock lock(p.mu);
    if (p.state.load(std::memory_order_relaxed) == Partition::kUntried) Make(p, device);
  }
  if (p.state.load(std::memory_order_acquire) != Partition::kReady) return {};
  const DriverExtras& x = driver_();
  CUcontext current = nullptr;
  if (x.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != p.primary) return {};
  if (stream == nullptr && per_thread) stream = CuStreamPerThread();
  Companion* c = CompanionOf(p, stream);
  if (c == nullptr) return {};
  if (x.cuEventRecord(c->into, stream) != CUDA_SUCCESS ||
      x.cuStreamWaitEvent(c->green, c->into, 0) != CUDA_SUCCESS) {
    return {};
  }
  const int depth = Depth();
  if (depth == 0) return Narrowed{stream, c->green, c->back};
  // The edge out of the launch `depth` before this one: once it has completed, this launch
  // leaves at most `depth` queued. A launch that was counted but had not yet recorded it (a
  // racing thread) makes this wait shorter, never wrong.
  const uint32_t k = c->moved.fetch_add(1, std::memory_order_relaxed);
  CUevent back = c->ring[k % static_cast<uint32_t>(depth)];
  bool waited = false;
  if (k >= static_cast<uint32_t>(depth) && x.cuEventQuery && x.cuEventSynchronize &&
      x.cuEventQuery(back) == CUDA_ERROR_NOT_READY) {
    x.cuEventSynchronize(back);
    waited = true;
  }
  return Narrowed{stream, c->green, back, waited};
}

void SmPartitions::Leave(const Narrowed& n) const {
  if (n.green == nullptr) return;
  const DriverExtras& x = driver_();
  // Recorded after the launch on the companion; a later record only moves it further along
  // the companion, so the wait is never weaker than this launch (CUDA driver API,
  // cuStreamWaitEvent: it waits for the event's most recent record at the time of the call).
  if (x.cuEventRecord(n.back, n.green) == CUDA_SUCCESS) x.cuStreamWaitEvent(n.user, n.back, 0);
}

void SmPartitions::Reset() NO_THREAD_SAFETY_ANALYSIS {
  for (Partition& p : parts_) {
    p.mu.ReinitAfterFork();
    p.state.store(Partition::kUntried, std::memory_order_relaxed);
    p.primary = nullptr;
    p.green = nullptr;
    p.count.store(0, std::memory_order_relaxed);
  }
  depth_.store(-1, std::memory_order_relaxed);
}

}  // namespace gshare::shim
