// One-shot queries on a connection of their own: connect (the socket's trust checked as for
// the lease connection), one query, one answer, close.
#include "lease/memory_view.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

#include "lease/lease_state.h"

namespace gshare::shim {

bool AskDaemonOnce(proto::MsgType query, const void* q, uint32_t q_len, proto::MsgType answer,
                   void* out, uint32_t out_len) {
  char path[sizeof(sockaddr_un::sun_path)];
  int fd = lease::ConnectChosen(path, sizeof path);  // the daemon the lease client would use
  if (fd < 0) return false;
  timeval tv{kAnswerMs / 1000, (kAnswerMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  proto::FrameHeader h;
  const bool ok = lease::g_socket.SendFrame(fd, query, q, q_len) &&
                  lease::ReadAll(fd, &h, sizeof h) &&
                  proto::CheckHeader(h, out_len) == proto::HeaderCheck::kOk &&
                  h.type == static_cast<uint16_t>(answer) && lease::ReadAll(fd, out, out_len);
  close(fd);
  return ok;
}

bool QueryJobMemory(const proto::GpuUuid& gpu, proto::MemViewMsg* out) {
  proto::MemQueryMsg q{};
  if (!lease::JobProofFromEnv(&q.job_id, q.token)) return false;
  q.gpu = gpu;
  return AskDaemonOnce(proto::MsgType::kMemoryQuery, &q, sizeof q, proto::MsgType::kMemoryView, out,
                       sizeof *out) &&
         std::memcmp(out->gpu.bytes, q.gpu.bytes, sizeof q.gpu.bytes) == 0 && out->known != 0;
}

}  // namespace gshare::shim
