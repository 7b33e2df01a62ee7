// The lease client as the memory engines' MemoryHost (memory/memory_host.h).
#include "lease/host_pool_query.h"
#include "lease/lease_client.h"
#include "memory/memory_host.h"

namespace gshare::shim {
namespace {

class LeaseMemoryHost final : public MemoryHost {
 public:
  constexpr LeaseMemoryHost() = default;
  void MemoryChanged(int device) override { LeaseClient::Get().MemoryChanged(device); }
  void SetDemand(int device, uint64_t bytes) override {
    LeaseClient::Get().SetDemand(device, bytes);
  }
  void ReportNow(int device) override { LeaseClient::Get().ReportNow(device); }
  void AddFixedBytes(int device, int64_t delta) override {
    LeaseClient::Get().AddDeviceBytes(device, delta);
  }
  int64_t FixedBytes(int device) override { return LeaseClient::Get().DeviceBytes(device); }
  uint64_t OthersFixed(int device) override { return LeaseClient::Get().OthersFixed(device); }
  void MarkActive(int device) override { GateOf(device).MarkActive(); }
  int SharedHostPool() override { return QueryHostPool(); }
};

constinit LeaseMemoryHost g_memory_host;

}  // namespace

MemoryHost& Host() { return g_memory_host; }

}  // namespace gshare::shim
