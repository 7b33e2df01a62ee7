#include "stream.h"

#include <signal.h>

#include <utility>

#include "driver.h"
#include "graph.h"
#include "op_log.h"

namespace gs_cuda::fake {

void RunOp(const Op& op) {
  if (op.kind == 'K' && op.ms > 0) SleepUntilNs(NowNs() + op.ms * 1000000ull);
  if (op.body) op.body();
}

std::shared_ptr<Stream> Stream::Start(Context* ctx, bool is_default) {
  std::shared_ptr<Stream> s(new Stream(ctx, is_default));
  // Workers block every signal, so a job's signal handlers (and the shim's) run on the job's
  // own threads, never on a worker that the job does not know about.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&s->thread_, nullptr, &Stream::WorkerMain, s.get());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc == 0 ? s : nullptr;
}

void* Stream::WorkerMain(void* self) {
  static_cast<Stream*>(self)->Work();
  return nullptr;
}

void Stream::Work() {
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return !queue_.empty() || stop_; });
      if (queue_.empty()) return;  // stop_ and drained
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    uint64_t start = NowNs();
    RunOp(op);
    uint64_t end = NowNs();
    if (op.kind != 0) {
      LogOp(op.kind, start, end, op.name, PhysicalDevice(ctx_->device()),
            sms_.load(std::memory_order_relaxed));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++completed_;
    }
    g_ops_in_flight.fetch_sub(1);
    done_cv_.notify_all();
  }
}

CUresult Stream::Submit(Op op, Mode mode, uint64_t* ticket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return CUDA_ERROR_INVALID_HANDLE;
    if (capture_ != nullptr && mode != Mode::kInternal) {
      if (mode == Mode::kSync) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
      capture_->ops.push_back(std::move(op));
      *ticket = 0;
      return CUDA_SUCCESS;
    }
    queue_.push_back(std::move(op));
    *ticket = ++submitted_;
    g_ops_in_flight.fetch_add(1);
  }
  work_cv_.notify_one();
  return CUDA_SUCCESS;
}

void Stream::WaitFor(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this, ticket] { return completed_ >= ticket; });
}

void Stream::Synchronize() {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = submitted_;
  }
  WaitFor(ticket);
}

bool Stream::Idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ == submitted_;
}

bool Stream::BeginCapture(Graph* graph) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_ != nullptr) return false;
  capture_ = graph;
  return true;
}

Graph* Stream::EndCapture() {
  std::lock_guard<std::mutex> lock(mu_);
  Graph* g = capture_;
  capture_ = nullptr;
  return g;
}

bool Stream::capturing() {
  std::lock_guard<std::mutex> lock(mu_);
  return capture_ != nullptr;
}

void Stream::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  pthread_join(thread_, nullptr);
}

}  // namespace gs_cuda::fake
