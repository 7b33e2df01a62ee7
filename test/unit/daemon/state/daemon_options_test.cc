// DaemonOptions: whom a daemon accepts as a peer.
#include "daemon/state/daemon_options.h"

#include <doctest/doctest.h>

namespace gshare::unit_daemon_options {
namespace {

TEST_CASE("a user's own daemon accepts that user and root; the system daemon everyone") {
  DaemonOptions options;
  CHECK(options.AcceptsUid(1000, 1000));
  CHECK(options.AcceptsUid(0, 1000));
  CHECK_FALSE(options.AcceptsUid(1001, 1000));
  options.system = true;
  CHECK(options.AcceptsUid(1001, 0));
}

}  // namespace
}  // namespace gshare::unit_daemon_options
