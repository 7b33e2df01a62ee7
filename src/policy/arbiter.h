// Arbiter: the lease policy of one machine, without I/O: who holds each physical GPU's lease
// (a job, all of its processes), when it must give it back, and who gets it next. Time comes
// in as arguments (CLOCK_MONOTONIC in the daemon), so the policy is tested without sleeping.
// Not thread-safe: the daemon's event loop is its only caller.
//
// Exclusive mode: the holder keeps the GPU for its time quantum; round robin within a
// priority, between users first and then between a user's jobs (below, "Fair share"), strict
// priority across (a higher-priority request makes the holder drop at once);
// DROP only when someone waits; a holder that does not acknowledge a DROP within the grace
// period is stopped (SIGSTOP) and the lease moves on, the stopped job is continued (SIGCONT)
// when its turn comes again. Disabled mode: every request is granted at once (no gating).
// Shared mode, per GPU (SetShared): while the jobs on a GPU fit in its memory, every request
// on it is granted at once and the driver time-slices them; the daemon's MemoryLedger decides.
// Residents, per GPU (SetResidents): in exclusive mode, jobs that hold beside the turns of the
// others (a high-priority service kept on the GPU while lower jobs that do not fit together
// take turns); the priority board orders them and the holder.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/arbiter_state.h"
#include "policy/grant_order.h"
#include "policy/types.h"
#include "policy/user_turns.h"

namespace gshare {

struct LeaseAction {
  // kContended: tell a holding connection that another job waits (it then bounds the
  // work it keeps in flight, so its release will be quick).
  enum class Kind { kGrant, kDrop, kContended, kStop, kContinue };
  Kind kind;
  ConnId conn;     // kGrant/kDrop/kContended: the connection to send to; kStop/kContinue: whose pid
  GpuKey gpu;      // kGrant/kDrop/kContended
  uint64_t epoch;  // kGrant/kDrop/kContended
  pid_t pid;       // kStop/kContinue
};
using LeaseActions = std::vector<LeaseAction>;

class Arbiter {
 public:
  struct Options {
    bool enabled = true;  // false: no gating, every request granted
    // Long enough that a turn pays for the memory its handoff moves, short enough that the
    // jobs that wait get turns (docs/design.md, "Default quantum: 20 s").
    Millis default_quantum{20000};
    Millis drop_grace{10000};  // DROP acknowledgement deadline
    // Exclusive grants only go to jobs for which this returns true (unset: all); a job it
    // refuses keeps waiting and is asked again at the next event or Tick(), at least each
    // second (NextDeadline(now) + 1 s).
    std::function<bool(const GpuKey&, JobId)> can_grant;
  };
  explicit Arbiter(Options options);

  // Jobs must be known before their connections. quantum 0 = the default. `uid`: the job's
  // owner, for fair share between users.
  //
  // Fair share (issue 21): when the lease of a GPU is free in exclusive mode, it goes to the
  // waiter that comes first by
  //   1. priority, higher first (strict, as before);
  //   2. SetShared's incumbent (it keeps running);
  //   3. its owner's last turn on this GPU: the user whose job was granted this GPU least
  //      recently goes first, a user never granted it before all (UserTurns);
  //   4. arrival: within a user, the job that has waited longest (a job whose turn ends
  //      queues again behind the user's other jobs).
  // So at one priority the turns go round robin between users, and each user's turns round
  // robin between that user's jobs: three users with 1, 2 and 5 jobs always waiting get a
  // third of the turns each, whatever their job counts. This is classic round-robin
  // scheduling with users as its first level (the equal split that Slurm's fair-share
  // factor aims at between users of equal shares, without its decayed usage history),
  // counted in turns, not seconds: a job that gives the lease back early (idle release) has
  // had its turn. Shared mode (everyone holds at once) and disabled mode are unaffected.
  void AddJob(JobId job, int priority, Millis quantum, uid_t uid);
  void SetPriority(JobId job, int priority);
  bool HasJob(JobId job) const { return s_.jobs.count(job) != 0; }
  // Forgets a job whose connections are all gone.
  void RemoveJob(JobId job);

