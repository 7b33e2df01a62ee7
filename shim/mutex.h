// Mutex: the shim's lock, a pthread_mutex_t the thread-safety analysis can follow
// (thread_annotations.h), and MutexLock, which holds one for a scope. A Mutex is
// constant-initialized and trivially destructible, so one in static storage needs no
// constructor run and is usable from the shim's constructor, its dlsym hook and its atfork
// handlers, where the shim takes no heap. Lock/Unlock: any thread.
#pragma once

#include <pthread.h>

#include <type_traits>

#include "thread_annotations.h"

namespace gshare::shim {

class CAPABILITY("mutex") Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { pthread_mutex_lock(&mu_); }
  void Unlock() RELEASE() { pthread_mutex_unlock(&mu_); }
  // True: the lock is now held by the caller. False: another thread holds it.
  bool TryLock() TRY_ACQUIRE(true) { return pthread_mutex_trylock(&mu_) == 0; }

  // For pthread_cond_wait/timedwait only, called with the lock held: the wait gives the lock
  // back and takes it again before it returns, so to the analysis it stays held throughout.
  pthread_mutex_t* native() { return &mu_; }

  // In the child after fork(): only the forking thread exists there, so a lock some other
  // parent thread held would never be given back. Makes it a fresh, unlocked mutex.
  // glibc's pthread_mutex_init without attributes only stores to the object: no lock, no heap.
  void ReinitAfterFork() { pthread_mutex_init(&mu_, nullptr); }

 private:
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
};

static_assert(std::is_trivially_destructible_v<Mutex>, "Mutex lives in static storage");

// Holds `mu` from construction to the end of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace gshare::shim
