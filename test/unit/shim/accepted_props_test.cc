// The allocation properties the driver accepted for the swap engine's cuMemCreate: equal in
// the fields cuMemCreate reads on Linux, at most kMax kept.
#include "memory/accepted_props.h"

#include <doctest/doctest.h>

namespace gshare::shim::unit_accepted_props {
namespace {

using gs_cuda::CUmemAllocationProp;

CUmemAllocationProp DeviceProp(int device) {
  CUmemAllocationProp p{};
  p.type = gs_cuda::CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = gs_cuda::CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  return p;
}

TEST_CASE("AcceptedProps: none at first; one added is found again") {
  AcceptedProps props;
  CUmemAllocationProp p = DeviceProp(0);
  CHECK_FALSE(props.Has(p));
  props.Add(p);
  CHECK(props.Has(p));
  CUmemAllocationProp copy = p;
  CHECK(props.Has(copy));
}

TEST_CASE("AcceptedProps: a prop that differs in a field cuMemCreate reads is another one") {
  AcceptedProps props;
  const CUmemAllocationProp p = DeviceProp(1);
  props.Add(p);
  using Change = void (*)(CUmemAllocationProp&);
  const Change changes[] = {
      [](CUmemAllocationProp& q) { ++q.type; },
      [](CUmemAllocationProp& q) { q.requestedHandleTypes = 8; },  // fabric
      [](CUmemAllocationProp& q) { ++q.location.type; },
      [](CUmemAllocationProp& q) { q.location.id = 2; },
      [](CUmemAllocationProp& q) { q.allocFlags.compressionType = 1; },
      [](CUmemAllocationProp& q) { q.allocFlags.gpuDirectRDMACapable = 1; },
      [](CUmemAllocationProp& q) { q.allocFlags.usage = 1; },
      [](CUmemAllocationProp& q) { q.allocFlags.reserved[3] = 1; },
  };
  for (size_t i = 0; i < sizeof changes / sizeof changes[0]; ++i) {
    CAPTURE(i);
    CUmemAllocationProp q = p;
    changes[i](q);
    CHECK_FALSE(props.Has(q));
  }
}

TEST_CASE("AcceptedProps: the Windows security attributes do not count") {
  AcceptedProps props;
  CUmemAllocationProp p = DeviceProp(0);
  props.Add(p);
  int attributes = 0;
  p.win32HandleMetaData = &attributes;
  CHECK(props.Has(p));
}

TEST_CASE("AcceptedProps: at most kMax are kept") {
  AcceptedProps props;
  for (int d = 0; d <= AcceptedProps::kMax; ++d) props.Add(DeviceProp(d));
  for (int d = 0; d < AcceptedProps::kMax; ++d) CHECK(props.Has(DeviceProp(d)));
  CHECK_FALSE(props.Has(DeviceProp(AcceptedProps::kMax)));
}

}  // namespace
}  // namespace gshare::shim::unit_accepted_props
