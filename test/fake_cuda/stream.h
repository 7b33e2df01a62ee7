// A stream of the fake GPU: a FIFO of ops that one worker thread runs in order, so work is
// asynchronous like on a GPU, plus the capture state that records ops into a graph instead.
// Any thread may submit, wait, query or capture; only the stream's worker runs its ops.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "driver/cuda_abi.h"

namespace gs_cuda::fake {

class Context;
struct Graph;

// One unit of GPU work. kind is the log letter (K G C S H O), or 0 for the driver's own
// bookkeeping (event records, stream-ordered frees), which is never logged nor captured.
struct Op {
  char kind = 0;
  const char* name = "";  // export name, static storage
  uint32_t ms = 0;        // how long a kernel (kind K) runs
  std::function<void()> body;
};

// Ops queued or running on every stream of the process (cuCheckpointProcessLock waits for 0).
inline std::atomic<int64_t> g_ops_in_flight{0};

// Runs op on the calling thread: sleeps op.ms for a kernel, then runs the body if any.
void RunOp(const Op& op);

class Stream {
 public:
  enum class Mode {
    kAsync,     // an asynchronous submission: captured while the stream captures
    kSync,      // a synchronous one: refused while the stream captures (as CUDA does)
    kInternal,  // driver bookkeeping: always queued, never captured
  };

  // Starts a stream of ctx and its worker. is_default marks a legacy or per-thread default
  // stream, which cuStreamDestroy refuses. Returns nullptr when no thread can be started.
  // Shared: a cuCtxSynchronize may still wait on a stream that another thread destroys.
  static std::shared_ptr<Stream> Start(Context* ctx, bool is_default);
  ~Stream() = default;

  Context* context() const { return ctx_; }
  bool is_default() const { return is_default_; }
  // A stream of a green context (green_exports.cc) runs on `sms` SMs: its ops are logged
  // with "@sm<sms>" after the export name. 0: every SM. Set once, before any op is queued.
  void set_sms(unsigned sms) { sms_ = sms; }

  // Queues op, or appends it to the capture graph. On success *ticket is what WaitFor needs
  // (0 when captured). Returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for kSync while capturing
  // and CUDA_ERROR_INVALID_HANDLE once the stream is stopped.
  CUresult Submit(Op op, Mode mode, uint64_t* ticket);

  // Blocks until the op with this ticket (and everything before it) has run.
  void WaitFor(uint64_t ticket);
  // Blocks until everything submitted before the call has run.
  void Synchronize();
  // True when nothing is queued or running.
  bool Idle();

  // Starts recording into graph; false when already capturing.
  bool BeginCapture(Graph* graph);
  // Stops recording; returns the graph, or nullptr when the stream was not capturing.
  Graph* EndCapture();
  bool capturing();

  // Runs what is queued and stops the worker; later submissions fail. Call once.
  void Stop();

 private:
  Stream(Context* ctx, bool is_default) : ctx_(ctx), is_default_(is_default) {}
  static void* WorkerMain(void* self);
  void Work();

  Context* const ctx_;
  const bool is_default_;
  std::atomic<unsigned> sms_{0};
  pthread_t thread_{};

  // State below is protected by mu_.
  std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits here for ops or stop_
  std::condition_variable done_cv_;  // waiters wait here for completed_
  std::deque<Op> queue_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stop_ = false;
  Graph* capture_ = nullptr;  // non-null while capturing
};

}  // namespace gs_cuda::fake
