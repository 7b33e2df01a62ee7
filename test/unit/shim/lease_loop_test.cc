// LeaseLoop (shim/lease/lease_loop.h): the lease thread's turns over a fake connection — frames
// handed on, the ping after a quarter of the timeout and the verdict after the rest, a broken
// connection, and the way back from running ungated.
#include "lease/lease_loop.h"

#include <doctest/doctest.h>

#include <deque>

#include "lease_session_rig.h"

namespace gshare::shim::unit_lease_loop {
namespace {

using unit_lease_session::kEpoch;
using unit_lease_session::Rig;

class FakeConnection final : public lease::DaemonConnection {
 public:
  int Fd() const override { return fd; }
  void CloseDead() override { ++dead_closed; }
  int Dial() override {
    ++dials;
    return dial_answers ? 9 : -1;
  }
  bool AwaitPong(int fd_, uint64_t seq, int ms) override {
    CHECK(fd_ == 9);
    pong_waits.push_back(ms);
    last_seq = seq;
    return pongs;
  }
  void Adopt(int fd_) override { fd = fd_; }
  void Close(int fd_) override { closed.push_back(fd_); }
  // The next Wait's answers, in order; none left: nothing arrives (0).
  int Wait(int, int ms) override {
    CHECK(ms == lease::LeaseSession::kTickMs);
    if (waits.empty()) return 0;
    const int n = waits.front();
    waits.pop_front();
    return n;
  }
  bool Receive(int) override {
    ++received;
    return receive_ok;
  }
  bool Ping(int, uint64_t seq) override {
    pings.push_back(seq);
    return ping_ok;
  }

  int fd = 3;
  int dead_closed = 0;
  int dials = 0;
  bool dial_answers = true;
  bool pongs = true;
  std::vector<int> pong_waits;
  uint64_t last_seq = 0;
  std::vector<int> closed;
  std::deque<int> waits;
  int received = 0;
  bool receive_ok = true;
  std::vector<uint64_t> pings;
  bool ping_ok = true;
};

struct LoopRig : Rig {
  FakeConnection conn;
  lease::LeaseLoop loop{session, conn, clock};
  LoopRig() {
    loop.SetTimeoutMs(4000);  // ping after 1 s of silence, hung 3 s after the ping
    loop.Begin();
  }
  bool Ungated() {
    MutexLock lock(lease::g_mu);
    return session.ungated();
  }
  // Turns with nothing arriving, the clock moving a tick each, until `until_ms`.
  void SilentUntil(int64_t until_ms) {
    while (clock.ms + unit_lease_session::kTickMs <= until_ms && !Ungated()) {
      clock.ms += unit_lease_session::kTickMs;
      loop.Turn();
    }
  }
};

TEST_CASE("LeaseLoop: a frame is handed on and counts as the daemon's answer") {
  LoopRig r;
  r.conn.waits = {1};
  r.clock.ms += 3500;  // long silent, but a frame arrives
  r.loop.Turn();
  CHECK(r.conn.received == 1);
  CHECK(r.conn.pings.empty());
  CHECK(r.conn.dead_closed == 1);   // a connection given up earlier is closed at each turn
  r.SilentUntil(r.clock.ms + 980);  // under a quarter of the timeout since the frame
  CHECK(r.conn.pings.empty());
  CHECK(!r.Ungated());
}

TEST_CASE("LeaseLoop: silence brings a ping, and a ping unanswered means the daemon hangs") {
  LoopRig r;
  r.SilentUntil(1000 + 1000);
  REQUIRE(r.conn.pings.size() == 1);
  CHECK(!r.Ungated());
  r.SilentUntil(2000 + 2980);  // 2,980 ms after the ping: still waiting for it
  CHECK(!r.Ungated());
  CHECK(r.conn.pings.size() == 1);
  r.SilentUntil(2000 + 3000);
  CHECK(r.Ungated());
  CHECK(r.link.disconnects == 1);
  CHECK(r.shim.warnings ==
        std::vector<std::string>{"the gshare daemon stopped answering at /run/gshare.sock; the "
                                 "job runs without GPU sharing"});
}

TEST_CASE("LeaseLoop: an answer to the ping keeps the job gated") {
  LoopRig r;
  r.SilentUntil(2000);
  REQUIRE(r.conn.pings.size() == 1);
  r.conn.waits = {1};  // the pong
  r.clock.ms += unit_lease_session::kTickMs;
  r.loop.Turn();
  r.SilentUntil(r.clock.ms + 2990);  // a new ping after a quarter, none hung
  CHECK(!r.Ungated());
  CHECK(r.conn.pings.size() == 2);
}

TEST_CASE("LeaseLoop: a broken connection, a failed read or a failed ping makes the job ungated") {
  SUBCASE("the wait fails") {
    LoopRig r;
    r.conn.waits = {-1};
    r.loop.Turn();
    CHECK(r.Ungated());
  }
  SUBCASE("a frame cannot be read") {
    LoopRig r;
    r.conn.waits = {1};
    r.conn.receive_ok = false;
    r.loop.Turn();
    CHECK(r.Ungated());
  }
  SUBCASE("the ping cannot be sent") {
    LoopRig r;
    r.conn.ping_ok = false;
    r.SilentUntil(2000);
    CHECK(r.Ungated());
  }
}

TEST_CASE("LeaseLoop: a quiet connection runs the session's tick at each turn") {
  LoopRig r;
  r.Grant(kEpoch);
  r.loop.Turn();  // idle 0
  r.clock.ms += 500;
  r.loop.Turn();  // the idle release
  CHECK(r.link.frames == std::vector<unit_lease_session::Frame>{
                             unit_lease_session::Released(kEpoch, proto::ReleaseReason::kIdle)});
}

TEST_CASE("LeaseLoop: ungated, it dials every 2 s and takes a daemon back only once it answers") {
  LoopRig r;
  r.Grant(kEpoch);
  {
    MutexLock lock(lease::g_mu);
    r.session.GoUngated("lost the connection to the gshare daemon at");
  }
  CHECK(r.gates[0].IsOpen());
  r.conn.dial_answers = false;
  r.loop.Turn();
  CHECK(r.clock.slept == lease::LeaseLoop::kReconnectMs);
  CHECK(r.conn.dials == 1);
  CHECK(r.Ungated());
  // A socket that accepts but does not answer (a stopped daemon) is closed, not taken.
  r.conn.dial_answers = true;
  r.conn.pongs = false;
  r.loop.Turn();
  CHECK(r.conn.closed == std::vector<int>{9});
  CHECK(r.conn.pong_waits == std::vector<int>{3000});  // the rest of the timeout after a ping
  CHECK(r.Ungated());
  // A daemon that answers: gated again, every gate closed until the next grant, the contexts
  // synchronized, the memory left where it is, reports due, said on stderr.
  r.conn.pongs = true;
  r.loop.Turn();
  CHECK(!r.Ungated());
  CHECK(r.conn.fd == 9);
  for (int i = 0; i < kMaxDevices; ++i) CHECK(!r.gates[i].IsOpen());
  CHECK(r.shim.synced.size() == static_cast<size_t>(kMaxDevices));
  CHECK(r.shim.engine.stopped.back() ==
        std::make_pair(kMaxDevices - 1, proto::ReleaseReason::kIdle));
  CHECK(r.session.Dev(0).bytes_dirty.load());   // its uuid is known
  CHECK(!r.session.Dev(1).bytes_dirty.load());  // nothing of it known
  CHECK(r.shim.warnings.back() == "reconnected to the gshare daemon; GPU sharing resumed");
}

}  // namespace
}  // namespace gshare::shim::unit_lease_loop
