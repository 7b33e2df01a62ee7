// DaemonSocket: this process's connection to its gshare daemon (docs/design.md, "Which
// daemon"): the daemon chosen at the first gated call, the job the process proves in each
// hello (GSHARE_JOB_ID and GSHARE_JOB_TOKEN), the connection the senders use, one given up
// while the lease thread may still poll it, and the frames on it. The lease client holds the
// process's one (g_socket, lease_state.h); its DaemonLink and DaemonConnection (lease_seams.h,
// lease_wiring.cc) are this object's calls. Constant-initialized and trivially destructible,
// for static storage (lease_state.h says why).
//
// Locking: g_mu (lease_seams.h) guards the descriptors and whether the socket was opened; the
// daemon's path and the job's proof are set once by Open, before the lease thread starts, and
// read without it. Writes to any descriptor are serialized by the socket's own send lock, so
// that frames of two threads never interleave.
#pragma once

#include <sys/un.h>

#include <cstddef>
#include <cstdint>

#include "gshare/protocol.h"
#include "lease/lease_seams.h"
#include "mutex.h"

namespace gshare::shim::lease {

// Reads exactly `len` bytes from `fd`; false at its end or on an error. Any thread.
bool ReadAll(int fd, void* data, size_t len);
// A connection to the daemon socket at `path` once both are found trustworthy (the socket
// and its directory are this user's or root's, nobody else may write the directory; so is the
// listener); -1 otherwise. Nothing sent yet. Any thread.
int ConnectTo(const char* path);
// A connection to the daemon a process of this user uses: $GSHARE_SOCKET when set, else the
// system daemon when it answers, else the user's own; `path` gets the socket tried last. -1
// when none answers. Nothing sent yet. Any thread.
int ConnectChosen(char* path, size_t cap);

class DaemonSocket {
 public:
  // `choose`: connects to the daemon of this process, writing its socket's path
  // (ConnectChosen); `dial`: a new connection to that path (ConnectTo). Unit tests pass
  // their own.
  constexpr DaemonSocket(int (*choose)(char* path, size_t cap), int (*dial)(const char* path))
      : choose_(choose), dial_(dial) {}

  // At the first gated call, once per process (later calls return false and do nothing): the
  // job this process proves (job 0: a job of its own; `token`: 16 bytes), the daemon chosen
  // and a first connection with its hello sent. False when none answers: fd() stays -1.
  bool Open(uint64_t job_id, const uint8_t token[16]) REQUIRES(g_mu);
  bool Opened() const REQUIRES(g_mu) { return opened_; }
  // A new connection to the daemon chosen at Open, its hello sent; -1 when none answers (or
  // the hello cannot be sent). Lease thread; no lock.
  int Dial();
  // The connection the senders use; -1 while there is none.
  int fd() const REQUIRES(g_mu) { return fd_; }
  // fd() without g_mu, for a memory report sent with and without it held. A connection given
  // up meanwhile is shut down but stays open until CloseDead, so a stale descriptor fails the
  // send rather than reaching another file.
  int FdUnlocked() const NO_THREAD_SAFETY_ANALYSIS { return fd_; }
  // The lease thread's new connection (Dial) becomes the senders'.
  void Adopt(int fd) REQUIRES(g_mu) { fd_ = fd; }
  // The daemon is unreachable or gone: the connection is shut down at once and kept open
  // until CloseDead (the lease thread may still be polling it).
  void Disconnect() REQUIRES(g_mu);
  // Closes the connection Disconnect gave up, if any. Lease thread.
  void CloseDead() REQUIRES(g_mu);

  // One frame of `type` on `fd` (a payload of at most sizeof(MemReportMsg) bytes); false when
  // `fd` is -1, the payload too long, or the connection gone. Any thread.
  bool SendFrame(int fd, proto::MsgType type, const void* payload, uint32_t len) EXCLUDES(send_mu_);
  // A ping of sequence `seq` on `fd`. Any thread.
  bool Ping(int fd, uint64_t seq);
  // A ping on the new connection `fd` and its pong within `ms` ms; false at anything else
  // first (nothing else is due before the first lease request). Lease thread.
  bool AwaitPong(int fd, uint64_t seq, int ms);

  // The daemon's socket (set by Open) and this process's job (0 outside a job), for messages.
  const char* path() const { return path_; }
  uint64_t job_id() const { return job_id_; }

  // In a forked child (atfork handler; its only thread, so no lock): closes the parent's
  // descriptors, makes the send lock anew and forgets Open, so the child opens its own.
  void ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS;

 private:
  // Says hello on the new connection `fd`: `fd`, or -1 (closed) when it cannot be sent.
  int Hello(int fd);

  int (*const choose_)(char* path, size_t cap);
  int (*const dial_)(const char* path);
  Mutex send_mu_;  // one frame at a time on any descriptor; guards no data
  bool opened_ GUARDED_BY(g_mu) = false;
  int fd_ GUARDED_BY(g_mu) = -1;
  int dead_fd_ GUARDED_BY(g_mu) = -1;
  uint64_t job_id_ = 0;
  uint8_t job_token_[16] = {};
  char path_[sizeof(sockaddr_un::sun_path)] = {};
};

}  // namespace gshare::shim::lease
