// LeaseLoop: the lease thread's loop over its connection to the daemon. While connected, each
// turn waits up to one tick for a frame and hands it on; silence past a quarter of the timeout
// sends a ping, and a ping unanswered for the rest of it, or a broken connection, makes the
// process run ungated (DaemonLiveness, LeaseSession::GoUngated); otherwise the session's tick
// follows. While ungated, each turn waits kReconnectMs and dials again; a new connection counts
// only once it answers a ping, and then the session is gated again (LeaseSession::Regate).
// It reaches the socket only through DaemonConnection and the time through LeaseClock
// (lease_seams.h), so unit tests run it against fakes. The lease thread's alone (and a forked
// child's); constant-initialized, trivially destructible.
#pragma once

#include <cstdint>
#include <type_traits>

#include "lease/daemon_liveness.h"
#include "lease/lease_seams.h"
#include "lease/lease_session.h"

namespace gshare::shim::lease {

class LeaseLoop {
 public:
  constexpr LeaseLoop(LeaseSession& session, DaemonConnection& conn, LeaseClock& clock)
      : session_(session), conn_(conn), clock_(clock) {}
  LeaseLoop(const LeaseLoop&) = delete;
  LeaseLoop& operator=(const LeaseLoop&) = delete;

  // A daemon silent this long, not even answering a ping, is taken for hung (ms;
  // GSHARE_DAEMON_TIMEOUT_MS within [kMinTimeoutMs, kMaxTimeoutMs]; docs/design.md says why 4 s).
  static constexpr int kDefaultTimeoutMs = 4000;
  // Below the tick a timeout means nothing; above an hour it is a mistake (a hung daemon would
  // freeze the job that long).
  static constexpr int kMinTimeoutMs = 100;
  static constexpr int kMaxTimeoutMs = 3600 * 1000;
  // The wait between two tries to reach a daemon that is gone (ms).
  static constexpr int64_t kReconnectMs = 2000;

  // Before the thread starts: the timeout from the environment (ignored out of bounds).
  void SetTimeoutMs(int64_t ms) {
    if (ms >= kMinTimeoutMs && ms <= kMaxTimeoutMs) liveness_.set_timeout_ms(static_cast<int>(ms));
  }
  // The thread's start: the daemon was heard (its connection was just made).
  void Begin() { liveness_.Heard(clock_.NowMs()); }
  // One turn (above). Lease thread, without g_mu.
  void Turn();
  // In a forked child: no ping is out.
  void ResetAfterFork() { liveness_.Forget(); }

 private:
  void Reconnect();

  LeaseSession& session_;
  DaemonConnection& conn_;
  LeaseClock& clock_;
  DaemonLiveness liveness_{kDefaultTimeoutMs};
};

static_assert(std::is_trivially_destructible_v<LeaseLoop>);

}  // namespace gshare::shim::lease
