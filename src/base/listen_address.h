// A TCP address to listen on, as the config writes it: "127.0.0.1:9464", "[::1]:9464" or
// "localhost:9464" (IPv4 loopback). Pure (inet_pton only, no name lookup); any thread.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace gshare {

struct ListenAddress {
  sockaddr_storage addr{};  // AF_INET or AF_INET6, port set
  socklen_t len = 0;
  bool loopback = false;  // 127.0.0.0/8 or ::1
};

// Parses `text` (an IP literal, IPv6 in brackets, or "localhost", then ":" and a port 1-65535).
// Error (one line naming `text`) for anything else, and for an address other than loopback
// unless `allow_remote`: metrics are for the machine's own collector unless an admin says so.
Result<ListenAddress> ParseListenAddress(const std::string& text, bool allow_remote);

}  // namespace gshare
