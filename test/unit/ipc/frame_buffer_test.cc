// Wire protocol: header validation and frame parsing from partial input.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "ipc/frame_io.h"

namespace gshare::unit_frame_buffer {
namespace {

std::string Header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length) {
  proto::FrameHeader h{magic, version, type, length, 0};
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST_CASE("protocol: headers are checked for magic, version, type and length") {
  using proto::CheckHeader;
  using proto::HeaderCheck;
  auto type = [](proto::MsgType t) { return static_cast<uint16_t>(t); };
  const uint32_t max = proto::kMaxRequestPayload;
  proto::FrameHeader ok{proto::kMagic, proto::kVersion, type(proto::MsgType::kHello),
                        sizeof(proto::HelloMsg), 0};
  CHECK(CheckHeader(ok, max) == HeaderCheck::kOk);
  proto::FrameHeader h = ok;
  h.magic ^= 1;
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadMagic);
  h = ok;
  h.version = proto::kVersion + 1;
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadVersion);
  h = ok;
  h.type = 999;
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadType);
  h = ok;
  h.length = sizeof(proto::HelloMsg) + 1;  // binary messages have one exact size
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadLength);
  h = {proto::kMagic, proto::kVersion, type(proto::MsgType::kStatusRequest), 0, 0};
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadLength);  // JSON must not be empty
  h.length = max + 1;
  CHECK(CheckHeader(h, max) == HeaderCheck::kBadLength);
  h.length = max;
  CHECK(CheckHeader(h, max) == HeaderCheck::kOk);
}

TEST_CASE("protocol: frames are parsed from bytes arriving in pieces") {
  FrameBuffer buf(proto::kMaxRequestPayload);
  std::string wire = EncodeFrame(proto::MsgType::kStatusRequest, "{}") +
                     EncodeFrame(proto::MsgType::kSchedulerSet, R"({"enabled":true})");
  for (size_t i = 0; i + 1 < wire.size(); ++i) {
    buf.Append(&wire[i], 1);
    auto f = buf.Next();
    REQUIRE(f.ok());
    if (i + 1 == sizeof(proto::FrameHeader) + 2) {
      REQUIRE(f.value().has_value());
      CHECK(f.value()->type == proto::MsgType::kStatusRequest);
      CHECK(f.value()->payload == "{}");
    } else {
      CHECK_FALSE(f.value().has_value());
    }
  }
  buf.Append(&wire.back(), 1);
  auto f = buf.Next();
  REQUIRE(f.ok());
  REQUIRE(f.value().has_value());
  CHECK(f.value()->type == proto::MsgType::kSchedulerSet);
  CHECK(f.value()->payload == R"({"enabled":true})");
}

TEST_CASE("protocol: a bad header is an error, not a wait for more bytes") {
  FrameBuffer buf(proto::kMaxRequestPayload);
  std::string bad = Header(0xdeadbeef, proto::kVersion, 35, 2);
  buf.Append(bad.data(), bad.size());
  CHECK_FALSE(buf.Next().ok());
  FrameBuffer huge(proto::kMaxRequestPayload);
  std::string big = Header(proto::kMagic, proto::kVersion, 35, 10 * 1024 * 1024);
  huge.Append(big.data(), big.size());
  CHECK_FALSE(huge.Next().ok());
}

TEST_CASE("protocol: a client refuses a reply longer than it reads, before reading its body") {
  int fds[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  const std::string header =
      Header(proto::kMagic, proto::kVersion, static_cast<uint16_t>(proto::MsgType::kReply), 1025);
  REQUIRE(write(fds[1], header.data(), header.size()) == static_cast<ssize_t>(header.size()));
  const auto start = std::chrono::steady_clock::now();
  Result<Frame> f = ReadFrame(fds[0], 1024, DeadlineIn(std::chrono::seconds(5)));
  CHECK_FALSE(f.ok());
  // An error at once, not a wait for 1,025 bytes that never come.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(4));
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace gshare::unit_frame_buffer
