// kMemoryQuery on a connection of its own: connect (the socket's trust checked as for the
// lease connection), one query, one answer, close.
#include "lease/memory_view.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

#include "lease/lease_state.h"

namespace gshare::shim {

namespace {

// One exchange on a connected socket; false when the answer is missing or malformed.
bool Exchange(int fd, const proto::MemQueryMsg& q, proto::MemViewMsg* out) {
  timeval tv{kAnswerMs / 1000, (kAnswerMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (!lease::g_socket.SendFrame(fd, proto::MsgType::kMemoryQuery, &q, sizeof q)) return false;
  proto::FrameHeader h;
  if (!lease::ReadAll(fd, &h, sizeof h) ||
      proto::CheckHeader(h, sizeof(proto::MemViewMsg)) != proto::HeaderCheck::kOk ||
      h.type != static_cast<uint16_t>(proto::MsgType::kMemoryView)) {
    return false;
  }
  return lease::ReadAll(fd, out, sizeof *out) &&
         std::memcmp(out->gpu.bytes, q.gpu.bytes, sizeof q.gpu.bytes) == 0 && out->known != 0;
}

}  // namespace

bool QueryJobMemory(const proto::GpuUuid& gpu, proto::MemViewMsg* out) {
  proto::MemQueryMsg q{};
  if (!lease::JobProofFromEnv(&q.job_id, q.token)) return false;
  q.gpu = gpu;
  char path[sizeof(sockaddr_un::sun_path)];
  int fd = lease::ConnectChosen(path, sizeof path);  // the daemon the lease client would use
  if (fd < 0) return false;
  bool ok = Exchange(fd, q, out);
  close(fd);
  return ok;
}

}  // namespace gshare::shim
