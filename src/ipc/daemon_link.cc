#include "ipc/daemon_link.h"

#include <poll.h>
#include <unistd.h>

#include "ipc/job_json.h"

namespace gshare {

DaemonLink::~DaemonLink() {
  if (fd_ >= 0) close(fd_);
}

Status DaemonLink::Post(proto::MsgType type, const nlohmann::json& request) {
  Status sent = WriteAll(fd_, EncodeFrame(type, ToJsonText(request)), DeadlineIn(timeout_));
  if (IsDaemonTimeout(sent)) return DaemonTimeoutError(timeout_);
  if (!sent.ok()) return Status::Error("cannot send to the daemon: " + sent.message());
  ++owed_;
  return Status::Ok();
}

Result<nlohmann::json> DaemonLink::Request(proto::MsgType type, const nlohmann::json& request) {
  const Deadline deadline = DeadlineIn(timeout_);
  if (Status sent = Post(type, request); !sent.ok()) return sent;
  Result<nlohmann::json> reply = Await(deadline);
  if (!reply.ok() && IsDaemonTimeout(reply.status())) return DaemonTimeoutError(timeout_);
  return reply;
}

Result<nlohmann::json> DaemonLink::Await(Deadline deadline) {
  if (owed_ == 0) return Status::Error("no reply is owed by the daemon");
  for (;;) {
    Result<Frame> frame = ReadFrame(fd_, proto::kMaxReplyPayload, deadline);
    if (!frame.ok()) return frame.status();
    // Frames that answer no request (none are sent to a runner today) are no reply.
    if (frame->type != proto::MsgType::kReply) continue;
    if (--owed_ == 0) return ParseReply(frame.value());
  }
}

Result<Frame> DaemonLink::Next() { return ReadFrame(fd_, proto::kMaxReplyPayload); }

bool DaemonLink::Readable() const {
  struct pollfd p = {fd_, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

}  // namespace gshare
