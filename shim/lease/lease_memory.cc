// The lease client's memory side: ledger reports to the daemon, the swap-in (or managed
// prefetch) that comes with a grant before the gate opens, evictions the daemon asks for,
// and the accounting entry points of LeaseClient.
#include <algorithm>

#include "lease/lease_client.h"
#include "lease/lease_state.h"
#include "memory/managed_space.h"
#include "memory/memory_engine.h"
#include "shim_log.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
namespace lease {

// The ledger entry of this process on `device`. `swapin_*` describe the swap-in of grant
// `epoch` when flags has kReportAfterSwapIn. Any thread; needs the device's uuid.
bool SendReport(int device, uint32_t flags, uint64_t epoch, uint64_t swapin_ns,
                uint64_t swapin_bytes) {
  DeviceState& d = Dev(device);
  proto::MemReportMsg m{};
  m.gpu = d.uuid;
  m.ordinal = device;
  uint64_t fixed =
      static_cast<uint64_t>(std::max<int64_t>(0, d.bytes.load(std::memory_order_relaxed)));
  m.fixed = fixed;
  m.allocated = m.resident = fixed;
  SwapSpace& swap = SwapSpace::Get();
  if (swap.On()) {
    SwapStats st = swap.Stats(device);
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
    m.allocated += st.allocated;
    m.resident += st.resident;
    m.swaps_out = st.swaps_out;
    m.swaps_in = st.swaps_in;
    m.bytes_out = st.bytes_out;
    m.bytes_in = st.bytes_in;
    m.swap_ns = st.swap_ns;
    m.host_bytes = swap.HostBytes();
    m.staged = st.staged;
    m.fresh = st.fresh;
  } else if (ManagedSpace& managed = ManagedSpace::Get(); managed.On()) {
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kManaged);
    m.allocated += managed.Allocated(device);
    m.resident += managed.Resident(device);
  } else if (CheckpointEngineOn()) {
    // Everything moves with the process: the daemon checkpoints it whole.
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
    m.fixed = 0;
  }
  if (m.engine != 0) m.total = DeviceTotalBytes(device);
  m.demand = d.demand.load(std::memory_order_relaxed);
  m.flags = flags;
  m.epoch = epoch;
  m.swapin_ns = swapin_ns;
  m.swapin_bytes = swapin_bytes;
  const int64_t held_ms = g_lanes[device].held_ns.load(std::memory_order_relaxed) / 1000000;
  m.held_ms = static_cast<uint32_t>(std::min<int64_t>(held_ms, UINT32_MAX));
  return SendFrame(FdUnlocked(), proto::MsgType::kMemReport, &m, sizeof m);
}

// Asks for the lease on `device`, after a memory report: the daemon decides between
// shared and exclusive mode on what the process holds now.
bool RequestLease(int device) {
  if ((SwapSpace::Get().On() || ManagedSpace::Get().On() || CheckpointEngineOn()) &&
      Dev(device).uuid_known) {
    Dev(device).bytes_dirty.store(false, std::memory_order_relaxed);
    if (!SendReport(device, 0, 0, 0, 0)) return false;
  }
  return SendLease(proto::MsgType::kLeaseRequest, device, 0, 0);
}

// Without a daemon the process runs on `device` as if alone: its memory comes back first.
void RunUngated(int device) {
  SwapSpace& swap = SwapSpace::Get();
  if (!swap.On() || swap.Running(device)) return;
  uint64_t moved;
  swap.SwapIn(device, &moved, swap_internal::SwapInWaitNs());
  swap.SetRunning(device, true);
}

// A swap-in that finds no room for this long without the free memory growing asks the
// daemon for more (below); at most its whole wait (GSHARE_SWAP_WAIT_MS). Evictions free the
// GPU a batch (swap_internal::kBatchBytes) at a time: milliseconds apart into pinned memory,
// up to most of a second apart into memory the host has not touched yet (~1.3 GB/s:
// docs/benchmarks.md, "What went wrong at the start of the pairs, and what changed").
constexpr int64_t kAskForRoomNs = 1'000'000'000;

// The memory of a grant back on `device`; false when it could not all come back. The daemon
// evicted what its ledger says this job needs, but the ledger does not see all device memory
// (the driver's own, per context and per loaded module): when the room runs out, the job asks
// for what is missing as a demand, as a waiting allocation does (the daemon evicts it with
// 2 GiB of headroom where it can), adding to what it asked before, and goes on. It gives up
// once a whole wait (GSHARE_SWAP_WAIT_MS) brought no chunk back. Without the ask, a swap-in
// on a GPU that the jobs had filled in shared mode waited its whole wait in vain
// (docs/memory.md, "How `swap` works").
bool SwapInForGrant(int device, uint64_t* moved) {
  SwapSpace& swap = SwapSpace::Get();
  const int64_t wait_ns = swap_internal::SwapInWaitNs();
  const int64_t ask_ns = std::min(kAskForRoomNs, wait_ns);
  SwapSpace::RoomNeed need;
  SwapSpace::SwapInResult r = swap.SwapIn(device, moved, ask_ns, &need);
  uint64_t asked = 0, missing = need.missing;
  int64_t progress_at = NowNs();
  while (r == SwapSpace::SwapInResult::kNoRoom && NowNs() - progress_at < wait_ns) {
    asked += need.shortfall;
    LeaseClient::Get().SetDemand(device, asked);
    SendReport(device, 0, 0, 0, 0);
    uint64_t more = 0;
    r = swap.SwapIn(device, &more, ask_ns, &need);
    *moved += more;
    if (need.missing < missing) progress_at = NowNs();  // chunks came back, copied or fresh
    missing = need.missing;
  }
  if (asked > 0) LeaseClient::Get().SetDemand(device, 0);
  if (r != SwapSpace::SwapInResult::kDone) {
    Warn(
        "the swap-in on device %d did not finish (%s); its data stays in host memory and the "
        "job asks for the GPU again",
        device,
        r == SwapSpace::SwapInResult::kNoRoom ? "no room on the GPU" : "a driver call failed");
  }
  return r == SwapSpace::SwapInResult::kDone;
}

