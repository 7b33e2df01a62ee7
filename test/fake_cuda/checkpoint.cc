// Process checkpoints of the fake (cuCheckpointProcess*, include/gshare/cuda_checkpoint.h).
// The real driver lets one process lock, checkpoint, restore and unlock another; the fake does
// it with the target's help. With FAKE_CUDA_CHECKPOINT_DIR set, cuInit starts an agent thread
// listening on <dir>/<pid>.sock; each export, called in another process, connects there and
// sends one request, which the agent carries out:
//   lock        RUNNING -> LOCKED: every later export of the target blocks (in CheckInit)
//               until unlock; waits up to timeoutMs (0: forever) for the ops already queued
//               on its streams, else CUDA_ERROR_TIMEOUT and RUNNING again;
//   checkpoint  LOCKED -> CHECKPOINTED: every device byte the process holds (allocations,
//               VMM storage, pools, its context) is given back to the device count, so other
//               processes can use it; the bytes themselves stay in place (host memory);
//   restore     CHECKPOINTED -> LOCKED: the bytes are charged again; when they do not fit,
//               CUDA_ERROR_OUT_OF_MEMORY and the process is FAILED for good, as the real
//               driver leaves it (cuda-checkpoint issue #44). With GPU pairs (RestoreArgs
//               gpu_pairs), each ordinal of the target whose physical GPU has a pair's
//               old_uuid moves to the GPU of its new_uuid, bytes included: the ordinal stays,
//               cuDeviceGetUuid and later ops name the new GPU. A new_uuid that names no GPU
//               of the machine is CUDA_ERROR_INVALID_VALUE and the process stays CHECKPOINTED;
//   unlock      LOCKED -> RUNNING.
// FAKE_CUDA_CHECKPOINT_US_PER_MIB (default 0) makes checkpoint and restore take that long per
// MiB the process holds, as copies do on a GPU. A transition from another state is
// CUDA_ERROR_ILLEGAL_STATE; a pid with no agent is
// CUDA_ERROR_INVALID_VALUE; without FAKE_CUDA_CHECKPOINT_DIR the exports return
// CUDA_ERROR_NOT_SUPPORTED. Every transition is appended to the op log as a 'P' line.
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "device_usage.h"
#include "driver.h"
#include "fake_cuda_api.h"
#include "gshare/cuda_checkpoint.h"
#include "op_log.h"
#include "stream.h"

