// The daemon's answer to a shim's liveness ping (proto::MsgType::kPing): a kPong with the
// same sequence number, sent at once. Called from the daemon's event loop thread only.
#pragma once

#include <string>

#include "ipc/frame_io.h"

namespace gshare {

// The encoded kPong frame that answers `ping` (a validated kPing frame, PingMsg payload);
// empty when `ping` is not one.
std::string PongFor(const Frame& ping);

}  // namespace gshare
