// Frame parsing and blocking socket helpers.
#include "ipc/frame_io.h"

#include "ipc/job_json.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gshare {
namespace {

// The messages of a lost connection (IsLostConnection).
constexpr const char* kClosedByDaemon = "the daemon closed the connection";
constexpr const char* kReadFailed = "read from the daemon: ";
constexpr const char* kSendFailed = "cannot send to the daemon: ";

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

Status ReadExactly(int fd, char* out, size_t len) {
  while (len > 0) {
    ssize_t n = recv(fd, out, len, 0);
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

Status WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Error(std::string("write: ") + strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Result<Frame> ReadFrame(int fd, uint32_t max_payload) {
  proto::FrameHeader h;
  Status s = ReadExactly(fd, reinterpret_cast<char*>(&h), sizeof h);
  if (!s.ok()) return s;
  proto::HeaderCheck check = proto::CheckHeader(h, max_payload);
  if (check != proto::HeaderCheck::kOk) {
    return Status::Error(std::string("bad frame from the daemon: ") + Describe(check));
  }
  Frame f{static_cast<proto::MsgType>(h.type), std::string(h.length, '\0')};
  s = ReadExactly(fd, f.payload.data(), h.length);
  if (!s.ok()) return s;
  return f;
}

Result<std::string> Exchange(int fd, proto::MsgType type, std::string_view json) {
  Status s = WriteAll(fd, EncodeFrame(type, json));
  if (!s.ok()) return Status::Error(std::string(kSendFailed) + s.message());
  Result<Frame> reply = ReadFrame(fd, proto::kMaxReplyPayload);
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

Result<nlohmann::json> ExchangeJson(int fd, proto::MsgType type, const nlohmann::json& request) {
  Result<std::string> reply = Exchange(fd, type, ToJsonText(request));
  if (!reply.ok()) return reply.status();
  nlohmann::json j = nlohmann::json::parse(reply.value(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("bad reply from the daemon");
  if (!j.value("ok", false)) {
    return Status::Error(j.value("error", std::string("the daemon refused the request")));
  }
  return j;
}

}  // namespace gshare
