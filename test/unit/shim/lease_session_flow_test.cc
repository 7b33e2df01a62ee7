// LeaseSession (shim/lease/lease_session.h): a submission's way in through a closed gate
// (Enter), failing open without a daemon (GoUngated), the memory engine at a GRANT, an EVICT
// and a SWAP_STAGE, the notice that a job waits, and the state a forked child starts from.
#include "lease/lease_session.h"

#include <doctest/doctest.h>

#include "lease_session_rig.h"

namespace gshare::shim::unit_lease_session {
namespace {

TEST_CASE("LeaseSession: a submission asks for the lease once and enters when it is granted") {
  Rig r;
  r.shim.on_wait = [&] {
    // The lease thread: the daemon grants while the thread waits.
    CHECK(r.link.requests == std::vector<int>{0});
    r.Grant(kEpoch);
  };
  r.session.Enter(0);  // returns inside the gate
  CHECK(r.link.starts == 1);
  CHECK(r.shim.waits == 1);
  CHECK(r.link.requests == std::vector<int>{0});
  CHECK(r.gates[0].Busy());
  r.gates[0].Exit();
  MutexLock lock(g_mu);
  CHECK(r.session.Dev(0).waiters == 0);
  CHECK(!r.session.Dev(0).requested);
  CHECK(r.session.Dev(0).requested_ms == 1000);
}

TEST_CASE("LeaseSession: a waiting submission does not ask again while its request is out") {
  Rig r;
  int woken = 0;
  r.shim.on_wait = [&] {
    if (++woken < 3) return;  // woken for something else twice (another device's grant)
    r.Grant(kEpoch);
  };
  r.session.Enter(0);
  r.gates[0].Exit();
  CHECK(r.shim.waits == 3);
  CHECK(r.link.requests == std::vector<int>{0});
}

TEST_CASE("LeaseSession: a request that cannot be sent makes the job run ungated, said once") {
  Rig r;
  r.link.connected = false;
  r.session.Enter(0);  // no wait: the gate is forced open
  CHECK(r.shim.waits == 0);
  CHECK(r.gates[0].Busy());
  r.gates[0].Exit();
  CHECK(r.link.disconnects == 1);
  CHECK(r.shim.ungated == 1);
  CHECK(r.shim.warnings ==
        std::vector<std::string>{"lost the connection to the gshare daemon at /run/gshare.sock; "
                                 "the job runs without GPU sharing"});
  // The memory comes back on every device, every gate opens.
  CHECK(r.shim.engine.alone.size() == static_cast<size_t>(kMaxDevices));
  for (int i = 0; i < kMaxDevices; ++i) CHECK(r.gates[i].IsOpen());
  {
    MutexLock lock(g_mu);
    CHECK(r.session.ungated());
    CHECK(!r.session.Dev(0).requested);
    r.session.GoUngated("the gshare daemon stopped answering at");  // a second time: quiet
  }
  CHECK(r.shim.warnings.size() == 1);
  // Ungated, a submission on another device enters at once, asking nothing.
  r.gates[1].Close();
  r.session.Enter(1);
  r.gates[1].Exit();
  CHECK(r.link.requests == std::vector<int>{0});
}

TEST_CASE("LeaseSession: the daemon gone while a submission waits lets it in") {
  Rig r;
  r.shim.on_wait = [&] {
    MutexLock lock(g_mu);
    r.session.GoUngated("lost the connection to the gshare daemon at");
  };
  {
    MutexLock lock(g_mu);
    r.session.Quiet();  // GSHARE_QUIET: `gshare run` said it already
  }
  r.session.Enter(0);
  r.gates[0].Exit();
  CHECK(r.shim.waits == 1);
  CHECK(r.shim.warnings.empty());
  // Reconnected: gated again, the next closed gate asks for the lease.
  {
    MutexLock lock(g_mu);
    r.session.Reconnected();
    CHECK(!r.session.ungated());
  }
  r.gates[0].Close();
  r.shim.on_wait = [&] { r.Grant(kEpoch + 1); };
  r.session.Enter(0);
  r.gates[0].Exit();
  CHECK(r.link.requests == std::vector<int>{0, 0});
}

TEST_CASE("LeaseSession: a device's uuid is learned once, from the driver") {
  Rig r;
  MutexLock lock(g_mu);
  r.session.EnsureUuid(1);
  CHECK(r.session.Dev(1).uuid_known);
  CHECK(r.session.DeviceOf(Uuid(0x22)) == 1);
  r.session.EnsureUuid(2);  // the driver has none
  CHECK(!r.session.Dev(2).uuid_known);
  CHECK(r.session.DeviceOf(Uuid(0x33)) == -1);
}

TEST_CASE("LeaseSession: a grant brings the memory back before the gate opens, and says so") {
  Rig r;
  r.shim.engine.wants_back = true;
  r.shim.engine.back_room_wait_ns = 4'000'000;  // of its 5 ms, 4 waiting for another's memory
  r.session.OnGrant(r.Msg(kEpoch, 1 << 20));
  CHECK(r.shim.engine.backs == std::vector<int>{0});
  REQUIRE(r.link.swap_ins.size() == 1);
  CHECK(r.link.swap_ins[0].flags == proto::kReportAfterSwapIn);
  CHECK(r.link.swap_ins[0].epoch == kEpoch);
  CHECK(r.link.swap_ins[0].bytes == 3u << 20);
  CHECK(r.link.swap_ins[0].ns == 5'000'000u);
  CHECK(r.link.swap_ins[0].room_wait_ns == 4'000'000u);
  CHECK(r.gates[0].IsOpen());
  CHECK(r.Holding());
  MutexLock lock(g_mu);
  CHECK(r.session.Dev(0).others_fixed.load() == 1u << 20);
}

TEST_CASE("LeaseSession: a grant whose memory cannot all come back is given back, gate closed") {
  Rig r;
  r.shim.engine.wants_back = true;
  r.shim.engine.back_ok = false;
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).waiters = 1;  // a thread still wants the GPU: it asks again
  }
  r.session.OnGrant(r.Msg(kEpoch));
  REQUIRE(r.link.swap_ins.size() == 1);
  CHECK(r.link.swap_ins[0].flags == (proto::kReportAfterSwapIn | proto::kReportSwapInFailed));
  CHECK(r.clock.slept == lease::LeaseSession::kRetryAfterFailedSwapInMs);
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kDropped)});
  CHECK(!r.gates[0].IsOpen());
  CHECK(!r.Holding());
  CHECK(r.link.requests == std::vector<int>{0});
}

