// KernelCosts: the GPU time one submission of a given shape takes, learnt from the completed
// submissions of a process that yields to a higher priority (priority_window.h), so that its
// window on queued work counts GPU time, not launches: one launch may be a 2 µs element-wise
// kernel or a 3 ms GEMM (docs/design.md, "Priority lanes", bounded interference).
//
// A shape is a 64-bit key of what sizes the work: the hook, the kernel function, its grid and
// block, a copy's byte count to a power of two, a graph's executable (ShapeKey in
// hooks/hooks.cc). A sample is the time between the GPU's completion of the process's previous
// submission on the stream and of this one, taken only when this one was queued behind the
// previous (cuEventElapsedTime; no host timer, no wait). Another context's work time-sliced
// with it inflates a sample, nothing deflates one, so the estimate follows the low samples:
// a lower sample moves it halfway down, a higher one an eighth of the way up, capped at 4×.
//
// Fixed table, linear probing over kProbe slots, the least recently written of them replaced
// when all are taken. Plain value type, not synchronized: its owner serializes (the window's
// ring lock). Header-only (unit-tested without the shim).
#pragma once

#include <cstdint>

namespace gshare::shim {

class KernelCosts {
 public:
  static constexpr int kSlots = 512;
  static constexpr int kProbe = 8;

  // Predicted GPU time of a submission of shape `key`, in ns; 0 when none was sampled.
  int64_t Predict(uint64_t key) const {
    const Entry* e = Find(key);
    return e != nullptr ? e->ns : 0;
  }

  // The mean of every shape's samples (a moving mean, weight 1/8), in ns; 0 before the first:
  // the cost assumed for a shape not sampled yet.
  int64_t MeanNs() const { return mean_ns_; }

  // Submission of shape `key` took `ns` of GPU time (> 0).
  void Sample(uint64_t key, int64_t ns) {
    if (ns <= 0) return;
    key = Normal(key);
    mean_ns_ = mean_ns_ == 0 ? ns : mean_ns_ + (Capped(ns, mean_ns_) - mean_ns_) / 8;
    ++clock_;
    Entry* e = const_cast<Entry*>(Find(key));
    if (e == nullptr) {
      e = Victim(key);
      *e = Entry{key, ns, clock_};
      return;
    }
    e->ns = ns < e->ns ? e->ns - (e->ns - ns) / 2 : e->ns + (Capped(ns, e->ns) - e->ns) / 8;
    if (e->ns < 1) e->ns = 1;
    e->written = clock_;
  }

 private:
  struct Entry {
    uint64_t key = 0;  // 0: free
    int64_t ns = 0;
    uint64_t written = 0;
  };

  static uint64_t Normal(uint64_t key) { return key == 0 ? 1 : key; }
  static int64_t Capped(int64_t sample, int64_t estimate) {
    return sample > 4 * estimate ? 4 * estimate : sample;
  }
  static int Home(uint64_t key) { return static_cast<int>((key * 0x9E3779B97F4A7C15ull) >> 55); }

  const Entry* Find(uint64_t key) const {
    key = Normal(key);
    const int home = Home(key);
    for (int i = 0; i < kProbe; ++i) {
      const Entry& e = entries_[(home + i) % kSlots];
      if (e.key == key) return &e;
      if (e.key == 0) return nullptr;
    }
    return nullptr;
  }
  Entry* Victim(uint64_t key) {
    const int home = Home(key);
    Entry* oldest = &entries_[home % kSlots];
    for (int i = 0; i < kProbe; ++i) {
      Entry& e = entries_[(home + i) % kSlots];
      if (e.key == 0) return &e;
      if (e.written < oldest->written) oldest = &e;
    }
    return oldest;
  }

  static_assert(kSlots == 512, "Home() yields 9 bits");
  Entry entries_[kSlots];
  uint64_t clock_ = 0;
  int64_t mean_ns_ = 0;
};

}  // namespace gshare::shim
