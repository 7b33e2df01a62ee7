// RequestTransport: how a part of the daemon that answers requests reaches their connections,
// injected so that it is tested without sockets. The daemon's event loop.
#pragma once

#include <functional>
#include <string>

#include "daemon/state/connection.h"

namespace gshare {

struct RequestTransport {
  // Sends a kReply of JSON text to connection `c`.
  std::function<void(Connection& c, const std::string& json_text)> reply;
  // Closes connection `id`, which broke the protocol or lost its reason to exist, for `why`.
  std::function<void(ConnId id, const std::string& why)> drop;
};

}  // namespace gshare
