#include "cli/job_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/begin_time.h"
#include "policy/dependency.h"
#include "base/duration.h"
#include "base/gpu_inventory.h"
#include "base/mail_type.h"
#include "base/signal_spec.h"
#include "base/user_name.h"
#include "cli/script_directives.h"

namespace gshare {

void AddJobOptions(CLI::App& app, JobOptions* opt) {
  auto add = [&](const char* long_name, CLI::Option* o) {
    opt->options.emplace_back(long_name, o);
  };
  add("name", app.add_option("-J,--name", opt->name, "Job name (default: the command)"));
  add("priority",
      app.add_option("-p,--priority", opt->priority,
                     "Priority in [-1000, 1000]; higher first, in the queue and on the GPU"));
  add("quantum",
      app.add_option("--quantum", opt->quantum,
                     "Time quantum on the GPU lease, e.g. 20s, 500ms, 2m (default from config)"));
  add("memory",
      app.add_option("--memory", opt->memory,
                     "Memory engine: swap (default: the job's GPU memory moves to host memory "
                     "while others run), managed (unified memory, prefetched at each grant) or "
                     "off (docs/memory.md)")
          ->check(CLI::IsMember(
              std::vector<std::string>(kMemoryEngines.begin(), kMemoryEngines.end()))));
  add("gpu", app.add_option("--gpu", opt->gpu,
                            "GPU index or UUID, or a comma-separated list of them: these GPUs "
                            "(default: the queue places the job where it runs soonest)"));
  add("gpus", app.add_option("--gpus", opt->gpus,
                             "Number of GPUs the job uses at once (default 1, or as many as --gpu "
                             "names); granted all at once or none (a gang lease)"));
  add("time", app.add_option("-t,--time", opt->time_limit,
                             "Time limit: minutes, MM:SS, HH:MM:SS, D-HH:MM:SS or 90s/1h30m; then "
                             "SIGTERM, SIGKILL after --kill-after, state TIMEOUT, exit 124"));
  add("kill-after",
      app.add_option("--kill-after", opt->kill_after,
                     "Grace from SIGTERM to SIGKILL for --time and cancel (default 30s)"));
  add("dependency",
      app.add_option("-d,--dependency", opt->dependency,
                     "afterok|afterany|afternotok:ID[:ID...][,...]: start only after these jobs"));
  add("after", app.add_option("--after", opt->after,
                              "ID[,ID...]: shorthand for --dependency afterok:ID..."));
  add("hold", app.add_flag("-H,--hold", opt->hold, "Queue held until `gshare release ID`"));
  add("begin",
      app.add_option("--begin", opt->begin,
                     "Not before: now+1h, 22:00, 2026-12-01T08:00, tomorrow, @UNIX_SECONDS"));
  add("output", app.add_option("-o,--output", opt->output,
                               "File for stdout and stderr: %j job id, %x name, %u user"));
  add("error", app.add_option("-e,--error", opt->error,
                              "File for stderr alone (default: with stdout), patterns as -o"));
  add("open-mode",
      app.add_option("--open-mode", opt->open_mode,
                     "append to the output files or truncate them (default) at each start"));
  add("signal", app.add_option("--signal", opt->signal,
                               "[B:]SIG[@SECONDS]: send SIG that long (default 60) before the "
                               "--time limit; B: to the main process only"));
  add("chdir", app.add_option("-D,--chdir", opt->chdir, "Working directory of the job"));
  add("mail-user", app.add_option("--mail-user", opt->mail_user,
                                  "Who the [notify] command tells of the job (default: you)"));
  add("mail-type", app.add_option("--mail-type", opt->mail_type,
                                  "Events for --mail-user: NONE BEGIN END FAIL REQUEUE TIME_LIMIT "
                                  "INVALID_DEPEND ALL, comma-separated"));
  // One value per --env, so that `--env K=V -- CMD` leaves CMD alone.
  add("env", app.add_option("--env", opt->env, "K=V set in the job's environment (repeatable)")
                 ->allow_extra_args(false));
}

void AddBatchOptions(CLI::App& app, JobOptions* opt) {
  opt->options.emplace_back(
      "array", app.add_option("-a,--array", opt->array,
                              "Job array: one job per task id, e.g. 0-9, 1,3,5, 0-15:4; %N: at "
                              "most N tasks running at once (0-9%2)"));
}

void JobOptions::MarkGiven() {
  given.clear();
  for (const auto& [name, option] : options) {
    if (option->count() > 0) given.insert(name);
  }
}

void JobOptions::Merge(const JobOptions& script) {
  auto take = [&](const char* name, auto& field, const auto& from) {
    if (given.count(name) == 0 && script.given.count(name) != 0) field = from;
  };
  take("name", name, script.name);
  take("priority", priority, script.priority);
  take("quantum", quantum, script.quantum);
  take("gpu", gpu, script.gpu);
  take("gpus", gpus, script.gpus);
  take("time", time_limit, script.time_limit);
  take("kill-after", kill_after, script.kill_after);
  take("dependency", dependency, script.dependency);
  take("after", after, script.after);
  take("hold", hold, script.hold);
  take("begin", begin, script.begin);
  take("output", output, script.output);
  take("error", error, script.error);
  take("open-mode", open_mode, script.open_mode);
  take("signal", signal, script.signal);
  take("chdir", chdir, script.chdir);
  take("memory", memory, script.memory);
  take("array", array, script.array);
  take("mail-user", mail_user, script.mail_user);
  take("mail-type", mail_type, script.mail_type);
  std::vector<std::string> all = script.env;
  all.insert(all.end(), env.begin(), env.end());
  env = std::move(all);
}

Result<JobOptions> ParseScriptOptions(const std::string& script_text, const std::string& path) {
  Result<std::vector<std::string>> tokens = ParseScriptDirectives(script_text);
  if (!tokens.ok()) return Status::Error(path + ": " + tokens.status().message());
  JobOptions opt;
  CLI::App app{"#GSHARE directives"};
  AddJobOptions(app, &opt);
  AddBatchOptions(app, &opt);
  app.allow_extras(false);
  // CLI11 parses a reversed vector of arguments.
  std::vector<std::string> args(tokens->rbegin(), tokens->rend());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Status::Error(path + ": #GSHARE: " + e.what());
  }
  opt.MarkGiven();
  opt.options.clear();  // they point into `app`, which ends here
  return opt;
}

