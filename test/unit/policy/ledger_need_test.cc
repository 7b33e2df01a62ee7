// Issue 26: what the processes on a GPU need there (MemoryLedger::Need), the room the
// scheduler's moves check: allocations whether resident or not (a checkpointed process's
// too), demands and a context each, suspended jobs left out, one process's alone on request.
#include <doctest/doctest.h>

#include "policy/ledger_test_util.h"

namespace gshare::unit_ledger_need {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

TEST_CASE("Need counts allocations, demands and contexts, per GPU and process") {
  MemoryLedger::Options o;
  o.context_bytes = kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Report80(30, 30));
  ledger.Report(21, 2, kGpu, Report80(20, 5, 2));  // mostly swapped out, 2 GiB waiting for room
  ledger.Report(31, 3, kOther, Report80(10, 10));
  ledger.SetCheckpointed(11, true);  // its allocations still count: it comes back
  CHECK(ledger.Need(kGpu) == (30 + 1 + 20 + 2 + 1) * kGiB);
  CHECK(ledger.Need(kGpu, 21) == (20 + 2 + 1) * kGiB);
  CHECK(ledger.Need(kGpu, 31) == 0);
  CHECK(ledger.Need(kOther) == 11 * kGiB);
  ledger.SetSuspended(2, true);
  CHECK(ledger.Need(kGpu) == 31 * kGiB);
  CHECK(ledger.Overflow(kGpu) == 0);
}

}  // namespace
}  // namespace gshare::unit_ledger_need
