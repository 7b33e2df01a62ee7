// `gshare status [--json] [ID]`: per GPU the lease holder, waiters, mode and quantum; per
// user their jobs running and pending and their lease time; per job its state, priority, time on
// the lease, time waiting and memory. A table for people, one JSON document with --json
// (schema_version 1). `gshare metrics`: the same document as Prometheus metrics, once, on
// stdout, written as the daemon's endpoint writes it (ipc/status_metrics.h).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "cli/cli.h"
#include "cli/daemon_glance.h"
#include "cli/job_status_text.h"
#include "ipc/requests.h"
#include "ipc/job_json.h"
#include "ipc/status_metrics.h"
#include "base/duration.h"
#include "base/terminal_text.h"
#include "base/user_name.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct StatusOptions {
  bool json_output = false;
  std::optional<std::string> job_text;  // a JobRef
  std::optional<int64_t> job;           // the job it names
};

// A lease's idle time in the LEASE column: "idle 45s", "idle 12m05s".
std::string IdleText(double s) { return "idle " + FormatSeconds(s); }

std::string Command(const json& j) {
  std::string out = JobCommandText(j);
  return out.size() > 40 ? out.substr(0, 37) + "..." : out;
}

// Each user's share (fair share between users): jobs running and pending, and the lease time
// of the running ones with its part of all of theirs.
// Priority lanes of one GPU (docs/design.md "Priority lanes"): the jobs with work on it now,
// and those held back behind a higher priority; nothing when no job is either.
void PrintLanes(const json& lanes) {
  std::string busy, held;
  auto add = [](std::string& list, const json& seat) {
    if (seat.at("job").is_null()) return;
    std::string item = ToJsonText(seat.at("job")) + " (p" + ToJsonText(seat.at("priority")) + ")";
    if (list.find(item) == std::string::npos) list += (list.empty() ? "" : ", ") + item;
  };
  for (const auto& seat : lanes) {
    if (seat.value("busy", false)) add(busy, seat);
    if (seat.value("held_back", false)) add(held, seat);
  }
  if (busy.empty() && held.empty()) return;
  std::printf("     busy: %s; held back for a higher priority: %s\n",
              busy.empty() ? "-" : busy.c_str(), held.empty() ? "-" : held.c_str());
}

void PrintUsers(const json& users) {
  if (users.empty()) return;
  std::printf("\n%-16s %7s %7s %9s %6s\n", "USER", "RUNNING", "PENDING", "ON-GPU", "SHARE");
  for (const auto& u : users) {
    std::printf("%-16.16s %7d %7d %9s %5.0f%%\n",
                TerminalText(u.at("user").get<std::string>()).c_str(), u.at("running").get<int>(),
                u.at("pending").get<int>(),
                FormatSeconds(u.at("lease_seconds").get<double>()).c_str(),
                100 * u.at("lease_share").get<double>());
  }
}