  void AddConn(ConnId conn, JobId job, pid_t pid);
  LeaseActions Request(ConnId conn, const GpuKey& gpu, TimePoint now);
  // Acknowledgement of a DROP or an idle release. Stale epochs are ignored.
  LeaseActions Released(ConnId conn, const GpuKey& gpu, uint64_t epoch, TimePoint now);
  // The connection no longer asks for `gpu` (its process moved to another GPU while it
  // waited). Nothing when it holds `gpu`. A gang job none of whose connections asks for a
  // GPU of its gang any more stops waiting for all of them.
  LeaseActions Withdraw(ConnId conn, const GpuKey& gpu, TimePoint now);
  // Socket EOF: the connection's leases are reclaimed at once.
  LeaseActions Disconnected(ConnId conn, TimePoint now);
  // Quantum expiries and grace deadlines.
  LeaseActions Tick(TimePoint now);
  // Earliest time Tick() has work to do, if any.
  std::optional<TimePoint> NextDeadline(TimePoint now) const;
  LeaseActions SetEnabled(bool enabled, TimePoint now);
  bool enabled() const { return options_.enabled; }
  // Shared mode on `gpu`: true grants every waiting request now. false: when `first` (the
  // daemon names the holder longest in its GPU phase, MemoryCoordinator::ExclusiveFirst) holds the
  // GPU and no job on it has a higher priority, it keeps running as the exclusive holder of the
  // grant it has (its quantum starts now) and every other holder drops; otherwise every holder
  // drops, after which the lease is granted exclusively again, to `first` before the other
  // waiters of its priority. (Dropping the incumbent too would make it wait for the others'
  // drain before its new grant: docs/memory.md, "The daemon's ledger and policy".)
  LeaseActions SetShared(const GpuKey& gpu, bool shared, TimePoint now,
                         std::optional<JobId> first = std::nullopt);
  bool IsShared(const GpuKey& gpu) const;
  // Residents of `gpu`: in exclusive mode their requests are granted at once, in grants of
  // their own (epochs with kResidentEpoch set), and they neither wait, take a turn nor end one:
  // turns go round the other jobs, whose drops and preemption leave them alone. A holder made
  // resident keeps running and the next waiter gets the turn; a resident made ordinary keeps
  // holding as the turn's holder when no other turn is held, else it is dropped and asks
  // again for a turn. In shared and disabled mode everyone holds anyway: the
  // set is kept for the next exclusive spell. A resident holding when the GPU turns exclusive
  // keeps holding (SetShared). The daemon picks them (SharingMode) and makes their room.
  LeaseActions SetResidents(const GpuKey& gpu, const std::set<JobId>& residents, TimePoint now);
  bool IsResident(const GpuKey& gpu, JobId job) const;
  static constexpr uint64_t kResidentEpoch = 1ull << 63;
  static bool IsResidentEpoch(uint64_t epoch) { return (epoch & kResidentEpoch) != 0; }
  // Since when `job` holds `gpu` in shared mode; nullopt when it does not.
  std::optional<TimePoint> SharedSince(const GpuKey& gpu, JobId job) const;
  // The job holding `gpu` exclusively, if any.
  std::optional<JobId> Holder(const GpuKey& gpu) const;
  // The waiting job that would be granted `gpu` next if it were free (the grant filter not
  // asked), if any.
  std::optional<JobId> NextWaiter(const GpuKey& gpu) const;
  // Jobs with a connection waiting for or holding `gpu`.
  std::vector<JobId> JobsOn(const GpuKey& gpu) const;
  // Jobs with a connection holding `gpu` (several in shared mode), in id order.
  std::vector<JobId> HoldingJobs(const GpuKey& gpu) const;
  // Jobs waiting for `gpu`'s lease (asked and not granted), in id order.
  std::vector<JobId> WaitingJobs(const GpuKey& gpu) const;
  int PriorityOf(JobId job) const;  // 0 for a job not known
  // Whether the jobs on `gpu` (JobsOn) all have one priority (true when there are none).
  bool OnePriorityOn(const GpuKey& gpu) const;
  // The grant of `epoch` on `gpu` reaches its holder only later (its memory is restored
  // first): until Delivered, its quantum does not run and nothing preempts it; the time in
  // between counts as waiting. Both ignore any other epoch.
  void Deferred(const GpuKey& gpu, uint64_t epoch);
  void Delivered(const GpuKey& gpu, uint64_t epoch, TimePoint now);
  // The holder of `epoch` swaps its memory in before it runs (swap engine): its quantum
  // starts when SwappedIn says the swap-in is over, the time before counting as waiting. A
  // swap-in that waits for room another job evicts into host memory not pinned yet can take
  // most of a quantum (docs/design.md, "A quantum starts after the swap-in"). The quantum runs
  // anyway once kSwapInAllowance has passed without SwappedIn (a stuck process cannot keep
  // the GPU). Both ignore any other epoch.
  static constexpr Millis kSwapInAllowance{30000};
  // A deferred grant's turn lasts at least kTurnPerSwitch times its switch (grant to
  // delivery: the daemon's checkpoints and restore), so that the GPU computes at least two
  // thirds of the time however short the quantum: a checkpoint-engine handoff of big jobs
  // outlasts short quanta (docs/benchmarks.md, "Big pair under the checkpoint engine"). The
  // same reasoning as the early release: a handoff must pay for itself (rent or buy). Swap-ins,
  // under a second for tens of GB (docs/benchmarks.md, "Handoff speed"), keep the plain
  // quantum, so short quanta stay short for them.
  static constexpr int kTurnPerSwitch = 2;
  // The incumbent kept by SetShared(false) runs while other jobs are checkpointed to make room
  // for its turn (MemoryCoordinator::MakeIncumbentRoom): until RoomMade nothing preempts it; its
  // turn then begins and lasts at least kTurnPerSwitch times that time (or the quantum), the time
  // before counting as waiting, as for a deferred grant (a job that grows waits for that room, and
  // may run no step until it is made). Without it the checkpoint engine's incumbent could lose
  // the GPU at its quantum's end while the other job was still being checkpointed, and pay a
  // checkpoint of its own (docs/benchmarks.md, "Checkpoint engine: the incumbent's turn while
  // its room is checkpointed").
  void MakingRoom(const GpuKey& gpu);
  void RoomMade(const GpuKey& gpu, TimePoint now);
  void AwaitSwapIn(const GpuKey& gpu, uint64_t epoch);
  void SwappedIn(const GpuKey& gpu, uint64_t epoch, TimePoint now);
  // CONTENDED again, for each connection holding `gpu` in the grant whose holder was told
  // another job waits (its handoff's price changed since); empty when none was told, while
  // it drops, and in shared mode.
  LeaseActions Recontend(const GpuKey& gpu) const;
  // A suspended job is granted nothing, in any mode; suspending it makes its holding
  // connections drop (exclusive and shared mode alike). Resuming lets its requests through.
  LeaseActions SetSuspended(JobId job, bool suspended, TimePoint now);
  bool IsSuspended(JobId job) const;
  // Whether any connection of the job (or this connection) holds a lease on any GPU.
  bool JobHolds(JobId job) const;
  bool ConnHolds(ConnId conn) const;

