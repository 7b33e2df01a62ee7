// LeaseSession (shim/lease/lease_session.h): the idle and early releases decided at the lease
// thread's tick, DROP, CONTENDED and GRANT on one device's state, and the release protocol,
// against a fake clock, a fake daemon link that records frames and fake shim calls.
#include "lease/lease_session.h"

#include <doctest/doctest.h>

#include "lease_session_rig.h"

namespace gshare::shim::unit_lease_session {
namespace {

TEST_CASE("LeaseSession: an idle holder releases after idle_release and acknowledges its grant") {
  Rig r;
  r.Grant(kEpoch);
  CHECK(r.gates[0].IsOpen());
  CHECK(!r.Tick());                 // t=1000, idle 0
  CHECK(!r.IdleUntil(1000 + 480));  // idle 480 ms: still held
  CHECK(r.link.frames.empty());
  CHECK(r.IdleUntil(1000 + 500) == ReleaseReason::kIdle);
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kIdle)});
  CHECK(!r.gates[0].IsOpen());
  CHECK(r.shim.synced == std::vector<int>{0});
  CHECK(!r.shim.gate_open_at_sync);
  CHECK(r.shim.engine.stopped ==
        std::vector<std::pair<int, ReleaseReason>>{{0, ReleaseReason::kIdle}});
  CHECK(r.shim.watch_stopped == std::vector<int>{0});
  CHECK(!r.Holding());
  MutexLock lock(g_mu);
  CHECK(r.session.Dev(0).gap_open);  // the next submission ends the gap the release began
  CHECK(!r.session.Dev(0).dropping);
  CHECK(r.link.requests.empty());  // nobody waits in EnterSlow
}

TEST_CASE("LeaseSession: the idle release follows the configured time") {
  Rig r;
  r.session.Configure(100, true);
  r.Grant(kEpoch);
  CHECK(!r.Tick());
  CHECK(!r.IdleUntil(1080));
  CHECK(r.IdleUntil(1100) == ReleaseReason::kIdle);
}

TEST_CASE("LeaseSession: a holder that keeps working keeps the lease") {
  Rig r;
  r.Grant(kEpoch);
  SUBCASE("submitting") {
    for (int i = 0; i < 100; ++i) CHECK(!r.SubmitAt(kTickMs));
  }
  SUBCASE("waiting for its GPU work") {
    r.shim.waited = true;
    CHECK(!r.IdleUntil(3000));
  }
  SUBCASE("a thread inside the gate") {
    REQUIRE(r.gates[0].TryEnter());
    for (int i = 0; i < 100; ++i) {
      r.clock.ms += kTickMs;
      CHECK(!r.Tick(/*decide_only=*/true));
    }
    r.gates[0].Exit();
  }
  CHECK(r.link.frames.empty());
  CHECK(r.shim.synced.empty());
  CHECK(r.gates[0].IsOpen());
  CHECK(r.Holding());
}

TEST_CASE("LeaseSession: no idle or early release while a thread waits in EnterSlow") {
  Rig r;
  r.GrantWithTwoGaps();
  r.session.OnContended(r.Msg(kEpoch, 0));
  {
    MutexLock lock(g_mu);
    r.session.Dev(0).waiters = 1;  // e.g. held back by a stretch (gap_watch.h)
  }
  CHECK(!r.IdleUntil(1600 + 3000));
  CHECK(r.link.frames.empty());
  CHECK(r.Holding());
}

TEST_CASE("LeaseSession: a DROP closes the gate, synchronizes and acknowledges the grant") {
  Rig r;
  r.Grant(kEpoch);
  SUBCASE("nobody waits") {
    r.session.OnDrop(r.Msg(kEpoch));
    CHECK(r.link.requests.empty());
  }
  SUBCASE("a thread waits in EnterSlow: the lease is asked for again") {
    {
      MutexLock lock(g_mu);
      r.session.Dev(0).waiters = 1;
    }
    r.session.OnDrop(r.Msg(kEpoch));
    CHECK(r.link.requests == std::vector<int>{0});
    MutexLock lock(g_mu);
    CHECK(r.session.Dev(0).requested);
  }
  CHECK(!r.gates[0].IsOpen());
  CHECK(r.shim.synced == std::vector<int>{0});
  CHECK(!r.shim.gate_open_at_sync);
  CHECK(r.shim.engine.stopped ==
        std::vector<std::pair<int, ReleaseReason>>{{0, ReleaseReason::kDropped}});
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kDropped)});
  CHECK(!r.Holding());
  MutexLock lock(g_mu);
  CHECK(!r.session.Dev(0).gap_open);
}

TEST_CASE("LeaseSession: a stale DROP is only acknowledged, with its own epoch") {
  Rig r;
  r.Grant(kEpoch);
  r.session.OnDrop(r.Msg(kEpoch - 1));
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch - 1, ReleaseReason::kDropped)});
  CHECK(r.shim.synced.empty());
  CHECK(r.gates[0].IsOpen());
  CHECK(r.Holding());
  r.link.frames.clear();
  r.session.OnDrop(r.Msg(kEpoch, 0, 0x22));  // a GPU this process does not know
  CHECK(r.link.frames.empty());
  CHECK(r.Holding());
}

