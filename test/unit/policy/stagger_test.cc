// Phase staggering: two holders whose idle gaps coincide are moved apart, by a stretch of one
// job's next gap; holders whose gaps do not coincide, idle-bound holders and a lone holder
// are left alone; a stretch is followed by a quiet time.
#include "policy/stagger.h"

#include <doctest/doctest.h>

namespace gshare::unit_stagger {
namespace {

const GpuKey kGpu = "GPU-0";
const TimePoint kT0{};

TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

// Feeds both jobs' gaps of one period (job 1's gap begins at `a`, job 2's at `b`, each
// `gap` ms long) to `s`, each reported 10 ms after it ended (the shim's tick), as a daemon
// would receive them. Returns the orders given.
std::vector<Stagger::Order> Period(Stagger& s, int64_t a, int64_t b, int64_t gap,
                                   const std::vector<JobId>& holders = {1, 2}) {
  std::vector<std::pair<int64_t, JobId>> ends{{a + gap, 1}, {b + gap, 2}};
  std::sort(ends.begin(), ends.end());
  std::vector<Stagger::Order> out;
  for (auto [end, job] : ends) {
    auto o = s.Report(kGpu, job, At(end - gap), At(end), holders, At(end + 10));
    if (o) out.push_back(*o);
  }
  return out;
}

// Whether 30 periods of `period` ms, job 2's `gap` starting `offset` ms after job 1's, pass
// without a stretch.
bool NeverStretched(int64_t period, int64_t offset, int64_t gap) {
  Stagger s;
  int64_t t = 0;
  for (int i = 0; i < 30; ++i, t += period) {
    if (!Period(s, t, t + offset, gap).empty()) return false;
  }
  return s.Stretches(kGpu) == 0;
}

// The orders of the first period (of at most `periods`) that gives any.
std::vector<Stagger::Order> FirstOrders(Stagger& s, int periods, int64_t period, int64_t offset,
                                        int64_t gap) {
  std::vector<Stagger::Order> orders;
  int64_t t = 0;
  for (int i = 0; i < periods && orders.empty(); ++i, t += period) {
    orders = Period(s, t, t + offset, gap);
  }
  return orders;
}

TEST_CASE("stagger: two jobs in lock step are moved half a GPU phase apart") {
  // The H100 small pair: 538 ms period, 26 ms CPU phases, both at the same time.
  Stagger s;
  std::vector<Stagger::Order> orders = FirstOrders(s, 6, 538, 1, 26);
  REQUIRE(orders.size() == 1);
  // The follower (job 2, 1 ms later) is stretched by (P + C - 3d) / 4: from lock step the
  // leader runs that long alone, the rest is shared, and the offset settles at 2(d + s) - C
  // = 256 ms, G in the fair-share model.
  CHECK(orders[0].job == 2);
  CHECK(orders[0].shift == Millis((538 + 26 - 3) / 4));
  CHECK(orders[0].gap == Millis(26) + orders[0].shift);
  CHECK(orders[0].co_idle >= Millis(24));
  CHECK(s.Stretches(kGpu) == 1);
}

TEST_CASE("stagger: jobs whose gaps fall in each other's GPU phases are left alone") {
  CHECK(NeverStretched(509, 176, 26));
  // The same jobs in lock step are stretched (the helper can tell).
  CHECK_FALSE(NeverStretched(538, 0, 26));
}

TEST_CASE("stagger: gaps that overlap by less than a fifth of their length are left alone") {
  // Offset 22 ms of 26: 4 ms together (the GPU idles 4 ms a period, not worth a stretch).
  CHECK(NeverStretched(516, 22, 26));
  CHECK_FALSE(NeverStretched(516, 20, 26));  // 6 ms of 26 together
}

TEST_CASE("stagger: a partial overlap moves the follower by less") {
  // The H100 small pair at 50/50: 552 ms period, 232 ms CPU phases, job 2's 160 ms after job
  // 1's (72 ms idle together per period).
  Stagger s;
  std::vector<Stagger::Order> orders = FirstOrders(s, 8, 552, 160, 232);
  REQUIRE(orders.size() == 1);
  CHECK(orders[0].job == 2);
  // G = (552 - 232 + 160) / 2 = 240; s = (552 + 232 - 480) / 4 = 76: u = 236 and the offset
  // goes to 2u - C = 240.
  CHECK(orders[0].shift == Millis(76));
  CHECK(orders[0].gap == Millis(232 + 76));
}

TEST_CASE("stagger: a lone holder, or one that reports no gaps, is never stretched") {
  Stagger s;
  int64_t t = 0;
  for (int i = 0; i < 20; ++i, t += 538) {
    CHECK(!s.Report(kGpu, 1, At(t), At(t + 26), {1}, At(t + 36)));
  }
  // Job 2 holds too but is always busy (no gap reported): nothing is idle together.
  for (int i = 0; i < 20; ++i, t += 538) {
    CHECK(!s.Report(kGpu, 1, At(t), At(t + 26), {1, 2}, At(t + 36)));
  }
  CHECK(s.Stretches(kGpu) == 0);
}

TEST_CASE("stagger: holders idle most of the time are idle together whatever their phase") {
  // 300 ms gaps in 500 ms periods: more idle than busy.
  CHECK(NeverStretched(500, 5, 300));
  CHECK_FALSE(NeverStretched(500, 5, 200));  // 200 of 500: GPU-bound
}

TEST_CASE("stagger: after a stretch the GPU is left alone for a few periods, then judged again") {
  Stagger s;
  int64_t t = 0;
  std::vector<int> at;  // periods in which a stretch was ordered
  for (int i = 0; i < 40; ++i, t += 538) {
    // The jobs stay in lock step whatever is ordered (nothing acts on the orders here).
    if (!Period(s, t, t, 26).empty()) at.push_back(i);
  }
  REQUIRE(at.size() >= 2);
  // Quiet for kQuietPeriods periods (2.15 s), then kLockGaps gaps are judged again.
  for (size_t k = 1; k < at.size(); ++k) CHECK(at[k] - at[k - 1] >= Stagger::kQuietPeriods);
  CHECK(s.Stretches(kGpu) == at.size());
}

TEST_CASE("stagger: a job that stops holding no longer counts, nor does a forgotten one") {
  Stagger s;
  int64_t t = 0;
  for (int i = 0; i < 3; ++i, t += 538) CHECK(Period(s, t, t, 26).empty());
  // Job 2 leaves: job 1's gaps alone are never lock step.
  for (int i = 0; i < 10; ++i, t += 538) {
    CHECK(!s.Report(kGpu, 1, At(t), At(t + 26), {1}, At(t + 36)));
  }
  s.Forget(1);
  s.Clear(kGpu);
  CHECK(s.Stretches(kGpu) == 0);
}

TEST_CASE("stagger: a job's GPU phase begins at the end of its latest gap of kPhaseGap or more") {
  Stagger s;
  CHECK(!s.PhaseBegan(kGpu, 1));
  // A gap of 3.3 s (a 50/50 job's CPU phase) begins a phase; the 20 ms pauses inside the GPU
  // phase after it do not.
  s.Report(kGpu, 1, At(1000), At(4300), {1, 2}, At(4310));
  s.Report(kGpu, 1, At(5000), At(5020), {1, 2}, At(5030));
  s.Report(kGpu, 1, At(6000), At(6000) + Stagger::kPhaseGap - Millis(1), {1, 2}, At(6100));
  REQUIRE(s.PhaseBegan(kGpu, 1));
  CHECK(*s.PhaseBegan(kGpu, 1) == At(4300));
  s.Report(kGpu, 1, At(7000), At(7000) + Stagger::kPhaseGap, {1, 2}, At(7100));
  CHECK(*s.PhaseBegan(kGpu, 1) == At(7050));
  CHECK(!s.PhaseBegan(kGpu, 2));
  CHECK(!s.PhaseBegan("GPU-1", 1));
  // Another job's report after job 1 stopped holding drops job 1's phase; Forget drops it too.
  s.Report(kGpu, 2, At(8000), At(8100), {1, 2}, At(8110));
  s.Report(kGpu, 1, At(9000), At(9100), {1, 2}, At(9110));
  s.Report(kGpu, 2, At(9500), At(9600), {2}, At(9610));
  CHECK(!s.PhaseBegan(kGpu, 1));
  CHECK(*s.PhaseBegan(kGpu, 2) == At(9600));
  s.Forget(2);
  CHECK(!s.PhaseBegan(kGpu, 2));
}

}  // namespace
}  // namespace gshare::unit_stagger
