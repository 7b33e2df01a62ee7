// A shim that hears nothing for a while pings; the answer must not wait for anything else
// the daemon does for that connection (lease requests may wait a whole quantum), so it is
// queued from the dispatch itself, before the next frame is read.
#include "daemon/server/daemon_ping.h"

#include "gshare/protocol.h"

namespace gshare {

std::string PongFor(const Frame& ping) {
  if (ping.type != proto::MsgType::kPing || ping.payload.size() != sizeof(proto::PingMsg)) {
    return {};
  }
  // The payload is echoed as is: kPong carries the same PingMsg.
  return EncodeFrame(proto::MsgType::kPong, ping.payload);
}

}  // namespace gshare
