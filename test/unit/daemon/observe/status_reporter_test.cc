// StatusReporter and job_usage.h: the status document's daemon, GPU and job objects, what other
// users' jobs hide, the brief form, an old job by id, users' shares, and a job's usage counting
// the processes gone from the ledger; against a real SQLite store in a scratch directory, the
// arbiter, ledger and coordinators as the daemon wires them, and a manual clock.
#include "daemon/observe/status_reporter.h"

#include <doctest/doctest.h>

#include <memory>
#include <utility>

#include "daemon/job_records.h"
#include "daemon/jobs/job_usage.h"
#include "daemon/memory_parts.h"
#include "temp_dir.h"

namespace gshare::unit_status_reporter {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests

constexpr uint32_t kAlice = 5001, kBob = 5002;

struct Quiet : MemoryCoordinator::Host,
               StaggerCoordinator::Host,
               SharingController::Host,
               IdleStager::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
  std::vector<std::pair<ConnId, JobId>> Shims() const override { return {}; }
  bool KnowsGpu(const GpuKey&) const override { return true; }
  bool SendGapWatch(ConnId, const GpuKey&, bool) override { return true; }
  void SendStretch(ConnId, const GpuKey&, Millis) override {}
  void Apply(const LeaseActions&) override {}
  void UpdateGapWatch(const GpuKey&) override {}
  void AskHolderToPin(const GpuKey&) override {}
  void SendStage(ConnId, const GpuKey&, uint64_t) override {}
  uid_t JobOwner(JobId) const override { return 0; }
};

struct Fixture : MemoryParts<Quiet> {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  DaemonOptions options;
  JobTable table;
  StaggerCoordinator stagger{false, arbiter, clock, memory_host};
  SharingController sharing{SharingController::Options{true, [] { return false; }},
                            arbiter,
                            ledger,
                            memory,
                            clock,
                            memory_host};
  PriorityLanes lanes;
  IdleStager staging{Millis(0), arbiter, ledger, clock, memory_host};
  std::unique_ptr<BatchQueue> queue;
  AccessGuard access{[this](int64_t id) -> std::optional<uint32_t> {
                       if (table.jobs.count(id) != 0) return table.OwnerOf(id);
                       return std::nullopt;
                     },
                     [](uint32_t uid) {
                       return Requester{uid, {uid}};
                     }};
  std::unique_ptr<StatusReporter> status;

  Fixture() {
    store = OpenStoreOrFail(dir.path() + "/s.db");
    queue = std::make_unique<BatchQueue>(*store, clock,
                                         [](int64_t) { return std::optional<JobState>(); });
    options.socket_path = dir.path() + "/gshare.sock";
    options.database_path = dir.path() + "/s.db";
    AccessRules rules;
    rules.daemon_uid = 4000;
    access.SetRules(rules);
    status = std::make_unique<StatusReporter>(
        StatusReporter::Parts{options, table, arbiter, ledger, memory, stagger, sharing, lanes,
                              staging, *queue, *store, access, clock},
        [] { return 1.5e9; });
  }
  // An active job `j` of `uid` (connection j * 10 + 1) with `gib` GiB on kGpu, stored RUNNING.
  ActiveJob& Run(JobId j, uint32_t uid, uint64_t gib) {
    JobRecord r = SubmittedJob(JobState::kRunning);
    r.uid = uid;
    r.argv = {"python", "train.py"};
    auto id = store->Insert(r);
    REQUIRE(id.ok());
    REQUIRE(static_cast<JobId>(id.value()) == j);
    r.id = id.value();
    auto job = std::make_unique<ActiveJob>();
    job->record = r;
    ActiveJob& ref = *job;
    table.jobs[j] = std::move(job);
    AddJob(j, 0);
    Report(j, gib, gib);
    return ref;
  }
  int64_t Queue(uint32_t uid) {
    JobRecord r = SubmittedJob(JobState::kPending);
    r.uid = uid;
    return StoreAndQueue(*store, *queue, r);
  }
  const nlohmann::json* JobIn(const nlohmann::json& doc, int64_t id) {
    for (const nlohmann::json& j : doc["jobs"]) {
      if (j["id"] == id) return &j;
    }
    return nullptr;
  }
};

