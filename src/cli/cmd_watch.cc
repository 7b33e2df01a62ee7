// Commands that watch jobs end: `gshare wait ID...` and `gshare logs [-f] ID`. Both read the
// database (written by the daemon) and poll it; neither loads a user's daemon (the system
// daemon is asked instead: cli/job_source.h). The log itself is read by the user.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/cli.h"
#include "ipc/frame_io.h"
#include "model/job_record.h"
#include "base/user_name.h"
#include "policy/access.h"
#include "policy/admission.h"

namespace gshare {
namespace {

// Polling interval: short at first (jobs that end at once), then at most this.
constexpr auto kMaxPoll = std::chrono::milliseconds(250);

struct LogsOptions {
  std::string id_text;           // a JobRef
  int64_t id = 0;                // the job it names
  std::optional<int64_t> lines;  // -n: only the last this many lines (tail -n)
  bool follow = false;
};

// Opens the job source once a daemon runs; errors are printed.
std::unique_ptr<JobSource> OpenStore(const GlobalOptions& global, ClientContext* ctx_out) {
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) {
    spdlog::error("{}", ctx.status().message());
    return nullptr;
  }
  auto store = JobSource::Open(*ctx, true);
  if (!store.ok()) {
    spdlog::error("{}", store.status().message());
    return nullptr;
  }
  if (!store.value()) spdlog::error("no job was ever recorded ({})", ctx->database_path);
  *ctx_out = std::move(ctx.value());
  return std::move(store.value());
}

// The job's current row; nullopt (with an error printed) when there is none. With `patience`
// (a command waiting for the job's end), a daemon that does not answer in time is asked again
// until it does: its hang is not the job's end. *patience is set once that was said.
std::optional<JobRecord> Lookup(JobSource& store, int64_t id, bool* patience = nullptr) {
  for (;;) {
    auto row = store.Get(id);
    if (!row.ok() && patience != nullptr && IsDaemonTimeout(row.status())) {
      if (!*patience) spdlog::warn("{}; still waiting for job {}", row.status().message(), id);
      *patience = true;
      continue;  // Get waited its timeout already
    }
    if (!row.ok()) {
      spdlog::error("{}", row.status().message());
      return std::nullopt;
    }
    if (!row.value()) spdlog::error("no job {}", id);
    return row.value();
  }
}

// What a command blocked on job `r` says once it sees `r` pending for a person (held, the queue
// paused), for a time (--begin), or for ever (a dependency that can never be satisfied):
// the line, empty when the wait is the queue's usual one; *never when it can never start.
std::string PendingNotice(const JobRecord& r, bool* never) {
  *never = false;
  if (r.state != JobState::kPending) return "";
  const std::string id = std::to_string(r.id);
  if (r.reason == kReasonHeld) {
    return "job " + id + " is held (JobHeldUser): it starts after `gshare release " + id +
           "`; waiting";
  }
  if (r.reason == kReasonPaused) {
    return "the queue is paused (QueuePaused): job " + id +
           " starts after `gshare queue resume`; waiting";
  }
  if (r.reason == kReasonBeginTime) {
    return "job " + id + " starts at its --begin time (BeginTime); waiting";
  }
  if (r.reason == kReasonDependencyNever) {
    *never = true;
    return "job " + id +
           " can never start: a job it depends on ended as its dependency excludes "
           "(DependencyNeverSatisfied); `gshare cancel " +
           id + "`, or change it with `gshare update " + id + " -d ...`";
  }
  return "";
}

// Says PendingNotice of `r` once per reason (`*said` keeps the last one said): a warning
// line, or an error for a job that can never start (then true: stop waiting).
bool SayPending(const char* command, const JobRecord& r, std::string* said) {
  bool never = false;
  std::string line = PendingNotice(r, &never);
  if (line.empty() || line == *said) return never;
  *said = line;
  if (never) {
    spdlog::error("{}: {}", command, line);
  } else {
    spdlog::warn("{}: {}", command, line);
  }
  return never;
}

void Sleep(std::chrono::milliseconds* interval) {
  std::this_thread::sleep_for(*interval);
  *interval = std::min(kMaxPoll, *interval * 2);
}

}  // namespace

int WaitForJobs(const GlobalOptions& global, const std::vector<std::string>& refs) {
  ClientContext ctx;
  std::unique_ptr<JobSource> store = OpenStore(global, &ctx);
  if (!store) return kExitError;
  // Array tasks named J_T are waited for alone; an array's own id stands for all its tasks.
  std::vector<int64_t> named, ids;
  if (Status st = ResolveJobRefs(global, refs, &named, &ids); !st.ok()) {
    spdlog::error("wait: {}", st.message());
    return kExitError;
  }
  int status = 0;
  for (int64_t id : named) {  // check every id before waiting for any
    std::optional<JobRecord> r = Lookup(*store, id);
    if (!r) return kExitError;
    if (!(r->IsArrayTask() && r->array_job_id == id)) {
      ids.push_back(id);
      continue;
    }
    // An array's id: every task of it, as `sbatch --wait` waits for a whole array.
    ListFilter tasks;
    tasks.array_job_id = id;
    Result<std::vector<JobRecord>> all = store->List(tasks);
    if (!all.ok()) {
      spdlog::error("{}", all.status().message());
      return kExitError;
    }
    for (const JobRecord& task : all.value()) ids.push_back(task.id);
  }
  bool said = false;  // that the daemon did not answer, once
  for (int64_t id : ids) {
    std::chrono::milliseconds interval(10);
    std::string pending_said;
    for (;;) {
      std::optional<JobRecord> r = Lookup(*store, id, &said);
      if (!r) return kExitError;  // cleaned meanwhile
      if (IsFinal(r->state)) {
        status = std::max(status, JobShellStatus(*r));
        break;
      }
      if (SayPending("wait", *r, &pending_said)) return kExitError;
      Sleep(&interval);
    }
  }
  return status;
}

