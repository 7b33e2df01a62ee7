#include "ipc/replies.h"

#include "gshare/protocol.h"
#include "ipc/frame_io.h"
#include "ipc/job_json.h"
#include "ipc/json_fields.h"
#include "ipc/requests.h"
#include "base/duration.h"

namespace gshare {

using json = nlohmann::json;

std::string ErrorReply(const std::string& message) {
  return gshare::ToJsonText(json{{"ok", false}, {"error", message}});
}

std::string OkReply() { return gshare::ToJsonText(json{{"ok", true}}); }

Status ReplyError(const json& reply) {
  if (!reply.is_object()) return Status::Error("the daemon's reply is not a JSON object");
  auto ok = reply.find("ok");
  if (ok != reply.end() && ok->is_boolean() && ok->get<bool>()) return Status::Ok();
  auto error = reply.find("error");
  return Status::Error(error != reply.end() && error->is_string() ? error->get<std::string>()
                                                                  : "failed");
}

std::string EncodeReply(const std::string& json_text) {
  if (json_text.size() <= proto::kMaxReplyPayload) {
    return EncodeFrame(proto::MsgType::kReply, json_text);
  }
  return EncodeFrame(
      proto::MsgType::kReply,
      ErrorReply("the reply is too large (" + std::to_string(json_text.size()) +
                 " bytes, at most " + std::to_string(proto::kMaxReplyPayload) +
                 "): ask for fewer jobs, e.g. one job id, a filter (--state, --user, --name), or "
                 "fewer ids at once"));
}

json LaunchEnvToJson(const LaunchEnv& env) {
  json j = json::object();
  for (const auto& [name, value] : env) j[name] = value;
  return j;
}

Result<LaunchEnv> LaunchEnvFromJson(const json& j, const char* field) {
  if (!j.is_object()) return Status::Error(std::string("bad ") + field + ": expected an object");
  LaunchEnv env;
  for (const auto& [name, value] : j.items()) {
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name) ok = ok && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok || !value.is_string()) {
      return Status::Error(std::string("bad ") + field + ": " + (ok ? "value" : "name") + " of " +
                           name.substr(0, 64));
    }
    env.emplace_back(name, value.get<std::string>());
  }
  return env;
}

std::string JobIdReply::ToJsonText() const {
  json j{{"ok", true}, {"job_id", job_id}};
  if (!admitted) j["admitted"] = false;
  if (existing) j["existing"] = true;
  if (!token.empty()) j["token"] = token;
  if (!visible.empty()) j["visible"] = visible;
  if (!env.empty()) j["env"] = LaunchEnvToJson(env);
  return gshare::ToJsonText(j);
}

