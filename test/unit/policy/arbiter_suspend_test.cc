// Arbiter::SetSuspended: a suspended job is granted nothing in any mode; suspending the holder
// makes it drop; resuming lets its waiting requests through.
#include <doctest/doctest.h>

#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

namespace gshare::unit_arbiter_suspend {
namespace {
using namespace arbiter_test;

TEST_CASE_FIXTURE(Fixture,
                  "arbiter suspend: the holder drops, the other job runs, resume queues it again") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  auto a = arb.Request(11, kGpu, At(0));
  uint64_t e1 = EpochOf(a, Kind::kGrant, 11);
  REQUIRE(e1 != 0);
  CHECK(arb.JobHolds(1));
  CHECK(arb.ConnHolds(11));

  a = arb.SetSuspended(1, true, At(10));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(arb.IsSuspended(1));
  CHECK(arb.SetSuspended(1, true, At(11)).empty());  // already
  arb.Released(11, kGpu, e1, At(20));
  CHECK_FALSE(arb.JobHolds(1));

  // The suspended job asks again (its process may still submit): nothing.
  CHECK(Count(arb.Request(11, kGpu, At(30)), Kind::kGrant, 11) == 0);
  a = arb.Request(21, kGpu, At(40));
  uint64_t e2 = EpochOf(a, Kind::kGrant, 21);
  REQUIRE(e2 != 0);
  // Past job 2's quantum: the suspended waiter does not end its turn.
  CHECK(Count(arb.Tick(At(40 + 30000)), Kind::kDrop, 21) == 0);

  // Resumed: it waits like any job, and job 2's expired quantum now ends.
  a = arb.SetSuspended(1, false, At(40 + 30001));
  CHECK(Count(a, Kind::kDrop, 21) == 1);
  a = arb.Released(21, kGpu, e2, At(40 + 30010));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
}

TEST_CASE_FIXTURE(
    Fixture, "arbiter suspend: shared mode drops only the suspended job and grants it on resume") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  arb.SetShared(kGpu, true, At(0));
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11);
  CHECK(Count(arb.Request(21, kGpu, At(2)), Kind::kGrant, 21) == 1);

  auto a = arb.SetSuspended(1, true, At(3));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 21) == 0);
  arb.Released(11, kGpu, e1, At(4));
  CHECK(arb.Request(11, kGpu, At(5)).empty());  // waits while suspended
  CHECK(arb.JobsOn(kGpu) == std::vector<JobId>{1, 2});

  a = arb.SetSuspended(1, false, At(6));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  CHECK(arb.JobHolds(1));
  CHECK(arb.Gpus(At(7))[0].waiters.empty());
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter suspend: with gating off a suspended job is still not granted") {
  options.enabled = false;
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.SetSuspended(1, true, At(0));
  CHECK(arb.Request(11, kGpu, At(1)).empty());
  CHECK(Count(arb.SetSuspended(1, false, At(2)), Kind::kGrant, 11) == 1);
}

}  // namespace
}  // namespace gshare::unit_arbiter_suspend

