// Job control commands: `gshare cancel`, `hold`, `release`, `set-priority`, `suspend`,
// `resume`, `requeue` (the daemon acts, daemon_control.cc) and `clean`.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "base/duration.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct CancelOptions {
  std::vector<int64_t> ids;
  std::string states;
  std::string name;
  std::string user;
  std::string signal;
};

// A signal by name ("TERM", "SIGUSR1", any case) or number.
std::optional<int> ParseSignal(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (text.rfind("SIG", 0) == 0) text = text.substr(3);
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0]))) {
    char* end = nullptr;
    long n = std::strtol(text.c_str(), &end, 10);
    if (*end == '\0' && n > 0 && n < NSIG) return static_cast<int>(n);
    return std::nullopt;
  }
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev != nullptr && text == abbrev) return sig;
  }
  return std::nullopt;
}

int Cancel(const GlobalOptions& global, const CancelOptions& opt) {
  std::optional<int> sig;
  if (!opt.signal.empty()) {
    sig = ParseSignal(opt.signal);
    if (!sig) {
      spdlog::error("cancel: unknown signal \"{}\"", opt.signal);
      return kExitUsage;
    }
  }
  const bool filtered = !opt.states.empty() || !opt.name.empty() || !opt.user.empty();
  if (opt.ids.empty() && !filtered) {
    spdlog::error("cancel: name the jobs: IDs, or -t STATE, -n NAME, -u USER");
    return kExitUsage;
  }
  std::vector<int64_t> ids = opt.ids;
  if (filtered) {
    ListFilter filter;
    filter.name = opt.name;
    filter.states = {JobState::kPending, JobState::kRunning, JobState::kSuspended};
    if (!opt.states.empty()) {
      Result<std::set<JobState>> states = ParseStates(opt.states);
      std::string problem = states.ok() ? "" : states.status().message();
      for (JobState s : states.ok() ? states.value() : std::set<JobState>{}) {
        if (filter.states.count(s) == 0) {
          problem = std::string("a ") + JobStateName(s) + " job cannot be cancelled";
        }
      }
      if (!problem.empty()) {
        spdlog::error("cancel: -t: {}", problem);
        return kExitUsage;
      }
      filter.states = states.value();
    }
    Result<std::vector<JobRecord>> rows = ListJobs(global, filter, opt.user);
    if (!rows.ok()) {
      spdlog::error("cancel: {}", rows.status().message());
      return kExitError;
    }
    for (const JobRecord& r : rows.value()) ids.push_back(r.id);
    if (ids.empty()) return 0;  // as scancel: a filter that matches nothing is not an error
  }
  if (sig) return ControlJobs(global, JobControlRequest{"signal", ids, 0, *sig});
  return ControlJobs(global, JobControlRequest{"cancel", ids});
}

struct IdsOptions {
  std::vector<int64_t> ids;
  std::string gpu;  // resume --gpu
};

struct PriorityOptions {
  int64_t id = 0;
  int priority = 0;
};

struct CleanOptions {
  std::string older_than;
  bool json_output = false;
};

int Clean(const GlobalOptions& global, const CleanOptions& opt) {
  int64_t older_than_ms = 0;
  if (!opt.older_than.empty()) {
    Result<std::chrono::milliseconds> d = ParseDuration(opt.older_than);
    if (!d.ok()) {
      spdlog::error("clean: --older-than: {}", d.status().message());
      return kExitUsage;
    }
    older_than_ms = d->count();
  }
  Result<json> reply =
      RequestDaemon(global, proto::MsgType::kClean, CleanRequest{older_than_ms}.ToJson(), true);
  if (!reply.ok()) {
    spdlog::error("clean: {}", reply.status().message());
    return kExitError;
  }
  Result<CleanReply> cleaned = CleanReply::Parse(reply.value());
  if (!cleaned.ok()) {
    spdlog::error("clean: {}", cleaned.status().message());
    return kExitError;
  }
  const std::vector<int64_t>& removed = cleaned->removed;
  if (opt.json_output) {
    std::printf(
        "%s\n",
        ToJsonText(json{{"schema_version", kJsonSchemaVersion}, {"removed", removed}}).c_str());
  } else {
    spdlog::info("removed {} ended job(s)", removed.size());
  }
  return 0;
}

}  // namespace

void AddCancelCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<CancelOptions>();
  sub.add_option("ids", opt->ids, "Job ids");
  sub.add_option("-t,--state", opt->states, "Every job in these states: PD, R");
  sub.add_option("-n,--name", opt->name, "Every pending or running job of this name");
  sub.add_option("-u,--user", opt->user, "Every pending or running job of this user");
  sub.add_option("-s,--signal", opt->signal, "Only send this signal to running jobs (no cancel)");
  sub.footer(
      "Examples:\n"
      "  gshare cancel 12 13\n"
      "  gshare cancel -n sweep -t PD      # every pending job named sweep\n"
      "  gshare cancel -s USR1 12          # signal a running job, keep it\n"
      "A pending job is CANCELLED at once; a running one gets SIGTERM, then SIGKILL after its\n"
      "--kill-after. Exit status: 0; 1 when a job could not be cancelled; 2 with no job named.");
  *handler = [opt, &global]() { return Cancel(global, *opt); };
}

// A command that applies `action` to the job ids it is given (the daemon acts on each); its
// options, for a command that adds its own.
std::shared_ptr<IdsOptions> AddIdsAction(CLI::App& sub, const GlobalOptions& global,
                                         Handler* handler, const char* action, const char* footer) {
  auto opt = std::make_shared<IdsOptions>();
  sub.add_option("ids", opt->ids, "Job ids")->required();
  sub.footer(footer);
  *handler = [opt, &global, action]() {
    JobControlRequest request{action, opt->ids};
    request.gpu = opt->gpu;
    return ControlJobs(global, request);
  };
  return opt;
}

void AddHoldCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(
      sub, global, handler, "hold",
      "Example:\n  gshare hold 12 13     # pending jobs stay pending (reason JobHeldUser)");
}

void AddReleaseCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(sub, global, handler, "release", "Example:\n  gshare release 12 13");
}

void AddSuspendCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(
      sub, global, handler, "suspend",
      "Example:\n  gshare suspend 12    # RUNNING -> SUSPENDED: its lease is taken back, its GPU\n"
      "                       # state checkpointed to host memory, its processes stopped\n"
      "The time limit keeps running while suspended. Exit status: 0; 1 when a job could not\n"
      "be suspended (not running, or already suspended).");
}

void AddResumeCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = AddIdsAction(
      sub, global, handler, "resume",
      "Example:\n  gshare resume 12     # SUSPENDED -> RUNNING: continued; its GPU state comes\n"
      "                       # back when it next gets the GPU\n"
      "  gshare resume 12 --gpu 1   # ... onto GPU 1, once checkpointed (docs/cli.md)");
  sub.add_option("--gpu", opt->gpu,
                 "Restore the job onto this GPU (index or UUID; same kind as its own): a job "
                 "suspended with its whole GPU state checkpointed moves there");
}

void AddRequeueCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(
      sub, global, handler, "requeue",
      "Example:\n  gshare requeue 12    # an ended (or running: cancelled first) submitted job\n"
      "                       # is PENDING again, same id and options");
}

void AddSetPriorityCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<PriorityOptions>();
  sub.add_option("id", opt->id, "Job id")->required();
  sub.add_option("priority", opt->priority, "New priority, -1000..1000")->required();
  sub.footer(
      "Example:\n  gshare set-priority 12 50   # pending: its queue place; running: its lease");
  *handler = [opt, &global]() {
    return ControlJobs(global, JobControlRequest{"set-priority", {opt->id}, opt->priority});
  };
}

void AddCleanCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<CleanOptions>();
  sub.add_option("--older-than", opt->older_than, "Only jobs that ended longer ago, e.g. 7d, 12h");
  sub.add_flag("--json", opt->json_output, "Print the removed ids as JSON");
  sub.footer(
      "Examples:\n  gshare clean                   # every ended job\n"
      "  gshare clean --older-than 7d\n"
      "Also removes their logs under the state directory; keeps jobs a pending job depends on.");
  *handler = [opt, &global]() { return Clean(global, *opt); };
}

}  // namespace gshare
