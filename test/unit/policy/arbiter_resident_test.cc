// Residents (Arbiter::SetResidents): in exclusive mode a high-priority job holds beside the
// turns that the lower jobs take among themselves.
#include <doctest/doctest.h>

#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

namespace gshare::unit_arbiter_resident {
namespace {

using namespace arbiter_test;

// Job 1 (priority 10, connection 11) and jobs 2 and 3 (priority 0, connections 21 and 31).
void AddServiceAndTwo(Arbiter& arb) {
  for (JobId job : {1, 2, 3}) {
    arb.AddJob(job, job == 1 ? 10 : 0, Millis(0), 0);
    arb.AddConn(job * 10 + 1, job, static_cast<pid_t>(job * 100));
  }
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: a resident holds beside the others' turns") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  CHECK(arb.SetResidents(kGpu, {1}, At(0)).empty());
  CHECK(arb.IsResident(kGpu, 1));
  CHECK_FALSE(arb.IsResident(kGpu, 2));

  auto a = arb.Request(21, kGpu, At(1));
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  const uint64_t e2 = EpochOf(a, Kind::kGrant, 21);
  CHECK_FALSE(Arbiter::IsResidentEpoch(e2));
  // The resident is granted at once, in a grant of its own, and the holder is not dropped
  // although the resident has the higher priority.
  a = arb.Request(11, kGpu, At(2));
  REQUIRE(a.size() == 1);
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  const uint64_t e1 = EpochOf(a, Kind::kGrant, 11);
  CHECK(Arbiter::IsResidentEpoch(e1));
  CHECK(arb.Holder(kGpu) == JobId{2});
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{1, 2});

  // Job 3 waits for job 2's turn; the resident hears nothing of it.
  a = arb.Request(31, kGpu, At(3));
  CHECK(Count(a, Kind::kGrant, 31) == 0);
  CHECK(Count(a, Kind::kContended, 21) == 1);
  CHECK(Count(a, Kind::kContended, 11) == 0);
  // At the quantum's end only job 2 drops; once it released, job 3's turn begins while the
  // resident still holds.
  a = arb.Tick(At(20001));
  CHECK(Count(a, Kind::kDrop, 21) == 1);
  CHECK(Count(a, Kind::kDrop, 11) == 0);
  a = arb.Released(21, kGpu, e2, At(20002));
  CHECK(Count(a, Kind::kGrant, 31) == 1);
  CHECK(arb.Holder(kGpu) == JobId{3});
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{1, 3});

