// What the tests of the daemon's parts that send frames share: the frame an injected send was
// given, decoded as its peer reads it (FrameBuffer). Test threads only.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

#include "ipc/frame_io.h"

namespace gshare::unit_decoded_frame {

// The one frame `bytes` holds (EncodeFrame's output); the test fails when it holds none.
inline Frame DecodedFrame(std::string_view bytes) {
  FrameBuffer buffer(1 << 20);
  buffer.Append(bytes.data(), bytes.size());
  Result<std::optional<Frame>> f = buffer.Next();
  REQUIRE(f.ok());
  REQUIRE(f.value());
  return *f.value();
}

}  // namespace gshare::unit_decoded_frame
