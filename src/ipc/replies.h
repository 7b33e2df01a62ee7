// The daemon's JSON replies to the CLI and runners as typed structs shared by both sides: the
// daemon builds the struct and sends ToJsonText(); the client reads it with Parse, which
// checks every field and never throws (a daemon of another version or a damaged reply is an
// error, not a crash). Every reply carries "ok"; a refusal is ErrorReply's
// {"ok": false, "error"}. Parse(ToJson()) gives back what was sent. Any thread.
// (Status replies are the documented `status --json` document, ipc/job_json.h.)
#pragma once

#include <csignal>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace gshare {

// A reply that refuses a request: {"ok": false, "error": message}.
std::string ErrorReply(const std::string& message);
// A reply that only says done: {"ok": true}.
std::string OkReply();
// The error of a reply with "ok": false (its "error", or "failed"), else Ok.
Status ReplyError(const nlohmann::json& reply);
// The kReply frame of `json_text`, the one encoder of the daemon's replies: a text over
// proto::kMaxReplyPayload, which no client reads, becomes an error reply that says so and
// how to ask for less, instead of a reply lost on the way.
std::string EncodeReply(const std::string& json_text);

// kSubmit and kRunRegister: {"ok", "job_id", "admitted"?, "existing"?, "token"?}
// Variables a job is launched with, beyond its own environment: (name, value) in order.
using LaunchEnv = std::vector<std::pair<std::string, std::string>>;
// As a JSON object; and back, refusing a name outside [A-Z_][A-Z0-9_]* or a value that is not
// a string (the field's name in the error).
nlohmann::json LaunchEnvToJson(const LaunchEnv& env);
Result<LaunchEnv> LaunchEnvFromJson(const nlohmann::json& j, const char* field);

struct JobIdReply {
  int64_t job_id = 0;
  bool admitted = true;   // kRunRegister: false while the job waits in the queue
  bool existing = false;  // kSubmit: the submission key named a job made before
  // kRunRegister: the job's token (base/job_token.h), for GSHARE_JOB_TOKEN; else empty.
  std::string token{};
  // kRunRegister of an admitted job: CUDA_VISIBLE_DEVICES for it (the GPUs the queue placed
  // it on); empty: leave the variable as it is.
  std::string visible{};
  // kRunRegister of an admitted job: further variables of its launch environment (the MPS
  // backend's, daemon/gpu/mps_servers.h), in order; names are [A-Z_][A-Z0-9_]*.
  LaunchEnv env{};
  std::string ToJsonText() const;
  static Result<JobIdReply> Parse(const nlohmann::json& j);
};

// kRunAttach: what a job's supervisor runs and where it reports (runner/job_supervisor.h):
// {"ok", "argv", "env", "set_env", "preload", "cwd", "output", "error", "open_append",
//  "warn_signal", "warn_ms", "warn_main_only", "time_limit_ms", "kill_after_ms", "script",
//  "script_path", "end_path", "start_path"}. Parse checks every field's type, a non-empty argv
// and the ranges of the numbers (milliseconds up to kMaxDuration, a signal below NSIG).
struct RunAttachReply {
  std::vector<std::string> argv;     // argv[0] is the script's path when `script` is set
  std::vector<std::string> env;      // the environment the job was submitted with, NAME=value
  LaunchEnv set_env;                 // set over it (launch_plan.h's variables, array task ids)
  std::vector<std::string> preload;  // libgshare.so, or none (the job runs unshared)
  std::string cwd;
  std::string output;  // its stdout's path, patterns expanded
  std::string error;   // its stderr's path; empty: with stdout
  bool open_append = false;
  int warn_signal = 0;  // sent warn_ms before the time limit; 0: none
  int64_t warn_ms = 0;
  bool warn_main_only = false;        // to the first process alone, not its group
  int64_t time_limit_ms = 0;          // 0: none
  int64_t kill_after_ms = 0;          // SIGTERM to SIGKILL at the limit or a cancel
  std::optional<std::string> script;  // a submitted script's text, written to script_path
  std::string script_path;
  std::string end_path;    // where the supervisor leaves the job's end (ipc/job_end.h)
  std::string start_path;  // written before anything of the job runs
  std::string ToJsonText() const;
  static Result<RunAttachReply> Parse(const nlohmann::json& j);
};

// kJobControl: {"ok", "results": [{"id", "ok", "error"?}]}, one result per requested id.
struct JobControlReply {
  struct Outcome {
    int64_t id = 0;
    std::string error;  // empty: done
  };
  std::vector<Outcome> results;
  std::string ToJsonText() const;
  static Result<JobControlReply> Parse(const nlohmann::json& j);
};

// kClean: {"ok", "removed": [ids]}
struct CleanReply {
  std::vector<int64_t> removed;
  std::string ToJsonText() const;
  static Result<CleanReply> Parse(const nlohmann::json& j);
};

// kSchedulerSet: {"ok", "enabled"}
struct SchedulerReply {
  bool enabled = true;
  std::string ToJsonText() const;
  static Result<SchedulerReply> Parse(const nlohmann::json& j);
};

}  // namespace gshare
