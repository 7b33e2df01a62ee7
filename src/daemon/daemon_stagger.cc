// The daemon's side of phase staggering: the StaggerCoordinator decides who reports gaps and
// whose gap is stretched; the daemon knows the shims and sends the messages.
#include "daemon/daemon.h"

namespace gshare {

bool Daemon::SendGapWatch(ConnId conn, const GpuKey& gpu, bool on) {
  return SendLeaseMsg(conn, proto::MsgType::kGapWatch, gpu, 0, on ? 1 : 0);
}

void Daemon::SendStretch(ConnId conn, const GpuKey& gpu, Millis gap) {
  SendLeaseMsg(conn, proto::MsgType::kStretchGap, gpu, 0, static_cast<uint64_t>(gap.count()));
}

}  // namespace gshare