namespace {

// Copies what `in` has beyond what was read so far to stdout.
void Drain(std::ifstream& in) {
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    std::fwrite(buf, 1, static_cast<size_t>(in.gcount()), stdout);
  }
  in.clear();  // EOF now; the job may write more
  std::fflush(stdout);
}

// Places `in` at the start of its last `lines` lines (a last line without its newline counts),
// reading back from the end a block at a time: a log of gigabytes costs what its tail does.
void SeekToLastLines(std::ifstream& in, int64_t lines) {
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (lines == 0) return;
  std::streamoff pos = size;
  int64_t newlines = 0;
  char buf[65536];
  bool last_byte = true;  // a newline that ends the file ends the last line
  while (pos > 0) {
    const std::streamoff n = std::min<std::streamoff>(pos, sizeof buf);
    pos -= n;
    in.seekg(pos);
    in.read(buf, n);
    for (std::streamoff i = n - 1; i >= 0; --i) {
      if (buf[i] != '\n') {
        last_byte = false;
        continue;
      }
      if (last_byte) {
        last_byte = false;
        continue;
      }
      if (++newlines == lines) {
        in.clear();
        in.seekg(pos + i + 1);
        return;
      }
    }
  }
  in.clear();
  in.seekg(0);
}

int Logs(const GlobalOptions& global, const LogsOptions& opt) {
  ClientContext ctx;
  std::unique_ptr<JobSource> store = OpenStore(global, &ctx);
  if (!store) return kExitError;
  std::optional<JobRecord> r = Lookup(*store, opt.id);
  if (!r) return kExitError;
  if (store->Hidden(opt.id)) {
    spdlog::error("{}job {} belongs to {}: only its owner or an admin may read its output",
                  kPermissionDenied, opt.id, UserName(r->uid));
    return kExitDenied;
  }
  if (r->output.empty()) {
    spdlog::error("job {} wrote to the terminal of its `gshare run` (no --output)", opt.id);
    return kExitError;
  }
  const std::string path = JobFilePath(r->output, *r, UserName(r->uid));
  std::ifstream in;
  std::chrono::milliseconds interval(10);
  bool said = false;  // that the daemon did not answer, once
  std::string pending_said;
  // The file may appear only once the job starts; -n applies to what it has when first opened.
  const auto open_and_drain = [&in, &path, &opt] {
    if (!in.is_open()) {
      in.open(path, std::ios::binary);
      if (in.is_open() && opt.lines) SeekToLastLines(in, *opt.lines);
    }
    if (in.is_open()) Drain(in);
  };
  for (;;) {
    open_and_drain();
    if (!opt.follow) break;
    if (SayPending("logs", *r, &pending_said)) return kExitError;
    if (IsFinal(r->state)) {
      open_and_drain();
      return JobShellStatus(*r);
    }
    Sleep(&interval);
    r = Lookup(*store, opt.id, &said);
    if (!r) return kExitError;
  }
  if (!in.is_open()) {
    if (r->state == JobState::kPending) return 0;  // nothing written yet
    spdlog::error("cannot read {}", path);
    return kExitError;
  }
  return 0;
}

}  // namespace

void AddWaitCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<std::vector<std::string>>();  // JobRefs
  sub.add_option("ids", *opt, "Job ids (an array's id: all its tasks; J_T: one task)")
      ->required()
      ->check(JobIdCheck());
  sub.footer(
      "Examples:\n  gshare wait 12 && echo done\n"
      "  id=$(gshare submit -- ./train.sh); gshare wait $id; echo \"exit $?\"\n"
      "Exit status: the job's (COMPLETED 0, FAILED its code or 128+signal, TIMEOUT 124,\n"
      "CANCELLED 143 or 128+signal, LOST 125); the highest of several; 1 for an unknown job\n"
      "or one that can never start (DependencyNeverSatisfied). A job held, or waiting for the\n"
      "paused queue or its --begin time, is named once on stderr.");
  *handler = [opt, &global]() { return WaitForJobs(global, *opt); };
}

void AddLogsCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<LogsOptions>();
  sub.add_option("id", opt->id_text, "Job id (or J_T, a task of array J)")
      ->required()
      ->check(JobIdCheck());
  sub.add_flag("-f,--follow", opt->follow, "Follow the output until the job ends");
  sub.add_option("-n,--lines", opt->lines, "Only the last N lines (then follow, with -f)")
      ->check(CLI::Range(int64_t{0}, INT64_MAX));
  sub.footer(
      "Examples:\n  gshare logs 12\n  gshare logs -f 12     # exits with the job's status when it "
      "ends");
  *handler = [opt, &global]() {
    std::optional<int64_t> id = ResolveJobText(global, opt->id_text, "logs");
    if (!id) return kExitError;
    opt->id = *id;
    return Logs(global, *opt);
  };
}

}  // namespace gshare