  // The resident's own release and request change nobody's turn.
  a = arb.Released(11, kGpu, e1, At(20003));
  CHECK(a.empty());
  a = arb.Request(11, kGpu, At(20004));
  REQUIRE(a.size() == 1);
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  CHECK(arb.Holder(kGpu) == JobId{3});
  auto views = arb.Gpus(At(20005));
  REQUIRE(views.size() == 1);
  CHECK(views[0].residents == std::vector<JobId>{1});
  CHECK(arb.Usage(1, At(20005)).holding);
  CHECK_FALSE(arb.Usage(1, At(20005)).waiting);
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: the holder made resident keeps running") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  auto a = arb.Request(11, kGpu, At(0));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  const uint64_t e1 = EpochOf(a, Kind::kGrant, 11);
  CHECK(Count(arb.Request(21, kGpu, At(1)), Kind::kGrant, 21) == 0);
  // Job 1 becomes resident: not dropped, and the waiting job 2 gets the turn now.
  a = arb.SetResidents(kGpu, {1}, At(2));
  CHECK(Count(a, Kind::kDrop, 11) == 0);
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{1, 2});

  // Ordinary again: job 1 is dropped and asks for turns like the others; its priority then
  // ends job 2's turn at once.
  a = arb.SetResidents(kGpu, {}, At(3));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 21) == 0);
  CHECK(arb.Released(11, kGpu, e1, At(4)).empty());
  a = arb.Request(11, kGpu, At(5));
  CHECK(Count(a, Kind::kGrant, 11) == 0);
  CHECK(Count(a, Kind::kDrop, 21) == 1);
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: made ordinary with no turn held, it keeps the GPU") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  CHECK(arb.SetResidents(kGpu, {1}, At(0)).empty());
  const uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11);
  const uint64_t e2 = EpochOf(arb.Request(21, kGpu, At(2)), Kind::kGrant, 21);
  CHECK(arb.Released(21, kGpu, e2, At(3)).empty());  // job 2's turn ends; nobody waits
  CHECK_FALSE(arb.Holder(kGpu).has_value());

  // Ordinary again while nobody holds a turn: no DROP, job 1 holds the turn on its grant.
  auto a = arb.SetResidents(kGpu, {}, At(4));
  CHECK(a.empty());
  CHECK(arb.Holder(kGpu) == JobId{1});
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{1});
  // Job 2 asks again: it waits behind the higher priority, and job 1 is not dropped for it.
  a = arb.Request(21, kGpu, At(5));
  CHECK(Count(a, Kind::kGrant, 21) == 0);
  CHECK(Count(a, Kind::kDrop, 11) == 0);
  // Resident again: job 1 hears nothing and job 2's turn begins beside it.
  a = arb.SetResidents(kGpu, {1}, At(6));
  CHECK(Count(a, Kind::kDrop, 11) == 0);
  CHECK(Count(a, Kind::kGrant, 11) == 0);
  CHECK(Count(a, Kind::kGrant, 21) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
  // Ordinary once more while job 2 holds the turn: now job 1 is dropped, as before.
  a = arb.SetResidents(kGpu, {}, At(7));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  // Its release on the grant it held all along is still matched.
  CHECK(arb.Released(11, kGpu, e1, At(8)).empty());
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{2});
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: a former resident's turn ends on its release") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  CHECK(arb.SetResidents(kGpu, {1}, At(0)).empty());
  const uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11);
  CHECK(arb.SetResidents(kGpu, {}, At(2)).empty());
  CHECK(Count(arb.Request(31, kGpu, At(3)), Kind::kGrant, 31) == 0);
  // Job 1 lets go of its own accord: the turn goes to job 3.
  auto a = arb.Released(11, kGpu, e1, At(4));
  CHECK(Count(a, Kind::kGrant, 31) == 1);
  CHECK(arb.Holder(kGpu) == JobId{3});
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: going exclusive keeps the resident's grant") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  CHECK(arb.SetShared(kGpu, true, At(0)).empty());
  const uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11);
  CHECK(Count(arb.Request(21, kGpu, At(2)), Kind::kGrant, 21) == 1);
  CHECK(Count(arb.Request(31, kGpu, At(3)), Kind::kGrant, 31) == 1);
  CHECK(arb.SetResidents(kGpu, {1}, At(4)).empty());  // shared: nothing changes yet
  // Exclusive, job 2 named first: the resident and job 2 keep running, job 3 drops.
  auto a = arb.SetShared(kGpu, false, At(5), JobId{2});
  CHECK(Count(a, Kind::kDrop, 11) == 0);
  CHECK(Count(a, Kind::kDrop, 21) == 0);
  CHECK(Count(a, Kind::kDrop, 31) == 1);
  CHECK(arb.Holder(kGpu) == JobId{2});
  // The resident's grant from shared mode is still its own to release.
  CHECK(arb.Released(11, kGpu, e1, At(6)).empty());
  CHECK(arb.HoldingJobs(kGpu) == std::vector<JobId>{2, 3});  // job 3 still drains
}

TEST_CASE_FIXTURE(Fixture, "arbiter residents: a suspended resident holds nothing") {
  Arbiter arb(options);
  AddServiceAndTwo(arb);
  CHECK(arb.SetResidents(kGpu, {1}, At(0)).empty());
  const uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(1)), Kind::kGrant, 11);
  auto a = arb.SetSuspended(1, true, At(2));
  CHECK(Count(a, Kind::kDrop, 11) == 1);
  CHECK(arb.Released(11, kGpu, e1, At(3)).empty());
  CHECK(arb.Request(11, kGpu, At(4)).empty());  // waits for its resume, not in the queue
  CHECK(Count(arb.Request(21, kGpu, At(5)), Kind::kGrant, 21) == 1);
  a = arb.SetSuspended(1, false, At(6));
  CHECK(Count(a, Kind::kGrant, 11) == 1);
  CHECK(Count(a, Kind::kDrop, 21) == 0);
  CHECK(arb.Holder(kGpu) == JobId{2});
}

}  // namespace
}  // namespace gshare::unit_arbiter_resident
