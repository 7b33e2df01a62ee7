// A job's GPU request (--gpus, --gpu lists), UUID bytes, and CUDA_VISIBLE_DEVICES where NVML
// does not answer (CI has no driver).
#include "base/gpu_inventory.h"

#include <doctest/doctest.h>

namespace gshare::unit_gpu_inventory {
namespace {

TEST_CASE("gpu request: --gpus and --gpu lists are checked together") {
  const std::optional<std::vector<std::string>> none;
  CHECK(CheckGpuRequestAgainst("", 2, 4, none).ok());
  CHECK(CheckGpuRequestAgainst("0,3", 2, 4, none).ok());
  CHECK(CheckGpuRequestAgainst("", 4, 4, none).ok());
  CHECK(CheckGpuRequestAgainst("", 9, 0, none).ok());  // GPUs unknown: any count up to the cap
  CHECK(CheckGpuRequestAgainst("", 5, 4, none).message() == "--gpus 5: this machine has 4 GPU(s)");
  CHECK(CheckGpuRequestAgainst("", 0, 4, none).message() == "--gpus 0: expected 1..64");
  CHECK(CheckGpuRequestAgainst("1", 2, 4, none).message() ==
        "--gpu \"1\" names 1 GPU(s) but --gpus is 2");
  CHECK(CheckGpuRequestAgainst("0,0", 2, 4, none).message() == "--gpu \"0,0\": 0 is named twice");
  CHECK_FALSE(CheckGpuRequestAgainst("0,7", 2, 4, none).ok());
  CHECK_FALSE(CheckGpuRequestAgainst("0,", 2, 4, none).ok());
  const std::vector<std::string> listed = {"GPU-0123abcd-4567-89ab-cdef-0123456789ab"};
  CHECK(CheckGpuRequestAgainst("GPU-0123ABCD-4567-89AB-CDEF-0123456789AB,1", 2, 4, listed).ok());
  CHECK_FALSE(CheckGpuRequestAgainst("GPU-0123abcd-4567-89ab-cdef-0123456789ab,"
                                     "GPU-0123ABCD-4567-89AB-CDEF-0123456789AB",
                                     2, 4, listed)
                  .ok());  // the same GPU twice, spelled in two cases
  CHECK(SplitGpuList("") == std::vector<std::string>{});
  CHECK(SplitGpuList("2") == std::vector<std::string>{"2"});
  CHECK(SplitGpuList("0,2,") == std::vector<std::string>{"0", "2", ""});
}

TEST_CASE("gpu request: UUID bytes as CUDA's CUuuid holds them") {
  unsigned char b[16];
  REQUIRE(ParseGpuUuid("GPU-46414b45-4750-552d-3030-303030303031", b));
  CHECK(b[0] == 0x46);
  CHECK(b[3] == 0x45);
  CHECK(b[4] == 0x47);
  CHECK(b[15] == 0x31);
  REQUIRE(ParseGpuUuid("GPU-ABCDEF00-0000-0000-0000-0000000000FF", b));
  CHECK(b[0] == 0xab);
  CHECK(b[15] == 0xff);
  CHECK_FALSE(ParseGpuUuid("GPU-46414b45-4750-552d-3030-30303030303", b));
  CHECK_FALSE(ParseGpuUuid("46414b45-4750-552d-3030-303030303031", b));
}

TEST_CASE("gpu request: without NVML, indexes stay indexes and UUIDs are lower-cased") {
  if (NvmlGpuUuids()) return;  // a machine with a driver maps indexes to its own UUIDs
  CHECK(VisibleDevices("1,3") == "1,3");
  CHECK(GpuUuidOf("1") == "");
  CHECK(GpuUuidOf("GPU-ABCDEF00-0000-0000-0000-0000000000FF") ==
        "GPU-abcdef00-0000-0000-0000-0000000000ff");
  CHECK(GpuIndexList("1,GPU-abcdef00-0000-0000-0000-0000000000ff") ==
        "1,GPU-abcdef00-0000-0000-0000-0000000000ff");
  CHECK(GpuIndexOf("GPU-abcdef00-0000-0000-0000-0000000000ff") ==
        "GPU-abcdef00-0000-0000-0000-0000000000ff");
}

}  // namespace
}  // namespace gshare::unit_gpu_inventory
