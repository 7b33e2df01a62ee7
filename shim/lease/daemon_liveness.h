// DaemonLiveness: whether the daemon still answers, as the lease client's thread sees it.
//
// A lease request may wait a whole quantum for its grant, so silence alone proves nothing:
// after a quarter of the timeout (GSHARE_DAEMON_TIMEOUT_MS, default 4,000 ms) without a frame
// the client pings, and the daemon answers a ping at once (any frame counts as the answer).
// A ping unanswered for the rest of the timeout means the daemon hangs: the job then runs
// ungated rather than freeze (docs/design.md, "The shim": why 4 s). A fresh connection proves
// nothing until its first pong: connect() succeeds on the socket of a stopped daemon too.
//
// Plain value type, no locks, no system calls: one owner (the client thread, or the child
// after fork), times in ms on any monotonic clock the caller passes in.
#pragma once

#include <cstdint>

namespace gshare::shim::lease {

class DaemonLiveness {
 public:
  enum class Verdict {
    kAlive,    // heard recently, or a ping is out and not yet overdue
    kPingDue,  // silent for a quarter of the timeout: send a ping now (PingSent)
    kHung,     // the ping went unanswered for the rest of the timeout
  };

  constexpr explicit DaemonLiveness(int timeout_ms) : timeout_ms_(timeout_ms) {}

  void set_timeout_ms(int timeout_ms) { timeout_ms_ = timeout_ms; }
  int ping_after_ms() const { return timeout_ms_ / 4; }
  // How long a ping may go unanswered; also the wait for a fresh connection's first pong.
  int answer_within_ms() const { return timeout_ms_ - ping_after_ms(); }

  // A frame arrived at `now_ms` (or a connection was made): alive, no ping pending.
  void Heard(int64_t now_ms) {
    heard_ms_ = now_ms;
    ping_sent_ms_ = 0;
  }
  // Nothing was there to read at `now_ms`: what to do.
  Verdict Check(int64_t now_ms) const {
    if (ping_sent_ms_ == 0) {
      return now_ms - heard_ms_ < ping_after_ms() ? Verdict::kAlive : Verdict::kPingDue;
    }
    return now_ms - ping_sent_ms_ < answer_within_ms() ? Verdict::kAlive : Verdict::kHung;
  }
  // The sequence number for the next ping (the pong echoes it).
  uint64_t NextSeq() { return ++seq_; }
  uint64_t last_seq() const { return seq_; }
  // The ping went out at `now_ms`.
  void PingSent(int64_t now_ms) { ping_sent_ms_ = now_ms == 0 ? 1 : now_ms; }
  // A new process (after fork) has sent no ping.
  void Forget() { ping_sent_ms_ = 0; }

 private:
  int timeout_ms_;
  int64_t heard_ms_ = 0;
  int64_t ping_sent_ms_ = 0;  // 0: no ping out
  uint64_t seq_ = 0;
};

}  // namespace gshare::shim::lease
