// `gshare parallel [N | --reset]` (pueue's `parallel`, task-spooler's `-S`): how many jobs
// run at once on each GPU slot, changed at run time in place of [queue] max_running. The
// daemon keeps N across its restarts (<state_dir>/queue.parallel) until `--reset` gives the
// config's number back. Without N it prints the number in force and where it comes from.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "ipc/requests.h"

namespace gshare {

namespace {

using json = nlohmann::json;

struct ParallelOptions {
  int jobs = 0;  // 0: not given
  bool reset = false;
};

// The reply's (or the status's daemon object's) number and its source, as one line.
std::string Describe(const json& j) {
  const int n = j.value("max_running", 0);
  const bool set = j.value("max_running_from", std::string()) == "parallel";
  return std::to_string(n) + " job(s) at once per GPU slot (" +
         (set ? "gshare parallel; --reset goes back to [queue] max_running"
              : "[queue] max_running") +
         ")";
}

int Show(const GlobalOptions& global) {
  StatusRequest request;
  request.brief = true;
  Result<json> reply = RequestDaemon(global, proto::MsgType::kStatusRequest, request.ToJson(),
                                     /*start=*/true);
  if (!reply.ok()) {
    spdlog::error("parallel: {}", reply.status().message());
    return ExitFor(reply.status());
  }
  const json daemon = reply->value("daemon", json::object());
  if (!daemon.contains("max_running")) {
    spdlog::error("parallel: the daemon does not say (an older one: restart it)");
    return kExitError;
  }
  std::printf("%s\n", Describe(daemon).c_str());
  return 0;
}

int Set(const GlobalOptions& global, int jobs) {
  QueueSetRequest request{std::nullopt, jobs};
  Result<json> reply =
      RequestDaemon(global, proto::MsgType::kQueueSet, request.ToJson(), /*start=*/true);
  if (!reply.ok()) {
    spdlog::error("parallel: {}", reply.status().message());
    return ExitFor(reply.status());
  }
  spdlog::info("{}", Describe(reply.value()));
  return 0;
}

}  // namespace

void AddParallelCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<ParallelOptions>();
  CLI::Option* jobs = sub.add_option("N", opt->jobs, "Jobs at once per GPU slot (1..1000)")
                          ->check(CLI::Range(1, 1000));
  sub.add_flag("--reset", opt->reset, "Go back to the config's [queue] max_running")
      ->excludes(jobs);
  sub.footer(
      "Examples:\n"
      "  gshare parallel            # the number in force, and where it comes from\n"
      "  gshare parallel 4          # four jobs at once per GPU slot, until --reset\n"
      "  gshare parallel --reset    # back to [queue] max_running\n"
      "Running jobs are never stopped: a lower number lets fewer start.");
  *handler = [opt, &global]() {
    if (opt->reset) return Set(global, 0);
    if (opt->jobs > 0) return Set(global, opt->jobs);
    return Show(global);
  };
}

}  // namespace gshare
