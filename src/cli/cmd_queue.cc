// `gshare queue [-a] [-t STATES] [-n NAME] [-u USER] [-l | --format=FIELD,...] [--json]
// [--no-header]`: the jobs of the queue, read straight from the database (the daemon writes
// it; readers never wait for the daemon), running first, then pending in admission order. A
// running daemon is asked which jobs wait for their lease (REASON Lease, or the memory the
// grant waits for) and whether its config changed since it started.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <thread>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/daemon_glance.h"
#include "cli/queue_format.h"
#include "ipc/job_json.h"
#include "base/terminal_text.h"
#include "base/user_name.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct QueueOptions {
  bool all = false;
  std::string states;
  std::vector<std::string> names;  // -n: one name or several (comma-separated)
  std::string user;
  bool me = false;                // --me: the caller's own jobs (squeue --me)
  std::vector<std::string> jobs;  // -j: JobRefs (comma-separated)
  double iterate_s = 0;           // -i: print again every this many seconds (squeue -i)
  bool json_output = false;
  bool no_header = false;
  bool long_form = false;
  std::string format;
  std::optional<bool> pause;  // `queue pause` (true) or `queue resume` (false)
};

// The default table's NAME column: names up to this long are whole (sweeps' names differ
// at their ends); -l and --format show them whole.
constexpr size_t kNameColumn = 24;

void PrintHeader() {
  std::printf("%-7s %-3s %5s %-*s %10s %-5s %s\n", "ID", "ST", "PRI", static_cast<int>(kNameColumn),
              "NAME", "TIME", "GPU", "REASON");
}

// Which listed rows -j and a -n list keep (the store's filter takes one name only).
struct RowPick {
  std::set<int64_t> ids;    // a job, or an array's id: its tasks
  std::set<int64_t> exact;  // J_T: that task
  std::set<std::string> names;
  bool Keeps(const JobRecord& r) const {
    if (!names.empty() && names.count(r.name) == 0) return false;
    if (ids.empty() && exact.empty()) return true;
    return exact.count(r.id) != 0 || ids.count(r.id) != 0 ||
           (r.IsArrayTask() && ids.count(r.array_job_id) != 0);
  }
};

int ShowQueue(const GlobalOptions& global, QueueOptions opt) {
  ListFilter filter;
  filter.order = ListFilter::Order::kQueueOrder;
  RowPick pick;
  if (opt.names.size() == 1) {
    filter.name = opt.names.front();  // the store selects one name itself
  } else {
    pick.names.insert(opt.names.begin(), opt.names.end());
  }
  if (!opt.jobs.empty()) {
    std::vector<int64_t> ids, exact;
    Status resolved = ResolveJobRefs(global, opt.jobs, &ids, &exact);
    if (!resolved.ok()) {
      spdlog::error("queue: -j: {}", resolved.message());
      return kExitError;
    }
    pick.ids.insert(ids.begin(), ids.end());
    pick.exact.insert(exact.begin(), exact.end());
    if (opt.states.empty()) opt.all = true;  // squeue -j: the named jobs in any state
  }
  if (opt.me) opt.user = std::to_string(getuid());
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
  std::map<uint32_t, std::string> names;  // one password-database lookup per owner
  QueueRowContext context;
  context.now = now;
  context.user = [&names](uint32_t uid) {
    auto user = names.find(uid);
    if (user == names.end()) user = names.emplace(uid, UserName(uid)).first;
    return user->second;
  };
  // Before the rows: a daemon that reading them starts (none answers now) has no live job
  // and has read the config as it is.
  context.leases = GlanceAtDaemon(global);
  if (opt.json_output) {
    Result<std::vector<JobRecord>> listed = ListJobs(global, filter, opt.user);
    if (!listed.ok()) {
      spdlog::error("queue: {}", listed.status().message());
      return kExitError;
    }
    const std::vector<JobRecord>& rows = listed.value();
    json doc{{"schema_version", kJsonSchemaVersion}, {"jobs", json::array()}};
    json& jobs = doc["jobs"];
    for (const JobRecord& r : rows) {
      if (!pick.Keeps(r)) continue;
      json j = JobToJson(r);
      j["user"] = context.user(r.uid);
      j["elapsed_seconds"] = ElapsedSeconds(r, now);
      // A live job's lease (else null); one that waits for it, or for room to join an MPS
      // server, shows the table's REASON.
      auto lease = context.leases.find(r.id);
      j["lease"] = lease != context.leases.end() ? json(lease->second.lease) : json(nullptr);
      if (std::string live = LiveReason(r, context); !live.empty()) j["reason"] = live;
      jobs.push_back(std::move(j));
    }
    std::string text = ToJsonText(doc, 2);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  if (opt.long_form || !opt.format.empty()) {
    std::vector<QueueColumn> columns = LongQueueFormat();
    if (!opt.format.empty()) {
      Result<std::vector<QueueColumn>> parsed = ParseQueueFormat(opt.format);
      if (!parsed.ok()) {
        spdlog::error("queue: --format: {}", parsed.status().message());
        return kExitUsage;
      }
      columns = std::move(parsed.value());
    }
    // Columns fit their widest cell, so the rows are read before the first is printed; the
    // summary rows stream when no column needs more.
    std::vector<JobRecord> rows;
    Status st;
    if (std::any_of(columns.begin(), columns.end(),
                    [](const QueueColumn& c) { return c.needs_full_record; })) {
      Result<std::vector<JobRecord>> listed = ListJobs(global, filter, opt.user);
      if (listed.ok()) {
        for (JobRecord& r : listed.value()) {
          if (pick.Keeps(r)) rows.push_back(std::move(r));
        }
      }
      st = listed.ok() ? Status::Ok() : listed.status();
    } else {
      st = ForEachJob(global, filter, opt.user, [&rows, &pick](const JobRecord& r) {
        if (pick.Keeps(r)) rows.push_back(r);
      });
    }
    if (!st.ok()) {
      spdlog::error("queue: {}", st.message());
      return kExitError;
    }
    std::string table = FormatQueueTable(columns, rows, context, !opt.no_header, ColorOnStdout());
    std::fwrite(table.data(), 1, table.size(), stdout);
    return 0;
  }
  // The table streams: 100,000 rows are printed as SQLite reads them.
  const bool color = ColorOnStdout();
  bool header = !opt.no_header;
  Status st = ForEachJob(global, filter, opt.user, [&](const JobRecord& r) {
    if (!pick.Keeps(r)) return;
    if (header) {
      PrintHeader();
      header = false;
    }
    // Names, GPU specs and reasons are the submitter's text: escaped for the terminal.
    const std::string gpu = TerminalText(!r.slot.empty() ? r.slot : r.gpu);
    std::printf("%-7lld %s%-3s%s %5d %s %10s %-5s %s\n", static_cast<long long>(r.id),
                color ? StateColor(r.state) : "", JobStateCode(r.state), color ? "\033[0m" : "",
                r.priority, FitColumn(TerminalText(r.name), kNameColumn).c_str(),
                ElapsedText(ElapsedSeconds(r, now)).c_str(), gpu.empty() ? "-" : gpu.c_str(),
                TerminalText(QueueReason(r, context)).c_str());
  });
  if (!st.ok()) {
    spdlog::error("queue: {}", st.message());
    return kExitError;
  }
  if (header) PrintHeader();
  return 0;
}

}  // namespace