  // Gang lease: `job` computes on every GPU of `gpus` at once (`--gpus N`: a data-parallel
  // training whose collectives wait for all its ranks), so in exclusive mode it is granted
  // all of them at once or none, and dropped from all at once. Any connection of the job
  // asking for one of them makes the job wait for all; a job that must wait while holding
  // some of them gives those back first (its drop), so no gang ever holds part of its GPUs
  // while it waits: without hold-and-wait, one of Coffman's four conditions, there is no
  // deadlock between gangs that want overlapping GPUs. The first waiting gang by (priority,
  // higher first; then when it began to wait) reserves its GPUs: on each, the waiters that
  // come after it in that GPU's own order (priority, fair share, arrival) get nothing while
  // it waits, so a free GPU of it idles until the others are free (at most one turn), and
  // its GPUs' holders are dropped at their turns' end as for any waiter. The waiters ahead of
  // it keep their turn, one each at most (a turn moves its user behind the gang's), so the
  // single jobs on its GPUs do not starve behind a stream of gangs. Other gangs are granted
  // only where all their GPUs are free and none is reserved against them. So the first gang
  // is granted after a bounded number of turns on its GPUs, every gang becomes the first in
  // turn, and nothing starves below a higher priority. This is gang scheduling (Ousterhout,
  // "Scheduling Techniques for Concurrent Systems", ICDCS 1982) with the reservation of
  // Slurm's backfill scheduler for its first pending job. Shared-mode GPUs are open to all
  // and count as free; a job's GPUs not listed here are leased one by one as before. Call it
  // after AddJob, before the job's connections ask; a list of fewer than two GPUs clears it.
  void SetGang(JobId job, std::vector<GpuKey> gpus);
  // The gang of `job`; empty when it has none.
  std::vector<GpuKey> GangOf(JobId job) const;

  // Status.
  struct GpuView {
    GpuKey gpu;
    std::optional<JobId> holder;
    double held_seconds = 0;     // of the current holder
    std::vector<JobId> waiters;  // in grant order
    bool dropping = false;
    bool shared = false;
    std::vector<JobId> holding;  // jobs holding (several in shared mode, or with residents)
    std::vector<JobId> residents;
    std::vector<JobId> stopped;
    double last_drain_ms = 0;  // how long the last holder took to give the GPU back
    double max_drain_ms = 0;
    uint64_t drains = 0;  // releases that followed a DROP
    // Since the arbiter started, summed over jobs (two sharing jobs count twice): seconds
    // jobs held the lease (from each grant to its release, swap-ins included) and seconds
    // they waited in its queue. Only ever grow.
    double lease_seconds_total = 0;
    double wait_seconds_total = 0;
  };
  std::vector<GpuView> Gpus(TimePoint now) const;
  struct JobUsage {
    double lease_seconds = 0;
    double wait_seconds = 0;
    bool holding = false;
    bool waiting = false;
    bool stopped = false;
  };
  JobUsage Usage(JobId job, TimePoint now) const;

