// DaemonLiveness: a ping after a quarter of the timeout of silence, a hung daemon after the
// rest of it unanswered, any frame as the answer; the liveness the lease client's thread keeps.
#include "lease/daemon_liveness.h"

#include <doctest/doctest.h>

namespace gshare::shim::unit_daemon_liveness {
namespace {

using lease::DaemonLiveness;
using Verdict = DaemonLiveness::Verdict;

TEST_CASE("daemon liveness: silence asks for a ping, then a hang once the ping goes unanswered") {
  DaemonLiveness l(4000);
  CHECK(l.ping_after_ms() == 1000);
  CHECK(l.answer_within_ms() == 3000);
  l.Heard(10'000);
  CHECK(l.Check(10'999) == Verdict::kAlive);
  CHECK(l.Check(11'000) == Verdict::kPingDue);
  const uint64_t seq = l.NextSeq();
  l.PingSent(11'000);
  CHECK(l.last_seq() == seq);
  CHECK(l.Check(13'999) == Verdict::kAlive);  // the ping is out, not overdue
  CHECK(l.Check(14'000) == Verdict::kHung);
}

TEST_CASE("daemon liveness: any frame answers, and a forked child has no ping out") {
  DaemonLiveness l(4000);
  l.Heard(0);
  CHECK(l.Check(1000) == Verdict::kPingDue);
  l.PingSent(1000);
  l.Heard(2500);  // a grant, a pong: anything
  CHECK(l.Check(3400) == Verdict::kAlive);
  CHECK(l.Check(3500) == Verdict::kPingDue);  // a quarter after the frame, not after the ping
  l.PingSent(3500);
  l.Forget();
  CHECK(l.Check(9000) == Verdict::kPingDue);  // not hung: the child's own clock starts now
  CHECK(l.NextSeq() == 1);
  CHECK(l.NextSeq() == 2);  // pongs echo the newest ping only
}

TEST_CASE("daemon liveness: GSHARE_DAEMON_TIMEOUT_MS sets both bounds") {
  DaemonLiveness l(4000);
  l.set_timeout_ms(400);
  l.Heard(0);
  CHECK(l.Check(99) == Verdict::kAlive);
  CHECK(l.Check(100) == Verdict::kPingDue);
  l.PingSent(100);
  CHECK(l.Check(399) == Verdict::kAlive);
  CHECK(l.Check(400) == Verdict::kHung);
}

}  // namespace
}  // namespace gshare::shim::unit_daemon_liveness
