// Frame parsing and blocking socket helpers.
#include "ipc/frame_io.h"

#include "ipc/job_json.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/duration.h"

namespace gshare {
namespace {

// The messages of a lost connection (IsLostConnection).
constexpr const char* kClosedByDaemon = "the daemon closed the connection";
constexpr const char* kReadFailed = "read from the daemon: ";
constexpr const char* kSendFailed = "cannot send to the daemon: ";
constexpr const char* kNoAnswer = "the daemon did not answer within ";

// A client's default patience with the daemon (ReplyTimeout): long enough for the slowest
// request (a listing of 100,000 jobs, a clean of as many), short enough that a person waits it
// out rather than reaching for kill. The bounds are the shim's (GSHARE_DAEMON_TIMEOUT_MS).
constexpr std::chrono::milliseconds kDefaultReplyTimeout{10'000};
constexpr long kMinTimeoutMs = 100;
constexpr long kMaxTimeoutMs = 3600L * 1000;

// Waits until `fd` is ready for `events` or `deadline` passes. True when ready (or polling
// failed: the read or write that follows reports why).
bool WaitReady(int fd, short events, Deadline deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
    }
    struct pollfd p = {fd, events, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready > 0 || (ready < 0 && errno != EINTR)) return true;
    if (ready == 0) return false;
  }
}

// The time from `start` to `deadline`, for the error message.
std::chrono::milliseconds Patience(Deadline deadline, std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - start);
}

const char* Describe(proto::HeaderCheck c) {
  switch (c) {
    case proto::HeaderCheck::kBadMagic: return "bad magic";
    case proto::HeaderCheck::kBadVersion: return "unsupported protocol version";
    case proto::HeaderCheck::kBadType: return "unknown message type";
    case proto::HeaderCheck::kBadLength: return "bad payload length";
    case proto::HeaderCheck::kOk: break;
  }
  return "ok";
}

Status ReadExactly(int fd, char* out, size_t len, Deadline deadline,
                   std::chrono::steady_clock::time_point start) {
  while (len > 0) {
    if (!WaitReady(fd, POLLIN, deadline)) return DaemonTimeoutError(Patience(deadline, start));
    ssize_t n = recv(fd, out, len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Status::Error(kClosedByDaemon);
    if (n < 0) return Status::Error(std::string(kReadFailed) + strerror(errno));
    out += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<Frame>> FrameBuffer::Next() {
  if (data_.size() < sizeof(proto::FrameHeader)) return std::optional<Frame>();
  proto::FrameHeader h;
  std::memcpy(&h, data_.data(), sizeof h);
  proto::HeaderCheck check = proto::CheckHeader(h, max_payload_);
  if (check != proto::HeaderCheck::kOk) return Status::Error(Describe(check));
  size_t total = sizeof h + h.length;
  if (data_.size() < total) return std::optional<Frame>();
  Frame f{static_cast<proto::MsgType>(h.type), data_.substr(sizeof h, h.length)};
  data_.erase(0, total);
  return std::optional<Frame>(std::move(f));
}

std::string EncodeFrame(proto::MsgType type, std::string_view payload) {
  proto::FrameHeader h = proto::MakeHeader(type, static_cast<uint32_t>(payload.size()));
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out.append(payload);
  return out;
}

std::chrono::milliseconds ReplyTimeout() {
  const char* text = std::getenv("GSHARE_DAEMON_TIMEOUT_MS");
  if (text == nullptr) return kDefaultReplyTimeout;
  char* end = nullptr;
  const long ms = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || ms < kMinTimeoutMs || ms > kMaxTimeoutMs) {
    return kDefaultReplyTimeout;
  }
  return std::chrono::milliseconds(ms);
}

Deadline DeadlineIn(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + timeout;
}

Status WriteAll(int fd, std::string_view bytes, Deadline deadline) {
  const auto start = std::chrono::steady_clock::now();
  while (!bytes.empty()) {
    if (!WaitReady(fd, POLLOUT, deadline)) return DaemonTimeoutError(Patience(deadline, start));
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return Status::Error(std::string("write: ") + strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Result<Frame> ReadFrame(int fd, uint32_t max_payload, Deadline deadline) {
  const auto start = std::chrono::steady_clock::now();
  proto::FrameHeader h;
  Status s = ReadExactly(fd, reinterpret_cast<char*>(&h), sizeof h, deadline, start);
  if (!s.ok()) return s;
  proto::HeaderCheck check = proto::CheckHeader(h, max_payload);
  if (check != proto::HeaderCheck::kOk) {
    return Status::Error(std::string("bad frame from the daemon: ") + Describe(check));
  }
  Frame f{static_cast<proto::MsgType>(h.type), std::string(h.length, '\0')};
  s = ReadExactly(fd, f.payload.data(), h.length, deadline, start);
  if (!s.ok()) return s;
  return f;
}

Result<std::string> Exchange(int fd, proto::MsgType type, std::string_view json,
                             std::chrono::milliseconds timeout) {
  // One deadline for both ways: a daemon that reads nothing and one that answers nothing
  // cost the same.
  const Deadline deadline = DeadlineIn(timeout);
  Status s = WriteAll(fd, EncodeFrame(type, json), deadline);
  if (IsDaemonTimeout(s)) return DaemonTimeoutError(timeout);
  if (!s.ok()) return Status::Error(std::string(kSendFailed) + s.message());
  Result<Frame> reply = ReadFrame(fd, proto::kMaxReplyPayload, deadline);
  if (!reply.ok() && IsDaemonTimeout(reply.status())) return DaemonTimeoutError(timeout);
  if (!reply.ok()) return reply.status();
  if (reply->type != proto::MsgType::kReply) {
    return Status::Error("unexpected reply type from the daemon");
  }
  return std::move(reply->payload);
}

bool IsLostConnection(const Status& error) {
  const std::string& m = error.message();
  return m == kClosedByDaemon || m.rfind(kReadFailed, 0) == 0 || m.rfind(kSendFailed, 0) == 0;
}

bool IsDaemonTimeout(const Status& error) { return error.message().rfind(kNoAnswer, 0) == 0; }

Status DaemonTimeoutError(std::chrono::milliseconds patience) {
  return Status::Error(std::string(kNoAnswer) + FormatDuration(patience) + " (hung or stopped?)");
}

namespace {

Result<nlohmann::json> ParseReplyText(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("bad reply from the daemon");
  if (!j.value("ok", false)) {
    return Status::Error(j.value("error", std::string("the daemon refused the request")));
  }
  return j;
}

}  // namespace

Result<nlohmann::json> ExchangeJson(int fd, proto::MsgType type, const nlohmann::json& request,
                                    std::chrono::milliseconds timeout) {
  Result<std::string> reply = Exchange(fd, type, ToJsonText(request), timeout);
  if (!reply.ok()) return reply.status();
  return ParseReplyText(reply.value());
}

Result<nlohmann::json> ParseReply(const Frame& frame) {
  if (frame.type != proto::MsgType::kReply) {
    return Status::Error("unexpected reply type from the daemon");
  }
  return ParseReplyText(frame.payload);
}

}  // namespace gshare
