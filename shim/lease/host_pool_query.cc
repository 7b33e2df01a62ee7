// kHostPoolQuery on a connection of its own: one query, one answer with its descriptor, close.
#include "lease/host_pool_query.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

#include "lease/lease_state.h"
#include "lease/memory_view.h"

namespace gshare::shim {

namespace {

// The answer's header and payload, and the descriptor that came with them (-1: none).
int Receive(int fd) {
  struct {
    proto::FrameHeader h;
    proto::HostPoolMsg m;
  } __attribute__((packed)) answer;
  static_assert(sizeof answer == sizeof(proto::FrameHeader) + sizeof(proto::HostPoolMsg));
  iovec io{&answer, sizeof answer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(fd, &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  int pool = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(&pool, CMSG_DATA(c), sizeof pool);
    }
  }
  const bool ok =
      n == static_cast<ssize_t>(sizeof answer) &&
      proto::CheckHeader(answer.h, sizeof(proto::HostPoolMsg)) == proto::HeaderCheck::kOk &&
      answer.h.type == static_cast<uint16_t>(proto::MsgType::kHostPool) && answer.m.bytes != 0;
  if (!ok && pool >= 0) {
    close(pool);
    pool = -1;
  }
  return pool;
}

}  // namespace

int QueryHostPool() {
  proto::HostPoolQueryMsg q{};
  if (!lease::JobProofFromEnv(&q.job_id, q.token)) return -1;
  char path[sizeof(sockaddr_un::sun_path)];
  int fd = lease::ConnectChosen(path, sizeof path);  // the daemon the lease client would use
  if (fd < 0) return -1;
  timeval tv{kAnswerMs / 1000, (kAnswerMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int pool = lease::g_socket.SendFrame(fd, proto::MsgType::kHostPoolQuery, &q, sizeof q)
                 ? Receive(fd)
                 : -1;
  close(fd);
  return pool;
}

}  // namespace gshare::shim
