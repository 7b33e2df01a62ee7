// The daemon's answer to a shim's liveness ping (proto::MsgType::kPing): a kPong with the
// same sequence number, sent at once. Called from the daemon's event loop thread only.
// A failed write is not reported: the connection's next read finds it gone.
#pragma once

#include <string>

#include "frame_io.h"

namespace gshare {

// The encoded kPong frame that answers `ping` (a validated kPing frame, PingMsg payload);
// empty when `ping` is not one. For an event loop that queues its output per connection.
std::string PongFor(const Frame& ping);

// Writes PongFor(ping) to `fd` (blocking, bounded by the socket's send timeout).
void AnswerPing(int fd, const Frame& ping);

}  // namespace gshare