namespace gs_cuda::fake {
namespace ck = gshare::cuda_checkpoint;
namespace {

enum RequestOp : int32_t { kGetState, kLock, kCheckpoint, kRestore, kUnlock };
struct Request {
  int32_t op;
  uint32_t timeout_ms;
  uint32_t pair_count;  // restore: pairs[0, pair_count)
  ck::GpuPair pairs[kMaxDevices];
};
struct Reply {
  int32_t result;
  int32_t state;
};

// Leaked on purpose (see driver.h).
struct Agent {
  std::mutex mu;
  std::condition_variable unlocked;
  std::atomic<int> state{ck::kRunning};
  uint64_t held[kMaxDevices] = {};
};
Agent& TheAgent() {
  static Agent* a = new Agent;
  return *a;
}
thread_local bool t_is_agent = false;

bool SocketPath(int pid, sockaddr_un* addr) {
  const char* dir = std::getenv("FAKE_CUDA_CHECKPOINT_DIR");
  if (dir == nullptr || dir[0] == '\0') return false;
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  int n = std::snprintf(addr->sun_path, sizeof addr->sun_path, "%s/%d.sock", dir, pid);
  return n > 0 && static_cast<size_t>(n) < sizeof addr->sun_path;
}

// Sleeps FAKE_CUDA_CHECKPOINT_US_PER_MIB for each MiB of held.
void CopyTime(const uint64_t* held) {
  const char* v = std::getenv("FAKE_CUDA_CHECKPOINT_US_PER_MIB");
  uint64_t us_per_mib = v != nullptr ? std::strtoull(v, nullptr, 10) : 0;
  uint64_t bytes = 0;
  for (int d = 0; d < kMaxDevices; ++d) bytes += held[d];
  if (us_per_mib != 0) SleepUntilNs(NowNs() + us_per_mib * 1000 * (bytes >> 20));
}

// The physical GPU each physical GPU's bytes go to on restore: itself, or a pair's new GPU.
// False when a pair's new_uuid names no GPU, or, as the real driver (580) answers, when pairs
// are given to a process that does not see every GPU (CUDA_VISIBLE_DEVICES) or they leave a
// GPU out.
bool PlanMoves(const Request& q, int* moved_to) {
  const int count = GetSettings().physical_devices;
  for (int p = 0; p < kMaxDevices; ++p) moved_to[p] = p;
  if (q.pair_count != 0 &&
      (GetSettings().devices != count || q.pair_count != static_cast<uint32_t>(count))) {
    return false;
  }
  for (uint32_t i = 0; i < q.pair_count; ++i) {
    int to = PhysicalGpuOfUuid(q.pairs[i].new_uuid, count);
    if (to < 0) return false;
    int from = PhysicalGpuOfUuid(q.pairs[i].old_uuid, count);
    if (from >= 0) moved_to[from] = to;
  }
  return true;
}

// Restore: charges the held bytes again, on the GPUs the pairs name.
int32_t Restore(Agent& a, const Request& q) {
  int moved_to[kMaxDevices];
  if (!PlanMoves(q, moved_to)) return CUDA_ERROR_INVALID_VALUE;
  uint64_t held[kMaxDevices] = {};
  for (int p = 0; p < kMaxDevices; ++p) held[moved_to[p]] += a.held[p];
  if (RechargeAllDeviceBytes(held, GetSettings().mem_bytes) != CUDA_SUCCESS) {
    a.state.store(ck::kFailed);
    return ck::kErrorOutOfMemory;
  }
  for (int d = 0; d < GetSettings().devices; ++d) {
    SetPhysicalDevice(d, moved_to[PhysicalDevice(d)]);
  }
  std::memcpy(a.held, held, sizeof held);
  CopyTime(a.held);
  a.state.store(ck::kLocked);
  return 0;
}

// Reads or writes all n bytes; false on end of stream or error.
bool Transfer(int fd, void* buf, size_t n, bool write_it) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t k = write_it ? write(fd, p, n) : read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

void Log(const char* what) {
  uint64_t now = NowNs();
  LogOp('P', now, now, what, -1);
}

int32_t Lock(Agent& a, uint32_t timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(a.mu);
    if (a.state.load() != ck::kRunning) return ck::kErrorIllegalState;
    a.state.store(ck::kLocked);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (g_ops_in_flight.load() > 0) {
    if (timeout_ms != 0 && std::chrono::steady_clock::now() >= deadline) {
      std::lock_guard<std::mutex> lock(a.mu);
      a.state.store(ck::kRunning);
      a.unlocked.notify_all();
      return ck::kErrorTimeout;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Log("cuCheckpointProcessLock");
  return 0;
}

int32_t Handle(const Request& q) {
  Agent& a = TheAgent();
  if (q.op == kLock) return Lock(a, q.timeout_ms);
  std::lock_guard<std::mutex> lock(a.mu);
  int s = a.state.load();
  switch (q.op) {
    case kGetState: return 0;
    case kCheckpoint:
      if (s != ck::kLocked) return ck::kErrorIllegalState;
      TakeAllDeviceBytes(a.held);
      CopyTime(a.held);
      a.state.store(ck::kCheckpointed);
      Log("cuCheckpointProcessCheckpoint");
      return 0;
    case kRestore:
      if (s != ck::kCheckpointed) return ck::kErrorIllegalState;
      if (int32_t r = Restore(a, q)) return r;
      Log("cuCheckpointProcessRestore");
      return 0;
    case kUnlock:
      if (s != ck::kLocked) return ck::kErrorIllegalState;
      a.state.store(ck::kRunning);
      a.unlocked.notify_all();
      Log("cuCheckpointProcessUnlock");
      return 0;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

void* AgentMain(void* arg) {
  t_is_agent = true;
  int listener = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  for (;;) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Request q;
    if (Transfer(fd, &q, sizeof q, /*write_it=*/false) && q.pair_count <= kMaxDevices) {
      Reply r;
      r.result = Handle(q);
      r.state = TheAgent().state.load();
      ssize_t n = write(fd, &r, sizeof r);
      (void)n;
    }
    close(fd);
  }
  return nullptr;
}

// One request to the agent of `pid`; the agent's answer, or an error of the caller's side.
// pairs: restore's GPU pairs (pair_count <= kMaxDevices, checked by the caller).
CUresult Call(int pid, RequestOp op, uint32_t timeout_ms, int* state,
              const ck::GpuPair* pairs = nullptr, uint32_t pair_count = 0) {
  if (CUresult r = CheckInit()) return r;
  sockaddr_un addr;
  if (!SocketPath(pid, &addr)) return CUDA_ERROR_NOT_SUPPORTED;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_UNKNOWN;
  Request q{};
  q.op = op;
  q.timeout_ms = timeout_ms;
  q.pair_count = pair_count;
  if (pair_count != 0) std::memcpy(q.pairs, pairs, pair_count * sizeof *pairs);
  Reply r{CUDA_ERROR_INVALID_VALUE, ck::kFailed};
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      !Transfer(fd, &q, sizeof q, /*write_it=*/true) ||
      !Transfer(fd, &r, sizeof r, /*write_it=*/false)) {
    close(fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  close(fd);
  if (state != nullptr) *state = r.state;
  return r.result;
}

}  // namespace

bool StartCheckpointAgent() {
  sockaddr_un addr;
  if (!SocketPath(getpid(), &addr)) return true;  // not asked for
  unlink(addr.sun_path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 8) != 0) {
    close(fd);
    return false;
  }
  pthread_t t;
  if (pthread_create(&t, nullptr, AgentMain, reinterpret_cast<void*>(static_cast<intptr_t>(fd))) !=
      0) {
    close(fd);
    return false;
  }
  pthread_detach(t);
  return true;
}

void WaitWhileLocked() {
  Agent& a = TheAgent();
  if (__builtin_expect(a.state.load(std::memory_order_acquire) == ck::kRunning, 1) || t_is_agent) {
    return;
  }
  std::unique_lock<std::mutex> lock(a.mu);
  a.unlocked.wait(lock, [&a] { return a.state.load() == ck::kRunning; });
}

}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuCheckpointProcessGetState(int pid, int* state) noexcept {
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fake::Call(pid, fake::kGetState, 0, state);
}

CUresult cuCheckpointProcessLock(int pid, void* args) noexcept {
  uint32_t timeout =
      args != nullptr ? static_cast<gshare::cuda_checkpoint::LockArgs*>(args)->timeout_ms : 0;
  return fake::Call(pid, fake::kLock, timeout, nullptr);
}

CUresult cuCheckpointProcessCheckpoint(int pid, void*) noexcept {
  return fake::Call(pid, fake::kCheckpoint, 0, nullptr);
}

// More pairs than the fake has GPUs, or pairs without their array, are CUDA_ERROR_INVALID_VALUE.
CUresult cuCheckpointProcessRestore(int pid, void* args) noexcept {
  auto* a = static_cast<gshare::cuda_checkpoint::RestoreArgs*>(args);
  if (a == nullptr || a->gpu_pairs_count == 0) return fake::Call(pid, fake::kRestore, 0, nullptr);
  if (a->gpu_pairs == nullptr || a->gpu_pairs_count > fake::kMaxDevices) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return fake::Call(pid, fake::kRestore, 0, nullptr,
                    static_cast<const gshare::cuda_checkpoint::GpuPair*>(a->gpu_pairs),
                    a->gpu_pairs_count);
}

CUresult cuCheckpointProcessUnlock(int pid, void*) noexcept {
  return fake::Call(pid, fake::kUnlock, 0, nullptr);
}

}  // extern "C"
}  // namespace gs_cuda
