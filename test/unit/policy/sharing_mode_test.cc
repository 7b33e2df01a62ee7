// Sharing mode: shared while the jobs fit, whatever their priorities; exclusive at once when
// they do not; shared again only kSettle after the last switch to exclusive. The arrival of a
// higher-priority job is driven in every state and the switches are counted.
#include "policy/sharing_mode.h"

#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "arbiter_test_util.h"
#include "ledger_test_util.h"

namespace gshare::unit_sharing_mode {
namespace {

using arbiter_test::Count;
using arbiter_test::Kind;
using ledger_test::At;
using ledger_test::kGiB;
using ledger_test::kGpu;
using ledger_test::NoContext;

// Residents' `allowed`: the jobs of `ids` (the daemon's rule leaves out gangs and suspended jobs).
std::function<bool(JobId)> Only(std::set<JobId> ids) {
  return [ids = std::move(ids)](JobId j) { return ids.count(j) != 0; };
}

// The daemon's side, as Daemon::UpdateSharing does it: the arbiter, the ledger and the mode,
// with every switch counted.
struct Gpu {
  Arbiter arbiter{Arbiter::Options{}};
  MemoryLedger ledger{NoContext()};
  SharingMode mode;
  int switches = 0;
  LeaseActions last;

  // Job `job` (connection job*10+1, priority `priority`) reports `gib` and asks for the GPU.
  void Arrive(JobId job, int priority, uint64_t gib, TimePoint now) {
    arbiter.AddJob(job, priority, Millis(0), 0);
    arbiter.AddConn(job * 10 + 1, job, static_cast<pid_t>(job * 100));
    Report(job, gib, now);
    last = arbiter.Request(job * 10 + 1, kGpu, now);
    Update(now);
  }
  void Report(JobId job, uint64_t gib, TimePoint now) {
    proto::MemReportMsg m{};
    m.total = 80 * kGiB;
    m.allocated = m.resident = gib * kGiB;
    ledger.Report(job * 10 + 1, job, kGpu, m);
    Update(now);
  }
  void Update(TimePoint now) {
    bool want = mode.Want(kGpu, true, ledger, arbiter, now);
    if (arbiter.IsShared(kGpu) == want) return;
    ++switches;
    mode.Switched(kGpu, want, now);
    LeaseActions a = arbiter.SetShared(kGpu, want, now);
    last.insert(last.end(), a.begin(), a.end());
  }
};

TEST_CASE("sharing mode: a higher priority arriving on a shared GPU switches nothing") {
  Gpu g;
  g.Arrive(1, 0, 20, At(0));
  g.Arrive(2, 0, 20, At(10));
  REQUIRE(g.arbiter.IsShared(kGpu));
  int before = g.switches;
  g.Arrive(3, 10, 10, At(20));
  CHECK(g.switches == before);
  CHECK(g.arbiter.IsShared(kGpu));
  CHECK(Count(g.last, Kind::kGrant, 31) == 1);  // seen at its first request: granted at once
  CHECK(Count(g.last, Kind::kDrop, 11) + Count(g.last, Kind::kDrop, 21) == 0);
}

TEST_CASE("sharing mode: a higher priority arriving on an exclusive GPU switches nothing") {
  Gpu g;
  g.Arrive(1, 0, 50, At(0));
  g.Arrive(2, 0, 50, At(10));  // 100 GiB on 80: exclusive, both shared holders drop
  REQUIRE_FALSE(g.arbiter.IsShared(kGpu));
  int before = g.switches;
  SUBCASE("while the shared holders drain") {
    g.Arrive(3, 10, 5, At(20));
    CHECK(g.switches == before);
    CHECK(Count(g.last, Kind::kGrant, 31) == 0);
  }
  SUBCASE("while one job holds it") {
    for (ConnId c : {11, 21}) {
      g.arbiter.Released(c, kGpu, arbiter_test::EpochOf(g.last, Kind::kDrop, c), At(30));
    }
    g.arbiter.Request(11, kGpu, At(40));
    g.arbiter.Request(21, kGpu, At(41));
    std::optional<JobId> holder = g.arbiter.Holder(kGpu);
    REQUIRE(holder);
    g.Arrive(3, 10, 5, At(50));
    CHECK(g.switches == before);
    // Strict priority in exclusive mode: the holder is told to drop at once.
    CHECK(Count(g.last, Kind::kDrop, *holder * 10 + 1) == 1);
  }
}

TEST_CASE("sharing mode: a higher priority that does not fit switches once, and stays") {
  Gpu g;
  g.Arrive(1, 0, 30, At(0));
  g.Arrive(2, 0, 30, At(10));
  REQUIRE(g.arbiter.IsShared(kGpu));
  int before = g.switches;
  g.Arrive(3, 10, 30, At(20));  // 90 GiB on 80
  CHECK(g.switches == before + 1);
  CHECK_FALSE(g.arbiter.IsShared(kGpu));
  // Its allocator frees and maps again around the border for a while: no flapping.
  for (int i = 1; i <= 40; ++i) g.Report(3, i % 2 == 0 ? 30 : 15, At(20 + i * 20));
  CHECK(g.switches == before + 1);
  // Fitting for good, it goes shared once kSettle has passed since the switch.
  g.Report(3, 15, At(1100));
  CHECK(g.switches == before + 2);
  CHECK(g.arbiter.IsShared(kGpu));
}

TEST_CASE("sharing mode: within kSettle after going exclusive a fitting arrival waits") {
  Gpu g;
  g.Arrive(1, 0, 50, At(0));
  g.Arrive(2, 0, 50, At(10));
  REQUIRE_FALSE(g.arbiter.IsShared(kGpu));
  g.Report(2, 10, At(100));  // fits now, but the GPU went exclusive 90 ms ago
  CHECK_FALSE(g.arbiter.IsShared(kGpu));
  REQUIRE(g.mode.NextDeadline());
  CHECK(*g.mode.NextDeadline() == At(10) + SharingMode::kSettle);
  int before = g.switches;
  g.Arrive(3, 10, 5, At(200));
  CHECK(g.switches == before);
  g.Update(At(10) + SharingMode::kSettle);
  CHECK(g.switches == before + 1);
  CHECK(g.arbiter.IsShared(kGpu));
  CHECK_FALSE(g.mode.NextDeadline());
  CHECK(g.mode.Switches(kGpu) == static_cast<uint64_t>(g.switches));
}

TEST_CASE("sharing mode: a job whose memory is unknown keeps the GPU exclusive") {
  Gpu g;
  g.Arrive(1, 0, 10, At(0));
  REQUIRE(g.arbiter.IsShared(kGpu));
  g.arbiter.AddJob(2, 10, Millis(0), 0);
  g.arbiter.AddConn(21, 2, 200);
  g.last = g.arbiter.Request(21, kGpu, At(10));  // no report yet
  g.Update(At(10));
  CHECK_FALSE(g.arbiter.IsShared(kGpu));
}

TEST_CASE("sharing mode: the top priority stays resident while its own memory fits") {
  Gpu g;
  g.Arrive(2, 0, 45, At(0));
  g.Arrive(3, 0, 30, At(10));
  g.Arrive(1, 10, 10, At(20));
  REQUIRE_FALSE(g.arbiter.IsShared(kGpu));  // 80 GiB: all three do not fit
  const auto all = Only({1, 2, 3});
  CHECK(g.mode.Residents(kGpu, all, g.ledger, g.arbiter, At(30)) == std::set<JobId>{1});
  // Not a candidate (a gang, a suspended job): none.
  CHECK(g.mode.Residents(kGpu, Only({2, 3}), g.ledger, g.arbiter, At(2000)).empty());
  CHECK(g.mode.Residents(kGpu, all, g.ledger, g.arbiter, At(2010)) == std::set<JobId>{1});
  // A lower job grows: 10 + 75 GiB no longer fits beside it. The top job stays: the lower
  // job's turn gets only free or staged room, so the top job never waits for that turn.
  g.Report(2, 75, At(2500));
  CHECK(g.mode.Residents(kGpu, all, g.ledger, g.arbiter, At(2600)) == std::set<JobId>{1});
  CHECK(g.mode.Residents(kGpu, all, g.ledger, g.arbiter, At(9000)) == std::set<JobId>{1});
  // The top job itself outgrows the GPU: it takes turns with the others (made long before,
  // the residents are not held kSettle).
  g.Report(1, 81, At(10000));
  CHECK(g.mode.Residents(kGpu, all, g.ledger, g.arbiter, At(10010)).empty());
}

TEST_CASE("sharing mode: two top jobs that do not fit together are no residents") {
  Gpu g;
  g.Arrive(3, 0, 10, At(0));
  g.Arrive(1, 10, 45, At(10));
  g.Arrive(2, 10, 40, At(20));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(30)).empty());
  g.Report(2, 30, At(40));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(50)) ==
        std::set<JobId>{1, 2});
  // They outgrow it again at once: held kSettle after they were made, then none.
  g.Report(2, 40, At(60));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(70)) ==
        std::set<JobId>{1, 2});
  REQUIRE(g.mode.NextDeadline().has_value());
  CHECK(*g.mode.NextDeadline() == At(50) + SharingMode::kSettle);
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(1100)).empty());
}

