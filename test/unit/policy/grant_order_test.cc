// GrantOrder: whom a GPU goes to next, read off a hand-built Arbiter state: the fair share order
// of a lease's waiters (priority, the incumbent, the user served least recently, arrival), the
// waiters it skips (suspended, refused by the grant filter), and gang reservations: a waiting
// gang holds back a later job on its GPUs until it is free on all of them.
#include "policy/grant_order.h"

#include <doctest/doctest.h>

#include <vector>

namespace gshare::unit_grant_order {
namespace {

const GpuKey kGpu0 = "GPU-0";
const GpuKey kGpu1 = "GPU-1";

// A state and the order over it; the grant filter takes all unless `refused` names the job.
struct Fixture {
  arbiter_state::State s;
  bool enabled = true;
  std::vector<JobId> refused;
  GrantOrder::GrantFilter filter = [this](const GpuKey&, JobId job) {
    for (JobId r : refused) {
      if (r == job) return false;
    }
    return true;
  };
  GrantOrder order{s, enabled, filter};

  // Job `job` of `uid` at `priority`, waiting for `gpu` (arriving now) with connection job*10.
  void Wait(JobId job, uid_t uid, int priority, const GpuKey& gpu) {
    arbiter_state::Job& j = s.jobs[job];
    j.uid = uid;
    j.priority = priority;
    j.conns.insert(job * 10);
    s.conns[job * 10] = arbiter_state::Conn{job, 0};
    arbiter_state::Lease& lease = s.leases[gpu];
    lease.wanting.insert(job * 10);
    lease.queue[job] = ++s.arrivals;
  }
  void Gang(JobId job, std::vector<GpuKey> gpus) {
    s.jobs[job].gang = std::move(gpus);
    s.jobs[job].gang_wait = ++s.arrivals;
    s.gangs.insert(job);
  }
  void Hold(JobId job, const GpuKey& gpu) {
    arbiter_state::Lease& lease = s.leases[gpu];
    lease.holder = job;
    lease.holding[job * 10] = ++lease.epoch;
    s.conns[job * 10] = arbiter_state::Conn{job, 0};
    s.jobs[job].conns.insert(job * 10);
  }
  const arbiter_state::Lease& L(const GpuKey& gpu) { return s.leases.at(gpu); }
};

TEST_CASE("waiters go by priority, then the user served least recently, then arrival") {
  Fixture fx;
  fx.Wait(1, 100, 0, kGpu0);  // user 100's first job
  fx.Wait(2, 100, 0, kGpu0);  // user 100's second
  fx.Wait(3, 200, 0, kGpu0);  // user 200's only
  fx.Wait(4, 300, 5, kGpu0);  // a higher priority, last to arrive
  CHECK(fx.order.WaiterOrder(fx.L(kGpu0)) == std::vector<JobId>{4, 1, 3, 2});

  // User 100 just had a turn of this GPU: user 200 comes first at priority 0.
  fx.s.leases[kGpu0].turns.Took(100);
  CHECK(fx.order.WaiterOrder(fx.L(kGpu0)) == std::vector<JobId>{4, 3, 1, 2});

  // The incumbent comes before the others of its priority.
  fx.s.leases[kGpu0].incumbent = 2;
  CHECK(fx.order.WaiterOrder(fx.L(kGpu0)) == std::vector<JobId>{4, 2, 3, 1});
}

TEST_CASE("the best waiter skips suspended jobs, and the filter's refusals when asked to") {
  Fixture fx;
  fx.Wait(1, 100, 0, kGpu0);
  fx.Wait(2, 200, 0, kGpu0);
  fx.Wait(3, 300, 0, kGpu0);
  fx.s.jobs[1].suspended = true;
  fx.refused = {2};
  CHECK(fx.order.BestWaiter(kGpu0, fx.L(kGpu0), false) == JobId{2});
  CHECK(fx.order.BestWaiter(kGpu0, fx.L(kGpu0), true) == JobId{3});
  CHECK(fx.order.NextGrant(kGpu0, fx.L(kGpu0), false) == JobId{3});
  CHECK(fx.order.Suspended(10));
  CHECK_FALSE(fx.order.Suspended(20));
  CHECK(fx.order.JobWants(fx.L(kGpu0), 2));
  CHECK_FALSE(fx.order.JobWants(fx.L(kGpu0), 9));
}

TEST_CASE("a waiting gang reserves its GPUs against later jobs until it is free on all") {
  Fixture fx;
  fx.Hold(20, kGpu1);         // GPU 1 is busy
  fx.Wait(5, 100, 0, kGpu0);  // arrived before the gang: keeps its place
  fx.Wait(10, 200, 0, kGpu0);
  fx.s.leases[kGpu1].queue[10] = fx.s.leases[kGpu0].queue[10];
  fx.Gang(10, {kGpu0, kGpu1});
  fx.Wait(11, 300, 0, kGpu0);  // arrived after the gang

  CHECK(fx.order.IsGang(10));
  CHECK(fx.order.InGang(10, fx.L(kGpu1)));
  CHECK(fx.order.HeadGang() == JobId{10});
  CHECK(fx.order.Wants(fx.L(kGpu1), 10));  // it asks for GPU 0 of its gang
  CHECK(fx.order.NextGrant(kGpu0, fx.L(kGpu0), false) == JobId{5});

  // Job 5 had its turn: GPU 0 is reserved against job 11, and the gang is not ready (GPU 1).
  fx.s.leases[kGpu0].queue.erase(5);
  fx.s.leases[kGpu0].turns.Took(100);
  CHECK(fx.order.Reserved(kGpu0, fx.L(kGpu0), 11, JobId{10}));
  CHECK_FALSE(fx.order.GangReady(10, GpuKey(), JobId{10}));
  CHECK(fx.order.NextGrant(kGpu0, fx.L(kGpu0), false) == std::nullopt);
  // Whether to drop GPU 0's holder for it: the first gang counts as ready.
  CHECK(fx.order.NextGrant(kGpu0, fx.L(kGpu0), true) == JobId{10});

  // GPU 1 freed: the gang is ready everywhere and goes first.
  fx.s.leases[kGpu1].holder.reset();
  fx.s.leases[kGpu1].holding.clear();
  CHECK(fx.order.GangReady(10, GpuKey(), JobId{10}));
  CHECK(fx.order.NextGrant(kGpu0, fx.L(kGpu0), false) == JobId{10});

  // With the scheduler off every GPU counts as free.
  fx.Hold(20, kGpu1);
  fx.enabled = false;
  CHECK(fx.order.GangReady(10, GpuKey(), JobId{10}));
}

TEST_CASE("a dropped gang drains while one of its processes still holds a GPU of it") {
  Fixture fx;
  fx.Gang(10, {kGpu0, kGpu1});
  fx.s.jobs[10].gang_wait = 0;
  fx.Hold(10, kGpu0);
  fx.Hold(10, kGpu1);
  CHECK_FALSE(fx.order.GangDraining(10));
  fx.s.leases[kGpu1].dropping = true;
  CHECK(fx.order.GangDraining(10));
  fx.s.leases[kGpu1].holding.clear();
  CHECK_FALSE(fx.order.GangDraining(10));
  CHECK(fx.order.TurnHolding(fx.L(kGpu0)));
  fx.s.leases[kGpu0].residents.insert(10);
  CHECK(fx.order.ResidentConn(fx.L(kGpu0), 100));
  CHECK_FALSE(fx.order.TurnHolding(fx.L(kGpu0)));
}

}  // namespace
}  // namespace gshare::unit_grant_order
