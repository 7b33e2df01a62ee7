#include "cli/daemon_glance.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "cli/cli.h"
#include "ipc/requests.h"

namespace gshare {

using json = nlohmann::json;

namespace {
constexpr std::chrono::milliseconds kGlancePatience{2000};
}  // namespace

void WarnIfConfigChanged(const json& status) {
  // A malformed document is an older or foreign daemon's: no notice rather than an error.
  try {
    const json& daemon = status.at("daemon");
    std::string changed;
    for (const json& file : daemon.value("config_files", json::array())) {
      if (!file.value("changed", false)) continue;
      if (!changed.empty()) changed += ", ";
      changed += file.at("path").get<std::string>();
    }
    if (changed.empty()) return;
    if (daemon.value("mode", std::string()) == "system") {
      spdlog::warn("the config changed since the daemon started ({}); ask an admin to restart it",
                   changed);
    } else {
      spdlog::warn(
          "the config changed since the daemon started ({}); restart it to apply: gshare "
          "daemon stop && gshare daemon start",
          changed);
    }
  } catch (const std::exception&) {
  }
}

void WarnIfQueuePaused(const json& status) {
  try {
    if (status.at("daemon").value("queue", std::string()) != "paused") return;
    spdlog::warn("the queue is paused: no submitted job starts until `gshare queue resume`");
  } catch (const std::exception&) {
  }
}

std::set<int64_t> MpsArrivingJobs(const json& status) {
  std::set<int64_t> jobs;
  if (!status.is_object()) return jobs;
  auto daemon = status.find("daemon");
  if (daemon == status.end() || !daemon->is_object()) return jobs;
  auto mps = daemon->find("mps");
  if (mps == daemon->end() || !mps->is_object()) return jobs;
  auto arriving = mps->find("arriving");
  if (arriving == mps->end() || !arriving->is_array()) return jobs;
  for (const json& a : *arriving) {
    if (!a.is_object()) continue;
    auto job = a.find("job");
    if (job != a.end() && job->is_number_integer()) jobs.insert(job->get<int64_t>());
  }
  return jobs;
}

std::map<int64_t, JobGlance> GlanceAtDaemon(const GlobalOptions& global) {
  StatusRequest request;
  request.brief = true;
  // The glance only decorates what the caller prints: a daemon slow to answer costs it no
  // more than this.
  const std::chrono::milliseconds patience = std::min(ReplyTimeout(), kGlancePatience);
  Result<json> reply = RequestDaemon(global, proto::MsgType::kStatusRequest, request.ToJson(),
                                     /*start=*/false, patience);
  std::map<int64_t, JobGlance> leases;
  if (!reply.ok()) return leases;
  WarnIfConfigChanged(reply.value());
  WarnIfQueuePaused(reply.value());
  try {
    for (const json& job : reply->value("jobs", json::array())) {
      JobGlance& g = leases[job.at("id").get<int64_t>()];
      g.lease = job.value("lease", std::string());
      const json& waiting_for = job.value("waiting_for", json());
      if (waiting_for.is_string()) g.waiting_for = waiting_for.get<std::string>();
    }
    for (int64_t id : MpsArrivingJobs(reply.value())) leases[id].mps_arriving = true;
  } catch (const std::exception&) {
    leases.clear();
  }
  return leases;
}

}  // namespace gshare
