// Lease policy: exclusivity, round robin by quantum, strict priority, grace, idle release,
// dead clients, disabled mode.
#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

#include <doctest/doctest.h>

namespace gshare::unit_arbiter {
namespace {

using namespace arbiter_test;

TEST_CASE_FIXTURE(Fixture, "arbiter: one holder at a time, round robin at quantum expiry") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  auto a = arb.Request(11, kGpu, At(0));
  REQUIRE(Count(a, Kind::kGrant, 11) == 1);
  uint64_t e1 = EpochOf(a, Kind::kGrant, 11);
  a = arb.Request(21, kGpu, At(10));
  // Waits (quantum not over, same priority); the holder only learns that someone waits.
  CHECK(a.size() == 1);
  CHECK(Count(a, Kind::kContended, 11) == 1);
  CHECK(arb.NextDeadline(TimePoint{}) == At(20000));
  CHECK(arb.Tick(At(19999)).empty());
  a = arb.Tick(At(20000));
  REQUIRE(Count(a, Kind::kDrop, 11) == 1);
  CHECK(EpochOf(a, Kind::kDrop, 11) == e1);
  // Job 1 asks again while dropping: it queues behind job 2.
  CHECK(arb.Request(11, kGpu, At(20001)).empty());
  a = arb.Released(11, kGpu, e1, At(20005));
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  CHECK(Count(a, Kind::kGrant, 11) == 0);
  auto views = arb.Gpus(At(20005));
  REQUIRE(views.size() == 1);
  CHECK(views[0].holder == JobId{2});
  CHECK(views[0].waiters == std::vector<JobId>{1});
  CHECK(views[0].drains == 1);
  CHECK(views[0].last_drain_ms == doctest::Approx(5));  // DROP at 20000, released at 20005
  auto usage = arb.Usage(1, At(20005));
  CHECK(usage.lease_seconds == doctest::Approx(20.005));
  CHECK(arb.Usage(2, At(20005)).wait_seconds == doctest::Approx(19.995));
}

TEST_CASE_FIXTURE(Fixture, "arbiter: no DROP while nobody waits") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.Request(11, kGpu, At(0));
  CHECK(arb.Tick(At(100000)).empty());
  CHECK_FALSE(arb.NextDeadline(TimePoint{}).has_value());
}

TEST_CASE_FIXTURE(Fixture, "arbiter: a higher priority preempts at once, a lower one waits") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 5, Millis(0), 0);
  arb.AddJob(3, -1, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  auto a = arb.Request(31, kGpu, At(1));
  CHECK(a.size() == 1);
  CHECK(Count(a, Kind::kContended, 11) == 1);
  a = arb.Request(21, kGpu, At(2));
  REQUIRE(Count(a, Kind::kDrop, 11) == 1);
  a = arb.Released(11, kGpu, e1, At(3));
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  // The low-priority job never gets it while a higher one holds, even past the quantum.
  CHECK(arb.Tick(At(60000)).empty());
}

TEST_CASE_FIXTURE(Fixture, "arbiter: processes of one job share the lease") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(12, 1, 101);
  arb.AddConn(21, 2, 200);
  uint64_t e = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  auto a = arb.Request(12, kGpu, At(1));
  REQUIRE(Count(a, Kind::kGrant, 12) == 1);
  CHECK(EpochOf(a, Kind::kGrant, 12) == e);
  arb.Request(21, kGpu, At(2));
  a = arb.Tick(At(20000));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 12) == 1);
  CHECK(arb.Released(11, kGpu, e, At(20001)).empty());  // 12 still holds
  a = arb.Released(12, kGpu, e, At(20002));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
}

TEST_CASE_FIXTURE(Fixture, "arbiter: idle release hands over without a DROP") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  uint64_t e = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  arb.Request(21, kGpu, At(5));
  auto a = arb.Released(11, kGpu, e, At(2000));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  // A stale acknowledgement of the same epoch changes nothing.
  CHECK(arb.Released(11, kGpu, e, At(2001)).empty());
}

