// JobTable: the live connections, active jobs and GPUs the daemon's parts look up: closing
// connections and ended jobs are not live, the GPU bound, and a moved process's GPU names.
#include "daemon/state/job_table.h"

#include <doctest/doctest.h>

#include <memory>
#include <utility>

#include "base/gpu_inventory.h"
#include "daemon/table_parts.h"

namespace gshare::unit_job_table {
namespace {

const GpuKey kGpu0 = "GPU-00000000-0000-0000-0000-000000000000";
const GpuKey kGpu1 = "GPU-11111111-1111-1111-1111-111111111111";

proto::GpuUuid Uuid(const GpuKey& key) {
  proto::GpuUuid u{};
  REQUIRE(ParseGpuUuid(key, u.bytes));
  return u;
}

using unit_table_parts::AddConn;
using unit_table_parts::AddJob;

TEST_CASE("a closing connection and an ended job are not live") {
  JobTable t;
  AddConn(t, 1, 7, Connection::Kind::kShim);
  Connection& closing = AddConn(t, 2, 7, Connection::Kind::kShim);
  closing.closing = true;
  CHECK(t.Live(1) != nullptr);
  CHECK(t.Live(2) == nullptr);
  CHECK(t.Live(3) == nullptr);

  AddJob(t, 7, 1000);
  ActiveJob& ended = AddJob(t, 8, 1000);
  ended.ended = true;
  CHECK(t.Running(7) != nullptr);
  CHECK(t.Running(8) == nullptr);
  CHECK(t.Running(9) == nullptr);
  t.jobs.at(7)->record.state = JobState::kSuspended;
  CHECK(t.ActiveState(7) == JobState::kSuspended);
  CHECK(t.ActiveState(8) == std::nullopt);  // ended: the store answers for it
}

TEST_CASE("the shims are the live connections of kind shim, with their jobs") {
  JobTable t;
  AddConn(t, 1, 7, Connection::Kind::kShim);
  AddConn(t, 2, 7, Connection::Kind::kRunner);
  AddConn(t, 3, 8, Connection::Kind::kShim).closing = true;
  AddConn(t, 4, 9, Connection::Kind::kShim);
  const std::vector<std::pair<ConnId, JobId>> want = {{1, 7}, {4, 9}};
  CHECK(t.Shims() == want);
}

TEST_CASE("a job's owner, and root for a job that is not active") {
  JobTable t;
  AddJob(t, 7, 1000);
  CHECK(t.OwnerOf(7) == 1000);
  CHECK(t.OwnerOf(8) == 0);
}

TEST_CASE("GPUs are recorded once, in order, and no more than kMaxGpus") {
  JobTable t;
  CHECK(t.NoteGpu(kGpu1, Uuid(kGpu1), 1));
  CHECK(t.NoteGpu(kGpu0, Uuid(kGpu0), 0));
  CHECK(t.NoteGpu(kGpu0, Uuid(kGpu0), 5));
  CHECK(t.gpus.at(kGpu0).ordinal == 0);  // the first shim's numbering stays
  CHECK(t.GpuKeys() == std::vector<GpuKey>{kGpu0, kGpu1});
  CHECK(t.KnowsGpu(kGpu1));

  for (size_t i = t.gpus.size(); i < JobTable::kMaxGpus; ++i) {
    CHECK(t.NoteGpu("made-up-" + std::to_string(i), proto::GpuUuid{}, 0));
  }
  CHECK_FALSE(t.NoteGpu("one-too-many", proto::GpuUuid{}, 0));
  CHECK_FALSE(t.KnowsGpu("one-too-many"));
  CHECK(t.NoteGpu(kGpu0, Uuid(kGpu0), 0));  // a known one is still fine at the bound
}

TEST_CASE("after a move, the shim's name of its old GPU means the new one, both ways") {
  JobTable t;
  REQUIRE(t.NoteGpu(kGpu0, Uuid(kGpu0), 0));
  t.NoteMovedTo(kGpu1);
  CHECK(t.gpus.at(kGpu1).ordinal == -1);
  CHECK(FormatGpuUuid(t.gpus.at(kGpu1).uuid) == kGpu1);
  Connection& c = AddConn(t, 1, 7, Connection::Kind::kShim);
  CHECK(JobTable::RunsOn(c, kGpu0) == kGpu0);
  c.moved[kGpu0] = kGpu1;
  CHECK(JobTable::RunsOn(c, kGpu0) == kGpu1);
  CHECK(FormatGpuUuid(t.NamedBy(c, kGpu1)) == kGpu0);
  CHECK(FormatGpuUuid(t.NamedBy(c, kGpu0)) == kGpu0);
}

}  // namespace
}  // namespace gshare::unit_job_table
