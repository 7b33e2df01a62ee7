// Issue 26: the scheduler moves a checkpointed process that waits for its GPU to an idle GPU
// of the same kind with room for it; never a process that cannot move (sees one GPU, uses
// two, suspended by its user), never onto a GPU of another kind, a busy one or one too full;
// the same choice whatever the order of the GPUs; and not back before the process has run.
#include "policy/rebalance.h"

#include <doctest/doctest.h>

#include <algorithm>

namespace gshare::unit_rebalance {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
const char* const kH100 = "NVIDIA H100 80GB HBM3";

Rebalancer::Gpu Idle(int index, uint64_t room = 60 * kGiB) {
  Rebalancer::Gpu g;
  g.key = "GPU-" + std::to_string(index);
  g.index = index;
  g.name = kH100;
  g.total = 80 * kGiB;
  g.shared = true;
  g.room = room;
  return g;
}

// GPU 0, held by job 1; GPUs 1..3 idle.
std::vector<Rebalancer::Gpu> Machine() {
  std::vector<Rebalancer::Gpu> gpus;
  for (int i = 0; i < 4; ++i) gpus.push_back(Idle(i));
  gpus[0].holding = {1};
  gpus[0].waiting = {2};
  gpus[0].shared = false;
  gpus[0].room = 0;
  return gpus;
}

// Job 2's process, checkpointed on GPU 0 and waiting for it; 30 GiB.
Rebalancer::Process Waiting() {
  Rebalancer::Process p;
  p.conn = 7;
  p.job = 2;
  p.uses = {"GPU-0"};
  p.sees_every_gpu = true;
  p.gang = true;
  p.checkpointed = true;
  p.waiting = true;
  p.bytes = 30 * kGiB;
  return p;
}

TEST_CASE("a waiting checkpointed process moves to an idle GPU of its kind") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = Machine();
  gpus[2].room = gpus[3].room = 10 * kGiB;  // too full: GPU 1 is the only one
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-1"));
  // Its own job waiting there (a gang queues on each of its GPUs) does not make it busy.
  gpus[1].waiting = {2};
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-1"));
}

TEST_CASE("no move while nobody else holds its GPU, or while it does not wait") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = Machine();
  Rebalancer::Process p = Waiting();
  p.waiting = false;
  CHECK_FALSE(r.Target(p, gpus));
  gpus[0].holding = {};
  CHECK_FALSE(r.Target(Waiting(), gpus));
  gpus[0].holding = {2};  // its own job holds it (a grant on its way)
  CHECK_FALSE(r.Target(Waiting(), gpus));
}

TEST_CASE("not onto a GPU of another kind") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = {Machine()[0], Idle(1), Idle(2)};
  gpus[1].name = "NVIDIA A100-SXM4-80GB";
  gpus[2].total = 94 * kGiB;  // the same name, another memory size (an H100 NVL, say)
  CHECK_FALSE(r.Target(Waiting(), gpus));
  gpus[2].total = gpus[0].total;
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-2"));
  // NVML unknown: no kind to compare.
  for (Rebalancer::Gpu& g : gpus) g.name.clear();
  CHECK_FALSE(r.Target(Waiting(), gpus));
}

TEST_CASE("not onto a busy GPU, one another job waits for, or one without room") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = {Machine()[0], Idle(1)};
  gpus[1].holding = {3};
  CHECK_FALSE(r.Target(Waiting(), gpus));
  gpus[1].holding = {};
  gpus[1].waiting = {3};
  CHECK_FALSE(r.Target(Waiting(), gpus));
  gpus[1].waiting = {};
  gpus[1].room = 30 * kGiB - 1;
  CHECK_FALSE(r.Target(Waiting(), gpus));
  gpus[1].room = 30 * kGiB;
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-1"));
}

TEST_CASE("a gang job moves only onto a GPU in shared mode") {
  // In exclusive mode its request there would wait for every GPU of its gang again.
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = {Machine()[0], Idle(1)};
  gpus[1].shared = false;
  CHECK_FALSE(r.Target(Waiting(), gpus));
  Rebalancer::Process single = Waiting();
  single.gang = false;
  CHECK(r.Target(single, gpus) == GpuKey("GPU-1"));
}

TEST_CASE("processes that cannot or may not move stay") {
  Rebalancer r;
  const std::vector<Rebalancer::Gpu> gpus = Machine();
  Rebalancer::Process p = Waiting();
  SUBCASE("a job that sees one GPU") { p.sees_every_gpu = false; }
  SUBCASE("a process that uses two GPUs") { p.uses = {"GPU-0", "GPU-1"}; }
  SUBCASE("a process with no memory on a GPU") { p.uses = {}; }
  SUBCASE("a job the user suspended") { p.suspended = true; }
  SUBCASE("a process not checkpointed") { p.checkpointed = false; }
  SUBCASE("a process on a GPU the machine does not list") { p.uses = {"GPU-9"}; }
  CHECK_FALSE(r.Target(p, gpus));
}

TEST_CASE("the most room wins, then the lowest index, whatever the order") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = Machine();
  gpus[1].room = 40 * kGiB;
  gpus[2].room = 50 * kGiB;
  gpus[3].room = 50 * kGiB;
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-2"));
  std::reverse(gpus.begin(), gpus.end());
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-2"));
  gpus[0].room = 51 * kGiB;  // GPU 3
  CHECK(r.Target(Waiting(), gpus) == GpuKey("GPU-3"));
}

TEST_CASE("a moved process is not moved again before it has run") {
  Rebalancer r;
  std::vector<Rebalancer::Gpu> gpus = {Machine()[0], Idle(1)};
  REQUIRE(r.Target(Waiting(), gpus) == GpuKey("GPU-1"));
  r.Moved(7);
  // On GPU 1 now, and GPU 1 taken by another job before its restore: GPU 0 is free again.
  Rebalancer::Process moved = Waiting();
  moved.uses = {"GPU-1"};
  gpus = {Idle(0), Idle(1, 0)};
  gpus[1].holding = {3};
  gpus[1].shared = false;
  CHECK_FALSE(r.Target(moved, gpus));
  CHECK(r.Target(Waiting(), {Machine()[0], Idle(1)}) == std::nullopt);  // nor elsewhere
  r.Ran(7);
  CHECK(r.Target(moved, gpus) == GpuKey("GPU-0"));
  r.Moved(7);
  r.Forget(7);  // a new connection's process starts afresh
  CHECK(r.Target(moved, gpus) == GpuKey("GPU-0"));
}

}  // namespace
}  // namespace gshare::unit_rebalance