TEST_CASE("sharing mode: no residents with one priority or the top job's memory unknown") {
  Gpu g;
  g.Arrive(2, 0, 50, At(0));
  g.Arrive(3, 0, 50, At(10));
  CHECK(g.mode.Residents(kGpu, Only({2, 3}), g.ledger, g.arbiter, At(20)).empty());
  // A high job that has not reported its memory may not fit: none until it reports.
  g.arbiter.AddJob(1, 10, Millis(0), 0);
  g.arbiter.AddConn(11, 1, 100);
  g.arbiter.Request(11, kGpu, At(30));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(40)).empty());
  g.Report(1, 20, At(50));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3}), g.ledger, g.arbiter, At(60)) == std::set<JobId>{1});
  // A lower job that has not reported (it allocates in its first turn) does not stop them.
  g.arbiter.AddJob(4, 0, Millis(0), 0);
  g.arbiter.AddConn(41, 4, 400);
  g.arbiter.Request(41, kGpu, At(70));
  CHECK(g.mode.Residents(kGpu, Only({1, 2, 3, 4}), g.ledger, g.arbiter, At(80)) ==
        std::set<JobId>{1});
}

TEST_CASE("sharing mode: a top job between bursts, its memory on the GPU, stays resident") {
  Gpu g;
  g.Arrive(2, 0, 60, At(0));
  // Job 1 (priority 10) has 10 GiB on the GPU and holds nothing now (an idle release): it is
  // on the GPU all the same, and stays resident while job 2 asks.
  g.arbiter.AddJob(1, 10, Millis(0), 0);
  g.arbiter.AddConn(11, 1, 100);
  g.Report(1, 10, At(10));
  CHECK(g.arbiter.JobsOn(kGpu) == std::vector<JobId>{2});
  CHECK(SharingMode::OnGpu(kGpu, g.ledger, g.arbiter) == std::set<JobId>{1, 2});
  CHECK(g.mode.Residents(kGpu, Only({1, 2}), g.ledger, g.arbiter, At(20)) == std::set<JobId>{1});
  // Suspended, its memory counts no more: no residents.
  g.ledger.SetSuspended(1, true);
  CHECK(SharingMode::OnGpu(kGpu, g.ledger, g.arbiter) == std::set<JobId>{2});
  CHECK(g.mode.Residents(kGpu, Only({2}), g.ledger, g.arbiter, At(2000)).empty());
}

}  // namespace
}  // namespace gshare::unit_sharing_mode
