#include "daemon/server/daemon_ping.h"

#include <doctest/doctest.h>

#include <cstring>

namespace gshare::unit_daemon_ping {

TEST_CASE("a ping is answered by a pong with the same sequence number") {
  proto::PingMsg ping{42};
  std::string_view payload(reinterpret_cast<const char*>(&ping), sizeof ping);
  std::string wire = EncodeFrame(proto::MsgType::kPing, payload);
  FrameBuffer in(proto::kMaxRequestPayload);
  in.Append(wire.data(), wire.size());
  auto frame = in.Next();
  REQUIRE(frame.ok());
  REQUIRE(frame.value().has_value());
  std::string pong = PongFor(**frame);
  FrameBuffer out(sizeof(proto::LeaseMsg));  // the shim's limit
  out.Append(pong.data(), pong.size());
  auto back = out.Next();
  REQUIRE(back.ok());
  REQUIRE(back.value().has_value());
  CHECK((*back)->type == proto::MsgType::kPong);
  proto::PingMsg echoed{};
  REQUIRE((*back)->payload.size() == sizeof echoed);
  std::memcpy(&echoed, (*back)->payload.data(), sizeof echoed);
  CHECK(echoed.seq == 42);
  CHECK(PongFor(Frame{proto::MsgType::kLeaseRequest, std::string(40, '\0')}).empty());
}

}  // namespace gshare::unit_daemon_ping
