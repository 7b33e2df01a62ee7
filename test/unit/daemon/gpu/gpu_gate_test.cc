// GpuGate: with NVML's list, a user's peer may name only the GPUs it lists; without it, as many
// new GPUs per user as the machine has; admins any.
#include "daemon/gpu/gpu_gate.h"

#include <doctest/doctest.h>

namespace gshare::unit_gpu_gate {
namespace {

const GpuKey kListed = "GPU-00000000-0000-0000-0000-00000000000a";
const GpuKey kMadeUp = "GPU-deadbeef-0000-0000-0000-000000000000";

TEST_CASE("GpuGate: a user names only listed GPUs when NVML lists them; an admin any") {
  const std::optional<std::vector<std::string>> listed =
      std::vector<std::string>{"GPU-00000000-0000-0000-0000-00000000000A"};
  GpuGate gate({[&]() -> const std::optional<std::vector<std::string>>& { return listed; },
                [] { return 1; }});
  CHECK(gate.MayAdd(kListed, 1000, false).ok());  // either case
  Status made_up = gate.MayAdd(kMadeUp, 1000, false);
  CHECK_FALSE(made_up.ok());
  CHECK(made_up.message() == "it names a GPU this machine does not have (" + kMadeUp + ")");
  CHECK(gate.MayAdd(kMadeUp, 0, true).ok());
}

TEST_CASE("GpuGate: without NVML a user brings in at most the machine's count of GPUs") {
  const std::optional<std::vector<std::string>> unknown;
  GpuGate gate({[&]() -> const std::optional<std::vector<std::string>>& { return unknown; },
                [] { return 2; }});
  for (int i = 0; i < 2; ++i) {
    REQUIRE(gate.MayAdd(kMadeUp, 1000, false).ok());
    gate.Added(1000);
  }
  Status third = gate.MayAdd(kMadeUp, 1000, false);
  CHECK_FALSE(third.ok());
  CHECK(third.message().find("than this machine has (2)") != std::string::npos);
  CHECK(gate.MayAdd(kMadeUp, 2000, false).ok());  // another user's own count
  CHECK(gate.MayAdd(kMadeUp, 1000, true).ok());
}

}  // namespace
}  // namespace gshare::unit_gpu_gate
