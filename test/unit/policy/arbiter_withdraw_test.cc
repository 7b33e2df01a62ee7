// Issue 26: a process that moves to another GPU while it waits withdraws its request; when it
// was its gang's only wish, the gang waits for none of its GPUs any more: the holder of the GPU
// it left keeps its turn, and the gang reserves nothing against other jobs.
#include <doctest/doctest.h>

#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

namespace gshare::unit_arbiter_withdraw {
namespace {

using namespace arbiter_test;

std::vector<JobId> WaitersOf(const Arbiter& arb, const GpuKey& gpu, TimePoint now) {
  for (const auto& v : arb.Gpus(now)) {
    if (v.gpu == gpu) return v.waiters;
  }
  return {};
}

TEST_CASE_FIXTURE(Fixture, "issue 26: a gang whose process withdrew waits for none of its GPUs") {
  Arbiter arb(options);
  arb.AddJob(1, 0, Millis(0), 0);  // a single job on A
  arb.AddJob(2, 0, Millis(0), 0);  // a gang on A and B, its one process on A
  arb.AddJob(3, 0, Millis(0), 0);  // a single job on B
  arb.SetGang(2, {kA, kB});
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(31, 3, 300);
  REQUIRE(Count(arb.Request(11, kA, At(0)), Kind::kGrant, 11) == 1);
  CHECK(Count(arb.Request(21, kA, At(10)), Kind::kGrant, 21) == 0);
  CHECK(WaitersOf(arb, kA, At(10)) == std::vector<JobId>{2});
  CHECK(WaitersOf(arb, kB, At(10)) == std::vector<JobId>{2});

  arb.Withdraw(21, kA, At(20));
  CHECK(WaitersOf(arb, kA, At(20)).empty());
  CHECK(WaitersOf(arb, kB, At(20)).empty());
  // B is nobody's: job 3 gets it at once (no gang reserves it).
  CHECK(Count(arb.Request(31, kB, At(30)), Kind::kGrant, 31) == 1);
  // Job 1's quantum ends with nobody waiting for A: it keeps the GPU.
  CHECK(Count(arb.Tick(At(25000)), Kind::kDrop, 11) == 0);
  CHECK(arb.Holder(kA) == JobId{1});
}

TEST_CASE_FIXTURE(Fixture, "issue 26: a gang still waits while another of its processes asks") {
  Arbiter arb(options);
  AddSingleAndGang(arb);
  REQUIRE(Count(arb.Request(11, kA, At(0)), Kind::kGrant, 11) == 1);
  arb.Request(21, kA, At(10));
  arb.Request(22, kB, At(10));
  arb.Withdraw(21, kA, At(20));
  CHECK(WaitersOf(arb, kA, At(20)) == std::vector<JobId>{2});
  CHECK(WaitersOf(arb, kB, At(20)) == std::vector<JobId>{2});
}

}  // namespace
}  // namespace gshare::unit_arbiter_withdraw
