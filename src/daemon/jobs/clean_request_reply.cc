#include "daemon/jobs/clean_request_reply.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {

std::string CleanRequestReply(JobRetention& retention, const nlohmann::json& req, double now,
                              std::optional<uint32_t> owner) {
  Result<CleanRequest> parsed = CleanRequest::Parse(req);
  if (!parsed.ok()) return ErrorReply(parsed.status().message());
  const double before = now - static_cast<double>(parsed->older_than_ms) / 1000.0;
  auto removed = retention.RemoveEnded(before, std::numeric_limits<size_t>::max(), owner);
  if (!removed.ok()) return ErrorReply(removed.status().message());
  spdlog::info("clean: removed {} job(s)", removed->size());
  return CleanReply{removed.value()}.ToJsonText();
}

}  // namespace gshare
