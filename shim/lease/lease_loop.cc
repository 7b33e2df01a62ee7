// The lease thread's loop (lease_loop.h). Through the seams only, so this file links into the
// unit tests alone.
#include "lease/lease_loop.h"

namespace gshare::shim::lease {

void LeaseLoop::Turn() {
  g_mu.Lock();
  conn_.CloseDead();
  const int fd = conn_.Fd();
  const bool ungated = session_.ungated();
  g_mu.Unlock();
  if (ungated) {
    Reconnect();
    return;
  }
  const char* gone = nullptr;
  const int n = conn_.Wait(fd, static_cast<int>(LeaseSession::kTickMs));
  if (n > 0) {
    if (conn_.Receive(fd)) {
      liveness_.Heard(clock_.NowMs());
    } else {
      gone = "lost the connection to the gshare daemon at";
    }
  } else if (n < 0) {
    gone = "lost the connection to the gshare daemon at";
  } else {
    const int64_t now = clock_.NowMs();
    switch (liveness_.Check(now)) {
      case DaemonLiveness::Verdict::kAlive: break;
      case DaemonLiveness::Verdict::kPingDue:
        if (conn_.Ping(fd, liveness_.NextSeq())) {
          liveness_.PingSent(now);
        } else {
          gone = "lost the connection to the gshare daemon at";
        }
        break;
      case DaemonLiveness::Verdict::kHung: gone = "the gshare daemon stopped answering at"; break;
    }
  }
  if (gone != nullptr) {
    MutexLock lock(g_mu);
    session_.GoUngated(gone);
    return;
  }
  session_.Tick();
}

void LeaseLoop::Reconnect() {
  clock_.SleepMs(kReconnectMs);
  int fresh = conn_.Dial();
  if (fresh >= 0 && !conn_.AwaitPong(fresh, liveness_.NextSeq(), liveness_.answer_within_ms())) {
    conn_.Close(fresh);  // a stopped daemon: connect() worked, nobody answers
    fresh = -1;
  }
  if (fresh < 0) return;
  {
    MutexLock lock(g_mu);
    conn_.Adopt(fresh);
    session_.Reconnected();
    liveness_.Heard(clock_.NowMs());
  }
  session_.Regate();
}

}  // namespace gshare::shim::lease
