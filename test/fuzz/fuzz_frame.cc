// libFuzzer target: the daemon's frame decoding (FrameBuffer, src/ipc/frame_io.h) fed arbitrary
// bytes in arbitrary chunks, as recv() may deliver them. The first input byte picks the
// chunk size; the rest is the stream. Every frame it returns must satisfy the header rules
// of include/gshare/protocol.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ipc/frame_io.h"

using gshare::FrameBuffer;
namespace proto = gshare::proto;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // 1..64 bytes a chunk; bit 7 picks a small payload limit so that kBadLength is reached often.
  const size_t chunk = (data[0] & 63) + 1;
  const uint32_t max_payload = (data[0] & 128) ? 64 : proto::kMaxRequestPayload;
  FrameBuffer buffer(max_payload);
  const char* p = reinterpret_cast<const char*>(data + 1);
  size_t left = size - 1;
  size_t decoded = 0;  // header + payload bytes of the frames returned so far
  while (left > 0) {
    const size_t n = left < chunk ? left : chunk;
    buffer.Append(p, n);
    p += n;
    left -= n;
    for (;;) {
      gshare::Result<std::optional<gshare::Frame>> next = buffer.Next();
      if (!next.ok()) return 0;  // the connection would be dropped
      if (!next->has_value()) break;
      const gshare::Frame& f = **next;
      const uint32_t fixed = proto::FixedPayloadSize(f.type);
      if (!proto::IsKnownType(static_cast<uint16_t>(f.type)) ||
          (fixed != 0 && f.payload.size() != fixed) ||
          (fixed == 0 && (f.payload.empty() || f.payload.size() > max_payload))) {
        abort();
      }
      decoded += sizeof(proto::FrameHeader) + f.payload.size();
      if (decoded > size - 1) abort();  // more bytes out than went in
    }
  }
  return 0;
}