TEST_CASE(
    "LeaseSession: a grant with nothing to bring back opens at once; unknown GPUs are ignored") {
  Rig r;
  r.session.OnGrant(r.Msg(kEpoch, 0, 0x99));  // a GPU this process does not know
  CHECK(!r.gates[0].IsOpen());
  CHECK(!r.Holding());
  r.session.OnGrant(r.Msg(kEpoch));
  CHECK(r.shim.engine.backs.empty());
  CHECK(r.link.swap_ins.empty());
  CHECK(r.gates[0].IsOpen());
}

TEST_CASE("LeaseSession: an eviction moves memory only where the process holds no lease") {
  Rig r;
  r.Grant(kEpoch);
  r.session.OnEvict(r.Msg(kEpoch, 5 << 20));
  CHECK(r.shim.engine.evicted.empty());          // it runs there: nothing moves under it
  CHECK(r.link.reports == std::vector<int>{0});  // but the daemon always hears back
  r.session.OnDrop(r.Msg(kEpoch));
  r.session.OnEvict(r.Msg(kEpoch, 5 << 20));
  CHECK(r.shim.engine.evicted == std::vector<std::pair<int, uint64_t>>{{0, 5u << 20}});
  CHECK(r.link.reports == std::vector<int>{0, 0});
}

TEST_CASE("LeaseSession: staging runs only while the process neither holds nor wants the lease") {
  Rig r;
  r.Grant(kEpoch);
  r.session.OnStage(r.Msg(0, 1 << 30));
  CHECK(r.shim.engine.staged.empty());
  r.session.OnStage(r.Msg(0, 0));  // stopping is always allowed
  r.session.OnDrop(r.Msg(kEpoch));
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).requested = true;
  }
  r.session.OnStage(r.Msg(0, 1 << 30));
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).requested = false;
  }
  r.session.OnStage(r.Msg(0, 1 << 30));
  CHECK(r.shim.engine.staged == std::vector<std::pair<int, uint64_t>>{{0, 0}, {0, 1u << 30}});
}

