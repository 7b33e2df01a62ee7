// The checkpoint helper: a child process of the daemon that runs the CUDA driver's process
// checkpoint calls (include/gshare/cuda_checkpoint.h) on jobs' processes, one request at a
// time, in the order sent, one reply per request. CheckpointHelper is the daemon's handle on
// it: called from the daemon's event loop thread only; errors come back as a Status (Start),
// a refused request (Submit) or a reply's result.
//
// Why a process: the driver moves a checkpoint's memory at a few GB/s, so checkpointing a job
// takes seconds or more (docs/memory.md, "How `checkpoint` works"), and the daemon must never
// block on it nor load libcuda. The helper calls cuInit once: the driver's restore needs it in
// the calling process, and attaching to the driver costs each process seconds (same section).
//
// Wire: a SOCK_SEQPACKET socketpair, one CheckpointRequest or CheckpointReply per packet.
// First the helper sends a reply with seq 0: result 0 once the driver is ready, else why not
// (kNoDriver, or the driver's CUresult); after a failed start it answers every request with
// that result and exits when the daemon closes its end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

enum class CheckpointOp : int32_t {
  // Lock (waiting up to lock_timeout_ms for submitted work), then checkpoint; a failed
  // checkpoint unlocks again. A process already checkpointed is left as it is. With gpu set,
  // the reply's freed_bytes is how much NVML's free memory of that GPU rose across it: the
  // process's footprint there, contexts, pools' reserve and the driver's own memory included,
  // which its restore takes back (0 when NVML cannot tell, or other processes' allocations
  // hid the rise).
  kCheckpoint = 1,
  // Restore (when checkpointed), then unlock (when locked). A running process is left as it is.
  // With need_bytes and gpu set, first waits up to 60 s until NVML reports that much free on
  // that GPU (memory of an exiting process is freed after its socket closes; other programs
  // may use the GPU too); if it never is, kNoRoom and the process stays checkpointed, intact.
  kRestore = 2,
};

struct CheckpointRequest {
  uint64_t seq;
  int32_t op;  // CheckpointOp
  int32_t pid;
  uint32_t lock_timeout_ms;
  uint32_t reserved;
  uint64_t need_bytes;  // kRestore: free device bytes to wait for (0: none)
  // kRestore: "GPU-<uuid>" of need_bytes; kCheckpoint: the GPU whose freed bytes are measured
  // ("": none). NUL-terminated.
  char gpu[48];
  // kRestore: "GPU-<uuid>" the process was checkpointed on, when it is restored onto `gpu`
  // instead (a CUcheckpointGpuPair); "" to restore it where it was. NUL-terminated.
  char from_gpu[48];
};

struct CheckpointReply {
  uint64_t seq;
  int32_t op;
  int32_t pid;
  int32_t result;        // 0, a CUresult, or kNoDriver
  int32_t state;         // cuda_checkpoint::ProcessState after the request (-1: unknown)
  double ms;             // time the driver calls took
  uint64_t freed_bytes;  // kCheckpoint with gpu: the rise of that GPU's free memory, bytes
};

// CheckpointReply::result when libcuda.so.1 or its checkpoint calls are missing.
inline constexpr int32_t kNoDriver = -1;
// CheckpointReply::result of a restore that did not start: the GPU never had need_bytes free.
inline constexpr int32_t kNoRoom = -2;

// The helper's main (`gshare checkpoint-helper --fd N`): serves the socket until EOF.
int RunCheckpointHelper(int fd);

// What the daemon needs of a checkpoint runner: requests answered in the order sent.
class CheckpointService {
 public:
  virtual ~CheckpointService() = default;
  // Queues a request (CheckpointRequest's fields); its seq (> 0, increasing), or 0 when it
  // cannot be run.
  virtual uint64_t Submit(CheckpointOp op, pid_t pid, uint32_t lock_timeout_ms, uint64_t need_bytes,
                          const std::string& gpu, const std::string& from_gpu) = 0;
  // Seq of the last request sent and of the last answered (all before it answered too).
  virtual uint64_t last_sent() const = 0;
  virtual uint64_t last_done() const = 0;
  // Why requests are refused (empty while they are taken).
  virtual const std::string& unavailable_reason() const = 0;
};

// The daemon's side. Not thread-safe: the daemon's loop is its only user.
class CheckpointHelper final : public CheckpointService {
 public:
  CheckpointHelper() = default;
  ~CheckpointHelper();
  CheckpointHelper(const CheckpointHelper&) = delete;
  CheckpointHelper& operator=(const CheckpointHelper&) = delete;

  // Starts `self_exe checkpoint-helper` unless running. Errors: fork/socketpair failures.
  Status Start(const std::string& self_exe);
  bool started() const { return fd_ >= 0; }
  // Start unless the helper runs or was found unusable; a failure is logged (warn).
  void EnsureStarted(const std::string& self_exe);
  // False once the helper said the driver cannot checkpoint (why: unavailable_reason()).
  bool usable() const { return usable_; }
  const std::string& unavailable_reason() const override { return reason_; }
  // The socket to poll for replies; -1 when not started.
  int fd() const { return fd_; }

  // Queues a request; its seq (> 0), or 0 when the helper is not running or not usable.
  uint64_t Submit(CheckpointOp op, pid_t pid, uint32_t lock_timeout_ms, uint64_t need_bytes,
                  const std::string& gpu, const std::string& from_gpu) override;
  uint64_t last_sent() const override { return next_seq_ - 1; }
  uint64_t last_done() const override { return done_seq_; }

  // Reads what the helper sent (call when fd() is readable). The start reply is consumed
  // here. When the helper died, every outstanding request is answered with kNoDriver and the
  // helper is marked unusable.
  std::vector<CheckpointReply> Read();

 private:
  void Dead(std::vector<CheckpointReply>* out, const std::string& why);

  int fd_ = -1;
  pid_t pid_ = -1;
  bool usable_ = true;
  std::string reason_;
  uint64_t next_seq_ = 1;
  uint64_t done_seq_ = 0;
  std::vector<CheckpointRequest> outstanding_;
};

}  // namespace gshare
