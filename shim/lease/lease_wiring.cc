// The lease session's production seams (lease_seams.h) and the process's one LeaseSession:
// CLOCK_MONOTONIC, the daemon socket of lease_client.cc, the driver (context synchronization,
// device uuids), the memory engine, the gap watch's stretches, the condition variable that
// waiting submissions sleep on, and the process's activity counters. All in static storage,
// constant- initialized and trivially destructible (lease_state.h says why).
#include "lease/inflight_window.h"
#include "lease/interpreter_exit.h"
#include "lease/lease_client.h"
#include "lease/lease_state.h"
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <cstring>

#include "driver/real_driver.h"
#include "lease/priority_lane.h"
#include "memory/memory_engine.h"
#include "memory/mono_clock.h"
#include "shim_log.h"

namespace gshare::shim::lease {
namespace {

class MonotonicClock final : public LeaseClock {
 public:
  int64_t NowMs() const override { return MonoNowNs() / 1000000; }
  int64_t NowNs() const override { return MonoNowNs(); }
  void SleepMs(int64_t ms) const override {
    struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
  }
};

class SocketLink final : public DaemonLink {
 public:
  void Start() override REQUIRES(g_mu) { EnsureStartedLocked(); }
  void Disconnect() override REQUIRES(g_mu) { g_socket.Disconnect(); }
  const char* Where() const override { return g_socket.path(); }
  uint64_t JobId() const override { return g_socket.job_id(); }
  bool Connected() const override REQUIRES(g_mu) { return g_socket.fd() >= 0; }
  bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason) override
      REQUIRES(g_mu) {
    return lease::SendLease(type, device, epoch, reason);
  }
  bool RequestLease(int device) override REQUIRES(g_mu) { return lease::RequestLease(device); }
  bool SendReport(int device) override { return lease::SendReport(device, 0, 0, 0, 0); }
  bool SendSwapInReport(int device, const SwapInNote& n) override {
    return lease::SendReport(device, n.flags, n.epoch, n.ns, n.bytes, n.room_wait_ns);
  }
};

class ProcessShim final : public ShimCalls {
 public:
  bool Capturing() const override { return g_active_captures.load(std::memory_order_acquire) > 0; }
  bool TakeGpuWaited() override {
    return g_gpu_waited.exchange(false, std::memory_order_relaxed) ||
           g_syncing.load(std::memory_order_relaxed) > 0;
  }
  MemoryEngine& Memory() override { return Engine(); }
  bool DeviceUuid(int device, proto::GpuUuid* out) override {
    gs_cuda::CUuuid u;
    if (Extras().cuDeviceGetUuid(&u, device) != gs_cuda::CUDA_SUCCESS) return false;
    std::memcpy(out->bytes, u.bytes, sizeof out->bytes);
    return true;
  }
  bool Finalizing() const override {
    return Engine().kind() == proto::MemoryEngine::kCheckpoint && InterpreterFinalizing();
  }
  void SyncContexts(int device) override { lease::SyncContexts(device); }
  void SetContended(int device, bool contended) override {
    InflightWindow::SetContended(device, contended);
  }
  void StopGapWatch(int device) override REQUIRES(g_mu) { lease::StopGapWatch(device); }
  void SendGap(int device) override REQUIRES(g_mu) { lease::SendGap(device); }
  int64_t HeldNs(int device) const override {
    return g_lanes[device].held_ns.load(std::memory_order_relaxed);
  }
  bool WaitStretch(int device) override REQUIRES(g_mu) { return lease::WaitStretch(device); }
  void WaitForChange() override REQUIRES(g_mu) { pthread_cond_wait(&g_cv, g_mu.native()); }
  void WentUngated() override { ClearLanes(); }
  void Warn(const char* line) override { shim::Warn("%s", line); }
};

class SocketConnection final : public DaemonConnection {
 public:
  int Fd() const override REQUIRES(g_mu) { return g_socket.fd(); }
  void CloseDead() override REQUIRES(g_mu) { g_socket.CloseDead(); }
  int Dial() override { return g_socket.Dial(); }
  bool AwaitPong(int fd, uint64_t seq, int ms) override { return g_socket.AwaitPong(fd, seq, ms); }
  void Adopt(int fd) override REQUIRES(g_mu) { g_socket.Adopt(fd); }
  void Close(int fd) override { close(fd); }
  int Wait(int fd, int ms) override {
    struct pollfd p = {fd, POLLIN, 0};
    const int n = poll(&p, 1, ms);
    if (n < 0) return errno == EINTR ? 0 : -1;
    return n > 0 ? 1 : 0;
  }
  bool Receive(int fd) override { return ReceiveOne(fd); }
  bool Ping(int fd, uint64_t seq) override { return g_socket.Ping(fd, seq); }
};

constinit MonotonicClock g_lease_clock;
constinit SocketLink g_lease_link;
constinit ProcessShim g_lease_shim;
constinit SocketConnection g_lease_conn;

}  // namespace

constinit LeaseSession g_session(g_lease_clock, g_lease_link, g_lease_shim, g_gates);
constinit LeaseLoop g_loop(g_session, g_lease_conn, g_lease_clock);

}  // namespace gshare::shim::lease