TEST_CASE("the status document: the daemon, its GPUs, active jobs and their memory") {
  Fixture f;
  ActiveJob& a = f.Run(1, kAlice, 10);
  f.Run(2, kBob, 20);
  f.Queue(kAlice);
  f.arbiter.Request(11, kGpu, f.clock.Now());
  f.clock.Advance(Millis(3000));
  a.gone_swaps_out = 2;
  a.checkpoints = 1;
  a.peak_bytes = 12 * kGiB;
  a.held_ms[{11, kGpu}] = 1500;

  Connection alice;
  alice.uid = kAlice;
  nlohmann::json doc = f.status->Document(&alice, {});
  CHECK(doc["ok"] == true);
  CHECK(doc["daemon"]["socket"] == f.options.socket_path);
  CHECK(doc["daemon"]["queue"] == "running");
  CHECK(doc["daemon"]["start_time"] == 1.5e9);
  CHECK(doc["daemon"]["job_counts"] ==
        nlohmann::json{{"PENDING", 1}, {"RUNNING", 2}, {"SUSPENDED", 0}});
  REQUIRE(doc["gpus"].size() == 1);
  CHECK(doc["gpus"][0]["uuid"] == kGpu);
  CHECK(doc["gpus"][0]["holder"] == 1);
  CHECK(doc["gpus"][0]["used_bytes"] == 30 * kGiB);

  const nlohmann::json* j1 = f.JobIn(doc, 1);
  REQUIRE(j1 != nullptr);
  CHECK((*j1)["lease"] == "holding");
  CHECK((*j1)["lease_seconds"] == doctest::Approx(3.0));
  CHECK((*j1)["held_back_seconds"] == doctest::Approx(1.5));
  CHECK((*j1)["allocated_bytes"] == 10 * kGiB);
  CHECK((*j1)["peak_bytes"] == 12 * kGiB);
  CHECK((*j1)["memory"]["swaps_out"] == 2);  // its gone processes' evictions
  CHECK((*j1)["swaps_out"] == 3);            // and its checkpoint
  CHECK((*j1)["argv"] == nlohmann::json{"python", "train.py"});
  const nlohmann::json* j2 = f.JobIn(doc, 2);
  REQUIRE(j2 != nullptr);
  CHECK((*j2)["hidden"] == true);  // Bob's job, seen by Alice
  CHECK((*j2)["argv"].empty());

  REQUIRE(f.queue->SetPaused(true).ok());  // a queue without a file: in memory only
  nlohmann::json brief = f.status->Document(nullptr, StatusRequest{std::nullopt, true});
  CHECK(brief["daemon"]["queue"] == "paused");
  CHECK_FALSE(brief.contains("gpus"));
  CHECK(brief["jobs"] ==
        nlohmann::json::array({{{"id", 1}, {"lease", "holding"}}, {{"id", 2}, {"lease", "idle"}}}));
}

TEST_CASE("users' shares of the lease, and an old job shown by its id") {
  Fixture f;
  f.Run(1, kAlice, 10);
  f.Run(2, kBob, 10);
  f.Queue(kBob);
  f.arbiter.Request(11, kGpu, f.clock.Now());
  f.clock.Advance(Millis(4000));
  nlohmann::json users = f.status->UsersJson(f.clock.Now());
  REQUIRE(users.size() == 2);
  CHECK(users[0]["uid"] == kAlice);
  CHECK(users[0]["lease_share"] == doctest::Approx(1.0));
  CHECK(users[1]["running"] == 1);
  CHECK(users[1]["pending"] == 1);
  CHECK(users[1]["lease_share"] == doctest::Approx(0.0));

  // 25 more rows push the first out of the recent 20; `status ID` still shows it.
  for (int i = 0; i < 25; ++i) f.Queue(kAlice);
  f.table.jobs.erase(1);
  StatusRequest by_id;
  by_id.job_id = 1;
  CHECK(f.JobIn(f.status->Document(nullptr, {}), 1) == nullptr);
  CHECK(f.JobIn(f.status->Document(nullptr, by_id), 1) != nullptr);
}

TEST_CASE("a job's recorded usage counts its lease, waits, peak and every swap") {
  Fixture f;
  ActiveJob& a = f.Run(1, kAlice, 10);
  f.Run(2, kBob, 10);
  f.arbiter.Request(21, kGpu, f.clock.Now());
  f.arbiter.Request(11, kGpu, f.clock.Now());
  f.clock.Advance(Millis(2000));
  a.peak_bytes = 11 * kGiB;
  a.gone_swaps_in = 4;
  a.restores = 1;
  JobRecord r;
  RecordUsage(f.arbiter, f.ledger, 1, a, f.clock.Now(), &r);
  CHECK(r.wait_seconds == doctest::Approx(2.0));
  CHECK(r.lease_seconds == doctest::Approx(0.0));
  CHECK(r.peak_bytes == 11 * kGiB);
  CHECK(r.swaps_in == 5);
  nlohmann::json mem = JobMemoryJson(f.ledger, f.memory, 1, &a);
  CHECK(mem["engine"] == "swap");
  CHECK(mem["resident"] == 10 * kGiB);
  CHECK(mem["swaps_in"] == 4);
  CHECK(mem["restores"] == 1);
}

}  // namespace
}  // namespace gshare::unit_status_reporter
