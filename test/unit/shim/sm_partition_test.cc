// SmPartitions (shim/lease/sm_partition.h) against a table of fake driver entry points: the
// green context it makes, the two event edges around a moved launch, the companions per
// stream, and every way it declines (a context of the job's own, no green contexts, a split
// that leaves nothing, no share, a full table).
#include "lease/sm_partition.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

namespace gshare::shim::unit_sm_partition {
namespace {

using namespace gs_cuda;

template <typename T>
T Handle(uintptr_t v) {
  return reinterpret_cast<T>(v);
}
const CUcontext kPrimary = Handle<CUcontext>(0x100);
const CUcontext kOwn = Handle<CUcontext>(0x200);
const CUstream kAppStream = Handle<CUstream>(0x500);

// What the fake entry points see and do; plain function pointers carry no state.
struct Fake {
  CUcontext current = kPrimary;
  unsigned sms = 132;
  unsigned split_asked = 0;
  unsigned green_flags = 99;
  int greens = 0, streams = 0, events = 0, retained = 0;
  bool fail_record = false;
  std::vector<std::string> log;  // event records and stream waits, in order
  std::set<CUevent> done;        // events whose last record has completed
};
Fake* g_fake = nullptr;

std::string Name(const void* h) { return std::to_string(reinterpret_cast<uintptr_t>(h)); }

DriverExtras FakeDriver() {
  DriverExtras x;
  x.cuCtxGetCurrent = [](CUcontext* c) {
    *c = g_fake->current;
    return CUDA_SUCCESS;
  };
  x.cuCtxGetDevice = [](CUdevice* d) {
    *d = 0;
    return CUDA_SUCCESS;
  };
  x.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    ++g_fake->retained;
    *c = kPrimary;
    return CUDA_SUCCESS;
  };
  x.cuDevicePrimaryCtxRelease = [](CUdevice) {
    --g_fake->retained;
    return CUDA_SUCCESS;
  };
  x.cuDeviceGetDevResource = [](CUdevice, CUdevResource* r, CUdevResourceType type) {
    if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
    r->type = type;
    r->sm.smCount = g_fake->sms;
    return CUDA_SUCCESS;
  };
  x.cuDevSmResourceSplitByCount = [](CUdevResource* group, unsigned* n, const CUdevResource* in,
                                     CUdevResource* rest, unsigned, unsigned min) {
    g_fake->split_asked = min;
    const unsigned each = (min + 7) / 8 * 8;  // the granularity of an H100/H200
    if (each > in->sm.smCount) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    *group = *in;
    group->sm.smCount = each;
    *rest = *in;
    rest->sm.smCount = in->sm.smCount - each;
    return CUDA_SUCCESS;
  };
  x.cuDevResourceGenerateDesc = [](CUdevResourceDesc* d, CUdevResource*, unsigned n) {
    *d = Handle<CUdevResourceDesc>(0x300 + n);
    return CUDA_SUCCESS;
  };
  x.cuGreenCtxCreate = [](CUgreenCtx* g, CUdevResourceDesc, CUdevice, unsigned flags) {
    g_fake->green_flags = flags;
    *g = Handle<CUgreenCtx>(0x400 + ++g_fake->greens);
    return CUDA_SUCCESS;
  };
  x.cuGreenCtxStreamCreate = [](CUstream* s, CUgreenCtx, unsigned flags, int) {
    if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    *s = Handle<CUstream>(0x1000 + ++g_fake->streams);
    return CUDA_SUCCESS;
  };
  x.cuEventCreate = [](CUevent* e, unsigned) {
    *e = Handle<CUevent>(0x2000 + ++g_fake->events);
    return CUDA_SUCCESS;
  };
  x.cuEventRecord = [](CUevent e, CUstream s) {
    if (g_fake->fail_record) return CUDA_ERROR_INVALID_HANDLE;
    g_fake->log.push_back("record " + Name(e) + " on " + Name(s));
    g_fake->done.erase(e);
    return CUDA_SUCCESS;
  };
  x.cuEventQuery = [](CUevent e) {
    return g_fake->done.count(e) != 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  };
  x.cuEventSynchronize = [](CUevent e) {
    g_fake->log.push_back("sync " + Name(e));
    g_fake->done.insert(e);
    return CUDA_SUCCESS;
  };
  x.cuStreamWaitEvent = [](CUstream s, CUevent e, unsigned) {
    g_fake->log.push_back("wait " + Name(s) + " for " + Name(e));
    return CUDA_SUCCESS;
  };
  return x;
}

DriverExtras* g_driver = nullptr;  // the fixture's table, as SmPartitions reaches it
const DriverExtras& FakeTable() { return *g_driver; }
int Half() { return 50; }
int NoShare() { return 0; }
int DepthTwo() { return 2; }
int DepthTooDeep() { return SmPartitions::kMaxDepth + 1; }

struct Fixture {
  Fixture() {
    g_fake = &fake;
    g_driver = &driver;
  }
  ~Fixture() {
    g_fake = nullptr;
    g_driver = nullptr;
  }
  Fake fake;
  DriverExtras driver = FakeDriver();
};

TEST_CASE("SmPartitions: a launch moves to a companion stream with an edge in and out") {
  Fixture f;
  SmPartitions parts(&FakeTable, &Half);
  CHECK(parts.Possible(0));
  const Narrowed n = parts.Enter(0, kAppStream, false);
  REQUIRE(n.green != nullptr);
  CHECK(n.user == kAppStream);
  CHECK(f.fake.split_asked == 66);  // 50 % of 132
  CHECK(f.fake.green_flags == CU_GREEN_CTX_DEFAULT_STREAM);
  CHECK(f.fake.retained == 0);  // the green context holds the primary context, not the table
  // In: the companion waits for what the application's stream holds.
  REQUIRE(f.fake.log.size() == 2);
  const std::string into = f.fake.log[0].substr(7, f.fake.log[0].find(' ', 7) - 7);
  CHECK(f.fake.log[0] == "record " + into + " on " + Name(kAppStream));
  CHECK(f.fake.log[1] == "wait " + Name(n.green) + " for " + into);
  // Out: the application's stream waits for the launch.
  parts.Leave(n);
  REQUIRE(f.fake.log.size() == 4);
  CHECK(f.fake.log[2] == "record " + Name(n.back) + " on " + Name(n.green));
  CHECK(f.fake.log[3] == "wait " + Name(kAppStream) + " for " + Name(n.back));
  CHECK(into != Name(n.back));  // two events: the edge out never overwrites the edge in

  // The same stream keeps its companion; another stream gets its own.
  CHECK(parts.Enter(0, kAppStream, false).green == n.green);
  CHECK(f.fake.streams == 1);
  const Narrowed other = parts.Enter(0, Handle<CUstream>(0x501), false);
  CHECK(other.green != nullptr);
  CHECK(other.green != n.green);
  CHECK(f.fake.greens == 1);  // one green context per device
}

TEST_CASE("SmPartitions: stream 0 is the per-thread stream of a _ptsz call, else the legacy one") {
  Fixture f;
  SmPartitions parts(&FakeTable, &Half);
  const Narrowed per_thread = parts.Enter(0, nullptr, true);
  const Narrowed legacy = parts.Enter(0, nullptr, false);
  CHECK(per_thread.user == CuStreamPerThread());
  CHECK(legacy.user == nullptr);
  CHECK(per_thread.green != legacy.green);
  CHECK(f.fake.log[0] ==
        "record " + f.fake.log[0].substr(7, 4) + " on " + Name(CuStreamPerThread()));
}

TEST_CASE("SmPartitions: a launch stays where it is when the partition cannot take it") {
  Fixture f;
  SUBCASE("a context the job made shares no memory with the green one") {
    f.fake.current = kOwn;
    SmPartitions parts(&FakeTable, &Half);
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK_FALSE(parts.Possible(0));
    CHECK(f.fake.greens == 0);
    CHECK(f.fake.retained == 0);
  }
  SUBCASE("a driver without green contexts") {
    f.driver.cuGreenCtxCreate = nullptr;
    SmPartitions parts(&FakeTable, &Half);
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK_FALSE(parts.Possible(0));
    CHECK(parts.Possible(1));  // another device is tried on its own
  }
  SUBCASE("a split that leaves the partition every SM") {
    f.fake.sms = 8;  // half of 8 rounds up to all 8
    SmPartitions parts(&FakeTable, &Half);
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK_FALSE(parts.Possible(0));
  }
  SUBCASE("no share: nothing is asked of the driver") {
    SmPartitions parts(&FakeTable, &NoShare);
    CHECK_FALSE(parts.Possible(0));
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK(f.fake.split_asked == 0);
  }
  SUBCASE("the edge in cannot be queued") {
    SmPartitions parts(&FakeTable, &Half);
    f.fake.fail_record = true;
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK(parts.Possible(0));  // the next launch tries again
  }
  SUBCASE("the current context changed after the partition was made") {
    SmPartitions parts(&FakeTable, &Half);
    REQUIRE(parts.Enter(0, kAppStream, false).green != nullptr);
    f.fake.current = kOwn;
    CHECK(parts.Enter(0, kAppStream, false).green == nullptr);
    CHECK(parts.Possible(0));
  }
}

TEST_CASE("SmPartitions: a full companion table leaves later streams where they are") {
  Fixture f;
  SmPartitions parts(&FakeTable, &Half);
  for (int i = 0; i < SmPartitions::kMaxCompanions; ++i) {
    CHECK(parts.Enter(0, Handle<CUstream>(0x600 + i), false).green != nullptr);
  }
  CHECK(parts.Enter(0, Handle<CUstream>(0x900), false).green == nullptr);
  CHECK(parts.Enter(0, Handle<CUstream>(0x600), false).green != nullptr);  // known ones still go
  CHECK(parts.Possible(0));
}

TEST_CASE("SmPartitions: with a depth bound a stream keeps at most that many launches moved") {
  Fixture f;
  SmPartitions parts(&FakeTable, &Half, &DepthTwo);
  auto syncs = [&f]() {
    std::vector<std::string> out;
    for (const std::string& line : f.fake.log) {
      if (line.rfind("sync ", 0) == 0) out.push_back(line.substr(5));
    }
    return out;
  };
  // The first two go at once, each with its own edge out.
  const Narrowed first = parts.Enter(0, kAppStream, false);
  parts.Leave(first);
  const Narrowed second = parts.Enter(0, kAppStream, false);
  parts.Leave(second);
  CHECK(first.back != second.back);
  CHECK((!first.waited && !second.waited));
  CHECK(syncs().empty());
  // The third reuses the first's edge and waits for it: two stay queued.
  const Narrowed third = parts.Enter(0, kAppStream, false);
  CHECK(third.back == first.back);
  CHECK(third.waited);
  CHECK(syncs() == std::vector<std::string>{Name(first.back)});
  parts.Leave(third);
  // A launch whose turn's edge has completed goes without waiting.
  f.fake.done.insert(second.back);
  const Narrowed fourth = parts.Enter(0, kAppStream, false);
  CHECK(fourth.back == second.back);
  CHECK_FALSE(fourth.waited);
  CHECK(syncs().size() == 1);
  // Another stream counts on its own.
  const Narrowed other = parts.Enter(0, Handle<CUstream>(0x501), false);
  CHECK_FALSE(other.waited);
  CHECK(other.back != first.back);
}

TEST_CASE("SmPartitions: no depth bound, or one out of range: one edge out, never a wait") {
  Fixture f;
  SmPartitions unbounded(&FakeTable, &Half);
  SmPartitions too_deep(&FakeTable, &Half, &DepthTooDeep);
  for (SmPartitions* parts : {&unbounded, &too_deep}) {
    const Narrowed a = parts->Enter(0, kAppStream, false);
    parts->Leave(a);
    for (int i = 0; i < 100; ++i) {
      const Narrowed n = parts->Enter(0, kAppStream, false);
      CHECK(n.back == a.back);
      CHECK_FALSE(n.waited);
      parts->Leave(n);
    }
  }
  for (const std::string& line : f.fake.log) CHECK(line.rfind("sync ", 0) != 0);
}

TEST_CASE("SmPartitions: after a fork the partition is made again") {
  Fixture f;
  SmPartitions parts(&FakeTable, &Half);
  const Narrowed before = parts.Enter(0, kAppStream, false);
  parts.Reset();
  const Narrowed after = parts.Enter(0, kAppStream, false);
  CHECK(f.fake.greens == 2);
  CHECK(after.green != before.green);
}

}  // namespace
}  // namespace gshare::shim::unit_sm_partition
