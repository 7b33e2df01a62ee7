// Lease policy around memory: shared mode per GPU (everyone runs at once), the switches
// between shared and exclusive mode, and the grant filter (Options::can_grant).
#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

#include <doctest/doctest.h>

#include <set>

namespace gshare::unit_arbiter_shared {
namespace {

using namespace arbiter_test;
const GpuKey kOther = "GPU-1";

int CountKind(const LeaseActions& a, Kind kind) {
  int n = 0;
  for (const auto& x : a) n += x.kind == kind;
  return n;
}
pid_t PidOf(const LeaseActions& a, Kind kind, ConnId conn) {
  for (const auto& x : a) {
    if (x.kind == kind && x.conn == conn) return x.pid;
  }
  return 0;
}

TEST_CASE_FIXTURE(Fixture, "arbiter shared: every request is granted at once, no DROP, no holder") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(12, 1, 101);
  arb.AddConn(21, 2, 200);
  CHECK_FALSE(arb.IsShared(kGpu));
  CHECK(arb.SetShared(kGpu, true, At(0)).empty());  // nobody waits
  CHECK(arb.IsShared(kGpu));
  CHECK_FALSE(arb.IsShared(kOther));

  auto a = arb.Request(11, kGpu, At(1));
  REQUIRE(a.size() == 1);
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  a = arb.Request(21, kGpu, At(2));
  REQUIRE(a.size() == 1);  // no DROP or contention notice for job 1
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  uint64_t e2 = EpochOf(a, Kind::kGrant, 21);
  a = arb.Request(12, kGpu, At(3));
  REQUIRE(a.size() == 1);
  CHECK(Count(a, Kind::kGrant, 12) == 1);

  CHECK_FALSE(arb.Holder(kGpu).has_value());
  CHECK(arb.JobsOn(kGpu) == std::vector<JobId>{1, 2});
  CHECK(arb.JobsOn(kOther).empty());
  // No quantum: nothing to do however long they run.
  CHECK(arb.Tick(At(100000)).empty());
  CHECK_FALSE(arb.NextDeadline(TimePoint{}).has_value());
  auto views = arb.Gpus(At(100000));
  REQUIRE(views.size() == 1);
  CHECK(views[0].shared);
  CHECK_FALSE(views[0].holder.has_value());
  CHECK(views[0].holding == std::vector<JobId>{1, 2});
  CHECK(views[0].waiters.empty());
  CHECK_FALSE(arb.Usage(2, At(100000)).waiting);

  // An idle release and a new request: granted again at once.
  CHECK(arb.Released(21, kGpu, e2, At(100001)).empty());
  CHECK(arb.JobsOn(kGpu) == std::vector<JobId>{1});
  a = arb.Request(21, kGpu, At(100002));
  REQUIRE(a.size() == 1);
  CHECK(Count(a, Kind::kGrant, 21) == 1);

