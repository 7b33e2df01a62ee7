// The legacy IPC handle gshare gives for swap-engine memory (shim/memory/ipc_wire.h): what
// tells it from a driver's handle, and the exporter's socket name.
#include "memory/ipc_wire.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

namespace gshare::shim::unit_ipc_wire {
namespace {

IpcWireHandle Sample() {
  IpcWireHandle w{};
  w.pid = 4242;
  w.device = 1;
  w.nonce = 0x0123456789abcdefull;
  w.base = 0x7f0000200000ull;
  w.size = 6ull << 20;
  w.offset = 4096;
  return w;
}

TEST_CASE("ipc wire: gshare's handle round-trips and carries its magic") {
  gs_cuda::CUipcMemHandle_v1 h = EncodeIpcHandle(Sample());
  IpcWireHandle back{};
  REQUIRE(DecodeIpcHandle(h, &back));
  CHECK(back.pid == 4242);
  CHECK(back.device == 1);
  CHECK(back.nonce == 0x0123456789abcdefull);
  CHECK(back.base == 0x7f0000200000ull);
  CHECK(back.size == 6ull << 20);
  CHECK(back.offset == 4096);
  CHECK(std::memcmp(h.reserved, kIpcMagic, sizeof kIpcMagic) == 0);
}

TEST_CASE("ipc wire: a driver's handle, or one without a process or size, is not gshare's") {
  IpcWireHandle out{};
  gs_cuda::CUipcMemHandle_v1 driver{};
  std::memset(driver.reserved, 0x5a, sizeof driver.reserved);
  CHECK_FALSE(DecodeIpcHandle(driver, &out));
  gs_cuda::CUipcMemHandle_v1 h = EncodeIpcHandle(Sample());
  h.reserved[3] ^= 1;  // one bit of the magic
  CHECK_FALSE(DecodeIpcHandle(h, &out));
  IpcWireHandle w = Sample();
  w.pid = 0;
  CHECK_FALSE(DecodeIpcHandle(EncodeIpcHandle(w), &out));
  w = Sample();
  w.size = 0;
  CHECK_FALSE(DecodeIpcHandle(EncodeIpcHandle(w), &out));
}

TEST_CASE("ipc wire: the exporter's socket is an abstract name of its pid and nonce") {
  sockaddr_un addr{};
  socklen_t len = IpcSocketAddress(4242, 0xabcull, &addr);
  CHECK(addr.sun_family == AF_UNIX);
  CHECK(addr.sun_path[0] == '\0');  // abstract: nothing in the file system
  std::string name(addr.sun_path + 1, len - offsetof(sockaddr_un, sun_path) - 1);
  CHECK(name == "gshare-ipc.4242.0000000000000abc");
  // Another nonce (a process reusing the pid) is another socket.
  sockaddr_un other{};
  socklen_t other_len = IpcSocketAddress(4242, 0xabdull, &other);
  CHECK(other_len == len);
  CHECK(std::memcmp(addr.sun_path, other.sun_path, len - offsetof(sockaddr_un, sun_path)) != 0);
}

}  // namespace
}  // namespace gshare::shim::unit_ipc_wire
