// kMpsJoinQuery at the first cuInit (AskDaemonOnce, memory_view.h), again while the daemon
// answers kMpsJoinWait.
#include "lease/mps_arrival.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "gshare/job_env.h"
#include "lease/lease_state.h"
#include "lease/memory_view.h"
#include "shim_log.h"
#include "shim_thread.h"

namespace gshare::shim {

namespace {

std::atomic<bool> g_asked{false};
std::atomic<bool> g_left{false};
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// The daemon's answer (proto::MpsJoinMsg::join); 1 (join) when there is none. `decide_now`:
// the answer is join or outside (kMpsJoinDecideNow).
uint32_t AskJoin(bool decide_now) {
  proto::MpsJoinQueryMsg q{};
  if (!lease::JobProofFromEnv(&q.job_id, q.token)) return 1;
  q.flags = decide_now ? proto::kMpsJoinDecideNow : 0;
  proto::MpsJoinMsg m{};
  if (!AskDaemonOnce(proto::MsgType::kMpsJoinQuery, &q, sizeof q, proto::MsgType::kMpsJoin, &m,
                     sizeof m)) {
    return 1;
  }
  return m.join;
}

// Asks until the answer is no longer kMpsJoinWait; true: join. The first "not yet" is said on
// stderr (unless GSHARE_QUIET: `gshare run -q`), so that a job that seems to hang says why. A
// signal caught while it waits (Ctrl-C in a Python job, whose handler only sets a flag) ends the
// wait: the daemon is asked to decide now, and the process goes on to handle it. The calling
// thread's signals stay blocked between the pauses, so that one that comes while the daemon is
// asked stays pending and ends the next pause (ppoll unblocks them atomically, as pselect(2)
// explains); a signal delivered to another thread of the process does not end the wait.
bool DecideJoin() {
  sigset_t all, old;
  AsyncSignals(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  bool decide_now = false;
  bool join = false;
  for (bool said = std::getenv(job_env::kQuiet) != nullptr;; said = true) {
    const uint32_t answer = AskJoin(decide_now);
    if (answer != proto::kMpsJoinWait) {
      join = answer != 0;
      break;
    }
    if (decide_now) break;  // the daemon would not decide: no room, so outside
    if (!said) {
      Warn(
          "waiting for room on the GPU before this process's first CUDA call: a job of higher "
          "priority on its MPS server left too little memory free ([mps] "
          "join_free_percentage); it joins once room comes, else runs outside MPS after [mps] "
          "join_wait_seconds (`gshare queue`: MpsRoom)");
    }
    const timespec pause{0, static_cast<long>(proto::kMpsJoinRetryMs) * 1000000L};
    decide_now = ppoll(nullptr, 0, &pause, &old) < 0 && errno == EINTR;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return join;
}

void Arrive() {
  if (LaunchedAsMpsClient() && !DecideJoin()) {
    for (const char* name :
         {job_env::kMpsPipeDirectory, job_env::kMpsLogDirectory, job_env::kMpsClientPriority,
          job_env::kMpsActiveThreadPercentage, job_env::kMpsClient}) {
      unsetenv(name);
    }
    g_left.store(true, std::memory_order_release);
  }
  g_asked.store(true, std::memory_order_release);
}

}  // namespace

void BeforeCuInit() {
  if (g_asked.load(std::memory_order_acquire)) return;
  pthread_once(&g_once, Arrive);
}

bool LeftMps() { return g_left.load(std::memory_order_acquire); }

bool LaunchedAsMpsClient() {
  const char* client = std::getenv(job_env::kMpsClient);
  const char* pipe = std::getenv(job_env::kMpsPipeDirectory);
  return client != nullptr && std::strcmp(client, "1") == 0 && pipe != nullptr && *pipe != '\0';
}

}  // namespace gshare::shim