Result<JobIdReply> JobIdReply::Parse(const json& j) {
  if (Status st = ReplyError(j); !st.ok()) return st;
  Result<int64_t> id = IntField(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  JobIdReply r;
  r.job_id = id.value();
  for (auto [key, field] : {std::pair{"admitted", &r.admitted}, {"existing", &r.existing}}) {
    if (!j.contains(key)) continue;
    Result<bool> v = BoolField(j, key);
    if (!v.ok()) return v.status();
    *field = v.value();
  }
  for (auto [key, field] : {std::pair{"token", &r.token}, {"visible", &r.visible}}) {
    if (!j.contains(key)) continue;
    Result<std::string> v = StringField(j, key);
    if (!v.ok()) return v.status();
    *field = std::move(v.value());
  }
  if (j.contains("env")) {
    Result<LaunchEnv> env = LaunchEnvFromJson(j.at("env"), "env");
    if (!env.ok()) return env.status();
    r.env = std::move(env.value());
  }
  return r;
}

std::string RunAttachReply::ToJsonText() const {
  return gshare::ToJsonText(json{{"ok", true},
                                 {"argv", argv},
                                 {"env", env},
                                 {"set_env", LaunchEnvToJson(set_env)},
                                 {"preload", preload},
                                 {"cwd", cwd},
                                 {"output", output},
                                 {"error", error},
                                 {"open_append", open_append},
                                 {"warn_signal", warn_signal},
                                 {"warn_ms", warn_ms},
                                 {"warn_main_only", warn_main_only},
                                 {"time_limit_ms", time_limit_ms},
                                 {"kill_after_ms", kill_after_ms},
                                 {"script", script ? json(*script) : json(nullptr)},
                                 {"script_path", script_path},
                                 {"end_path", end_path},
                                 {"start_path", start_path}});
}

Result<RunAttachReply> RunAttachReply::Parse(const json& j) {
  if (Status st = ReplyError(j); !st.ok()) return st;
  RunAttachReply r;
  const int64_t max_ms = kMaxDuration.count();
  for (auto [key, field] : {std::pair{"argv", &r.argv}, {"env", &r.env}, {"preload", &r.preload}}) {
    Result<std::vector<std::string>> v = StringListField(j, key);
    if (!v.ok()) return v.status();
    *field = std::move(v.value());
  }
  if (r.argv.empty()) return Status::Error("\"argv\" must not be empty");
  for (auto [key, field] : {std::pair{"cwd", &r.cwd},
                            {"output", &r.output},
                            {"error", &r.error},
                            {"script_path", &r.script_path},
                            {"end_path", &r.end_path},
                            {"start_path", &r.start_path}}) {
    Result<std::string> v = StringField(j, key);
    if (!v.ok()) return v.status();
    *field = std::move(v.value());
  }
  for (auto [key, field] :
       {std::pair{"open_append", &r.open_append}, {"warn_main_only", &r.warn_main_only}}) {
    Result<bool> v = BoolField(j, key);
    if (!v.ok()) return v.status();
    *field = v.value();
  }
  Result<int64_t> warn_signal = IntField(j, "warn_signal", 0, NSIG - 1);
  if (!warn_signal.ok()) return warn_signal.status();
  r.warn_signal = static_cast<int>(warn_signal.value());
  for (auto [key, field] : {std::pair{"warn_ms", &r.warn_ms},
                            {"time_limit_ms", &r.time_limit_ms},
                            {"kill_after_ms", &r.kill_after_ms}}) {
    Result<int64_t> v = IntField(j, key, 0, max_ms);
    if (!v.ok()) return v.status();
    *field = v.value();
  }
  auto set_env = j.find("set_env");
  if (set_env == j.end()) return Status::Error("\"set_env\" must be an object");
  Result<LaunchEnv> env = LaunchEnvFromJson(*set_env, "set_env");
  if (!env.ok()) return env.status();
  r.set_env = std::move(env.value());
  auto script = j.find("script");
  if (script == j.end() || !(script->is_null() || script->is_string())) {
    return Status::Error("\"script\" must be a string or null");
  }
  if (script->is_string()) r.script = script->get<std::string>();
  return r;
}

std::string JobControlReply::ToJsonText() const {
  json list = json::array();
  for (const Outcome& o : results) {
    json one{{"id", o.id}, {"ok", o.error.empty()}};
    if (!o.error.empty()) one["error"] = o.error;
    list.push_back(std::move(one));
  }
  return gshare::ToJsonText(json{{"ok", true}, {"results", std::move(list)}});
}

Result<JobControlReply> JobControlReply::Parse(const json& j) {
  if (Status st = ReplyError(j); !st.ok()) return st;
  auto list = j.find("results");
  if (list == j.end() || !list->is_array()) return Status::Error("\"results\" must be a list");
  JobControlReply r;
  for (const json& one : *list) {
    if (!one.is_object()) return Status::Error("\"results\" must hold objects");
    Result<int64_t> id = IntField(one, "id", 1, kMaxJobId);
    if (!id.ok()) return id.status();
    Status st = ReplyError(one);
    r.results.push_back({id.value(), st.ok() ? "" : st.message()});
  }
  return r;
}

std::string CleanReply::ToJsonText() const {
  return gshare::ToJsonText(json{{"ok", true}, {"removed", removed}});
}

Result<CleanReply> CleanReply::Parse(const json& j) {
  if (Status st = ReplyError(j); !st.ok()) return st;
  auto list = j.find("removed");
  if (list == j.end() || !list->is_array()) return Status::Error("\"removed\" must be a list");
  CleanReply r;
  for (const json& id : *list) {
    std::optional<int64_t> v = AsInt64(id);
    if (!v || *v < 1) return Status::Error("\"removed\" must hold job ids");
    r.removed.push_back(*v);
  }
  return r;
}

std::string SchedulerReply::ToJsonText() const {
  return gshare::ToJsonText(json{{"ok", true}, {"enabled", enabled}});
}

Result<SchedulerReply> SchedulerReply::Parse(const json& j) {
  if (Status st = ReplyError(j); !st.ok()) return st;
  Result<bool> enabled = BoolField(j, "enabled");
  if (!enabled.ok()) return enabled.status();
  return SchedulerReply{enabled.value()};
}

}  // namespace gshare
