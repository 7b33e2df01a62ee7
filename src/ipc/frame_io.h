// Frame I/O over a Unix stream socket for the daemon and the CLI (include/gshare/protocol.h
// defines the format). FrameBuffer parses frames out of bytes received so far, validating
// every header; the blocking helpers serve the CLI's request/reply exchanges, each bounded by
// a deadline so that a hung daemon never hangs a client (docs/cli.md "A daemon that does not
// answer"). A FrameBuffer belongs to one connection and one thread; the free functions: any
// thread.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

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
// Encodes one frame whose payload is the bytes of `m`, a fixed-layout message of
// gshare/protocol.h (LeaseMsg, MemViewMsg, ...).
template <class Msg>
std::string EncodeMsgFrame(proto::MsgType type, const Msg& m) {
  static_assert(std::is_trivially_copyable_v<Msg>, "a frame carries a message's bytes");
  return EncodeFrame(type, std::string_view(reinterpret_cast<const char*>(&m), sizeof m));
}

// When a client stops waiting for the daemon; nullopt: never.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// How long a client waits for the daemon to take a request and answer it before it takes the
// daemon for hung: $GSHARE_DAEMON_TIMEOUT_MS when it is a number of milliseconds from 100 to
// 3,600,000 (the shim's variable; a job's nested gshare shares its patience), else 10 s.
// Reads the environment.
std::chrono::milliseconds ReplyTimeout();

// Now plus `timeout`.
Deadline DeadlineIn(std::chrono::milliseconds timeout);

// Writes all of `bytes`; fails on a closed peer, or once `deadline` passes with bytes unsent
// (a daemon that reads nothing). For clients only: the daemon never blocks on a peer
// (Daemon::Send).
Status WriteAll(int fd, std::string_view bytes, Deadline deadline = std::nullopt);

// Reads one whole frame of at most `max_payload` bytes; fails once `deadline` passes before
// it is whole (IsDaemonTimeout).
Result<Frame> ReadFrame(int fd, uint32_t max_payload, Deadline deadline = std::nullopt);

// Sends a JSON request and waits up to `timeout` for the daemon's kReply; returns its JSON
// text.
Result<std::string> Exchange(int fd, proto::MsgType type, std::string_view json,
                             std::chrono::milliseconds timeout = ReplyTimeout());

// True when an Exchange/ExchangeJson error says the connection was lost (the daemon went
// away before it answered), false for the daemon's own error replies and for a timeout.
bool IsLostConnection(const Status& error);

// True when the error says the daemon did not take the request or answer it in time: it may
// be hung, stopped or swamped, and may still act on the request later.
bool IsDaemonTimeout(const Status& error);

// The error IsDaemonTimeout recognizes: "the daemon did not answer within 10.0 s (hung or
// stopped?)".
Status DaemonTimeoutError(std::chrono::milliseconds patience);

// Exchange of a JSON object: the reply parsed. An error when it is not a JSON object or says
// "ok": false (then with its "error" text).
Result<nlohmann::json> ExchangeJson(int fd, proto::MsgType type, const nlohmann::json& request,
                                    std::chrono::milliseconds timeout = ReplyTimeout());

// The reply `frame` to a request, parsed as ExchangeJson parses it.
Result<nlohmann::json> ParseReply(const Frame& frame);

}  // namespace gshare
