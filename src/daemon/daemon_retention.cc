// `gshare clean` and [retention]'s tick, through JobRetention. The daemon's thread.
#include <spdlog/spdlog.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "daemon/daemon.h"
#include "ipc/requests.h"
#include "ipc/replies.h"

namespace gshare {

using json = nlohmann::json;

void Daemon::OnClean(Connection& c, const json& req) {
  Result<CleanRequest> parsed = CleanRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  const double before = WallNow() - static_cast<double>(parsed->older_than_ms) / 1000.0;
  // An admin cleans every user's ended jobs; anyone else their own.
  auto removed =
      retention_->RemoveEnded(before, std::numeric_limits<size_t>::max(),
                              access_.IsAdmin(c) ? std::nullopt : std::optional<uint32_t>(c.uid));
  if (!removed.ok()) return Reply(c, ErrorReply(removed.status().message()));
  spdlog::info("clean: removed {} job(s)", removed->size());
  Reply(c, CleanReply{removed.value()}.ToJsonText());
}

void Daemon::RetentionTick() {
  if (retention_->Tick()) timeline_.ApplyRetention(*store_, options_.config.timeline);
}

}  // namespace gshare
