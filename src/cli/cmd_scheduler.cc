// `gshare scheduler on|off`: switch lease gating at run time. Off, every job runs at once
// (the driver time-slices); on, jobs drain and take turns again.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "ipc/requests.h"

namespace gshare {

void AddSchedulerCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto state = std::make_shared<std::string>();
  sub.add_option("state", *state, "on or off")->required()->check(CLI::IsMember({"on", "off"}));
  sub.footer("Examples:\n  gshare scheduler off\n  gshare scheduler on");
  *handler = [state, &global]() {
    SchedulerSetRequest req{*state == "on"};
    auto reply = RequestDaemon(global, proto::MsgType::kSchedulerSet, req.ToJson(), true);
    if (!reply.ok()) {
      spdlog::error("{}", reply.status().message());
      return ExitFor(reply.status());
    }
    return 0;
  };
}

}  // namespace gshare
