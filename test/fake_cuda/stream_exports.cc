// Streams and events of the fake driver: create, destroy, synchronize, query, and the simple
// events (record, query, synchronize, stream wait). Event bookkeeping runs on the stream workers
// as internal ops, which are neither logged nor captured. The synchronizing calls return the
// process's sticky error (driver.h) once there is one.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "driver.h"
#include "fake_cuda_api.h"

namespace gs_cuda::fake {
namespace {

// An event counts its records; record n is reached when the stream's worker gets to it.
struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;                       // guarded by mu
  uint64_t reached = 0;                        // guarded by mu
  std::chrono::steady_clock::time_point when;  // guarded by mu: the last record reached
};

// The handle: queued ops share the state, so destroying the event never leaves them dangling.
struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
  bool timing = true;  // not created with CU_EVENT_DISABLE_TIMING
};

Event* EventOf(CUevent h) {
  return IsHandle(h, HandleKind::kEvent) ? reinterpret_cast<Event*>(h) : nullptr;
}

void WaitReached(EventState& st, uint64_t n) {
  std::unique_lock<std::mutex> lock(st.mu);
  st.cv.wait(lock, [&] { return st.reached >= n; });
}

// FAKE_CUDA_FAIL_STREAMCREATE_COUNT=K: the first K valid stream creations of the process fail
// with CUDA_ERROR_OUT_OF_MEMORY, as the driver's do when the GPU has no room for a stream's
// own memory (tests of the shim's wait for room).
bool InjectStreamCreateFailure() {
  static fake::InjectedFailures failures("FAKE_CUDA_FAIL_STREAMCREATE_COUNT");
  return failures.Next();
}

CUresult CreateStream(CUstream* out) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (InjectStreamCreateFailure()) return CUDA_ERROR_OUT_OF_MEMORY;
  Stream* s = ctx->CreateStream();
  if (s == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  AddHandle(s, HandleKind::kStream);
  *out = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}

CUresult Synchronize(CUstream handle, bool per_thread) {
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  s->Synchronize();
  return StickyError();
}

CUresult Query(CUstream handle, bool per_thread) {
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  return s->Idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult Record(CUevent event, CUstream handle, bool per_thread) {
  if (CUresult r = CheckInit()) return r;
  Event* ev = EventOf(event);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(ev->state->mu);
    n = ++ev->state->recorded;
  }
  Op op;
  op.body = [st = ev->state, n] {
    {
      std::lock_guard<std::mutex> lock(st->mu);
      if (st->reached < n) st->reached = n;
      st->when = std::chrono::steady_clock::now();
    }
    st->cv.notify_all();
  };
  uint64_t ticket;
  return s->Submit(std::move(op), Stream::Mode::kInternal, &ticket);
}

CUresult WaitEvent(CUstream handle, CUevent event, bool per_thread) {
  if (CUresult r = CheckInit()) return r;
  Event* ev = EventOf(event);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(ev->state->mu);
    n = ev->state->recorded;
  }
  if (n == 0) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  Op op;
  op.body = [st = ev->state, n] { WaitReached(*st, n); };
  uint64_t ticket;
  return s->Submit(std::move(op), Stream::Mode::kInternal, &ticket);
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuStreamCreate(CUstream* phStream, unsigned int) noexcept {
  return fake::CreateStream(phStream);
}
CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int, int) noexcept {
  return fake::CreateStream(phStream);
}

// Returns once the stream's queued work ran (CUDA returns at once and finishes it later).
CUresult cuStreamDestroy_v2(CUstream hStream) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(hStream, fake::HandleKind::kStream)) return CUDA_ERROR_INVALID_HANDLE;
  fake::Stream* s = reinterpret_cast<fake::Stream*>(hStream);
  fake::DropHandle(s);
  s->context()->DestroyStream(s);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream hStream) noexcept {
  return fake::Synchronize(hStream, false);
}
CUresult cuStreamSynchronize_ptsz(CUstream hStream) noexcept {
  return fake::Synchronize(hStream, true);
}
CUresult cuStreamQuery(CUstream hStream) noexcept { return fake::Query(hStream, false); }
CUresult cuStreamQuery_ptsz(CUstream hStream) noexcept { return fake::Query(hStream, true); }
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int) noexcept {
  return fake::WaitEvent(hStream, hEvent, false);
}
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int) noexcept {
  return fake::WaitEvent(hStream, hEvent, true);
}

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  if (phEvent == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::Event* ev = new fake::Event;
  ev->timing = (Flags & 0x2) == 0;  // CU_EVENT_DISABLE_TIMING
  fake::AddHandle(ev, fake::HandleKind::kEvent);
  *phEvent = reinterpret_cast<CUevent>(ev);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) noexcept {
  return fake::Record(hEvent, hStream, false);
}
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) noexcept {
  return fake::Record(hEvent, hStream, true);
}

CUresult cuEventQuery(CUevent hEvent) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Event* ev = fake::EventOf(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(ev->state->mu);
  return ev->state->reached >= ev->state->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent hEvent) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Event* ev = fake::EventOf(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(ev->state->mu);
    n = ev->state->recorded;
  }
  fake::WaitReached(*ev->state, n);
  return fake::StickyError();
}

// The time between the two events' last records reached, as CUDA: NOT_READY while either is
// pending, INVALID_HANDLE for an event without timing or never recorded.
CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Event* a = fake::EventOf(hStart);
  fake::Event* b = fake::EventOf(hEnd);
  if (a == nullptr || b == nullptr || !a->timing || !b->timing) return CUDA_ERROR_INVALID_HANDLE;
  if (pMilliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::chrono::steady_clock::time_point ta, tb;
  for (auto [ev, t] : {std::pair{a, &ta}, std::pair{b, &tb}}) {
    std::lock_guard<std::mutex> lock(ev->state->mu);
    if (ev->state->recorded == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (ev->state->reached < ev->state->recorded) return CUDA_ERROR_NOT_READY;
    *t = ev->state->when;
  }
  *pMilliseconds = std::chrono::duration<float, std::milli>(tb - ta).count();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) noexcept {
  return cuEventElapsedTime(pMilliseconds, hStart, hEnd);
}

CUresult cuEventDestroy_v2(CUevent hEvent) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Event* ev = fake::EventOf(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  fake::DropHandle(ev);
  delete ev;
  return CUDA_SUCCESS;
}

}  // extern "C"
}  // namespace gs_cuda