TEST_CASE("LeaseSession: a job that waits says so once, after the notice time, with waiters") {
  Rig r;
  MutexLock lock(g_mu);
  lease::DeviceState& d = r.session.Dev(0);
  d.requested = true;
  d.requested_ms = 1000;
  CHECK(!r.session.WaitNoticeDue(0, 1000 + lease::LeaseSession::kWaitNoticeMs));  // no waiter
  d.waiters = 1;
  CHECK(!r.session.WaitNoticeDue(0, 1000 + lease::LeaseSession::kWaitNoticeMs - 1));
  CHECK(r.session.WaitNoticeDue(0, 1000 + lease::LeaseSession::kWaitNoticeMs));
  CHECK(!r.session.WaitNoticeDue(0, 1000 + 2 * lease::LeaseSession::kWaitNoticeMs));
}

TEST_CASE("LeaseSession: a forked child starts with no lease, no waiter and closed gates") {
  Rig r;
  r.Grant(kEpoch);
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).waiters = 2;
    r.session.Dev(0).bytes.store(7 << 20);
    r.session.GoUngated("cannot reach the gshare daemon at");
  }
  r.session.ResetAfterFork();
  MutexLock lock(g_mu);
  CHECK(!r.session.ungated());
  CHECK(!r.session.Dev(0).holding);
  CHECK(r.session.Dev(0).waiters == 0);
  CHECK(r.session.Dev(0).epoch == 0);
  CHECK(r.session.Dev(0).bytes.load() == 0);  // the parent's allocations are the parent's
  CHECK(r.session.Dev(0).uuid_known);         // the GPU is the same
  CHECK(!r.gates[0].IsOpen());
}

TEST_CASE("LeaseSession: a tick reports the time held back for higher priorities in 100 ms steps") {
  Rig r;
  r.shim.held_ns[0] = 50'000'000;
  r.session.Tick();
  CHECK(r.link.reports.empty());
  r.shim.held_ns[0] = 120'000'000;
  r.session.Tick();
  CHECK(r.link.reports == std::vector<int>{0});
  r.shim.held_ns[0] = 219'000'000;  // 99 ms since the last report
  r.session.Tick();
  CHECK(r.link.reports == std::vector<int>{0});
  r.shim.held_ns[0] = 220'000'000;
  r.session.Tick();
  CHECK(r.link.reports == std::vector<int>{0, 0});
  CHECK(r.shim.gaps_sent[0] == 4);  // the gap watch's report is looked at every tick
  CHECK(r.shim.gaps_sent[kMaxDevices - 1] == 4);
}

TEST_CASE("LeaseSession: a report due without a connection is dropped, not kept for later") {
  Rig r;
  r.link.up = false;
  r.session.Dev(0).bytes_dirty.store(true);
  r.session.Tick();
  CHECK(r.link.reports.empty());
  CHECK(!r.session.Dev(0).bytes_dirty.load());  // a reconnection marks it due again
  r.link.up = true;
  r.session.Dev(0).bytes_dirty.store(true);
  r.session.Tick();
  CHECK(r.link.reports == std::vector<int>{0});
}

TEST_CASE("LeaseSession: a tick says once that the job waits, naming the job and the device") {
  Rig r;
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).requested = true;
    r.session.Dev(0).requested_ms = r.clock.ms;
    r.session.Dev(0).waiters = 1;
  }
  r.session.Tick();
  CHECK(r.shim.warnings.empty());
  r.clock.ms += lease::LeaseSession::kWaitNoticeMs;
  r.session.Tick();
  r.clock.ms += kTickMs;
  r.session.Tick();
  CHECK(r.shim.warnings ==
        std::vector<std::string>{"job 42 waits for its turn on the GPU (device 0): another job "
                                 "holds it; `gshare status` shows which"});
}

TEST_CASE("LeaseSession: a tick carries out the release it decides, after giving the lock back") {
  Rig r;
  r.Grant(kEpoch);
  r.session.Tick();  // t=1000: idle 0
  r.clock.ms += 500;
  r.session.Tick();
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kIdle)});
  CHECK(!r.Holding());
  CHECK(!r.gates[0].IsOpen());
}

}  // namespace
}  // namespace gshare::shim::unit_lease_session