TEST_CASE("LeaseSession: a DROP during a stream capture waits for the capture to end") {
  Rig r;
  r.Grant(kEpoch);
  r.shim.capturing = true;
  r.session.OnDrop(r.Msg(kEpoch));
  CHECK(r.link.frames.empty());
  CHECK(r.gates[0].IsOpen());
  CHECK(!r.IdleUntil(3000));  // not even the idle release while capturing
  r.shim.capturing = false;
  r.gates[0].MarkActive();  // work does not keep a deferred DROP waiting
  r.clock.ms += kTickMs;
  CHECK(r.Tick() == ReleaseReason::kDropped);
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kDropped)});
}

TEST_CASE("LeaseSession: CONTENDED with a cheap handoff releases early at the start of a gap") {
  Rig r;
  r.GrantWithTwoGaps();
  // Handoff 30 ms: the rest of a gap 60 ms in, 240 ms by both past gaps, covers
  // 2 x 30 + 100 ms of margin; at 20 and 40 ms the gap is below GapPredictor::kMinGapMs.
  r.session.OnContended(r.Msg(kEpoch, 0));
  CHECK(r.shim.contended[0]);
  CHECK(!r.IdleUntil(1640));
  CHECK(r.IdleUntil(1660) == ReleaseReason::kEarly);
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kEarly)});
  CHECK(!r.shim.contended[0]);  // the release ends the contention
  MutexLock lock(g_mu);
  CHECK(r.session.Dev(0).gap_open);
  CHECK(r.session.Dev(0).handoff_ms == -1);
}

TEST_CASE("LeaseSession: no early release without a waiter, when off, or for a stale grant") {
  Rig r;
  SUBCASE("nobody waits") { r.GrantWithTwoGaps(); }
  SUBCASE("early release off") {
    r.session.Configure(500, false);
    r.GrantWithTwoGaps();
    r.session.OnContended(r.Msg(kEpoch, 0));
  }
  SUBCASE("CONTENDED for an earlier grant") {
    r.GrantWithTwoGaps();
    r.session.OnContended(r.Msg(kEpoch - 1, 0));
    CHECK(!r.shim.contended[0]);
  }
  CHECK(!r.IdleUntil(1600 + 480));
  CHECK(r.IdleUntil(1600 + 500) == ReleaseReason::kIdle);  // only the idle release
}

TEST_CASE("LeaseSession: a handoff dearer than the gap's rest leaves only the idle release") {
  Rig r;
  r.GrantWithTwoGaps();
  // 30 ms + 41 ms of bytes: 2 x 71 + 100 = 242 > 240, the most the gaps promise.
  r.session.OnContended(r.Msg(kEpoch, 41 * GapPredictor::kBytesPerMs));
  CHECK(!r.IdleUntil(1600 + 480));
  CHECK(r.IdleUntil(1600 + 500) == ReleaseReason::kIdle);
}

TEST_CASE("LeaseSession: an unpriced handoff waits kUnpricedIdleMs before the idle release") {
  Rig r;
  r.GrantWithTwoGaps();
  r.session.OnContended(r.Msg(kEpoch, proto::kHandoffNever));
  CHECK(!r.IdleUntil(1600 + GapPredictor::kUnpricedIdleMs - kTickMs));
  CHECK(r.IdleUntil(1600 + GapPredictor::kUnpricedIdleMs) == ReleaseReason::kIdle);
}

TEST_CASE("LeaseSession: time spent pinning host memory does not count toward an early release") {
  Rig r;
  r.GrantWithTwoGaps();
  r.session.OnContended(r.Msg(kEpoch, 0));
  r.shim.engine.pinning = true;
  CHECK(!r.IdleUntil(1700));  // 100 ms idle, all of it pinning
  r.shim.engine.pinning = false;
  CHECK(!r.IdleUntil(1740));  // 40 ms counted
  CHECK(r.IdleUntil(1760) == ReleaseReason::kEarly);
}

TEST_CASE("LeaseSession: a new grant starts uncontended; the same grant again keeps its waiter") {
  Rig r;
  r.Grant(kEpoch);
  r.session.OnContended(r.Msg(kEpoch, 0));
  r.Grant(kEpoch);
  CHECK(r.shim.contended[0]);
  {
    MutexLock lock(g_mu);
    CHECK(r.session.Dev(0).handoff_ms == GapPredictor::kHandoffFixedMs);
  }
  r.Grant(kEpoch + 1);
  CHECK(!r.shim.contended[0]);
  MutexLock lock(g_mu);
  CHECK(r.session.Dev(0).handoff_ms == -1);
  CHECK(r.session.Dev(0).epoch == kEpoch + 1);
}

TEST_CASE("LeaseSession: a release while the interpreter finalizes is the process's exit") {
  Rig r;
  r.Grant(kEpoch);
  r.shim.finalizing = true;
  r.session.OnDrop(r.Msg(kEpoch));
  CHECK(r.link.reports == std::vector<int>{0});  // its memory goes with it: reported first
  CHECK(r.link.frames == std::vector<Frame>{Released(kEpoch, ReleaseReason::kExit)});
  CHECK(r.shim.engine.stopped ==
        std::vector<std::pair<int, ReleaseReason>>{{0, ReleaseReason::kExit}});
}

TEST_CASE("LeaseSession: a grant whose release began does not open the gate") {
  Rig r;
  {
    MutexLock lock(g_mu);
    r.session.Granted(0, kEpoch, 123);
    r.session.Dev(0).dropping = true;  // e.g. a swap-in that failed gives the lease back
    r.session.OpenAfterGrant(0, kEpoch);
    CHECK(r.session.Dev(0).others_fixed.load() == 123);
  }
  CHECK(!r.gates[0].IsOpen());
}

}  // namespace
}  // namespace gshare::shim::unit_lease_session
