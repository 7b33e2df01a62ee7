#include "memory/ipc_export.h"

#include <pthread.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "memory/ipc_wire.h"
#include "memory/vmm_driver.h"
#include "shim_log.h"
#include "shim_thread.h"

namespace gshare::shim {
namespace {

IpcExports g_ipc_exports;

// Only the job's own user (or root) may map its memory: the importer of a legacy handle is a
// process of the same job, which runs as one user.
bool PeerAllowed(int conn) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  return cred.uid == getuid() || cred.uid == 0;
}

// Sends one batch with its descriptors (none when count is 0).
bool SendBatch(int conn, const IpcChunkBatch& b, const int* fds) {
  struct iovec iov = {const_cast<IpcChunkBatch*>(&b), sizeof b};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kIpcBatch)];
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (b.count > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * b.count);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * b.count);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * b.count);
  }
  return sendmsg(conn, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof b);
}

}  // namespace

IpcExports& IpcExports::Get() { return g_ipc_exports; }

IpcExports::Entry* IpcExports::FindLocked(uint64_t base) {
  for (int i = 0; i < count_; ++i) {
    if (entries_[i].base == base) return &entries_[i];
  }
  return nullptr;
}

bool IpcExports::ServingLocked() {
  pid_t pid = getpid();
  if (server_pid_ == pid) return true;
  if (listen_fd_ >= 0) close(listen_fd_);  // the parent's, inherited through fork
  listen_fd_ = -1;
  uint64_t nonce = 0;
  while (nonce == 0) {
    if (getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) return false;
  }
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr;
  socklen_t len = IpcSocketAddress(static_cast<uint32_t>(pid), nonce, &addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 16) != 0) {
    close(fd);
    return false;
  }
  listen_fd_ = fd;
  nonce_ = nonce;
  pthread_t t;
  bool started = StartShimThread(&t, /*detached=*/true, &IpcExports::Serve, this, "gs-ipc") == 0;
  if (!started) {
    close(fd);
    listen_fd_ = -1;
    return false;
  }
  server_pid_ = pid;
  return true;
}

CUresult IpcExports::Publish(uint64_t base, int n, const swap_internal::Chunk* chunks,
                             uint64_t* nonce) {
  const VmmDriver* v = Vmm();
  if (v == nullptr || v->cuMemExportToShareableHandle == nullptr || n <= 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  auto* pieces = static_cast<Piece*>(std::malloc(sizeof(Piece) * n));
  if (pieces == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < n; ++i) pieces[i] = Piece{chunks[i].bytes, chunks[i].handle};
  MutexLock lock(mu_);
  if (!ServingLocked()) {
    std::free(pieces);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  Entry* e = FindLocked(base);
  if (e == nullptr) {
    if (count_ == capacity_) {
      int cap = capacity_ == 0 ? 16 : capacity_ * 2;
      auto* grown = static_cast<Entry*>(std::realloc(entries_, sizeof(Entry) * cap));
      if (grown == nullptr) {
        std::free(pieces);
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      entries_ = grown;
      capacity_ = cap;
    }
    e = &entries_[count_++];
  } else {
    std::free(e->pieces);
  }
  *e = Entry{base, n, pieces};
  *nonce = nonce_;
  return CUDA_SUCCESS;
}

void IpcExports::Forget(uint64_t base) {
  MutexLock lock(mu_);
  Entry* e = FindLocked(base);
  if (e == nullptr) return;
  std::free(e->pieces);
  *e = entries_[--count_];
}

void* IpcExports::Serve(void* self) {
  auto* me = static_cast<IpcExports*>(self);
  me->mu_.Lock();
  int fd = me->listen_fd_;
  me->mu_.Unlock();
  for (;;) {
    int conn = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      Warn("legacy IPC: the exporting socket failed (%s); no more imports of this process",
           std::strerror(errno));
      return nullptr;
    }
    if (PeerAllowed(conn)) {
      SetIpcPeerTimeouts(conn);
      me->Answer(conn);
    }
    close(conn);
  }
}

void IpcExports::Answer(int conn) {
  IpcRequest req{};
  if (recv(conn, &req, sizeof req, 0) != static_cast<ssize_t>(sizeof req)) return;
  const VmmDriver& v = *Vmm();
  MutexLock lock(mu_);
  IpcChunkBatch b{};
  Entry* e =
      std::memcmp(req.magic, kIpcMagic, sizeof kIpcMagic) == 0 ? FindLocked(req.base) : nullptr;
  if (e == nullptr) {
    b.status = CUDA_ERROR_INVALID_HANDLE;
    SendBatch(conn, b, nullptr);
    return;
  }
  b.total = static_cast<uint32_t>(e->n);
  for (int first = 0; first < e->n; first += kIpcBatch) {
    int fds[kIpcBatch];
    int count = e->n - first < kIpcBatch ? e->n - first : kIpcBatch;
    int made = 0;
    b.status = CUDA_SUCCESS;
    for (; made < count; ++made) {
      const Piece& piece = e->pieces[first + made];
      b.bytes[made] = piece.bytes;
      b.status = v.cuMemExportToShareableHandle(&fds[made], piece.handle,
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      if (b.status != CUDA_SUCCESS) break;
    }
    b.count = b.status == CUDA_SUCCESS ? static_cast<uint32_t>(count) : 0;
    bool sent = SendBatch(conn, b, fds);
    for (int i = 0; i < made; ++i) close(fds[i]);
    if (!sent || b.status != CUDA_SUCCESS) return;
  }
}

}  // namespace gshare::shim