void HandleGrant(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  if (device < 0) {
    g_mu.Unlock();
    return;
  }
  DeviceState& d = Dev(device);
  g_session.Granted(device, m.epoch, m.bytes);
  SwapSpace& swap = SwapSpace::Get();
  bool swap_in = swap.On() && !d.dropping && !swap.Running(device);
  bool prefetch =
      ManagedSpace::Get().On() && !d.dropping && ManagedSpace::Get().Resident(device) == 0;
  g_mu.Unlock();
  if (prefetch) {
    uint64_t ns = 0;
    uint64_t moved = ManagedSpace::Get().Prefetch(device, true, &ns);
    SendReport(device, proto::kReportAfterSwapIn, m.epoch, ns, moved);
  }
  if (swap_in) {
    // The job's memory comes back before its first submission (docs/memory.md, "How `swap`
    // works": swap-in at the grant, before the gate opens).
    int64_t t0 = NowNs();
    uint64_t moved = 0;
    bool ok = SwapInForGrant(device, &moved);
    uint32_t flags = proto::kReportAfterSwapIn | (ok ? 0 : proto::kReportSwapInFailed);
    SendReport(device, flags, m.epoch, static_cast<uint64_t>(NowNs() - t0), moved);
    if (!ok) {
      // It cannot run without its memory: give the lease back, ask again a moment later.
      struct timespec ts = {0, 200 * 1000 * 1000};
      nanosleep(&ts, nullptr);
      g_mu.Lock();
      d.dropping = true;
      g_mu.Unlock();
      Release(device, proto::ReleaseReason::kDropped);
      return;
    }
    // SwapIn marked the process running on `device` under the engine's lock.
  }
  g_mu.Lock();
  g_session.OpenAfterGrant(device, m.epoch);
  pthread_cond_broadcast(&g_cv);
  g_mu.Unlock();
}

// The daemon needs room on the GPU: move memory to the host (only while not running there).
void HandleEvict(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  bool stopped = device >= 0 && !Dev(device).holding && !Dev(device).dropping;
  g_mu.Unlock();
  if (device < 0) return;
  SwapSpace& swap = SwapSpace::Get();
  if (stopped && swap.On() && !swap.Running(device)) swap.Evict(device, m.bytes);
  uint64_t ns;
  if (stopped && ManagedSpace::Get().On()) ManagedSpace::Get().Prefetch(device, false, &ns);
  SendReport(device, 0, 0, 0, 0);  // always answered: the daemon's ledger is then current
}

// The process is idle on a GPU: copy its memory there to host memory ahead of an eviction.
void HandleStage(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  bool idle = device >= 0 && !Dev(device).holding && !Dev(device).requested;
  g_mu.Unlock();
  SwapSpace& swap = SwapSpace::Get();
  if (device >= 0 && swap.On() && (idle || m.bytes == 0)) swap.Stage(device, m.bytes);
}

}  // namespace lease

using namespace lease;

void LeaseClient::AddDeviceBytes(int device, int64_t delta) {
  if (device < 0 || device >= kMaxDevices) return;
  Dev(device).bytes.fetch_add(delta, std::memory_order_relaxed);
  Dev(device).bytes_dirty.store(true, std::memory_order_relaxed);
}

int64_t LeaseClient::DeviceBytes(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  return Dev(device).bytes.load(std::memory_order_relaxed);
}

void LeaseClient::MemoryChanged(int device) {
  for (int i = 0; i < kMaxDevices; ++i) {
    if (i == device || (device < 0 && Dev(i).uuid_known)) {
      Dev(i).bytes_dirty.store(true, std::memory_order_relaxed);
    }
  }
}

void LeaseClient::SetDemand(int device, uint64_t bytes) {
  if (device < 0 || device >= kMaxDevices) return;
  Dev(device).demand.store(bytes, std::memory_order_relaxed);
  Dev(device).bytes_dirty.store(true, std::memory_order_relaxed);
}

uint64_t LeaseClient::OthersFixed(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  return Dev(device).others_fixed.load(std::memory_order_relaxed);
}

}  // namespace gshare::shim
