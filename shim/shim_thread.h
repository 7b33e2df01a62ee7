// StartShimThread: the shim's own threads, named "gs-<what>" (top -H, gdb, /proc/<pid>/task/*/comm)
// and taking no asynchronous signal meant for the application. A process-directed signal
// (kill(2), Ctrl-C) goes to any one thread that does not block it (signal(7)); a shim thread
// that did not block them could take the application's SIGINT or SIGTERM and run its handler
// there, where the thread the application waits in never sees the EINTR it counts on. Each
// starts with every signal blocked but those a fault raises in the thread itself (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), whose blocking would leave a crash unreported.
// Header-only; any thread.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace gshare::shim {

// Every signal but those a fault raises in the thread itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGTRAP, SIGSYS): what a shim thread blocks, and what a shim wait blocks between its pauses.
inline void AsyncSignals(sigset_t* set) {
  sigfillset(set);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(set, sig);
}

namespace shim_thread_internal {
struct Start {
  void* (*run)(void*);
  void* arg;
  char name[16];  // the kernel's limit (TASK_COMM_LEN), its NUL included
};
inline void* Trampoline(void* p) {
  Start s;
  std::memcpy(&s, p, sizeof s);
  std::free(p);
  pthread_setname_np(pthread_self(), s.name);
  return s.run(s.arg);
}
}  // namespace shim_thread_internal

// pthread_create(3) of `run(arg)` into `*tid`, detached when `detached`, named `name` (cut to 15
// bytes); returns pthread_create's result (0: started; ENOMEM when the start record cannot be
// allocated). The caller's signal mask is as it was on return.
inline int StartShimThread(pthread_t* tid, bool detached, void* (*run)(void*), void* arg,
                           const char* name) {
  auto* start = static_cast<shim_thread_internal::Start*>(
      std::calloc(1, sizeof(shim_thread_internal::Start)));
  if (start == nullptr) return ENOMEM;
  start->run = run;
  start->arg = arg;
  std::strncpy(start->name, name, sizeof start->name - 1);
  sigset_t blocked, old;
  AsyncSignals(&blocked);
  pthread_sigmask(SIG_SETMASK, &blocked, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (detached) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const int r = pthread_create(tid, &attr, shim_thread_internal::Trampoline, start);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (r != 0) std::free(start);
  return r;
}

}  // namespace gshare::shim
