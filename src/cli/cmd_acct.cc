// `gshare acct [-S TIME] [-E TIME] [-s STATES] [-u USER | -a] [-j IDS] [-o FIELDS] [-P | -p]
// [-n] [--json]`: the history of jobs as sacct(1) shows it, one line per run (a requeued job's
// earlier runs too), read straight from the database as `queue` reads it (through the system
// daemon for its users) and printed as it streams.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "base/begin_time.h"
#include "base/user_name.h"
#include "cli/acct_format.h"
#include "cli/cli.h"
#include "ipc/job_json.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct AcctOptions {
  std::string since;
  std::string until;
  std::string states;
  std::string user;
  bool all_users = false;
  std::string jobs;
  std::string format;
  bool long_form = false;  // -l: every field
  bool json_output = false;
  bool no_header = false;
  bool parsable = false;
  bool parsable2 = false;
  bool sacct_only = false;  // -X, -D: nothing to change here
};

// The state list without REQUEUED / RQ, which no job row holds (only earlier runs); *requeued
// tells whether it named them.
std::string TakeRequeued(const std::string& list, bool* requeued) {
  std::string rest;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    std::string upper = item;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "RQ" || upper == "REQUEUED") {
      *requeued = true;
    } else {
      rest += (rest.empty() ? "" : ",") + item;
    }
  }
  return rest;
}

int ShowAcct(const GlobalOptions& global, const AcctOptions& opt) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  RunFilter filter;
  std::set<int64_t> ids;
  if (!opt.jobs.empty()) {
    Result<std::set<int64_t>> parsed = ParseJobIds(opt.jobs);
    if (!parsed.ok()) {
      spdlog::error("acct: {}", parsed.status().message());
      return kExitUsage;
    }
    ids = std::move(parsed.value());
  }
  // sacct's window: from 00:00 today until now; all time for the jobs that --jobs names.
  Result<double> since = !opt.since.empty() ? ParsePastTime(opt.since, now)
                         : ids.empty()      ? ParsePastTime("today", now)
                                            : Result<double>(0.0);
  Result<double> until = opt.until.empty() ? Result<double>(now) : ParsePastTime(opt.until, now);
  for (const Result<double>* t : {&since, &until}) {
    if (!t->ok()) {
      spdlog::error("acct: {}", t->status().message());
      return kExitUsage;
    }
  }
  filter.since = since.value();
  filter.until = until.value();
  Result<std::set<JobState>> states = ParseStates(TakeRequeued(opt.states, &filter.requeued));
  if (!states.ok()) {
    spdlog::error("acct: {}", states.status().message());
    return kExitUsage;
  }
  filter.states = std::move(states.value());
  std::vector<AcctField> fields = opt.long_form ? LongAcctFormat() : DefaultAcctFormat();
  if (!opt.format.empty()) {
    Result<std::vector<AcctField>> parsed = ParseAcctFormat(opt.format);
    if (!parsed.ok()) {
      spdlog::error("acct: --format: {}", parsed.status().message());
      return kExitUsage;
    }
    fields = std::move(parsed.value());
  }
  // sacct shows a user their own jobs, root everyone's; -a everyone's, -u one user's.
  std::string user = opt.user;
  if (user.empty() && !opt.all_users && getuid() != 0) user = std::to_string(getuid());

  std::map<uint32_t, std::string> names;  // one password-database lookup per owner
  AcctContext context{now, [&names](uint32_t uid) {
                        auto name = names.find(uid);
                        if (name == names.end()) name = names.emplace(uid, UserName(uid)).first;
                        return name->second;
                      }};
  const AcctStyle style = opt.parsable2  ? AcctStyle::kParsable2
                          : opt.parsable ? AcctStyle::kParsable
                                         : AcctStyle::kTable;
  // Lines go out in large writes: 100,000 runs are one stream, not 100,000 flushes.
  static char buffer[1 << 16];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  bool first = true;
  if (opt.json_output) {
    std::printf("{\"schema_version\": %d, \"jobs\": [", kJsonSchemaVersion);
  } else if (!opt.no_header) {
    std::fputs(AcctHeader(fields, style).c_str(), stdout);
  }
  Status st = ForEachRun(global, filter, user, [&](const JobRun& run) {
    if (!ids.empty() && ids.count(run.job.id) == 0) return;
    if (opt.json_output) {
      std::fputs(first ? "\n" : ",\n", stdout);
      std::fputs(ToJsonText(AcctJson(run, context)).c_str(), stdout);
    } else {
      std::fputs(AcctLine(fields, run, context, style).c_str(), stdout);
    }
    first = false;
  });
  if (opt.json_output) std::fputs(first ? "]}\n" : "\n]}\n", stdout);
  std::fflush(stdout);
  if (!st.ok()) {
    spdlog::error("acct: {}", st.message());
    return kExitError;
  }
  return 0;
}

}  // namespace

void AddAcctCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<AcctOptions>();
  sub.add_option("-S,--starttime,--since", opt->since,
                 "Runs not ended before TIME (default: 00:00 today): YYYY-MM-DD[THH:MM[:SS]], "
                 "HH:MM, now-2hours, now-1day, today, yesterday, @UNIX");
  sub.add_option("-E,--endtime,--until", opt->until,
                 "Runs submitted before TIME (default: now), same forms");
  sub.add_option("-s,--state", opt->states,
                 "Only runs in these states: PD,R,S,CD,F,CA,TO,LO,RQ (REQUEUED) or names");
  CLI::Option* user_opt = sub.add_option("-u,--user", opt->user, "Only jobs of this user");
  sub.add_flag("-a,--allusers", opt->all_users, "Every user's jobs (default: your own)")
      ->excludes(user_opt);
  sub.add_option("-j,--jobs", opt->jobs, "Only these jobs (comma-separated ids), of any time");
  CLI::Option* format_opt =
      sub.add_option("-o,--format", opt->format,
                     "Fields, comma-separated, FIELD%N for a width: " + AcctFieldNames());
  sub.add_flag("-l,--long", opt->long_form, "Every field (sacct's --long)")->excludes(format_opt);
  CLI::Option* json_flag = sub.add_flag("--json", opt->json_output, "Print one JSON document");
  sub.add_flag("-n,--noheader", opt->no_header, "No heading");
  CLI::Option* p2 =
      sub.add_flag("-P,--parsable2", opt->parsable2, "Fields separated by '|', none at the end");
  CLI::Option* p1 =
      sub.add_flag("-p,--parsable", opt->parsable, "Fields separated by '|', one at the end");
  p1->excludes(p2)->excludes(json_flag);
  p2->excludes(json_flag);
  // gshare jobs have no steps and acct lists every run: sacct's -X and -D change nothing.
  sub.add_flag("-X,--allocations", opt->sacct_only,
               "Accepted for sacct's sake: gshare jobs have no steps");
  sub.add_flag("-D,--duplicates", opt->sacct_only,
               "Accepted for sacct's sake: every run is listed anyway");
  sub.footer(
      "Examples:\n"
      "  gshare acct                          # your jobs since midnight\n"
      "  gshare acct -S now-7days -s F,TO      # failed and timed-out runs of the week\n"
      "  gshare acct -o JobID,JobName%40,Elapsed,GPUTime,PeakMem -P\n"
      "  gshare acct -j 12 --json | jq '.jobs[].exit'\n"
      "One line per run: a requeued job's earlier runs come first, with its JobID.");
  *handler = [opt, &global]() { return ShowAcct(global, *opt); };
}

}  // namespace gshare