namespace {

Result<int64_t> Milliseconds(const std::string& text, const char* option) {
  Result<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok()) return Status::Error(std::string(option) + ": " + d.status().message());
  return static_cast<int64_t>(d->count());
}

}  // namespace

Result<int> ParsePriority(const std::string& text) {
  const std::string range =
      "[" + std::to_string(kMinPriority) + ", " + std::to_string(kMaxPriority) + "]";
  size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  bool decimal = text.size() > digits && std::all_of(text.begin() + digits, text.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
  if (!decimal) {
    return Status::Error("--priority \"" + text + "\": expected a decimal integer in " + range);
  }
  // Compared as text past 9 digits so that no conversion can overflow.
  int value = text.size() - digits > 9 ? kMaxPriority + 1 : std::stoi(text.substr(digits));
  if (text[0] == '-') value = -value;
  if (value < kMinPriority || value > kMaxPriority) {
    return Status::Error("--priority \"" + text + "\": must be within " + range);
  }
  return value;
}

Result<JobRecord> ResolveJobOptions(const JobOptions& opt, std::vector<std::string> argv,
                                    const Config& config, double now) {
  JobRecord r;
  if (argv.empty()) return Status::Error("no command given");
  r.argv = std::move(argv);
  r.name = opt.name.empty() ? std::filesystem::path(r.argv[0]).filename().string() : opt.name;
  r.priority = config.scheduler.default_priority;
  if (opt.priority) {
    Result<int> p = ParsePriority(*opt.priority);
    if (!p.ok()) return p.status();
    r.priority = p.value();
  }
  r.quantum_ms = config.scheduler.quantum.count();
  if (!opt.quantum.empty()) {
    Result<int64_t> q = Milliseconds(opt.quantum, "--quantum");
    if (!q.ok()) return q.status();
    if (q.value() <= 0) return Status::Error("--quantum must be positive");
    r.quantum_ms = q.value();
  }
  r.gpu = opt.gpu;
  r.gpus = opt.gpus ? *opt.gpus : std::max<int>(1, static_cast<int>(SplitGpuList(r.gpu).size()));
  if (Status g = CheckGpuRequest(r.gpu, r.gpus, CountGpus(config.queue.gpus)); !g.ok()) return g;
  r.memory = ParseMemoryEngine(opt.memory.empty() ? config.memory.engine : opt.memory);
  if (!opt.time_limit.empty()) {
    Result<std::chrono::milliseconds> t = ParseTimeLimit(opt.time_limit);
    if (!t.ok()) return Status::Error("--time: " + t.status().message());
    r.time_limit_ms = t->count();
  }
  if (!opt.kill_after.empty()) {
    Result<int64_t> k = Milliseconds(opt.kill_after, "--kill-after");
    if (!k.ok()) return k.status();
    r.kill_after_ms = k.value();
  }
  std::vector<Dependency> deps;
  if (!opt.dependency.empty()) {
    Result<std::vector<Dependency>> d = ParseDependencies(opt.dependency);
    if (!d.ok()) return Status::Error("--dependency: " + d.status().message());
    deps = d.value();
  }
  if (!opt.after.empty()) {
    Result<std::vector<Dependency>> d = ParseAfter(opt.after);
    if (!d.ok()) return Status::Error("--after: " + d.status().message());
    deps.insert(deps.end(), d->begin(), d->end());
  }
  r.dependency = FormatDependencies(deps);
  r.held = opt.hold;
  if (!opt.begin.empty()) {
    Result<double> b = ParseBeginTime(opt.begin, now);
    if (!b.ok()) return Status::Error("--begin: " + b.status().message());
    r.begin_time = b.value();
  }
  r.output = opt.output;
  r.error = opt.error;
  if (!opt.open_mode.empty() && opt.open_mode != "append" && opt.open_mode != "truncate") {
    return Status::Error("--open-mode \"" + opt.open_mode + "\": expected append or truncate");
  }
  r.open_append = opt.open_mode == "append";
  if (!opt.signal.empty()) {
    Result<SignalSpec> s = ParseSignalSpec(opt.signal);
    if (!s.ok()) return s.status();
    if (r.time_limit_ms == 0) {
      return Status::Error("--signal " + opt.signal +
                           ": the job has no --time limit to send it before");
    }
    r.warn_signal = s->signal;
    r.warn_ms = s->before.count();
    r.warn_main_only = s->main_only;
  }
  if (!opt.mail_type.empty()) {
    Result<std::string> types = ParseMailTypes(opt.mail_type);
    if (!types.ok()) return types.status();
    r.mail_type = types.value();
  }
  if (Status st = CheckMailUser(opt.mail_user); !st.ok()) return st;
  // As sbatch: a mail type without a --mail-user tells the job's owner.
  r.mail_user = opt.mail_user.empty() && !r.mail_type.empty() ? UserName(getuid()) : opt.mail_user;
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec && opt.chdir.empty())
    return Status::Error("cannot read the working directory: " + ec.message());
  if (!opt.chdir.empty()) cwd = std::filesystem::absolute(opt.chdir, ec);
  r.cwd = cwd.lexically_normal().string();
  for (std::string* path : {&r.output, &r.error}) {
    if (!path->empty() && path->front() != '/') *path = r.cwd + "/" + *path;
  }
  for (const std::string& e : opt.env) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Error("--env: \"" + e + "\" is not K=V");
    }
  }
  return r;
}

