// BacklogWatch: when a watched job has fallen behind its arrivals, and when it has caught up.
#include <doctest/doctest.h>

#include "lease/backlog_watch.h"

namespace gshare::shim::unit_backlog_watch {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST_CASE("BacklogWatch: gaps far shorter than usual start a backlog; a usual one ends it") {
  BacklogWatch w;
  int64_t now = 1000 * kMs;
  auto gap = [&](int64_t ns) {
    now += 12 * kMs;
    return w.GapEnded(ns, now);
  };
  CHECK_FALSE(gap(300'000));  // too few gaps known: a short one is not yet unusual
  w.Reset();
  for (int i = 0; i < BacklogWatch::kMinGaps; ++i) CHECK_FALSE(gap(5 * kMs));
  CHECK(w.UsualGapNs() == 5 * kMs);
  CHECK_FALSE(gap(2 * kMs));  // shorter, but not under a quarter of 5 ms
  const int64_t usual = w.UsualGapNs();
  CHECK(usual < 5 * kMs);  // it was learnt
  CHECK(gap(300'000));     // served back to back: behind
  CHECK(w.Behind());
  CHECK(gap(200'000));
  CHECK(gap(usual / 2 - 1));  // still short of half its usual gap
  CHECK(w.UsualGapNs() == usual);  // the backlog's gaps are not learnt
  CHECK_FALSE(gap(usual / 2));  // it waited for a request again: caught up
  CHECK_FALSE(w.Behind());
  CHECK_FALSE(gap(0));  // not a gap
}

TEST_CASE("BacklogWatch: a job whose every gap is short is never behind") {
  BacklogWatch w;
  for (int i = 0; i < 20; ++i) CHECK_FALSE(w.GapEnded(200'000 + (i % 3) * 100'000, i * kMs));
  CHECK(w.UsualGapNs() < BacklogWatch::kMinUsualNs);
  CHECK_FALSE(w.GapEnded(10'000, 30 * kMs));
}

TEST_CASE("BacklogWatch: a backlog longer than kMaxBehindNs is the job's new pace") {
  BacklogWatch w;
  int64_t now = kMs;
  for (int i = 0; i < 8; ++i) w.GapEnded(8 * kMs, now += 10 * kMs);
  CHECK(w.GapEnded(100'000, now += kMs));
  const int64_t start = now;
  while (now + 10 * kMs - start <= BacklogWatch::kMaxBehindNs) {
    CHECK(w.GapEnded(100'000, now += 10 * kMs));
  }
  CHECK_FALSE(w.GapEnded(100'000, now += 10 * kMs));
  CHECK(w.UsualGapNs() == 100'000);
  CHECK_FALSE(w.GapEnded(50'000, now += kMs));  // usual is short now: no new backlog
}

TEST_CASE("BacklogWatch: a busy spell far longer than usual is a backlog with no gaps") {
  BacklogWatch w;
  int64_t now = kMs;
  for (int i = 0; i < 6; ++i) {  // requests of 7 ms, 5 ms apart
    w.GapEnded(5 * kMs, now);
    w.BusyStarted(now);
    CHECK_FALSE(w.StillBusy(now + 6 * kMs));
    now += 7 * kMs;
    w.BusyEnded(now);
    now += 5 * kMs;
  }
  CHECK(w.UsualBusyNs() == 7 * kMs);
  w.GapEnded(5 * kMs, now);
  w.BusyStarted(now);
  CHECK_FALSE(w.StillBusy(now + 4 * 7 * kMs));  // four usual spells: not yet
  CHECK(w.StillBusy(now + 4 * 7 * kMs + 1));
  w.BusyEnded(now + 60 * kMs);
  CHECK(w.UsualBusyNs() == 7 * kMs);  // the backlog's spell is not learnt
  CHECK_FALSE(w.GapEnded(5 * kMs, now + 65 * kMs));  // a usual gap: caught up

  // A job with no usual gap (busy from the start, or gaps under kMinUsualNs) is never behind.
  BacklogWatch busy;
  busy.BusyStarted(kMs);
  CHECK_FALSE(busy.StillBusy(10'000 * kMs));
}

TEST_CASE("BacklogWatch: a spell that stays long past kMaxBehindNs is the new pace") {
  BacklogWatch w;
  int64_t now = kMs;
  for (int i = 0; i < 6; ++i) {
    w.GapEnded(5 * kMs, now);
    w.BusyStarted(now);
    now += 7 * kMs;
    w.BusyEnded(now);
    now += 5 * kMs;
  }
  w.BusyStarted(now);
  CHECK(w.StillBusy(now + 30 * kMs));
  CHECK(w.StillBusy(now + 30 * kMs + BacklogWatch::kMaxBehindNs));
  CHECK_FALSE(w.StillBusy(now + 31 * kMs + BacklogWatch::kMaxBehindNs));
  CHECK(w.UsualBusyNs() == 31 * kMs + BacklogWatch::kMaxBehindNs);
  CHECK_FALSE(w.StillBusy(now + 40 * kMs + BacklogWatch::kMaxBehindNs));
}

}  // namespace
}  // namespace gshare::shim::unit_backlog_watch
