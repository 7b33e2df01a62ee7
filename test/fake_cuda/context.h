// Contexts of the fake (primary or created) and each thread's current-context stack. A context
// owns its streams: the legacy default stream, one per-thread default stream per thread that
// asks, and the streams created in it. Any thread; the stack functions act on the caller's own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "stream.h"

namespace gs_cuda::fake {

class Context {
 public:
  // A context on device with its legacy stream started; nullptr when that stream cannot start
  // or when the process's first context on device finds no room for FAKE_CUDA_CONTEXT_BYTES
  // (charged once per process and device, never given back before exit).
  static Context* Create(int device, bool primary);

  int device() const { return device_; }
  bool primary() const { return primary_; }
  Stream* legacy_stream() const { return legacy_.get(); }

  // The calling thread's per-thread default stream, started on first use; nullptr on failure.
  Stream* PerThreadStream();
  // A new stream of this context; nullptr on failure.
  Stream* CreateStream();
  // Destroys a stream created by CreateStream (after its queued ops ran).
  void DestroyStream(Stream* s);
  // Blocks until every stream of the context has run what was submitted before the call.
  void Synchronize();
  // Synchronizes, destroys every stream and frees the context.
  void Destroy();

  std::atomic<int> primary_refs{0};  // cuDevicePrimaryCtxRetain count (primary only)

 private:
  Context(int device, bool primary) : device_(device), primary_(primary) {}

  const int device_;
  const bool primary_;
  std::shared_ptr<Stream> legacy_;

  // State below is protected by mu_.
  std::mutex mu_;
  std::vector<std::shared_ptr<Stream>> streams_;       // every stream, legacy_ included
  std::vector<std::pair<pid_t, Stream*>> per_thread_;  // thread id -> its default stream
};

// The calling thread's current context (top of its stack), or nullptr.
Context* CurrentContext();
// cuCtxSetCurrent: replaces the top of the stack; nullptr pops it.
void SetCurrentContext(Context* ctx);
// cuCtxPushCurrent: false when the stack is full.
bool PushContext(Context* ctx);
// cuCtxPopCurrent: the popped context, or nullptr when the stack is empty.
Context* PopContext();
// Removes ctx from the top of the calling thread's stack if it is there (cuCtxDestroy).
void ForgetContext(Context* ctx);

}  // namespace gs_cuda::fake
