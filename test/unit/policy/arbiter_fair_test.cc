// Fair share of the lease between users (issue 21): at one priority the turns go round robin
// between users, then between each user's jobs; priority still wins.
#include "policy/arbiter.h"
#include "policy/arbiter_test_util.h"

#include <map>
#include <set>
#include <vector>

#include <doctest/doctest.h>

namespace gshare::unit_arbiter_fair {
namespace {

using namespace arbiter_test;

// Jobs of three users: uid 1001 has one job, 1002 two, 1003 five. Job j has connection 10*j
// (pid 100*j). Every job asks for the GPU at once and again right after each of its turns, as
// busy trainings do; returns the holder of each of `quanta` consecutive turns.
struct Busy {
  Arbiter arb;
  std::map<JobId, uid_t> owner;
  std::map<JobId, uint64_t> epoch;  // of each holding job's grant
  int now = 0;

  explicit Busy(const Arbiter::Options& options) : arb(options) {}

  void Add(JobId job, uid_t uid, int priority = 0) {
    arb.AddJob(job, priority, Millis(0), uid);
    arb.AddConn(10 * job, job, static_cast<pid_t>(100 * job));
    owner[job] = uid;
  }
  void Note(const LeaseActions& a) {
    for (const auto& x : a) {
      if (x.kind == Kind::kGrant) epoch[x.conn / 10] = x.epoch;
    }
  }
  void AskAll(TimePoint t0) {
    for (const auto& [job, uid] : owner) Note(arb.Request(10 * job, kGpu, t0 + Millis(now++)));
  }
  // Runs `quanta` turns of 20 s: at each quantum's end the holder drops, releases and asks
  // again. Returns the holders in turn order.
  std::vector<JobId> Run(TimePoint t0, int quanta) {
    std::vector<JobId> holders;
    for (int q = 0; q < quanta; ++q) {
      std::optional<JobId> holder = arb.Holder(kGpu);
      REQUIRE(holder.has_value());
      holders.push_back(*holder);
      now += 20000;
      LeaseActions a = arb.Tick(t0 + Millis(now));
      REQUIRE(Count(a, Kind::kDrop, 10 * *holder) == 1);
      Note(arb.Released(10 * *holder, kGpu, epoch.at(*holder), t0 + Millis(++now)));
      Note(arb.Request(10 * *holder, kGpu, t0 + Millis(++now)));
    }
    return holders;
  }
};

TEST_CASE_FIXTURE(Fixture, "arbiter: turns go round robin between users, then their jobs") {
  Busy busy(options);
  busy.Add(1, 1001);
  for (JobId j : {2, 3}) busy.Add(j, 1002);
  for (JobId j : {4, 5, 6, 7, 8}) busy.Add(j, 1003);
  busy.AskAll(t0);
  std::vector<JobId> holders = busy.Run(t0, 300);
  std::map<uid_t, int> per_user;
  std::map<JobId, int> per_job;
  for (JobId j : holders) {
    ++per_user[busy.owner.at(j)];
    ++per_job[j];
  }
  // Each user a third of the turns (within one), whatever their job counts: not 1/8, 2/8, 5/8.
  for (const auto& [uid, n] : per_user) {
    CAPTURE(uid);
    CHECK(n >= 99);
    CHECK(n <= 101);
  }
  // Within a user, round robin between its jobs.
  CHECK(per_job[1] == per_user[1001]);
  CHECK(std::abs(per_job[2] - per_job[3]) <= 1);
  for (JobId j : {4, 5, 6, 7, 8}) {
    CAPTURE(j);
    CHECK(per_job[j] >= 19);
    CHECK(per_job[j] <= 21);
  }
  // And in every window of three consecutive turns, three different users.
  for (size_t i = 0; i + 3 <= holders.size(); i += 3) {
    std::set<uid_t> users{busy.owner.at(holders[i]), busy.owner.at(holders[i + 1]),
                          busy.owner.at(holders[i + 2])};
    CHECK(users.size() == 3);
  }
}

TEST_CASE_FIXTURE(Fixture, "arbiter: status lists the waiters in their fair grant order") {
  Busy busy(options);
  busy.Add(1, 1001);  // holds first
  busy.Add(2, 1001);
  busy.Add(3, 1001);
  busy.Add(4, 1002);
  busy.Add(5, 1003);
  busy.AskAll(t0);
  REQUIRE(busy.arb.Holder(kGpu) == JobId{1});
  auto views = busy.arb.Gpus(t0 + Millis(10));
  REQUIRE(views.size() == 1);
  // 1001 just had its turn: 1002 and 1003 (in arrival order) come before its other jobs,
  // which then alternate with nobody left.
  CHECK(views[0].waiters == std::vector<JobId>{4, 5, 2, 3});
  CHECK(busy.arb.NextWaiter(kGpu) == JobId{4});
}

TEST_CASE_FIXTURE(Fixture, "arbiter: priority still wins over fair share between users") {
  Busy busy(options);
  busy.Add(1, 1001, 5);  // one user's high-priority job
  busy.Add(2, 1001, 5);
  busy.Add(3, 1002);  // another user's ordinary ones
  busy.Add(4, 1003);
  busy.AskAll(t0);
  // The higher priority holds every turn though other users never had one.
  std::vector<JobId> holders = busy.Run(t0, 12);
  for (JobId j : holders) CHECK(busy.owner.at(j) == 1001u);
  // A job of a user who never held the GPU preempts at once when its priority is higher.
  busy.Add(9, 1004, 7);
  LeaseActions a = busy.arb.Request(90, kGpu, t0 + Millis(busy.now + 1));
  CHECK(Count(a, Kind::kDrop, 10 * *busy.arb.Holder(kGpu)) == 1);
}

}  // namespace
}  // namespace gshare::unit_arbiter_fair
