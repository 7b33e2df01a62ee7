// StaggerCoordinator: which shims report their idle gaps (two jobs or more of one priority holding
// a GPU in shared mode), a stretch sent to the job the Stagger picks, against a real Arbiter, a
// manual clock and a host that records the messages.
#include "daemon/gpu/stagger_coordinator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace gshare::unit_stagger_coordinator {
namespace {

const GpuKey kGpu = "GPU-0";

struct RecordingHost : StaggerCoordinator::Host {
  StaggerCoordinator* coordinator = nullptr;
  std::set<ConnId> unreachable;  // a send to these fails and drops the peer, as Daemon::Send does
  std::vector<std::pair<ConnId, JobId>> shims;
  std::set<ConnId> watching;  // as the shims were told
  std::vector<std::pair<ConnId, Millis>> stretches;
  std::vector<std::pair<ConnId, JobId>> Shims() const override { return shims; }
  bool KnowsGpu(const GpuKey& gpu) const override { return gpu == kGpu; }
  bool SendGapWatch(ConnId conn, const GpuKey&, bool on) override {
    if (unreachable.count(conn) != 0) {
      coordinator->ForgetConn(conn);
      std::erase_if(shims, [conn](const auto& s) { return s.first == conn; });
      return false;
    }
    if (on) {
      watching.insert(conn);
    } else {
      watching.erase(conn);
    }
    return true;
  }
  void SendStretch(ConnId conn, const GpuKey&, Millis gap) override {
    stretches.emplace_back(conn, gap);
  }
};

// Job j has connection j * 10 + 1 and asks for the GPU; the GPU is shared.
struct Parts {
  explicit Parts(bool enabled = true) : watch(enabled, arbiter, clock, host) {
    host.coordinator = &watch;
    arbiter.SetShared(kGpu, true, clock.Now());
  }
  ManualClock clock;
  Arbiter arbiter{Arbiter::Options{}};
  RecordingHost host;
  StaggerCoordinator watch;

  void AddJob(JobId job, int priority = 0) {
    const ConnId conn = job * 10 + 1;
    arbiter.AddJob(job, priority, Millis(0), 0);
    arbiter.AddConn(conn, job, static_cast<pid_t>(job * 100));
    host.shims.emplace_back(conn, job);
    arbiter.Request(conn, kGpu, clock.Now());  // shared: granted at once
    watch.Update(kGpu);
  }
  int Watched() {
    nlohmann::json g;
    watch.AddJson(kGpu, &g);
    return g["gap_watch"].get<int>();
  }
};

TEST_CASE("stagger coordinator: on while two jobs of one priority hold the GPU shared, off after") {
  Parts p;
  p.AddJob(1);
  CHECK(p.host.watching.empty());  // one holder: nothing to stagger
  p.AddJob(2);
  CHECK(p.host.watching == std::set<ConnId>{11, 21});
  CHECK(p.Watched() == 2);
  // Job 2 leaves: job 1 is told to stop; job 2's shim ended by itself.
  p.arbiter.Disconnected(21, p.clock.Now());
  p.arbiter.RemoveJob(2);
  p.host.shims.pop_back();
  p.watch.ForgetConn(21);
  p.watch.Update(kGpu);
  CHECK(p.host.watching == std::set<ConnId>{21});  // only 11 was told off
  CHECK(p.Watched() == 0);
}

TEST_CASE("stagger coordinator: a peer dropped by its watch message leaves nothing watched") {
  Parts p;
  p.AddJob(1);
  p.host.unreachable.insert(21);
  p.AddJob(2);  // 21 is told to watch, and dropped
  CHECK(p.host.watching == std::set<ConnId>{11});
  CHECK(p.Watched() == 1);
  // Job 3 arrives, then job 2's priority makes them unequal: 31 is told off and dropped while
  // it is being taken off the watch.
  p.AddJob(3);
  REQUIRE(p.host.watching == std::set<ConnId>{11, 31});
  p.host.unreachable = {31};
  p.arbiter.SetPriority(1, 9);
  p.watch.Update(kGpu);
  CHECK(p.host.watching == std::set<ConnId>{31});  // 11 told off; 31 dropped before it heard
  CHECK(p.Watched() == 0);
}

TEST_CASE("stagger coordinator: not between priorities, nor in exclusive mode, nor when off") {
  Parts prio;
  prio.AddJob(1, 5);
  prio.AddJob(2, 0);
  CHECK(prio.host.watching.empty());

  Parts off(/*enabled=*/false);
  off.AddJob(1);
  off.AddJob(2);
  CHECK(off.host.watching.empty());

  Parts p;
  p.AddJob(1);
  p.AddJob(2);
  p.arbiter.SetShared(kGpu, false, p.clock.Now());
  p.watch.Update(kGpu);
  CHECK(p.Watched() == 0);
}

// Both jobs idle 40 ms at once every 100 ms, each gap reported 10 ms after it ends, for up
// to 12 periods or until a stretch is sent.
void LockStep(Parts& p) {
  const TimePoint t0 = p.clock.Now();
  for (int i = 0; i < 12 && p.host.stretches.empty(); ++i) {
    const TimePoint begin = t0 + Millis(100 * i);
    p.clock.Advance(Millis(100 * i + 50) - std::chrono::duration_cast<Millis>(p.clock.Now() - t0));
    p.watch.OnReport(1, kGpu, begin, begin + Millis(40));
    p.watch.OnReport(2, kGpu, begin, begin + Millis(40));
  }
}

TEST_CASE("stagger coordinator: holders idle in lock step get one job's next gap stretched") {
  Parts p;
  p.AddJob(1);
  p.AddJob(2);
  LockStep(p);
  REQUIRE(p.host.stretches.size() == 1);
  CHECK(p.host.stretches[0].second > Millis(40));
  nlohmann::json g;
  p.watch.AddJson(kGpu, &g);
  CHECK(g["stretches"] == 1);

  // Reports that crossed a switch to exclusive mode are late: ignored.
  Parts q;
  q.AddJob(1);
  q.AddJob(2);
  q.arbiter.SetShared(kGpu, false, q.clock.Now());
  LockStep(q);
  CHECK(q.host.stretches.empty());
}

}  // namespace
}  // namespace gshare::unit_stagger_coordinator
