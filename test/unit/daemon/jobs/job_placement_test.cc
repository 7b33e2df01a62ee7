// JobPlacement: the running jobs counted per slot, array and user (ended jobs and preloaded
// processes outside gshare not counted), the bytes per slot from the ledger, what a placed job
// sees, gang leases named by UUID, and array ids expanded to their tasks; against a real ledger
// and arbiter, with NVML's UUIDs injected.
#include "daemon/jobs/job_placement.h"

#include <doctest/doctest.h>

#include <memory>
#include <utility>

#include "daemon/table_parts.h"
#include "policy/ledger_test_util.h"

namespace gshare::unit_job_placement {
namespace {

using ledger_test::kGiB;
using ledger_test::kGpu;
using ledger_test::kOther;

struct Fixture {
  JobTable table;
  MemoryLedger ledger{ledger_test::NoContext()};
  Arbiter arbiter{Arbiter::Options{}};
  int gpu_count = 2;
  JobPlacement placement{
      JobPlacement::Options{[this] { return gpu_count; },
                            [](const std::string& entry) -> std::string {
                              return entry == "0" ? kGpu : entry == "1" ? kOther : "";
                            }},
      table, ledger, arbiter};

  ActiveJob& Job(JobId id, uid_t uid, const std::string& slot, int64_t array = 0) {
    ActiveJob& job = unit_table_parts::AddJob(table, id, uid, slot);
    job.record.array_job_id = array;
    return job;
  }
};

TEST_CASE("running jobs per slot, array and user leave out ended jobs and outside processes") {
  Fixture f;
  f.Job(1, 1000, "0,1");
  f.Job(2, 1000, "1", 9);
  f.Job(3, 1001, "1", 9);
  f.Job(4, 1001, "0").ended = true;
  f.Job(5, 1002, "0").adhoc = true;
  CHECK(f.placement.RunningPerSlot() == std::map<std::string, int>{{"0", 1}, {"1", 3}});
  CHECK(f.placement.RunningPerArray() == std::map<int64_t, int>{{9, 2}});
  CHECK(f.placement.RunningPerUser() == std::map<uid_t, int>{{1000, 2}, {1001, 1}});
}

TEST_CASE("bytes per slot come from the ledger, for slots NVML names, with several GPUs") {
  Fixture f;
  f.Job(1, 1000, "0");
  f.Job(2, 1000, "1");
  f.Job(3, 1000, "1").ended = true;
  f.ledger.Report(11, 1, kGpu, ledger_test::Report80(10, 10));
  f.ledger.Report(21, 2, kOther, ledger_test::Report80(20, 20));
  f.ledger.Report(31, 3, kOther, ledger_test::Report80(5, 5));
  CHECK(f.placement.AllocatedPerSlot() ==
        std::map<std::string, uint64_t>{{"0", 10 * kGiB}, {"1", 20 * kGiB}});
  f.gpu_count = 1;
  CHECK(f.placement.AllocatedPerSlot().empty());
  CHECK(f.placement.VisibleDevicesOf("", "0").empty());  // one GPU, none named
  f.gpu_count = 2;
  CHECK(f.placement.VisibleDevicesOf("", "1") == "1");
  CHECK(f.placement.VisibleDevicesOf("0", "") == "0");
}

TEST_CASE("a job of several GPUs gets a gang lease when NVML names each of them") {
  Fixture f;
  JobRecord r;
  r.id = 1;
  r.gpus = 2;
  r.slot = "0,1";
  f.arbiter.AddJob(1, 0, Millis(0), 1000);
  f.placement.SetGang(r);
  CHECK(f.arbiter.GangOf(1) == std::vector<GpuKey>{kGpu, kOther});
  r.id = 2;
  r.slot = "0,2";  // NVML does not name "2"
  f.arbiter.AddJob(2, 0, Millis(0), 1000);
  f.placement.SetGang(r);
  CHECK(f.arbiter.GangOf(2).empty());
  r.id = 3;
  r.gpus = 1;
  r.slot = "1";
  f.arbiter.AddJob(3, 0, Millis(0), 1000);
  f.placement.SetGang(r);
  CHECK(f.arbiter.GangOf(3).empty());
}

TEST_CASE("an array's job id stands for its pending or active tasks, in id order, once each") {
  Fixture f;
  f.Job(12, 1000, "0", 10);
  f.Job(11, 1000, "0", 10).ended = true;
  std::map<int64_t, JobRecord> pending;
  for (int64_t id : {14, 13}) {
    pending[id].id = id;
    pending[id].array_job_id = 10;
  }
  pending[20].id = 20;
  const std::vector<int64_t> ids = {10, 20, 12, 99};
  CHECK(f.placement.ExpandArrayIds(ids, pending, true, true) ==
        std::vector<int64_t>{12, 13, 14, 20, 99});
  CHECK(f.placement.ExpandArrayIds(ids, pending, true, false) ==
        std::vector<int64_t>{13, 14, 20, 12, 99});
  CHECK(f.placement.ExpandArrayIds(ids, pending, false, true) == std::vector<int64_t>{12, 20, 99});
}

}  // namespace
}  // namespace gshare::unit_job_placement
