// Reading jobs for the CLI: state lists as users write them and filtered job lists, shared
// by `queue` and `cancel`.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "ipc/job_json.h"
#include "base/array_spec.h"
#include "base/user_name.h"

namespace gshare {

Result<std::set<JobState>> ParseStates(const std::string& list) {
  std::set<JobState> states;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    std::string upper = item;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    bool known = false;
    for (JobState state : kAllJobStates) {
      if (upper == JobStateName(state) || upper == JobStateCode(state)) {
        states.insert(state);
        known = true;
      }
    }
    if (!known) {
      return Status::Error("unknown state \"" + item + "\" (PD R S CD F CA TO LO, or their names)");
    }
  }
  return states;
}

Result<int64_t> ParseJobId(const std::string& text) {
  // Digits only: strtoll would take "-1", " 7" and "0x10", and clamp a long number to the
  // largest id instead of failing.
  const bool digits =
      !text.empty() && text.size() <= std::to_string(kMaxJobId).size() &&
      std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  errno = 0;
  const long long id = digits ? std::strtoll(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || id <= 0) {
    return Status::Error("bad job id \"" + text + "\": a job id is a whole number from 1 to " +
                         std::to_string(kMaxJobId));
  }
  return static_cast<int64_t>(id);
}

Result<JobRef> ParseJobRef(const std::string& text) {
  JobRef ref;
  ref.text = text;
  const size_t sep = text.find('_');
  Result<int64_t> id = ParseJobId(text.substr(0, sep));
  if (sep == std::string::npos) {
    if (!id.ok()) return id.status();
    ref.id = id.value();
    return ref;
  }
  const std::string task = text.substr(sep + 1);
  const bool digits =
      !task.empty() && task.size() <= 10 &&
      std::all_of(task.begin(), task.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  const long long t = digits ? std::strtoll(task.c_str(), nullptr, 10) : -1;
  if (!id.ok() || t < 0 || t > kMaxArrayTaskId) {
    return Status::Error("bad job id \"" + text + "\": a job id is a whole number from 1 to " +
                         std::to_string(kMaxJobId) + ", or an array task J_T (T from 0 to " +
                         std::to_string(kMaxArrayTaskId) + ")");
  }
  ref.id = id.value();
  ref.task = t;
  return ref;
}

namespace {

// Each array's tasks read so far: array id -> task id -> the task's own job id.
using ArrayTasks = std::map<int64_t, std::map<int64_t, int64_t>>;

// The job id `ref` names; an array's tasks are read once into *tasks, however many of them
// the refs name.
Result<int64_t> ResolveJobRef(const GlobalOptions& global, const JobRef& ref, ArrayTasks* tasks) {
  if (!ref.task) return ref.id;
  auto array = tasks->find(ref.id);
  if (array == tasks->end()) {
    ListFilter filter;
    filter.array_job_id = ref.id;
    Result<std::vector<JobRecord>> rows = ListJobs(global, filter, "");
    if (!rows.ok()) return rows.status();
    array = tasks->emplace(ref.id, std::map<int64_t, int64_t>{}).first;
    for (const JobRecord& r : rows.value()) {
      if (r.IsArrayTask()) array->second[r.array_task_id] = r.id;
    }
  }
  auto task = array->second.find(*ref.task);
  if (task != array->second.end()) return task->second;
  return Status::Error("no task " + std::to_string(*ref.task) + " in job array " +
                       std::to_string(ref.id) + " (" + ref.text + ")");
}

}  // namespace

Result<int64_t> ResolveJobRef(const GlobalOptions& global, const JobRef& ref) {
  ArrayTasks tasks;
  return ResolveJobRef(global, ref, &tasks);
}

std::optional<int64_t> ResolveJobText(const GlobalOptions& global, const std::string& text,
                                      const char* command) {
  Result<JobRef> ref = ParseJobRef(text);
  Result<int64_t> id = ref.ok() ? ResolveJobRef(global, ref.value()) : ref.status();
  if (id.ok()) return id.value();
  spdlog::error("{}: {}", command, id.status().message());
  return std::nullopt;
}

Status ResolveJobRefs(const GlobalOptions& global, const std::vector<std::string>& texts,
                      std::vector<int64_t>* ids, std::vector<int64_t>* exact_ids) {
  ArrayTasks tasks;
  for (const std::string& text : texts) {
    Result<JobRef> ref = ParseJobRef(text);
    if (!ref.ok()) return ref.status();
    Result<int64_t> id = ResolveJobRef(global, ref.value(), &tasks);
    if (!id.ok()) return id.status();
    (ref->task ? exact_ids : ids)->push_back(id.value());
  }
  return Status::Ok();
}

CLI::Validator JobIdCheck(bool by_name) {
  return CLI::Validator(
      [by_name](std::string& text) {
        Result<JobRef> ref = ParseJobRef(text);
        if (ref.ok()) return std::string();
        // A word where an id goes is most often a job's name (scancel takes it as -n NAME).
        const bool word = !text.empty() && std::isalpha(static_cast<unsigned char>(text[0])) &&
                          std::all_of(text.begin(), text.end(), [](char ch) {
                            return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
                                   ch == '-' || ch == '.';
                          });
        if (by_name && word) return ref.status().message() + "; jobs by name: -n " + text;
        return ref.status().message();
      },
      "ID");
}

Result<std::set<int64_t>> ParseJobIds(const std::string& list) {
  std::set<int64_t> ids;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    Result<int64_t> id = ParseJobId(item);
    if (!id.ok()) return Status::Error(id.status().message() + " (in --jobs)");
    ids.insert(id.value());
  }
  return ids;
}

namespace {

// The source to read jobs of `user` from, with filter->uid set; nullptr when no job was ever
// recorded.
Result<std::unique_ptr<JobSource>> OpenFor(const GlobalOptions& global, const std::string& user,
                                           ListFilter* filter) {
  if (!user.empty()) {
    filter->uid = UserId(user);
    if (!filter->uid) return Status::Error("no user \"" + user + "\"");
  }
  Result<ClientContext> ctx = MakeClientContext(global);
  if (!ctx.ok()) return ctx.status();
  return JobSource::Open(*ctx, true);
}

}  // namespace

Result<std::vector<JobRecord>> ListJobs(const GlobalOptions& global, ListFilter filter,
                                        const std::string& user) {
  Result<std::unique_ptr<JobSource>> source = OpenFor(global, user, &filter);
  if (!source.ok()) return source.status();
  if (!source.value()) return std::vector<JobRecord>();
  return source.value()->List(filter);
}

Status ForEachJob(const GlobalOptions& global, ListFilter filter, const std::string& user,
                  const std::function<void(const JobRecord&)>& row) {
  Result<std::unique_ptr<JobSource>> source = OpenFor(global, user, &filter);
  if (!source.ok()) return source.status();
  if (!source.value()) return Status::Ok();
  return source.value()->ForEachInQueueOrder(filter, row);
}

Status ForEachRun(const GlobalOptions& global, RunFilter filter, const std::string& user,
                  const std::function<void(const JobRun&)>& run) {
  ListFilter owner;
  Result<std::unique_ptr<JobSource>> source = OpenFor(global, user, &owner);
  if (!source.ok()) return source.status();
  if (owner.uid) filter.uid = owner.uid;
  if (!source.value()) return Status::Ok();
  return source.value()->ForEachRun(filter, run);
}

}  // namespace gshare
