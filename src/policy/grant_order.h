// GrantOrder: whom the Arbiter grants a GPU to next, read off its state without changing it: the
// fair share order of a lease's waiters (Arbiter::AddJob), what the first waiting gang reserves
// and whether a gang is free on all its GPUs (Arbiter::SetGang), and which connections want,
// hold or are suspended. The Arbiter builds one over its own State; its caller's thread. No
// errors: every job and connection a lease names is in the state (the Arbiter's invariant).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "policy/arbiter_state.h"
#include "policy/types.h"
#include "policy/user_turns.h"

namespace gshare {

class GrantOrder {
 public:
  using Job = arbiter_state::Job;
  using Lease = arbiter_state::Lease;
  // Whether the grant filter lets `job` hold `gpu` exclusively (Arbiter::Options::can_grant).
  using GrantFilter = std::function<bool(const GpuKey& gpu, JobId job)>;

  // `state`, `enabled` (Arbiter::Options::enabled: false grants everything at once) and
  // `can_grant` (empty: all) outlive the order and are read at each question.
  GrantOrder(const arbiter_state::State& state, const bool& enabled, const GrantFilter& can_grant)
      : s_(state), enabled_(enabled), can_grant_(can_grant) {}

  // Whether waiter `a` is granted before waiter `b` at `lease` (AddJob's fair share order:
  // priority, the incumbent, the user served least recently by `turns`, arrival).
  bool GrantedBefore(const Lease& lease, const UserTurns& turns, JobId a, JobId b) const;
  // Every waiter of `lease`, in the order they would be granted one after the other.
  std::vector<JobId> WaiterOrder(const Lease& lease) const;
  // The first waiter that is not suspended; with grantable_only, the first the filter takes.
  std::optional<JobId> BestWaiter(const GpuKey& gpu, const Lease& lease, bool grantable_only) const;
  // The waiter `lease` goes to next if it were free now: the filter's waiters in fair share
  // order, less those `gpu`'s reservation holds back and gangs not ready. For a drop decision
  // (`for_drop`) the first gang counts as ready: its other GPUs are freed too.
  std::optional<JobId> NextGrant(const GpuKey& gpu, const Lease& lease, bool for_drop) const;

  // Whether a connection of `job` asks for `lease` (JobWants) or, for a gang job's GPU, for any
  // GPU of its gang (Wants).
  bool JobWants(const Lease& lease, JobId job) const;
  bool Wants(const Lease& lease, JobId job) const;
  // Whether connection `conn`'s job is suspended.
  bool Suspended(ConnId conn) const;
  // Whether `conn` is a resident's connection of `lease`; whether a connection other than the
  // residents' holds it (a turn's holder, or one still dropping).
  bool ResidentConn(const Lease& lease, ConnId conn) const;
  bool TurnHolding(const Lease& lease) const;

  // Gangs: whether `job` has one, and whether `lease` is one of its GPUs.
  bool IsGang(JobId job) const { return s_.gangs.count(job) != 0; }
  bool InGang(JobId job, const Lease& lease) const;
  // The first waiting gang (by priority, then arrival), which reserves its GPUs, if any.
  std::optional<JobId> HeadGang() const;
  // Whether every GPU of `job`'s gang is free for it (shared, disabled, free, or its own
  // undropped grant), counting `freed` as free, and the filter takes it everywhere. Not ready
  // either where the first waiting gang `head` reserves a GPU against it.
  bool GangReady(JobId job, const GpuKey& freed, std::optional<JobId> head) const;
  // Whether `gpu` (`lease`) is reserved against `job` by the first waiting gang `head`: it is
  // one of the head's GPUs and the head comes before `job` in its order.
  bool Reserved(const GpuKey& gpu, const Lease& lease, JobId job, std::optional<JobId> head) const;
  // Whether a dropped gang still has processes holding one of its GPUs.
  bool GangDraining(JobId job) const;

 private:
  const arbiter_state::State& s_;
  const bool& enabled_;
  const GrantFilter& can_grant_;
};

}  // namespace gshare