namespace {

// Why `dir` is not a directory this process may use with `access_mode` (X_OK to enter it,
// W_OK|X_OK to make files in it), or "" when it is.
std::string UnusableDir(const std::string& dir, int access_mode) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    return errno == ENOENT ? "directory " + dir + " does not exist"
                           : "directory " + dir + ": " + std::strerror(errno);
  }
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
  if (access(dir.c_str(), access_mode) != 0)
    return "directory " + dir + ": " + std::strerror(errno);
  return "";
}

// The directory part of `path` ("/" for a file in the root).
std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// Why the job's output file `pattern` could not be made, or "" when it can.
std::string UnusableOutput(const std::string& pattern) {
  // Up to its first %-symbol the pattern names fixed directories; past it they depend on the
  // job (its id, name, array task) and may be made before it starts.
  const size_t symbol = pattern.find('%');
  const size_t last_slash = pattern.rfind('/');
  if (symbol == std::string::npos && access(pattern.c_str(), F_OK) == 0) {
    // An existing file (a log kept between runs, /dev/null) is written in place.
    return access(pattern.c_str(), W_OK) != 0 ? pattern + ": " + std::strerror(errno) : "";
  }
  if (symbol == std::string::npos || last_slash < symbol) {
    return UnusableDir(DirOf(pattern), W_OK | X_OK);
  }
  return UnusableDir(DirOf(pattern.substr(0, symbol)), X_OK);
}

}  // namespace

Status CheckJobPaths(const JobRecord& r) {
  if (std::string why = UnusableDir(r.cwd, X_OK); !why.empty()) {
    return Status::Error("--chdir: " + why);
  }
  // Empty: the daemon's own log directory (stdout), or with stdout (stderr).
  for (const auto& [option, pattern] :
       {std::pair{"--output ", &r.output}, {"--error ", &r.error}}) {
    if (pattern->empty()) continue;
    if (std::string why = UnusableOutput(*pattern); !why.empty()) {
      return Status::Error(option + *pattern + ": " + why);
    }
  }
  return Status::Ok();
}

}  // namespace gshare
