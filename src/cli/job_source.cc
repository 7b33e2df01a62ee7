#include "cli/job_source.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ipc/daemon_launcher.h"
#include "ipc/frame_io.h"
#include "ipc/job_list.h"

namespace gshare {
namespace {

// The jobs of one kListJobs exchange with the daemon at `socket`; the ids of those whose
// details it withheld (another user's job) are added to `hidden`.
Result<std::vector<JobRecord>> Ask(const std::string& socket, const ListJobsRequest& request,
                                   std::set<int64_t>* hidden) {
  Result<int> fd = ConnectUnix(socket);
  if (!fd.ok()) return fd.status();
  Result<nlohmann::json> reply =
      ExchangeJson(fd.value(), proto::MsgType::kListJobs, request.ToJson());
  close(fd.value());
  if (!reply.ok()) return reply.status();
  std::vector<JobRecord> jobs;
  for (const nlohmann::json& j : reply->value("jobs", nlohmann::json::array())) {
    Result<JobRecord> r = JobFromJson(j);
    if (!r.ok()) return r.status();
    if (j.value("hidden", false)) hidden->insert(r->id);
    jobs.push_back(std::move(r.value()));
  }
  return jobs;
}

// One page of runs from the daemon at `socket`; *next_after gets the next page's start, 0
// after the last.
Status AskRuns(const std::string& socket, const RunFilter& filter,
               const std::function<void(const JobRun&)>& run, int64_t* next_after) {
  Result<int> fd = ConnectUnix(socket);
  if (!fd.ok()) return fd.status();
  ListJobsRequest request;
  request.runs = filter;
  Result<nlohmann::json> reply =
      ExchangeJson(fd.value(), proto::MsgType::kListJobs, request.ToJson());
  close(fd.value());
  if (!reply.ok()) return reply.status();
  if (!reply->contains("runs")) {
    return Status::Error("the daemon lists no runs: it is older than this gshare");
  }
  for (const nlohmann::json& j : reply->at("runs")) {
    Result<JobRun> r = RunFromJson(j);
    if (!r.ok()) return r.status();
    run(r.value());
  }
  const nlohmann::json next = reply->value("next_after", nlohmann::json());
  *next_after = next.is_number_integer() ? next.get<int64_t>() : 0;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<JobSource>> JobSource::Open(const ClientContext& ctx, bool start_daemon) {
  auto source = std::make_unique<JobSource>();
  if (!ctx.own_database) {
    source->socket_ = ctx.socket_path;
    return source;
  }
  if (start_daemon) {
    Result<int> fd = ConnectToDaemon(ctx);
    if (!fd.ok()) return fd.status();
    close(fd.value());
  }
  if (access(ctx.database_path.c_str(), F_OK) != 0) return std::unique_ptr<JobSource>();
  Result<std::unique_ptr<JobStore>> store = JobStore::OpenReadOnly(ctx.database_path);
  if (!store.ok()) return store.status();
  source->store_ = std::move(store.value());
  return source;
}

Result<std::optional<JobRecord>> JobSource::Get(int64_t id) {
  if (store_) return store_->Get(id);
  ListJobsRequest request;
  request.job_id = id;
  Result<std::vector<JobRecord>> jobs = Ask(socket_, request, &hidden_);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) return std::optional<JobRecord>();
  return std::optional<JobRecord>(std::move(jobs->front()));
}

Result<std::vector<JobRecord>> JobSource::List(const ListFilter& filter) {
  if (!store_) return Ask(socket_, ListJobsRequest{std::nullopt, filter, std::nullopt}, &hidden_);
  // A damaged row is named, not fatal: the rest of the queue is still worth seeing.
  std::vector<std::pair<int64_t, std::string>> bad_rows;
  Result<std::vector<JobRecord>> rows = store_->List(filter, &bad_rows);
  for (const auto& [id, error] : bad_rows) {
    spdlog::warn("job {}: its record cannot be read ({}); not listed", id, error);
  }
  return rows;
}

Status JobSource::ForEachInQueueOrder(const ListFilter& filter,
                                      const std::function<void(const JobRecord&)>& row) {
  if (store_) return store_->ForEachInQueueOrder(filter, row);
  ListFilter ordered = filter;
  ordered.order = ListFilter::Order::kQueueOrder;
  Result<std::vector<JobRecord>> jobs = List(ordered);
  if (!jobs.ok()) return jobs.status();
  for (const JobRecord& r : jobs.value()) row(r);
  return Status::Ok();
}

Status JobSource::ForEachRun(const RunFilter& filter,
                             const std::function<void(const JobRun&)>& run) {
  if (store_) return store_->ForEachRun(filter, run);
  RunFilter page = filter;
  for (;;) {
    int64_t next_after = 0;
    Status st = AskRuns(socket_, page, run, &next_after);
    if (!st.ok() || next_after == 0) return st;
    page.after_id = next_after;
  }
}

}  // namespace gshare
