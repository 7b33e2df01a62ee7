// `gshare submit [job options] [--] CMD [ARGS...]` and `gshare submit [job options] --script
// FILE [ARGS...]`: queues a job and prints its id. Snapshots the environment and the working
// directory; no terminal, no prompt (cron-safe).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "job_json.h"
#include "job_options.h"

extern char** environ;

namespace gshare {
namespace {

using json = nlohmann::json;

struct SubmitOptions {
  JobOptions job;
  std::string script;
  std::vector<std::string> command;
};

// Our environment with each "K=V" of `overrides` replacing K (getenv finds the first entry of
// a name, so duplicates must not stay).
std::vector<std::string> SnapshotEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto key_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::set<std::string> replaced;
  for (const std::string& o : overrides) replaced.insert(key_of(o));
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    if (replaced.count(key_of(entry)) == 0) env.push_back(std::move(entry));
  }
  std::set<std::string> added;
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {  // the last --env K wins
    if (added.insert(key_of(*it)).second) env.push_back(*it);
  }
  return env;
}

double WallClockNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The whole file at `path`; errors (missing, unreadable, a directory) are one line.
Result<std::string> ReadScript(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::Error("cannot read script " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return Status::Error("cannot read script " + path + ": " + std::strerror(err));
  return text;
}

int Usage(const std::string& message) {
  spdlog::error("submit: {}", message);
  return kExitUsage;
}

int Submit(const GlobalOptions& global, SubmitOptions& opt) {
  if (!opt.command.empty() && opt.command.front() == "--") opt.command.erase(opt.command.begin());
  opt.job.MarkGiven();
  std::optional<std::string> script_text;
  std::vector<std::string> argv = opt.command;
  if (!opt.script.empty()) {
    Result<std::string> text = ReadScript(opt.script);
    if (!text.ok()) {
      spdlog::error("submit: {}", text.status().message());
      return kExitError;
    }
    script_text = std::move(text.value());
    Result<JobOptions> directives = ParseScriptOptions(*script_text, opt.script);
    if (!directives.ok()) return Usage(directives.status().message());
    opt.job.Merge(directives.value());
    argv.insert(argv.begin(), opt.script);
  }
  if (argv.empty()) return Usage("no command given (usage: gshare submit [options] -- CMD ...)");
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) {
    spdlog::error("{}", ctx.status().message());
    return kExitError;
  }
  Result<JobRecord> record = ResolveJobOptions(opt.job, argv, ctx->config, WallClockNow());
  if (!record.ok()) return Usage(record.status().message());
  json request = JobOptionsToJson(record.value());
  request["env"] = SnapshotEnvironment(opt.job.env);
  request["script"] = script_text ? json(*script_text) : json(nullptr);
  Result<json> reply = RequestDaemon(global, proto::MsgType::kSubmit, request, true);
  if (!reply.ok()) {
    spdlog::error("submit: {}", reply.status().message());
    return kExitError;
  }
  std::printf("%lld\n", static_cast<long long>(reply->at("job_id").get<int64_t>()));
  return 0;
}

}  // namespace

void AddSubmitCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<SubmitOptions>();
  AddJobOptions(sub, &opt->job);
  sub.add_option("--script", opt->script,
                 "Batch script to run; its #GSHARE lines give options (the command line wins)");
  sub.add_option("command", opt->command, "The command and its arguments (with --script: the script's arguments)");
  sub.prefix_command();
  sub.footer(
      "Examples:\n"
      "  gshare submit -- python3 train.py --epochs 10\n"
      "  gshare submit -p 10 -J nightly -t 2:00:00 -o ~/logs/%x-%j.out -- ./nightly.sh\n"
      "  id=$(gshare submit -- ./prepare.sh); gshare submit --after $id -- ./train.sh\n"
      "  gshare submit --script job.sh      # job.sh holds lines like: #GSHARE -p 5 -t 30\n"
      "  crontab: 0 2 * * * /usr/local/bin/gshare submit -- /home/me/nightly.sh\n"
      "Prints the job id. Exit status: 0; 1 on error (daemon, database, unreadable script);\n"
      "2 on bad usage.");
  *handler = [opt, &global]() { return Submit(global, *opt); };
}

}  // namespace gshare
