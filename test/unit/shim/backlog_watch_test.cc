// BacklogWatch: when a watched job has fallen behind its arrivals, and when it has caught up.
#include <doctest/doctest.h>

#include "lease/backlog_watch.h"

namespace gshare::shim::unit_backlog_watch {
namespace {

constexpr int64_t kMs = 1'000'000;

// Requests every 12 ms, each with a copy, a 0.1 ms gap, then 7 ms of work and a 5 ms gap.
int64_t Serve(BacklogWatch& w, int64_t now, int requests) {
  for (int i = 0; i < requests; ++i) {
    CHECK_FALSE(w.GapEnded(5 * kMs, now));
    now += 1 * kMs;
    CHECK_FALSE(w.GapEnded(100'000, now));  // within the request: not a real gap
    CHECK_FALSE(w.StillBusy(now + 5 * kMs));
    now += 11 * kMs;
  }
  return now;
}

TEST_CASE("BacklogWatch: no real gap for three usual periods is a backlog; the next one ends it") {
  BacklogWatch w;
  int64_t now = Serve(w, 1000 * kMs, 10);
  CHECK(w.UsualGapNs() == 5 * kMs);  // the short gaps within requests are not learnt
  CHECK(w.UsualPeriodNs() == 12 * kMs);
  // Back to back: short gaps only, then none.
  now -= 11 * kMs;  // the last real gap ended here
  const int64_t last = now;
  for (int i = 0; i < 4; ++i) CHECK_FALSE(w.GapEnded(200'000, now += 8 * kMs));
  CHECK(last + 3 * 12 * kMs < now + 8 * kMs);
  CHECK(w.GapEnded(200'000, now += 8 * kMs));  // 40 ms without a real gap
  CHECK(w.Behind());
  CHECK(w.StillBusy(now += 30 * kMs));
  CHECK(w.GapEnded(2 * kMs, now += 8 * kMs));        // shorter than half the usual gap
  CHECK_FALSE(w.GapEnded(5 * kMs, now += 8 * kMs));  // it waited for a request: caught up
  CHECK(w.UsualPeriodNs() == 12 * kMs);              // the backlog's long period is not learnt
  CHECK_FALSE(w.GapEnded(0, now));                   // not a gap
}

TEST_CASE("BacklogWatch: a job whose every gap is short, or that has none, is never behind") {
  BacklogWatch w;
  int64_t now = 0;
  for (int i = 0; i < 20; ++i) CHECK_FALSE(w.GapEnded(200'000 + (i % 3) * 100'000, now += kMs));
  CHECK(w.UsualGapNs() < BacklogWatch::kMinUsualNs);
  CHECK_FALSE(w.StillBusy(now + 10'000 * kMs));

  BacklogWatch busy;
  CHECK_FALSE(busy.StillBusy(10'000 * kMs));
  for (int i = 1; i < BacklogWatch::kMinGaps; ++i) busy.GapEnded(5 * kMs, i * 12 * kMs);
  CHECK_FALSE(busy.StillBusy(10'000 * kMs));  // too few real gaps known
}

TEST_CASE("BacklogWatch: a backlog longer than kMaxBehindNs is a new pace, learnt anew") {
  BacklogWatch w;
  int64_t now = Serve(w, kMs, 8);
  CHECK(w.StillBusy(now += 40 * kMs));
  CHECK(w.StillBusy(now += BacklogWatch::kMaxBehindNs));
  CHECK_FALSE(w.StillBusy(now += kMs));
  CHECK(w.UsualGapNs() == 0);
  CHECK_FALSE(w.StillBusy(now += 1000 * kMs));  // nothing known yet
}

TEST_CASE("BacklogWatch: a gap runs from the idle start it takes; a retracted one gives none") {
  BacklogWatch w;
  int64_t now = 1000 * kMs;
  for (int i = 0; i < 6; ++i) {
    w.WentIdle(now);
    CHECK_FALSE(w.BecameBusy(now += 5 * kMs));
    now += 7 * kMs;
  }
  CHECK(w.UsualGapNs() == 5 * kMs);
  // Back to back, and the idle start of one request published only once it was busy again:
  // no gap is measured across that busy period, so none looks like a real gap.
  w.WentIdle(now);
  CHECK_FALSE(w.BecameBusy(now += 100'000));
  w.WentIdle(now + 7 * kMs);
  w.Retract();
  CHECK(w.BecameBusy(now += 40 * kMs));  // no real gap for three periods: behind
  CHECK(w.BecameBusy(now += 7 * kMs));   // no idle start to measure from: still behind
  w.WentIdle(now += 7 * kMs);
  CHECK_FALSE(w.BecameBusy(now += 5 * kMs));  // a real gap: caught up
}

}  // namespace
}  // namespace gshare::shim::unit_backlog_watch
