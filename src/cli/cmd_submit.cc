// `gshare submit [job options] [--] CMD [ARGS...]`, `gshare submit [job options] --script
// FILE [ARGS...]`, `gshare submit [job options] SCRIPT [ARGS...]` and `gshare submit [job
// options] --wrap CMD`: queues a job (or a job array, --array) and prints its id. Snapshots
// the environment and the working directory; no terminal, no prompt (cron-safe).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>
#include <nlohmann/json.hpp>

#include "base/program_path.h"
#include "cli/cli.h"
#include "cli/daemon_glance.h"
#include "ipc/daemon_launcher.h"
#include "ipc/frame_io.h"
#include "ipc/job_json.h"
#include "ipc/requests.h"
#include "ipc/replies.h"
#include "base/array_spec.h"
#include "cli/job_options.h"

extern char** environ;

namespace gshare {
namespace {

// Tries of a submit whose connection the daemon closed before replying (it died: the next
// try starts a new one, which takes ~0.1 s).
constexpr int kSubmitAttempts = 4;

// 128 random bits in hex: unique among submissions without coordination.
std::string NewSubmitKey() {
  unsigned char bytes[16] = {};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, bytes, sizeof bytes) : -1;
  if (fd >= 0) close(fd);
  std::string key;
  if (got != static_cast<ssize_t>(sizeof bytes)) {
    // No urandom: the pid and the clock still separate submissions of this machine.
    key = std::to_string(getpid()) + "-" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    return key;
  }
  static const char* kHex = "0123456789abcdef";
  for (unsigned char b : bytes) {
    key += kHex[b >> 4];
    key += kHex[b & 15];
  }
  return key;
}

using json = nlohmann::json;

struct SubmitOptions {
  JobOptions job;
  bool wait = false;      // --wait: then wait for the job's end, exiting with its status
  bool parsable = false;  // --parsable: the id alone (what submit prints anyway)
  std::string script;
  std::optional<std::string> wrap;  // --wrap CMD: `/bin/sh -c CMD`
  std::vector<std::string> command;
};

// sbatch's name of a --wrap job.
constexpr const char* kWrapName = "wrap";

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

// The largest batch script `submit` reads (documented in docs/cli.md): far above any real
// script, far below the daemon's request limit (protocol.h kMaxRequestPayload).
constexpr size_t kMaxScriptBytes = 1024 * 1024;

// The whole file at `path`; errors (missing, unreadable, a directory, a device or FIFO, over
// kMaxScriptBytes) are one line. Opened O_NONBLOCK so that a FIFO cannot block the open; only
// a regular file is read, and never more than the limit (a file may grow while read).
Result<std::string> ReadScript(const std::string& path) {
  auto fail = [&path](const std::string& why) {
    return Status::Error("cannot read script " + path + ": " + why);
  };
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail("not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxScriptBytes) {
    close(fd);
    return fail("larger than 1 MiB");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return fail(std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxScriptBytes) {
      close(fd);
      return fail("larger than 1 MiB");
    }
  }
  close(fd);
  return text;
}

// sbatch's `sbatch job.sh`: a first word without '/' that no PATH lookup finds but that is a
// regular file in the working directory is a batch script there (as --script ./job.sh).
bool IsScriptInCwd(const std::string& word) {
  if (word.empty() || word.find('/') != std::string::npos || !FindProgram(word).empty())
    return false;
  struct stat st;
  return stat(word.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// sbatch's `sbatch ./job.sh`: a first word with a '/' that names a readable regular file of
// at most kMaxScriptBytes whose first line is a "#!" line is a batch script (as --script):
// its #GSHARE lines give options. A program (an ELF file, a script without "#!") stays a
// command, run as it is.
bool IsShebangScript(const std::string& word) {
  if (word.find('/') == std::string::npos) return false;
  int fd = open(word.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st;
  char head[2] = {};
  const bool script = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                      static_cast<uint64_t>(st.st_size) <= kMaxScriptBytes &&
                      read(fd, head, sizeof head) == 2 && head[0] == '#' && head[1] == '!';
  close(fd);
  return script;
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
  if (opt.wrap) {
    if (!argv.empty() || !opt.script.empty()) {
      return Usage("--wrap takes no command and no --script: the command is its value");
    }
    argv = {"/bin/sh", "-c", *opt.wrap};
    if (opt.job.name.empty()) opt.job.name = kWrapName;
  } else if (opt.script.empty() && !argv.empty()) {
    if (IsScriptInCwd(argv.front())) {
      opt.script = "./" + argv.front();
      argv.erase(argv.begin());
    } else if (IsShebangScript(argv.front())) {
      opt.script = argv.front();
      argv.erase(argv.begin());
    }
  }
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
  if (!opt.job.array.empty()) {
    Result<ArraySpec> spec = ParseArraySpec(opt.job.array);
    if (!spec.ok()) {
      return Usage("--array \"" + opt.job.array + "\": " + spec.status().message());
    }
  }
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) {
    spdlog::error("{}", ctx.status().message());
    return kExitError;
  }
  Result<JobRecord> record = ResolveJobOptions(opt.job, argv, ctx->config, WallClockNow());
  if (!record.ok()) return Usage(record.status().message());
  // Here, as the user the job runs as: the daemon (root, for the system daemon) could not
  // tell, and the job would only fail when it starts, maybe hours later.
  if (Status paths = CheckJobPaths(record.value()); !paths.ok()) {
    spdlog::error("submit: {}", paths.message());
    return kExitError;
  }
  SubmitRequest submit;
  submit.job = std::move(record.value());
  submit.env = SnapshotEnvironment(opt.job.env);
  submit.script = script_text;
  submit.array = opt.job.array;
  // A daemon that dies after storing the job but before its reply leaves the submit unsure
  // whether the job exists: the retry carries the same key, and the daemon answers with the
  // job the first attempt made instead of a second one. A daemon killed just before the
  // connect (or one that died starting) got nothing: trying again is as safe.
  submit.submit_key = NewSubmitKey();
  const json request = submit.ToJson();
  Result<json> reply = Status::Error("");
  for (int attempt = 0; attempt < kSubmitAttempts; ++attempt) {
    reply = RequestDaemon(global, proto::MsgType::kSubmit, request, true);
    if (reply.ok() || !(IsLostConnection(reply.status()) || IsDaemonUnreachable(reply.status()))) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200) * (attempt + 1));
  }
  if (!reply.ok()) {
    spdlog::error("submit: {}{}", reply.status().message(),
                  IsDaemonTimeout(reply.status())
                      ? "; it may still queue the job when it answers (gshare queue)"
                      : "");
    return ExitFor(reply.status());
  }
  Result<JobIdReply> made = JobIdReply::Parse(reply.value());
  if (!made.ok()) {
    spdlog::error("submit: {}", made.status().message());
    return kExitError;
  }
  std::printf("%lld\n", static_cast<long long>(made->job_id));
  std::fflush(stdout);
  GlanceAtDaemon(global);  // the config notice, if any
  if (opt.wait) return WaitForJobs(global, {std::to_string(made->job_id)});
  return 0;
}

}  // namespace

void AddSubmitCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<SubmitOptions>();
  AddJobOptions(sub, &opt->job);
  AddBatchOptions(sub, &opt->job);
  sub.add_option("--script", opt->script,
                 "Batch script to run; its #GSHARE lines give options (the command line wins)");
  sub.add_option("--wrap", opt->wrap, "Run this command line with /bin/sh -c (job name: wrap)");
  sub.add_flag("-W,--wait", opt->wait,
               "Wait for the job to end (an array: every task) and exit with its status, as "
               "sbatch --wait");
  sub.add_flag("--parsable", opt->parsable, "Print the job id alone (the default; sbatch's)");
  sub.add_option("command", opt->command,
                 "The command and its arguments (with --script: the script's arguments)");
  sub.prefix_command();
  sub.footer(
      "Examples:\n"
      "  gshare submit -- python3 train.py --epochs 10\n"
      "  gshare submit -p 10 -J nightly -t 2:00:00 -o ~/logs/%x-%j.out -- ./nightly.sh\n"
      "  id=$(gshare submit -- ./prepare.sh); gshare submit --after $id -- ./train.sh\n"
      "  gshare submit --script job.sh      # job.sh holds lines like: #GSHARE -p 5 -t 30\n"
      "  gshare submit job.sh               # the same: a script in this directory (as sbatch)\n"
      "  gshare submit --array=0-9%2 -o 'out/%A_%a.log' ./sweep.sh   # 10 tasks, 2 at a time\n"
      "  gshare submit --wrap 'python3 eval.py > eval.txt'\n"
      "  crontab: 0 2 * * * /usr/local/bin/gshare submit -- /home/me/nightly.sh\n"
      "  gshare submit --wait -- ./eval.sh && echo passed   # blocks; the job's exit status\n"
      "Prints the job id. Exit status: 0; 1 on error (daemon, database, unreadable script);\n"
      "2 on bad usage; with --wait, the job's status as `gshare wait` gives it.");
  *handler = [opt, &global]() { return Submit(global, *opt); };
}

}  // namespace gshare