 private:
  // The state it keeps per job, connection and GPU (policy/arbiter_state.h); who goes next is
  // read off it by order_ (policy/grant_order.h).
  using Job = arbiter_state::Job;
  using Conn = arbiter_state::Conn;
  using Lease = arbiter_state::Lease;
  using TurnWait = arbiter_state::TurnWait;
  using enum arbiter_state::TurnWait;

  Millis QuantumOf(const Job& job) const;
  // When the holder's turn ends: its quantum (at least kTurnPerSwitch x a deferred grant's
  // switch) after its turn began, later while it swaps in.
  TimePoint TurnEnd(const Lease& lease) const;
  // The lease of `gpu` whose holder was granted `epoch`; nullptr otherwise.
  Lease* HolderLease(const GpuKey& gpu, uint64_t epoch);
  // Ends the holder's wait `wait` (delivery, room, swap-in): its quantum starts now, the time
  // since the grant counts as waiting. Nothing when the lease does not wait for it.
  void BeginTurn(const GpuKey& gpu, uint64_t epoch, TurnWait wait, TimePoint now);
  void Enqueue(Lease& lease, JobId job, TimePoint now);
  void Schedule(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out);
  void Grant(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now, LeaseActions& out);
  // `job` holds `lease` from now, in its current epoch; its waiting connections are granted.
  void BeginHolding(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now, LeaseActions& out);
  void NotifyContended(const GpuKey& gpu, Lease& lease, LeaseActions& out);
  // CONTENDED to each connection of the holder (of every holder when there is none).
  void ContendedToHolder(const GpuKey& gpu, const Lease& lease, LeaseActions& out) const;
  void SendDrop(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out);
  void ReleaseConn(const GpuKey& gpu, Lease& lease, ConnId conn, TimePoint now, LeaseActions& out);
  void EndHolding(Lease& lease, TimePoint now);
  // `job` no longer waits for `lease`: its waiting time so far goes to wait_seconds.
  void StopWaiting(Lease& lease, JobId job, TimePoint now);
  // Shared mode: starts or ends a job's holding time (lease_seconds).
  void StartShared(Lease& lease, JobId job, TimePoint now);
  void EndShared(Lease& lease, JobId job, TimePoint now);
  // Residents (arbiter_shared.cc): their waiting connections that are not suspended hold now.
  void GrantResidents(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out);
  // `job` just stopped being resident (exclusive mode). When it still holds and no other
  // job's turn is held, it keeps the GPU as the turn's holder and true is returned: a DROP
  // would drain it only to grant it back, and its work waits for both. Else false: the
  // caller drops it and it asks for turns like the others.
  bool AdoptFormerResident(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now,
                           LeaseActions& out);
  // SetShared(false)'s incumbent: whether `job` may keep running, and making it the holder.
  bool KeepsRunning(const GpuKey& gpu, const Lease& lease, JobId job) const;
  void HoldInPlace(const GpuKey& gpu, Lease& lease, JobId job, TimePoint now, LeaseActions& out);
  // Shared or disabled mode begins: stopped jobs continue, the holder's turn ends, and every
  // waiting connection that is not suspended holds (GrantAllWanting).
  void OpenToAll(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out);
  // Shared or disabled mode: every waiting connection that is not suspended holds now.
  void GrantAllWanting(const GpuKey& gpu, Lease& lease, TimePoint now, LeaseActions& out);

  // Gang leases (SetGang; arbiter_gang.cc). A gang connection waits: the job gives back the GPUs of
  // its gang it holds and queues on all the others.
  void GangWaits(JobId job, TimePoint now, LeaseActions& out);
  // The gang `job` waits for none of its GPUs any more (Withdraw): it leaves their queues.
  void GangStopsWaiting(JobId job, TimePoint now);
  void GrantGang(JobId job, TimePoint now, LeaseActions& out);
  // DROP to the job's other grants of its gang (after one of them ended or was dropped).
  void DropGang(JobId job, TimePoint now, LeaseActions& out);
  // The gang drained everywhere: its dropped grants end and their GPUs go on.
  void FinishGangDrain(JobId job, TimePoint now, LeaseActions& out);
  // Schedule on every GPU, when gangs exist (a grant or reservation on one GPU changes what
  // the others may do).
  void ScheduleGangs(TimePoint now, LeaseActions& out);

  Options options_;
  arbiter_state::State s_;
  GrantOrder order_{s_, options_.enabled, options_.can_grant};  // who is granted next
};

}  // namespace gshare
