// Job control commands: `gshare cancel`, `hold`, `release`, `set-priority`, `update`,
// `suspend`, `resume`, `requeue` (the daemon acts: JobControl) and `clean`. Those that
// take jobs take ids or the filters -t/-n/-u, as scancel does.
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
#include "base/begin_time.h"
#include "base/signal_spec.h"
#include "policy/dependency.h"

namespace gshare {
namespace {

using json = nlohmann::json;

// Jobs named by ids and/or filters (-t STATES, -n NAME, -u USER), as scancel and scontrol
// take them. A filter picks among the jobs in `allowed` states (every one of them when -t is
// not given); -t naming another state is a usage error for `verb`.
struct JobSelection {
  std::vector<std::string> ids;  // JobRef texts: ids, or array tasks J_T
  std::string states;
  std::string name;
  std::string user;
  bool filtered() const { return !states.empty() || !name.empty() || !user.empty(); }
};

struct CancelOptions {
  JobSelection selection;
  std::string signal;
};

struct IdsOptions {
  JobSelection selection;
  std::string gpu;  // resume --gpu
};

void AddSelectionOptions(CLI::App& sub, JobSelection& sel, const char* which) {
  sub.add_option("ids", sel.ids, "Job ids (an array's id: its tasks; J_T: task T of array J)")
      ->check(JobIdCheck(/*by_name=*/true));
  sub.add_option("-t,--state", sel.states, std::string("Every job in these states: ") + which);
  sub.add_option("-n,--name", sel.name, "Every such job of this name");
  sub.add_option("-u,--user", sel.user, "Every such job of this user");
}

// The selected jobs as a request for `verb` (ids, and array tasks named J_T as exact_ids);
// nullopt after printing one error line (`*rc`: the exit status).
std::optional<JobControlRequest> Select(const GlobalOptions& global, const JobSelection& sel,
                                        const std::set<JobState>& allowed, const char* verb,
                                        int* rc) {
  *rc = kExitUsage;
  if (sel.ids.empty() && !sel.filtered()) {
    spdlog::error("{}: name the jobs: IDs, or -t STATE, -n NAME, -u USER", verb);
    return std::nullopt;
  }
  JobControlRequest request{verb, {}};
  Status resolved = ResolveJobRefs(global, sel.ids, &request.ids, &request.exact_ids);
  if (!resolved.ok()) {
    spdlog::error("{}: {}", verb, resolved.message());
    *rc = kExitError;
    return std::nullopt;
  }
  if (!sel.filtered()) return request;
  std::vector<int64_t>& ids = request.ids;
  ListFilter filter;
  filter.name = sel.name;
  filter.states = allowed;
  if (!sel.states.empty()) {
    Result<std::set<JobState>> states = ParseStates(sel.states);
    std::string problem = states.ok() ? "" : states.status().message();
    for (JobState s : states.ok() ? states.value() : std::set<JobState>{}) {
      if (allowed.count(s) == 0) {
        problem = std::string("a ") + JobStateName(s) + " job cannot be given to " + verb;
      }
    }
    if (!problem.empty()) {
      spdlog::error("{}: -t: {}", verb, problem);
      return std::nullopt;
    }
    filter.states = states.value();
  }
  Result<std::vector<JobRecord>> rows = ListJobs(global, filter, sel.user);
  if (!rows.ok()) {
    spdlog::error("{}: {}", verb, rows.status().message());
    *rc = kExitError;
    return std::nullopt;
  }
  for (const JobRecord& r : rows.value()) ids.push_back(r.id);
  return request;
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
  int rc = 0;
  std::optional<JobControlRequest> request =
      Select(global, opt.selection, {JobState::kPending, JobState::kRunning, JobState::kSuspended},
             "cancel", &rc);
  if (!request) return rc;
  // As scancel: a filter that matches nothing is not an error.
  if (request->ids.empty() && request->exact_ids.empty()) return 0;
  if (sig) {
    request->action = "signal";
    request->signal = *sig;
  }
  return ControlJobs(global, *request, "cancel");
}

struct PriorityOptions {
  std::string id;  // a JobRef
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

struct UpdateOptions {
  std::string id;  // a JobRef
  std::optional<std::string> name, time, dependency, begin;
  std::optional<int> priority;
};

// A request for `action` on the one job `text` names (an array task J_T as a task id);
// nullopt after one error line.
std::optional<JobControlRequest> OneJob(const GlobalOptions& global, const std::string& text,
                                        const char* action) {
  JobControlRequest request{action, {}};
  Status resolved = ResolveJobRefs(global, {text}, &request.ids, &request.exact_ids);
  if (!resolved.ok()) {
    spdlog::error("{}: {}", action, resolved.message());
    return std::nullopt;
  }
  return request;
}

int Update(const GlobalOptions& global, const UpdateOptions& opt) {
  JobControlRequest::Update u;
  u.name = opt.name;
  if (opt.name && opt.name->empty()) {
    spdlog::error("update: -J: a name cannot be empty");
    return kExitUsage;
  }
  if (opt.time) {
    Result<std::chrono::milliseconds> t = ParseTimeLimit(*opt.time);
    if (!t.ok()) {
      spdlog::error("update: -t: {}", t.status().message());
      return kExitUsage;
    }
    u.time_limit_ms = t->count();
  }
  if (opt.dependency) {
    if (opt.dependency->empty() || *opt.dependency == "none") {
      u.dependency = "";
    } else {
      Result<std::vector<Dependency>> deps = ParseDependencies(*opt.dependency);
      if (!deps.ok()) {
        spdlog::error("update: -d: {}", deps.status().message());
        return kExitUsage;
      }
      u.dependency = FormatDependencies(deps.value());
    }
  }
  if (opt.begin) {
    Result<double> b = ParseBeginTime(*opt.begin, static_cast<double>(std::time(nullptr)));
    if (!b.ok()) {
      spdlog::error("update: --begin: {}", b.status().message());
      return kExitUsage;
    }
    u.begin_time = b.value();
  }
  if (opt.priority && (*opt.priority < kMinPriority || *opt.priority > kMaxPriority)) {
    spdlog::error("update: -p: a priority is within {}..{}", kMinPriority, kMaxPriority);
    return kExitUsage;
  }
  const bool fields = !(u == JobControlRequest::Update{});
  if (!fields && !opt.priority) {
    spdlog::error("update: say what to change: -J, -t, -d, --begin or -p");
    return kExitUsage;
  }
  std::optional<JobControlRequest> request = OneJob(global, opt.id, "update");
  if (!request) return kExitError;
  request->update = u;
  int rc = fields ? ControlJobs(global, *request) : 0;
  if (rc == 0 && opt.priority) {
    request->action = "set-priority";
    request->priority = *opt.priority;
    request->update = {};
    rc = ControlJobs(global, *request, "update");
  }
  return rc;
}

}  // namespace

void AddCancelCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<CancelOptions>();
  AddSelectionOptions(sub, opt->selection, "PD, R, S");
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

// A command that applies `action` to the jobs it is given, by id or by the filters of
// JobSelection among the jobs in `states`; its options, for a command that adds its own.
std::shared_ptr<IdsOptions> AddIdsAction(CLI::App& sub, const GlobalOptions& global,
                                         Handler* handler, const char* action,
                                         std::set<JobState> states, const char* footer) {
  auto opt = std::make_shared<IdsOptions>();
  std::string which;
  for (JobState s : states) which += (which.empty() ? "" : ", ") + std::string(JobStateCode(s));
  AddSelectionOptions(sub, opt->selection, which.c_str());
  sub.footer(footer);
  *handler = [opt, &global, action, states]() {
    int rc = 0;
    std::optional<JobControlRequest> request = Select(global, opt->selection, states, action, &rc);
    if (!request) return rc;
    if (request->ids.empty() && request->exact_ids.empty()) return 0;
    request->gpu = opt->gpu;
    return ControlJobs(global, *request);
  };
  return opt;
}

void AddHoldCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(
      sub, global, handler, "hold", {JobState::kPending},
      "Examples:\n  gshare hold 12 13     # pending jobs stay pending (reason JobHeldUser)\n"
      "  gshare hold -n sweep  # every pending job named sweep");
}

void AddReleaseCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(sub, global, handler, "release", {JobState::kPending},
               "Examples:\n  gshare release 12 13\n  gshare release -u alice   # all of alice's");
}

void AddSuspendCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  AddIdsAction(
      sub, global, handler, "suspend", {JobState::kRunning},
      "Example:\n  gshare suspend 12    # RUNNING -> SUSPENDED: its lease is taken back, its GPU\n"
      "                       # state checkpointed to host memory, its processes stopped\n"
      "The time limit keeps running while suspended. Exit status: 0; 1 when a job could not\n"
      "be suspended (not running, or already suspended).");
}

void AddResumeCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = AddIdsAction(
      sub, global, handler, "resume", {JobState::kSuspended},
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
      {JobState::kRunning, JobState::kCompleted, JobState::kFailed, JobState::kCancelled,
       JobState::kTimeout, JobState::kLost},
      "Example:\n  gshare requeue 12    # an ended (or running: cancelled first) submitted job\n"
      "                       # is PENDING again, same id and options");
}

void AddSetPriorityCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<PriorityOptions>();
  sub.add_option("id", opt->id, "Job id")->required()->check(JobIdCheck());
  sub.add_option("priority", opt->priority, "New priority, -1000..1000")->required();
  sub.footer(
      "Example:\n  gshare set-priority 12 50   # pending: its queue place; running: its lease");
  *handler = [opt, &global]() {
    std::optional<JobControlRequest> request = OneJob(global, opt->id, "set-priority");
    if (!request) return kExitError;
    request->priority = opt->priority;
    return ControlJobs(global, *request);
  };
}

void AddUpdateCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<UpdateOptions>();
  sub.add_option("id", opt->id, "Job id (pending)")->required()->check(JobIdCheck());
  sub.add_option("-J,--name", opt->name, "New name");
  sub.add_option("-t,--time", opt->time, "New time limit (Slurm's forms; 0: none)");
  sub.add_option("-d,--dependency", opt->dependency,
                 "New dependency list (afterok:ID[:ID],...; \"\" or none: no dependency)");
  sub.add_option("--begin", opt->begin, "Start no earlier than this (\"now\": at once)");
  sub.add_option("-p,--priority", opt->priority, "New priority, -1000..1000");
  sub.footer(
      "Examples:\n  gshare update 12 -t 4:00:00 -J sweep-b\n"
      "  gshare update 12 -d afterok:10 --begin 18:00\n"
      "Changes a pending job, as scontrol update does; the priority also of a running one.\n"
      "Exit status: 0; 1 when the daemon refused (not pending, no such job a dependency names,\n"
      "a dependency cycle); 2 for bad input.");
  *handler = [opt, &global]() { return Update(global, *opt); };
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
