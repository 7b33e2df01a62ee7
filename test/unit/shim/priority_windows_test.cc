// PriorityWindows (shim/lease/priority_window.h) against fake seams: the GPU time it learns
// from the events around each submission, the marker that starts a sample, a narrow launch
// that breaks one, the wait for the oldest submission past the budget, the narrow verdict of
// an MPS client, and work of another context left alone.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "lease/priority_window.h"

namespace gshare::shim::unit_priority_windows {
namespace {

using namespace gs_cuda;

constexpr int64_t kMs = 1'000'000;
const CUcontext kCtx = reinterpret_cast<CUcontext>(0x100);
const CUstream kStream = reinterpret_cast<CUstream>(0x500);

// The fake GPU: events recorded in order; the test completes them at times of its choosing.
struct FakeGpu {
  CUcontext current = kCtx;
  uintptr_t next_event = 1;
  struct Record {
    CUevent event;
    CUstream stream;
  };
  std::vector<Record> records;        // every cuEventRecord, in order
  std::map<CUevent, double> done_ms;  // completed events and when
  std::vector<CUevent> synchronized;  // cuEventSynchronize calls
  // seams
  int64_t now_ns = 1'000 * kMs;
  bool concurrent = false, higher_busy = false, can_narrow = false;
  bool beside_turn = true;  // the take_beside_turn seam's answer
  int turn_asks = 0;        // how often it was asked
  int gap_waits = 0;

  void Complete(size_t record, double at_ms) { done_ms[records.at(record).event] = at_ms; }
};
FakeGpu* g_gpu = nullptr;
proto::BoardSlot* g_slot = nullptr;  // the slot the windows read; nullptr: none mapped

const DriverExtras& Driver() {
  static const DriverExtras x = [] {
    DriverExtras d;
    d.cuCtxGetCurrent = [](CUcontext* c) {
      *c = g_gpu->current;
      return CUDA_SUCCESS;
    };
    d.cuEventCreate = [](CUevent* e, unsigned) {
      *e = reinterpret_cast<CUevent>(g_gpu->next_event++);
      return CUDA_SUCCESS;
    };
    d.cuEventRecord = [](CUevent e, CUstream s) {
      g_gpu->done_ms.erase(e);  // recorded again: pending until completed again
      g_gpu->records.push_back({e, s});
      return CUDA_SUCCESS;
    };
    d.cuEventQuery = [](CUevent e) {
      return g_gpu->done_ms.count(e) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    };
    d.cuEventSynchronize = [](CUevent e) {
      g_gpu->synchronized.push_back(e);
      if (!g_gpu->done_ms.count(e)) g_gpu->done_ms[e] = 0;
      return CUDA_SUCCESS;
    };
    d.cuEventElapsedTime = [](float* ms, CUevent a, CUevent b) {
      if (!g_gpu->done_ms.count(a) || !g_gpu->done_ms.count(b)) return CUDA_ERROR_NOT_READY;
      *ms = static_cast<float>(g_gpu->done_ms[b] - g_gpu->done_ms[a]);
      return CUDA_SUCCESS;
    };
    return d;
  }();
  return x;
}

constexpr WindowSeams kSeams = {
    &Driver,
    [] { return g_gpu->now_ns; },
    [](int) -> proto::BoardSlot* { return g_slot; },
    [](int) -> uint32_t { return 1; },
    [](int) { return g_gpu->higher_busy; },
    [](int) { return g_gpu->concurrent; },
    [](int) { return g_gpu->can_narrow; },
    [](int) {
      ++g_gpu->turn_asks;
      return g_gpu->beside_turn;
    },
    [](int, const QuietSpell&) { ++g_gpu->gap_waits; },
};

struct Fixture {
  Fixture() { g_gpu = &gpu; }
  ~Fixture() { g_gpu = nullptr; }
  FakeGpu gpu;
  PriorityWindows windows{&kSeams};
  bool Admit(uint64_t shape, bool* narrow = nullptr) {
    bool waited = false, n = false;
    bool go = windows.Admit(0, shape, kStream, false, true, &waited, &n);
    if (narrow != nullptr) *narrow = n;
    return go;
  }
};

constexpr uint64_t kA = 11, kB = 22;

TEST_CASE("PriorityWindows: a submission's GPU time is learnt from the events around it") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);  // the first: nothing before it to time from
  f.windows.AfterSubmission(0, kStream, false, kB);  // queued behind A: a sample
  REQUIRE(f.gpu.records.size() == 2);
  CHECK(f.windows.Outstanding(0) == 2);
  f.gpu.Complete(0, 10.0);
  f.gpu.Complete(1, 13.0);
  CHECK(f.Admit(kA));                    // retires both, learning B's 3 ms
  CHECK(f.windows.Outstanding(0) == 1);  // the marker recorded just before this submission
  CHECK(f.windows.PredictedNs(0, kA) == 0);
  CHECK(f.windows.PredictedNs(0, kB) == 3 * kMs);

  // The marker makes the next submission a sample even when the GPU reached it (and it was
  // retired) before the submission was queued.
  f.gpu.Complete(2, 20.0);  // the marker
  f.windows.AfterSubmission(0, kStream, false, kB);
  CHECK(f.windows.Outstanding(0) == 1);
  f.gpu.Complete(3, 22.0);  // B: 2 ms this time
  CHECK(f.Admit(kA));
  CHECK(f.windows.PredictedNs(0, kB) == 2'500'000);  // halfway down (kernel_costs.h)
}

