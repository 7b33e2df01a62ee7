// Issue 24 (metrics): the counters metrics expose only ever grow: a job's lease and wait
// seconds through a grant whose swap-in is awaited, a GPU's totals through releases, and a
// GPU's swap counters when a process leaves the ledger.
#include <doctest/doctest.h>

#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"
#include "policy/memory_ledger.h"

namespace gshare::unit_metrics_counters {
namespace {
using namespace arbiter_test;

TEST_CASE_FIXTURE(Fixture, "issue 24: lease and wait seconds never go back") {
  Arbiter arb(options);
  AddTwoJobs(arb);
  const uint64_t e1 = EpochOf(arb.Request(11, kGpu, At(0)), Kind::kGrant, 11);
  REQUIRE(e1 != 0);
  arb.Request(21, kGpu, At(100));  // waits
  double lease = 0, wait = 0, gpu_lease = 0, gpu_wait = 0;
  const auto grows = [&](int ms) {
    const Arbiter::JobUsage u1 = arb.Usage(1, At(ms));
    const Arbiter::JobUsage u2 = arb.Usage(2, At(ms));
    const Arbiter::GpuView v = arb.Gpus(At(ms)).at(0);
    CHECK(u1.lease_seconds + u2.lease_seconds >= lease);
    CHECK(u1.wait_seconds + u2.wait_seconds >= wait);
    CHECK(v.lease_seconds_total >= gpu_lease);
    CHECK(v.wait_seconds_total >= gpu_wait);
    lease = u1.lease_seconds + u2.lease_seconds;
    wait = u1.wait_seconds + u2.wait_seconds;
    gpu_lease = v.lease_seconds_total;
    gpu_wait = v.wait_seconds_total;
  };
  grows(1000);
  CHECK(gpu_lease == doctest::Approx(1.0));
  CHECK(gpu_wait == doctest::Approx(0.9));
  // Job 2 is granted, then waits for its swap-in: that wait is its waiting, before and after
  // the swap-in ends.
  const uint64_t e2 = EpochOf(arb.Released(11, kGpu, e1, At(1500)), Kind::kGrant, 21);
  REQUIRE(e2 != 0);
  arb.AwaitSwapIn(kGpu, e2);
  grows(1500);
  grows(2000);
  grows(3000);
  arb.SwappedIn(kGpu, e2, At(3500));
  grows(3500);
  grows(5000);
  CHECK(arb.Usage(2, At(5000)).lease_seconds == doctest::Approx(1.5));
  CHECK(gpu_lease == doctest::Approx(1.5 + 3.5));  // both holdings, the swap-in included
}

TEST_CASE("a GPU's swap counters keep what a forgotten process moved") {
  MemoryLedger ledger(MemoryLedger::Options{});
  proto::MemReportMsg m{};
  m.swaps_out = 3;
  m.swaps_in = 2;
  m.bytes_out = 3000;
  m.bytes_in = 2000;
  ledger.Report(11, 1, "GPU-0", m);
  ledger.Report(21, 2, "GPU-0", m);
  ledger.Report(31, 3, "GPU-1", m);
  CHECK(ledger.SwapsOn("GPU-0").bytes_out == 6000);
  ledger.Forget(11);
  const MemoryLedger::SwapCounters after = ledger.SwapsOn("GPU-0");
  CHECK(after.swaps_out == 6);
  CHECK(after.swaps_in == 4);
  CHECK(after.bytes_out == 6000);
  CHECK(after.bytes_in == 4000);
  CHECK(ledger.SwapsOn("GPU-1").swaps_out == 3);
  CHECK(ledger.SwapsOn("GPU-2").swaps_out == 0);
}

}  // namespace
}  // namespace gshare::unit_metrics_counters
