// Memory ledger: memory in use on a GPU that no report shows (another program's, the driver's
// own), learnt from the shortfall a swap-in asks for, and left out of every later plan.
#include <doctest/doctest.h>

#include "ledger_test_util.h"
#include "policy/memory_ledger.h"

namespace gshare::unit_ledger_unseen {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

TEST_CASE("ledger: a swap-in's shortfall reveals memory that no report shows") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Report80(40, 10));  // job 1: 30 GiB swapped out
  ledger.Report(21, 2, kGpu, Report80(30, 30));
  // 40 GiB resident of 80: the ledger counts 40 free. A demand that does not grow (or a
  // process with nothing swapped out) teaches nothing.
  ledger.LearnUnseen(11, kGpu);
  ledger.LearnUnseen(21, kGpu);
  CHECK(ledger.Unseen(kGpu) == 0);
  // Job 1's swap-in stops 2 GiB short: the GPU had at most 30 - 2 = 28 GiB free, so 12 of the
  // 40 the ledger counted free are in use unseen.
  ledger.Report(11, 1, kGpu, Report80(40, 10, 2));
  ledger.LearnUnseen(11, kGpu);
  CHECK(ledger.Unseen(kGpu) == 12 * kGiB);
  CHECK(ledger.Unseen(kOther) == 0);
  // A smaller estimate later does not lower it.
  ledger.Report(11, 1, kGpu, Report80(40, 10, 3));
  ledger.LearnUnseen(11, kGpu);
  CHECK(ledger.Unseen(kGpu) >= 12 * kGiB);
}

TEST_CASE("ledger: room is planned without the unseen memory, until the GPU empties") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Report80(40, 10));
  ledger.Report(21, 2, kGpu, Report80(30, 30));
  // Bringing job 1's 30 GiB back fits in the 40 counted free: nothing to evict.
  CHECK(EvictedFrom(ledger.MakeRoom(kGpu, 1), 21) == 0);
  ledger.Report(11, 1, kGpu, Report80(40, 10, 2));
  ledger.LearnUnseen(11, kGpu);
  // With 12 GiB in use unseen only 28 are free: job 2 must give up room for job 1.
  CHECK(EvictedFrom(ledger.MakeRoom(kGpu, 1), 21) > 0);
  ledger.Forget(21);
  CHECK(ledger.Unseen(kGpu) == 12 * kGiB);  // job 1 is still there
  ledger.Forget(11);
  CHECK(ledger.Unseen(kGpu) == 0);  // nobody has memory on the GPU any more
}

}  // namespace
}  // namespace gshare::unit_ledger_unseen
