// SharingEnvDefaults: the framework variables gshare sets unless the job sets them.
#include <doctest/doctest.h>

#include "runner/sharing_env.h"

namespace gshare::unit_sharing_env {
namespace {

TEST_CASE("sharing env: JAX and TensorFlow defaults only where the job sets nothing") {
  auto all = SharingEnvDefaults([](const std::string&) { return false; });
  REQUIRE(all.size() == 2);
  CHECK(all[0] ==
        std::make_pair(std::string("XLA_PYTHON_CLIENT_PREALLOCATE"), std::string("false")));
  CHECK(all[1] == std::make_pair(std::string("TF_FORCE_GPU_ALLOW_GROWTH"), std::string("true")));
  std::vector<std::string> env = {"PATH=/bin", "XLA_PYTHON_CLIENT_PREALLOCATE=true", "TF_X=1"};
  auto some = SharingEnvDefaults([&env](const std::string& n) { return EnvListHas(env, n); });
  REQUIRE(some.size() == 1);
  CHECK(some[0].first == "TF_FORCE_GPU_ALLOW_GROWTH");
  CHECK_FALSE(EnvListHas(env, "XLA_PYTHON_CLIENT"));  // a prefix is not the name
  CHECK_FALSE(EnvListHas({"XLA_PYTHON_CLIENT_PREALLOCATE"}, "XLA_PYTHON_CLIENT_PREALLOCATE"));
  CHECK(EnvListHas({"XLA_PYTHON_CLIENT_PREALLOCATE="}, "XLA_PYTHON_CLIENT_PREALLOCATE"));
}

TEST_CASE(
    "sharing env: GSHARE_MPS=0, no, off or false asks for isolation; the first entry counts") {
  for (const char* no : {"0", "no", "off", "false"}) {
    CHECK(MpsOptedOut({"PATH=/bin", std::string("GSHARE_MPS=") + no}));
  }
  for (const char* yes : {"1", "", "on", "00", "False"}) {
    CHECK_FALSE(MpsOptedOut({std::string("GSHARE_MPS=") + yes}));
  }
  CHECK_FALSE(MpsOptedOut({"GSHARE_MPS_CLIENT=0", "PATH=/bin"}));  // another name
  CHECK_FALSE(MpsOptedOut({"GSHARE_MPS=1", "GSHARE_MPS=0"}));      // as getenv(3) finds it
}

}  // namespace
}  // namespace gshare::unit_sharing_env
