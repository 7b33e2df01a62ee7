#include "runner/job_umask.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

namespace gshare::unit_job_umask {
namespace {

TEST_CASE("the daemon's umask is 077 and its jobs get the one it started with") {
  const mode_t start = umask(022);
  SetPrivateUmask();
  CHECK(umask(077) == 077);
  CHECK(std::string(getenv("GSHARE_JOB_UMASK")) == "0022");
  RestoreJobUmask();
  CHECK(umask(start) == 022);
  CHECK(getenv("GSHARE_JOB_UMASK") == nullptr);
}

}  // namespace
}  // namespace gshare::unit_job_umask