TEST_CASE("PriorityWindows: a narrow launch in between is no sample of the next one") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.windows.AfterNarrow(0, kStream, false);  // the GPU ran it between A and B
  f.windows.AfterSubmission(0, kStream, false, kB);
  f.gpu.Complete(0, 10.0);
  f.gpu.Complete(1, 19.0);
  CHECK(f.Admit(kA));
  CHECK(f.windows.PredictedNs(0, kB) == 0);
  // A narrow launch on another stream breaks nothing here.
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.windows.AfterNarrow(0, reinterpret_cast<CUstream>(0x501), false);
  f.windows.AfterSubmission(0, kStream, false, kB);
  const size_t n = f.gpu.records.size();
  f.gpu.Complete(n - 3, 30.0);  // the marker
  f.gpu.Complete(n - 2, 31.0);
  f.gpu.Complete(n - 1, 35.0);
  CHECK(f.Admit(kA));
  CHECK(f.windows.PredictedNs(0, kB) == 4 * kMs);
}

TEST_CASE("PriorityWindows: past the budget a submission waits for the oldest queued one") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.windows.AfterSubmission(0, kStream, false, kB);
  f.gpu.Complete(0, 10.0);
  f.gpu.Complete(1, 13.0);  // B learnt: 3 ms, past the 150 µs budget alone
  REQUIRE(f.Admit(kA));
  f.windows.AfterSubmission(0, kStream, false, kB);
  f.windows.AfterSubmission(0, kStream, false, kB);
  REQUIRE(f.windows.Outstanding(0) == 3);  // marker, B, B
  CHECK(f.windows.QueuedNs(0) == 6 * kMs);
  f.gpu.synchronized.clear();
  CHECK_FALSE(f.Admit(kB));  // it waited for the oldest: call again
  REQUIRE(f.gpu.synchronized.size() == 1);
  CHECK(f.gpu.synchronized[0] == f.gpu.records[2].event);  // the marker, the oldest
  CHECK(f.windows.Outstanding(0) == 2);
  CHECK(f.gpu.gap_waits == 0);
}

TEST_CASE("PriorityWindows: an MPS client with a partition goes narrow and queues nothing") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);  // the ring's events exist
  f.gpu.concurrent = f.gpu.higher_busy = f.gpu.can_narrow = true;
  const size_t before = f.gpu.records.size();
  bool narrow = false;
  CHECK(f.Admit(kB, &narrow));
  CHECK(narrow);
  CHECK(f.gpu.records.size() == before);  // no marker: the launch does not run on every SM
  // Without a partition the same client is windowed as before (no concurrent bound: it goes).
  f.gpu.can_narrow = false;
  CHECK(f.Admit(kB, &narrow));
  CHECK_FALSE(narrow);
}

TEST_CASE("PriorityWindows: in a gap, a launch for the partition takes a turn or waits") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.windows.AfterSubmission(0, kStream, false, kB);
  f.gpu.Complete(0, 10.0);
  f.gpu.Complete(1, 30.0);  // B learnt: 20 ms, longer than the rest of any gap here
  f.gpu.concurrent = f.gpu.can_narrow = true;
  proto::BoardSlot slot{};
  slot.quiet_until_ns = f.gpu.now_ns + 5 * kMs;  // the service is back in 5 ms
  slot.quiet_gap_ns = 10 * kMs;
  g_slot = &slot;
  bool narrow = false;
  CHECK(f.Admit(kB, &narrow));  // a turn free: it goes on the partition
  CHECK(narrow);
  CHECK(f.gpu.turn_asks == 1);
  f.gpu.beside_turn = false;          // every turn held by others
  CHECK_FALSE(f.Admit(kB, &narrow));  // it waited for the next gap's start instead
  CHECK(f.gpu.gap_waits == 1);
  // While the service is busy the lanes took the turn already (ConcurrentOn): not asked.
  f.gpu.higher_busy = true;
  f.gpu.beside_turn = true;
  const int asks = f.gpu.turn_asks;
  CHECK(f.Admit(kB, &narrow));
  CHECK(narrow);
  CHECK(f.gpu.turn_asks == asks);
  g_slot = nullptr;
}

TEST_CASE("PriorityWindows: work of another context is not windowed") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.gpu.current = reinterpret_cast<CUcontext>(0x200);
  f.windows.AfterSubmission(0, kStream, false, kB);
  CHECK(f.gpu.records.size() == 1);
  CHECK(f.windows.Outstanding(0) == 1);
  f.gpu.current = nullptr;  // no context at all
  f.windows.AfterSubmission(0, kStream, false, kB);
  CHECK(f.gpu.records.size() == 1);
}

TEST_CASE("PriorityWindows: after a fork the rings start empty") {
  Fixture f;
  f.windows.AfterSubmission(0, kStream, false, kA);
  f.windows.AfterSubmission(0, kStream, false, kB);
  f.windows.Reset();
  CHECK(f.windows.Outstanding(0) == 0);
  CHECK(f.windows.QueuedNs(0) == 0);
  CHECK(f.Admit(kA));  // no events yet: nothing to wait for
  f.windows.AfterSubmission(0, kStream, false, kA);
  CHECK(f.gpu.next_event == 1 + 2 * PriorityWindows::kRing);  // the child made its own
}

}  // namespace
}  // namespace gshare::shim::unit_priority_windows
