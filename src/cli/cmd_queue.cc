// `gshare queue [-a] [-t STATES] [-n NAME] [-u USER] [--json] [--no-header]`: the jobs of the
// queue, read straight from the database (the daemon writes it; readers never wait for the
// daemon), running first, then pending in admission order.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "ipc/job_json.h"
#include "base/terminal_text.h"
#include "base/user_name.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct QueueOptions {
  bool all = false;
  std::string states;
  std::string name;
  std::string user;
  bool json_output = false;
  bool no_header = false;
};

// Slurm's elapsed-time form: M:SS, H:MM:SS, D-HH:MM:SS.
std::string Elapsed(double seconds) {
  long long s = static_cast<long long>(std::max(0.0, seconds));
  char buf[48];
  if (s >= 86400) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24,
                  s / 60 % 60, s % 60);
  } else if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

double ElapsedSeconds(const JobRecord& r, double now) {
  if (!r.start_time) return 0;
  return r.end_time.value_or(now) - *r.start_time;
}

// REASON column: why a pending job waits; for an ended job what ended it.
std::string ReasonText(const JobRecord& r) {
  if (!r.reason.empty() || !IsFinal(r.state)) return r.reason;
  if (r.signal) return "signal " + std::to_string(*r.signal);
  if (r.exit_code) return "exit " + std::to_string(*r.exit_code);
  return "";
}

const char* Color(JobState state) {
  switch (state) {
    case JobState::kRunning: return "\033[32m";
    case JobState::kPending: return "\033[33m";
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kLost: return "\033[31m";
    case JobState::kCancelled: return "\033[35m";
    case JobState::kSuspended:
    case JobState::kCompleted: return "";
  }
  return "";
}

int ShowQueue(const GlobalOptions& global, const QueueOptions& opt) {
  ListFilter filter;
  filter.order = ListFilter::Order::kQueueOrder;
  filter.name = opt.name;
  if (!opt.states.empty()) {
    Result<std::set<JobState>> states = ParseStates(opt.states);
    if (!states.ok()) {
      spdlog::error("queue: {}", states.status().message());
      return kExitUsage;
    }
    filter.states = states.value();
  } else if (!opt.all) {
    filter.states = {JobState::kPending, JobState::kRunning, JobState::kSuspended};
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (opt.json_output) {
    Result<std::vector<JobRecord>> listed = ListJobs(global, filter, opt.user);
    if (!listed.ok()) {
      spdlog::error("queue: {}", listed.status().message());
      return kExitError;
    }
    const std::vector<JobRecord>& rows = listed.value();
    json doc{{"schema_version", kJsonSchemaVersion}, {"jobs", json::array()}};
    json& jobs = doc["jobs"];
    std::map<uint32_t, std::string> users;  // one password-database lookup per owner
    for (const JobRecord& r : rows) {
      json j = JobToJson(r);
      auto user = users.find(r.uid);
      if (user == users.end()) user = users.emplace(r.uid, UserName(r.uid)).first;
      j["user"] = user->second;
      j["elapsed_seconds"] = ElapsedSeconds(r, now);
      jobs.push_back(std::move(j));
    }
    std::string text = ToJsonText(doc, 2);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  // The table streams: 100,000 rows are printed as SQLite reads them.
  const bool color = ColorOnStdout();
  bool header = !opt.no_header;
  Status st = ForEachJob(global, filter, opt.user, [&](const JobRecord& r) {
    if (header) {
      std::printf("%-7s %-3s %5s %-16s %10s %-5s %s\n", "ID", "ST", "PRI", "NAME", "TIME", "GPU",
                  "REASON");
      header = false;
    }
    // Names, GPU specs and reasons are the submitter's text: escaped for the terminal.
    const std::string gpu = TerminalText(!r.slot.empty() ? r.slot : r.gpu);
    std::printf("%-7lld %s%-3s%s %5d %-16.16s %10s %-5s %s\n", static_cast<long long>(r.id),
                color ? Color(r.state) : "", JobStateCode(r.state), color ? "\033[0m" : "",
                r.priority, TerminalText(r.name).c_str(), Elapsed(ElapsedSeconds(r, now)).c_str(),
                gpu.empty() ? "-" : gpu.c_str(), TerminalText(ReasonText(r)).c_str());
  });
  if (!st.ok()) {
    spdlog::error("queue: {}", st.message());
    return kExitError;
  }
  if (header) {
    std::printf("%-7s %-3s %5s %-16s %10s %-5s %s\n", "ID", "ST", "PRI", "NAME", "TIME", "GPU",
                "REASON");
  }
  return 0;
}

}  // namespace

void AddQueueCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<QueueOptions>();
  sub.add_flag("-a,--all", opt->all, "Every job, ended ones too");
  sub.add_option("-t,--state", opt->states, "Only these states: PD,R,CD,F,CA,TO,LO or names");
  sub.add_option("-n,--name", opt->name, "Only jobs of this name");
  sub.add_option("-u,--user", opt->user, "Only jobs of this user (name or uid)");
  sub.add_flag("--json", opt->json_output, "Print one JSON document");
  sub.add_flag("--no-header", opt->no_header, "No header line");
  sub.footer(
      "Examples:\n"
      "  gshare queue                    # running, then pending in start order\n"
      "  gshare queue -a -t F,TO         # failed and timed-out jobs\n"
      "  gshare queue --json | jq '.jobs[] | select(.reason == \"Dependency\") | .id'\n"
      "Columns: ID, ST (PD pending, R running, CD completed, F failed, CA cancelled, TO timeout,\n"
      "LO lost), PRI, NAME, TIME (run time), GPU, REASON (why pending; how it ended).");
  *handler = [opt, &global]() { return ShowQueue(global, *opt); };
}

}  // namespace gshare
