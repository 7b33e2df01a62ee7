// The incumbent at the switch to exclusive mode: the holder longest in its GPU phase keeps
// running, even when another holder would move less memory; holders beat jobs that hold
// nothing; the least memory moved breaks ties; a job whose memory cannot fit never runs first.
#include "policy/incumbent.h"

#include <doctest/doctest.h>

namespace gshare::unit_incumbent {
namespace {

IncumbentCandidate Holder(JobId job, int64_t phase_ms, uint64_t bytes, bool feasible = true) {
  return IncumbentCandidate{job, Millis(phase_ms), feasible, bytes};
}

IncumbentCandidate Waiter(JobId job, uint64_t bytes) {
  return IncumbentCandidate{job, std::nullopt, true, bytes};
}

TEST_CASE("incumbent: the holder longest in its GPU phase keeps running") {
  // Call Z's switch on the H100: job 2 was 3.2 s into its first step, job 1 (the newcomer,
  // 7.6 GB to evict for it) 0.5 s.
  CHECK(PickIncumbent({Holder(1, 460, 7'599'554'560), Holder(2, 3190, 9'000'000'000)}) == 2);
  CHECK(PickIncumbent({Holder(2, 3190, 9'000'000'000), Holder(1, 460, 7'599'554'560)}) == 2);
}

TEST_CASE("incumbent: a holder beats a job that holds nothing, whatever it moves") {
  CHECK(PickIncumbent({Waiter(1, 0), Holder(2, 0, 1 << 30)}) == 2);
  CHECK(PickIncumbent({Waiter(1, 5), Waiter(2, 3)}) == 2);
}

TEST_CASE("incumbent: ties go to the least memory moved; infeasible jobs never run first") {
  CHECK(PickIncumbent({Holder(1, 100, 9), Holder(2, 100, 4), Holder(3, 100, 6)}) == 2);
  CHECK(PickIncumbent({Holder(1, 5000, 0, false), Holder(2, 10, 8)}) == 2);
  CHECK(!PickIncumbent({Holder(1, 5000, 0, false)}));
  CHECK(!PickIncumbent({}));
}

}  // namespace
}  // namespace gshare::unit_incumbent