  // Only this GPU is shared: another one is still exclusive.
  CHECK(Count(arb.Request(11, kOther, At(100003)), Kind::kGrant, 11) == 1);
  a = arb.Request(21, kOther, At(100004));
  CHECK(Count(a, Kind::kGrant, 21) == 0);
  CHECK(arb.Holder(kOther) == JobId{1});
}

TEST_CASE_FIXTURE(
    Fixture, "arbiter shared: going exclusive drops every holder, then grants the best waiter") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddJob(3, 5, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(12, 1, 101);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  arb.SetShared(kGpu, true, At(0));
  for (ConnId c : {11, 12, 21, 31}) {
    REQUIRE(Count(arb.Request(c, kGpu, At(1)), Kind::kGrant, c) == 1);
  }

  auto a = arb.SetShared(kGpu, false, At(10));
  CHECK_FALSE(arb.IsShared(kGpu));
  CHECK(a.size() == 4);
  for (ConnId c : {11, 12, 21, 31}) CHECK(Count(a, Kind::kDrop, c) == 1);
  CHECK(CountKind(a, Kind::kGrant) == 0);
  uint64_t e = EpochOf(a, Kind::kDrop, 11);
  CHECK(arb.SetShared(kGpu, false, At(10)).empty());  // already exclusive
  CHECK_FALSE(arb.Holder(kGpu).has_value());

  // Job 1 releases and asks again, before job 3: still nobody is granted while others hold.
  CHECK(arb.Released(11, kGpu, e, At(11)).empty());
  CHECK(arb.Request(11, kGpu, At(12)).empty());
  CHECK(arb.Released(31, kGpu, e, At(13)).empty());
  CHECK(arb.Request(31, kGpu, At(14)).empty());
  CHECK(arb.Released(12, kGpu, e, At(15)).empty());
  CHECK_FALSE(arb.Holder(kGpu).has_value());

  // The last release: job 3 (higher priority) gets the GPU alone; job 1 keeps waiting.
  a = arb.Released(21, kGpu, e, At(16));
  REQUIRE(Count(a, Kind::kGrant, 31) == 1);
  CHECK(EpochOf(a, Kind::kGrant, 31) > e);
  CHECK(CountKind(a, Kind::kGrant) == 1);
  CHECK(Count(a, Kind::kContended, 31) == 1);  // job 1 waits
  CHECK(arb.Holder(kGpu) == JobId{3});
  // Exclusive again: a new request waits.
  CHECK(Count(arb.Request(21, kGpu, At(17)), Kind::kGrant, 21) == 0);
  auto views = arb.Gpus(At(17));
  REQUIRE(views.size() == 1);
  CHECK_FALSE(views[0].shared);
  CHECK(views[0].holding == std::vector<JobId>{3});
  CHECK(views[0].waiters == std::vector<JobId>{1, 2});
  CHECK(arb.JobsOn(kGpu) == std::vector<JobId>{1, 2, 3});
}

// Shares kGpu among `conns` (each granted), then turns it exclusive naming `first`; returns
// the epoch of the DROPs.
uint64_t ExclusiveAfterSharing(const Fixture& f, Arbiter& arb, std::initializer_list<ConnId> conns,
                               JobId first) {
  arb.SetShared(kGpu, true, f.At(0));
  for (ConnId c : conns) REQUIRE(Count(arb.Request(c, kGpu, f.At(1)), Kind::kGrant, c) == 1);
  for (const LeaseAction& a : arb.SetShared(kGpu, false, f.At(10), first)) {
    if (a.kind == Kind::kDrop) return a.epoch;
  }
  FAIL("no DROP");
  return 0;
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: going exclusive keeps the named job running, the others drop") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  arb.AddConn(12, 1, 101);
  arb.SetShared(kGpu, true, At(0));
  for (ConnId c : {11, 12, 21}) REQUIRE(Count(arb.Request(c, kGpu, At(1)), Kind::kGrant, c) == 1);
  auto a = arb.SetShared(kGpu, false, At(10), JobId{1});
  CHECK(a.size() == 1);
  REQUIRE(Count(a, Kind::kDrop, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{1});
  uint64_t e = EpochOf(a, Kind::kDrop, 21);
  // Job 2's release leaves the holder alone; its new request waits, and only the holder's
  // connections hear that someone waits.
  CHECK(arb.Released(21, kGpu, e, At(11)).empty());
  a = arb.Request(21, kGpu, At(12));
  CHECK(Count(a, Kind::kContended, 11) == 1);
  CHECK(Count(a, Kind::kContended, 12) == 1);
  CHECK(a.size() == 2);
  // Job 1's quantum runs from the switch; then job 2 gets the GPU.
  CHECK(arb.NextDeadline(TimePoint{}) == At(10 + 20000));
  a = arb.Tick(At(10 + 20000));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 12) == 1);
  CHECK(EpochOf(a, Kind::kDrop, 11) == e);  // the grant it held all along
  CHECK(arb.Released(11, kGpu, e, At(20011)).empty());
  a = arb.Released(12, kGpu, e, At(20012));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: the incumbent is not preempted while its room is checkpointed") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  arb.SetShared(kGpu, true, At(0));
  for (ConnId c : {11, 21}) REQUIRE(Count(arb.Request(c, kGpu, At(1)), Kind::kGrant, c) == 1);
  auto a = arb.SetShared(kGpu, false, At(10), JobId{1});
  uint64_t e = EpochOf(a, Kind::kDrop, 21);
  CHECK(arb.Released(21, kGpu, e, At(11)).empty());
  arb.MakingRoom(kGpu);                              // job 2 is being checkpointed for job 1's turn
  CHECK(arb.Request(21, kGpu, At(12)).size() == 1);  // CONTENDED to job 1
  // The quantum (20 s) passes during the checkpoint: no deadline, no DROP.
  CHECK_FALSE(arb.NextDeadline(TimePoint{}).has_value());
  CHECK(arb.Tick(At(10 + 25000)).empty());
  // The checkpoint took 30 s: the turn begins now and lasts 2 x 30 s.
  arb.RoomMade(kGpu, At(10 + 30000));
  CHECK(arb.NextDeadline(TimePoint{}) == At(30010 + 60000));
  CHECK(arb.Tick(At(30010 + 59000)).empty());
  a = arb.Tick(At(30010 + 60000));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  // A second RoomMade changes nothing; a short checkpoint leaves the quantum.
  arb.RoomMade(kGpu, At(30010 + 90000));
  const int g = 90010 + 20;
  CHECK(arb.Released(11, kGpu, e, At(g)).size() == 1);  // job 2's grant
  arb.MakingRoom(kGpu);
  arb.RoomMade(kGpu, At(g + 1000));
  CHECK(arb.NextDeadline(TimePoint{}) == std::nullopt);  // nobody waits: no turn end
  CHECK(Count(arb.Request(11, kGpu, At(g + 1500)), Kind::kContended, 21) == 1);
  CHECK(arb.NextDeadline(TimePoint{}) == At(g + 1000 + 20000));
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: a named job that does not hold is granted first, once") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  arb.SetShared(kGpu, true, At(0));
  REQUIRE(Count(arb.Request(21, kGpu, At(1)), Kind::kGrant, 21) == 1);
  REQUIRE(Count(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11) == 1);
  // Job 1 gave the GPU back (idle) before the switch.
  CHECK(arb.Released(11, kGpu, 0, At(2)).empty());
  auto a = arb.SetShared(kGpu, false, At(10), JobId{1});
  REQUIRE(Count(a, Kind::kDrop, 21) == 1);
  CHECK_FALSE(arb.Holder(kGpu).has_value());
  CHECK(arb.Request(11, kGpu, At(11)).empty());  // job 2 still holds
  CHECK(arb.Released(21, kGpu, EpochOf(a, Kind::kDrop, 21), At(12)).empty() == false);
  CHECK(arb.Holder(kGpu) == JobId{1});
  CHECK(arb.Request(21, kGpu, At(13)).size() == 1);  // CONTENDED to job 1
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: a named job that releases hands over to the next waiter") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  uint64_t e = ExclusiveAfterSharing(*this, arb, {11, 21}, 1);
  CHECK(arb.Released(21, kGpu, e, At(11)).empty());
  CHECK(arb.Request(21, kGpu, At(12)).size() == 1);  // CONTENDED to job 1
  auto a = arb.Released(11, kGpu, e, At(13));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
}