namespace gshare::unit_arbiter_suspend {
namespace {
using namespace arbiter_test;

TEST_CASE_FIXTURE(Fixture,
                  "arbiter deferred grant: the quantum starts when the grant is delivered") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  arb.Deferred(kGpu, e1 + 1);  // another epoch: ignored
  arb.Deferred(kGpu, e1);
  arb.Request(21, kGpu, At(1));
  // Long past the quantum, but job 1 has not received its grant: no DROP.
  CHECK(Count(arb.Tick(At(6000)), Kind::kDrop, 11) == 0);
  arb.Delivered(kGpu, e1, At(6000));
  CHECK(Count(arb.Tick(At(6000 + 19999)), Kind::kDrop, 11) == 0);
  CHECK(Count(arb.Tick(At(6000 + 20000)), Kind::kDrop, 11) == 1);
  // The wait for delivery counts as waiting, not as lease time.
  CHECK(arb.Usage(1, At(26000)).wait_seconds == doctest::Approx(6.0));
}

TEST_CASE_FIXTURE(Fixture, "arbiter: a delivered turn lasts at least twice its delivery took") {
  Arbiter arb(options);  // quantum 20 s
  AddTwoJobs(arb);
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  arb.Deferred(kGpu, e1);
  arb.Request(21, kGpu, At(1));
  // A 35 s restore (a checkpoint-engine handoff): the turn lasts 70 s, not 20.
  arb.Delivered(kGpu, e1, At(35000));
  CHECK(arb.NextDeadline(TimePoint{}) == At(35000 + Arbiter::kTurnPerSwitch * 35000));
  CHECK(Count(arb.Tick(At(35000 + 20000)), Kind::kDrop, 11) == 0);
  auto a = arb.Tick(At(35000 + 70000));
  REQUIRE(Count(a, Kind::kDrop, 11) == 1);
  // A swap-in, even a long one (5 s), keeps the plain quantum.
  uint64_t e2 =
      EpochOf(arb.Released(11, kGpu, EpochOf(a, Kind::kDrop, 11), At(105100)), Kind::kGrant, 21);
  arb.AwaitSwapIn(kGpu, e2);
  arb.SwappedIn(kGpu, e2, At(110100));
  arb.Request(11, kGpu, At(110200));
  CHECK(arb.NextDeadline(TimePoint{}) == At(110100 + 20000));
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter swap-in: the quantum starts when the holder's swap-in is over") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  arb.AwaitSwapIn(kGpu, e1);
  arb.Request(21, kGpu, At(1));
  // The swap-in took 8 s: the quantum (20 s) runs from there.
  arb.SwappedIn(kGpu, e1 + 1, At(8000));  // another epoch: ignored
  CHECK(Count(arb.Tick(At(20000)), Kind::kDrop, 11) == 0);
  arb.SwappedIn(kGpu, e1, At(8000));
  CHECK(arb.NextDeadline(TimePoint{}) == At(28000));
  CHECK(Count(arb.Tick(At(27999)), Kind::kDrop, 11) == 0);
  auto a = arb.Tick(At(28000));
  REQUIRE(Count(a, Kind::kDrop, 11) == 1);
  CHECK(arb.Usage(1, At(28000)).wait_seconds == doctest::Approx(8.0));

  // A swap-in that never reports: the quantum runs anyway after the allowance.
  uint64_t e2 =
      EpochOf(arb.Released(11, kGpu, EpochOf(a, Kind::kDrop, 11), At(28100)), Kind::kGrant, 21);
  arb.AwaitSwapIn(kGpu, e2);
  TimePoint end = At(28100) + Millis(20000) + Arbiter::kSwapInAllowance;
  arb.Request(11, kGpu, At(28200));
  CHECK(arb.NextDeadline(TimePoint{}) == end);
  CHECK(Count(arb.Tick(end - Millis(1)), Kind::kDrop, 21) == 0);
  CHECK(Count(arb.Tick(end), Kind::kDrop, 21) == 1);
}

TEST_CASE_FIXTURE(Fixture, "arbiter: a connection withdrawn from a GPU no longer waits there") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  arb.Request(11, kGpu, At(0));
  arb.Request(21, kGpu, At(10));
  CHECK(arb.NextWaiter(kGpu) == JobId{2});
  CHECK(arb.Withdraw(21, kGpu, At(20)).empty());
  CHECK_FALSE(arb.NextWaiter(kGpu).has_value());
  CHECK(arb.Usage(2, At(30)).wait_seconds == doctest::Approx(0.01));  // 10 ms, then no more
  CHECK(arb.Tick(At(40000)).empty());                // nobody waits: no DROP for the holder
  CHECK(arb.Withdraw(11, kGpu, At(40001)).empty());  // a holder is not withdrawn
  CHECK(arb.Holder(kGpu) == JobId{1});
  // The withdrawn connection asks on another GPU and gets it.
  CHECK(Count(arb.Request(21, "GPU-1", At(40002)), Kind::kGrant, 21) == 1);
}

}  // namespace
}  // namespace gshare::unit_arbiter_suspend
