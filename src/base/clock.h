// Time as the daemon and its parts read it, injected so that they are unit-tested without
// sleeps (as LevelDB's Env and ninja's DiskInterface inject the system). Two clocks: the
// monotonic one (leases, quanta, deadlines: steady_clock, CLOCK_MONOTONIC) and the wall clock
// (unix seconds, as job records store them). Reading is thread-safe; ManualClock is set from
// one thread.
#pragma once

#include <chrono>

namespace gshare {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  // CLOCK_MONOTONIC.
  virtual TimePoint Now() const = 0;
  // Unix time in seconds (CLOCK_REALTIME), with the fraction.
  virtual double WallNow() const = 0;
};

// The process's clocks; one instance, never destroyed.
Clock& SystemClock();

// A clock that moves only when told: both readings advance together.
class ManualClock : public Clock {
 public:
  // Starts at an arbitrary monotonic point and at `wall` unix seconds.
  explicit ManualClock(double wall = 1.7e9) : wall_(wall) {}
  TimePoint Now() const override { return now_; }
  double WallNow() const override { return wall_; }
  void Advance(std::chrono::milliseconds d) {
    now_ += d;
    wall_ += std::chrono::duration<double>(d).count();
  }

 private:
  TimePoint now_{std::chrono::hours(1000)};
  double wall_;
};

}  // namespace gshare
