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

}  // namespace
}  // namespace gshare::unit_sharing_env
