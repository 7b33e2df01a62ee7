// StaggerCoordinator: the daemon's side of phase staggering (policy/stagger.h). While two jobs
// or more of one priority hold a GPU in shared mode, their shims report their idle gaps
// (kGapWatch on, and off again when that ends); the Stagger turns the reports into a stretch of
// one job's next gap, sent to that job's holding shims. Messages go out through the Host; time
// is read from the injected Clock. Single-threaded: the daemon's loop.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "base/clock.h"
#include "policy/arbiter.h"
#include "policy/stagger.h"

namespace gshare {

class StaggerCoordinator {
 public:
  // What the watch needs of the daemon.
  class Host {
   public:
    virtual ~Host() = default;
    // The live shim connections and their jobs.
    virtual std::vector<std::pair<ConnId, JobId>> Shims() const = 0;
    // Whether a shim has named `gpu`: the others are left alone.
    virtual bool KnowsGpu(const GpuKey& gpu) const = 0;
    // kGapWatch to `conn`: report idle gaps on `gpu` (`on`) or stop; false when not sent.
    virtual bool SendGapWatch(ConnId conn, const GpuKey& gpu, bool on) = 0;
    // kStretchGap to `conn`: its next idle gap on `gpu` lasts `gap`.
    virtual void SendStretch(ConnId conn, const GpuKey& gpu, Millis gap) = 0;
  };

  // `enabled`: [scheduler] stagger. The others outlive the watch.
  StaggerCoordinator(bool enabled, const Arbiter& arbiter, const Clock& clock, Host& host)
      : enabled_(enabled), arbiter_(arbiter), clock_(clock), host_(host) {}

  // Turns `gpu`'s watch on or off for each shim as the holders now ask (after a grant, a
  // release, a switch of mode, a departure).
  void Update(const GpuKey& gpu);
  // A gap report of a shim of `job` on `gpu`, from `begin` to `end`: a stretch may follow. A
  // report that crossed a switch to exclusive mode (or came after a release) is ignored.
  void OnReport(JobId job, const GpuKey& gpu, TimePoint begin, TimePoint end);
  // `conn` released `gpu`: its shim ends its reports there by itself.
  void Released(ConnId conn, const GpuKey& gpu);
  void ForgetConn(ConnId conn) { watched_.erase(conn); }
  void ForgetJob(JobId job) { stagger_.Forget(job); }
  // Status of `gpu`: `gap_watch` (shims reporting) and `stretches` (so far).
  void AddJson(const GpuKey& gpu, nlohmann::json* g) const;
  // The gaps the Stagger keeps (the memory coordinator reads each job's phase).
  const Stagger& stagger() const { return stagger_; }

 private:
  bool enabled_;
  const Arbiter& arbiter_;
  const Clock& clock_;
  Host& host_;
  Stagger stagger_;
  std::map<ConnId, std::set<GpuKey>> watched_;  // shims reporting gaps, on which GPUs
};

}  // namespace gshare