TEST_CASE_FIXTURE(Fixture, "arbiter shared: a higher priority goes before the named job") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(3, 5, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(31, 3, 300);
  arb.AddConn(32, 3, 301);
  uint64_t e = ExclusiveAfterSharing(*this, arb, {11, 31, 32}, 1);
  CHECK(arb.Released(11, kGpu, e, At(11)).empty());
  CHECK(arb.Request(11, kGpu, At(11)).empty());
  CHECK(arb.Released(31, kGpu, e, At(12)).empty());
  CHECK(arb.Request(31, kGpu, At(12)).empty());
  auto a = arb.Released(32, kGpu, e, At(13));
  CHECK(Count(a, Kind::kGrant, 31) == 1);
  CHECK(CountKind(a, Kind::kGrant) == 1);
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: going exclusive with nobody holding grants the next request") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.SetShared(kGpu, true, At(0));
  CHECK(arb.SetShared(kGpu, false, At(1)).empty());
  CHECK(Count(arb.Request(11, kGpu, At(2)), Kind::kGrant, 11) == 1);
  CHECK(arb.Holder(kGpu) == JobId{1});
  CHECK(Count(arb.Request(21, kGpu, At(3)), Kind::kGrant, 21) == 0);
}

TEST_CASE_FIXTURE(Fixture,
                  "arbiter shared: going shared grants every waiter and continues stopped jobs") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddJob(3, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  REQUIRE(Count(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11) == 1);
  arb.Request(21, kGpu, At(1));
  arb.Request(31, kGpu, At(2));
  REQUIRE(Count(arb.Tick(At(20000)), Kind::kDrop, 11) == 1);
  auto a = arb.Tick(At(30000));  // job 1 ignored the DROP
  REQUIRE(Count(a, Kind::kStop, 11) == 1);
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  uint64_t e2 = EpochOf(a, Kind::kGrant, 21);
  CHECK(arb.Usage(1, At(30000)).stopped);

  a = arb.SetShared(kGpu, true, At(30500));
  CHECK(Count(a, Kind::kContinue, 11) == 1);
  CHECK(PidOf(a, Kind::kContinue, 11) == 100);
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  CHECK(Count(a, Kind::kGrant, 31) == 1);
  CHECK(Count(a, Kind::kGrant, 21) == 0);  // holds already
  CHECK(CountKind(a, Kind::kDrop) == 0);
  CHECK(CountKind(a, Kind::kStop) == 0);
  CHECK_FALSE(arb.Holder(kGpu).has_value());

  auto views = arb.Gpus(At(30500));
  REQUIRE(views.size() == 1);
  CHECK(views[0].shared);
  CHECK(views[0].stopped.empty());
  CHECK(views[0].waiters.empty());
  CHECK(views[0].holding == std::vector<JobId>{1, 2, 3});
  Arbiter::JobUsage u1 = arb.Usage(1, At(31000));
  CHECK_FALSE(u1.stopped);
  CHECK_FALSE(u1.waiting);
  Arbiter::JobUsage u2 = arb.Usage(2, At(31000));
  CHECK(u2.holding);  // it keeps holding, now in shared mode
  // exclusive from 30000 to 30500, shared from 30500 to 31000
  CHECK(u2.lease_seconds == doctest::Approx(1.0));
  Arbiter::JobUsage u3 = arb.Usage(3, At(31000));
  CHECK_FALSE(u3.waiting);
  CHECK(u3.wait_seconds == doctest::Approx(30.498));  // asked at 2, granted at 30500
  // Job 2's grant stays valid: its release is accepted, and it gets the GPU back at once.
  CHECK(arb.Released(21, kGpu, e2, At(31000)).empty());
  CHECK(Count(arb.Request(21, kGpu, At(31001)), Kind::kGrant, 21) == 1);
  CHECK(arb.Tick(At(90000)).empty());
}