TEST_CASE_FIXTURE(Fixture, "arbiter: a dead holder's lease is reclaimed at once") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.Request(11, kGpu, At(0));
  arb.Request(21, kGpu, At(5));
  auto a = arb.Disconnected(11, At(6));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
}

TEST_CASE_FIXTURE(Fixture, "arbiter: a holder ignoring DROP is stopped, then continued") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  arb.Request(21, kGpu, At(1));
  REQUIRE(Count(arb.Tick(At(20000)), Kind::kDrop, 11) == 1);
  CHECK(arb.Tick(At(29999)).empty());
  auto a = arb.Tick(At(30000));
  REQUIRE(Count(a, Kind::kStop, 11) == 1);
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  uint64_t e2 = EpochOf(a, Kind::kGrant, 21);
  CHECK(arb.Released(11, kGpu, e1, At(30001)).empty());  // late ack: ignored
  a = arb.Released(21, kGpu, e2, At(31000));             // job 2 goes idle
  REQUIRE(Count(a, Kind::kContinue, 11) == 1);
  REQUIRE(Count(a, Kind::kGrant, 11) == 1);
  CHECK(EpochOf(a, Kind::kGrant, 11) > e2);
}

TEST_CASE_FIXTURE(Fixture, "arbiter: disabled grants everyone; enabling drains first") {
  options.enabled = false;
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  CHECK(Count(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11) == 1);
  CHECK(Count(arb.Request(21, kGpu, At(0)), Kind::kGrant, 21) == 1);
  auto a = arb.SetEnabled(true, At(10));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 21) == 1);
  uint64_t e = EpochOf(a, Kind::kDrop, 11);
  CHECK(arb.Request(11, kGpu, At(11)).empty());  // queued: someone still holds
  CHECK(arb.Released(11, kGpu, e, At(12)).empty());
  a = arb.Released(21, kGpu, e, At(13));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
}

TEST_CASE_FIXTURE(Fixture, "arbiter: the holder is told once per grant that someone waits") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddJob(3, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  arb.AddConn(12, 1, 101);  // a second process of job 1
  auto a = arb.Request(11, kGpu, At(0));
  uint64_t e1 = EpochOf(a, Kind::kGrant, 11);
  CHECK(Count(a, Kind::kContended, 11) == 0);  // nobody waits yet
  CHECK(arb.Recontend(kGpu).empty());          // nor was told so: nothing to re-price
  arb.Request(12, kGpu, At(0));
  a = arb.Request(21, kGpu, At(1));
  REQUIRE(Count(a, Kind::kContended, 11) == 1);
  CHECK(EpochOf(a, Kind::kContended, 11) == e1);
  CHECK(arb.Request(31, kGpu, At(2)).empty());  // already told for this grant
  // The handoff's price changed: told again, every holding process, the same grant.
  a = arb.Recontend(kGpu);
  CHECK(a.size() == 2);
  CHECK(EpochOf(a, Kind::kContended, 11) == e1);
  CHECK(EpochOf(a, Kind::kContended, 12) == e1);
  a = arb.Tick(At(20000));
  REQUIRE(Count(a, Kind::kDrop, 11) == 1);
  CHECK(arb.Recontend(kGpu).empty());  // dropping: no price matters any more
  arb.Request(11, kGpu, At(20001));    // job 1 queues again
  arb.Released(12, kGpu, e1, At(20001));
  a = arb.Released(11, kGpu, e1, At(20002));
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  CHECK(Count(a, Kind::kContended, 21) == 1);  // jobs 3 and 1 wait behind it
}

TEST_CASE_FIXTURE(Fixture, "arbiter: per-job quantum") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(500), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.Request(11, kGpu, At(0));
  arb.Request(21, kGpu, At(1));
  CHECK(Count(arb.Tick(At(500)), Kind::kDrop, 11) == 1);
}

}  // namespace
}  // namespace gshare::unit_arbiter
