// The fakes of LeaseSession's seams (shim/lease/lease_seams.h) and a rig of one process with
// device 0 known: a fake clock, a daemon link that records frames, a memory engine and shim
// calls that record what the session asks of them. Shared by the session's unit tests.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lease/lease_session.h"

namespace gshare::shim::unit_lease_session {

using lease::g_mu;
using proto::MsgType;
using proto::ReleaseReason;

constexpr uint64_t kEpoch = 7;
constexpr int64_t kTickMs = lease::LeaseSession::kTickMs;

class FakeClock final : public lease::LeaseClock {
 public:
  int64_t NowMs() const override { return ms; }
  int64_t NowNs() const override { return ms * 1'000'000; }
  void SleepMs(int64_t d) const override { slept += d; }
  int64_t ms = 1000;
  mutable int64_t slept = 0;
};

struct Frame {
  MsgType type;
  int device;
  uint64_t epoch;
  uint32_t reason;
  bool operator==(const Frame&) const = default;
};

class FakeLink final : public lease::DaemonLink {
 public:
  void Start() override { ++starts; }
  void Disconnect() override { ++disconnects; }
  const char* Where() const override { return "/run/gshare.sock"; }
  uint64_t JobId() const override { return 42; }
  bool Connected() const override { return up; }
  bool SendLease(MsgType type, int device, uint64_t epoch, uint32_t reason) override {
    frames.push_back({type, device, epoch, reason});
    return true;
  }
  bool RequestLease(int device) override {
    requests.push_back(device);
    return connected;
  }
  bool SendReport(int device) override {
    reports.push_back(device);
    return true;
  }
  bool SendSwapInReport(int device, const lease::SwapInNote& n) override {
    reports.push_back(device);
    swap_ins.push_back(n);
    return true;
  }
  bool connected = true;  // false: a request cannot be sent
  bool up = true;         // false: no connection (Connected)
  int starts = 0;
  int disconnects = 0;
  std::vector<lease::SwapInNote> swap_ins;
  std::vector<Frame> frames;
  std::vector<int> requests;
  std::vector<int> reports;
};

// A memory engine that records what the session asks of it; `back_ok` is the next swap-in's
// outcome, `wants_back` whether a grant brings memory back at all.
class FakeEngine final : public MemoryEngine {
 public:
  proto::MemoryEngine kind() const override { return proto::MemoryEngine::kSwap; }
  bool WantsBack(int) override { return wants_back; }
  bool Back(int device, BackStats* out) override {
    backs.push_back(device);
    out->moved = 3 << 20;
    out->ns = 5'000'000;
    out->room_wait_ns = back_room_wait_ns;
    return back_ok;
  }
  void Stopped(int device, ReleaseReason reason) override { stopped.emplace_back(device, reason); }
  void Evict(int device, uint64_t bytes) override { evicted.emplace_back(device, bytes); }
  void Stage(int device, uint64_t bytes) override { staged.emplace_back(device, bytes); }
  void RunAlone(int device) override { alone.push_back(device); }
  bool Pinning() const override { return pinning; }

  bool pinning = false;
  bool wants_back = false;
  bool back_ok = true;
  uint64_t back_room_wait_ns = 0;
  std::vector<int> backs;
  std::vector<int> alone;
  std::vector<std::pair<int, ReleaseReason>> stopped;
  std::vector<std::pair<int, uint64_t>> evicted;
  std::vector<std::pair<int, uint64_t>> staged;
};

class FakeShim final : public lease::ShimCalls {
 public:
  explicit FakeShim(const DeviceGate* gates) : gates_(gates) {}
  bool Capturing() const override { return capturing; }
  bool TakeGpuWaited() override { return waited; }
  MemoryEngine& Memory() override { return engine; }
  bool DeviceUuid(int device, proto::GpuUuid* out) override {
    if (device != 1) return false;  // device 0 is known from the start; 1 has a uuid to learn
    for (auto& x : out->bytes) x = 0x22;
    return true;
  }
  bool Finalizing() const override { return finalizing; }
  void SyncContexts(int device) override {
    synced.push_back(device);
    gate_open_at_sync = gates_[device].IsOpen();
  }
  void SetContended(int device, bool on) override { contended[device] = on; }
  void StopGapWatch(int device) override { watch_stopped.push_back(device); }
  void SendGap(int device) override { ++gaps_sent[device]; }
  int64_t HeldNs(int device) const override { return held_ns[device]; }
  bool WaitStretch(int) override { return false; }
  // What happens while a thread waits in Enter: `on_wait` plays the lease thread (a grant, the
  // daemon gone); with none, a wait would never end and the test fails.
  void WaitForChange() override NO_THREAD_SAFETY_ANALYSIS {
    ++waits;
    REQUIRE(on_wait);
    g_mu.Unlock();  // as pthread_cond_wait does
    on_wait();
    g_mu.Lock();
  }
  void WentUngated() override { ++ungated; }
  void Warn(const char* line) override { warnings.emplace_back(line); }

