// MpsOptOutTooLate: GSHARE_MPS=0 set inside a job that gshare launched as an MPS client.
#include <doctest/doctest.h>

#include "lease/priority_lane.h"

namespace gshare::shim::unit_mps_opt_out {
namespace {

TEST_CASE("GSHARE_MPS=0 inside an MPS client comes too late; outside one, or unset, it does not") {
  for (const char* no : {"0", "no", "off", "false"}) {
    CHECK(MpsOptOutTooLate("1", no));
    CHECK_FALSE(MpsOptOutTooLate(nullptr, no));  // launched outside MPS: it was heard
    CHECK_FALSE(MpsOptOutTooLate("0", no));
  }
  for (const char* yes : {"1", "", "on", "00", "False"}) CHECK_FALSE(MpsOptOutTooLate("1", yes));
  CHECK_FALSE(MpsOptOutTooLate("1", nullptr));
}

}  // namespace
}  // namespace gshare::shim::unit_mps_opt_out
