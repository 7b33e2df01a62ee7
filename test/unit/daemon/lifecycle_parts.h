// What the tests of the daemon's job parts (JobLifecycle, JobControl) share: a JobLifecycle and
// the parts it drives, wired as the daemon wires them. Test threads only.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/decoded_frame.h"
#include "daemon/jobs/job_control.h"
#include "daemon/jobs/job_lifecycle.h"
#include "daemon/state/request_transport.h"
#include "daemon/table_parts.h"
#include "daemon/job_records.h"
#include "daemon/memory_parts.h"
#include "ipc/frame_io.h"
#include "temp_dir.h"

namespace gshare::unit_lifecycle_parts {

// The memory coordinator's and the idle stager's Host: nothing is sent.
struct LifecycleHost : MemoryCoordinator::Host, IdleStager::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
  uid_t JobOwner(JobId) const override { return 0; }
  void SendStage(ConnId, const GpuKey&, uint64_t) override {}
};

// A JobLifecycle wired as the daemon wires it, on a real store in a scratch directory whose
// supervisor is a script that outlives each case (5 s) unless it is killed; [queue]
// max_running 1 on one GPU; what it sends a `gshare run` is decoded into `sent`.
struct LifecycleParts : unit_memory_parts::MemoryParts<LifecycleHost> {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  DaemonOptions options;
  JobTable table;
  JobProcesses processes{options, table};
  int gpu_count = 1;
  JobPlacement placement{JobPlacement::Options{[this] { return gpu_count; }}, table, ledger,
                         arbiter};
  IdleStager staging{Millis(0), arbiter, ledger, clock, memory_host};
  TimelineRecorder timeline{TimelineRecorder::Options{false}, clock,
                            [](JobId) { return uint32_t{0}; }};
  std::unique_ptr<BatchQueue> queue;
  std::vector<std::pair<ConnId, Frame>> sent;
  std::unique_ptr<JobLifecycle> lifecycle;

  LifecycleParts() {
    store = OpenStoreOrFail(dir.path() + "/s.db");
    options.state_dir = dir.path();
    options.socket_path = dir.path() + "/gshare.sock";
    options.self_exe = dir.path() + "/fake-gshare";
    std::ofstream(options.self_exe) << "#!/bin/sh\nexec sleep 5\n";
    REQUIRE(chmod(options.self_exe.c_str(), 0700) == 0);
    options.config.queue.max_running = 1;
    queue = std::make_unique<BatchQueue>(*store, clock,
                                         [this](int64_t id) { return table.ActiveState(id); });
    lifecycle = std::make_unique<JobLifecycle>(
        JobLifecycle::Parts{options, table, *queue, *store, processes, placement, arbiter, ledger,
                            memory, staging, timeline, clock},
        [this] { return gpu_count; },
        [this](ConnId conn, std::string_view frame) {
          sent.emplace_back(conn, unit_decoded_frame::DecodedFrame(frame));
          return true;
        });
  }
  // Ends the supervisors it started: submitted jobs' runners only (a Slurm step's runner is
  // its slurmstepd, which a test may stand in for itself).
  ~LifecycleParts() {
    for (const auto& [id, job] : table.jobs) {
      if (job->record.kind == JobKind::kSubmit && job->record.runner_pid) {
        kill(*job->record.runner_pid, SIGKILL);
        waitpid(*job->record.runner_pid, nullptr, 0);
      }
    }
  }
  // Job `id`'s row, or the test fails.
  JobRecord Stored(int64_t id) {
    auto row = store->Get(id);
    REQUIRE(row.ok());
    REQUIRE(row.value());
    return *row.value();
  }
};

// LifecycleParts with what job control adds: the priority lanes, the shim messages (sent
// nowhere), an AccessGuard on the lifecycle's owners (each uid its own group; rules set by the
// test), a JobControl whose suspend and resume are recorded in `checkpoints`, and a request
// transport whose replies (parsed) and drops are recorded.
struct ControlParts : LifecycleParts {
  std::vector<nlohmann::json> replies;
  std::vector<std::string> drops;
  RequestTransport transport{[this](Connection&, const std::string& text) {
                               replies.push_back(nlohmann::json::parse(text));
                             },
                             [this](ConnId, const std::string& why) { drops.push_back(why); }};
  ConnId next_conn = 1;
  PriorityLanes lanes;
  ShimMessenger messenger{ShimMessenger::Parts{table, arbiter, ledger, lanes, timeline},
                          [](ConnId, std::string_view) { return true; }};
  AccessGuard access{[this](int64_t id) { return lifecycle->OwnerOf(id); },
                     [](uint32_t uid) {
                       return Requester{uid, {uid}};
                     }};
  std::vector<std::pair<int64_t, std::string>> checkpoints;  // (job, "suspend" or the GPU)
  JobControl control{JobControl::Parts{*lifecycle, access, lanes, messenger},
                     JobControl::Checkpoints{[this](int64_t id) {
                                               checkpoints.emplace_back(id, "suspend");
                                               return Status::Ok();
                                             },
                                             [this](int64_t id, const std::string& gpu) {
                                               checkpoints.emplace_back(id, "resume " + gpu);
                                               return Status::Ok();
                                             }}};

  // A new connection of `uid`'s from process `pid`, of no kind yet.
  Connection& Connect(uint32_t uid, pid_t pid) {
    Connection& c =
        unit_table_parts::AddConn(table, next_conn++, 0, Connection::Kind::kUnknown, pid);
    c.uid = uid;
    return c;
  }
};

}  // namespace gshare::unit_lifecycle_parts
