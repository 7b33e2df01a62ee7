// OthersView (shim/memory/others_view.h): the free memory a job reads never rises because
// another job's memory dropped, until the drop has lasted the hold.
#include "memory/others_view.h"

#include <doctest/doctest.h>

namespace gshare::shim {
namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr uint64_t kGiB = 1ull << 30;

TEST_CASE("others view: a rise shows at once, a drop only after the hold") {
  OthersView v(60 * kS);
  CHECK(v.Report(10 * kGiB, 1 * kS) == 10 * kGiB);  // first read: the current value
  CHECK(v.Report(12 * kGiB, 2 * kS) == 12 * kGiB);  // a neighbour grew: shown at once
  CHECK(v.Report(4 * kGiB, 3 * kS) == 12 * kGiB);   // it ended: still 12 while profiling
  CHECK(v.Report(4 * kGiB, 40 * kS) == 12 * kGiB);
  CHECK(v.Report(6 * kGiB, 62 * kS) == 12 * kGiB);  // a partial rise keeps the drop's clock
  CHECK(v.Report(6 * kGiB, 63 * kS) == 6 * kGiB);   // 60 s after the drop began
  CHECK(v.Report(6 * kGiB, 64 * kS) == 6 * kGiB);
}

TEST_CASE("others view: a drop that goes back up before the hold never shows") {
  OthersView v(60 * kS);
  CHECK(v.Report(8 * kGiB, 1 * kS) == 8 * kGiB);
  CHECK(v.Report(2 * kGiB, 2 * kS) == 8 * kGiB);
  CHECK(v.Report(8 * kGiB, 30 * kS) == 8 * kGiB);  // back: the pending drop is forgotten
  CHECK(v.Report(2 * kGiB, 70 * kS) == 8 * kGiB);  // a new drop starts its own hold
  CHECK(v.Report(2 * kGiB, 131 * kS) == 2 * kGiB);
}

TEST_CASE("others view: a new process sees the current value, with no hold") {
  OthersView v;
  CHECK(v.Report(0, 5 * kS) == 0);
  OthersView fresh;
  CHECK(fresh.Report(3 * kGiB, 5 * kS) == 3 * kGiB);
}

}  // namespace
}  // namespace gshare::shim
