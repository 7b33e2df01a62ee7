#include "daemon/checkpoint/checkpoint_helper.h"

#include <spdlog/spdlog.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/gpu_inventory.h"
#include "gshare/cuda_checkpoint.h"

namespace gshare {
namespace ck = cuda_checkpoint;
namespace {

struct Driver {
  ck::GetStateFn get_state = nullptr;
  ck::LockFn lock = nullptr;
  ck::CheckpointFn checkpoint = nullptr;
  ck::RestoreFn restore = nullptr;
  ck::UnlockFn unlock = nullptr;
};

// dlopen + cuInit(0); 0 when ready, else kNoDriver or cuInit's CUresult.
int32_t LoadDriver(Driver* d) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return kNoDriver;
  auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
  d->get_state = reinterpret_cast<ck::GetStateFn>(dlsym(lib, "cuCheckpointProcessGetState"));
  d->lock = reinterpret_cast<ck::LockFn>(dlsym(lib, "cuCheckpointProcessLock"));
  d->checkpoint = reinterpret_cast<ck::CheckpointFn>(dlsym(lib, "cuCheckpointProcessCheckpoint"));
  d->restore = reinterpret_cast<ck::RestoreFn>(dlsym(lib, "cuCheckpointProcessRestore"));
  d->unlock = reinterpret_cast<ck::UnlockFn>(dlsym(lib, "cuCheckpointProcessUnlock"));
  if (init == nullptr || d->get_state == nullptr || d->lock == nullptr ||
      d->checkpoint == nullptr || d->restore == nullptr || d->unlock == nullptr) {
    return kNoDriver;
  }
  return init(0);
}

// NVML (libnvidia-ml.so.1, nvml.h): free memory of a GPU by UUID; loaded on first use.
struct Nvml {
  bool tried = false;
  int (*get_by_uuid)(const char*, void**) = nullptr;
  int (*memory_info)(void*, unsigned long long*) = nullptr;  // nvmlMemory_t: total, free, used
};

// Free bytes of `gpu`, or -1 when NVML cannot tell.
int64_t FreeBytes(Nvml& n, const char* gpu) {
  if (!n.tried) {
    n.tried = true;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    auto init = lib ? reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2")) : nullptr;
    if (init != nullptr && init() == 0) {
      n.get_by_uuid =
          reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
      n.memory_info = reinterpret_cast<int (*)(void*, unsigned long long*)>(
          dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    }
  }
  void* dev = nullptr;
  unsigned long long mem[3];
  if (n.get_by_uuid == nullptr || n.memory_info == nullptr || n.get_by_uuid(gpu, &dev) != 0 ||
      n.memory_info(dev, mem) != 0) {
    return -1;
  }
  return static_cast<int64_t>(mem[1]);
}

// A request's text field: up to its NUL, or all of it when it fills its array.
template <size_t N>
std::string FieldText(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

// Waits up to 60 s for need bytes free on gpu; true when they are (or NVML cannot tell).
bool WaitForRoom(Nvml& n, const CheckpointRequest& q) {
  const std::string gpu = FieldText(q.gpu);
  if (q.need_bytes == 0 || gpu.empty()) return true;
  for (int i = 0; i < 600; ++i) {
    int64_t free = FreeBytes(n, gpu.c_str());
    if (free < 0 || static_cast<uint64_t>(free) >= q.need_bytes) return true;
    usleep(100 * 1000);
  }
  return false;
}

// The GPU pairs of a restore that moves a process from GPU `from` to GPU `to`: every GPU of
// the machine (NVML's list), itself except `from` and `to`, which trade places. The driver
// wants a pair for every GPU it checkpointed, and it refuses (CUDA error 1) to restore onto a
// GPU the process does not see (measured with driver 580: docs/benchmarks.md, "Several
// GPUs"). Without NVML, the one pair. False when a UUID does not parse.
bool MovePairs(const std::string& from, const std::string& to, std::vector<ck::GpuPair>* out) {
  ck::GpuPair move{};
  if (!ParseGpuUuid(from, move.old_uuid) || !ParseGpuUuid(to, move.new_uuid)) return false;
  const auto& all = NvmlGpuUuids();
  if (!all) {
    out->push_back(move);
    return true;
  }
  for (const std::string& u : *all) {
    ck::GpuPair p{};
    if (!ParseGpuUuid(u, p.old_uuid)) return false;
    std::memcpy(p.new_uuid, p.old_uuid, sizeof p.new_uuid);
    if (std::memcmp(p.old_uuid, move.old_uuid, 16) == 0) {
      std::memcpy(p.new_uuid, move.new_uuid, 16);
    } else if (std::memcmp(p.old_uuid, move.new_uuid, 16) == 0) {
      std::memcpy(p.new_uuid, move.old_uuid, 16);
    }
    out->push_back(p);
  }
  return true;
}

int32_t StateOf(const Driver& d, int pid) {
  ck::ProcessState s;
  return d.get_state(pid, &s) == 0 ? static_cast<int32_t>(s) : -1;
}

// One request, in the order of the state machine in cuda_checkpoint.h; a checkpoint's freed
// bytes go to *freed.
int32_t Serve(const Driver& d, Nvml& nvml, const CheckpointRequest& q, uint64_t* freed) {
  int32_t state = StateOf(d, q.pid);
  if (q.op == static_cast<int32_t>(CheckpointOp::kCheckpoint)) {
    if (state == ck::kCheckpointed) return 0;
    ck::LockArgs lock{};
    lock.timeout_ms = q.lock_timeout_ms;
    if (state == ck::kRunning) {
      if (int r = d.lock(q.pid, &lock)) return r;
    }
    const std::string gpu = FieldText(q.gpu);
    // After the lock: the process's work and frees already submitted are done.
    const int64_t before = gpu.empty() ? -1 : FreeBytes(nvml, gpu.c_str());
    ck::CheckpointArgs args{};
    int r = d.checkpoint(q.pid, &args);
    if (r != 0) {
      ck::UnlockArgs unlock{};
      d.unlock(q.pid, &unlock);
    } else if (before >= 0) {
      const int64_t after = FreeBytes(nvml, gpu.c_str());
      *freed = after > before ? static_cast<uint64_t>(after - before) : 0;
    }
    return r;
  }
  if (q.op == static_cast<int32_t>(CheckpointOp::kRestore)) {
    if (state == ck::kRunning) return 0;
    if (state == ck::kCheckpointed) {
      if (!WaitForRoom(nvml, q)) return kNoRoom;
      ck::RestoreArgs args{};
      std::vector<ck::GpuPair> pairs;
      if (q.from_gpu[0] != '\0') {
        if (!MovePairs(FieldText(q.from_gpu), FieldText(q.gpu), &pairs))
          return ck::kErrorInvalidValue;
        args.gpu_pairs = pairs.data();
        args.gpu_pairs_count = static_cast<unsigned>(pairs.size());
      }
      if (int r = d.restore(q.pid, &args)) return r;
    }
    ck::UnlockArgs unlock{};
    return d.unlock(q.pid, &unlock);
  }
  return ck::kErrorNotSupported;
}

}  // namespace

int RunCheckpointHelper(int fd) {
  signal(SIGPIPE, SIG_IGN);
  Driver driver;
  Nvml nvml;
  const int32_t start = LoadDriver(&driver);
  CheckpointReply ready{0, 0, 0, start, -1, 0, 0};
  if (send(fd, &ready, sizeof ready, MSG_NOSIGNAL) < 0) return 1;
  for (;;) {
    CheckpointRequest q;
    ssize_t n = recv(fd, &q, sizeof q, 0);
    if (n == 0) return 0;  // the daemon is gone
    if (n < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (n != static_cast<ssize_t>(sizeof q)) continue;
    CheckpointReply r{q.seq, q.op, q.pid, start, -1, 0, 0};
    if (start == 0) {
      auto t0 = std::chrono::steady_clock::now();
      r.result = Serve(driver, nvml, q, &r.freed_bytes);
      r.ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      r.state = StateOf(driver, q.pid);
    }
    if (send(fd, &r, sizeof r, MSG_NOSIGNAL) < 0) return 1;
  }
}

CheckpointHelper::~CheckpointHelper() {
  if (fd_ >= 0) close(fd_);  // the helper sees EOF and exits
}

Status CheckpointHelper::Start(const std::string& self_exe) {
  if (fd_ >= 0 || !usable_) return Status::Ok();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::Error(std::string("checkpoint helper: socketpair: ") + strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return Status::Error(std::string("checkpoint helper: fork: ") + strerror(errno));
  }
  if (pid == 0) {
    for (int sig : {SIGCHLD, SIGPIPE, SIGHUP, SIGTERM, SIGINT}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    fcntl(sv[1], F_SETFD, 0);  // kept across exec
    unsetenv("LD_PRELOAD");    // the helper is no job: no shim in it
    std::string fd_text = std::to_string(sv[1]);
    execl(self_exe.c_str(), self_exe.c_str(), "checkpoint-helper", "--fd", fd_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(sv[1]);
  fd_ = sv[0];
  pid_ = pid;
  return Status::Ok();
}

uint64_t CheckpointHelper::Submit(CheckpointOp op, pid_t pid, uint32_t lock_timeout_ms,
                                  uint64_t need_bytes, const std::string& gpu,
                                  const std::string& from_gpu) {
  if (fd_ < 0 || !usable_) return 0;
  CheckpointRequest q{next_seq_, static_cast<int32_t>(op), pid, lock_timeout_ms, 0, need_bytes, {},
                      {}};
  std::memcpy(q.gpu, gpu.data(), std::min(gpu.size(), sizeof q.gpu - 1));
  std::memcpy(q.from_gpu, from_gpu.data(), std::min(from_gpu.size(), sizeof q.from_gpu - 1));
  if (send(fd_, &q, sizeof q, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof q)) return 0;
  outstanding_.push_back(q);
  return next_seq_++;
}

void CheckpointHelper::Dead(std::vector<CheckpointReply>* out, const std::string& why) {
  for (const CheckpointRequest& q : outstanding_) {
    out->push_back({q.seq, q.op, q.pid, kNoDriver, -1, 0, 0});
  }
  outstanding_.clear();
  done_seq_ = next_seq_ - 1;
  usable_ = false;
  if (reason_.empty()) reason_ = why;
  close(fd_);
  fd_ = -1;
}

std::vector<CheckpointReply> CheckpointHelper::Read() {
  std::vector<CheckpointReply> out;
  while (fd_ >= 0) {
    CheckpointReply r;
    ssize_t n = recv(fd_, &r, sizeof r, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof r)) {
      Dead(&out, "the checkpoint helper exited");
      break;
    }
    if (r.seq == 0) {
      if (r.result != 0) {
        usable_ = false;
        reason_ = r.result == kNoDriver
                      ? "libcuda.so.1 with the checkpoint API (CUDA 12.8+ driver) is not available"
                      : "cuInit failed with CUDA error " + std::to_string(r.result);
      }
      continue;
    }
    done_seq_ = std::max(done_seq_, r.seq);
    for (auto it = outstanding_.begin(); it != outstanding_.end(); ++it) {
      if (it->seq == r.seq) {
        outstanding_.erase(it);
        break;
      }
    }
    out.push_back(r);
  }
  return out;
}

void CheckpointHelper::EnsureStarted(const std::string& self_exe) {
  if (started() || !usable()) return;
  if (Status st = Start(self_exe); !st.ok()) spdlog::warn("{}", st.message());
}

}  // namespace gshare
