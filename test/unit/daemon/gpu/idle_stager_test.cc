// IdleStager: how long a job has been idle, when the GPUs are looked at again, and the staging
// requests it sends, against a real Arbiter and MemoryLedger, a manual clock and a host that
// records what it is asked to send.
#include "daemon/gpu/idle_stager.h"

#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "daemon/memory_parts.h"

namespace gshare::unit_idle_stager {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests
constexpr Millis kAfter{5000};

struct RecordingHost : IdleStager::Host {
  struct Sent {
    ConnId conn;
    uint64_t bytes;
  };
  std::vector<Sent> sent;
  std::map<JobId, uid_t> owners;  // jobs not listed are root's
  void SendStage(ConnId conn, const GpuKey&, uint64_t bytes) override {
    sent.push_back({conn, bytes});
  }
  uid_t JobOwner(JobId job) const override {
    auto it = owners.find(job);
    return it == owners.end() ? 0 : it->second;
  }
};

// Job j has connection j * 10 + 1; `owner` maps a job to its uid for the per-user budget.
struct Parts {
  explicit Parts(Millis after = kAfter, uint64_t per_user_gib = 0)
      : ledger(LedgerOptions(per_user_gib)), stager(after, arbiter, ledger, clock, host) {}
  MemoryLedger::Options LedgerOptions(uint64_t per_user_gib) {
    MemoryLedger::Options o = ledger_test::NoContext();
    o.host_budget_per_user = per_user_gib * kGiB;
    o.owner = [this](JobId j) { return host.JobOwner(j); };
    return o;
  }
  ManualClock clock;
  Arbiter arbiter{Arbiter::Options{}};
  RecordingHost host;
  MemoryLedger ledger;
  IdleStager stager;

  void AddJob(JobId job) {
    arbiter.AddJob(job, 0, Millis(0), 0);
    arbiter.AddConn(job * 10 + 1, job, static_cast<pid_t>(job * 100));
    stager.Active(job);
  }
  // SwapReport of job `job`.
  void Report(JobId job, uint64_t allocated, uint64_t resident, uint64_t host_gib = 0) {
    ledger.Report(job * 10 + 1, job, kGpu, SwapReport(allocated, resident, host_gib));
  }
  std::optional<TimePoint> Tick() { return stager.Tick({kGpu}); }
};

TEST_CASE("idle stager: a job is idle from its last activity while it holds and wants no lease") {
  Parts p;
  p.AddJob(1);
  p.clock.Advance(Millis(3000));
  CHECK(p.stager.IdleFor(1) == Millis(3000));
  const LeaseActions granted = p.arbiter.Request(11, kGpu, p.clock.Now());
  REQUIRE(granted.size() == 1);  // it holds the GPU
  p.stager.Active(1);
  p.clock.Advance(Millis(9000));
  CHECK_FALSE(p.stager.IdleFor(1).has_value());
  p.arbiter.Released(11, kGpu, granted[0].epoch, p.clock.Now());
  p.stager.Active(1);
  p.clock.Advance(Millis(2000));
  CHECK(p.stager.IdleFor(1) == Millis(2000));
  CHECK_FALSE(p.stager.IdleFor(2).has_value());  // unknown
  p.stager.ForgetJob(1);
  CHECK_FALSE(p.stager.IdleFor(1).has_value());
}

TEST_CASE("idle stager: staged once the job is idle long enough, asked once per idle period") {
  Parts p;
  p.AddJob(1);
  p.Report(1, 40, 40);
  std::optional<TimePoint> due = p.Tick();  // idle 0 s: due when it reaches kAfter
  CHECK(p.host.sent.empty());
  REQUIRE(due.has_value());
  CHECK(*due == p.clock.Now() + kAfter);

  p.clock.Advance(Millis(100));
  CHECK(p.Tick() == due);  // within kCheck: the last answer, nothing planned
  p.clock.Advance(kAfter - Millis(100));
  due = p.Tick();
  REQUIRE(p.host.sent.size() == 1);
  CHECK(p.host.sent[0].conn == 11);
  CHECK(p.host.sent[0].bytes == 40 * kGiB);
  REQUIRE(due.has_value());  // not staged yet by the reports: looked at again
  CHECK(*due == p.clock.Now() + IdleStager::kRecheck);
  p.clock.Advance(Millis(100));
  CHECK(p.Tick() == due);  // within kCheck: the last answer

  p.clock.Advance(IdleStager::kRecheck);
  p.Tick();
  CHECK(p.host.sent.size() == 1);  // asked already in this idle period

  p.stager.Active(1);  // it ran: a new idle period
  p.clock.Advance(kAfter);
  p.Tick();
  CHECK(p.host.sent.size() == 2);
}

TEST_CASE("idle stager: a staged copy is bounded by its owner's host budget") {
  Parts p(kAfter, /*per_user_gib=*/30);
  p.host.owners = {{1, 1001}, {2, 1002}, {3, 1002}};
  p.AddJob(2);  // idle longest: planned first
  p.clock.Advance(Millis(1000));
  p.AddJob(1);
  p.Report(1, 30, 30);
  p.Report(2, 20, 20);
  p.Report(3, 25, 0, /*host_gib=*/25);  // swapped out: 1002 has 5 GiB of its budget left
  p.clock.Advance(kAfter);
  p.Tick();
  std::map<ConnId, uint64_t> bytes;
  for (const auto& s : p.host.sent) bytes[s.conn] += s.bytes;
  CHECK(bytes[21] == 5 * kGiB);
  // What is planned counts against every budget (IdleStaging::Plan): 1001 has 25 GiB left.
  CHECK(bytes[11] == 25 * kGiB);
}

TEST_CASE("idle stager: off when idle_stage_after is 0 or the lease is off") {
  Parts off(Millis(0));
  off.AddJob(1);
  off.Report(1, 40, 40);
  off.clock.Advance(Millis(60000));
  CHECK_FALSE(off.Tick().has_value());
  CHECK(off.host.sent.empty());

  Parts disabled;
  disabled.AddJob(1);
  disabled.Report(1, 40, 40);
  disabled.arbiter.SetEnabled(false, disabled.clock.Now());
  disabled.clock.Advance(kAfter);
  CHECK_FALSE(disabled.Tick().has_value());
  CHECK(disabled.host.sent.empty());
}

}  // namespace
}  // namespace gshare::unit_idle_stager
