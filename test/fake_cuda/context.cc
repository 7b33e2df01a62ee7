#include "context.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "driver.h"
#include "memory.h"

namespace gs_cuda::fake {
namespace {

// Whether this process paid FAKE_CUDA_CONTEXT_BYTES on a device yet: once per process and
// device, like the context memory a GPU sets aside for a process, whatever its contexts.
std::atomic<bool> g_context_charged[kMaxDevices];

// CUDA_ERROR_OUT_OF_MEMORY when the device cannot hold this process's context memory.
CUresult ChargeFirstContext(int device) {
  uint64_t bytes = GetSettings().context_bytes;
  if (bytes == 0 || g_context_charged[device].exchange(true)) return CUDA_SUCCESS;
  CUresult r = Charge(device, bytes);
  if (r != CUDA_SUCCESS) g_context_charged[device].store(false);
  return r;
}

// The context stack of each thread: trivially destructible thread_locals, so thread exit and
// process exit run no code of ours.
constexpr int kMaxStack = 32;
thread_local Context* t_stack[kMaxStack];
thread_local int t_depth = 0;

pid_t ThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

}  // namespace

Context* Context::Create(int device, bool primary) {
  if (ChargeFirstContext(device) != CUDA_SUCCESS) return nullptr;
  Context* ctx = new Context(device, primary);
  ctx->legacy_ = Stream::Start(ctx, /*is_default=*/true);
  if (ctx->legacy_ == nullptr) {
    delete ctx;
    return nullptr;
  }
  ctx->streams_.push_back(ctx->legacy_);
  return ctx;
}

Stream* Context::PerThreadStream() {
  pid_t tid = ThreadId();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [t, s] : per_thread_) {
    if (t == tid) return s;
  }
  std::shared_ptr<Stream> s = Stream::Start(this, /*is_default=*/true);
  if (s == nullptr) return nullptr;
  per_thread_.emplace_back(tid, s.get());
  streams_.push_back(s);
  return s.get();
}

Stream* Context::CreateStream() {
  std::shared_ptr<Stream> s = Stream::Start(this, /*is_default=*/false);
  if (s == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  streams_.push_back(s);
  return s.get();
}

void Context::DestroyStream(Stream* s) {
  std::shared_ptr<Stream> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(streams_.begin(), streams_.end(),
                           [s](const std::shared_ptr<Stream>& p) { return p.get() == s; });
    if (it == streams_.end()) return;
    owned = std::move(*it);
    streams_.erase(it);
  }
  owned->Stop();
  // Freed here, or by the last cuCtxSynchronize still waiting on it.
}

void Context::Synchronize() {
  // Waits on a copy of the list, not under mu_, which would block every stream creation and
  // destruction meanwhile; the shared_ptrs keep streams destroyed meanwhile alive (stopped,
  // hence drained, so waiting on them returns at once).
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams = streams_;
  }
  for (const std::shared_ptr<Stream>& s : streams) s->Synchronize();
}

void Context::Destroy() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams.swap(streams_);
    per_thread_.clear();
  }
  for (const std::shared_ptr<Stream>& s : streams) s->Stop();
  delete this;
}

Context* CurrentContext() { return t_depth > 0 ? t_stack[t_depth - 1] : nullptr; }

void SetCurrentContext(Context* ctx) {
  if (ctx == nullptr) {
    if (t_depth > 0) --t_depth;
  } else if (t_depth == 0) {
    t_stack[t_depth++] = ctx;
  } else {
    t_stack[t_depth - 1] = ctx;
  }
}

bool PushContext(Context* ctx) {
  if (t_depth == kMaxStack) return false;
  t_stack[t_depth++] = ctx;
  return true;
}

Context* PopContext() { return t_depth > 0 ? t_stack[--t_depth] : nullptr; }

void ForgetContext(Context* ctx) {
  if (t_depth > 0 && t_stack[t_depth - 1] == ctx) --t_depth;
}

}  // namespace gs_cuda::fake
