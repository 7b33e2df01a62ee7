// The lease client's memory side: ledger reports to the daemon and the accounting entry points
// of LeaseClient (what the memory engine does at a grant, an eviction or a stage is
// lease_session_memory.cc).
#include <algorithm>

#include "lease/lease_client.h"
#include "lease/lease_state.h"
#include "memory/memory_engine.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
namespace lease {

// The ledger entry of this process on `device`. `swapin_*` describe the swap-in of grant
// `epoch` when flags has kReportAfterSwapIn. Any thread; needs the device's uuid.
bool SendReport(int device, uint32_t flags, uint64_t epoch, uint64_t swapin_ns,
                uint64_t swapin_bytes, uint64_t swapin_wait_ns) {
  DeviceState& d = Dev(device);
  proto::MemReportMsg m{};
  m.gpu = d.uuid;
  m.ordinal = device;
  uint64_t fixed =
      static_cast<uint64_t>(std::max<int64_t>(0, d.bytes.load(std::memory_order_relaxed)));
  m.fixed = fixed;
  m.allocated = m.resident = fixed;
  Engine().Report(device, &m);
  if (m.engine != 0) m.total = DeviceTotalBytes(device);
  m.demand = d.demand.load(std::memory_order_relaxed);
  m.flags = flags;
  m.epoch = epoch;
  m.swapin_ns = swapin_ns;
  m.swapin_bytes = swapin_bytes;
  m.swapin_wait_ns = swapin_wait_ns;
  const int64_t held_ms = g_lanes[device].held_ns.load(std::memory_order_relaxed) / 1000000;
  m.held_ms = static_cast<uint32_t>(std::min<int64_t>(held_ms, UINT32_MAX));
  return g_socket.SendFrame(g_socket.FdUnlocked(), proto::MsgType::kMemReport, &m, sizeof m);
}

// Asks for the lease on `device`, after a memory report: the daemon decides between
// shared and exclusive mode on what the process holds now.
bool RequestLease(int device) {
  if (Engine().kind() != proto::MemoryEngine::kOff && Dev(device).uuid_known) {
    Dev(device).bytes_dirty.store(false, std::memory_order_relaxed);
    if (!SendReport(device, 0, 0, 0, 0)) return false;
  }
  return SendLease(proto::MsgType::kLeaseRequest, device, 0, 0);
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

void LeaseClient::ReportNow(int device) {
  if (device < 0 || device >= kMaxDevices || !Dev(device).uuid_known) return;
  SendReport(device, 0, 0, 0, 0);
}

uint64_t LeaseClient::OthersFixed(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  return Dev(device).others_fixed.load(std::memory_order_relaxed);
}

}  // namespace gshare::shim