void PrintTable(const json& st) {
  const json& d = st.at("daemon");
  // Which daemon answered: the machine's (every user's jobs) or this user's own.
  std::printf("%s daemon pid %d, scheduler %s, quantum %s, socket %s\n",
              d.value("mode", std::string("user")) == "system" ? "system" : "user",
              d.at("pid").get<int>(), d.at("scheduler").get<std::string>().c_str(),
              FormatDuration(std::chrono::milliseconds(d.at("quantum_ms").get<int64_t>())).c_str(),
              TerminalText(d.at("socket").get<std::string>()).c_str());
  if (auto host = d.find("host_memory"); host != d.end() && host->is_object()) {
    const uint64_t budget = host->value("budget", uint64_t{0});
    std::printf("host memory for swapping: %s swapped out, %s staged, of %s\n",
                FormatBytes(host->value("swapped", uint64_t{0})).c_str(),
                FormatBytes(host->value("staged", uint64_t{0})).c_str(),
                budget == 0 ? "no bound" : FormatBytes(budget).c_str());
  }
  std::printf("\n%-4s %-42s %-9s %-7s %-8s %-9s %-8s %s\n", "GPU", "UUID", "MODE", "HOLDER", "HELD",
              "CAPACITY", "HANDOFFS", "WAITERS");
  if (st.at("gpus").empty()) std::printf("(no GPU used yet)\n");
  for (const auto& g : st.at("gpus")) {
    std::string waiters;
    for (const auto& w : g.at("waiters")) waiters += (waiters.empty() ? "" : ",") + ToJsonText(w);
    uint64_t capacity = g.value("capacity", uint64_t{0});
    // NVML's index when the daemon knows it, else the number the first job that used it saw.
    const json& number = g.value("index", json()).is_null() ? g.at("ordinal") : g.at("index");
    std::printf(
        "%-4s %-42s %-9s %-7s %-8s %-9s %-8s %s\n",
        number.is_null() ? "-" : ToJsonText(number).c_str(),
        g.at("uuid").get<std::string>().c_str(), g.at("mode").get<std::string>().c_str(),
        g.at("holder").is_null() ? "-" : ToJsonText(g.at("holder")).c_str(),
        g.at("holder").is_null() ? "-" : FormatSeconds(g.at("held_seconds").get<double>()).c_str(),
        capacity == 0 ? "-" : FormatBytes(capacity).c_str(),
        std::to_string(g.value("handoffs", uint64_t{0})).c_str(),
        waiters.empty() ? "-" : waiters.c_str());
    // Exclusive mode's residents: they run beside the holder's turn, the others take turns.
    std::string residents;
    for (const auto& r : g.value("residents", json::array())) {
      residents += (residents.empty() ? "" : ",") + ToJsonText(r);
    }
    if (!residents.empty() && g.at("mode") == "exclusive") {
      std::printf("     resident beside the turns: job %s\n", residents.c_str());
    }
    PrintLanes(g.value("lanes", json::array()));
  }
  PrintUsers(st.value("users", json::array()));
  std::printf("\n%-5s %-12s %-10s %4s %-9s %8s %8s %9s %9s %9s %9s %5s %9s %7s  %s\n", "JOB",
              "NAME", "STATE", "PRI", "LEASE", "ON-GPU", "WAITED", "ALLOC", "RESIDENT", "STAGED",
              "SWAPPED", "SWAPS", "MOVED", "SWAP-S", "COMMAND");
  for (const auto& j : st.at("jobs")) {
    const json mem = j.value("memory", json::object());
    auto bytes = [&mem](const char* key) { return FormatBytes(mem.value(key, uint64_t{0})); };
    bool live = mem.contains("allocated");
    // Whole-process checkpoints and restores count as evictions and swap-ins here.
    auto count = [&mem](const char* a, const char* b) {
      return mem.value(a, uint64_t{0}) + mem.value(b, uint64_t{0});
    };
    std::string swaps = live ? std::to_string(count("swaps_out", "checkpoints")) + "/" +
                                   std::to_string(count("swaps_in", "restores"))
                             : "-";
    double swap_s = mem.value("swap_seconds", 0.0) + mem.value("checkpoint_seconds", 0.0) +
                    mem.value("restore_seconds", 0.0);
    // An idle job (no lease held or wanted) says for how long: notebooks between cells.
    std::string lease = j.value("lease", std::string("-"));
    if (lease == "idle" && j.value("idle_seconds", json()).is_number()) {
      lease = IdleText(j.at("idle_seconds").get<double>());
    }
    std::printf(
        "%-5lld %-12.12s %-10s %4d %-9s %8s %8s %9s %9s %9s %9s %5s %9s %7s  %s\n",
        static_cast<long long>(j.at("id").get<int64_t>()),
        TerminalText(j.at("name").get<std::string>()).c_str(),
        j.at("state").get<std::string>().c_str(), j.at("priority").get<int>(), lease.c_str(),
        FormatSeconds(j.at("lease_seconds").get<double>()).c_str(),
        FormatSeconds(j.at("wait_seconds").get<double>()).c_str(),
        live ? bytes("allocated").c_str() : FormatBytes(j.value("peak_bytes", uint64_t{0})).c_str(),
        live ? bytes("resident").c_str() : "-", live ? bytes("staged").c_str() : "-",
        live ? bytes("swapped").c_str() : "-", swaps.c_str(),
        live ? FormatBytes(mem.value("bytes_out", uint64_t{0}) + mem.value("bytes_in", uint64_t{0}))
                   .c_str()
             : "-",
        live ? FormatSeconds(swap_s).c_str() : "-", Command(j).c_str());
  }
  if (st.value("older_jobs_left_out", false)) {
    std::printf(
        "(older ended jobs left out: gshare queue -a lists every job, gshare acct the "
        "history)\n");
  }
}