  FakeEngine engine;
  int gaps_sent[kMaxDevices] = {};
  int64_t held_ns[kMaxDevices] = {};
  bool capturing = false;
  bool waited = false;
  bool finalizing = false;
  std::vector<int> synced;
  bool gate_open_at_sync = true;
  bool contended[kMaxDevices] = {};
  std::vector<int> watch_stopped;
  std::function<void()> on_wait;
  int waits = 0;
  int ungated = 0;
  std::vector<std::string> warnings;

 private:
  const DeviceGate* gates_;
};

inline proto::GpuUuid Uuid(uint8_t b) {
  proto::GpuUuid u{};
  for (auto& x : u.bytes) x = b;
  return u;
}

// One process with device 0 known to the session (uuid 0x11), idle release after 500 ms.
struct Rig {
  FakeClock clock;
  FakeLink link;
  DeviceGate gates[kMaxDevices];
  FakeShim shim{gates};
  lease::LeaseSession session{clock, link, shim, gates};

  Rig() {
    session.Configure(500, true);
    MutexLock lock(g_mu);
    session.Dev(0).uuid = Uuid(0x11);
    session.Dev(0).uuid_known = true;
  }

  proto::LeaseMsg Msg(uint64_t epoch, uint64_t bytes = 0, uint8_t uuid = 0x11) {
    proto::LeaseMsg m{};
    m.gpu = Uuid(uuid);
    m.epoch = epoch;
    m.bytes = bytes;
    return m;
  }

  // A GRANT with nothing to swap in: the state, then the gate (as HandleGrant does).
  void Grant(uint64_t epoch) {
    MutexLock lock(g_mu);
    session.Granted(0, epoch, 0);
    session.OpenAfterGrant(0, epoch);
  }

  // One tick of the lease thread at the clock's time for device 0; runs the release it decides
  // unless `decide_only` (a release would wait forever to drain a gate a test holds).
  std::optional<ReleaseReason> Tick(bool decide_only = false) {
    const lease::LeaseSession::TickView t = session.BeginTick();
    ReleaseReason reason;
    bool release;
    {
      MutexLock lock(g_mu);
      release = session.DecideRelease(0, t, &reason);
    }
    if (!release) return std::nullopt;
    if (!decide_only) session.Release(0, reason);
    return reason;
  }

  // Ticks every kTickMs up to and including `until_ms` with no work; the first release decided.
  std::optional<ReleaseReason> IdleUntil(int64_t until_ms) {
    while (clock.ms + kTickMs <= until_ms) {
      clock.ms += kTickMs;
      if (auto r = Tick()) return r;
    }
    return std::nullopt;
  }

  // A submission seen at the next tick, `after_ms` from now.
  std::optional<ReleaseReason> SubmitAt(int64_t after_ms) {
    clock.ms += after_ms;
    gates[0].MarkActive();
    return Tick();
  }

  // Grants kEpoch at t=1000 ms and runs two CPU phases of 300 ms (gaps the predictor keeps);
  // ends at t=1600 with a submission just seen.
  void GrantWithTwoGaps() {
    Grant(kEpoch);
    REQUIRE(!SubmitAt(0));
    for (int i = 0; i < 2; ++i) {
      REQUIRE(!IdleUntil(clock.ms + 300 - kTickMs));
      REQUIRE(!SubmitAt(kTickMs));
    }
    REQUIRE(clock.ms == 1600);
  }

  bool Holding() {
    MutexLock lock(g_mu);
    return session.Dev(0).holding;
  }
};

inline Frame Released(uint64_t epoch, ReleaseReason reason) {
  return {MsgType::kLeaseReleased, 0, epoch, static_cast<uint32_t>(reason)};
}

}  // namespace gshare::shim::unit_lease_session
