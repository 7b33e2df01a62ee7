// Frame I/O over a Unix stream socket for the daemon and the CLI (include/gshare/protocol.h
// defines the format). FrameBuffer parses frames out of bytes received so far, validating
// every header; the blocking helpers serve the CLI's request/reply exchanges.
// A FrameBuffer belongs to one connection and one thread; the free functions: any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gshare/protocol.h"
#include "base/status.h"

namespace gshare {

struct Frame {
  proto::MsgType type;
  std::string payload;
};

class FrameBuffer {
 public:
  explicit FrameBuffer(uint32_t max_payload) : max_payload_(max_payload) {}
  void Append(const char* data, size_t len) { data_.append(data, len); }
  // The next complete frame, nullopt when more bytes are needed, or an error when the
  // bytes cannot be a valid frame (the connection must then be dropped).
  Result<std::optional<Frame>> Next();
  // Bytes received and not yet returned by Next (an incomplete frame, when non-zero after
  // Next returned nullopt).
  size_t buffered() const { return data_.size(); }

 private:
  uint32_t max_payload_;
  std::string data_;
};

// Encodes one frame (header + payload).
std::string EncodeFrame(proto::MsgType type, std::string_view payload);

// Writes all of `bytes`, blocking; fails on a closed peer or after the socket's send timeout.
// For clients only: the daemon never blocks on a peer (Daemon::Send).
Status WriteAll(int fd, std::string_view bytes);

// Blocking read of one whole frame of at most `max_payload` bytes.
Result<Frame> ReadFrame(int fd, uint32_t max_payload);

// Sends a JSON request and waits for the daemon's kReply; returns its JSON text.
Result<std::string> Exchange(int fd, proto::MsgType type, std::string_view json);

// True when an Exchange/ExchangeJson error says the connection was lost (the daemon went
// away before it answered), false for the daemon's own error replies.
bool IsLostConnection(const Status& error);

// Exchange of a JSON object: the reply parsed. An error when it is not a JSON object or says
// "ok": false (then with its "error" text).
Result<nlohmann::json> ExchangeJson(int fd, proto::MsgType type, const nlohmann::json& request);

}  // namespace gshare
