// Reading jobs for the CLI: state lists as users write them and filtered job lists, shared
// by `queue` and `cancel`.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "ipc/job_json.h"
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

CLI::Validator JobIdCheck() {
  return CLI::Validator(
      [](std::string& text) {
        Result<int64_t> id = ParseJobId(text);
        return id.ok() ? std::string() : id.status().message();
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
