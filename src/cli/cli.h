// The CLI's shared pieces: global options, the command table (one row per subcommand, its
// handler in src/cli/cmd_<name>.cc) and the client context every command resolves its paths
// from. Main thread only.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "base/config.h"
#include "ipc/daemon_choice.h"
#include "ipc/frame_io.h"
#include "ipc/requests.h"
#include "gshare/protocol.h"
#include "cli/job_source.h"
#include "model/job_filters.h"
#include "model/job_record.h"
#include "base/status.h"

namespace gshare {

// Exit codes (docs/cli.md): data commands return 0 / 1 on error / 2 on bad usage; `run`,
// `wait` and `logs -f` return the job's status, or these, as timeout(1) and env(1) do.
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRunFailed = 125;
// `gshare daemon --foreground` when another daemon already serves its database or socket.
inline constexpr int kExitDaemonBusy = 3;
// `gshare daemon status` when no daemon answers (LSB's "program is not running").
inline constexpr int kExitNotRunning = 3;
// `gshare daemon ... --system` run by a user other than root.
inline constexpr int kExitNotRoot = 4;
// A request the daemon refused by its permission rules (policy/access.h): another user's job,
// an admin-only request, a priority above the user's ceiling.
inline constexpr int kExitDenied = 5;

// kExitDenied for a refusal by the permission rules, else kExitError.
int ExitFor(const Status& error);

struct GlobalOptions {
  std::optional<std::string> config_path;
  bool verbose = false;
};

using Handler = std::function<int()>;

struct CommandSpec {
  const char* name;
  const char* help;
  // Adds options to `sub` and stores the handler that runs when the command is chosen.
  void (*add)(CLI::App& sub, const GlobalOptions& global, Handler* handler);
  // Its handler reads every command's options from the parent (completion, man): the whole
  // table is built for it. Any other command named on the command line is built alone.
  bool reads_table = false;
};

// Every subcommand, in --help order.
extern const CommandSpec kCommands[];
extern const size_t kNumCommands;

// Paths and configuration a command works with.
struct ClientContext {
  Config config;
  ConfigSources config_sources;  // the files `config` was read from
  std::string config_path;       // explicit --config, or empty
  // Where the daemon of this database is reached: the live daemon's socket from its record
  // (daemon_record.h) when one serves elsewhere, else serve_socket_path.
  std::string socket_path;
  std::string serve_socket_path;  // where a daemon started with this context listens
  std::string lock_path;          // <database_path>.lock: one daemon per database
  std::string socket_lock_path;   // gshare.lock beside serve_socket_path
  std::string record_path;        // <state_dir>/daemon.json
  std::string state_dir;
  std::string database_path;  // <state_dir>/gshare.db
  std::string daemon_log;     // <state_dir>/daemon.log
  std::string self_exe;
  // kSystem: the machine's daemon (ipc/daemon_choice.h), never started by a client.
  DaemonScope scope = DaemonScope::kUser;
  // The daemon is this user's daemon of database_path (DaemonChoice::own_database): JobSource
  // reads the database directly. Otherwise it asks the daemon (the system daemon's database
  // is not readable by users; another state directory's is not database_path).
  bool own_database = true;
  bool starts_system = false;  // made by MakeSystemContext: ConnectToDaemon may start it
};

// A client's context: the daemon ChooseDaemon picks ($GSHARE_SOCKET or [daemon] socket, else
// the system daemon when it answers, else this user's) and, for a user's daemon, its paths.
// Every command that talks to a daemon, the Slurm hooks among them, starts here.
Result<ClientContext> MakeClientContext(const GlobalOptions& global);

// MakeClientContext without the system daemon: this user's own daemon, which `gshare daemon
// --foreground` (as the launcher starts it) serves whether or not a system daemon runs.
Result<ClientContext> MakeUserContext(const GlobalOptions& global);

// The system daemon's context (`gshare daemon --system`): its config (--config, else
// /etc/gshare/gshare.toml; no user's file), [system] socket and state_dir.
Result<ClientContext> MakeSystemContext(const GlobalOptions& global);

// Starts the daemon when none answers (detached, exactly one), then connects, checking the
// daemon as ConnectUnix does. `serving` (optional) gets the socket path that answered.
Result<int> ConnectToDaemon(const ClientContext& ctx, std::string* serving = nullptr);

// Connects to a running daemon without starting one.
Result<int> ConnectIfRunning(const ClientContext& ctx);

// One request/reply exchange for a data command: resolves the context, reaches the daemon
// (starting it when `start` is true), sends `request` and returns the parsed reply, waiting
// up to `timeout` for it (IsDaemonTimeout after). Errors (including a reply with "ok":
// false) come back as one-line messages.
Result<nlohmann::json> RequestDaemon(const GlobalOptions& global, proto::MsgType type,
                                     const nlohmann::json& request, bool start,
                                     std::chrono::milliseconds timeout = ReplyTimeout());

// A comma-separated list of job states, by name or Slurm code in any case ("PD,r,failed").
// Fails naming the first unknown one.
Result<std::set<JobState>> ParseStates(const std::string& list);

// A job id as a user writes it: decimal digits only, 1 to INT64_MAX. "-1", "0", "+3", "0x10"
// and a number past INT64_MAX are errors naming the text (never clamped to another job).
Result<int64_t> ParseJobId(const std::string& text);

// A job as a user names it: its id ("48"), or one task of a job array as Slurm writes it,
// J_T ("48_0": task 0 of array 48). An array's id alone stands for its tasks where a command
// acts on jobs (docs/cli.md); J_T is that task only.
struct JobRef {
  int64_t id = 0;               // the job's id, or the array's
  std::optional<int64_t> task;  // the task id, 0 to kMaxArrayTaskId
  std::string text;             // as written
};
// "N" as ParseJobId reads it, or "J_T" with J a job id and T a task id (digits, at most
// kMaxArrayTaskId); errors name the text.
Result<JobRef> ParseJobRef(const std::string& text);
// The job id `ref` names: its id, or the task's own id, read from the jobs (ListJobs); fails
// "no task T in job array J" (or the read's error).
Result<int64_t> ResolveJobRef(const GlobalOptions& global, const JobRef& ref);
// ParseJobRef and ResolveJobRef of `text`; on failure prints "COMMAND: <why>" and returns
// nullopt (the exit status is then kExitError: the check before it took bad usage).
std::optional<int64_t> ResolveJobText(const GlobalOptions& global, const std::string& text,
                                      const char* command);
// Each of `texts` (ParseJobRef): plain ids into *ids, array tasks into *exact_ids as their own
// ids. The first failure is returned, naming the text. Each array named is read once.
Status ResolveJobRefs(const GlobalOptions& global, const std::vector<std::string>& texts,
                      std::vector<int64_t>* ids, std::vector<int64_t>* exact_ids);

// `gshare wait REFS...`: blocks until the jobs end (an array's id: all its tasks); the exit
// status as `wait` gives it (the highest job status; 1 for an unknown job or one that can never
// start). Used by `submit --wait` too.
int WaitForJobs(const GlobalOptions& global, const std::vector<std::string>& refs);

// The CLI11 check of every option and positional that takes job ids (ParseJobRef): anything
// else is a usage error (exit 2), never sent to the daemon. `by_name`: the command also selects
// jobs with -n NAME, and a word given as an id gets "; jobs by name: -n WORD" in its error.
CLI::Validator JobIdCheck(bool by_name = false);

// The ids of a --jobs list: comma-separated job ids ("12,14"), each as ParseJobId reads it.
// Fails naming the first item that is not one.
Result<std::set<int64_t>> ParseJobIds(const std::string& list);

// The jobs matching `filter` and, when `user` (a login name or uid) is not empty, owned by that
// user; read from the database once a daemon runs. Errors are one line.
Result<std::vector<JobRecord>> ListJobs(const GlobalOptions& global, ListFilter filter,
                                        const std::string& user);

// Calls `row` for each job ListJobs would return, in queue order, with the columns of
// JobStore::ForEachInQueueOrder only, as they stream from the database.
Status ForEachJob(const GlobalOptions& global, ListFilter filter, const std::string& user,
                  const std::function<void(const JobRecord&)>& row);

// Calls `run` for each run of a job (`gshare acct`) matching `filter`, read as ListJobs reads;
// filter.uid is set from `user` (a login name or uid) when it is not empty. Errors are one
// line.
Status ForEachRun(const GlobalOptions& global, RunFilter filter, const std::string& user,
                  const std::function<void(const JobRun&)>& run);

// Sends a job-control request (protocol.h kJobControl) and prints one error line per id that
// failed. Returns 0 when all succeeded, kExitError otherwise.
// `command`: the word errors begin with (the command the user typed, such as "update" for
// its -p); "": the request's action.
int ControlJobs(const GlobalOptions& global, const JobControlRequest& request,
                const std::string& command = "");

// The status a shell would see for an ended job (docs/cli.md "Exit status"): COMPLETED 0,
// TIMEOUT 124, FAILED its exit code or 128+signal, CANCELLED 128+signal (else 143), LOST 125.
int JobShellStatus(const JobRecord& r);

// True when stdout is a terminal, NO_COLOR is unset or empty and TERM is not "dumb"
// (https://no-color.org).
bool ColorOnStdout();

}  // namespace gshare