TEST_CASE_FIXTURE(Fixture, "arbiter shared: PriorityOf follows AddJob and SetPriority") {
  Arbiter arb(options);
  arb.AddJob(1, 5, Millis(0), 0);
  arb.AddJob(2, -3, Millis(0), 0);
  CHECK(arb.PriorityOf(1) == 5);
  CHECK(arb.PriorityOf(2) == -3);
  arb.SetPriority(2, 7);
  CHECK(arb.PriorityOf(2) == 7);
  CHECK(arb.PriorityOf(99) == 0);  // unknown job
}

TEST_CASE_FIXTURE(Fixture, "arbiter can_grant: a refused job waits, the others are granted") {
  std::set<JobId> allowed = {2};
  std::vector<std::pair<GpuKey, JobId>> asked;
  options.can_grant = [&](const GpuKey& gpu, JobId job) {
    asked.emplace_back(gpu, job);
    return allowed.count(job) != 0;
  };
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);

  CHECK(arb.Request(11, kGpu, At(0)).empty());  // refused: waits, though the GPU is free
  REQUIRE_FALSE(asked.empty());
  CHECK(asked.back() == std::make_pair(kGpu, JobId{1}));
  CHECK_FALSE(arb.Holder(kGpu).has_value());
  CHECK(arb.Usage(1, At(0)).waiting);

  // Asked again each second of the caller's clock.
  CHECK(arb.NextDeadline(At(500)) == At(1500));

  // A waiter that arrived later but is allowed is granted at once.
  auto a = arb.Request(21, kGpu, At(1));
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  CHECK(Count(a, Kind::kGrant, 11) == 0);
  CHECK(arb.Holder(kGpu) == JobId{2});
  uint64_t e2 = EpochOf(a, Kind::kGrant, 21);

  // Job 2 goes idle: job 1 is still refused, so the GPU stays free.
  CHECK(arb.Released(21, kGpu, e2, At(100)).empty());
  CHECK_FALSE(arb.Holder(kGpu).has_value());
  CHECK(arb.Tick(At(1100)).empty());
  CHECK(arb.Usage(1, At(1100)).waiting);

  // Once can_grant says yes, the next Tick grants it.
  allowed.insert(1);
  a = arb.Tick(At(2100));
  REQUIRE(Count(a, Kind::kGrant, 11) == 1);
  CHECK(arb.Holder(kGpu) == JobId{1});
  CHECK_FALSE(arb.Usage(1, At(2100)).waiting);
  CHECK(arb.Usage(1, At(2100)).wait_seconds == doctest::Approx(2.1));
  CHECK_FALSE(arb.NextDeadline(TimePoint{}).has_value());  // nobody waits any more
}