int ShowStatus(const GlobalOptions& global, const StatusOptions& opt) {
  StatusRequest request;
  if (opt.job) request.job_id = *opt.job;
  auto reply = RequestDaemon(global, proto::MsgType::kStatusRequest, request.ToJson(), true);
  if (!reply.ok()) {
    spdlog::error("{}", reply.status().message());
    return kExitError;
  }
  json& st = reply.value();
  st.erase("ok");
  WarnIfConfigChanged(st);
  WarnIfQueuePaused(st);
  if (opt.job) {
    for (const auto& j : st.at("jobs")) {
      if (j.at("id").get<int64_t>() != *opt.job) continue;
      if (opt.json_output) {
        json one = j;
        one["schema_version"] = st.at("schema_version");
        std::printf("%s\n", ToJsonText(one, 2).c_str());
      } else {
        const double now =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        std::string text = JobStatusText(j, now, [](uint32_t uid) { return UserName(uid); });
        if (text.empty()) {
          spdlog::error("job {}: the daemon's record of it cannot be read", *opt.job);
          return kExitError;
        }
        std::fwrite(text.data(), 1, text.size(), stdout);
      }
      return 0;
    }
    spdlog::error("no job {}", *opt.job);
    return kExitError;
  }
  if (opt.json_output) {
    std::printf("%s\n", ToJsonText(st, 2).c_str());
  } else {
    PrintTable(st);
  }
  return 0;
}

int PrintMetrics(const GlobalOptions& global) {
  // A scrape must not start a daemon: no daemon, no metrics (and exit 1).
  auto reply = RequestDaemon(global, proto::MsgType::kStatusRequest, StatusRequest{}.ToJson(),
                             /*start=*/false);
  if (!reply.ok()) {
    spdlog::error("{}", reply.status().message());
    return kExitError;
  }
  const std::string text = StatusMetrics(reply.value());
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : kExitError;
}

}  // namespace

void AddStatusCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<StatusOptions>();
  sub.add_flag("--json", opt->json_output, "Print one JSON document");
  sub.add_option("id", opt->job_text, "Show one job (ID, or J_T for a task of array J)")
      ->check(JobIdCheck());
  sub.footer(
      "Examples:\n  gshare status\n  gshare status --json | jq '.gpus[0].holder'\n"
      "  gshare status 12");
  *handler = [opt, &global]() {
    if (opt->job_text) {
      opt->job = ResolveJobText(global, *opt->job_text, "status");
      if (!opt->job) return kExitError;
    }
    return ShowStatus(global, *opt);
  };
}

void AddMetricsCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  sub.footer(
      "Prints what [metrics] listen serves (docs/cli.md \"Metrics\").\n"
      "Examples:\n  gshare metrics\n"
      "  gshare metrics > /var/lib/node_exporter/textfile_collector/gshare.prom.$$ &&\n"
      "    mv /var/lib/node_exporter/textfile_collector/gshare.prom.$$ "
      "/var/lib/node_exporter/textfile_collector/gshare.prom");
  *handler = [&global]() { return PrintMetrics(global); };
}

}  // namespace gshare
