#include "base/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

namespace gshare {

Result<ListenAddress> ParseListenAddress(const std::string& text, bool allow_remote) {
  const auto bad = [&text](const std::string& why) {
    return Status::Error("listen address \"" + text + "\": " + why);
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("expected HOST:PORT");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return bad("the port must be a number from 1 to 65535");
  }
  ListenAddress out;
  if (host == "localhost") host = "127.0.0.1";
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a.sin6_addr) != 1) {
      return bad("not an IPv6 address");
    }
    out.loopback = IN6_IS_ADDR_LOOPBACK(&a.sin6_addr);
    std::memcpy(&out.addr, &a, sizeof a);
    out.len = sizeof a;
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
      return bad("expected an IPv4 address, [IPv6] or localhost");
    }
    out.loopback = (ntohl(a.sin_addr.s_addr) >> 24) == 127;
    std::memcpy(&out.addr, &a, sizeof a);
    out.len = sizeof a;
  }
  if (!out.loopback && !allow_remote) {
    return bad("not a loopback address (set [metrics] allow_remote = true to serve others)");
  }
  return out;
}

}  // namespace gshare