TEST_CASE_FIXTURE(Fixture, "arbiter can_grant: among refused waiters the first allowed one wins") {
  std::set<JobId> allowed;
  options.can_grant = [&](const GpuKey&, JobId job) { return allowed.count(job) != 0; };
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddJob(3, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  CHECK(arb.Request(11, kGpu, At(0)).empty());
  CHECK(arb.Request(21, kGpu, At(1)).empty());
  CHECK(arb.Request(31, kGpu, At(2)).empty());
  CHECK(arb.Tick(At(1000)).empty());
  CHECK(arb.NextDeadline(TimePoint{}).has_value());

  allowed = {2, 3};  // job 1 arrived first but is still refused
  auto a = arb.Tick(At(2000));
  CHECK(CountKind(a, Kind::kGrant) == 1);
  REQUIRE(Count(a, Kind::kGrant, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
  auto views = arb.Gpus(At(2000));
  REQUIRE(views.size() == 1);
  CHECK(views[0].waiters == std::vector<JobId>{1, 3});
}

TEST_CASE_FIXTURE(Fixture, "arbiter can_grant: shared mode grants without asking") {
  int asked = 0;
  options.can_grant = [&](const GpuKey&, JobId) {
    ++asked;
    return false;
  };
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  CHECK(arb.Request(11, kGpu, At(0)).empty());  // exclusive: refused
  CHECK(asked > 0);
  // Going shared grants the refused waiter.
  auto a = arb.SetShared(kGpu, true, At(1));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  CHECK_FALSE(arb.NextDeadline(TimePoint{}).has_value());
}

}  // namespace
TEST_CASE_FIXTURE(Fixture, "arbiter shared: time holding in shared mode counts as lease time") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.SetShared(kGpu, true, At(0));
  arb.Request(11, kGpu, At(0));
  arb.Request(21, kGpu, At(1000));
  Arbiter::JobUsage u1 = arb.Usage(1, At(3000));
  CHECK(u1.holding);
  CHECK(u1.lease_seconds == doctest::Approx(3.0));
  CHECK(arb.Usage(2, At(3000)).lease_seconds == doctest::Approx(2.0));
  // An idle release ends job 1's time; going exclusive ends job 2's.
  LeaseActions a = arb.Request(11, kGpu, At(3000));  // granted again: no double count
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  arb.Released(11, kGpu, EpochOf(a, Kind::kGrant, 11), At(4000));
  CHECK_FALSE(arb.Usage(1, At(9000)).holding);
  CHECK(arb.Usage(1, At(9000)).lease_seconds == doctest::Approx(4.0));
  arb.SetShared(kGpu, false, At(5000));
  CHECK(arb.Usage(2, At(9000)).lease_seconds == doctest::Approx(4.0));
}

}  // namespace gshare::unit_arbiter_shared
