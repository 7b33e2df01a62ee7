// IdleStager: the daemon's side of idle memory staging (docs/memory.md, "Idle memory is
// staged"): when each job was last active, when to look at the GPUs again, and the kSwapStage
// requests that IdleStaging (policy/idle_staging.h) plans for each GPU, sent through a Host.
// Time is read from the injected Clock. Single-threaded: the daemon's loop.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "policy/arbiter.h"
#include "policy/idle_staging.h"
#include "policy/memory_ledger.h"

namespace gshare {

class IdleStager {
 public:
  // What the stager needs of the daemon.
  class Host {
   public:
    virtual ~Host() = default;
    // Asks process `conn`'s shim to have `bytes` of its memory on `gpu` staged (kSwapStage).
    virtual void SendStage(ConnId conn, const GpuKey& gpu, uint64_t bytes) = 0;
    // The owner of active job `job` (whose host budget a staged copy counts against).
    virtual uid_t JobOwner(JobId job) const = 0;
  };
  // The GPUs are looked at every kCheck at most; a job idle long enough whose memory is not
  // staged yet (no pressure, or asked already) is looked at again kRecheck later, in case the
  // pressure comes without an event of the daemon's own.
  static constexpr Millis kCheck{250};
  static constexpr Millis kRecheck{1000};

  // `after`: [memory] idle_stage_after (0: never stage). The others outlive the stager.
  IdleStager(Millis after, const Arbiter& arbiter, const MemoryLedger& ledger, const Clock& clock,
             Host& host)
      : after_(after),
        staging_(after),
        arbiter_(arbiter),
        ledger_(ledger),
        clock_(clock),
        host_(host) {}

  // Job `job` started, or asked for or gave back a lease: active now.
  void Active(JobId job);
  // The job is gone (it is idle no more: IdleFor answers nullopt).
  void ForgetJob(JobId job);
  // The process is gone.
  void ForgetConn(ConnId conn) { staging_.Forget(conn); }
  // How long `job` has been idle: no lease held or wanted on any GPU since it was last
  // active; nullopt while it holds or wants one, or is unknown.
  std::optional<Millis> IdleFor(JobId job) const;
  // Sends the staging requests due on `gpus` now, every kCheck at most. Returns when it should
  // run again (a job's idle time reaching `after`, or kRecheck later while an idle job's
  // memory is not staged), never before the next kCheck; nullopt: not until an event.
  std::optional<TimePoint> Tick(const std::vector<GpuKey>& gpus);

 private:
  Millis after_;
  IdleStaging staging_;
  const Arbiter& arbiter_;
  const MemoryLedger& ledger_;
  const Clock& clock_;
  Host& host_;
  std::map<JobId, TimePoint> active_at_;
  TimePoint next_check_{};
  std::optional<TimePoint> due_;  // Tick's last answer
};

}  // namespace gshare
