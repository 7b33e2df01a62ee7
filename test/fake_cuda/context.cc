#include "context.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace gs_cuda::fake {
namespace {

// The context stack of each thread: trivially destructible thread_locals, so thread exit and
// process exit run no code of ours.
constexpr int kMaxStack = 32;
thread_local Context* t_stack[kMaxStack];
thread_local int t_depth = 0;

pid_t ThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

}  // namespace

Context* Context::Create(int device, bool primary) {
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
  Stream* s = Stream::Start(this, /*is_default=*/true);
  if (s == nullptr) return nullptr;
  per_thread_.emplace_back(tid, s);
  streams_.push_back(s);
  return s;
}

Stream* Context::CreateStream() {
  Stream* s = Stream::Start(this, /*is_default=*/false);
  if (s == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  streams_.push_back(s);
  return s;
}

void Context::DestroyStream(Stream* s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
  }
  s->Destroy();
}

void Context::Synchronize() {
  // Copy the list: waiting under mu_ would block every stream creation meanwhile. Streams
  // destroyed concurrently are a misuse that CUDA does not define either.
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams = streams_;
  }
  for (Stream* s : streams) s->Synchronize();
}

void Context::Destroy() {
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams.swap(streams_);
    per_thread_.clear();
  }
  for (Stream* s : streams) s->Destroy();
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
