// ChooseMps: which jobs become clients of their GPU's MPS server, and at what priority and cap.
#include "policy/mps_choice.h"

#include <doctest/doctest.h>

namespace gshare::unit_mps_choice {
namespace {

const MpsSettings kSettings{/*batch_max_priority=*/0, /*batch_thread_percentage=*/40};
const MpsGpu kUp{true, std::nullopt, false};
const MpsGpu kBesideService{true, 1000u, true};  // a client above batch priority runs there

MpsJob Job(uid_t uid = 1000, int priority = 0) {
  return MpsJob{uid, priority, 1, MemoryEngine::kSwap, JobKind::kRun};
}

TEST_CASE("mps choice: a batch job is a below-normal client, uncapped by default") {
  for (const MpsGpu& gpu : {kUp, kBesideService}) {
    const MpsChoice c = ChooseMps(Job(1000, 0), gpu, kSettings);
    CHECK(c.client);
    CHECK(c.client_priority == 1);
    CHECK(c.active_thread_percentage == 100);  // the SM partition protects a busy service
  }
}

TEST_CASE("mps choice: batch_cap beside_service caps a batch job that starts beside a service") {
  MpsSettings beside = kSettings;
  beside.cap = BatchCap::kBesideService;
  MpsChoice c = ChooseMps(Job(1000, 0), kUp, beside);
  CHECK(c.client_priority == 1);
  CHECK(c.active_thread_percentage == 100);  // two batch jobs that fit keep every SM
  c = ChooseMps(Job(1000, 0), kBesideService, beside);
  CHECK(c.client_priority == 1);
  CHECK(c.active_thread_percentage == 40);
  c = ChooseMps(Job(1000, -5), kBesideService, beside);
  CHECK(c.client_priority == 1);
  CHECK(c.active_thread_percentage == 40);
  CHECK(ChooseMps(Job(1000, 1), kBesideService, beside).active_thread_percentage == 100);
  MpsSettings always = kSettings;
  always.cap = BatchCap::kAlways;
  CHECK(ChooseMps(Job(1000, 0), kUp, always).active_thread_percentage == 40);
  CHECK(ChooseMps(Job(1000, 1), kUp, always).active_thread_percentage == 100);  // not batch
}

TEST_CASE("mps choice: batch_cap auto caps only where the driver has no green contexts") {
  CHECK(ResolveBatchCap(BatchCap::kAuto, 13000) == BatchCap::kNever);
  CHECK(ResolveBatchCap(BatchCap::kAuto, kGreenContextsCudaVersion) == BatchCap::kNever);
  CHECK(ResolveBatchCap(BatchCap::kAuto, 12020) == BatchCap::kBesideService);  // R535
  CHECK(ResolveBatchCap(BatchCap::kAuto, std::nullopt) == BatchCap::kNever);   // no NVML
  for (BatchCap cap : {BatchCap::kNever, BatchCap::kBesideService, BatchCap::kAlways}) {
    CHECK(ResolveBatchCap(cap, 12020) == cap);
    CHECK(ResolveBatchCap(cap, 13000) == cap);
  }
}

TEST_CASE("mps choice: batch_cap's names") {
  for (BatchCap cap :
       {BatchCap::kAuto, BatchCap::kNever, BatchCap::kBesideService, BatchCap::kAlways}) {
    CHECK(ParseBatchCap(BatchCapName(cap)) == cap);
  }
  CHECK(ParseBatchCap("auto") == BatchCap::kAuto);
  CHECK(ParseBatchCap("never") == BatchCap::kNever);
  CHECK(ParseBatchCap("beside_service") == BatchCap::kBesideService);
  CHECK(ParseBatchCap("always") == BatchCap::kAlways);
  CHECK_FALSE(ParseBatchCap("").has_value());
  CHECK_FALSE(ParseBatchCap("Always").has_value());
}

TEST_CASE("mps choice: a job above batch_max_priority is a normal client without a cap") {
  const MpsChoice c = ChooseMps(Job(1000, 1), kBesideService, kSettings);
  CHECK(c.client);
  CHECK(c.client_priority == 0);
  CHECK(c.active_thread_percentage == 100);
  const MpsChoice raised =
      ChooseMps(Job(1000, 1), kBesideService, MpsSettings{5, 40, BatchCap::kBesideService});
  CHECK(raised.client_priority == 1);
  CHECK(raised.active_thread_percentage == 40);
}

TEST_CASE("mps choice: another user's server, several GPUs, Slurm and two engines run outside") {
  CHECK_FALSE(ChooseMps(Job(), MpsGpu{false, std::nullopt, false}, kSettings).client);
  const MpsChoice other = ChooseMps(Job(1001), MpsGpu{true, 1000u, false}, kSettings);
  CHECK_FALSE(other.client);
  CHECK(other.why_not.find("another user") != std::string::npos);
  CHECK(ChooseMps(Job(1000), MpsGpu{true, 1000u, false}, kSettings).client);  // the same user
  MpsJob gang = Job();
  gang.gpus = 2;
  CHECK_FALSE(ChooseMps(gang, kUp, kSettings).client);
  // A gang's slot names no one GPU, so the daemon finds no server for it: the log still gives
  // the job's own reason.
  const MpsChoice gang_why = ChooseMps(gang, MpsGpu{false, std::nullopt, false}, kSettings);
  CHECK_FALSE(gang_why.client);
  CHECK(gang_why.why_not == "it uses several GPUs");
  CHECK(ChooseMps(Job(), MpsGpu{false, std::nullopt, false}, kSettings).why_not ==
        "no MPS control daemon on its GPU");
  MpsJob slurm = Job();
  slurm.kind = JobKind::kSlurm;
  CHECK_FALSE(ChooseMps(slurm, kUp, kSettings).client);
  for (const char* engine : {"checkpoint", "managed"}) {
    MpsJob j = Job();
    j.memory = ParseMemoryEngine(engine);
    const MpsChoice c = ChooseMps(j, kUp, kSettings);
    CHECK_FALSE(c.client);
    CHECK(c.why_not.find(engine) != std::string::npos);
  }
  for (const char* engine : {"swap", "off"}) {
    MpsJob j = Job();
    j.memory = ParseMemoryEngine(engine);
    CHECK(ChooseMps(j, kUp, kSettings).client);
  }
  MpsJob submitted = Job();
  submitted.kind = JobKind::kSubmit;
  CHECK(ChooseMps(submitted, kUp, kSettings).client);
  MpsJob isolated = Job(1000, 10);  // a service asking for isolation: outside, whatever it is
  isolated.isolation = true;
  const MpsChoice iso = ChooseMps(isolated, kUp, kSettings);
  CHECK_FALSE(iso.client);
  CHECK(iso.why_not.find("GSHARE_MPS=0") != std::string::npos);
}

TEST_CASE("mps choice: an arriving client stays outside when a higher one left too little free") {
  constexpr uint64_t kGiB = 1ull << 30;
  MpsArrival a;
  a.priority = 0;
  a.top_priority = 10;
  a.capacity_bytes = 100 * kGiB;
  a.free_bytes = 14 * kGiB;
  const std::string why = ChooseAtArrival(a, 15);
  CHECK(why.find("priority 10") != std::string::npos);
  CHECK(why.find("14336 MiB") != std::string::npos);
  CHECK(why.find("15 %") != std::string::npos);
  a.free_bytes = 15 * kGiB;  // at the floor: joins
  CHECK(ChooseAtArrival(a, 15).empty());
  a.free_bytes = 15 * kGiB - 1;
  CHECK_FALSE(ChooseAtArrival(a, 15).empty());
  CHECK(ChooseAtArrival(a, 0).empty());  // off
  MpsArrival equal = a;                  // only a higher client keeps it out: an equal one does not
  equal.top_priority = 0;
  CHECK(ChooseAtArrival(equal, 15).empty());
  MpsArrival alone = a;  // no other client
  alone.top_priority.reset();
  CHECK(ChooseAtArrival(alone, 15).empty());
  MpsArrival unknown = a;  // no memory reported yet: joins
  unknown.capacity_bytes = 0;
  unknown.free_bytes = 0;
  CHECK(ChooseAtArrival(unknown, 15).empty());
  MpsArrival full = a;  // everything free but nothing: out, at 100 % too
  full.free_bytes = 0;
  CHECK_FALSE(ChooseAtArrival(full, 100).empty());
  MpsArrival big = a;  // capacity * percentage past 64 bits
  big.capacity_bytes = ~0ull;
  big.free_bytes = ~0ull / 10 + 1;  // just over a tenth
  CHECK_FALSE(ChooseAtArrival(big, 15).empty());
  CHECK(ChooseAtArrival(big, 10).empty());
}

}  // namespace
}  // namespace gshare::unit_mps_choice
