// The Arbiter's state (policy/arbiter.h): what it keeps of each job, each connection and each
// GPU's lease. Records only; the Arbiter alone changes them, and reads them itself and through
// GrantOrder (policy/grant_order.h), on its caller's thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "policy/types.h"
#include "policy/user_turns.h"

namespace gshare::arbiter_state {

struct Job {
  uid_t uid = 0;
  int priority = 0;
  Millis quantum{0};
  std::set<ConnId> conns;
  double lease_seconds = 0;
  double wait_seconds = 0;
  bool suspended = false;
  std::vector<GpuKey> gang;  // SetGang: at least two GPUs, or none
  uint64_t gang_wait = 0;    // a gang's arrival number while it waits for its GPUs; 0: not
};
struct Conn {
  JobId job = 0;
  pid_t pid = 0;
};
// Why a holder's turn has not begun, or runs longer.
enum TurnWait : unsigned {
  kDelivery = 1u << 0,  // Deferred: the holder has not received its grant yet
  kRoom = 1u << 1,      // MakingRoom: the incumbent's room is being checkpointed
  kSwapIn = 1u << 2,    // AwaitSwapIn: the holder's swap-in is not over yet (the turn runs,
                        // ending later by kSwapInAllowance)
};
struct Lease {
  bool shared = false;  // shared mode: everyone holds, no holder
  uint64_t epoch = 0;
  std::optional<JobId> holder;
  TimePoint granted_at{};
  bool dropping = false;
  // What the holder's turn still waits for (TurnWait bits; 0: its turn runs). A grant may
  // wait for delivery and a swap-in at once; each ends by itself (BeginTurn).
  unsigned turn_waits = 0;
  Millis switch_time{0};  // a deferred grant's time to delivery, once delivered
  TimePoint drop_sent_at{};
  std::map<ConnId, uint64_t> holding;  // conn -> epoch it was granted
  std::set<ConnId> wanting;            // asked, not yet granted
  std::map<JobId, uint64_t> queue;     // waiting job -> arrival number
  UserTurns turns;                     // users' latest exclusive grants of this GPU
  std::map<JobId, TimePoint> wait_since;
  std::set<JobId> stopped;                  // SIGSTOPped for ignoring a DROP
  std::map<JobId, TimePoint> shared_since;  // shared mode: jobs holding, since when
  // SetShared's `first`, until the next grant.
  std::optional<JobId> incumbent;
  std::set<JobId> residents;     // SetResidents
  uint64_t resident_grants = 0;  // residents' grants so far (their epochs' low bits)
  uint64_t contended_epoch = 0;  // the grant whose holder was told someone waits
  double last_drain_ms = 0;      // DROP sent -> last acknowledgement, last release
  double max_drain_ms = 0;
  uint64_t drains = 0;
  // GpuView's totals, of the holdings and waits that ended; held_since: the holder's grant
  // (granted_at moves to the start of its turn).
  double lease_seconds = 0, wait_seconds = 0;
  TimePoint held_since{};
};

// All the Arbiter keeps.
struct State {
  std::map<JobId, Job> jobs;
  std::map<ConnId, Conn> conns;
  std::map<GpuKey, Lease> leases;
  std::set<JobId> gangs;  // jobs with a gang
  uint64_t arrivals = 0;  // the last arrival number given (a lease's queue, a gang's wait)
};

}  // namespace gshare::arbiter_state
