// The lease session's production seams (lease_seams.h) and the process's one LeaseSession:
// CLOCK_MONOTONIC, the daemon socket of lease_client.cc, the driver's context synchronization,
// the memory engines and the process's activity counters. All in static storage, constant-
// initialized and trivially destructible (lease_state.h says why).
#include "lease/inflight_window.h"
#include "lease/interpreter_exit.h"
#include "lease/lease_client.h"
#include "lease/lease_state.h"
#include "memory/memory_engine.h"

namespace gshare::shim::lease {
namespace {

class MonotonicClock final : public LeaseClock {
 public:
  int64_t NowMs() const override { return lease::NowMs(); }
  int64_t NowNs() const override { return lease::NowNs(); }
};

class SocketLink final : public DaemonLink {
 public:
  bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason) override
      REQUIRES(g_mu) {
    return lease::SendLease(type, device, epoch, reason);
  }
  bool RequestLease(int device) override REQUIRES(g_mu) { return lease::RequestLease(device); }
  bool SendReport(int device) override { return lease::SendReport(device, 0, 0, 0, 0); }
};

class ProcessShim final : public ShimCalls {
 public:
  bool Capturing() const override { return g_active_captures.load(std::memory_order_acquire) > 0; }
  bool TakeGpuWaited() override {
    return g_gpu_waited.exchange(false, std::memory_order_relaxed) ||
           g_syncing.load(std::memory_order_relaxed) > 0;
  }
  bool HostPinning() const override { return Engine().Pinning(); }
  bool Finalizing() const override {
    return Engine().kind() == proto::MemoryEngine::kCheckpoint && InterpreterFinalizing();
  }
  void SyncContexts(int device) override { lease::SyncContexts(device); }
  void MemoryStopped(int device, proto::ReleaseReason reason) override {
    Engine().Stopped(device, reason);
  }
  void SetContended(int device, bool contended) override {
    InflightWindow::SetContended(device, contended);
  }
  void StopGapWatch(int device) override REQUIRES(g_mu) { lease::StopGapWatch(device); }
};

constinit MonotonicClock g_lease_clock;
constinit SocketLink g_lease_link;
constinit ProcessShim g_lease_shim;

}  // namespace

constinit LeaseSession g_session(g_lease_clock, g_lease_link, g_lease_shim, g_gates);

}  // namespace gshare::shim::lease