namespace {

// Pauses or resumes the daemon's queue; says on stderr what it left.
int SetPaused(const GlobalOptions& global, bool paused) {
  Result<json> reply = RequestDaemon(global, proto::MsgType::kQueueSet,
                                     QueueSetRequest{paused, std::nullopt}.ToJson(), true);
  if (!reply.ok()) {
    spdlog::error("queue {}: {}", paused ? "pause" : "resume", reply.status().message());
    return ExitFor(reply.status());
  }
  spdlog::info("{}", reply->value("paused", false)
                         ? "queue paused: no submitted job starts until `gshare queue resume`"
                         : "queue running");
  return 0;
}

}  // namespace

void AddQueueCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<QueueOptions>();
  sub.add_flag("-a,--all", opt->all, "Every job, ended ones too");
  sub.add_option("-t,--state", opt->states, "Only these states: PD,R,CD,F,CA,TO,LO or names");
  sub.add_option("-n,--name", opt->names, "Only jobs of these names (comma-separated)")
      ->delimiter(',');
  CLI::Option* user_opt =
      sub.add_option("-u,--user", opt->user, "Only jobs of this user (name or uid)");
  sub.add_flag("--me", opt->me, "Only your own jobs")->excludes(user_opt);
  sub.add_option("-j,--jobs", opt->jobs,
                 "Only these jobs, in any state (comma-separated ids; an array's id: its tasks; "
                 "J_T: one task)")
      ->delimiter(',')
      ->check(JobIdCheck());
  sub.add_option("-i,--iterate", opt->iterate_s, "Print again every SECONDS until interrupted")
      ->check(CLI::Range(0.1, 86400.0));
  CLI::Option* json_flag = sub.add_flag("--json", opt->json_output, "Print one JSON document");
  CLI::Option* long_flag =
      sub.add_flag("-l,--long", opt->long_form,
                   "Long form: ID ARRAY ST PRI USER NAME TIME GPU REASON COMMAND, names whole");
  sub.add_option("-O,--format", opt->format,
                 "Columns to show, comma-separated (squeue --Format names): " + QueueFieldNames())
      ->excludes(long_flag)
      ->excludes(json_flag);
  long_flag->excludes(json_flag);
  sub.add_flag("--no-header", opt->no_header, "No header line");
  sub.footer(
      "Examples:\n"
      "  gshare queue                    # running, then pending in start order\n"
      "  gshare queue -a -t F,TO         # failed and timed-out jobs\n"
      "  gshare queue --json | jq '.jobs[] | select(.reason == \"Dependency\") | .id'\n"
      "  gshare queue --format=jobid,jobarrayid,name,state,command\n"
      "Columns: ID, ST (PD pending, R running, CD completed, F failed, CA cancelled, TO timeout,\n"
      "LO lost), PRI, NAME, TIME (run time), GPU, REASON (why pending; how it ended).");
  // `gshare queue pause|resume` (pueue's pause and start): no submitted job starts meanwhile.
  for (bool paused : {true, false}) {
    CLI::App* action = sub.add_subcommand(
        paused ? "pause" : "resume",
        paused ? "Start no submitted job until `queue resume` (running ones go on)"
               : "Start submitted jobs again");
    action->callback([opt, paused]() { opt->pause = paused; });
  }
  *handler = [opt, &global]() {
    if (opt->pause) return SetPaused(global, *opt->pause);
    if (opt->iterate_s <= 0) return ShowQueue(global, *opt);
    // squeue -i: a dated table every SECONDS, until interrupted or the table fails.
    for (bool first = true;; first = false) {
      if (!first) {
        std::this_thread::sleep_for(std::chrono::duration<double>(opt->iterate_s));
        std::printf("\n");
      }
      const std::time_t now = std::time(nullptr);
      char when[64];
      std::strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", std::localtime(&now));
      std::printf("%s\n", when);
      std::fflush(stdout);
      int rc = ShowQueue(global, *opt);
      std::fflush(stdout);
      if (rc != 0) return rc;
    }
  };
}

}  // namespace gshare
